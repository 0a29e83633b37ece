"""The Tool Adapter: the five operations as LLM function-calling tools (CG-TOOL-1, CG-TOOL-2).

``ToolAdapter(graph)`` exposes the tools of ``spec/capability-graph/tools.json`` (name, title,
description, input and output JSON Schemas, annotations), their function-calling forms for the
OpenAI Chat Completions API, the OpenAI Responses API and the Anthropic Messages API, and
``call(name, arguments)``, which always answers with an outcome::

    {"ok": true, "result": {...}}     the tool's JSON result
    {"ok": false, "error": {...}}     the GraphError object (code, phase, message[, nextAction])

It is a thin projection of ``CapabilityGraph.call``: the core validates the arguments, applies
the precedence rules and answers an unknown tool name with ``CG_INPUT_INVALID``/``query``.
The adapter never raises a GraphError. Anything else the core raised would be a defect of the
core (the core projects every executor failure itself), so it is *not* disguised as a contract
outcome: it propagates unchanged, as does ``asyncio.CancelledError``.

``BlockingToolAdapter`` is the same over ``BlockingCapabilityGraph``, without ``await``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .._core.errors import GraphError
from .._core.tool_definitions import tool_definitions, tool_documents, tool_names

if TYPE_CHECKING:
    # The function-calling forms are typed as the official SDKs' own parameter types, so that
    # ``tools=adapter.openai_chat_tools()`` passes ``mypy --strict`` (a TypedDict of our own
    # would have to repeat every key of the SDK's, and break with each SDK release that adds
    # one). Only the type checker imports them: without the SDK installed, they are ``Any``.
    from anthropic.types import ToolParam as AnthropicTool
    from openai.types.chat import ChatCompletionFunctionToolParam as OpenAIChatTool
    from openai.types.responses import FunctionToolParam as OpenAIResponsesTool

    from .._core.cancel import CancelToken
    from .._core.graph import CapabilityGraph

__all__ = [
    "BlockingToolAdapter",
    "ToolAdapter",
    "anthropic_tools",
    "openai_chat_tools",
    "openai_responses_tools",
    "tool_definitions",
    "tool_names",
]


class BlockingGraph(Protocol):
    """What the blocking adapter needs of its graph: ``call`` without ``await``, as
    [BlockingCapabilityGraph][capability_graph.BlockingCapabilityGraph] has it (named by its
    shape, so that this surface does not import the SDK's)."""

    def call(
        self, tool: str, arguments: Any, *, cancel: CancelToken | None = None
    ) -> dict[str, Any]: ...


# None of the OpenAI forms is ``strict``: strict mode requires every property to be required, and
# the contract's optional keys must stay omittable (null is not omission).


def _openai(tool: Mapping[str, Any]) -> OpenAIChatTool:
    # A Chat Completions ``tools`` entry (``strict`` defaults to false there, so it is left out).
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool["description"],
            "parameters": copy.deepcopy(tool["inputSchema"]),
        },
    }


def _openai_responses(tool: Mapping[str, Any]) -> OpenAIResponsesTool:
    # A Responses API function tool. ``strict`` is stated: the SDK's ``FunctionToolParam``
    # requires the key, and the Responses API makes function tools strict by default.
    return {
        "type": "function",
        "name": tool["name"],
        "description": tool["description"],
        "parameters": copy.deepcopy(tool["inputSchema"]),
        "strict": False,
    }


def _anthropic(tool: Mapping[str, Any]) -> AnthropicTool:
    return {
        "name": tool["name"],
        "description": tool["description"],
        "input_schema": copy.deepcopy(tool["inputSchema"]),
    }


def _success(result: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "result": result}


def _failure(error: GraphError) -> dict[str, Any]:
    return {"ok": False, "error": error.to_json()}


def openai_chat_tools() -> list[OpenAIChatTool]:
    """The tools in the OpenAI Chat Completions format:
    ``{"type": "function", "function": {"name", "description", "parameters"}}``, typed as the
    openai SDK's ``ChatCompletionFunctionToolParam`` (pass them as ``tools=``).

    OpenAI delivers a call's arguments as JSON text: pass it to ``call`` as it is.
    """
    return [_openai(tool) for tool in tool_documents()]


def openai_responses_tools() -> list[OpenAIResponsesTool]:
    """The tools in the OpenAI Responses API format:
    ``{"type": "function", "name", "description", "parameters", "strict": false}``, typed as
    the openai SDK's ``FunctionToolParam``.

    A ``function_call`` output item's ``arguments`` is JSON text, as in Chat Completions: pass it
    to ``call`` as it is and answer with a ``function_call_output`` item carrying the same
    ``call_id``.
    """
    return [_openai_responses(tool) for tool in tool_documents()]


def anthropic_tools() -> list[AnthropicTool]:
    """The tools in the Anthropic Messages format: ``{"name", "description", "input_schema"}``,
    typed as the anthropic SDK's ``ToolParam``.

    A ``tool_use`` block's ``input`` is passed to ``call`` as it is.
    """
    return [_anthropic(tool) for tool in tool_documents()]


class _Exports:
    """The tool lists, shared by both adapters (the same as the module's functions, which need
    no graph)."""

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools: ``name``, ``title``, ``description``, ``inputSchema``, ``outputSchema``,
        ``annotations`` (a fresh copy on each access)."""
        return tool_definitions()

    def openai_chat_tools(self) -> list[OpenAIChatTool]:
        """The tools in the OpenAI Chat Completions format (see
        [openai_chat_tools][capability_graph.openai_chat_tools])."""
        return openai_chat_tools()

    def openai_responses_tools(self) -> list[OpenAIResponsesTool]:
        """The tools in the OpenAI Responses API format (see
        [openai_responses_tools][capability_graph.openai_responses_tools])."""
        return openai_responses_tools()

    def anthropic_tools(self) -> list[AnthropicTool]:
        """The tools in the Anthropic Messages format (see
        [anthropic_tools][capability_graph.anthropic_tools])."""
        return anthropic_tools()


class ToolAdapter(_Exports):
    """Tools over an open [CapabilityGraph][capability_graph.CapabilityGraph] (async)."""

    def __init__(self, graph: CapabilityGraph) -> None:
        self.graph = graph

    def __repr__(self) -> str:
        return f"ToolAdapter({self.graph!r})"

    async def call(
        self, name: str, arguments: Any, *, cancel: CancelToken | None = None
    ) -> dict[str, Any]:
        """Run tool ``name`` with the JSON ``arguments``; return ``{"ok", "result" | "error"}``.

        ``arguments`` is the request as a value or as JSON text (a model's tool call arguments
        as they arrive). ``cancel`` (a [CancelToken][capability_graph.CancelToken]) cancels a
        running ``match_capabilities``, which then answers ``CG_MODEL_CANCELLED``.
        """
        try:
            return _success(await self.graph.call(name, arguments, cancel=cancel))
        except GraphError as error:
            return _failure(error)


class BlockingToolAdapter(_Exports):
    """Tools over an open [BlockingCapabilityGraph][capability_graph.BlockingCapabilityGraph]:
    the same methods, without ``await``."""

    def __init__(self, graph: BlockingGraph) -> None:
        self.graph = graph

    def __repr__(self) -> str:
        return f"BlockingToolAdapter({self.graph!r})"

    def call(
        self, name: str, arguments: Any, *, cancel: CancelToken | None = None
    ) -> dict[str, Any]:
        """Run tool ``name`` with the JSON ``arguments``; return ``{"ok", "result" | "error"}``."""
        try:
            return _success(self.graph.call(name, arguments, cancel=cancel))
        except GraphError as error:
            return _failure(error)
