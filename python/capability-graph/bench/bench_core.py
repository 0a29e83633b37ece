"""Benchmark the core graph against baselines measured in the same run.

For each size (default 10k and 100k capabilities; ``--sizes 10000,100000,1000000``):

- ``open``: ``CapabilityGraph.open`` (modules already imported) of a generated provider
  file (relations and documents included) against ``json.loads`` of the same bytes: time ratio,
  and peak RSS ratio (each measured in a fresh child process, so peaks do not mask each other);
- ``resolve``: a depth-2 closure from 100 roots against serializing its own result with the
  same encoder the surfaces use (orjson); for reference, serializing a plain copy of it (the
  result shares read-only details with the graph, which orjson serializes more slowly than plain
  dicts) and serializing it with stdlib ``json.dumps``.

Targets (docs/benchmarks.md): open <= 1.5x json.loads, peak RSS <= 1.3x, resolve <= 3x. Beside
the stdlib parser, the same bytes parsed by orjson (the parser open uses), and the floor: orjson
plus the definition's schema check alone.

    python bench/bench_core.py [--sizes 10000,100000] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHILD = r"""
import asyncio, gc, json, resource, sys, time
mode, path, roots = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
data = open(path, "rb").read()
if mode == "loads":
    start = time.perf_counter(); value = json.loads(data); elapsed = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": elapsed, "rss_mb": rss}))
    sys.exit(0)
if mode == "orjson":
    import orjson
    start = time.perf_counter(); value = orjson.loads(data); elapsed = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": elapsed, "rss_mb": rss}))
    sys.exit(0)
if mode == "floor":
    # What open cannot do without: parse the bytes (orjson, as open does) and check the
    # definition against its schema (the generated validator open uses), with the collector
    # paused as open pauses it.
    import orjson
    from capability_graph._core.validation import definition_problem
    import capability_graph._generated.models.definition
    gc.disable()
    start = time.perf_counter(); value = orjson.loads(data); parsed = time.perf_counter() - start
    start = time.perf_counter(); problem = definition_problem(value)
    checked = time.perf_counter() - start
    assert problem is None, problem
    print(json.dumps({"parse": parsed, "schema": checked}))
    sys.exit(0)
del data
from capability_graph import CapabilityGraph
from capability_graph._core.json import dumps
# One-time module imports (the generated models) are start-up cost, measured by the surfaces
# benchmark; open() is timed on a warm interpreter.
import capability_graph._generated.models.config, capability_graph._generated.models.definition
budgets = {"maxCapabilities": 10000000, "maxDefinitionBytes": 1073741824,
           "maxResultBytes": 268435456}
config = {"providers": [{"path": path}], "budgets": budgets}
async def main():
    start = time.perf_counter()
    graph = await CapabilityGraph.open(config)
    opened = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    request = {"ids": roots, "relations": {"depth": 2}}
    best_resolve = best_dump = best_plain = best_stdlib = float("inf")
    for _ in range(5):
        start = time.perf_counter(); result = await graph.call("resolve_capabilities", request)
        best_resolve = min(best_resolve, time.perf_counter() - start)
        start = time.perf_counter(); dumps(result).encode()
        best_dump = min(best_dump, time.perf_counter() - start)
        plain = json.loads(dumps(result))
        start = time.perf_counter(); dumps(plain).encode()
        best_plain = min(best_plain, time.perf_counter() - start)
        start = time.perf_counter(); json.dumps(result, ensure_ascii=False).encode()
        best_stdlib = min(best_stdlib, time.perf_counter() - start)
    await graph.close()
    print(json.dumps({"seconds": opened, "rss_mb": rss, "resolve": best_resolve, "dump": best_dump,
                      "plain_dump": best_plain, "stdlib_dump": best_stdlib,
                      "resolved": len(result["capabilities"])}))
asyncio.run(main())
"""


def generate(size: int, folder: Path) -> Path:
    capabilities = []
    for i in range(size):
        relations = []
        if i >= 1:
            relations.append({"kind": "requires", "target": f"cap.{i - 1}"})
        if i >= 7:
            relations.append({"kind": "related", "target": f"cap.{i - 7}"})
        capabilities.append(
            {
                "id": f"cap.{i}",
                "name": f"Capability {i}",
                "description": f"Handles request kind {i % 97} for route family {i % 13}.",
                "whenToUse": "When the route needs it.",
                "tags": ["http", f"family-{i % 13}"],
                "relations": relations,
                "documents": [
                    {"id": "guide", "title": "Guide", "role": "guide", "path": f"docs/{i}.md"},
                    {"id": "upstream", "title": "Upstream", "url": f"https://example.com/{i}"},
                ],
            }
        )
    path = folder / f"provider-{size}.json"
    definition = {
        "providerId": "bench",
        "name": "Bench",
        "version": "1",
        "capabilities": capabilities,
    }
    path.write_text(json.dumps(definition), encoding="utf-8")
    return path


def child(mode: str, path: Path, roots: list[str]) -> dict[str, Any]:
    output = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(path), json.dumps(roots)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, Any] = json.loads(output)
    return result


def roots_of(size: int) -> list[str]:
    """The 100 roots the resolve benchmarks start from, spread over the generated provider."""
    return [f"bench::cap.{i}" for i in range(size - 1, 0, -max(1, size // 100))][:100]


Row = dict[str, Any]


def rows_per_size(sizes: str, measure: Callable[[Path, int], Row]) -> list[Row]:
    """One row per size (``"10000,100000"``): ``measure`` of a provider file generated with that
    many capabilities, deleted once measured."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in sizes.split(",")):
            path = generate(size, Path(tmp))
            rows.append(measure(path, size))
            path.unlink()
    return rows


