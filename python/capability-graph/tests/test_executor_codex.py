"""The codex executor, driven through flowcast against fake ``codex`` programs on PATH."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import capability_graph_flowcast as flowcast
from capability_graph import BlockingCapabilityGraph, CancelToken, ErrorCode, GraphError, NextAction
from capability_graph._core.executors import build_executor
from capability_graph._core.executors.codex import (
    CodexExecutor,
    _project_flowcast_error,
    parse_version,
)
from capability_graph._core.executors.prompt import OUTPUT_SCHEMA, SYSTEM_PROMPT
from capability_graph._core.match import MatchOutcome, run_match
from capability_graph_testing.fake_codex import FakeCodex, install_fake_codex, path_with
from capability_graph_testing.matching import CATALOG, SECRET, make_job, model_error, run, wait_dead

pytestmark = pytest.mark.skipif(sys.platform not in ("linux", "darwin"), reason="POSIX only")

ID_A, ID_C = CATALOG[0]["id"], CATALOG[2]["id"]
MATCHED = {"status": "matched", "candidates": [{"id": ID_C, "confidence": 0.7, "reason": ""}]}
UNSAFE = model_error(ErrorCode.CG_MODEL_EXECUTOR_UNSAFE)
FABRICATED = json.dumps(
    {"status": "matched", "candidates": [{"id": "acme::made.up", "confidence": 0.9, "reason": "x"}]}
)
DUPLICATE = json.dumps(
    {
        "status": "matched",
        "candidates": [
            {"id": ID_A, "confidence": 0.9, "reason": "x"},
            {"id": ID_A, "confidence": 0.8, "reason": "y"},
        ],
    }
)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCodex:
    codex = install_fake_codex(tmp_path / "bin")
    monkeypatch.setenv("PATH", path_with(codex.folder))
    return codex


def match(
    executor: Any = None, *, timeout_s: float = 10.0, cancel: CancelToken | None = None, **job: Any
) -> Any:
    executor = executor or build_executor({"executor": "codex"})

    async def one() -> Any:
        try:
            return await run_match(
                executor,
                make_job(timeout_s=timeout_s, **job),
                cancel=cancel,
                max_output_bytes=job.get("max_output_bytes", 65536),
            )
        except GraphError as error:
            return error.to_json()

    result = run(one())
    assert SECRET not in str(result)
    return result


def exec_calls(fake: FakeCodex) -> list[dict[str, Any]]:
    return [call for call in fake.calls() if call["argv"][:1] == ["exec"]]


def test_success_runs_codex_exec_read_only_in_an_empty_dir_with_the_schema(fake: FakeCodex) -> None:
    fake.answer(MATCHED)
    outcome = match(build_executor({"executor": "codex", "model": "gpt-5-codex"}))
    assert outcome == MatchOutcome("matched", [{"id": ID_C, "confidence": 0.7}])
    version, sandbox, run_ = fake.calls()
    assert version["argv"] == ["--version"]
    expected_platform = "linux" if sys.platform == "linux" else "macos"
    assert sandbox["argv"] == ["sandbox", expected_platform, "--", "true"]
    argv = run_["argv"]
    work = argv[argv.index("--cd") + 1]
    root = str(Path(work).parent)
    assert argv == [
        "exec",
        "--sandbox",
        "read-only",
        "--skip-git-repo-check",
        "--cd",
        work,
        "--color",
        "never",
        "--output-schema",
        f"{root}/schema.json",
        "--output-last-message",
        f"{root}/last-message.json",
        "--model",
        "gpt-5-codex",
        "-",
    ]
    assert Path(run_["cwd"]).resolve() == Path(work).resolve()
    assert run_["cwd_entries"] == []
    assert run_["schema"] == OUTPUT_SCHEMA
    assert run_["stdin"].startswith(SYSTEM_PROMPT)
    assert all(entry["id"] in run_["stdin"] for entry in CATALOG)
    assert not Path(root).exists()  # the temporary folder is removed afterwards


def test_missing_binary_is_unavailable_check_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert match() == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG)


def test_missing_codex_extra_is_unavailable_check_config_and_never_runs_codex(
    fake: FakeCodex, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `import capability_graph_flowcast` raises ImportError, as without capability-graph[codex]
    monkeypatch.setitem(sys.modules, "capability_graph_flowcast", None)
    assert match() == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG)
    assert fake.calls() == []


@pytest.mark.parametrize(
    "behavior",
    [
        {"version": "codex-cli 0.45.9"},
        {"version": "codex-cli 0.9.99"},
        {"version": "codex-cli dev"},
        {"version": ""},
        {"version": "codex-cli 0.50.0", "version_exit": 1},
    ],
)
def test_too_old_or_unverifiable_version_is_unsafe_and_never_runs(
    fake: FakeCodex, behavior: dict[str, Any]
) -> None:
    fake.behave(**behavior, exec={"last_message": "{}"})
    assert match() == UNSAFE
    assert exec_calls(fake) == []


@pytest.mark.parametrize(
    "version", ["codex-cli 0.46.0", "codex-cli 0.130.2", "codex 1.0.0-alpha.3"]
)
def test_versions_at_or_above_the_floor_are_accepted(fake: FakeCodex, version: str) -> None:
    fake.behave(version=version, exec={"last_message": '{"status": "unknown", "candidates": []}'})
    assert match() == MatchOutcome("unknown", [])


def test_parse_version() -> None:
    assert parse_version("codex-cli 0.46.0\n") == (0, 46, 0)
    assert parse_version("codex-cli 1.2.3.4") is None
    assert parse_version("node v22.1.0\ncodex-cli 0.50.1") == (22, 1, 0)
    assert parse_version("nothing") is None


def test_unavailable_sandbox_is_unsafe_never_an_unsandboxed_run(fake: FakeCodex) -> None:
    fake.behave(
        sandbox_exit=1, sandbox_output="error running landlock", exec={"last_message": "{}"}
    )
    assert match() == UNSAFE
    assert exec_calls(fake) == []


def test_unsupported_platform_is_unsafe(fake: FakeCodex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    assert match() == UNSAFE
    assert fake.calls() == []


def test_prerequisites_are_checked_once_per_binary_identity(fake: FakeCodex) -> None:
    fake.answer(MATCHED)
    executor = build_executor({"executor": "codex"})
    match(executor)
    match(executor)
    assert [c["argv"][0] for c in fake.calls()] == ["--version", "sandbox", "exec", "exec"]
    fake.touch()  # an upgraded binary is checked again
    fake.behave(version="codex-cli 0.40.0", exec={"last_message": "{}"})
    assert match(executor) == UNSAFE


def prepared_codex(fake: FakeCodex) -> Any:
    """A codex executor whose prerequisites (version, sandbox) are already checked: under load
    the probes alone may outlast a short deadline, before ``exec`` ever starts."""
    executor = build_executor({"executor": "codex"})
    fake.answer({"status": "unknown", "candidates": []})
    assert match(executor, timeout_s=60) == MatchOutcome("unknown", [])
    return executor


def test_hanging_codex_times_out_and_its_process_tree_is_killed(fake: FakeCodex) -> None:
    executor = prepared_codex(fake)
    fake.behave(exec={"sleep": 60, "child": True, "last_message": "{}"})
    job_started = time.monotonic()
    result = match(executor, timeout_s=1.0)
    elapsed = time.monotonic() - job_started
    assert result == model_error(ErrorCode.CG_MODEL_TIMEOUT)
    assert elapsed < 30  # the deadline ended it, long before the 60 s sleep would have
    pids = fake.pids()
    assert len(pids) == 2
    assert wait_dead(pids, timeout_s=0.2) == []  # already gone when the error arrives


@pytest.mark.parametrize("child_stdout", ["inherited", "devnull"])
def test_a_successful_run_stops_its_group_at_once(fake: FakeCodex, child_stdout: str) -> None:
    # executors.md 10: a run, successful or not, leaves no process of its group behind. A
    # background child holding stdout must not stall the match until its deadline, and one that
    # does not hold it must not survive the match.
    executor = prepared_codex(fake)
    fake.answer(MATCHED, child=True, child_stdout=child_stdout)
    started = time.monotonic()
    result = match(executor, timeout_s=10.0)
    elapsed = time.monotonic() - started
    assert result == MatchOutcome("matched", [{"id": ID_C, "confidence": 0.7}])
    assert elapsed < 5.0  # TERM and the child's exit, not the 10 s deadline
    pids = fake.pids()
    assert len(pids) == 2
    assert wait_dead(pids, timeout_s=0.2) == []  # already gone when the answer arrives


def test_codex_ignoring_sigterm_is_killed_after_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = install_fake_codex(tmp_path / "bin", ignore_term_in_child=True)
    monkeypatch.setenv("PATH", path_with(fake.folder))
    executor = prepared_codex(fake)
    fake.behave(exec={"sleep": 60, "child": True, "ignore_term": True, "last_message": "{}"})
    assert match(executor, timeout_s=1.0) == model_error(ErrorCode.CG_MODEL_TIMEOUT)
    assert wait_dead(fake.pids(), timeout_s=0.2) == []  # KILLed before the error arrived


def test_cancelled_match_kills_the_process_tree(fake: FakeCodex) -> None:
    fake.behave(exec={"sleep": 60, "child": True, "last_message": "{}"})
    token = CancelToken()

    def cancel_when_running() -> None:
        deadline = time.monotonic() + 5
        while not (fake.folder / "pids.json").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        token.cancel()

    canceller = threading.Thread(target=cancel_when_running)
    canceller.start()
    try:
        result = match(cancel=token)
    finally:
        canceller.join()
    assert result == model_error(ErrorCode.CG_MODEL_CANCELLED)
    assert wait_dead(fake.pids(), timeout_s=0.2) == []


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (f"error: something broke {SECRET}", (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)),
        (
            f"Error: Not logged in. Run `codex login` {SECRET}",
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG),
        ),
        (
            f"401 Unauthorized: invalid API key {SECRET}",
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG),
        ),
        (
            f"stream error: Rate limit reached for requests {SECRET}",
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY),
        ),
        (
            f"You exceeded your current quota, please log in again {SECRET}",
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY),
        ),
        (f"error: context window exceeded {SECRET}", (ErrorCode.CG_MODEL_CONTEXT_EXCEEDED, None)),
    ],
)
def test_non_zero_exit_is_projected_from_its_output(
    fake: FakeCodex, output: str, expected: Any
) -> None:
    fake.behave(exec={"exit": 1, "output": output})
    code, action = expected
    assert match() == model_error(code, "default" if action is None else action)


@pytest.mark.parametrize(
    ("run_", "expected"),
    [
        ({"last_message": f"not json {SECRET}"}, ErrorCode.CG_MODEL_OUTPUT_INVALID),
        ({"last_message": ""}, ErrorCode.CG_MODEL_OUTPUT_INVALID),
        ({"output": '{"status": "unknown", "candidates": []}'}, ErrorCode.CG_MODEL_OUTPUT_INVALID),
        (
            {"last_message": '{"status": "matched", "candidates": []}'},
            ErrorCode.CG_MODEL_OUTPUT_INVALID,
        ),
        ({"last_message": "[" * 4000}, ErrorCode.CG_MODEL_OUTPUT_INVALID),  # deeper than json goes
        ({"last_message": '{"status":' + "[" * 4000}, ErrorCode.CG_MODEL_OUTPUT_INVALID),
        ({"last_message": FABRICATED}, ErrorCode.CG_MODEL_INVALID_SELECTION),
        ({"last_message": DUPLICATE}, ErrorCode.CG_MODEL_INVALID_SELECTION),
        (
            {"last_message": '{"status": "unknown", "candidates": [], "pad": "%s"}' % ("x" * 5000)},
            ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE,
        ),
    ],
)
def test_final_message_is_read_and_validated(
    fake: FakeCodex, run_: dict[str, Any], expected: ErrorCode
) -> None:
    fake.behave(exec=run_)
    assert match(max_output_bytes=4096) == model_error(expected)


UNKNOWN_TEXT = '{"status": "unknown", "candidates": []}'
MATCHED_TEXT = json.dumps(MATCHED)


@pytest.mark.parametrize(
    "text",
    [
        "\ufeff" + UNKNOWN_TEXT,  # a byte order mark
        MATCHED_TEXT.replace("0.7", "NaN"),
        MATCHED_TEXT.replace("0.7", "Infinity"),
        '{"status": "matched", "status": "unknown", "candidates": []}',  # a duplicate member
        "\u3000" + UNKNOWN_TEXT,
        UNKNOWN_TEXT + "\u00a0",
        UNKNOWN_TEXT + "\u0085",
    ],
)
def test_a_last_message_read_by_the_rules_of_a_request_text_is_output_invalid(
    fake: FakeCodex, text: str
) -> None:
    """CG-MODEL-26: the texts that one runtime's JSON parser reads and another refuses."""
    fake.behave(exec={"last_message": text})
    assert match() == model_error(ErrorCode.CG_MODEL_OUTPUT_INVALID)


