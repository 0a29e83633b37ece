"""Benchmark the SDK's typed operations against the JSON entry point they wrap, side by side.

For each size (default 10k and 100k capabilities; ``--sizes 10000,100000``), on one open graph
of the generated provider file that ``bench_core.py`` uses:

- ``describe``: ``graph.describe()`` (the typed result) vs ``graph.call("describe_graph", {})``;
- ``list``: ``graph.list(limit=100)`` vs ``graph.call("list_capabilities", {"limit": 100})``;
- ``resolve``: ``graph.resolve(...)`` of a depth-2 closure from 100 roots vs the same ``call``,
  and against serializing the JSON result with the surfaces' encoder (the ``bench_core``
  baseline, whose bar is 3x). The typed resolve returns a view over the JSON result (built in
  constant time); what reading every attribute of it costs, as a host that walks the whole
  closure does, is reported beside it.

Every figure is the best of ``--repeat`` runs on a warm graph; the ratios are what compare.

    python bench/bench_sdk.py [--sizes 10000,100000] [--repeat 20] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench_core import json_out_option, print_rows, roots_of, rows_per_size, save_json

from capability_graph import CapabilityGraph, ResolveResult
from capability_graph._core.json import dumps


def read(result: ResolveResult) -> list[Any]:
    """Every attribute of a resolve result, as a host that walks the whole closure reads it."""
    seen: list[Any] = []
    for detail in result.capabilities:
        seen += (detail.id, detail.provider_id, detail.name, detail.description, detail.tags)
        seen += (detail.when_to_use, [(r.kind, r.target) for r in detail.relations])
        seen += [(d.id, d.title, d.kind, d.media_type, d.role, d.locale) for d in detail.documents]
    seen += [(edge.from_, edge.kind, edge.to) for edge in result.edges]
    seen += [(u.from_, u.kind, u.target, u.reason) for u in result.unresolved]
    return seen


async def best_of(repeat: int, run: Callable[[], Awaitable[Any]]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        await run()
        best = min(best, time.perf_counter() - start)
    return best


async def measure(path: Path, size: int, repeat: int) -> dict[str, Any]:
    budgets = {
        "maxCapabilities": 10_000_000,
        "maxDefinitionBytes": 1_073_741_824,
        "maxResultBytes": 268_435_456,
    }
    roots = roots_of(size)
    relations = {"depth": 2}
    async with CapabilityGraph.open({"providers": [{"path": str(path)}], "budgets": budgets}) as g:
        resolved = await g.call("resolve_capabilities", {"ids": roots, "relations": relations})
        figures = {
            "describe_call": await best_of(repeat, lambda: g.call("describe_graph", {})),
            "describe_sdk": await best_of(repeat, g.describe),
            "list_call": await best_of(repeat, lambda: g.call("list_capabilities", {"limit": 100})),
            "list_sdk": await best_of(repeat, lambda: g.list(limit=100)),
            "resolve_call": await best_of(
                repeat,
                lambda: g.call("resolve_capabilities", {"ids": roots, "relations": relations}),
            ),
            "resolve_sdk": await best_of(
                repeat,
                lambda: g.resolve(ids=roots, relations=relations),
            ),
        }

        async def serialize() -> None:
            dumps(resolved).encode()

        figures["resolve_serialize"] = await best_of(repeat, serialize)
        view = await g.resolve(ids=roots, relations=relations)

        async def read_every_attribute() -> None:
            read(view)

        figures["resolve_read"] = await best_of(repeat, read_every_attribute)
    row: dict[str, Any] = {"capabilities": size, "resolved": len(resolved["capabilities"])}
    for operation in ("describe", "list", "resolve"):
        sdk, call = figures[f"{operation}_sdk"], figures[f"{operation}_call"]
        row[f"{operation}_call_ms"] = round(call * 1000, 3)
        row[f"{operation}_sdk_ms"] = round(sdk * 1000, 3)
        row[f"{operation}_sdk_ratio"] = round(sdk / call, 2)
    row["resolve_serialize_ms"] = round(figures["resolve_serialize"] * 1000, 3)
    row["resolve_sdk_vs_serialize"] = round(
        figures["resolve_sdk"] / figures["resolve_serialize"], 2
    )
    row["resolve_read_ms"] = round(figures["resolve_read"] * 1000, 3)
    return row


def sdk_line(row: dict[str, Any]) -> str:
    return (
        f"{row['capabilities']:>9,} caps: "
        + "; ".join(
            f"{op} sdk {row[f'{op}_sdk_ms']} ms vs call {row[f'{op}_call_ms']} ms "
            f"= {row[f'{op}_sdk_ratio']}x"
            for op in ("describe", "list", "resolve")
        )
        + f"; resolve sdk vs serialize {row['resolve_serialize_ms']} ms "
        f"= {row['resolve_sdk_vs_serialize']}x (<= 3); reading every attribute of it "
        f"{row['resolve_read_ms']} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    json_out_option(parser)
    args = parser.parse_args(argv)
    rows = rows_per_size(
        args.sizes, lambda path, size: asyncio.run(measure(path, size, args.repeat))
    )
    save_json(args.json_out, rows)
    print_rows(rows, args.json, sdk_line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
