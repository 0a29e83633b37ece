"""Benchmark the lexical executor on a synthetic catalog (default 100,000 capabilities).

Prints, per phase, milliseconds per match and the ratio against a baseline: a plain
case-insensitive substring scan of the same catalog (every query word looked for in every entry's
name, description, whenToUse and tags), which is the cheapest thing that could call itself a
"search" and ranks nothing.

    python bench/bench_lexical.py [--size 100000] [--queries 50] [--json]

Phases: ``cold`` = the first match on a catalog (builds the index, then ranks), ``warm`` = later
matches on the same catalog (the index is cached), both through ``run_match`` with a real
``MatchJob`` so validation of the output is included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench_core import json_out_option, save_json

from capability_graph._core.executors import build_executor
from capability_graph._core.executors.job import MatchJob
from capability_graph._core.match import run_match

WORDS = [
    "request",
    "validation",
    "schema",
    "route",
    "handler",
    "invoice",
    "billing",
    "customer",
    "payment",
    "refund",
    "webhook",
    "signature",
    "retry",
    "queue",
    "message",
    "stream",
    "upload",
    "file",
    "image",
    "resize",
    "cache",
    "session",
    "token",
    "login",
    "oauth",
    "user",
    "profile",
    "search",
    "index",
    "document",
    "report",
    "export",
    "import",
    "csv",
    "json",
    "xml",
    "email",
    "notification",
    "sms",
    "template",
    "render",
    "page",
    "form",
    "field",
    "error",
    "log",
    "metric",
    "trace",
    "deploy",
    "build",
    "test",
    "lint",
    "format",
    "migrate",
    "database",
    "table",
    "query",
    "transaction",
    "lock",
    "backup",
    "restore",
    "archive",
    "compress",
    "encrypt",
    "decrypt",
    "hash",
    "sign",
    "verify",
    "rate",
    "limit",
    "quota",
    "throttle",
]


def make_catalog(size: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    catalog = []
    for i in range(size):
        provider = f"p{i % 97}"
        name = " ".join(rng.choices(WORDS, k=3)).capitalize()
        description = " ".join(rng.choices(WORDS, k=18)) + "."
        entry: dict[str, Any] = {
            "id": f"{provider}::cap.{i}",
            "providerId": provider,
            "name": name,
            "description": description,
            "tags": rng.sample(WORDS, 3),
        }
        if i % 3 == 0:
            entry["whenToUse"] = " ".join(rng.choices(WORDS, k=8))
        catalog.append(entry)
    return catalog


def make_queries(count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return ["I need to " + " ".join(rng.choices(WORDS, k=rng.randint(2, 6))) for _ in range(count)]


def substring_scan(catalog: list[dict[str, Any]], query: str, limit: int) -> list[str]:
    words = [w for w in query.lower().split() if len(w) > 2]
    hits = []
    for entry in catalog:
        haystack = " ".join(
            (entry["name"], entry["description"], entry.get("whenToUse", ""), *entry["tags"])
        ).lower()
        if any(word in haystack for word in words):
            hits.append(entry["id"])
    return hits[:limit]


async def lexical_ms(catalog: Sequence[dict[str, Any]], queries: list[str]) -> tuple[float, float]:
    executor = build_executor({"executor": "lexical"})
    timings = []
    for query in queries:
        job = MatchJob(
            request=query,
            context={},
            catalog=catalog,
            limit=5,
            deadline=time.monotonic() + 600,
        )
        started = time.perf_counter()
        await run_match(executor, job, cancel=None, max_output_bytes=65536)
        timings.append((time.perf_counter() - started) * 1000)
    return timings[0], statistics.mean(timings[1:]) if len(timings) > 1 else timings[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    json_out_option(parser)
    args = parser.parse_args(argv)

    catalog = make_catalog(args.size)
    queries = make_queries(args.queries)

    baseline = []
    for query in queries[: min(10, len(queries))]:
        started = time.perf_counter()
        substring_scan(catalog, query, 5)
        baseline.append((time.perf_counter() - started) * 1000)
    baseline_ms = statistics.mean(baseline)

    # The graph core hands the executor the same tuple for the same snapshot and scope; a
    # fresh list of the same entries is recognized too (by entry identity, a little slower).
    cold_ms, warm_ms = asyncio.run(lexical_ms(tuple(catalog), queries))
    _, warm_list_ms = asyncio.run(lexical_ms(list(catalog), queries))
    report = {
        "size": args.size,
        "queries": len(queries),
        "baseline_substring_scan_ms": round(baseline_ms, 2),
        "lexical_cold_ms": round(cold_ms, 2),
        "lexical_warm_ms_per_match": round(warm_ms, 2),
        "ratio_cold_vs_baseline": round(cold_ms / baseline_ms, 2),
        "ratio_warm_vs_baseline": round(warm_ms / baseline_ms, 2),
        "lexical_warm_ms_per_match_fresh_list": round(warm_list_ms, 2),
    }
    save_json(args.json_out, report)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"lexical executor on {args.size:,} capabilities, {len(queries)} queries")
        print(f"  baseline substring scan : {baseline_ms:9.2f} ms/match")
        print(
            f"  lexical cold (index)    : {cold_ms:9.2f} ms/match"
            f"  ({report['ratio_cold_vs_baseline']}x baseline)"
        )
        print(
            f"  lexical warm (cached)   : {warm_ms:9.2f} ms/match"
            f"  ({report['ratio_warm_vs_baseline']}x baseline)"
        )
        print(
            f"  warm, fresh list        : {warm_list_ms:9.2f} ms/match"
            f"  ({round(warm_list_ms / baseline_ms, 2)}x baseline)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