def measure_open_and_resolve(path: Path, size: int) -> Row:
    """open vs json.loads (best of fresh child processes), then resolve vs serializing."""
    roots = roots_of(size)
    baseline = min((child("loads", path, roots) for _ in range(3)), key=lambda r: r["seconds"])
    fast = min((child("orjson", path, roots) for _ in range(3)), key=lambda r: r["seconds"])
    floor = min((child("floor", path, roots) for _ in range(2)), key=lambda r: r["parse"])
    graph = min((child("open", path, roots) for _ in range(2)), key=lambda r: r["seconds"])
    floor_s = floor["parse"] + floor["schema"]
    return {
        "capabilities": size,
        "bytes": path.stat().st_size,
        "json_loads_s": round(baseline["seconds"], 3),
        "open_s": round(graph["seconds"], 3),
        "open_ratio": round(graph["seconds"] / baseline["seconds"], 2),
        "orjson_loads_s": round(fast["seconds"], 3),
        "open_ratio_orjson": round(graph["seconds"] / fast["seconds"], 2),
        "schema_check_s": round(floor["schema"], 3),
        "parse_and_schema_s": round(floor_s, 3),
        "parse_and_schema_ratio": round(floor_s / baseline["seconds"], 2),
        "json_loads_rss_mb": round(baseline["rss_mb"], 1),
        "orjson_loads_rss_mb": round(fast["rss_mb"], 1),
        "open_rss_mb": round(graph["rss_mb"], 1),
        "rss_ratio": round(graph["rss_mb"] / baseline["rss_mb"], 2),
        "rss_ratio_orjson": round(graph["rss_mb"] / fast["rss_mb"], 2),
        "resolve_ms": round(graph["resolve"] * 1000, 2),
        "serialize_ms": round(graph["dump"] * 1000, 2),
        "resolve_ratio": round(graph["resolve"] / graph["dump"], 2),
        "plain_serialize_ms": round(graph["plain_dump"] * 1000, 2),
        "resolve_ratio_plain": round(graph["resolve"] / graph["plain_dump"], 2),
        "stdlib_serialize_ms": round(graph["stdlib_dump"] * 1000, 2),
        "resolve_ratio_stdlib": round(graph["resolve"] / graph["stdlib_dump"], 2),
        "resolved": graph["resolved"],
    }


def json_out_option(parser: argparse.ArgumentParser) -> None:
    """``--json-out PATH``: also write the JSON (what ``--json`` prints) to PATH, the normal
    output printed as usual (``run.py`` collects every benchmark's figures this way)."""
    parser.add_argument("--json-out", type=Path, metavar="PATH", help="also write the JSON to PATH")


def save_json(path: Path | None, value: Any) -> None:
    if path is not None:
        path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def print_rows(rows: list[Row], as_json: bool, line: Callable[[Row], str]) -> None:
    """The rows as one JSON document (``--json``, what docs/benchmarks/ keeps) or one line each."""
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(line(row))


def open_and_resolve_line(row: Row) -> str:
    return (
        f"{row['capabilities']:>9,} caps ({row['bytes'] / 1e6:.0f} MB): "
        f"open {row['open_s']}s vs json.loads {row['json_loads_s']}s "
        f"= {row['open_ratio']}x (target <= 1.5; {row['open_ratio_orjson']}x orjson.loads "
        f"{row['orjson_loads_s']}s; floor: parse + schema check {row['parse_and_schema_s']}s "
        f"= {row['parse_and_schema_ratio']}x json.loads); "
        f"peak RSS {row['open_rss_mb']} MB vs {row['json_loads_rss_mb']} MB "
        f"= {row['rss_ratio']}x (<= 1.3; {row['rss_ratio_orjson']}x orjson.loads); "
        f"resolve depth-2 ({row['resolved']} caps) {row['resolve_ms']} ms vs serialize "
        f"{row['serialize_ms']} ms = {row['resolve_ratio']}x (<= 3; "
        f"{row['resolve_ratio_plain']}x of serializing a plain copy, "
        f"{row['resolve_ratio_stdlib']}x of stdlib json.dumps)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--json", action="store_true")
    json_out_option(parser)
    args = parser.parse_args(argv)
    rows = rows_per_size(args.sizes, measure_open_and_resolve)
    save_json(args.json_out, rows)
    print_rows(rows, args.json, open_and_resolve_line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
