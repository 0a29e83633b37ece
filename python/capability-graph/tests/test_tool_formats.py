"""The Tool Adapter's exports, validated offline against the real SDKs' request types.

Each format is checked with pydantic against the ``TypedDict`` the vendor's SDK declares for a
``tools`` entry, with unknown keys forbidden (a TypedDict would otherwise ignore them): the
OpenAI Chat Completions ``ChatCompletionToolParam``, the OpenAI Responses API
``FunctionToolParam`` and the Anthropic Messages ``ToolParam``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import ConfigDict, TypeAdapter, ValidationError

from capability_graph import BlockingCapabilityGraph, BlockingToolAdapter

EMPTY = {"providers": []}
SDK_TYPES: dict[str, Any] = {
    "chat_completions": ChatCompletionToolParam,
    "responses": FunctionToolParam,
    "anthropic": ToolParam,
}
EXPORTS: dict[str, Callable[[BlockingToolAdapter], list[dict[str, Any]]]] = {
    "chat_completions": BlockingToolAdapter.openai_chat_tools,
    "responses": BlockingToolAdapter.openai_responses_tools,
    "anthropic": BlockingToolAdapter.anthropic_tools,
}


def sdk_validator(sdk_type: Any) -> TypeAdapter[list[Any]]:
    # The config applies to the TypedDicts inside the list (they carry no config of their own).
    return TypeAdapter(list[sdk_type], config=ConfigDict(extra="forbid"))


@pytest.fixture(scope="module")
def adapter() -> Any:
    with BlockingCapabilityGraph.open(EMPTY) as graph:
        yield BlockingToolAdapter(graph)


def test_chat_completions_export_is_the_openai_sdk_chat_completion_tool_param(
    adapter: BlockingToolAdapter,
) -> None:
    exported = adapter.openai_chat_tools()
    assert sdk_validator(ChatCompletionToolParam).validate_python(exported) == exported


def test_responses_export_is_the_openai_sdk_function_tool_param(
    adapter: BlockingToolAdapter,
) -> None:
    exported = adapter.openai_responses_tools()
    assert sdk_validator(FunctionToolParam).validate_python(exported) == exported


def test_anthropic_export_is_the_anthropic_sdk_tool_param(adapter: BlockingToolAdapter) -> None:
    exported = adapter.anthropic_tools()
    assert sdk_validator(ToolParam).validate_python(exported) == exported


@pytest.mark.parametrize(
    ("sdk", "export"),
    [(sdk, export) for sdk in SDK_TYPES for export in EXPORTS if sdk != export],
)
def test_each_sdk_type_rejects_the_other_formats(
    adapter: BlockingToolAdapter, sdk: str, export: str
) -> None:
    # The validation above can fail: the Chat Completions shape is what the Responses API
    # rejected before it had its own export.
    with pytest.raises(ValidationError):
        sdk_validator(SDK_TYPES[sdk]).validate_python(EXPORTS[export](adapter))
