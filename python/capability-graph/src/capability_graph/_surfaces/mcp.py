"""The MCP server: the five tools over stdio with the official ``mcp`` SDK (CG-MCP-1 .. CG-MCP-5).

Why one module of this size: the frame screen and the server are one request path (a frame is
screened, then served, under one nonce); apart, the screen's private protocol would be public.

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
keeps the last of duplicate member names, and drops, unanswered, a frame it cannot parse: one
holding an integer literal of more than 4,300 digits, a lone surrogate escape, or nesting deeper
than about 200 levels (CG-MCP-6: every request gets an answer). A request frame with a readable
``id`` is answered here when it has a duplicate name or an over-long integer (a ``tools/call``
with ``isError`` and ``CG_INPUT_INVALID``, exactly as for the same arguments given as JSON text
anywhere else; any other request with ``-32700`` when the SDK could not parse it), or when it is a
``tools/call`` of no tool (``-32602 Unknown tool``, CG-MCP-8). A ``tools/call`` of a known tool
that the SDK could not parse or would refuse (arguments that are not an object, CG-MCP-7) is
rewritten into a frame the SDK parses, carrying its arguments *text* for the handler, which
judges it as the CLI judges ``--arguments``. Every other frame reaches the SDK unchanged.

Importing the SDK costs most of a second: only this module imports it, and the CLI imports this
module only for its ``mcp`` command.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import io
import json
import logging
import os
import re
import secrets
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
from pydantic import ValidationError

from .._core.cancel import CancelToken
from .._core.errors import GraphError
from .._core.graph import runs_in_place
from .._core.json import (
    DUPLICATE_KEY,
    MalformedJson,
    NotPureJson,
    dumps,
    duplicated_names,
    scan_json_text,
)
from .._core.json.spans import member_spans
from .._core.operations import invalid_arguments_text
from .._core.tool_definitions import tool_definitions, tool_names

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from .._core.graph import CapabilityGraph

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

    A tool that never waits on an executor (every one but ``match_capabilities``) has nothing
    to stop: it is awaited directly, without the task and the token (a third of a describe's
    cost on the server).
    """
    if runs_in_place(name):
        return await graph.call(name, arguments)
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
    return frozenset(tool_names())


_ARGUMENTS: Final = "/params/arguments"

#: The member of a rewritten ``tools/call`` frame's ``params`` that carries the arguments text
#: (see :func:`screen_frame`); honoured only with the server's own nonce, which no client sees.
SCREENED: Final = "capability-graph/screened"

_UNKNOWN_TOOL: Final = "Unknown tool"


class _Request:
    """What the screen needs of a request frame: its id, method, params and arguments text."""

    def __init__(self, text: str, frame: Any) -> None:
        self.text = text
        self.frame = frame  # the parsed frame, or None when it nests too deep to parse
        self._top: dict[str, tuple[int, int]] | None = None
        self._params: dict[str, tuple[int, int]] | None = None

    def _spans(self) -> dict[str, tuple[int, int]]:
        if self._top is None:
            self._top = member_spans(self.text, 0)
        return self._top

    def member(self, name: str) -> Any:
        """A scalar member of the frame (``jsonrpc``, ``id``, ``method``)."""
        if self.frame is not None:
            return self.frame.get(name)
        span = self._spans().get(name)
        if span is None or self.text[span[0] : span[0] + 1] in ("[", "{"):
            return None
        return json.loads(self.text[span[0] : span[1]])

    def params_spans(self) -> dict[str, tuple[int, int]] | None:
        """The member spans of ``params``, or None when it is absent or not an object."""
        if self._params is None:
            span = self._spans().get("params")
            if span is None or self.text[span[0] : span[0] + 1] != "{":
                return None
            self._params = member_spans(self.text, span[0])
        return self._params


def _sdk_reads(line: str) -> bool:
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError:
        return False
    return True


def _meta_reads(meta: dict[str, Any]) -> bool:
    try:
        types.RequestParams.model_validate({"_meta": meta}, by_name=False)
        text = json.dumps(meta, ensure_ascii=False)
    except (ValidationError, ValueError, TypeError):
        return False
    # A lone surrogate (in a name or a string) is a frame the SDK's parser refuses: drop the _meta.
    return re.search("[\ud800-\udfff]", text) is None


