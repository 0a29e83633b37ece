"""Checkpoint: resumable steps, atomic state, the run log, pause."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import SPEC_DIR


def _validator(name: str) -> Any:
    resources = []
    for path in (SPEC_DIR / "schemas").glob("*.schema.json"):
        schema = json.loads(path.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    schema = json.loads((SPEC_DIR / "schemas" / name).read_text())
    return jsonschema.Draft202012Validator(schema, registry=Registry().with_resources(resources))


STATE_SCHEMA = _validator("checkpoint-state.schema.json")
EVENT_SCHEMA = _validator("run-log-event.schema.json")


def events(cp: flowcast.Checkpoint) -> list[dict[str, Any]]:
    return [json.loads(line) for line in cp.log_path.read_text().splitlines()]


def test_a_step_runs_once_and_its_result_is_recorded(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("run-1", base_dir=tmp_path)
    assert cp.step_sync("plan", lambda: {"files": ["a.py"]}) == {"files": ["a.py"]}
    assert cp.has("plan")
    assert cp.dir == tmp_path / ".flowcast" / "runs" / "run-1"
    state = json.loads(cp.state_path.read_text())
    assert state["steps"]["plan"]["result"] == {"files": ["a.py"]}


def test_resume_skips_completed_steps_and_returns_their_results(tmp_path: Path) -> None:
    calls: list[str] = []

    def work(name: str, value: int) -> Any:
        def run() -> int:
            calls.append(name)
            return value

        return run

    first = flowcast.Checkpoint("r", base_dir=tmp_path)
    first.step_sync("a", work("a", 1))
    resumed = flowcast.Checkpoint("r", base_dir=tmp_path)
    assert resumed.step_sync("a", work("again", 2)) == 1
    assert resumed.step_sync("b", work("b", 3)) == 3
    assert calls == ["a", "b"]
    assert resumed.resumed is True


def test_async_step_awaits_coroutines_and_plain_functions(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)

    async def work() -> str:
        return await flowcast.spawn_cli("sh", ["-c", "printf done"])

    async def scenario() -> list[Any]:
        return [await cp.step("spawned", work), await cp.step("plain", lambda: 5)]

    assert asyncio.run(scenario()) == ["done", 5]


def test_a_failing_step_is_not_recorded_and_runs_again_on_resume(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)

    def boom() -> None:
        raise flowcast.SpawnError("agent failed", exit_code=1)

    with pytest.raises(flowcast.SpawnError):
        cp.step_sync("build", boom)
    assert not cp.has("build")
    again = flowcast.Checkpoint("r", base_dir=tmp_path)
    assert again.step_sync("build", lambda: "ok") == "ok"
    error_events = [e for e in events(cp) if e["event"] == "step-error"]
    assert error_events[0]["error"]["code"] == "SPAWN_ERROR"


def test_re_entering_a_running_step_is_step_reentry(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)

    async def scenario() -> None:
        gate = asyncio.Event()

        async def slow() -> int:
            await gate.wait()
            return 1

        first: asyncio.Task[int] = asyncio.create_task(cp.step("k", slow))
        await asyncio.sleep(0)
        with pytest.raises(flowcast.FlowcastError) as caught:
            await cp.step("k", slow)
        assert caught.value.code == "STEP_REENTRY"
        gate.set()
        assert await first == 1

    asyncio.run(scenario())


def test_record_marks_a_step_done_without_running_it(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)
    cp.record("imported", {"n": 3})
    assert cp.step_sync("imported", lambda: pytest.fail("ran")) == {"n": 3}


def test_pause_saves_the_state_and_raises_pause_signal(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)
    with pytest.raises(flowcast.PauseSignal) as caught:
        cp.pause("needs review", {"pr": 12})
    assert (caught.value.pause_reason, caught.value.pause_context) == ("needs review", {"pr": 12})
    state = json.loads(cp.state_path.read_text())
    assert state["status"] == "paused"
    assert state["pause"] == {"reason": "needs review", "context": {"pr": 12}}


def test_pause_inside_a_step_leaves_the_step_to_run_on_resume(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)
    with pytest.raises(flowcast.PauseSignal):
        cp.step_sync("review", lambda: cp.pause("wait for a human"))
    resumed = flowcast.Checkpoint("r", base_dir=tmp_path)
    assert resumed.status == "running"
    assert resumed.step_sync("review", lambda: "approved") == "approved"
    assert [e["event"] for e in events(resumed)].count("step-error") == 0


def test_pause_signal_is_not_caught_as_a_flowcast_error(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)

    def pause_then_catch_flowcast_errors() -> None:
        try:
            cp.pause("stop")
        except flowcast.FlowcastError:
            pytest.fail("a pause is not an error")

    with pytest.raises(flowcast.PauseSignal):
        pause_then_catch_flowcast_errors()


def test_done_marks_the_run_finished(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)
    cp.done({"merged": True})
    state = json.loads(cp.state_path.read_text())
    assert (state["status"], state["result"]) == ("done", {"merged": True})


def test_state_and_log_follow_their_schemas(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)
    cp.step_sync("a", lambda: [1, 2])
    with pytest.raises(ValueError, match="x"):
        cp.step_sync("b", lambda: (_ for _ in ()).throw(ValueError("x")))
    cp.record("c", None)
    with pytest.raises(flowcast.PauseSignal):
        cp.pause("p")
    flowcast.Checkpoint("r", base_dir=tmp_path).done()
    assert list(STATE_SCHEMA.iter_errors(json.loads(cp.state_path.read_text()))) == []
    logged = events(cp)
    assert [e["event"] for e in logged] == [
        "start",
        "step-start",
        "step-done",
        "step-start",
        "step-error",
        "record",
        "pause",
        "resume",
        "done",
    ]
    for event in logged:
        assert list(EVENT_SCHEMA.iter_errors(event)) == []


def test_a_large_result_goes_to_a_side_file(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path, large_result_bytes=100)
    big = {"text": "x" * 1000}
    cp.step_sync("big", lambda: big)
    entry = json.loads(cp.state_path.read_text())["steps"]["big"]
    assert "result" not in entry
    assert json.loads((cp.dir / entry["resultFile"]).read_text()) == big
    assert flowcast.Checkpoint("r", base_dir=tmp_path).step_sync("big", lambda: None) == big


def test_the_state_is_replaced_atomically_leaving_no_temp_files(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)
    for i in range(5):
        cp.step_sync(f"s{i}", functools.partial(int, i))
    assert sorted(p.name for p in cp.dir.iterdir()) == [
        "run.log.jsonl",
        "state.json",
        "state.json.bak",
    ]
    backup = json.loads((cp.dir / "state.json.bak").read_text())
    assert sorted(backup["steps"]) == ["s0", "s1", "s2", "s3"]


def test_a_corrupt_state_falls_back_to_the_backup(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)
    cp.step_sync("a", lambda: 1)
    cp.step_sync("b", lambda: 2)
    cp.state_path.write_text('{"truncated": ')
    resumed = flowcast.Checkpoint("r", base_dir=tmp_path)
    assert resumed.has("a")
    assert not resumed.has("b")


def test_a_non_json_result_is_a_type_error_and_not_recorded(tmp_path: Path) -> None:
    cp = flowcast.Checkpoint("r", base_dir=tmp_path)
    with pytest.raises(TypeError):
        cp.step_sync("s", lambda: {1, 2})
    assert not cp.has("s")


@pytest.mark.parametrize("run_id", ["../escape", "", "a/b", ".hidden"])
def test_an_unsafe_run_id_is_a_path_error(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(flowcast.PathError):
        flowcast.Checkpoint(run_id, base_dir=tmp_path)
    assert not (tmp_path / ".flowcast").exists()


def test_with_takes_and_releases_the_resume_lock(tmp_path: Path) -> None:
    with flowcast.Checkpoint("r", base_dir=tmp_path) as cp:
        owner = json.loads((cp.dir / "lock" / "owner.json").read_text())
        assert owner["runId"] == "r"
        cp.step_sync("a", lambda: 1)
    assert not (cp.dir / "lock").exists()


def test_a_second_holder_of_the_same_run_is_lock_busy(tmp_path: Path) -> None:
    with flowcast.Checkpoint("r", base_dir=tmp_path), pytest.raises(flowcast.LockError) as caught:
        flowcast.Checkpoint("r", base_dir=tmp_path).__enter__()
    assert caught.value.code == "LOCK_BUSY"


def test_async_with_takes_the_lock_and_resumes(tmp_path: Path) -> None:
    flowcast.Checkpoint("r", base_dir=tmp_path).step_sync("a", lambda: "first")

    async def scenario() -> Any:
        async with flowcast.Checkpoint("r", base_dir=tmp_path) as cp:
            assert (cp.dir / "lock" / "owner.json").exists()
            return await cp.step("a", lambda: "second")

    assert asyncio.run(scenario()) == "first"
    assert not (tmp_path / ".flowcast" / "runs" / "r" / "lock").exists()
