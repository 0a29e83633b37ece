"""The reload storm: queries of every tool while reloads alternate valid and invalid candidates.

Over the async graph (tasks) and over the blocking twin (threads). A valid reload publishes a new
revision, an invalid one leaves the serving revision in place with ``CG_RELOAD_FAILED``; every
result is a view of one published snapshot; a cursor never crosses revisions. Returns figures.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capability_graph_testing.battery.checks import _schema_problems, check_error
from capability_graph_testing.battery.registry import TOOLS
from capability_graph_testing.battery.storm_graph import (
    INVALID_KINDS,
    StormGraph,
    check_snapshot_result,
)


@dataclass
class StormStats:
    reloads_ok: int = 0
    reloads_failed: int = 0
    queries: Counter[str] = field(default_factory=Counter)
    stale_cursors: int = 0
    revisions_seen: set[str] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    #: (tool, result) pairs, checked once the storm is over (a query may see a new snapshot
    #: before the reloader has recorded what it holds).
    results: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def check_results(self, published: Mapping[str, Mapping[str, int]]) -> None:
        for tool, result in self.results:
            self.violations += check_snapshot_result(tool, result, published)
            self.revisions_seen.add(result.get("revision", "-"))
        self.results.clear()

    def figures(self) -> dict[str, Any]:
        total = sum(self.queries.values())
        return {
            "reloads_ok": self.reloads_ok,
            "reloads_failed": self.reloads_failed,
            "queries": total,
            "queries_by_tool": dict(sorted(self.queries.items())),
            "queries_per_s": round(total / self.elapsed_s, 1) if self.elapsed_s else 0,
            "stale_cursor_rejections": self.stale_cursors,
            "distinct_revisions_seen": len(self.revisions_seen),
            "violations": len(self.violations),
        }


class CatalogEcho:
    """An executor that answers with the first catalog entry, its description as the reason (so
    the result shows which snapshot's catalog the executor saw), after a short random pause."""

    name = "echo"

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)
        self.calls = 0

    async def match(self, job: Any) -> object:
        self.calls += 1
        await asyncio.sleep(self._rng.choice([0, 0, 0.001, 0.003]))
        entry = job.catalog[0]
        candidate = {"id": entry["id"], "confidence": 0.5, "reason": entry["description"]}
        return {"status": "matched", "candidates": [candidate]}


STORM_REQUESTS: dict[str, dict[str, Any]] = {
    "describe_graph": {},
    "list_capabilities": {"limit": 3},
    "resolve_capabilities": {"ids": ["acme::base", "beta::base"], "relations": {"depth": 2}},
    "match_capabilities": {"request": "find the base capability"},
    "read_document": {"capabilityId": "acme::base", "documentId": "guide"},
}


