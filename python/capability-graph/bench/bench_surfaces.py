"""Benchmark the outer surfaces against their baselines, side by side (docs/benchmarks.md).

    python bench/bench_surfaces.py [--runs 15] [--calls 300] [--json]

* CLI cold start: ``capability-graph describe`` on a small configuration (the ``init`` scaffold)
  vs ``python -c "import pydantic"``; target <= 1.3x (``tests/test_startup.py`` holds what a
  graph command imports).
* MCP initialize: spawn -> ``initialize`` answered, ``capability-graph mcp`` vs a bare low-level
  ``mcp`` server serving the same tool definitions and answering ``tools/call`` with the same
  payload (what ours answers for ``describe_graph``); target <= 1.1x.
* MCP tools/call round trip on a running server: ``describe_graph`` (and ``resolve_capabilities``)
  vs the bare server's answer of the same payload; target <= 1.15x.

Runs alternate between the subject and its baseline so that machine noise hits both alike; the
figures are medians. Both servers are spoken to in raw JSON-RPC lines over pipes by the same
minimal client, so client overhead is identical.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_core import json_out_option, save_json

BARE_SERVER = """\
import json, sys
import anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server

# The same tool definitions and the same describe_graph payload as `capability-graph mcp`
# answers with, read from argv[1], without a graph behind them.
with open(sys.argv[1], encoding="utf-8") as file:
    given = json.load(file)
TOOLS = [types.Tool.model_validate(tool) for tool in given["tools"]]
PAYLOAD, TEXT = given["payload"], given["text"]

async def on_list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)

async def on_call_tool(ctx, params):
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=TEXT)],
        structured_content=PAYLOAD,
    )

