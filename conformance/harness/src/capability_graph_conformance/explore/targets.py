"""One implementation under exploration: its surfaces, kept warm.

The SDK and the Tool Adapter go through one long-lived driver process (the driver protocol), which
opens a graph once per working folder; the MCP server is one process per working folder (a few
kept alive), spoken to with raw JSON-RPC lines so that any frame can be sent, malformed ones
included; the CLI is one process per case. Whatever cannot answer (a driver that dies, a server
that hangs) gives an observation with ``errored`` set and the context, never an exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

from .._json import dumps, preview
from ..driver import DriverClient, DriverError
from ..manifest import Manifest
from ..schemas import SchemaSet
from .faults import mcp_request
from .model import GenCase, Observation

__all__ = ["Target"]

_PROTOCOL_VERSION = "2025-06-18"
_LIVE_SERVERS = 6  # a campaign over a few fixtures keeps each warm
_FRAME_ID = re.compile(r'"id":\s*7\b')


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="backslashreplace")


class _McpServer:
    """A raw stdio JSON-RPC peer: ``initialize`` once, then one request line at a time."""

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        self.argv, self.cwd, self.env = argv, cwd, env
        self.process: asyncio.subprocess.Process | None = None
        self.lines: asyncio.Queue[bytes] = asyncio.Queue()
        self.stdout = bytearray()
        self.stderr = bytearray()
        self._tasks: list[asyncio.Task[None]] = []
        self._next_id = 100

    async def start(self, timeout: float) -> dict[str, Any] | None:
        """Start and initialize; None when ready, else how the server ended."""
        self.process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.cwd,
            env=self.env,
            limit=64 * 1024 * 1024,
        )
        self._tasks = [
            asyncio.create_task(self._read_stdout()),
            asyncio.create_task(self._read_stderr()),
        ]
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": _PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "cg-conformance-explore", "version": "1"},
            },
        }
        answer = await self.request(json.dumps(init).encode(), 1, timeout)
        if answer is None or "result" not in answer:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), 5.0)
            await asyncio.sleep(0.05)
            return {
                "exit": self.process.returncode,
                "stdout": _text(bytes(self.stdout)),
                "stderr": _text(bytes(self.stderr)),
            }
        await self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def fresh_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def send(self, line: bytes) -> bool:
        process = self.process
        if process is None or process.stdin is None or not self.alive:
            return False
        try:
            process.stdin.write(line + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    async def request(self, line: bytes, request_id: Any, timeout: float) -> dict[str, Any] | None:
        """Send ``line``; the response whose id is ``request_id`` (or a null-id error), or None."""
        while not self.lines.empty():
            self.lines.get_nowait()
        if not await self.send(line):
            return None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            left = deadline - loop.time()
            if left <= 0:
                return None
            try:
                raw = await asyncio.wait_for(self.lines.get(), left)
            except TimeoutError:
                return None
            if not raw:
                return None  # stdout ended
            try:
                message = json.loads(raw)
            except ValueError:
                return {"stdoutNotJson": _text(raw)}
            answers = isinstance(message, dict) and ("result" in message or "error" in message)
            if answers and message.get("id") in (request_id, None):
                return dict(message)

    async def stop(self) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            with contextlib.suppress(OSError):
                if process.stdin is not None:
                    process.stdin.close()
            try:  # the end of stdin ends a session (CG-CLI-7); a server slow to go is killed
                await asyncio.wait_for(process.wait(), 2.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _read_stdout(self) -> None:
        assert self.process is not None
        assert self.process.stdout is not None
        with contextlib.suppress(ValueError, OSError):
            while line := await self.process.stdout.readline():
                self.stdout.extend(line)
                await self.lines.put(line.rstrip(b"\r\n"))
        await self.lines.put(b"")

    async def _read_stderr(self) -> None:
        assert self.process is not None
        assert self.process.stderr is not None
        with contextlib.suppress(OSError):
            while chunk := await self.process.stderr.read(65536):
                if len(self.stderr) < 1 << 20:
                    self.stderr.extend(chunk)


class Target:
    """The surfaces of one implementation (``manifest``) for one exploration."""

    def __init__(self, manifest: Manifest, schemas: SchemaSet, timeout: float) -> None:
        self.manifest = manifest
        self.schemas = schemas
        self.timeout = timeout
        self.driver: DriverClient | None = None
        self.driver_surfaces: list[str] = []
        self.opened: Path | None = None
        self.open_error: Any = None
        self.servers: dict[Path, _McpServer] = {}
        self.driver_restarts = 0

    @property
    def name(self) -> str:
        return self.manifest.name

    async def observe(self, case: GenCase, surface: str, config: Path) -> Observation:
        try:
            if surface in ("sdk", "tool"):
                return await self._driver(case, surface, config)
            if surface == "mcp":
                return await self._mcp(case, config)
            return await self._cli(case, config)
        except Exception as error:  # noqa: BLE001 -- a harness defect is reported, not raised
            return Observation(surface, errored=f"harness error: {type(error).__name__}: {error}")

    async def close(self) -> None:
        if self.driver is not None:
            await self.driver.stop()
        await asyncio.gather(*(server.stop() for server in self.servers.values()))
        self.servers.clear()

    # -- SDK and Tool Adapter ---------------------------------------------------------------------

    async def _driver(self, case: GenCase, surface: str, config: Path) -> Observation:
        if self.manifest.driver is None:
            return Observation(surface, errored="the manifest has no driver command")
        if self.driver is None or not self.driver.alive:
            if self.driver is not None:
                await self.driver.kill()
                self.driver_restarts += 1
            self.driver = DriverClient(
                self.manifest.expand(self.manifest.driver),
                cwd=self.manifest.cwd(self.manifest.driver) or str(config.parent),
                env=self.manifest.environment(),
                schemas=self.schemas,
            )
            self.opened = None
            try:
                started = await self.driver.start()
            except DriverError as error:
                return Observation(surface, errored=f"the driver did not start: {error}")
            self.driver_surfaces = list(started.get("surfaces", []))
        driver = self.driver
        if surface not in self.driver_surfaces:
            return Observation(surface, errored=f"the driver does not drive {surface}")
        try:
            if self.opened != config:
                if self.opened is not None:
                    await driver.run(surface, {"op": "close"}, self.timeout)
                self.opened = config
                opened, _ = await driver.run(
                    surface, {"op": "open", "config": str(config)}, self.timeout
                )
                self.open_error = None if opened.get("outcome") == "returned" else opened
            if self.open_error is not None:
                return Observation(
                    surface, {"open": _reduce(self.open_error)}, extra=_display(self.open_error)
                )
            call = case.action["call"]
            step = {"op": "call", "tool": call["tool"], "arguments": call["arguments"]}
            observation, _ = await driver.run(surface, step, self.timeout)
        except DriverError as error:
            tail = driver.stderr_tail(800)
            await driver.kill()
            self.opened = None
            return Observation(surface, errored=f"{error}; driver stderr: {tail}")
        driver.take_stderr()
        return Observation(surface, _reduce(observation), extra=_display(observation))

    # -- MCP -------------------------------------------------------------------------------------

    async def _server(self, config: Path) -> tuple[_McpServer | None, dict[str, Any] | None]:
        server = self.servers.get(config)
        if server is not None and server.alive:
            return server, None
        if server is not None:
            await server.stop()
            del self.servers[config]
        while len(self.servers) >= _LIVE_SERVERS:
            oldest = next(iter(self.servers))
            await self.servers.pop(oldest).stop()
        assert self.manifest.mcp is not None
        argv = self.manifest.expand(self.manifest.mcp, config=str(config))
        server = _McpServer(
            argv,
            self.manifest.cwd(self.manifest.mcp) or str(config.parent),
            self.manifest.environment(),
        )
        ended = await server.start(self.timeout)
        if ended is not None:
            await server.stop()
            return None, ended
        self.servers[config] = server
        return server, None

    async def _mcp(self, case: GenCase, config: Path) -> Observation:
        if self.manifest.mcp is None:
            return Observation("mcp", errored="the manifest has no MCP command")
        server, ended = await self._server(config)
        if server is None:
            return Observation("mcp", {"exited": ended})
        request_id = server.fresh_id()
        if "frame" in case.action:
            text = _FRAME_ID.sub(f'"id": {request_id}', case.action["frame"])
        else:
            call = case.action["call"]
            text = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/call",
                    "params": {"name": call["tool"], "arguments": call["arguments"]},
                }
            )
        line = text.encode("utf-8", "surrogatepass")
        # Only a request must be answered (CG-MCP-6); another message may be answered at once
        # or never, so it gets a short wait, which keeps campaigns and shrinking fast.
        expects_answer = "call" in case.action or mcp_request(text)
        # a frame is answered by the MCP layer at once: a short wait
        wait = min(self.timeout, 2.0) if "frame" in case.action else self.timeout
        response = await server.request(line, request_id, wait if expects_answer else 0.3)
        value: dict[str, Any] = _reduce_mcp(response)
        extra = {}
        if response is not None and isinstance(response.get("error"), dict):
            extra["message"] = response["error"].get("message")
        if "frame" in case.action:  # the session must survive any frame (CG-MCP-4)
            ping_id = server.fresh_id()
            pong = await server.request(
                json.dumps({"jsonrpc": "2.0", "id": ping_id, "method": "ping"}).encode(),
                ping_id,
                wait,
            )
            value["aliveAfter"] = pong is not None and "result" in pong
        if response is None and expects_answer:
            extra["stderr"] = preview(bytes(server.stderr[-600:]))
        return Observation("mcp", value, extra=extra)

    # -- CLI -------------------------------------------------------------------------------------

    async def _cli(self, case: GenCase, config: Path) -> Observation:
        if self.manifest.cli is None:
            return Observation("cli", errored="the manifest has no CLI command")
        if "argv" in case.action:
            arguments = [a.replace("{config}", str(config)) for a in case.action["argv"]]
        else:
            call = case.action["call"]
            arguments = [
                "call",
                call["tool"],
                "--arguments",
                dumps(call["arguments"]),  # a lone surrogate as its escape: argv is UTF-8
                "--config",
                str(config),
            ]
        argv = [os.fsencode(a) for a in self.manifest.expand(self.manifest.cli) + arguments]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.manifest.cwd(self.manifest.cli) or str(config.parent),
            env=self.manifest.environment(),
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), self.timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            return Observation("cli", errored=f"the CLI did not finish within {self.timeout:g} s")
        return Observation(
            "cli", {"exit": process.returncode, "stdout": _text(stdout), "stderr": _text(stderr)}
        )


def _reduce(observation: dict[str, Any]) -> dict[str, Any]:
    outcome = observation.get("outcome")
    if outcome == "returned":
        return {"returned": observation.get("value")}
    if outcome == "raised":
        if observation.get("graphError"):
            return {"raised": observation.get("error")}
        return {"raisedOther": observation.get("errorType", "?")}
    return {outcome or "unknown": observation.get("reason", True)}


def _display(observation: dict[str, Any]) -> dict[str, Any]:
    return {"display": observation["display"]} if "display" in observation else {}


def _reduce_mcp(response: dict[str, Any] | None) -> dict[str, Any]:
    if response is None:
        return {"noResponse": True}
    if "stdoutNotJson" in response:
        return {"stdoutNotJson": response["stdoutNotJson"]}
    if "error" in response:
        error = response["error"]
        return {"protocolError": error.get("code") if isinstance(error, dict) else error}
    result = response.get("result")
    if not isinstance(result, dict):
        return {"result": result}
    reduced = {k: result[k] for k in ("content", "isError", "structuredContent") if k in result}
    return {"result": reduced}
