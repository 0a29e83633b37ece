"""Battery, concurrency: queries during reload storms see whole snapshots; close storms reject
every active match promptly and leave nothing behind.

Reload storm: every operation is queried from many tasks (threads, for the blocking twin) while
one reloader alternates valid and invalid candidates (syntax, unknown key, bad relation, a cycle
across providers, a duplicate provider id, a file over maxDefinitionBytes, a missing file).
Every result names a published revision and shows exactly that snapshot's provider versions
(describe, list, resolve, and the catalog a match's executor saw); nothing but defined errors;
a failed reload never publishes.

Close storm: ``close()`` during many active matches rejects every one with exactly
``CG_GRAPH_CLOSED``/``lifecycle`` within ``CLOSE_BOUND_S``; no late result is delivered (not even
from an executor that ignores cancellation and answers afterwards); no asyncio task, thread or
child process is left -- including real process trees of the codex executor (a fake ``codex`` on
PATH that spawns a child and ignores SIGTERM).
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, CapabilityGraph, GraphError
from capability_graph_testing.battery import (
    CLOSED,
    TOOLS,
    VALID_REQUESTS,
    ShCodex,
    Sleeper,
    Stubborn,
    check_snapshot_result,
    close_storm_async,
    descendants,
    live_threads,
    reload_storm_async,
    reload_storm_threads,
    settle_threads,
    wait_dead,
)
from capability_graph_testing.common import capability, inline, provider

#: The bound on close() -> the last active match rejected, for executors that stop when
#: cancelled (the runner waits for their cleanup) on this loaded 2-core machine.
CLOSE_BOUND_S = 2.0
#: For the codex executor: flowcast sends SIGTERM, then SIGKILL after KILL_GRACE_S (1 s).
CODEX_CLOSE_BOUND_S = 5.0

CONFIG = inline(provider("acme", capability("a"), capability("b")))


# --- reload storms --------------------------------------------------------------------------------


def test_queries_during_a_reload_storm_see_only_whole_published_snapshots(tmp_path: Path) -> None:
    stats = asyncio.run(reload_storm_async(tmp_path, reloads=30, queriers=16, seed=9))
    assert stats.violations == []
    assert stats.reloads_ok == 15
    assert stats.reloads_failed == 15
    assert set(stats.queries) == set(TOOLS)
    assert sum(stats.queries.values()) >= 200
    assert len(stats.revisions_seen) >= 3  # the queries really did straddle publications


def test_blocking_queries_from_threads_during_a_reload_storm(tmp_path: Path) -> None:
    before = live_threads()
    stats = reload_storm_threads(tmp_path, reloads=20, threads=6, seed=4)
    assert stats.violations == []
    assert stats.reloads_ok == 10
    assert stats.reloads_failed == 10
    assert sum(stats.queries.values()) >= 100
    assert len(stats.revisions_seen) >= 2
    assert settle_threads(before) == []


# --- close storms -------------------------------------------------------------------------------


def _close_storm(executor: Any, matches: int) -> Any:
    from capability_graph._core.match import _ORPHANS

    async def main() -> Any:
        stats = await close_storm_async(
            CONFIG, executor, matches=matches, entered=lambda: executor.entered
        )
        graph = await CapabilityGraph.open(CONFIG, executor=executor)
        await graph.close()
        for tool in TOOLS:  # after close, every call is CG_GRAPH_CLOSED
            with pytest.raises(GraphError) as raised:
                await graph.call(tool, VALID_REQUESTS[tool])
            assert raised.value.to_json() == CLOSED
        with pytest.raises(GraphError) as raised:
            await graph.reload()
        assert raised.value.to_json() == CLOSED
        assert not _ORPHANS
        return stats

    return asyncio.run(main())


def test_close_rejects_every_active_match_promptly(tmp_path: Path) -> None:
    before = live_threads()
    executor = Sleeper(30)
    stats = _close_storm(executor, 200)
    assert stats.closed == 200, stats.figures()
    assert stats.late_results == 0
    assert not stats.other
    assert stats.close_to_last_rejection_s < CLOSE_BOUND_S, stats.figures()
    assert stats.leftover_tasks == 0
    assert executor.finished == 0
    assert settle_threads(before) == []


def test_close_never_delivers_the_late_answer_of_an_executor_that_ignores_cancellation() -> None:
    executor = Stubborn()
    stats = _close_storm(executor, 30)
    assert executor.late_answers == 30  # each did answer, after the close...
    assert stats.closed == 30, stats.figures()  # ...and each caller got CG_GRAPH_CLOSED
    assert stats.late_results == 0
    assert stats.close_to_last_rejection_s < CLOSE_BOUND_S, stats.figures()
    assert stats.leftover_tasks == 0


def test_blocking_twin_close_from_another_thread_rejects_every_matching_thread() -> None:
    before = live_threads()
    executor = Sleeper(30)
    graph = BlockingCapabilityGraph.open(CONFIG, executor=executor)
    outcomes: list[Any] = []
    ended: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        try:
            outcome: Any = graph.match(request="x")
        except GraphError as error:
            outcome = error.to_json()
        except BaseException as error:  # a wrong kind of ending: recorded, then asserted
            outcome = repr(error)
        with lock:
            outcomes.append(outcome)
            ended.append(time.monotonic())

    workers = [threading.Thread(target=worker) for _ in range(20)]
    for thread in workers:
        thread.start()
    deadline = time.monotonic() + 30
    while executor.entered < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    closing = time.monotonic()
    closer = threading.Thread(target=graph.close)
    closer.start()
    for thread in [*workers, closer]:
        thread.join(30)
    assert outcomes == [CLOSED] * 20
    assert max(ended) - closing < CLOSE_BOUND_S
    assert executor.finished == 0
    with pytest.raises(GraphError) as raised:
        graph.describe()
    assert raised.value.to_json() == CLOSED
    assert settle_threads(before) == []  # the twin's loop thread too


@pytest.fixture
def codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ShCodex:
    fake = ShCodex.install(tmp_path / "bin", sleep_s=60, ignore_term=True)
    monkeypatch.setenv("PATH", fake.path_env())
    return fake


def test_close_kills_every_codex_process_tree_and_leaves_no_process(codex: ShCodex) -> None:
    before = live_threads()
    config = {**CONFIG, "model": {"executor": "codex", "timeoutMs": 600_000}}
    matches = 6

    async def main() -> tuple[list[Any], float]:
        graph = await CapabilityGraph.open(config)
        tasks = [
            asyncio.ensure_future(graph.call("match_capabilities", {"request": f"task {i}"}))
            for i in range(matches)
        ]
        deadline = time.monotonic() + 60
        while codex.started() < matches and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert codex.started() == matches
        closing = time.monotonic()
        await graph.close()
        outcomes = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
        return outcomes, time.monotonic() - closing

    outcomes, elapsed = asyncio.run(main())
    assert [o.to_json() if isinstance(o, GraphError) else o for o in outcomes] == [CLOSED] * matches
    assert elapsed < CODEX_CLOSE_BOUND_S
    pids = codex.pids()
    assert len(pids) == 2 * matches  # each exec and the child it spawned
    assert wait_dead(pids, 0.5) == []  # gone by the time the rejections arrived
    assert descendants() == []
    assert codex.finished() == 0  # no codex run completed: no late answer existed
    assert settle_threads(before) == []


def test_the_snapshot_checker_notices_a_mixed_snapshot() -> None:
    """The storm's checker itself: a result that mixes versions is reported."""
    published = {"r:1": {"acme": 1, "beta": 1}}
    mixed = {
        "revision": "r:1",
        "status": "ok",
        "items": [{"id": "acme::base", "description": "acme@v2 base"}],
    }
    assert check_snapshot_result("list_capabilities", mixed, published)
    assert check_snapshot_result("describe_graph", {"revision": "r:9"}, published)
