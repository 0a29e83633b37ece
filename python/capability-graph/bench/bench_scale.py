"""Benchmark how both implementations scale with the number of capabilities.

For each size (default 10k, 100k and 1M capabilities; ``--sizes``) the provider file of the core
benchmark is generated once (``bench_core.generate``: every capability with two relations, two
documents and tags), and each implementation (``--implementations python,typescript``) runs
every operation on it in a FRESH child process (Python: this interpreter; TypeScript:
``typescript/bench/scale-child.mjs`` on the build in ``typescript/dist``):

- ``open``: time; peak RSS of the process after open; memory per capability: (peak RSS after
  open - peak RSS of a bare child that imported the package) / capabilities; file bytes per
  capability;
- ``describe``: ``describe_graph``; ``describe_one``: ``resolve_capabilities`` of one capability
  with no relations (the declaration of one capability); best of 5 each;
- ``list``: paging through everything (``limit`` 500, every page until no ``nextCursor``), total
  time; the distinct ids seen must equal the size (checked in the child, a failure otherwise);
- ``resolve``: a depth-3 closure from 100 roots spread over the file (best of 5);
- ``match``: one query with the ``lexical`` executor (``{"executor": "lexical"}``) and a deadline
  (``--match-timeout-ms``, default 10,000): the first match (cold: it builds the index) and a
  second (warm), each with its outcome (``ok``/``empty``, or the error code: ``CG_MODEL_TIMEOUT``
  is a valid outcome when the index takes longer than the deadline) and whether it returned
  within the deadline (+50 ms); while they run a ticker on the event loop (an asyncio task /
  ``setInterval`` every 10 ms) records the longest gap between two ticks: goal <= 50 ms;
- ``reload``: of the same file, time.

The operations go through the JSON entry point (``graph.call``, what the CLI, the MCP server and
the Tool Adapter use; the Python SDK's typed methods validate their results into models on top)
and ``graph.reload()``. Between consecutive sizes it computes each operation's growth exponent,
log(t2/t1) / log(n2/n1), and flags an operation growing faster than linearly (> 1.15).

    python bench/bench_scale.py [--sizes 10000,100000,1000000]
                                [--implementations python,typescript] [--json]

``--json`` prints one JSON object (``rows``: one per size and implementation, ``exponents``,
``recorded``), the form of ``docs/benchmarks/bench_scale.json``; ``tools/codegen.py`` draws
``docs/benchmarks/scale.svg`` and the scale table of docs/benchmarks.md from it. 1M capabilities
is a 461 MB file and takes several GB of memory in each implementation.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_core import generate, json_out_option, roots_of, save_json

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
TYPESCRIPT_CHILD = ROOT / "typescript" / "bench" / "scale-child.mjs"
TYPESCRIPT_BUILD = ROOT / "typescript" / "dist" / "src" / "index.js"

#: An operation growing faster than this exponent between two sizes is flagged as superlinear.
LINEAR_LIMIT = 1.15
#: The longest gap between two ticks of the event loop's ticker the goal allows, and the slack
#: past a match's deadline that still counts as "within it".
GOAL_MS = 50.0

#: The timed operations: key of the child's report, label, unit ("s" or "ms").
OPERATIONS = (
    ("open_s", "open", "s"),
    ("describe_ms", "describe", "ms"),
    ("describe_one_ms", "describe one", "ms"),
    ("list_s", "list all", "s"),
    ("resolve_ms", "resolve d3", "ms"),
    ("match_ms", "match cold", "ms"),
    ("match_warm_ms", "match warm", "ms"),
    ("reload_s", "reload", "s"),
)

PYTHON_CHILD = r"""
import asyncio, json, os, resource, sys, time
mode = sys.argv[1]
from capability_graph import CapabilityGraph, GraphError
# The modules open imports (the generated models) belong to the bare baseline.
import capability_graph._generated.models.config, capability_graph._generated.models.definition

def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def rss_mb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20

if mode == "bare":
    print(json.dumps({"peak_rss_mb": peak_rss_mb(), "rss_mb": rss_mb()}))
    sys.exit(0)

path, size, roots = sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
timeout_ms = int(sys.argv[5])
config = {
    "providers": [{"path": path}],
    "budgets": {"maxCapabilities": 10000000, "maxCatalogEntries": min(size, 1000000),
                "maxDefinitionBytes": 1073741824, "maxResultBytes": 268435456},
    "model": {"executor": "lexical"},
}

