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

Importing the SDK costs most of a second: only this module imports it, and the CLI imports this
module only for its ``mcp`` command.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from ._cancel import CancelToken
from ._errors import GraphError
from ._json import dumps
from ._tools import tool_definitions

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from ._graph import CapabilityGraph

__all__ = ["SERVER_NAME", "build_server", "serve_stdio"]

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


def build_server(graph: CapabilityGraph, *, name: str = SERVER_NAME) -> Server[Any]:
    """A low-level MCP ``Server`` serving the tools of ``graph`` (which the caller owns)."""
    definitions = tool_definitions()
    listing = types.ListToolsResult(tools=[_tool(d) for d in definitions])
    names = frozenset(d["name"] for d in definitions)

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


async def serve_stdio(graph: CapabilityGraph) -> None:
    """Serve ``graph`` over this process's stdin/stdout until stdin closes."""
    server = build_server(graph)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