def test_a_last_message_with_json_whitespace_around_it_is_the_answer(fake: FakeCodex) -> None:
    fake.behave(exec={"last_message": " \t\r\n" + UNKNOWN_TEXT + "\n"})
    outcome = match()
    assert (outcome.status, outcome.candidates) == ("unknown", [])


def test_fabricated_ids_outside_a_narrowed_catalog_are_invalid_selection(fake: FakeCodex) -> None:
    fake.answer(MATCHED)
    assert match(catalog=CATALOG[:2]) == model_error(ErrorCode.CG_MODEL_INVALID_SELECTION)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (
            flowcast.SpawnError(f"cannot start {SECRET}", spawn_error="ENOENT"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG),
        ),
        (
            flowcast.SpawnError(f"cannot start {SECRET}", spawn_error="EACCES"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG),
        ),
        (flowcast.TimeoutError(f"timed out {SECRET}"), (ErrorCode.CG_MODEL_TIMEOUT, None)),
        (
            flowcast.SchemaError(f"bad {SECRET}", schema_error="x"),
            (ErrorCode.CG_MODEL_OUTPUT_INVALID, None),
        ),
        (
            flowcast.SpawnError(f"429 {SECRET}", exit_code=1, output="overloaded"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY),
        ),
        (
            flowcast.SpawnError(f"x {SECRET}", exit_code=1, output="please login"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG),
        ),
        (
            flowcast.SpawnError(f"x {SECRET}", exit_code=2, output=""),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY),
        ),
        (
            flowcast.GateError(f"x {SECRET}", gate="g", exit_code=1, output=""),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY),
        ),
    ],
)
def test_flowcast_error_projection(exc: BaseException, expected: Any) -> None:
    code, action = expected
    assert _project_flowcast_error(flowcast, exc).to_json() == model_error(
        code, "default" if action is None else action
    )


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ({"executor": "codex", "model": ""}, "/model/model does not have the required format"),
        (
            {"executor": "codex", "model": "--dangerously-bypass-approvals-and-sandbox"},
            "/model/model does not have the required format",
        ),
        (
            {"executor": "codex", "model": None},
            "/model/model must not be null (omit the key instead)",
        ),
        (
            {"executor": "codex", "sandbox": "danger-full-access"},
            "/model has a key that is not allowed (allowed: executor, model, timeoutMs)",
        ),
    ],
)
def test_bad_codex_config(model: dict[str, Any], message: str) -> None:
    with pytest.raises(GraphError) as info:
        BlockingCapabilityGraph.open({"providers": [], "model": model})
    assert info.value.to_json() == {
        "code": "CG_CONFIG_INVALID",
        "phase": "config",
        "message": message,
        "nextAction": "check_config",
    }