async def best(times, work):
    fastest, result = float("inf"), None
    for _ in range(times):
        started = time.perf_counter(); result = await work()
        fastest = min(fastest, time.perf_counter() - started)
    return fastest * 1000, result

async def ticked(work):
    # The outcome (the result's status or the error's code), its time (ms) and the longest gap
    # (ms) between two ticks of a task ticking every 10 ms beside it.
    state = {"last": 0.0, "max": 0.0, "stop": False}
    async def tick():
        while not state["stop"]:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            state["max"] = max(state["max"], now - state["last"]); state["last"] = now
    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0)  # the ticker runs before the work starts
    started = state["last"] = time.perf_counter()
    try:
        outcome = (await work())["status"]
    except GraphError as error:
        outcome = error.code.value
    elapsed = time.perf_counter() - started
    state["stop"] = True
    await ticker
    return {"outcome": outcome, "ms": elapsed * 1000, "max_gap": state["max"] * 1000}

async def main():
    started = time.perf_counter()
    graph = await CapabilityGraph.open(config)
    open_s = time.perf_counter() - started
    peak_after_open, rss_after_open = peak_rss_mb(), rss_mb()
    describe_ms, _ = await best(5, lambda: graph.call("describe_graph", {}))
    one_request = {"ids": roots[:1], "relations": {"depth": 0}}
    describe_one_ms, one = await best(5, lambda: graph.call("resolve_capabilities", one_request))
    assert len(one["capabilities"]) == 1, one
    seen, pages, cursor = set(), 0, None
    started = time.perf_counter()
    while True:
        page_started = time.perf_counter()
        arguments = {"limit": 500} if cursor is None else {"limit": 500, "cursor": cursor}
        page = await graph.call("list_capabilities", arguments)
        last_page_ms = (time.perf_counter() - page_started) * 1000
        if pages == 0:
            first_page_ms = last_page_ms
        pages += 1
        seen.update(item["id"] for item in page["items"])
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    list_s = time.perf_counter() - started
    assert len(seen) == size, f"list paged through {len(seen)} of {size}"
    closure_request = {"ids": roots, "relations": {"depth": 3}}
    resolve_ms, closure = await best(5, lambda: graph.call("resolve_capabilities", closure_request))
    request = {"request": "handles request kind 42 for route family 7", "timeoutMs": timeout_ms}
    cold = await ticked(lambda: graph.call("match_capabilities", request))
    warm = await ticked(lambda: graph.call("match_capabilities", request))
    started = time.perf_counter()
    reloaded = await graph.reload()
    reload_s = time.perf_counter() - started
    assert reloaded.ok, reloaded
    await graph.close()
    print(json.dumps({
        "file_bytes": os.path.getsize(path), "open_s": open_s, "peak_rss_mb": peak_after_open,
        "rss_after_open_mb": rss_after_open, "describe_ms": describe_ms,
        "describe_one_ms": describe_one_ms, "list_s": list_s, "list_pages": pages,
        "list_items": len(seen), "list_first_page_ms": first_page_ms,
        "list_last_page_ms": last_page_ms, "resolve_ms": resolve_ms,
        "resolved": len(closure["capabilities"]), "match_ms": cold["ms"],
        "match_outcome": cold["outcome"], "match_warm_ms": warm["ms"],
        "match_warm_outcome": warm["outcome"],
        "ticker_max_gap_ms": max(cold["max_gap"], warm["max_gap"]), "reload_s": reload_s,
        "peak_rss_end_mb": peak_rss_mb(),
    }))