def _error(ident: str | int, code: int, message: str) -> types.JSONRPCMessage:
    return types.JSONRPCError(
        jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message)
    )


def screen_frame(
    line: str | bytes, tools: frozenset[str], nonce: str = ""
) -> types.JSONRPCMessage | str | None:
    """What to do with one line of the wire before the SDK parses it: an answer to send, a
    replacement line for the SDK, or None to pass the line on unchanged.

    A frame is screened when it is a request (``"jsonrpc": "2.0"``, a string ``method``, an
    integer or string ``id`` without lone surrogates; CG-MCP-6):

    * a duplicate member name or an integer literal too long to convert: a ``tools/call`` of a
      known tool gets the tool's ``isError`` result with ``CG_INPUT_INVALID``; another request
      holding an unconvertible integer gets ``-32700`` (the SDK keeps the last of duplicates);
    * a ``tools/call`` whose name is not a known tool's: ``-32602 Unknown tool`` (CG-MCP-8);
    * a ``tools/call`` of a known tool that the SDK cannot parse (a lone surrogate, nesting
      beyond its parser) or would refuse (arguments that are not an object, other ``params``
      members of the wrong type): a replacement frame the SDK parses, carrying the arguments
      text under :data:`SCREENED` with ``nonce`` (CG-MCP-6, CG-MCP-7);
    * any other request the SDK cannot parse: ``-32700``.
    """
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    try:
        # The arguments lie at depth 2 of the frame (/params/arguments): depth counts from them.
        frame, problem = scan_json_text(text, depth=-2)
    except MalformedJson:
        return None
    except NotPureJson:  # deeper than Python's parser goes: read the envelope without it
        frame, problem = None, None
    if frame is not None and (not isinstance(frame, dict) or "id" in duplicated_names(frame)):
        return None
    request = _Request(text, frame)
    if frame is None and text.lstrip()[:1] != "{":
        return None
    ident, method = request.member("id"), request.member("method")
    if (
        request.member("jsonrpc") != "2.0"
        or isinstance(ident, bool)
        or not isinstance(ident, str | int)
        or (isinstance(ident, str) and re.search("[\ud800-\udfff]", ident) is not None)
        or not isinstance(method, str)
    ):
        return None
    if method != "tools/call":
        if problem is not None and problem.reason == DUPLICATE_KEY:
            return None  # the SDK keeps the last member: its protocol, not a tool's arguments
        if problem is None and frame is not None and _sdk_reads(text):
            return None
        return _error(ident, types.PARSE_ERROR, "Parse error")
    if frame is not None:
        params: Any = frame.get("params")
        name = params.get("name") if isinstance(params, dict) else None
    else:
        params = request.params_spans()
        span = params.get("name") if params is not None else None
        name = json.loads(text[span[0] : span[1]]) if span is not None else None
    if not isinstance(name, str) or name not in tools:
        return _error(ident, types.INVALID_PARAMS, _UNKNOWN_TOOL)
    if problem is not None:
        where = problem.pointer
        inside = where == _ARGUMENTS or where.startswith(_ARGUMENTS + "/")
        located = NotPureJson(problem.reason, where[len(_ARGUMENTS) :] if inside else "")
        result = failure(invalid_arguments_text(name, located))
        return types.JSONRPCResponse(jsonrpc="2.0", id=ident, result=_wire(result))
    arguments = params.get("arguments") if frame is not None else None
    if (
        frame is not None
        and params.keys() <= {"name", "arguments"}
        and ("arguments" not in params or isinstance(arguments, dict))
        and _sdk_reads(text)
    ):
        return None
    # Rewritten: the name, the arguments as text, and a _meta the SDK reads (any other member
    # of params must not change the outcome, CG-MCP-8).
    spans = request.params_spans() or {}
    span = spans.get("arguments")
    screened: dict[str, Any] = {"nonce": nonce}
    if span is not None:
        screened["arguments"] = text[span[0] : span[1]]
    rewritten_params: dict[str, Any] = {"name": name, SCREENED: screened}
    meta = params.get("_meta") if frame is not None else None
    if isinstance(meta, dict) and _meta_reads(meta):
        rewritten_params["_meta"] = meta
    rewritten = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": rewritten_params}
    return dumps(rewritten)


