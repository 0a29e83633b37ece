"""The MCP frame fuzz: garbage lines to ``capability-graph mcp``, each followed by a probe.

Every line the server writes is JSON-RPC 2.0; protocol errors use the JSON-RPC codes; tool
results are checked; the probe after each frame is answered within the case bound.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capability_graph_testing.battery.checks import check_mcp_result
from capability_graph_testing.battery.scale import CASE_BOUND_S

JSONRPC_CODES = {-32700, -32600, -32601, -32602}


@dataclass
class FrameStats:
    frames: int = 0
    probes_answered: int = 0
    protocol_errors: Counter[int] = field(default_factory=Counter)
    tool_errors: Counter[str] = field(default_factory=Counter)
    unanswered_frames: int = 0
    slowest_probe_s: float = 0.0
    violations: list[str] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        return {
            "garbage_frames": self.frames,
            "probes_answered": self.probes_answered,
            "protocol_errors": dict(sorted(self.protocol_errors.items())),
            "isError_results": dict(sorted(self.tool_errors.items())),
            "slowest_probe_s": round(self.slowest_probe_s, 3),
            "violations": len(self.violations),
        }


class RawServer:
    """``capability-graph mcp`` spoken to in raw lines; every line it writes is kept."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "capability_graph.cli", "mcp", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._errors = threading.Thread(target=self._read_errors, daemon=True)
        self._errors.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def _read_errors(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    def send(self, data: bytes | Mapping[str, Any]) -> None:
        assert self.process.stdin is not None
        raw = data if isinstance(data, bytes) else json.dumps(data).encode()
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def initialize(self) -> dict[str, Any]:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "battery", "version": "1"},
                },
            }
        )
        answer = json.loads(self.lines.get(timeout=60))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer  # type: ignore[no-any-return]

    def close(self) -> int:
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            status = self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait(30)
        self._reader.join(10)
        self._errors.join(10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return status


def _check_line(line: bytes, stats: FrameStats, probe_id: str) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        stats.violations.append(f"a line that is not JSON: {line[:120]!r}")
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        stats.violations.append(f"not JSON-RPC: {line[:120]!r}")
        return None
    if message.get("id") == probe_id:
        return message
    if "error" in message:
        code = message["error"].get("code")
        stats.protocol_errors[code] += 1
        if code not in JSONRPC_CODES:
            stats.violations.append(f"error code {code} (a defect): {line[:200]!r}")
    elif isinstance(message.get("result"), dict) and "content" in message["result"]:
        try:
            error = check_mcp_result(message["result"])
        except AssertionError as problem:
            stats.violations.append(f"bad tool result: {problem}"[:300])
        else:
            if error is not None:
                stats.tool_errors[error["code"]] += 1
    return None


def fuzz_frames(
    server: RawServer, frames: Iterator[bytes], *, bound_s: float = CASE_BOUND_S
) -> FrameStats:
    """Send every frame followed by a valid probe; the probe must be answered within ``bound_s``."""
    stats = FrameStats()
    for number, frame in enumerate(frames):
        stats.frames += 1
        probe_id = f"probe-{number}"
        tool = ("describe_graph", "list_capabilities")[number % 2]
        server.send(frame)
        server.send(
            {
                "jsonrpc": "2.0",
                "id": probe_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": {}},
            }
        )
        started = time.monotonic()
        while True:
            remaining = bound_s - (time.monotonic() - started)
            try:
                line = server.lines.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                stats.violations.append(f"no answer within {bound_s} s after frame {frame[:120]!r}")
                return stats
            answer = _check_line(line, stats, probe_id)
            if answer is not None:
                result = answer.get("result", {})
                if result.get("isError") or "structuredContent" not in result:
                    stats.violations.append(f"the probe failed after {frame[:120]!r}: {answer}")
                stats.probes_answered += 1
                break
        stats.slowest_probe_s = max(stats.slowest_probe_s, time.monotonic() - started)
    return stats