async def main():
    server = Server("bare", version="1", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def cli_command() -> list[str]:
    script = Path(sys.executable).parent / "capability-graph"
    if script.is_file():
        return [str(script)]
    found = shutil.which("capability-graph")
    return [found] if found else [sys.executable, "-m", "capability_graph.cli"]


def timed_run(argv: Sequence[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


class Server:
    """A server process spoken to in JSON-RPC lines."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._next = 1

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            message["params"] = params
        self._next += 1
        return self._exchange(message)

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def initialize(self) -> float:
        """Send initialize; the seconds from spawn to its answer."""
        answer = self._exchange(INITIALIZE)
        elapsed = time.perf_counter() - self.started
        assert "result" in answer, answer
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(INITIALIZED).encode() + b"\n")
        self.process.stdin.flush()
        return elapsed

    def close(self) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(30)
        self.process.stdout.close()


def served(argv: Sequence[str]) -> dict[str, Any]:
    """What the server at ``argv`` serves: its tool list and its describe_graph answer (the
    baseline serves exactly these, so that both sides encode the same bytes)."""
    server = Server(argv)
    try:
        server.initialize()
        tools = server.request("tools/list")["result"]["tools"]
        answer = server.request("tools/call", {"name": "describe_graph", "arguments": {}})
    finally:
        server.close()
    result = answer["result"]
    return {
        "tools": tools,
        "payload": result["structuredContent"],
        "text": result["content"][0]["text"],
    }


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def alternate(
    runs: int, first: Callable[[], float], second: Callable[[], float]
) -> tuple[list[float], list[float]]:
    a: list[float] = []
    b: list[float] = []
    first()
    second()  # warm the file system caches of both
    for _ in range(runs):
        a.append(first())
        b.append(second())
    return a, b


def round_trips(server: Server, calls: int, name: str, arguments: dict[str, Any]) -> list[float]:
    params = {"name": name, "arguments": arguments}
    for _ in range(20):  # warm up
        answer = server.request("tools/call", params)
        if "result" not in answer or answer["result"].get("isError"):
            raise RuntimeError(f"tools/call {name} failed: {answer}")
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        server.request("tools/call", params)
        times.append(time.perf_counter() - started)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="cold starts per subject")
    parser.add_argument("--calls", type=int, default=300, help="tools/call round trips")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    json_out_option(parser)
    args = parser.parse_args(argv)

    cli = cli_command()
    with tempfile.TemporaryDirectory(prefix="cg-bench-surfaces-") as directory:
        root = Path(directory)
        subprocess.run([*cli, "init", str(root / "graph")], check=True, stdout=subprocess.DEVNULL)
        config = str(root / "graph" / "capability-graph.json")
        mcp_argv = [*cli, "mcp", "--config", config]
        bare = root / "bare_server.py"
        bare.write_text(BARE_SERVER, encoding="utf-8")
        payload = root / "bare-payload.json"
        payload.write_text(json.dumps(served(mcp_argv)), encoding="utf-8")
        bare_argv = [sys.executable, str(bare), str(payload)]

        # 1. CLI cold start.
        cli_times, pydantic_times = alternate(
            args.runs,
            lambda: timed_run([*cli, "describe", "--config", config]),
            lambda: timed_run([sys.executable, "-c", "import pydantic"]),
        )

        # 2. MCP initialize (spawn -> answer).
        def initialize(argv: Sequence[str]) -> float:
            server = Server(argv)
            try:
                return server.initialize()
            finally:
                server.close()

        ours_init, bare_init = alternate(
            args.runs, lambda: initialize(mcp_argv), lambda: initialize(bare_argv)
        )

        # 3. tools/call round trips on running servers.
        ours = Server(mcp_argv)
        theirs = Server(bare_argv)
        try:
            ours.initialize()
            theirs.initialize()
            bare_calls = round_trips(theirs, args.calls, "describe_graph", {})
            describe_calls = round_trips(ours, args.calls, "describe_graph", {})
            resolve_calls = round_trips(
                ours, args.calls, "resolve_capabilities", {"ids": ["example::search"]}
            )
            bare_calls += round_trips(theirs, args.calls, "describe_graph", {})
        finally:
            ours.close()
            theirs.close()

    report = {
        "cli_cold_start_ms": median_ms(cli_times),
        "import_pydantic_ms": median_ms(pydantic_times),
        "cli_cold_start_ratio": median_ms(cli_times) / median_ms(pydantic_times),
        "mcp_initialize_ms": median_ms(ours_init),
        "bare_initialize_ms": median_ms(bare_init),
        "mcp_initialize_ratio": median_ms(ours_init) / median_ms(bare_init),
        "mcp_call_describe_ms": median_ms(describe_calls),
        "mcp_call_resolve_ms": median_ms(resolve_calls),
        "bare_call_ms": median_ms(bare_calls),
        "mcp_call_ratio": median_ms(describe_calls) / median_ms(bare_calls),
        "mcp_call_resolve_ratio": median_ms(resolve_calls) / median_ms(bare_calls),
        "targets": {
            "cli_cold_start_ratio": 1.3,
            "mcp_initialize_ratio": 1.1,
            "mcp_call_ratio": 1.15,
        },
    }
    save_json(args.json_out, report)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"surfaces ({args.runs} cold starts each, {args.calls} calls; medians, side by side)")
    print(
        f"  CLI describe cold start  : {report['cli_cold_start_ms']:8.1f} ms   "
        f"python -c 'import pydantic': {report['import_pydantic_ms']:7.1f} ms   "
        f"ratio {report['cli_cold_start_ratio']:.2f}x (target <= 1.3x)"
    )
    print(
        f"  MCP spawn -> initialize  : {report['mcp_initialize_ms']:8.1f} ms   "
        f"bare low-level server      : {report['bare_initialize_ms']:7.1f} ms   "
        f"ratio {report['mcp_initialize_ratio']:.2f}x (target <= 1.1x)"
    )
    print(
        f"  MCP tools/call describe  : {report['mcp_call_describe_ms']:8.3f} ms   "
        f"bare, same payload         : {report['bare_call_ms']:7.3f} ms   "
        f"ratio {report['mcp_call_ratio']:.2f}x (target <= 1.15x)"
    )
    print(
        f"  MCP tools/call resolve   : {report['mcp_call_resolve_ms']:8.3f} ms   "
        f"ratio {report['mcp_call_resolve_ratio']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
