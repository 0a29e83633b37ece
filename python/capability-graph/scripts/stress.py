"""The long versions of the reliability and security battery (the ``stress`` nox session).

Runs each section for ``--duration`` seconds (or ``--iterations`` cases) and prints its figures,
then the summary: bad inputs tried, faults survived, load held, data lost, and the peak memory of
rejecting 100 MB inputs. Exit status 1 when anything was wrong (a leak, an undefined error, a
crash, a hang, a lost or wrong answer, a process left behind).

From ``python/capability-graph/`` (the nox session runs it from the repository's root)::

    python scripts/stress.py                         # every section, 2000 cases each
    python scripts/stress.py --duration 120          # every section for two minutes
    python scripts/stress.py --sections fuzz,mcp --iterations 20000 --seed 7
    python scripts/stress.py --sections client_files --iterations 5000
    python scripts/stress.py --hostile               # include the triggers of known defects
    python scripts/stress.py --json figures.json     # also write the figures as JSON

The generators, checks and engines are the fast battery's (the ``capability_graph_testing``
package, python/capability-graph-testing), so a failure here reproduces there from its seed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from capability_graph import (
    BlockingCapabilityGraph,
    BlockingToolAdapter,
    CapabilityGraph,
    GraphError,
    ToolAdapter,
)
from capability_graph_testing import battery as bh
from capability_graph_testing.common import capability, inline, provider

SECTIONS = (
    "leakage",
    "fuzz",
    "mcp",
    "reload",
    "close",
    "memory",
    "client_files",
    "cursors",
    "frames",
    "twin",
    "ticker",
)


class Budget:
    """``--duration`` seconds if given, else ``--iterations`` cases."""

    def __init__(self, duration: float | None, iterations: int) -> None:
        self.duration = duration
        self.iterations = iterations
        self.started = time.monotonic()
        self.done = 0

    def __iter__(self) -> Iterator[int]:
        while True:
            if self.duration is not None:
                if time.monotonic() - self.started >= self.duration:
                    return
            elif self.done >= self.iterations:
                return
            yield self.done
            self.done += 1

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class Tally:
    """Counts, violations (a check failed) and crashes (something raised that must not)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.violations: list[str] = []
        self.crashes: Counter[str] = Counter()

    def check(self, what: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except AssertionError as problem:
            self.violations.append(f"{what}: {str(problem)[:300]}")

    def figures(self) -> dict[str, Any]:
        return {
            **dict(sorted(self.counts.items())),
            "violations": len(self.violations),
            "crashes": dict(self.crashes),
        }


def _print(section: str, figures: dict[str, Any]) -> None:
    print(f"== {section}", flush=True)
    for key, value in figures.items():
        print(f"  {key}: {value}", flush=True)


def _free_text(rng: random.Random) -> str:
    alphabet = "abcXYZ 0123-_/\\:.中文é\u202e\x07\t"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))


# --- leakage --------------------------------------------------------------------------------------


