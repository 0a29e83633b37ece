"""The MCP surface: the official ``mcp`` client over the implementation's stdio command.

The client session (``mcp.ClientSession``) runs over a small transport of our own instead of
``mcp.stdio_client`` so that every byte the server writes is kept: each stdout frame (a JSON-RPC
message per line) and its stderr. The checks read the *raw* ``tools/call`` response, not the
client's parsed model, so a field the client would drop or default (``structuredContent``,
``isError``) is still seen, and forbidden strings are searched in the bytes themselves. A call the
client cannot express -- no ``arguments`` member, arguments that are not an object, hold a lone
surrogate or nest deeper than its serializer goes (CG-MCP-6, CG-MCP-7) -- is written as a raw
``tools/call`` frame of its own.

A server that cannot open its configuration must behave like any CLI graph command: exit 1, write
nothing on stdout, and the one-line envelope on stderr (:class:`McpStartupFailure` carries what it
did).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, Literal

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from ._json import NO_ARGUMENTS, dumps, preview

__all__ = ["McpCall", "McpConnection", "McpStartupFailure"]

CallKind = Literal["response", "protocol-error", "no-response", "client-error"]


@dataclass
class McpCall:
    """What one ``tools/call`` produced."""

    kind: CallKind
    response: dict[str, Any] | None  # the raw JSON-RPC response to the request
    frames: list[bytes] = field(default_factory=list)  # every stdout line during the call
    stderr: bytes = b""
    detail: str = ""


#: Deeper than this, the client's serializer may give up: such arguments go in a raw frame.
_CLIENT_DEPTH: Final = 64


def _needs_raw_frame(arguments: Any) -> bool:
    """Whether the official client cannot send ``arguments`` as they are."""
    if arguments is NO_ARGUMENTS or not isinstance(arguments, dict):
        return True
    stack: list[tuple[Any, int]] = [(arguments, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > _CLIENT_DEPTH:
            return True
        if isinstance(value, str) and any("\ud800" <= c <= "\udfff" for c in value):
            return True
        if isinstance(value, dict):
            stack.extend((k, depth + 1) for k in value)
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return False


class McpStartupFailure(Exception):
    """The server did not complete ``initialize``: how it ended and what it wrote."""

    def __init__(self, detail: str, exit_code: int | None, stdout: bytes, stderr: bytes) -> None:
        super().__init__(detail)
        self.detail = detail
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr


class McpConnection:
    """``async with McpConnection(argv, ...) as server: await server.call(tool, arguments)``."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str | None,
        env: dict[str, str],
        start_timeout: float = 60.0,
    ) -> None:
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.start_timeout = start_timeout
        self.frames: list[bytes] = []
        self.sent: list[bytes] = []
        self.stderr = bytearray()
        self._process: anyio.abc.Process | None = None
        self._stack = contextlib.AsyncExitStack()
        self._session: ClientSession | None = None
        self._stdout_done = anyio.Event()
        self._raw_calls = 0
        self._stderr_done = anyio.Event()

    async def __aenter__(self) -> McpConnection:
        try:
            await self._start()
        except BaseException:
            await self._shutdown()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._shutdown()

    async def _start(self) -> None:
        try:
            self._process = await anyio.open_process(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
            )
        except OSError as error:
            raise McpStartupFailure(
                f"cannot start {self.argv!r}: {error}", None, b"", b""
            ) from None
        read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](16)
        group = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(group.cancel_scope.cancel)
        group.start_soon(self._read_stdout, read_send)
        group.start_soon(self._write_stdin, write_recv)
        group.start_soon(self._read_stderr)
        session = ClientSession(read_recv, write_send)
        try:
            await self._stack.enter_async_context(session)
            with anyio.fail_after(self.start_timeout):
                await session.initialize()
        except Exception as error:  # noqa: BLE001 -- any failure to initialize is reported
            exit_code = await self._wait_exit(5.0)
            detail = f"initialize failed: {type(error).__name__}: {preview(str(error), 300)}"
            raise McpStartupFailure(
                detail, exit_code, b"\n".join(self.frames), bytes(self.stderr)
            ) from None
        self._session = session

    async def call(self, tool: str, arguments: Any, timeout: float) -> McpCall:
        session = self._session
        assert session is not None
        frames_before, sent_before, stderr_before = (
            len(self.frames),
            len(self.sent),
            len(self.stderr),
        )
        if _needs_raw_frame(arguments):
            return await self._call_raw(tool, arguments, timeout)
        kind: CallKind = "response"
        detail = ""
        try:
            with anyio.fail_after(timeout):
                await session.call_tool(tool, arguments)
        except MCPError as error:
            kind, detail = "protocol-error", f"{error}"
        except TimeoutError:
            kind, detail = "no-response", f"no response within {timeout:g} s"
        except Exception as error:  # noqa: BLE001 -- the client rejected what the server sent
            kind, detail = "client-error", f"{type(error).__name__}: {preview(str(error), 300)}"
        request_id = None
        for raw in self.sent[sent_before:]:
            with contextlib.suppress(ValueError):
                message = json.loads(raw)
                if isinstance(message, dict) and message.get("method") == "tools/call":
                    request_id = message.get("id")
        frames = self.frames[frames_before:]
        response = None
        for raw in frames:
            with contextlib.suppress(ValueError):
                message = json.loads(raw)
                if (
                    isinstance(message, dict)
                    and "id" in message
                    and message.get("id") == request_id
                    and ("result" in message or "error" in message)
                ):
                    response = message
        if response is None and kind == "response":
            kind, detail = "no-response", "the client returned but no response frame was seen"
        return McpCall(kind, response, frames, bytes(self.stderr[stderr_before:]), detail)

    async def _call_raw(self, tool: str, arguments: Any, timeout: float) -> McpCall:
        """One ``tools/call`` written as its own frame, the arguments as :func:`dumps` writes
        them (absent when there are none); the answer is looked up by its id."""
        process = self._process
        assert process is not None
        assert process.stdin is not None
        self._raw_calls += 1
        request_id = f"cg-raw-{self._raw_calls}"
        frames_before, stderr_before = len(self.frames), len(self.stderr)
        params = '{"name":' + dumps(tool)
        if arguments is not NO_ARGUMENTS:
            params += ',"arguments":' + dumps(arguments)
        frame = (
            f'{{"jsonrpc":"2.0","id":{dumps(request_id)},"method":"tools/call","params":{params}}}}}\n'
        ).encode()
        self.sent.append(frame)
        response = None
        with anyio.move_on_after(timeout):
            await process.stdin.send(frame)
            while response is None:
                for raw in self.frames[frames_before:]:
                    with contextlib.suppress(ValueError):
                        message = json.loads(raw)
                        if isinstance(message, dict) and message.get("id") == request_id:
                            response = message
                if response is None:
                    await anyio.sleep(0.02)
        frames = self.frames[frames_before:]
        stderr = bytes(self.stderr[stderr_before:])
        if response is None:
            return McpCall("no-response", None, frames, stderr, f"no response within {timeout:g} s")
        kind: CallKind = "protocol-error" if "error" in response else "response"
        return McpCall(kind, response, frames, stderr, "")

    async def list_tools(self, timeout: float) -> Any:
        """The raw ``result`` of a ``tools/list`` request (as the server sent it), or None when
        no answer came."""
        session = self._session
        assert session is not None
        sent_before, frames_before = len(self.sent), len(self.frames)
        with contextlib.suppress(Exception), anyio.fail_after(timeout):
            await session.list_tools()
        request_id = None
        for raw in self.sent[sent_before:]:
            with contextlib.suppress(ValueError):
                message = json.loads(raw)
                if isinstance(message, dict) and message.get("method") == "tools/list":
                    request_id = message.get("id")
        for raw in self.frames[frames_before:]:
            with contextlib.suppress(ValueError):
                message = json.loads(raw)
                if isinstance(message, dict) and message.get("id") == request_id:
                    return message.get("result")
        return None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.returncode is None

    # -- transport ------------------------------------------------------------------------------

    async def _read_stdout(self, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        assert self._process is not None
        assert self._process.stdout is not None
        buffer = b""
        async with sink:
            try:
                async for chunk in self._process.stdout:
                    buffer += chunk
                    while (end := buffer.find(b"\n")) >= 0:
                        line, buffer = buffer[:end], buffer[end + 1 :]
                        self.frames.append(line)
                        if not line.strip():
                            continue
                        try:
                            message = mcp_types.jsonrpc_message_adapter.validate_json(
                                line, by_name=False
                            )
                        except ValueError as error:
                            await sink.send(error)
                            continue
                        await sink.send(SessionMessage(message))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                pass
            finally:
                if buffer:
                    self.frames.append(buffer)
                self._stdout_done.set()

    async def _write_stdin(self, source: MemoryObjectReceiveStream[SessionMessage]) -> None:
        assert self._process is not None
        assert self._process.stdin is not None
        async with source:
            try:
                async for item in source:
                    data = (
                        item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    ).encode("utf-8")
                    self.sent.append(data)
                    await self._process.stdin.send(data)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                pass

    async def _read_stderr(self) -> None:
        assert self._process is not None
        assert self._process.stderr is not None
        try:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for chunk in self._process.stderr:
                    self.stderr.extend(chunk)
        finally:
            self._stderr_done.set()

    async def _wait_exit(self, timeout: float) -> int | None:
        process = self._process
        if process is None:
            return None
        with anyio.move_on_after(timeout):
            await process.wait()
        # Let the readers take what the process wrote last.
        with anyio.move_on_after(2.0):
            await self._stdout_done.wait()
            await self._stderr_done.wait()
        return process.returncode

    async def _shutdown(self) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            with anyio.CancelScope(shield=True):
                if process.stdin is not None:
                    with contextlib.suppress(Exception):
                        await process.stdin.aclose()
                with anyio.move_on_after(5.0):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    with anyio.move_on_after(5.0):
                        await process.wait()
        # The task group and the session were entered by this task outside any new scope, so
        # they are left the same way (a cancel scope must be exited where it was entered).
        await self._stack.aclose()
        if process is not None:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await process.aclose()