asyncio.run(main())
"""


def child_argv(implementation: str, mode: str, *arguments: str) -> list[str]:
    if implementation == "python":
        return [sys.executable, "-c", PYTHON_CHILD, mode, *arguments]
    # V8's default heap limit (about 4 GB) is below what 1M capabilities take.
    return ["node", "--max-old-space-size=24576", str(TYPESCRIPT_CHILD), mode, *arguments]


def run_child(implementation: str, mode: str, *arguments: str) -> dict[str, Any]:
    completed = subprocess.run(
        child_argv(implementation, mode, *arguments), capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"the {implementation} child ({mode}) failed ({completed.returncode}):\n"
            f"{completed.stderr[-4000:]}"
        )
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def measure(
    implementation: str, path: Path, size: int, bare_mb: float, timeout_ms: int
) -> dict[str, Any]:
    report = run_child(
        implementation, "run", str(path), str(size), json.dumps(roots_of(size)), str(timeout_ms)
    )
    return row_of(implementation, size, report, bare_mb, timeout_ms)


def row_of(
    implementation: str, size: int, report: dict[str, Any], bare_mb: float, timeout_ms: int
) -> dict[str, Any]:
    """One row of the table: the child's report, rounded, with the figures derived from it."""
    per_cap = (report["peak_rss_mb"] - bare_mb) * 2**20 / size
    steady_per_cap = (report["rss_after_open_mb"] - bare_mb) * 2**20 / size
    return {
        "implementation": implementation,
        "capabilities": size,
        "file_bytes": report["file_bytes"],
        "file_bytes_per_cap": round(report["file_bytes"] / size, 1),
        "open_s": round(report["open_s"], 3),
        "bare_rss_mb": round(bare_mb, 1),
        "peak_rss_mb": round(report["peak_rss_mb"], 1),
        "rss_after_open_mb": round(report["rss_after_open_mb"], 1),
        "mem_bytes_per_cap": round(per_cap),
        "steady_bytes_per_cap": round(steady_per_cap),
        "describe_ms": round(report["describe_ms"], 3),
        "describe_one_ms": round(report["describe_one_ms"], 3),
        "list_s": round(report["list_s"], 3),
        "list_pages": report["list_pages"],
        "list_items": report["list_items"],
        "list_first_page_ms": round(report["list_first_page_ms"], 2),
        "list_last_page_ms": round(report["list_last_page_ms"], 2),
        "resolve_ms": round(report["resolve_ms"], 2),
        "resolved": report["resolved"],
        "match_timeout_ms": timeout_ms,
        "match_ms": round(report["match_ms"], 1),
        "match_outcome": report["match_outcome"],
        "match_within_deadline": report["match_ms"] <= timeout_ms + GOAL_MS,
        "match_warm_ms": round(report["match_warm_ms"], 1),
        "match_warm_outcome": report["match_warm_outcome"],
        "ticker_max_gap_ms": round(report["ticker_max_gap_ms"], 1),
        "ticker_within_goal": report["ticker_max_gap_ms"] <= GOAL_MS,
        "reload_s": round(report["reload_s"], 3),
        "peak_rss_end_mb": round(report["peak_rss_end_mb"], 1),
    }


#: The outcome member of each match time: a match that ended in an error (its deadline passed)
#: took the deadline, not the work, so its time has no growth exponent.
OUTCOME_OF = {"match_ms": "match_outcome", "match_warm_ms": "match_warm_outcome"}


def failed(row: dict[str, Any], key: str) -> str | None:
    """The error code that ended the operation ``key`` of ``row`` (a match), if one did."""
    outcome = row.get(OUTCOME_OF.get(key, ""), "")
    return outcome if str(outcome).startswith("CG_") else None


