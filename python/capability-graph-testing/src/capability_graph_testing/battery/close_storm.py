"""The close storm: ``close()`` while many matches are inside the executor.

Every pending match ends rejected with ``CG_GRAPH_CLOSED`` (even from an executor that ignores
the first cancellation and answers late), promptly, with no task left behind. Returns figures.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from capability_graph_testing.battery.registry import CLOSED


class Stubborn:
    """An executor that ignores the first cancellation, then answers a *valid* result late."""

    name = "stubborn"

    def __init__(self) -> None:
        self.entered = 0
        self.late_answers = 0

    async def match(self, job: Any) -> object:
        self.entered += 1
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.2)
            self.late_answers += 1
        entry = job.catalog[0]
        return {"status": "matched", "candidates": [{"id": entry["id"], "confidence": 1}]}


class Sleeper:
    """An executor that sleeps (cancellably) and would answer a valid result afterwards."""

    name = "sleeper"

    def __init__(self, seconds: float = 30) -> None:
        self.seconds = seconds
        self.entered = 0
        self.finished = 0

    async def match(self, job: Any) -> object:
        self.entered += 1
        await asyncio.sleep(self.seconds)
        self.finished += 1
        return {"status": "matched", "candidates": [{"id": job.catalog[0]["id"], "confidence": 1}]}


@dataclass
class CloseStats:
    matches: int = 0
    closed: int = 0
    other: Counter[str] = field(default_factory=Counter)
    close_to_last_rejection_s: float = 0.0
    leftover_tasks: int = 0
    late_results: int = 0

    def figures(self) -> dict[str, Any]:
        return {
            "matches": self.matches,
            "rejected_graph_closed": self.closed,
            "other_outcomes": dict(self.other),
            "close_to_last_rejection_s": round(self.close_to_last_rejection_s, 3),
            "leftover_tasks": self.leftover_tasks,
            "late_results": self.late_results,
        }


async def close_storm_async(
    config: Any, executor: Any, *, matches: int, entered: Callable[[], int], timeout_s: float = 30
) -> CloseStats:
    """``matches`` concurrent matches, close() once every one is inside the executor; how each
    ended and how long after close() the last one did."""
    from capability_graph import CapabilityGraph, GraphError

    stats = CloseStats(matches=matches)
    graph = await CapabilityGraph.open(config, executor=executor)
    ended: list[float] = []

    async def one() -> Any:
        try:
            return await graph.call("match_capabilities", {"request": "x", "timeoutMs": 600_000})
        finally:
            ended.append(time.monotonic())

    tasks = [asyncio.ensure_future(one()) for _ in range(matches)]
    deadline = time.monotonic() + timeout_s
    while entered() < matches and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    ended.clear()
    closing = time.monotonic()
    await graph.close()
    outcomes = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout_s)
    stats.close_to_last_rejection_s = max(ended, default=closing) - closing
    for outcome in outcomes:
        if isinstance(outcome, GraphError) and outcome.to_json() == CLOSED:
            stats.closed += 1
        elif isinstance(outcome, dict):
            stats.late_results += 1
        else:
            stats.other[repr(outcome)[:80]] += 1
    await asyncio.sleep(0)
    stats.leftover_tasks = len(asyncio.all_tasks()) - 1
    return stats
