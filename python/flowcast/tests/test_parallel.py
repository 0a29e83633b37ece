"""parallel and pipeline."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import capability_graph_flowcast as flowcast


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def delayed(value: Any, delay: float = 0.0, fail: bool = False) -> Any:
    async def thunk() -> Any:
        await asyncio.sleep(delay)
        if fail:
            raise ValueError(f"failed {value}")
        return value

    return thunk


def test_results_are_in_input_order() -> None:
    thunks = [delayed("slow", 0.05), delayed("fast")]
    assert run(flowcast.parallel(thunks)) == ["slow", "fast"]


def test_strict_waits_for_every_task_then_raises_parallel_error() -> None:
    finished: list[str] = []

    async def late() -> str:
        await asyncio.sleep(0.1)
        finished.append("late")
        return "late"

    with pytest.raises(flowcast.ParallelError) as caught:
        run(flowcast.parallel([delayed("a", fail=True), late]))
    assert finished == ["late"]
    assert [f.index for f in caught.value.failures] == [0]
    assert isinstance(caught.value.failures[0].error, ValueError)
    assert caught.value.code == "PARALLEL_FAIL"


def test_failures_are_listed_by_index_whatever_their_finish_order() -> None:
    thunks = [delayed(0, 0.05, fail=True), delayed(1), delayed(2, 0.0, fail=True)]
    with pytest.raises(flowcast.ParallelError) as caught:
        run(flowcast.parallel(thunks))
    assert [f.index for f in caught.value.failures] == [0, 2]
    assert str(caught.value) == "2 of 3 parallel task(s) failed: [0] failed 0; [2] failed 2"


def test_non_strict_puts_none_in_failed_slots() -> None:
    thunks = [delayed("a", fail=True), delayed("b")]
    assert run(flowcast.parallel(thunks, strict=False)) == [None, "b"]


def test_concurrency_bounds_the_tasks_running_at_once() -> None:
    running = 0
    peak = 0

    def task() -> Any:
        async def thunk() -> None:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1

        return thunk

    run(flowcast.parallel([task() for _ in range(10)], concurrency=3))
    assert peak == 3


@pytest.mark.parametrize("concurrency", [0, -1, 1.5, True])
def test_a_bad_concurrency_is_a_value_error(concurrency: Any) -> None:
    with pytest.raises(ValueError, match="concurrency"):
        run(flowcast.parallel([delayed(1)], concurrency=concurrency))


def test_plain_thunks_are_tolerated() -> None:
    thunks: list[Any] = [lambda: 1, lambda: 2]
    assert run(flowcast.parallel(thunks)) == [1, 2]


def test_real_processes_run_concurrently() -> None:
    thunks = [lambda: flowcast.spawn_cli("sh", ["-c", "sleep 0.3; printf x"]) for _ in range(6)]
    started = time.monotonic()
    assert run(flowcast.parallel(thunks)) == ["x"] * 6
    assert time.monotonic() - started < 1.2  # one after the other: 1.8 s


def test_a_pause_in_a_task_is_reraised_after_all_finish_not_wrapped() -> None:
    finished = []

    async def pausing() -> None:
        raise flowcast.PauseSignal("needs a human")

    async def other() -> None:
        await asyncio.sleep(0.05)
        finished.append(1)

    with pytest.raises(flowcast.PauseSignal, match="needs a human"):
        run(flowcast.parallel([delayed("x", fail=True), pausing, other]))
    assert finished == [1]


def test_cancelling_parallel_cancels_every_task() -> None:
    cancelled = []

    def task(i: int) -> Any:
        async def thunk() -> None:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(i)
                raise

        return thunk

    async def scenario() -> None:
        job = asyncio.create_task(flowcast.parallel([task(i) for i in range(3)]))
        await asyncio.sleep(0.05)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    run(scenario())
    assert sorted(cancelled) == [0, 1, 2]


def test_pipeline_passes_each_item_through_every_stage() -> None:
    async def double(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    results = run(flowcast.pipeline([1, 2, 3], double, lambda x: x + 1))
    assert [r.value for r in results] == [3, 5, 7]
    assert all(r.ok for r in results)


def test_pipeline_records_the_failing_stage_and_never_raises() -> None:
    def reject_two(x: int) -> int:
        if x == 2:
            raise ValueError("two")
        return x

    results = run(flowcast.pipeline([1, 2], lambda x: x, reject_two, lambda x: x * 10))
    assert results[0] == flowcast.PipelineResult(ok=True, value=10)
    assert (results[1].ok, results[1].stage, str(results[1].error)) == (False, 1, "two")


def test_pipeline_items_move_independently() -> None:
    order: list[str] = []

    async def stage(x: str) -> str:
        await asyncio.sleep(0.05 if x == "slow" else 0)
        order.append(x)
        return x

    run(flowcast.pipeline(["slow", "fast"], stage))
    assert order == ["fast", "slow"]


def test_pipeline_concurrency_one_is_sequential() -> None:
    order: list[str] = []

    async def stage(x: str) -> str:
        await asyncio.sleep(0.05 if x == "slow" else 0)
        order.append(x)
        return x

    run(flowcast.pipeline(["slow", "fast"], stage, concurrency=1))
    assert order == ["slow", "fast"]