def _wire(result: types.CallToolResult) -> dict[str, Any]:
    """A tool result as the wire carries it: a success has no ``isError`` member (CG-MCP-9)."""
    data = result.model_dump(by_alias=True, mode="json", exclude_unset=True)
    if data.get("isError") is not True:
        data.pop("isError", None)
    return data


def _screened_arguments(params: Any, nonce: str) -> tuple[bool, Any]:
    """``(True, text or None)`` when ``params`` is a frame :func:`screen_frame` rewrote."""
    screened = params.get(SCREENED) if isinstance(params, Mapping) else None
    if not isinstance(screened, Mapping) or screened.get("nonce") != nonce or not nonce:
        return False, None
    return True, screened.get("arguments")


def build_server(
    graph: CapabilityGraph, *, name: str = SERVER_NAME, nonce: str = ""
) -> Server[Any]:
    """A low-level MCP ``Server`` serving the tools of ``graph`` (which the caller owns).

    ``nonce`` is the secret of frames that :func:`screen_frame` rewrote for this server.
    """
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
            raise MCPError(types.INVALID_PARAMS, _UNKNOWN_TOOL)
        raw = ctx.params
        screened, text = _screened_arguments(raw, nonce)
        try:
            if screened:
                # The arguments as text, judged as every request text is (CG-MCP-6, CG-MCP-7).
                # ``call`` reads a string as the request text (CG-CONV-17), once.
                arguments = {} if text is None else text
            else:
                # The wire's arguments, unmodified: absent means "no arguments" ({}), an
                # explicit null is passed on (the core's CG_INPUT_INVALID, like any non-object).
                present = isinstance(raw, Mapping) and "arguments" in raw
                arguments = raw.get("arguments") if present else {}  # type: ignore[union-attr]
            return success(await call_cancellably(graph, params.name, arguments))
        except GraphError as error:
            return failure(error)
        except Exception:  # noqa: BLE001 -- a defect: never let its text reach the wire
            _log.error("internal error in tools/call")
            raise MCPError(types.INTERNAL_ERROR, "Internal error") from None

    async def without_is_error_false(ctx: Any, call_next: Any) -> Any:
        # The SDK writes a result's default isError: false; a success has none (CG-MCP-9).
        result = await call_next(ctx)
        if (
            ctx.method == "tools/call"
            and isinstance(result, dict)
            and result.get("isError") is False
        ):
            result = {k: v for k, v in result.items() if k != "isError"}
        return result

    server = Server(
        name,
        version=_version(),
        title="Capability Graph",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
    server.middleware.append(without_is_error_false)
    return server


class _ScreenedLines:
    """The lines of the wire for the SDK's reader, after :func:`screen_frame`: the frames it
    answers itself are answered on the server's write stream (once the server has one), the
    frames it rewrites are passed on rewritten."""

    def __init__(self, lines: AsyncIterable[str], tools: frozenset[str], nonce: str) -> None:
        self._lines = lines
        self._tools = tools
        self._nonce = nonce
        self._out: ObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def answer_to(self, out: ObjectSendStream[SessionMessage]) -> None:
        self._out = out
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._screen()

    async def _screen(self) -> AsyncIterator[str]:
        async for line in self._lines:
            try:
                answer = screen_frame(line, self._tools, self._nonce)
            except Exception:  # noqa: BLE001 -- a defect of the screen must not end the session
                _log.error("internal error while screening a frame")
                answer = None
            if answer is None:
                yield line
                continue
            if isinstance(answer, str):
                yield answer + "\n"
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
    nonce = secrets.token_hex(16)
    server = build_server(graph, nonce=nonce)
    wire, restore = _claim_stdin()
    try:
        text = anyio.wrap_file(_UnownedText(wire, encoding="utf-8", errors="replace"))
        lines = _ScreenedLines(text, _tool_names(), nonce)
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (
            read_stream,
            write_stream,
        ):
            lines.answer_to(write_stream)
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        restore()
