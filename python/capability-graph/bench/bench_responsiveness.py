"""How long does each executor keep the event loop from running while it works?

A ticker task (every 5 ms) runs on the graph's event loop while a match keeps its executor busy
past ``--timeout-ms``: a cold lexical index (999 capabilities with texts at the schema's maximum
length; 100,000 short ones), an OpenAI-compatible loopback server holding its answer, a fake
``codex`` sleeping with a child process, a scripted sleep. For each it prints the longest gap
between two ticks beyond the period (the stall) and how late ``CG_MODEL_TIMEOUT`` arrived past
``timeoutMs``, worst over ``--matches`` matches on one graph (the first includes one-time work:
the catalog summaries, the SDK import, codex's probes). The baseline is the same ticker beside a
plain ``asyncio.sleep``: the machine's own scheduling noise. The goal is a stall and a lateness
under 50 ms each. A second lexical-100k row is measured with ``gc.freeze()`` after ``open``: a
full pass of Python's cyclic collector over a 100,000-capability graph stalls every thread of
the process, whatever runs where, and a host can keep the loaded graph out of those passes.

    python bench/bench_responsiveness.py [--timeout-ms 100] [--matches 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_core import json_out_option, save_json

from capability_graph_testing.reliability import (
    TICKER_KINDS,
    hanging_match,
    tick_through_matches,
    with_ticker,
)

GOAL_MS = 50.0


def measure(kind: str, timeout_ms: int, matches: int, freeze_gc: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder, hanging_match(kind, Path(folder)) as config:
        runs = asyncio.run(
            tick_through_matches(
                config, timeout_ms=timeout_ms, matches=matches, freeze_gc=freeze_gc
            )
        )
    outcomes = sorted({str(run.outcome.get("code", run.outcome.get("status"))) for run in runs})
    stall = max(run.max_stall_s for run in runs) * 1000
    late = max(run.elapsed_s * 1000 - timeout_ms for run in runs)
    return {
        "matches": len(runs),
        "outcomes": outcomes,
        "max_stall_ms": round(stall, 1),
        "max_late_ms": round(late, 1),
        "steady_max_stall_ms": round(max(r.max_stall_s for r in runs[1:]) * 1000, 1)
        if len(runs) > 1
        else None,
        "within_goal": stall <= GOAL_MS and late <= GOAL_MS,
    }


def baseline(timeout_ms: int, matches: int) -> dict[str, Any]:
    async def idle() -> list[Any]:
        return [await with_ticker(asyncio.sleep(timeout_ms / 1000)) for _ in range(matches)]

    runs = asyncio.run(idle())
    return {"max_stall_ms": round(max(r.max_stall_s for r in runs) * 1000, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout-ms", type=int, default=100)
    parser.add_argument("--matches", type=int, default=3)
    parser.add_argument("--kinds", default=",".join(TICKER_KINDS))
    parser.add_argument(
        "--no-gc-freeze",
        action="store_true",
        help="skip the second lexical-100k row measured with gc.freeze() after open",
    )
    parser.add_argument("--json", action="store_true")
    json_out_option(parser)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"baseline (idle loop)": baseline(args.timeout_ms, args.matches)}
    for kind in args.kinds.split(","):
        report[kind] = measure(kind, args.timeout_ms, args.matches, freeze_gc=False)
        if kind == "lexical-100k" and not args.no_gc_freeze:
            report[f"{kind} +gc.freeze"] = measure(
                kind, args.timeout_ms, args.matches, freeze_gc=True
            )
    save_json(args.json_out, report)
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        "event-loop stall while each executor works "
        f"(ticker every 5 ms, deadline {args.timeout_ms} ms)"
    )
    for kind, row in report.items():
        extra = ""
        if "max_late_ms" in row:
            extra = (
                f"  late={row['max_late_ms']:7.1f} ms  steady stall={row['steady_max_stall_ms']} ms"
                f"  {'/'.join(row['outcomes'])}  {'ok' if row['within_goal'] else 'OVER 50 ms'}"
            )
        print(f"  {kind:22} max stall={row['max_stall_ms']:8.1f} ms{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
