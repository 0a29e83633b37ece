"""Running many tasks: ``parallel`` (all of them, then one verdict) and ``pipeline``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._errors import ParallelError, ParallelFailure, PauseSignal, error_to_dict
from ._sync import maybe_await

__all__ = ["PipelineResult", "parallel", "pipeline"]

T = TypeVar("T")

Stage = Callable[[Any], Awaitable[Any] | Any]


def _limit(concurrency: int | None) -> asyncio.Semaphore | None:
    if concurrency is None:
        return None
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive int or None, not {concurrency!r}")
    return asyncio.Semaphore(concurrency)


async def _bounded(limit: asyncio.Semaphore | None, work: Callable[[], Awaitable[T]]) -> T:
    if limit is None:
        return await work()
    async with limit:
        return await work()


def _summary(failures: Sequence[ParallelFailure], total: int) -> str:
    shown = "; ".join(f"[{f.index}] {error_to_dict(f.error)['message']}" for f in failures[:5])
    more = f"; and {len(failures) - 5} more" if len(failures) > 5 else ""
    return f"{len(failures)} of {total} parallel task(s) failed: {shown}{more}"


async def parallel(
    thunks: Iterable[Callable[[], Awaitable[T]]],
    *,
    concurrency: int | None = None,
    strict: bool = True,
) -> list[T | None]:
    """Run every thunk (a no-argument async function; a plain one is tolerated), at most
    ``concurrency`` at a time (None: all at once); return their results in input order.

    Not fail-fast: every task runs to the end. Then, with ``strict``, any failure raises
    ParallelError listing ``failures`` (index and original exception, by index); without it a
    failed slot holds None. A PauseSignal from a task is re-raised (the first one, by index)
    after all tasks finished, in both modes: a pause is not a failure. Cancelling the caller
    cancels every task.
    """
    limit = _limit(concurrency)
    calls = list(thunks)
    results: list[Any] = [None] * len(calls)
    errors: dict[int, Exception] = {}

    async def run(index: int, thunk: Callable[[], Awaitable[T]]) -> None:
        try:
            results[index] = await _bounded(limit, lambda: maybe_await(thunk()))  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - collected and reported after all tasks
            errors[index] = exc

    async with asyncio.TaskGroup() as group:
        for index, thunk in enumerate(calls):
            group.create_task(run(index, thunk))

    ordered = sorted(errors.items())
    pauses = [exc for _, exc in ordered if isinstance(exc, PauseSignal)]
    if pauses:
        raise pauses[0]
    if ordered and strict:
        failures = [ParallelFailure(index=i, error=exc) for i, exc in ordered]
        raise ParallelError(_summary(failures, len(calls)), failures=failures)
    return results


@dataclass(frozen=True, slots=True)
class PipelineResult(Generic[T]):
    """One item's way through a pipeline: ``ok`` with the last stage's ``value``, or the
    ``error`` raised at stage number ``stage`` (0-based)."""

    ok: bool
    value: T | None = None
    error: Exception | None = None
    stage: int | None = None


async def pipeline(
    items: Iterable[Any], *stages: Stage, concurrency: int | None = None
) -> list[PipelineResult[Any]]:
    """Pass each item through ``stages`` in order (each a function of the previous value,
    plain or async); items move independently, at most ``concurrency`` at a time. Never raises
    for a failing item: its result records the error and the stage. Results are in input
    order."""
    limit = _limit(concurrency)
    values = list(items)
    results: list[PipelineResult[Any]] = [PipelineResult(ok=False)] * len(values)

    async def through(index: int, value: Any) -> None:
        async def work() -> None:
            current = value
            for number, stage in enumerate(stages):
                try:
                    current = await maybe_await(stage(current))
                except Exception as exc:  # noqa: BLE001 - recorded in the item's result
                    results[index] = PipelineResult(ok=False, error=exc, stage=number)
                    return
            results[index] = PipelineResult(ok=True, value=current)

        await _bounded(limit, work)

    async with asyncio.TaskGroup() as group:
        for index, value in enumerate(values):
            group.create_task(through(index, value))
    return results
