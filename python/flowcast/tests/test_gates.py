"""Quality gates (the vectors cover the messages and modes; these pin the Python API)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import Twin


def test_a_gate_dataclass_runs(twin: Twin, tmp_path: Path) -> None:
    result = twin("run_gate", flowcast.Gate(name="ok", cmd="printf fine"), repo=tmp_path)
    assert result == flowcast.GateResult(name="ok", exit_code=0, output="fine")


def test_a_gate_mapping_runs(twin: Twin, tmp_path: Path) -> None:
    assert twin("run_gate", {"name": "ok", "cmd": ["true"]}, repo=tmp_path).exit_code == 0


def test_the_default_repository_is_the_current_directory(
    twin: Twin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "marker").write_text("")
    assert twin("run_gate", {"name": "here", "cmd": "test -f marker"}).exit_code == 0


def test_a_red_gate_raises_gate_error_with_fields(twin: Twin, tmp_path: Path) -> None:
    with pytest.raises(flowcast.GateError) as caught:
        twin("run_gate", {"name": "test", "cmd": "echo '1 failed'; exit 1"}, repo=tmp_path)
    error = caught.value
    assert (error.gate, error.exit_code, error.output) == ("test", 1, "1 failed\n")
    assert str(error) == "quality gate 'test' failed (exit 1)"


def test_resume_fix_gets_the_failure_then_the_gate_is_checked_again(
    twin: Twin, tmp_path: Path
) -> None:
    seen: list[flowcast.GateFailure] = []

    def resume_fix(failure: flowcast.GateFailure) -> None:
        seen.append(failure)
        (tmp_path / "fixed").write_text("")

    gate = flowcast.Gate(
        name="t",
        cmd="test -f fixed || { echo missing; exit 3; }",
        on_fail="resume-fix",
        resume_fix=resume_fix,
    )
    assert twin("run_gate", gate, repo=tmp_path).fixed_by == "resume-fix"
    assert seen == [flowcast.GateFailure(gate="t", exit_code=3, output="missing\n")]


def test_an_async_resume_fix_is_awaited(tmp_path: Path) -> None:
    async def resume_fix(failure: flowcast.GateFailure) -> None:
        await flowcast.spawn_cli("touch", ["fixed"], cwd=tmp_path)

    gate = flowcast.Gate(name="t", cmd="test -f fixed", on_fail="resume-fix", resume_fix=resume_fix)
    assert asyncio.run(flowcast.run_gate(gate, repo=tmp_path)).fixed_by == "resume-fix"


def test_an_error_in_resume_fix_propagates(twin: Twin, tmp_path: Path) -> None:
    def resume_fix(failure: flowcast.GateFailure) -> None:
        raise flowcast.SpawnError("agent crashed", exit_code=1)

    gate = flowcast.Gate(name="t", cmd="exit 1", on_fail="resume-fix", resume_fix=resume_fix)
    with pytest.raises(flowcast.SpawnError, match="agent crashed"):
        twin("run_gate", gate, repo=tmp_path)


def test_resume_fix_that_is_not_callable_is_a_config_error(twin: Twin, tmp_path: Path) -> None:
    gate = {"name": "t", "cmd": "true", "on_fail": "resume-fix", "resume_fix": "fix it"}
    with pytest.raises(flowcast.ConfigError, match="needs a resume_fix callback"):
        twin("run_gate", gate, repo=tmp_path)


def test_an_unknown_gate_key_is_a_config_error(twin: Twin, tmp_path: Path) -> None:
    with pytest.raises(flowcast.ConfigError, match="unknown key"):
        twin("run_gate", {"name": "t", "cmd": "true", "onFail": "rollback"}, repo=tmp_path)


@pytest.mark.parametrize("cmd", ["", "   ", [], [1, 2], None])
def test_an_empty_or_malformed_cmd_is_a_config_error(
    twin: Twin, tmp_path: Path, cmd: object
) -> None:
    with pytest.raises(flowcast.ConfigError):
        twin("run_gate", {"name": "t", "cmd": cmd}, repo=tmp_path)


@pytest.mark.parametrize("timeout", [0, -1, True, "5"])
def test_a_bad_timeout_is_a_config_error(twin: Twin, tmp_path: Path, timeout: object) -> None:
    with pytest.raises(flowcast.ConfigError, match="timeout"):
        twin("run_gate", {"name": "t", "cmd": "true", "timeout": timeout}, repo=tmp_path)


def test_a_symlinked_cwd_that_leaves_the_repository_is_a_config_error(
    twin: Twin, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "link").symlink_to(tmp_path)
    with pytest.raises(flowcast.ConfigError, match="outside the repository"):
        twin("run_gate", {"name": "t", "cmd": "true", "cwd": "link"}, repo=repo)


def test_flowcast_dry_run_env_runs_nothing(
    twin: Twin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOWCAST_DRY_RUN", "1")
    result = twin("run_gate", {"name": "t", "cmd": "touch ran; exit 1"}, repo=tmp_path)
    assert result.dry_run is True
    assert not (tmp_path / "ran").exists()


def test_dry_run_false_overrides_the_environment(
    twin: Twin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOWCAST_DRY_RUN", "true")
    result = twin("run_gate", {"name": "t", "cmd": "touch ran"}, repo=tmp_path, dry_run=False)
    assert (result.dry_run, (tmp_path / "ran").exists()) == (False, True)


def test_dry_run_still_validates_configuration(twin: Twin, tmp_path: Path) -> None:
    with pytest.raises(flowcast.ConfigError):
        twin(
            "run_gate", {"name": "t", "cmd": "x", "on_fail": "autofix"}, repo=tmp_path, dry_run=True
        )


def test_a_gate_timeout_kills_the_check_and_raises_timeout_error(
    twin: Twin, tmp_path: Path
) -> None:
    started = time.monotonic()
    with pytest.raises(
        flowcast.TimeoutError, match=r"quality gate 'slow': cmd timed out after 0\.2s"
    ):
        twin(
            "run_gate",
            {"name": "slow", "cmd": "sleep 30", "timeout": 0.2},
            repo=tmp_path,
            kill_grace=0.2,
        )
    assert time.monotonic() - started < 3


def test_parallel_gates_run_at_the_same_time(twin: Twin, tmp_path: Path) -> None:
    gates = [{"name": f"g{i}", "cmd": "sleep 0.3"} for i in range(6)]
    started = time.monotonic()
    results = twin("run_gates", gates, repo=tmp_path, parallel=True)
    assert [r.name for r in results] == [f"g{i}" for i in range(6)]
    assert time.monotonic() - started < 1.2  # one after the other: 1.8 s


def test_parallel_gate_failures_are_gate_errors_inside_a_parallel_error(
    twin: Twin, tmp_path: Path
) -> None:
    gates = [{"name": "a", "cmd": "exit 1"}, {"name": "b", "cmd": "exit 2"}]
    with pytest.raises(flowcast.ParallelError) as caught:
        twin("run_gates", gates, repo=tmp_path, parallel=True)
    failures = caught.value.failures
    assert [(f.index, type(f.error), f.error.exit_code) for f in failures] == [  # type: ignore[attr-defined]
        (0, flowcast.GateError, 1),
        (1, flowcast.GateError, 2),
    ]


def test_gate_result_to_dict_is_the_json_form() -> None:
    result = flowcast.GateResult(name="t", exit_code=0, output="o", fixed_by="autofix")
    assert result.to_dict() == {
        "name": "t",
        "exitCode": 0,
        "output": "o",
        "fixedBy": "autofix",
        "dryRun": False,
    }


def test_resume_fix_of_the_blocking_twin_may_use_asyncio_run(tmp_path: Path) -> None:
    def resume_fix(failure: flowcast.GateFailure) -> None:
        asyncio.run(flowcast.spawn_cli("touch", ["fixed"], cwd=tmp_path))

    gate = flowcast.Gate(name="t", cmd="test -f fixed", on_fail="resume-fix", resume_fix=resume_fix)
    assert flowcast.run_gates_sync([gate], repo=tmp_path)[0].fixed_by == "resume-fix"
    (tmp_path / "fixed").unlink()
    mapping = {
        "name": "t",
        "cmd": "test -f fixed",
        "on_fail": "resume-fix",
        "resume_fix": resume_fix,
    }
    assert flowcast.run_gate_sync(mapping, repo=tmp_path).fixed_by == "resume-fix"