async def reload_storm_async(
    directory: Path, *, reloads: int, queriers: int, seed: int = 0, duration_s: float | None = None
) -> StormStats:
    """Queries of every operation from ``queriers`` tasks while one task reloads ``reloads``
    times (or for ``duration_s``), alternating valid and invalid candidates."""
    from capability_graph import CapabilityGraph, GraphError

    rng = random.Random(seed)
    storm = StormGraph(directory)
    stats = StormStats()
    graph = await CapabilityGraph.open(storm.config, executor=CatalogEcho(seed))
    first = await graph.call("describe_graph", {})
    storm.published[first["revision"]] = dict(storm.serving)
    current = first["revision"]
    done = asyncio.Event()

    async def querier(index: int) -> None:
        local = random.Random(seed * 1000 + index)
        while not done.is_set():
            tool = local.choice(TOOLS)
            try:
                result = await graph.call(tool, STORM_REQUESTS[tool])
                stats.results.append((tool, result))
                if tool == "list_capabilities" and "nextCursor" in result:
                    follow = {"limit": 3, "cursor": result["nextCursor"]}
                    page = await graph.call("list_capabilities", follow)
                    if page["revision"] != result["revision"]:
                        stats.violations.append("a cursor crossed revisions")
                    stats.results.append((tool, page))
            except GraphError as error:
                if error.code.value == "CG_INPUT_INVALID" and tool == "list_capabilities":
                    stats.stale_cursors += 1  # the page's revision was replaced: restart
                else:
                    stats.violations.append(f"{tool}: unexpected {error.to_json()}")
            except Exception as error:
                stats.violations.append(f"{tool}: {type(error).__name__}")
            stats.queries[tool] += 1
            await asyncio.sleep(0)

    async def reloader() -> None:
        nonlocal current
        started = time.monotonic()
        step = 0
        while (duration_s is None and step < reloads) or (
            duration_s is not None and time.monotonic() - started < duration_s
        ):
            step += 1
            names = rng.choice([["acme"], ["beta"], ["acme", "beta"]])
            subset = None if len(names) == 2 and rng.random() < 0.5 else names
            if step % 2:
                storm.prepare_valid(names, step)
                result = (await graph.reload(providers=subset)).to_json()
                if not result["ok"]:
                    stats.violations.append(f"a valid reload failed: {result}")
                    continue
                storm.publish(names, step, result["revision"])
                current = result["revision"]
                stats.reloads_ok += 1
            else:
                kind = INVALID_KINDS[(step // 2) % len(INVALID_KINDS)]
                if kind == "cross-cycle":
                    names, subset = ["acme", "beta"], None
                storm.prepare_invalid(names, kind, step)
                result = (await graph.reload(providers=subset)).to_json()
                stats.reloads_failed += 1
                problems = _schema_problems("reload-result.schema.json", result)
                if result["ok"] or problems:
                    stats.violations.append(f"an invalid reload ({kind}) published: {result}")
                    continue
                if result["revision"] != current or result["error"]["code"] != "CG_RELOAD_FAILED":
                    stats.violations.append(f"a failed reload ({kind}) moved: {result}")
                now = await graph.call("describe_graph", {})
                if now["revision"] != current:
                    stats.violations.append(f"a failed reload ({kind}) is serving")
                for entry in result["providers"]:
                    if not entry["ok"]:
                        check_error(entry["error"])
                # put valid files back for the next step (the serving snapshot is unchanged)
                storm.prepare_valid(list(StormGraph.PROVIDERS), step)
                for name in StormGraph.PROVIDERS:
                    storm.on_disk[name] = step
            await asyncio.sleep(rng.choice([0, 0.001, 0.005]))
        done.set()

    started = time.monotonic()
    try:
        await asyncio.gather(reloader(), *(querier(i) for i in range(queriers)))
    finally:
        stats.elapsed_s = time.monotonic() - started
        await graph.close()
    stats.check_results(storm.published)
    return stats


def reload_storm_threads(
    directory: Path, *, reloads: int, threads: int, seed: int = 0
) -> StormStats:
    """The same storm over the blocking twin: querier threads and a reloading thread."""
    from capability_graph import BlockingCapabilityGraph, GraphError

    rng = random.Random(seed)
    storm = StormGraph(directory)
    stats = StormStats()
    lock = threading.Lock()
    graph = BlockingCapabilityGraph.open(storm.config, executor=CatalogEcho(seed))
    first = graph.call("describe_graph", {})
    storm.published[first["revision"]] = dict(storm.serving)
    done = threading.Event()

    def querier(index: int) -> None:
        local = random.Random(seed * 1000 + index)
        while not done.is_set():
            tool = local.choice(TOOLS)
            try:
                result = graph.call(tool, STORM_REQUESTS[tool])
                with lock:
                    stats.results.append((tool, result))
            except GraphError as error:
                with lock:
                    stats.violations.append(f"{tool}: unexpected {error.to_json()}")
            except Exception as error:
                with lock:
                    stats.violations.append(f"{tool}: {type(error).__name__}")
            with lock:
                stats.queries[tool] += 1

    workers = [threading.Thread(target=querier, args=(i,), daemon=True) for i in range(threads)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    try:
        current = first["revision"]
        for step in range(1, reloads + 1):
            names = rng.choice([["acme"], ["beta"], ["acme", "beta"]])
            if step % 2:
                storm.prepare_valid(names, step)
                result = graph.reload(providers=names).to_json()
                if not result["ok"]:
                    stats.violations.append(f"a valid reload failed: {result}")
                    continue
                with lock:
                    storm.publish(names, step, result["revision"])
                current = result["revision"]
                stats.reloads_ok += 1
            else:
                kind = INVALID_KINDS[(step // 2) % len(INVALID_KINDS)]
                if kind == "cross-cycle":
                    names = ["acme", "beta"]
                storm.prepare_invalid(names, kind, step)
                result = graph.reload(providers=names).to_json()
                stats.reloads_failed += 1
                if result["ok"] or result["revision"] != current:
                    stats.violations.append(f"an invalid reload ({kind}) published: {result}")
                storm.prepare_valid(list(StormGraph.PROVIDERS), step)
            time.sleep(rng.choice([0, 0.001, 0.005]))
    finally:
        done.set()
        for worker in workers:
            worker.join(30)
        stats.elapsed_s = time.monotonic() - started
        graph.close()
    stats.check_results(storm.published)
    return stats