def leakage(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Executor faults through the SDK, the Tool Adapter and MCP (in memory); scripted faults
    through the CLI (in-process) every tenth case."""
    from mcp import Client

    from capability_graph._surfaces.mcp import build_server
    from capability_graph_testing.surfaces import wire

    rng = random.Random(args.seed)
    tally = Tally()
    executor = bh.FaultExecutor()
    config = bh.battery_graph(work / "leak")
    budget = Budget(args.duration, args.iterations)
    request = {"request": "find it"}

    async def main() -> None:
        graph = await CapabilityGraph.open(config, executor=executor)
        tools = ToolAdapter(graph)
        try:
            async with Client(build_server(graph), mode="legacy") as client:
                for number in budget:
                    hostile = bh.hostile_text(rng, _free_text(rng))
                    fault = bh.executor_fault(rng, hostile)
                    executor.fault = fault
                    tally.counts["executor_faults"] += 1
                    tally.counts[f"fault:{fault.kind}"] += 1
                    try:
                        await graph.call("match_capabilities", request)
                        tally.violations.append("sdk: a fault became a result")
                    except GraphError as error:
                        tally.check("sdk", functools.partial(_sdk, error, fault))
                    outcome = await tools.call("match_capabilities", request)
                    tally.check("tool", functools.partial(_tool, outcome, fault))
                    result = wire(await client.call_tool("match_capabilities", request))
                    tally.check("mcp", functools.partial(_mcp, result, fault))
                    if number % 10 == 0:  # run() starts its own event loop
                        await asyncio.to_thread(_cli_fault, rng, work, tally)
        finally:
            await graph.close()

    with _all_logs() as logs:
        asyncio.run(main())
    markers = [bh.SECRET, bh.PATH_MARK]

    def clean_logs() -> None:
        for text in logs:
            bh.assert_clean(text, markers)

    tally.check("logs", clean_logs)
    tally.counts["surfaces_checked"] = (
        tally.counts["executor_faults"] * 4 + tally.counts["cli_faults"] * 2
    )
    return {**tally.figures(), "seconds": round(budget.elapsed, 1), "_tally": tally}


def _sdk(error: GraphError, fault: bh.Fault) -> None:
    assert error.to_json() == fault.expected, (error.to_json(), fault.kind)
    bh.check_error(error.to_json(), phase="match")
    for text in bh.exception_texts(error):
        bh.assert_clean(text, fault.markers, traceback_ok=True)
    for cause in bh.chained(error):
        for text in bh.exception_texts(cause):
            bh.assert_clean(text, fault.markers, traceback_ok=True)


def _tool(outcome: dict[str, Any], fault: bh.Fault) -> None:
    assert outcome == {"ok": False, "error": fault.expected}, (outcome, fault.kind)
    bh.check_outcome(outcome, tool="match_capabilities")
    bh.assert_clean(json.dumps(outcome, ensure_ascii=False), fault.markers)


def _mcp(result: dict[str, Any], fault: bh.Fault) -> None:
    assert bh.check_mcp_result(result, tool="match_capabilities") == fault.expected
    bh.assert_clean(json.dumps(result, ensure_ascii=False), fault.markers)


def _cli_fault(rng: random.Random, work: Path, tally: Tally) -> None:
    free = _free_text(rng).replace("\x07", "")
    hostile = bh.hostile_text(rng, free, json_safe=True)
    step, expected = bh.scripted_fault(rng, hostile, free or "x")
    config = bh.battery_graph(work / "leak-cli", model={"executor": "scripted", "steps": [step]})
    status, stdout, stderr = bh.run_cli(["match", "find it", "--config", str(config)])
    tally.counts["cli_faults"] += 1

    def check() -> None:
        assert bh.check_cli_failure(status, stdout, stderr) == expected
        bh.assert_clean(stdout + stderr, hostile.markers)

    tally.check("cli", check)


@contextlib.contextmanager
def _all_logs() -> Iterator[list[str]]:
    import logging

    texts: list[str] = []

    class Records(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            texts.append(self.format(record))

    root = logging.getLogger()
    handler, level = Records(logging.DEBUG), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield texts
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


# --- fuzz -----------------------------------------------------------------------------------------

FUZZ_KINDS = (
    "request",
    "context",
    "config",
    "config-file",
    "inline-definition",
    "definition-file",
    "argv",
)


def fuzz(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Round robin over the input kinds; every case time-bounded and checked."""
    tally = Tally()
    directory = work / "fuzz"
    directory.mkdir()
    config = bh.battery_graph(directory, model=bh.QUICK_MODEL)
    budget = Budget(args.duration, args.iterations)
    slowest = 0.0
    avoid = frozenset() if args.hostile else bh.KNOWN_DEFECTS
    previous = os.getcwd()
    os.chdir(directory / "providers")
    saved_env = os.environ.pop("CAPABILITY_GRAPH_CONFIG", None)
    try:
        with BlockingCapabilityGraph.open(config) as graph:
            tools = BlockingToolAdapter(graph)
            for number in budget:
                rng = random.Random(args.seed * 1_000_003 + number)
                fuzzer = bh.Fuzzer(rng, avoid=avoid)
                kind = FUZZ_KINDS[number % len(FUZZ_KINDS)]
                case, check = _fuzz_case(kind, fuzzer, tools, directory, str(config))
                tally.counts[f"{kind}"] += 1
                try:
                    value, elapsed = bh.bounded(case)
                except BaseException as crash:
                    tally.crashes[f"{kind}:{type(crash).__name__}"] += 1
                    continue
                slowest = max(slowest, elapsed)
                tally.check(kind, functools.partial(check, value))
                tally.counts[f"outcome:{_outcome_code(value)}"] += 1
    finally:
        os.chdir(previous)
        if saved_env is not None:
            os.environ["CAPABILITY_GRAPH_CONFIG"] = saved_env
    figures = tally.figures()
    figures["bad_inputs"] = budget.done
    figures["slowest_case_s"] = round(slowest, 3)
    figures["seconds"] = round(budget.elapsed, 1)
    figures["_tally"] = tally
    return figures


def _outcome_code(value: Any) -> str:
    if isinstance(value, dict) and "ok" in value:
        return "ok" if value["ok"] else value["error"]["code"]
    if isinstance(value, dict) and "code" in value:
        return str(value["code"])
    if value is None:
        return "opened"
    if isinstance(value, tuple):
        return f"exit-{value[0]}"
    return "other"


def _fuzz_case(
    kind: str, fuzzer: bh.Fuzzer, tools: BlockingToolAdapter, directory: Path, config: str
) -> tuple[Callable[[], Any], Callable[[Any], object]]:
    rng = fuzzer.rng
    if kind == "request":
        tool = rng.choice(bh.TOOLS)
        arguments = fuzzer.request(tool)
        return (lambda: tools.call(tool, arguments)), (lambda o: bh.check_outcome(o, tool=tool))
    if kind == "context":
        request = {"request": "x", "context": fuzzer.context()}
        return (lambda: tools.call("match_capabilities", request)), (
            lambda o: bh.check_outcome(o, tool="match_capabilities")
        )
    if kind == "config":
        value = bh.with_base(fuzzer.config(directory), directory)
        return (lambda: bh.open_outcome(value)), bh.check_open_error
    if kind == "config-file":
        path = directory / "stress-config.json"
        json_fuzzer = bh.Fuzzer(rng, python_values=False, avoid=fuzzer.avoid)
        path.write_bytes(bh.dumps_or(json_fuzzer.config(directory), b"[" * 5000))
        return (lambda: bh.open_outcome(str(path))), bh.check_open_error
    if kind == "inline-definition":
        sources = [{"definition": fuzzer.definition()}, {"definition": provider("z")}]
        return (lambda: bh.open_outcome({"providers": sources})), bh.check_open_error
    if kind == "definition-file":
        (directory / "stress-definition.json").write_bytes(fuzzer.definition_bytes())
        holder = directory / "stress-definition-config.json"
        holder.write_text(
            json.dumps(
                {"providers": [{"path": "stress-definition.json"}, {"definition": provider("z")}]}
            ),
            encoding="utf-8",
        )
        return (lambda: bh.open_outcome(str(holder))), bh.check_open_error
    argv = fuzzer.argv(config, others=[str(directory)])
    return (lambda: bh.run_cli(argv)), (lambda run: bh.check_cli_run(argv, *run))


# --- MCP frames -----------------------------------------------------------------------------------


def mcp(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Garbage frames to one server process, each followed by a probe that must be answered."""
    directory = work / "mcp"
    directory.mkdir()
    config = bh.battery_graph(directory, model=bh.QUICK_MODEL)
    avoid = frozenset() if args.hostile else bh.KNOWN_DEFECTS
    budget = Budget(args.duration, args.iterations)
    server = bh.RawServer(config)
    server.initialize()

    def frames() -> Iterator[bytes]:
        for number in budget:
            yield bh.Fuzzer(
                random.Random(args.seed * 7919 + number), python_values=False, avoid=avoid
            ).frame()

    try:
        stats = bh.fuzz_frames(server, frames())
    finally:
        status = server.close()
    tally = Tally()
    tally.violations += stats.violations
    if status != 0:
        tally.violations.append(f"the server exited {status}")
    if b"Traceback" in server.stderr:
        tally.violations.append("a traceback on the server's stderr")
    return {
        **stats.figures(),
        "exit_status": status,
        "seconds": round(budget.elapsed, 1),
        "_tally": tally,
    }


# --- reload storms --------------------------------------------------------------------------------


def reload(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Queries from many tasks (and threads) while reloads alternate valid and invalid."""
    tally = Tally()
    reloads = max(2, args.iterations // 10)
    if args.duration is not None:
        storm = asyncio.run(
            bh.reload_storm_async(
                work / "reload-async",
                reloads=0,
                queriers=args.queriers,
                seed=args.seed,
                duration_s=args.duration * 0.7,
            )
        )
    else:
        storm = asyncio.run(
            bh.reload_storm_async(
                work / "reload-async", reloads=reloads, queriers=args.queriers, seed=args.seed
            )
        )
    threads = bh.reload_storm_threads(
        work / "reload-threads", reloads=max(2, reloads // 3), threads=8, seed=args.seed
    )
    tally.violations += storm.violations + threads.violations
    return {
        "async": storm.figures(),
        "threads": threads.figures(),
        "queriers": args.queriers,
        "_tally": tally,
    }


# --- close storms ---------------------------------------------------------------------------------


def close(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Rounds of close storms: cancellable executors, stubborn ones, the blocking twin, and codex
    process trees (a fake ``codex`` that spawns a child and ignores SIGTERM)."""
    tally = Tally()
    budget = Budget(args.duration, max(1, args.iterations // 500))
    config = inline(provider("acme", capability("a")))
    worst = codex_worst = 0.0
    rounds: Counter[str] = Counter()
    for _ in budget:
        for name, executor, matches in (
            ("sleeper", bh.Sleeper(60), args.matches),
            ("stubborn", bh.Stubborn(), max(1, args.matches // 10)),
        ):
            stats = asyncio.run(
                bh.close_storm_async(
                    config,
                    executor,
                    matches=matches,
                    entered=functools.partial(getattr, executor, "entered"),
                )
            )
            rounds[f"{name}_matches_rejected"] += stats.closed
            worst = max(worst, stats.close_to_last_rejection_s)
            if stats.closed != matches or stats.late_results or stats.other or stats.leftover_tasks:
                tally.violations.append(f"{name}: {stats.figures()}")
        rejected, elapsed = _blocking_storm(config, 50)
        rounds["blocking_twin_threads_rejected"] += rejected
        worst = max(worst, elapsed)
        if rejected != 50:
            tally.violations.append(f"blocking twin: {rejected}/50 rejected")
        killed, elapsed, problems = _codex_storm(work, args.codex)
        rounds["codex_processes_killed"] += killed
        codex_worst = max(codex_worst, elapsed)
        tally.violations += problems
    if bh.descendants():
        tally.violations.append(f"processes left: {bh.descendants()}")
    return {
        "rounds": budget.done,
        **dict(rounds),
        "worst_close_to_last_rejection_s": round(worst, 3),
        "codex_worst_close_to_last_rejection_s": round(codex_worst, 3),
        "_tally": tally,
    }


def _blocking_storm(config: Any, threads: int) -> tuple[int, float]:
    executor = bh.Sleeper(60)
    graph = BlockingCapabilityGraph.open(config, executor=executor)
    outcomes: list[Any] = []
    ended: list[float] = []

    def worker() -> None:
        try:
            graph.match(request="x")
            outcomes.append("result")
        except GraphError as error:
            outcomes.append(error.to_json())
        except BaseException as error:
            outcomes.append(repr(error))
        ended.append(time.monotonic())

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    deadline = time.monotonic() + 60
    while executor.entered < threads and time.monotonic() < deadline:
        time.sleep(0.01)
    closing = time.monotonic()
    graph.close()
    for thread in workers:
        thread.join(60)
    return outcomes.count(bh.CLOSED), max(ended, default=closing) - closing


def _codex_storm(work: Path, matches: int) -> tuple[int, float, list[str]]:
    folder = Path(tempfile.mkdtemp(dir=work, prefix="codex-"))
    codex = bh.ShCodex.install(folder, sleep_s=120, ignore_term=True)
    saved = os.environ["PATH"]
    os.environ["PATH"] = codex.path_env()
    problems: list[str] = []
    try:
        config = {
            **inline(provider("acme", capability("a"))),
            "model": {"executor": "codex", "timeoutMs": 600_000},
        }

        async def main() -> tuple[list[Any], float]:
            graph = await CapabilityGraph.open(config)
            tasks = [
                asyncio.ensure_future(graph.call("match_capabilities", {"request": "x"}))
                for _ in range(matches)
            ]
            deadline = time.monotonic() + 120
            while codex.started() < matches and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            closing = time.monotonic()
            await graph.close()
            outcomes = await asyncio.gather(*tasks, return_exceptions=True)
            return outcomes, time.monotonic() - closing

        outcomes, elapsed = asyncio.run(main())
    finally:
        os.environ["PATH"] = saved
    closed = sum(isinstance(o, GraphError) and o.to_json() == bh.CLOSED for o in outcomes)
    if closed != matches:
        problems.append(f"codex: {closed}/{matches} CG_GRAPH_CLOSED")
    pids = codex.pids()
    alive = bh.wait_dead(pids, 0.5)
    if alive:
        problems.append(f"codex: processes alive after close: {alive}")
    if codex.finished():
        problems.append("codex: a run completed after close")
    shutil.rmtree(folder, ignore_errors=True)
    return len(pids) - len(alive), elapsed, problems


# --- memory ---------------------------------------------------------------------------------------


def memory(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Peak RSS growth of rejecting ``--size-mb`` inputs (child processes), and of an MCP server
    receiving a request of that size."""
    directory = work / "memory"
    directory.mkdir()
    figures = bh.memory_probe(directory, list(bh.SCENARIOS), args.size_mb)
    figures["mcp-frame"] = _mcp_frame_memory(directory, args.size_mb)
    for big in directory.glob("big-*.json"):
        big.unlink()
    tally = Tally()
    for name in ("definition-file", "config-file", "document"):
        if figures[name]["ratio"] > 0.05:
            tally.violations.append(f"{name}: {figures[name]}")
    return {**figures, "_tally": tally}


def _status_mb(pid: int, key: str) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise LookupError(key)


def _mcp_frame_memory(directory: Path, size_mb: int) -> dict[str, Any]:
    server = bh.RawServer(bh.battery_graph(directory, model=bh.QUICK_MODEL))
    try:
        server.initialize()
        call: dict[str, Any] = {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {"name": "match_capabilities"},
        }
        server.send(
            {**call, "id": 1, "params": {**call["params"], "arguments": {"request": "warm"}}}
        )
        server.lines.get(timeout=60)
        pid = server.process.pid
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
        before = _status_mb(pid, "VmRSS")
        started = time.monotonic()
        big = {
            **call,
            "id": 2,
            "params": {**call["params"], "arguments": {"request": "x" * (size_mb * bh.MB)}},
        }
        server.send(big)
        answer = json.loads(server.lines.get(timeout=600))
        elapsed = time.monotonic() - started
        growth = _status_mb(pid, "VmHWM") - before
        code = json.loads(answer["result"]["content"][0]["text"]).get("code", "ok")
    finally:
        server.close()
    return {
        "outcome": code,
        "input_mb": size_mb,
        "peak_growth_mb": round(growth, 1),
        "ratio": round(growth / size_mb, 3),
        "seconds": round(elapsed, 3),
    }


# --- forged cursors on every surface -------------------------------------------------------------


def cursors(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Forged cursors through the SDK, the Tool Adapter, MCP over stdio and the CLI: each must be
    exactly CG_INPUT_INVALID/query/fix_input on all four, and the same object on all four."""
    from capability_graph_testing import reliability as rh
    from capability_graph_testing.surfaces import INITIALIZE, INITIALIZED, RawMcp, write_graph

    directory = work / "cursors"
    directory.mkdir()
    config = write_graph(directory)
    rng = random.Random(args.seed)
    tally = Tally()
    budget = Budget(args.duration, max(1, args.iterations // 4))
    server = RawMcp(config)
    server.send(INITIALIZE)
    server.receive(timeout=60)
    server.send(INITIALIZED)
    try:
        with BlockingCapabilityGraph.open(config) as graph:
            tools = BlockingToolAdapter(graph)
            first = graph.call("list_capabilities", {"limit": 1})
            filters = _no_filters_key()
            for number in budget:
                cursor = rh.forge_cursor(rng, first["revision"], first["nextCursor"], filters)
                arguments = {"limit": 1, "cursor": cursor}
                seen: dict[str, Any] = {}
                try:
                    seen["sdk"] = graph.call("list_capabilities", arguments)
                except GraphError as error:
                    seen["sdk"] = error.to_json()
                outcome = tools.call("list_capabilities", arguments)
                seen["tool"] = outcome.get("error", outcome)
                server.send(
                    {
                        "jsonrpc": "2.0",
                        "id": number,
                        "method": "tools/call",
                        "params": {"name": "list_capabilities", "arguments": arguments},
                    }
                )
                answer = server.receive(timeout=60)["result"]
                seen["mcp"] = (
                    json.loads(answer["content"][0]["text"]) if answer.get("isError") else answer
                )
                status, _, stderr = bh.run_cli(
                    ["list", "--limit", "1", f"--cursor={cursor}", "--config", str(config)]
                )
                seen["cli"] = json.loads(stderr)["error"] if status == 1 else {"exit": status}
                tally.counts["forged_cursors"] += 1
                tally.counts["surface_checks"] += len(seen)
                for surface, value in seen.items():
                    if (value.get("code"), value.get("phase"), value.get("nextAction")) != (
                        "CG_INPUT_INVALID",
                        "query",
                        "fix_input",
                    ):
                        tally.violations.append(f"{surface} accepted {cursor[:60]!r}: {value}")
                if len({json.dumps(v, sort_keys=True) for v in seen.values()}) != 1:
                    tally.violations.append(f"surfaces disagree on {cursor[:60]!r}")
                if seen["sdk"].get("message", "").startswith("Cursor"):
                    tally.counts["registry_cursor_message"] += 1
    finally:
        status, stderr = server.close()
    if status != 0 or b"Traceback" in stderr:
        tally.violations.append(f"the MCP server exited {status}")
    return {**tally.figures(), "seconds": round(budget.elapsed, 1), "_tally": tally}


def _no_filters_key() -> str:
    from capability_graph._core.cursor import filter_key

    return filter_key({"providers": None, "tags": []})


# --- request frames with duplicate names and unconvertible integers -------------------------------


def frames(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """tools/call frames whose arguments hold a duplicate member name or an integer of more
    digits than the runtime converts: every one answered, exactly once, with CG_INPUT_INVALID."""
    from capability_graph_testing.surfaces import INITIALIZE, INITIALIZED, RawMcp, write_graph

    directory = work / "frames"
    directory.mkdir()
    rng = random.Random(args.seed)
    tally = Tally()
    budget = Budget(args.duration, max(1, args.iterations // 4))
    server = RawMcp(write_graph(directory))
    server.send(INITIALIZE)
    server.receive(timeout=60)
    server.send(INITIALIZED)
    try:
        for number in budget:
            name = rng.choice(["limit", "tags", "providers", "x", "cursor"])
            if rng.random() < 0.5:
                arguments = f'{{"{name}": 1, "other": [1, {{"k": 2}}], "{name}": 2}}'
                kind = "duplicate"
            else:
                digits = rng.randint(4301, 20_000)
                arguments = f'{{"{name}": [{"-" if rng.random() < 0.5 else ""}{"7" * digits}]}}'
                kind = "huge_integer"
            frame = (
                f'{{"jsonrpc": "2.0", "id": {number}, "method": "tools/call", '
                f'"params": {{"name": "list_capabilities", "arguments": {arguments}}}}}'
            )
            server.send(frame.encode())
            tally.counts[f"{kind}_frames"] += 1
            try:
                answer = server.receive(timeout=60)
            except Exception:
                tally.violations.append(f"no answer to a {kind} frame")
                continue
            result = answer.get("result", {})
            error = json.loads(result["content"][0]["text"]) if result.get("isError") else None
            if answer.get("id") != number or error is None or error["code"] != "CG_INPUT_INVALID":
                tally.violations.append(f"{kind}: {str(answer)[:200]}")
            else:
                tally.counts["answered_input_invalid"] += 1
    finally:
        status, stderr = server.close()
    if status != 0 or b"Traceback" in stderr:
        tally.violations.append(f"the MCP server exited {status}")
    return {**tally.figures(), "seconds": round(budget.elapsed, 1), "_tally": tally}


# --- the blocking twin: close, reload and queries from many threads -------------------------------


def twin(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Rounds of 8 threads closing (twice each) while 8 threads reload, list, match, describe."""
    from capability_graph_testing import reliability as rh

    config = {
        **inline(provider("acme", *(capability(f"c{n}") for n in range(40)))),
        "model": {"executor": "lexical"},
    }
    tally = Tally()
    budget = Budget(args.duration, max(1, args.iterations // 100))
    total = rh.TwinStorm()
    for _ in budget:
        storm = rh.twin_storm(config, rounds=1, closers=8, workers=8)
        total.rounds += storm.rounds
        total.calls.update(storm.calls)
        total.wrong += storm.wrong
        total.hung += storm.hung
        total.loops_open += storm.loops_open
        total.worst_close_s = max(total.worst_close_s, storm.worst_close_s)
        total.threads_left = max(total.threads_left, storm.threads_left)
    tally.violations += total.wrong
    if total.hung or total.loops_open or total.threads_left:
        tally.violations.append(f"left behind: {total.figures()}")
    if set(total.calls) - {"result", "CG_GRAPH_CLOSED"}:
        tally.violations.append(f"unexpected outcomes: {dict(total.calls)}")
    return {**total.figures(), "_tally": tally}


# --- a ticker on the event loop while each executor works -----------------------------------------


def ticker(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Per executor: the longest event-loop stall and the lateness past a 100 ms deadline, over
    several matches on one graph (the first includes one-time preparation)."""
    from capability_graph_testing import reliability as rh

    tally = Tally()
    figures: dict[str, Any] = {}
    matches = max(2, min(10, args.iterations // 200))
    for kind in rh.TICKER_KINDS:
        folder = work / f"ticker-{kind}"
        folder.mkdir()
        with rh.hanging_match(kind, folder) as config:
            runs = asyncio.run(rh.tick_through_matches(config, timeout_ms=100, matches=matches))
        stalls = [run.max_stall_s * 1000 for run in runs]
        figures[kind] = {
            "matches": len(runs),
            "max_stall_ms": round(max(stalls), 1),
            "max_late_ms": round(max(run.elapsed_s * 1000 - 100 for run in runs), 1),
            "stalls_over_50ms": sum(stall > 50 for stall in stalls),
        }
        for run in runs:
            if not isinstance(run.outcome, dict) or run.outcome.get("code") != "CG_MODEL_TIMEOUT":
                tally.violations.append(f"{kind}: {run.outcome}")
    figures["stalls_over_50ms"] = sum(f["stalls_over_50ms"] for f in figures.values())
    return {**figures, "_tally": tally}


# --- the summary ----------------------------------------------------------------------------------


def summary(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    fuzzed = results.get("fuzz", {})
    frames = results.get("mcp", {})
    leak = results.get("leakage", {})
    out["bad inputs tried"] = {
        "fuzzed requests, contexts, configs, definitions, argv": fuzzed.get("bad_inputs", 0),
        "garbage MCP frames": frames.get("garbage_frames", 0),
        "hostile executor faults": leak.get("executor_faults", 0),
        "hostile scripted faults (CLI)": leak.get("cli_faults", 0),
    }
    storm = results.get("reload", {})
    closing = results.get("close", {})
    forged = results.get("cursors", {})
    rejected_frames = results.get("frames", {})
    out["bad inputs tried"]["forged cursors (x4 surfaces)"] = forged.get("forged_cursors", 0)
    out["bad inputs tried"]["frames with duplicate names or huge integers"] = rejected_frames.get(
        "duplicate_frames", 0
    ) + rejected_frames.get("huge_integer_frames", 0)
    out["faults survived"] = {
        "executor faults projected": leak.get("executor_faults", 0) + leak.get("cli_faults", 0),
        "invalid reloads refused": storm.get("async", {}).get("reloads_failed", 0)
        + storm.get("threads", {}).get("reloads_failed", 0),
        "garbage frames answered after": frames.get("probes_answered", 0),
        "codex process trees killed (processes)": closing.get("codex_processes_killed", 0),
    }
    out["load held"] = {
        "queries during reloads": storm.get("async", {}).get("queries", 0)
        + storm.get("threads", {}).get("queries", 0),
        "queries per second (async)": storm.get("async", {}).get("queries_per_s", 0),
        "distinct snapshots served": storm.get("async", {}).get("distinct_revisions_seen", 0),
        "matches rejected by close": closing.get("sleeper_matches_rejected", 0)
        + closing.get("stubborn_matches_rejected", 0)
        + closing.get("blocking_twin_threads_rejected", 0),
        "worst close -> last rejection (s)": closing.get("worst_close_to_last_rejection_s", 0),
        "worst close -> last rejection, codex trees (s)": closing.get(
            "codex_worst_close_to_last_rejection_s", 0
        ),
        "twin storm rounds (8 closers + 8 callers)": results.get("twin", {}).get("rounds", 0),
        "twin storm worst close (s)": results.get("twin", {}).get("worst_close_s", 0),
        "threads left after twin storms": results.get("twin", {}).get("threads_left", 0),
        "event-loop stalls over 50 ms (all executors)": results.get("ticker", {}).get(
            "stalls_over_50ms", 0
        ),
    }

    def count(section: str) -> int:
        tally = results.get(section, {}).get("_tally")
        return 0 if tally is None else len(tally.violations) + sum(tally.crashes.values())

    unanswered = frames.get("garbage_frames", 0) - frames.get("probes_answered", 0)
    out["data lost"] = {
        "wrong or mixed-snapshot answers, failed-valid or published-invalid reloads": count(
            "reload"
        ),
        "matches not rejected, late results, processes left": count("close"),
        "probes unanswered after a garbage frame": unanswered,
    }
    out["problems"] = {
        "forged cursors accepted or surfaces disagreeing": count("cursors"),
        "rejected frames unanswered or misanswered": count("frames"),
        "twin storm wrong endings, hangs, threads or loops left": count("twin"),
        "matches not ended by their deadline (ticker)": count("ticker"),
        "leaks": count("leakage"),
        "undefined errors, crashes, hangs": count("fuzz") + count("mcp") - unanswered,
        "resource bounds exceeded (file inputs)": count("memory"),
        "client files damaged, wrong edits, crashes (mcp-install)": count("client_files"),
    }
    if "memory" in results:
        out["peak memory growth rejecting inputs (MB / ratio to input)"] = {
            name: f"{value['peak_growth_mb']} MB / {value['ratio']} "
            f"({value['outcome']}, {value['input_mb']} MB)"
            for name, value in results["memory"].items()
            if isinstance(value, dict) and "ratio" in value
        }
    return out


# --- client files (mcp-install, mcp-uninstall) ---------------------------------------------------

_CLIENT_FILE_ROUND = 25  # Hypothesis examples per round; rounds alternate between the formats


def client_files(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """mcp-install and mcp-uninstall on client files generated from the formats' grammars (the
    fast battery's generators and checks): a correct edit, or a failed report with the file
    byte-identical; never exit 70."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    from capability_graph_testing import client_files as cf

    tally = Tally()
    directory = work / "client-files"
    directory.mkdir()
    config = cf.write_served_graph(directory)
    kinds: dict[str, tuple[Any, Callable[[Path, Path, Any], str]]] = {
        "json": (cf.json_case("cursor", config), functools.partial(_json_case, cf, "cursor")),
        "jsonc": (cf.json_case("vscode", config), functools.partial(_json_case, cf, "vscode")),
        "damaged-json": (cf.damaged_json(config), cf.check_damaged_json_case),
        "toml": (cf.client_toml(config), cf.check_toml_case),
    }
    names = list(kinds)
    budget = Budget(args.duration, max(1, args.iterations // _CLIENT_FILE_ROUND))
    for number in budget:
        kind = names[number % len(names)]
        strategy, check = kinds[kind]
        case = _client_file_case(tally, directory, config, kind, check)
        configured = settings(
            max_examples=_CLIENT_FILE_ROUND,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        runner = configured(seed(args.seed * 1_000_003 + number)(given(strategy)(case)))
        try:
            runner()
        except AssertionError as problem:
            tally.violations.append(f"{kind}: {str(problem)[:300]}")
        except Exception as crash:
            tally.crashes[f"{kind}:{type(crash).__name__}"] += 1
    figures = tally.figures()
    figures["client_files_tried"] = sum(tally.counts.values())
    figures["seconds"] = round(budget.elapsed, 1)
    figures["_tally"] = tally
    return figures


def _client_file_case(
    tally: Tally,
    directory: Path,
    config: Path,
    kind: str,
    check: Callable[[Path, Path, Any], str],
) -> Callable[[Any], None]:
    """One case as Hypothesis runs it: a fresh folder, the check, its outcome counted."""

    def case(value: Any) -> None:
        folder = Path(tempfile.mkdtemp(dir=directory))
        try:
            tally.counts[f"{kind}: {check(folder, config, value)}"] += 1
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return case


def _json_case(cf: Any, client: str, folder: Path, config: Path, text: str) -> str:
    return str(cf.check_json_case(folder, config, client, text))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--duration", type=float, help="seconds per section (default: --iterations)"
    )
    parser.add_argument("--iterations", type=int, default=2000, help="cases per section")
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size-mb", type=int, default=100, help="input size of the memory probe")
    parser.add_argument("--matches", type=int, default=1000, help="matches per close storm")
    parser.add_argument("--codex", type=int, default=16, help="codex matches per close storm")
    parser.add_argument("--queriers", type=int, default=32, help="querying tasks per reload storm")
    parser.add_argument("--hostile", action="store_true", help="include known-defect triggers")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.size_mb < 2:
        parser.error("--size-mb must be at least 2 (the file budgets of the probe are 1 MiB)")
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections: {', '.join(unknown)}")
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="cg-stress-") as temporary:
        work = Path(temporary)
        for section in chosen:
            started = time.monotonic()
            results[section] = globals()[section](args, work)
            shown = {k: v for k, v in results[section].items() if k != "_tally"}
            shown["section_seconds"] = round(time.monotonic() - started, 1)
            _print(section, shown)
            for problem in results[section]["_tally"].violations[:20]:
                print(f"  ! {problem}", flush=True)
    figures = summary(results)
    print("== summary", flush=True)
    for heading, values in figures.items():
        print(f"  {heading}:")
        for key, value in values.items():
            print(f"    {key}: {value}")
    if args.json:
        clean = {s: {k: v for k, v in r.items() if k != "_tally"} for s, r in results.items()}
        Path(args.json).write_text(
            json.dumps({"sections": clean, "summary": figures}, indent=2), encoding="utf-8"
        )
    bad = sum(figures["data lost"].values()) + sum(figures["problems"].values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
