"""The MCP server: the five tools over stdio with the official ``mcp`` SDK (CG-MCP-1 .. CG-MCP-5).

It uses the SDK's low-level ``Server`` (which validates nothing itself, so every validation error
is the core's) and is a thin projection of :meth:`CapabilityGraph.call`:

* ``tools/list``: the tools of ``spec/capability-graph/tools.json`` with their input and output
  schemas and annotations;
* ``tools/call`` success: ``structuredContent`` = the result, plus one text item with the same
  JSON;
* ``tools/call`` failure: ``isError: true``, exactly one text item whose text is the error object
  JSON, and no ``structuredContent`` (invalid arguments are failures of this kind);
* an unknown tool: a JSON-RPC ``-32602`` error (a protocol error, never ``isError``); malformed
  requests and unknown methods are answered by the SDK's protocol layer;
* ``notifications/cancelled`` for a running call: the SDK cancels the handler; the handler then
  cancels the request's :class:`CancelToken`, so a running match ends the core's way, with
  ``CG_MODEL_CANCELLED`` (the SDK does not answer a cancelled request).

No exception escapes a handler (the SDK would put its text into a JSON-RPC error): a GraphError
becomes an ``isError`` result; anything else -- a defect, the contract has no code for it -- is a
bare ``-32603 Internal error`` without data.

Frames are screened before the SDK parses them (:func:`screen_frame`), because the SDK's parser
keeps the last of duplicate member names and drops, unanswered, a frame holding an integer
literal of more than 4,300 digits. A request frame with either problem and a readable ``id`` is
answered here: a ``tools/call`` with ``isError`` and ``CG_INPUT_INVALID`` (the core's message,
exactly as for the same arguments given as JSON text anywhere else), any other request with a
JSON-RPC ``-32700`` parse error when the SDK could not parse it. Every other frame reaches the SDK
unchanged.

Importing the SDK costs most of a second: only this module imports it, and the CLI imports this
module only for its ``mcp`` command.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import io
import logging
import os
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, Final, cast

import anyio
from anyio.abc import ObjectSendStream
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from ._cancel import CancelToken
from ._errors import GraphError
from ._json import DUPLICATE_KEY, NotPureJson, dumps, duplicated_names, scan_json_text
from ._operations import invalid_arguments_text
from ._tools import tool_definitions

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from ._graph import CapabilityGraph

__all__ = ["SERVER_NAME", "build_server", "screen_frame", "serve_stdio"]

SERVER_NAME: Final = "capability-graph"

INSTRUCTIONS: Final = (
    "Capability Graph: discover what the configured products and services can do. "
    "Call describe_graph first, then list_capabilities or match_capabilities to find "
    "capabilities, resolve_capabilities for their details, relations and documents, and "
    "read_document for a local document's text. A failed call returns isError with a JSON "
    "error object whose nextAction says what to do next."
)

#: How long a cancelled call may take to finish the core's way (the core answers a cancelled
#: match within its own short grace period; this only bounds a misbehaving call).
CANCEL_SETTLE_S: Final = 5.0

_log = logging.getLogger(__name__)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("capability-graph")
    except PackageNotFoundError:  # pragma: no cover -- running from a source tree
        return "0"


def _tool(definition: Mapping[str, Any]) -> types.Tool:
    return types.Tool(
        name=definition["name"],
        title=definition.get("title"),
        description=definition.get("description"),
        input_schema=definition["inputSchema"],
        output_schema=definition.get("outputSchema"),
        annotations=types.ToolAnnotations.model_validate(definition["annotations"], by_name=False)
        if "annotations" in definition
        else None,
    )


def success(result: dict[str, Any]) -> types.CallToolResult:
    """A successful call: the result as structured content and as one text item."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=dumps(result))],
        structured_content=result,
    )