def test_building_codex_does_not_import_flowcast() -> None:
    import subprocess

    code = (
        "import sys; from capability_graph._core.executors import build_executor;"
        "e = build_executor({'executor': 'codex'});"
        "print('capability_graph_flowcast' in sys.modules, e.name)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False codex"
    assert isinstance(build_executor({"executor": "codex"}), CodexExecutor)


def test_concurrent_first_matches_share_one_flowcast_import_and_close_leaves_no_thread(
    fake: FakeCodex, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capability_graph._core.executors import codex

    imports: list[str] = []
    real = codex._import_flowcast

    def counted() -> Any:
        imports.append(threading.current_thread().name)
        time.sleep(0.2)  # a cold import: the first matches all wait for it
        return real()

    monkeypatch.setattr(codex, "_import_flowcast", counted)
    fake.answer({"status": "unknown", "candidates": []})
    executor = build_executor({"executor": "codex"})

    async def scenario() -> list[Any]:
        jobs = [
            run_match(executor, make_job(timeout_s=60), cancel=None, max_output_bytes=65536)
            for _ in range(10)
        ]
        outcomes = await asyncio.gather(*jobs, return_exceptions=True)
        await executor.aclose()
        return outcomes

    outcomes = run(scenario())
    assert outcomes == [MatchOutcome("unknown", [])] * 10
    assert len(imports) == 1
    assert [t.name for t in threading.enumerate() if t.name == "cg-codex"] == []


def test_a_last_message_link_is_not_followed_and_is_output_invalid(
    fake: FakeCodex, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text('{"status": "unknown", "candidates": []}', encoding="utf-8")
    fake.behave(exec={"last_message_link": str(target)})
    assert match() == model_error(ErrorCode.CG_MODEL_OUTPUT_INVALID)


def test_a_last_message_fifo_is_not_waited_on_and_is_output_invalid(fake: FakeCodex) -> None:
    fake.behave(exec={"last_message_fifo": True})
    assert match() == model_error(ErrorCode.CG_MODEL_OUTPUT_INVALID)
