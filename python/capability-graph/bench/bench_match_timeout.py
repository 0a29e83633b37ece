"""How long after the deadline does ``run_match`` raise ``CG_MODEL_TIMEOUT``?

For each executor kind the executor hangs past a short deadline; the latency is the time from
``job.deadline`` to the moment the error reaches the caller, *including* stopping the executor
(cancelling its task, killing a subprocess tree, closing an HTTP connection). Prints p50 / p95 /
max in milliseconds over N runs.

    python bench/bench_match_timeout.py [--runs 50] [--deadline-ms 100] [--json]

Kinds: ``scripted`` (an asyncio sleep), ``lexical`` (a cold 40k-entry index being built in
slices on the event loop), ``openai`` (a loopback server that never answers), ``codex`` (a fake
``codex`` on PATH that sleeps with a child process; TERM honoured).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_core import json_out_option, save_json

from capability_graph._core.errors import GraphError
from capability_graph._core.executors import build_executor
from capability_graph._core.executors.job import MatchJob
from capability_graph._core.match import run_match
from capability_graph_testing.chat_server import ChatServer, Reply, completion
from capability_graph_testing.fake_codex import install_fake_codex, path_with


def catalog(size: int) -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "id": f"p::c{i}",
            "providerId": "p",
            "name": f"capability {i}",
            "description": f"does thing {i % 97} with item {i}",
            "tags": [f"t{i % 13}"],
        }
        for i in range(size)
    )


async def one(executor: Any, entries: Any, deadline_s: float) -> float:
    job = MatchJob(
        request="thing item",
        context={},
        catalog=entries,
        limit=5,
        deadline=time.monotonic() + deadline_s,
    )
    try:
        await run_match(executor, job, cancel=None, max_output_bytes=65536)
    except GraphError as error:
        code = error.code
        late_ms = (time.monotonic() - job.deadline) * 1000
    else:
        raise AssertionError("no timeout")
    if code != "CG_MODEL_TIMEOUT":
        raise AssertionError(code)
    return late_ms


def measure(kind: str, runs: int, deadline_s: float) -> list[float]:
    small = catalog(3)
    if kind == "scripted":
        model = {"executor": "scripted", "steps": [{"sleepMs": 60_000, "then": {"return": {}}}]}
        return [asyncio.run(one(build_executor(model), small, deadline_s)) for _ in range(runs)]
    if kind == "lexical":
        results = []
        for i in range(runs):
            big = catalog(40_000 + i)  # a new catalog each run: always a cold index
            results.append(
                asyncio.run(one(build_executor({"executor": "lexical"}), big, deadline_s))
            )
        return results
    if kind == "openai":
        os.environ["CG_BENCH_KEY"] = "bench"
        with ChatServer(Reply(body=completion("{}"), delay_s=30)) as server:
            model = {
                "executor": "openai",
                "baseUrl": server.url,
                "model": "m",
                "apiKeyEnv": "CG_BENCH_KEY",
            }
            executor = build_executor(model)
            asyncio.run(one(executor, small, deadline_s))  # warm: the SDK import is done once
            return [asyncio.run(one(executor, small, deadline_s)) for _ in range(runs)]
    if kind == "codex":
        with tempfile.TemporaryDirectory() as folder:
            fake = install_fake_codex(Path(folder))
            fake.behave(exec={"sleep": 60, "child": True, "last_message": "{}"})
            old_path = os.environ.get("PATH", "")
            os.environ["PATH"] = path_with(fake.folder)
            try:
                executor = build_executor({"executor": "codex"})
                # the deadline covers the prerequisite probes on the first run only
                asyncio.run(one(executor, small, 2.0))
                return [asyncio.run(one(executor, small, deadline_s)) for _ in range(runs)]
            finally:
                os.environ["PATH"] = old_path
    raise ValueError(kind)


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 2),
        "max_ms": round(ordered[-1], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--deadline-ms", type=int, default=100)
    parser.add_argument("--kinds", default="scripted,lexical,openai,codex")
    parser.add_argument("--json", action="store_true")
    json_out_option(parser)
    args = parser.parse_args(argv)
    report = {}
    for kind in args.kinds.split(","):
        runs = max(3, args.runs // 5) if kind in ("lexical", "codex") else args.runs
        report[kind] = {"runs": runs, **summary(measure(kind, runs, args.deadline_ms / 1000))}
    save_json(args.json_out, report)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"CG_MODEL_TIMEOUT latency after a {args.deadline_ms} ms deadline")
        for kind, row in report.items():
            print(
                f"  {kind:9} runs={row['runs']:3}  p50={row['p50_ms']:7.2f} ms"
                f"  p95={row['p95_ms']:7.2f} ms  max={row['max_ms']:7.2f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
