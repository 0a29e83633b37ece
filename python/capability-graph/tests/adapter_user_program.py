"""A user's program that hands the Tool Adapter's exports to the official openai and anthropic
SDKs, as their documentation shows, and runs the tool calls the models ask for.

The typing session checks it with ``mypy --strict`` against the SDKs' own parameter types
(``tools=adapter.openai_chat_tools()`` and its two siblings must need no cast), and
``test_adapter_sdks.py`` runs it: each SDK sends its request to an in-process transport that
records the ``tools`` the SDK serialized and answers with one tool call, which the program runs
through the adapter. It prints one line per API.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import httpx2
import openai

from capability_graph import CapabilityGraph, ToolAdapter

CONFIG: dict[str, Any] = {
    "providers": [
        {
            "definition": {
                "providerId": "acme",
                "name": "Acme",
                "version": "1",
                "capabilities": [
                    {"id": "a", "name": "Validate input", "description": "Validate a body."}
                ],
            }
        }
    ]
}

#: What each API answers: one call of list_capabilities with {"limit": 1}.
CHAT_ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call-1",
                        "type": "function",
                        "function": {"name": "list_capabilities", "arguments": '{"limit": 1}'},
                    }
                ],
            },
        }
    ],
}
RESPONSES_ANSWER = {
    "id": "resp-1",
    "object": "response",
    "created_at": 0,
    "model": "m",
    "status": "completed",
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "output": [
        {
            "type": "function_call",
            "id": "fc-1",
            "call_id": "call-1",
            "name": "list_capabilities",
            "arguments": '{"limit": 1}',
            "status": "completed",
        }
    ],
}
MESSAGES_ANSWER = {
    "id": "msg-1",
    "type": "message",
    "role": "assistant",
    "model": "m",
    "content": [
        {"type": "tool_use", "id": "tu-1", "name": "list_capabilities", "input": {"limit": 1}}
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def http_client(answer: dict[str, Any], sent: list[Any]) -> httpx2.Client:
    """An HTTP client whose transport records each request's ``tools`` and answers ``answer``."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content)["tools"])
        return httpx2.Response(200, json=answer)

    return httpx2.Client(transport=httpx2.MockTransport(handle))


def report(api: str, sent: list[Any], expected: list[Any], outcome: dict[str, Any]) -> None:
    as_sent = "as exported" if sent == [json.loads(json.dumps(expected))] else "CHANGED"
    ok = "ok" if outcome["ok"] else outcome["error"]["code"]
    print(f"{api}: {len(expected)} tools sent {as_sent}; list_capabilities -> {ok}")


async def main() -> None:
    async with CapabilityGraph.open(CONFIG) as graph:
        adapter = ToolAdapter(graph)
        sent: list[Any] = []
        chat = openai.OpenAI(api_key="k", http_client=http_client(CHAT_ANSWER, sent))
        tools = adapter.openai_chat_tools()
        completion = chat.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "what can you do?"}], tools=tools
        )
        for call in completion.choices[0].message.tool_calls or []:
            if call.type == "function":
                outcome = await adapter.call(call.function.name, call.function.arguments)
                report("chat.completions", sent, tools, outcome)

        sent = []
        responses = openai.OpenAI(api_key="k", http_client=http_client(RESPONSES_ANSWER, sent))
        response_tools = adapter.openai_responses_tools()
        response = responses.responses.create(
            model="m", input="what can you do?", tools=response_tools
        )
        for item in response.output:
            if item.type == "function_call":
                outcome = await adapter.call(item.name, item.arguments)
                report("responses", sent, response_tools, outcome)

        sent = []
        messages = anthropic.Anthropic(api_key="k", http_client=http_client(MESSAGES_ANSWER, sent))
        anthropic_tools = adapter.anthropic_tools()
        message = messages.messages.create(
            model="m",
            max_tokens=64,
            messages=[{"role": "user", "content": "what can you do?"}],
            tools=anthropic_tools,
        )
        for block in message.content:
            if block.type == "tool_use":
                outcome = await adapter.call(block.name, block.input)
                report("messages", sent, anthropic_tools, outcome)


asyncio.run(main())