def exponents(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The growth exponent of each timed operation (and of the peak RSS) between consecutive
    sizes of each implementation; ``superlinear`` when above 1.15. A match that ended in an
    error at either size (``CG_MODEL_TIMEOUT``: the deadline) has no exponent (``null``) and
    the error in ``capped``."""
    found = []
    for implementation in dict.fromkeys(row["implementation"] for row in rows):
        mine = sorted(
            (row for row in rows if row["implementation"] == implementation),
            key=lambda row: row["capabilities"],
        )
        for small, large in itertools.pairwise(mine):
            growth = math.log(large["capabilities"] / small["capabilities"])
            for key, label, _ in (*OPERATIONS, ("peak_rss_mb", "peak RSS", "MB")):
                if small[key] <= 0 or large[key] <= 0:
                    continue
                item: dict[str, Any] = {
                    "implementation": implementation,
                    "operation": label,
                    "key": key,
                    "from": small["capabilities"],
                    "to": large["capabilities"],
                }
                capped = failed(small, key) or failed(large, key)
                if capped:
                    item.update(exponent=None, superlinear=False, capped=capped)
                else:
                    exponent = math.log(large[key] / small[key]) / growth
                    item.update(exponent=round(exponent, 2), superlinear=exponent > LINEAR_LIMIT)
                found.append(item)
    return found


def run(sizes: list[int], implementations: list[str], timeout_ms: int) -> dict[str, Any]:
    if "typescript" in implementations and not TYPESCRIPT_BUILD.is_file():
        raise SystemExit("bench_scale: build first: (cd typescript && npm ci && npm run build)")
    bare = {name: run_child(name, "bare")["peak_rss_mb"] for name in implementations}
    rows = []
    with tempfile.TemporaryDirectory(prefix="cg-bench-scale-") as directory:
        for size in sizes:
            path = generate(size, Path(directory))
            for implementation in implementations:
                print(f"bench_scale: {implementation} {size:,} ...", file=sys.stderr, flush=True)
                rows.append(measure(implementation, path, size, bare[implementation], timeout_ms))
            path.unlink()
    return {
        "recorded": (
            f"{time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} CPUs; "
            f"Python {platform.python_version()}, Node {node_version(implementations)}"
        ),
        "rows": rows,
        "exponents": exponents(rows),
    }


def node_version(implementations: list[str]) -> str:
    if "typescript" not in implementations:
        return "-"
    return subprocess.run(
        ["node", "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()


def table(report: dict[str, Any]) -> str:
    """The human-readable table: one column per implementation and size."""
    rows = report["rows"]
    heads = [f"{r['implementation'][:2]} {r['capabilities']:,}" for r in rows]
    lines: list[tuple[str, list[str]]] = [
        (
            "file MB (B/cap)",
            [f"{r['file_bytes'] / 1e6:.0f} ({r['file_bytes_per_cap']:.0f})" for r in rows],
        ),
    ]
    for key, label, unit in OPERATIONS:
        lines.append((f"{label} {unit}", [f"{r[key]:g}" for r in rows]))
    lines += [
        ("peak RSS MB", [f"{r['peak_rss_mb']:.0f}" for r in rows]),
        ("RSS after open MB", [f"{r['rss_after_open_mb']:.0f}" for r in rows]),
        ("memory B/cap", [str(r["mem_bytes_per_cap"]) for r in rows]),
        ("list pages/items", [f"{r['list_pages']}/{r['list_items']}" for r in rows]),
        (
            "list 1st/last page ms",
            [f"{r['list_first_page_ms']:g}/{r['list_last_page_ms']:g}" for r in rows],
        ),
        ("resolved (d3)", [str(r["resolved"]) for r in rows]),
        (
            "match cold outcome",
            [f"{r['match_outcome']}{'' if r['match_within_deadline'] else ' LATE'}" for r in rows],
        ),
        ("match warm outcome", [str(r["match_warm_outcome"]) for r in rows]),
        (
            "ticker max gap ms",
            [f"{r['ticker_max_gap_ms']:g}{'' if r['ticker_within_goal'] else ' !'}" for r in rows],
        ),
        ("peak RSS at end MB", [f"{r['peak_rss_end_mb']:.0f}" for r in rows]),
    ]
    width = max(len(label) for label, _ in lines) + 2
    cells = [max(len(h), *(len(v[i]) for _, v in lines)) + 2 for i, h in enumerate(heads)]
    out = [" " * width + "".join(h.rjust(c) for h, c in zip(heads, cells, strict=True))]
    out += [
        label.ljust(width) + "".join(v.rjust(c) for v, c in zip(values, cells, strict=True))
        for label, values in lines
    ]
    deadline = rows[0]["match_timeout_ms"] if rows else 0
    out.append(
        f"(match deadline {deadline} ms, LATE: returned more than {GOAL_MS:g} ms after it; "
        f"ticker every 10 ms, !: gap over the {GOAL_MS:g} ms goal; "
        "memory B/cap = (peak RSS after open - bare child) / capabilities)"
    )
    if report["exponents"]:
        out += ["", "growth exponents, log(t2/t1)/log(n2/n1) (> 1.15: superlinear)"]
        for item in report["exponents"]:
            flag = "  SUPERLINEAR" if item["superlinear"] else ""
            value = (
                f"{item['exponent']:>6.2f}"
                if item["exponent"] is not None
                else f"     -  ({item['capped']}: the deadline, not the work)"
            )
            out.append(
                f"  {item['implementation']:<11}{item['operation']:<14}"
                f"{item['from']:>10,} -> {item['to']:<10,}{value}{flag}"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--implementations", default="python,typescript")
    parser.add_argument("--match-timeout-ms", type=int, default=10_000)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    json_out_option(parser)
    args = parser.parse_args(argv)
    sizes = sorted(int(size) for size in args.sizes.split(","))
    implementations = [name.strip() for name in args.implementations.split(",")]
    unknown = set(implementations) - {"python", "typescript"}
    if unknown:
        parser.error(f"unknown implementations: {', '.join(sorted(unknown))}")
    report = run(sizes, implementations, args.match_timeout_ms)
    save_json(args.json_out, report)
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