def failure(error: GraphError) -> types.CallToolResult:
    """A failed call: one text item holding the error object JSON, no structured content."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=dumps(error.to_json()))],
        is_error=True,
    )


def _consume(task: asyncio.Future[Any]) -> None:
    # Drop a late result or exception so asyncio never logs it as "never retrieved".
    if not task.cancelled():
        task.exception()


async def call_cancellably(graph: CapabilityGraph, name: str, arguments: Any) -> dict[str, Any]:
    """``graph.call`` with a fresh CancelToken, fired when the calling task is cancelled.

    The core call runs in its own task, shielded from the caller's cancellation; when the caller
    is cancelled (``notifications/cancelled``, or the connection closing), the token fires, the
    core ends a running match with ``CG_MODEL_CANCELLED`` (stopping its executor), and the
    cancellation then propagates.
    """
    token = CancelToken()
    task = asyncio.ensure_future(graph.call(name, arguments, cancel=token))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        token.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_SETTLE_S):
            await asyncio.wait((task,))
        if task.done():
            _consume(task)
        else:  # pragma: no cover -- only a misbehaving call outlives the bound
            task.add_done_callback(_consume)
        raise


def _tool_names() -> frozenset[str]:
    return frozenset(d["name"] for d in tool_definitions())


_ARGUMENTS: Final = "/params/arguments"


def screen_frame(line: str | bytes, tools: frozenset[str]) -> types.JSONRPCMessage | None:
    """The answer to a request frame the SDK must not parse itself, or None to pass it on.

    A frame is answered here when it is a request (``method`` and a readable ``id``) and the
    request-text rules of the core find a duplicate member name or an integer literal too long
    to convert in it: a ``tools/call`` of a known tool gets the tool's ``isError`` result with
    ``CG_INPUT_INVALID`` (an unknown tool, ``-32602`` as always); another request holding an
    unconvertible integer gets ``-32700``. Anything else (well-formed frames, notifications,
    unreadable ids, frames that are not JSON at all) goes to the SDK unchanged.
    """
    try:
        # The arguments lie at depth 2 of the frame (/params/arguments): depth counts from them.
        frame, problem = scan_json_text(line, depth=-2)
    except NotPureJson:
        return None
    if problem is None or not isinstance(frame, dict) or "id" in duplicated_names(frame):
        return None
    ident, method = frame.get("id"), frame.get("method")
    if isinstance(ident, bool) or not isinstance(ident, str | int) or not isinstance(method, str):
        return None
    if method != "tools/call":
        if problem.reason == DUPLICATE_KEY:
            return None  # the SDK keeps the last member: its protocol, not a tool's arguments
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=ident,
            error=types.ErrorData(code=types.PARSE_ERROR, message="Parse error"),
        )
    params = frame.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    if not isinstance(name, str) or name not in tools:
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=ident,
            error=types.ErrorData(code=types.INVALID_PARAMS, message="Unknown tool"),
        )
    where = problem.pointer
    inside = where == _ARGUMENTS or where.startswith(_ARGUMENTS + "/")
    located = NotPureJson(problem.reason, where[len(_ARGUMENTS) :] if inside else "")
    result = failure(invalid_arguments_text(name, located))
    return types.JSONRPCResponse(
        jsonrpc="2.0",
        id=ident,
        result=result.model_dump(by_alias=True, mode="json", exclude_unset=True),
    )


def build_server(graph: CapabilityGraph, *, name: str = SERVER_NAME) -> Server[Any]:
    """A low-level MCP ``Server`` serving the tools of ``graph`` (which the caller owns)."""
    definitions = tool_definitions()
    listing = types.ListToolsResult(tools=[_tool(d) for d in definitions])
    names = _tool_names()

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in names:
            raise MCPError(types.INVALID_PARAMS, "Unknown tool")
        # The wire's arguments, unmodified: absent means "no arguments" ({}), an explicit null
        # is passed on (and is the core's CG_INPUT_INVALID, like any other non-object).
        raw = ctx.params
        arguments = raw.get("arguments") if isinstance(raw, Mapping) and "arguments" in raw else {}
        try:
            return success(await call_cancellably(graph, params.name, arguments))
        except GraphError as error:
            return failure(error)
        except Exception:  # noqa: BLE001 -- a defect: never let its text reach the wire
            _log.error("internal error in tools/call")
            raise MCPError(types.INTERNAL_ERROR, "Internal error") from None

    return Server(
        name,
        version=_version(),
        title="Capability Graph",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


class _ScreenedLines:
    """The lines of the wire for the SDK's reader, minus the frames :func:`screen_frame`
    answers itself (on the server's write stream, once the server has one)."""

    def __init__(self, lines: AsyncIterable[str], tools: frozenset[str]) -> None:
        self._lines = lines
        self._tools = tools
        self._out: ObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def answer_to(self, out: ObjectSendStream[SessionMessage]) -> None:
        self._out = out
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._screen()

    async def _screen(self) -> AsyncIterator[str]:
        async for line in self._lines:
            answer = screen_frame(line, self._tools)
            if answer is None:
                yield line
                continue
            await self._ready.wait()
            assert self._out is not None
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._out.send(SessionMessage(answer))


class _UnownedText(io.TextIOWrapper):
    """A text layer whose close leaves the wire's descriptor alone."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.detach()


def _claim_stdin() -> tuple[BinaryIO, Callable[[], None]]:
    """The wire as a private duplicate of fd 0, with fd 0 pointed at the null device while
    serving (so no child process can read frames), as the SDK does with the stdin it opens."""
    stdin = sys.stdin
    try:
        if stdin is None or stdin.fileno() != 0:
            raise OSError
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except (AttributeError, OSError, ValueError):
        wire = stdin.buffer if stdin is not None else io.BytesIO()  # no stdin: at its end
        return wire, lambda: None
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)

    def restore() -> None:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)

    # closefd=False: a reader thread may still block on it after serving ends.
    return os.fdopen(private, "rb", closefd=False), restore


async def serve_stdio(graph: CapabilityGraph) -> None:
    """Serve ``graph`` over this process's stdin/stdout until stdin closes."""
    server = build_server(graph)
    wire, restore = _claim_stdin()
    try:
        text = anyio.wrap_file(_UnownedText(wire, encoding="utf-8", errors="replace"))
        lines = _ScreenedLines(text, _tool_names())
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (
            read_stream,
            write_stream,
        ):
            lines.answer_to(write_stream)
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        restore()
