"""The harness side of the driver protocol (``spec/conformance/driver-protocol.schema.json``).

One driver process serves a whole run: ``start`` once, one ``run`` per step, ``stop`` at the end.
Every line the driver writes is validated against the protocol schema; a violation, a crash, a
timeout or an early exit raises :class:`DriverError` with context (the runner reports the case as
errored and starts a fresh driver for the next one). The driver's stderr is collected and handed
to the case that was running, which checks it for forbidden strings.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from . import DRIVER_PROTOCOL, SUITE_VERSION
from ._json import dumps, preview
from .schemas import SchemaSet

__all__ = ["DriverClient", "DriverError"]

_MESSAGE_SCHEMA = "conformance/driver-protocol.schema.json#/$defs/DriverMessage"
_LINE_LIMIT = 64 * 1024 * 1024


def _encode(message: dict[str, Any]) -> bytes:
    """One protocol line. A text holding a lone surrogate (a generated input) cannot be UTF-8:
    such a message is sent with JSON escapes (``\\ud800``), which every JSON parser reads."""
    try:
        return (dumps(message) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(message, separators=(",", ":")) + "\n").encode("ascii")


class DriverError(Exception):
    """The driver crashed, hung, exited or broke the protocol."""


class DriverClient:
    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str | None,
        env: dict[str, str],
        schemas: SchemaSet,
        start_timeout: float = 60.0,
    ) -> None:
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.schemas = schemas
        self.start_timeout = start_timeout
        self.process: asyncio.subprocess.Process | None = None
        self.started: dict[str, Any] = {}
        self._stderr = bytearray()
        self._stderr_taken = 0
        self._stderr_task: asyncio.Task[None] | None = None
        self._seq = 0

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def start(self) -> dict[str, Any]:
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                limit=_LINE_LIMIT,
            )
        except OSError as error:
            raise DriverError(f"cannot start the driver {self.argv!r}: {error}") from None
        self._stderr_task = asyncio.create_task(self._drain_stderr())
        message = await self._exchange(
            {"type": "start", "protocol": DRIVER_PROTOCOL, "suite": SUITE_VERSION},
            self.start_timeout,
        )
        if message.get("type") != "started":
            raise DriverError(f"expected 'started', got {preview(message, 300)}")
        major = str(message.get("protocol", "")).split(".")[0]
        if major != DRIVER_PROTOCOL.split(".")[0]:
            spoken = message.get("protocol")
            raise DriverError(f"the driver speaks protocol {spoken}, the harness {DRIVER_PROTOCOL}")
        self.started = message
        return message

    async def run(
        self, surface: str, step: dict[str, Any], timeout: float
    ) -> tuple[dict[str, Any], bytes]:
        """Run one step; return the observation and the raw line it came in."""
        self._seq += 1
        seq = self._seq
        message = await self._exchange(
            {"type": "run", "seq": seq, "surface": surface, "step": step}, timeout
        )
        if message.get("type") == "protocolError":
            raise DriverError(f"the driver reported a protocol error: {preview(message, 300)}")
        if message.get("type") != "observation" or message.get("seq") != seq:
            raise DriverError(f"expected the observation of seq {seq}, got {preview(message, 300)}")
        return message["observation"], self._last_line

    def take_stderr(self) -> bytes:
        """The driver's stderr written since the previous call."""
        data = bytes(self._stderr[self._stderr_taken :])
        self._stderr_taken = len(self._stderr)
        return data

    def stderr_tail(self, limit: int = 2000) -> str:
        return preview(bytes(self._stderr[-limit:]), limit)

    async def stop(self) -> None:
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(DriverError, OSError):
                await self._exchange({"type": "stop"}, 10.0)
            with contextlib.suppress(OSError):
                if process.stdin is not None:
                    process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 10.0)
            except TimeoutError:
                process.kill()
                await process.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(self._stderr_task, 5.0)

    async def kill(self) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._stderr_task

    # -- internals ------------------------------------------------------------------------------

    _last_line: bytes = b""

    async def _exchange(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self.process
        if process is None or process.stdin is None or process.stdout is None:
            raise DriverError("the driver is not running")
        if process.returncode is not None:
            raise DriverError(self._died())
        try:
            process.stdin.write(_encode(message))
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            await self._settle()
            raise DriverError(self._died()) from None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), timeout)
        except TimeoutError:
            raise DriverError(f"no answer from the driver within {timeout:g} s") from None
        except ValueError:
            raise DriverError("the driver wrote a line longer than 64 MiB") from None
        if not line:
            await self._settle()
            raise DriverError(self._died())
        self._last_line = line
        try:
            answer = json.loads(line)
        except ValueError:
            raise DriverError(
                f"the driver wrote a line that is not JSON: {preview(line, 300)}"
            ) from None
        problems = self.schemas.errors(_MESSAGE_SCHEMA, answer)
        if problems:
            raise DriverError(
                f"the driver broke the protocol ({'; '.join(problems)}): {preview(answer, 300)}"
            )
        if not isinstance(answer, dict):  # pragma: no cover -- the schema only admits objects
            raise DriverError("not an object")
        return answer

    async def _settle(self) -> None:
        if self.process is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 5.0)

    def _died(self) -> str:
        code = self.process.returncode if self.process is not None else None
        return f"the driver exited (status {code}); stderr: {self.stderr_tail(1200)}"

    async def _drain_stderr(self) -> None:
        assert self.process is not None
        assert self.process.stderr is not None
        while True:
            chunk = await self.process.stderr.read(65536)
            if not chunk:
                return
            self._stderr.extend(chunk)
