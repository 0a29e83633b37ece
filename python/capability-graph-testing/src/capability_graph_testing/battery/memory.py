"""The memory probe: a child process that measures its own peak RSS around one rejection.

Oversized inputs (definition and configuration files, a document, an SDK request, a CLI
arguments file, inline definitions) must be refused without holding a multiple of their size in
memory: per scenario, the outcome, the input size, the peak RSS growth and the time.
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from capability_graph_testing.common import capability, provider

MB = 1 << 20


def write_big_file(
    path: Path, size: int, *, prefix: bytes = b'{"request": "', suffix: bytes = b'"}'
) -> Path:
    """A ``size``-byte file of real content (not sparse): JSON text around a long string."""
    chunk = b"x" * MB
    with open(path, "wb") as handle:
        handle.write(prefix)
        remaining = size - len(prefix) - len(suffix)
        while remaining > 0:
            handle.write(chunk[: min(remaining, MB)])
            remaining -= MB
        handle.write(suffix)
    return path


SCENARIOS = (
    "definition-file",
    "config-file",
    "document",
    "sdk-request",
    "cli-arguments-file",
    "inline-long-string",
    "inline-over-max-capabilities",
)


def memory_probe(
    workdir: Path, scenarios: Sequence[str], size_mb: int, *, timeout_s: float = 600
) -> dict[str, dict[str, Any]]:
    """Run the scenarios in one child process; per scenario: the outcome, the input size, the
    peak RSS growth during the call (``/proc/self/clear_refs`` + ``VmHWM``) and the time."""
    probe = "import sys, capability_graph_testing.battery.memory as m; m._probe_main(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", probe, str(workdir), str(size_mb), *scenarios],
        capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results: dict[str, dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    return results


def _status_bytes(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise LookupError(key)


def _measure(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    import gc

    gc.collect()
    with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
        refs.write("5")  # reset the peak RSS (VmHWM) to the current RSS
    before = _status_bytes("VmRSS")
    started = time.monotonic()
    outcome = fn()
    elapsed = time.monotonic() - started
    return outcome, (_status_bytes("VmHWM") - before) / MB, elapsed


class _Probe:
    """The scenarios of the memory probe. Each ``prepare_*`` builds what the *caller* holds
    (allocated before the measurement); each ``run_*`` is the measured call."""

    def __init__(self, workdir: Path, size_mb: int) -> None:
        import io

        self.io = io
        self.workdir = workdir
        self.size_mb = size_mb
        self.size = size_mb * MB
        self.small = {
            "providers": [{"definition": provider("acme", capability("a"))}],
            "model": {"executor": "scripted", "steps": []},
        }
        self.small_file = workdir / "small.json"
        self.small_file.write_text(json.dumps(self.small), encoding="utf-8")
        self.big_file = workdir / f"big-{size_mb}.json"
        if not self.big_file.exists() or self.big_file.stat().st_size != self.size:
            write_big_file(self.big_file, self.size)

    @staticmethod
    def outcome(coroutine: Any) -> str:
        from capability_graph import GraphError

        try:
            asyncio.run(coroutine)
        except GraphError as error:
            return error.code.value
        return "ok"

    @staticmethod
    async def call(config: Any, tool: str, arguments: Any) -> None:
        from capability_graph import CapabilityGraph

        graph = await CapabilityGraph.open(config)
        try:
            await graph.call(tool, arguments)
        finally:
            await graph.close()

    @staticmethod
    async def open(config: Any) -> None:
        from capability_graph import CapabilityGraph

        await (await CapabilityGraph.open(config)).close()

    def cli(self, *argv: str) -> str:
        from capability_graph.cli import run

        out, err = self.io.StringIO(), self.io.StringIO()
        status = run(list(argv), self.io.StringIO(), out, err)
        lines = err.getvalue().strip().splitlines()
        last = lines[-1] if lines else ""
        code = json.loads(last)["error"]["code"] if last.startswith("{") else "usage"
        return f"exit {status} {code}"

    def warm_up(self) -> None:
        self.outcome(self.call(self.small, "match_capabilities", {"request": "warm"}))
        self.outcome(self.call(self.small, "match_capabilities", {"request": 5}))
        self.outcome(self.open({"providers": [{"path": str(self.small_file)}]}))
        self.cli("describe", "--config", str(self.small_file))

    def prepare(self, scenario: str) -> tuple[Any, int]:
        """The caller's in-memory input (or None) and the input's size in bytes."""
        if scenario == "sdk-request":
            return {"request": "x" * self.size}, self.size
        if scenario == "inline-long-string":
            definition = provider("acme", capability("a", description="x" * self.size))
            return {"providers": [{"definition": definition}]}, self.size
        if scenario == "inline-over-max-capabilities":
            capabilities = [
                capability(f"c{i}", description=f"Capability number {i} of a large provider.")
                for i in range(max(1, self.size // 100))
            ]
            config = {
                "providers": [{"definition": provider("acme", *capabilities)}],
                "budgets": {"maxCapabilities": 1000},
            }
            return config, len(json.dumps(config))
        return None, self.size

    def run(self, scenario: str, held: Any) -> str:
        big = str(self.big_file)
        if scenario == "definition-file":  # (budgets of 1 MiB: any --size-mb >= 2 is over)
            budgets = {"maxDefinitionBytes": MB}
            return self.outcome(self.open({"providers": [{"path": big}], "budgets": budgets}))
        if scenario == "config-file":
            return self.outcome(self.open(big))
        if scenario == "document":
            documents = [{"id": "big", "title": "Big", "path": self.big_file.name}]
            config = {
                "providers": [
                    {
                        "definition": provider("acme", capability("a", documents=documents)),
                        "documentRoot": str(self.workdir),
                    }
                ]
            }
            read = {"capabilityId": "acme::a", "documentId": "big"}
            return self.outcome(self.call(config, "read_document", read))
        if scenario == "sdk-request":
            return self.outcome(self.call(self.small, "match_capabilities", held))
        if scenario == "cli-arguments-file":
            small = str(self.small_file)
            return self.cli(
                "call", "match_capabilities", "--arguments-file", big, "--config", small
            )
        if scenario in ("inline-long-string", "inline-over-max-capabilities"):
            return self.outcome(self.open(held))
        raise ValueError(scenario)


def _probe_main(argv: list[str]) -> None:
    probe = _Probe(Path(argv[0]), int(argv[1]))
    probe.warm_up()
    results: dict[str, dict[str, Any]] = {}
    for scenario in argv[2:]:
        held, size = probe.prepare(scenario)
        work = functools.partial(probe.run, scenario, held)
        value, growth, elapsed = _measure(work)
        del held, work
        results[scenario] = {
            "outcome": value,
            "input_mb": round(size / MB, 1),
            "peak_growth_mb": round(growth, 1),
            "ratio": round(growth / (size / MB), 3),
            "seconds": round(elapsed, 3),
        }
    print(json.dumps(results))
