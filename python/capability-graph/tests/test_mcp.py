"""The MCP server: in memory with the SDK's Client, over real stdio with ClientSession, and in
raw JSON-RPC lines (garbage, null arguments, cancellation)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from capability_graph import CapabilityGraph, GraphError
from capability_graph._core.schemas import load_schema
from capability_graph._surfaces.mcp import build_server
from capability_graph_testing.common import expected, schema_validator
from capability_graph_testing.surfaces import (
    DOCUMENT_TEXT,
    INITIALIZE,
    INITIALIZED,
    SECRET_TEXT,
    McpStdio,
    RawMcp,
    cli,
    scripted,
    sleeping,
    wire,
    write_graph,
)

TOOLS = load_schema("tools.json")["tools"]
MCP_RESULT = schema_validator("mcp-tool-result.schema.json")


class Recorder:
    """A graph stand-in that records how each core call ended (result or error object)."""

    def __init__(self, graph: CapabilityGraph) -> None:
        self.graph = graph
        self.outcomes: list[tuple[str, Any]] = []

    async def call(self, tool: str, arguments: Any, *, cancel: Any = None) -> dict[str, Any]:
        try:
            result = await self.graph.call(tool, arguments, cancel=cancel)
        except GraphError as error:
            self.outcomes.append(("error", error.to_json()))
            raise
        self.outcomes.append(("result", result))
        return result


def in_memory(config: Path, scenario: Any, *, mode: str = "auto") -> Any:
    """Run ``scenario(client, recorder)`` against an in-memory server over ``config``."""

    async def main() -> Any:
        async with await CapabilityGraph.open(config) as graph:
            recorder = Recorder(graph)
            server = build_server(recorder)  # type: ignore[arg-type]
            async with Client(server, mode=mode) as client:
                return await scenario(client, recorder)

    return asyncio.run(asyncio.wait_for(main(), 60))


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp")


@pytest.fixture(scope="module")
def matched_config(graph_dir: Path) -> Path:
    directory = graph_dir / "matched"
    directory.mkdir()
    return write_graph(
        directory,
        model=scripted(
            {"return": {"status": "matched", "candidates": [{"id": "acme::a", "confidence": 0.5}]}}
        ),
    )


@pytest.fixture(scope="module")
def sleepy_config(graph_dir: Path) -> Path:
    directory = graph_dir / "sleepy"
    directory.mkdir()
    return write_graph(directory, model=sleeping(10_000))


@pytest.fixture(scope="module")
def stdio(sleepy_config: Path) -> Iterator[McpStdio]:
    """One server process (over real stdio) shared by the stdio tests of this module."""
    server = McpStdio(sleepy_config)
    try:
        yield server
    finally:
        server.close()


# --- in memory ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_list_tools_serves_the_spec_tools(matched_config: Path, mode: str) -> None:
    async def scenario(client: Client, recorder: Recorder) -> Any:
        return await client.list_tools()

    listed = in_memory(matched_config, scenario, mode=mode)
    tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]
    assert tools == TOOLS


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_success_has_structured_content_and_the_same_json_as_text(
    matched_config: Path, mode: str
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("describe_graph", {}),
        ("list_capabilities", {"tags": ["schema"]}),
        ("resolve_capabilities", {"ids": ["acme::a"], "relations": {"depth": 2}}),
        ("match_capabilities", {"request": "validate input"}),
        ("read_document", {"capabilityId": "acme::a", "documentId": "guide"}),
    ]

    async def scenario(client: Client, recorder: Recorder) -> Any:
        return [await client.call_tool(name, arguments) for name, arguments in calls], recorder

    results, recorder = in_memory(matched_config, scenario, mode=mode)
    for result, (kind, core_result) in zip(results, recorder.outcomes, strict=True):
        data = wire(result)
        MCP_RESULT.validate(data)
        assert kind == "result"
        assert data == {
            "content": [
                {
                    "type": "text",
                    "text": json.dumps(core_result, ensure_ascii=False, separators=(",", ":")),
                }
            ],
            "structuredContent": core_result,
        }
    assert wire(results[-1])["structuredContent"]["text"] == DOCUMENT_TEXT


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_failure_is_is_error_with_one_text_item_and_no_structured_content(
    matched_config: Path, mode: str
) -> None:
    async def scenario(client: Client, recorder: Recorder) -> Any:
        return await client.call_tool("resolve_capabilities", {"ids": ["acme::missing"]})

    data = wire(in_memory(matched_config, scenario, mode=mode))
    MCP_RESULT.validate(data)
    assert data == {
        "content": [
            {
                "type": "text",
                "text": '{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query",'
                '"message":"Requested capability does not exist","nextAction":"refresh"}',
            }
        ],
        "isError": True,
    }


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("list_capabilities", {"limit": "5"}, ("CG_INPUT_INVALID", "query")),
        ("list_capabilities", {"limit": None}, ("CG_INPUT_INVALID", "query")),
        ("resolve_capabilities", {}, ("CG_INPUT_INVALID", "query")),
        ("resolve_capabilities", {"ids": ["vault::secrets"]}, ("CG_ACCESS_DENIED", "query")),
        (
            "match_capabilities",
            {"request": "x", "context": {"a": {"b": 1}}},
            ("CG_CONTEXT_INVALID", "match"),
        ),
        (
            "read_document",
            {"capabilityId": "acme::a", "documentId": "upstream"},
            ("CG_DOCUMENT_REFERENCE_ONLY", "document"),
        ),
        (
            "read_document",
            {"capabilityId": "acme::a", "documentId": "gone"},
            ("CG_DOCUMENT_NOT_FOUND", "document"),
        ),
    ],
)
def test_invalid_arguments_and_errors_are_is_error_results(
    matched_config: Path, name: str, arguments: Any, error: tuple[str, str]
) -> None:
    async def scenario(client: Client, recorder: Recorder) -> Any:
        return await client.call_tool(name, arguments), recorder

    result, recorder = in_memory(matched_config, scenario)
    data = wire(result)
    MCP_RESULT.validate(data)
    assert data["isError"] is True
    assert "structuredContent" not in data
    assert json.loads(data["content"][0]["text"]) == recorder.outcomes[-1][1]
    assert (recorder.outcomes[-1][1]["code"], recorder.outcomes[-1][1]["phase"]) == error


def test_unknown_tool_is_a_protocol_error_not_is_error(matched_config: Path) -> None:
    async def scenario(client: Client, recorder: Recorder) -> Any:
        with pytest.raises(MCPError) as excinfo:
            await client.call_tool("drop_tables", {"ids": [SECRET_TEXT]})
        return excinfo.value, recorder

    error, recorder = in_memory(matched_config, scenario, mode="legacy")
    assert error.code == -32602
    assert error.message == "Unknown tool"
    assert SECRET_TEXT not in repr(error.error)
    assert recorder.outcomes == []  # never reached the core


def test_executor_failure_does_not_leak(graph_dir: Path) -> None:
    directory = graph_dir / "leaky"
    directory.mkdir()
    config = write_graph(directory, model=scripted({"raiseException": f"{SECRET_TEXT} at /home/x"}))

    async def scenario(client: Client, recorder: Recorder) -> Any:
        return await client.call_tool("match_capabilities", {"request": "x"})

    data = wire(in_memory(config, scenario))
    assert json.loads(data["content"][0]["text"]) == expected("CG_MODEL_UNAVAILABLE", "match")
    assert SECRET_TEXT not in json.dumps(data)


def test_a_defect_in_the_core_becomes_a_bare_internal_error(matched_config: Path) -> None:
    class Broken:
        async def call(self, tool: str, arguments: Any, *, cancel: Any = None) -> Any:
            raise RuntimeError(f"defect {SECRET_TEXT}")

    async def main() -> MCPError:
        async with Client(build_server(Broken()), mode="legacy") as client:  # type: ignore[arg-type]
            with pytest.raises(MCPError) as excinfo:
                await client.call_tool("describe_graph", {})
            return excinfo.value

    error = asyncio.run(main())
    assert (error.code, error.message, error.data) == (-32603, "Internal error", None)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_cancelled_match_ends_with_model_cancelled(sleepy_config: Path, mode: str) -> None:
    async def scenario(client: Client, recorder: Recorder) -> Any:
        started = time.monotonic()
        with anyio.move_on_after(0.3):
            await client.call_tool("match_capabilities", {"request": "x"})
        while not recorder.outcomes:
            await asyncio.sleep(0.01)
        elapsed = time.monotonic() - started
        # The server keeps serving after the cancelled call.
        after = await client.call_tool("describe_graph", {})
        return recorder.outcomes, elapsed, after

    outcomes, elapsed, after = in_memory(sleepy_config, scenario, mode=mode)
    assert outcomes[0] == ("error", expected("CG_MODEL_CANCELLED", "match"))
    assert elapsed < 3  # the executor (sleeping 10 s) was stopped
    assert not after.is_error


# --- over real stdio ----------------------------------------------------------------------------


def test_stdio_initialize_and_list_tools(stdio: McpStdio) -> None:
    info = stdio.initialize_result
    assert info.server_info.name == "capability-graph"
    assert info.capabilities.tools is not None
    assert "describe_graph" in (info.instructions or "")

    async def go(session: Any) -> Any:
        return await session.list_tools()

    listed = stdio.run(go)
    assert [
        t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools
    ] == TOOLS


def test_stdio_success_and_failure(stdio: McpStdio) -> None:
    data = stdio.call_tool("describe_graph")  # no arguments at all: treated as {}
    MCP_RESULT.validate(data)
    assert data["structuredContent"]["scope"] == {"providers": ["acme"]}
    assert json.loads(data["content"][0]["text"]) == data["structuredContent"]

    data = stdio.call_tool("read_document", {"capabilityId": "acme::a", "documentId": "guide"})
    assert data["structuredContent"]["text"] == DOCUMENT_TEXT

    data = stdio.call_tool("resolve_capabilities", {"ids": ["acme::missing"]})
    MCP_RESULT.validate(data)
    assert json.loads(data["content"][0]["text"]) == expected("CG_CAPABILITY_NOT_FOUND", "query")


def test_stdio_unknown_tool_is_invalid_params(stdio: McpStdio) -> None:
    async def go(session: Any) -> MCPError:
        with pytest.raises(MCPError) as excinfo:
            await session.call_tool("nope", {})
        return excinfo.value

    assert stdio.run(go).code == -32602


def test_stdio_cancel_stops_the_match_and_the_server_keeps_answering(stdio: McpStdio) -> None:
    async def go(session: Any) -> float:
        started = time.monotonic()
        with anyio.move_on_after(0.3):
            await session.call_tool("match_capabilities", {"request": "x"})
        await session.call_tool("describe_graph", {})
        return time.monotonic() - started

    assert stdio.run(go) < 3

    # Concurrent calls still work after a cancellation.
    async def concurrent(session: Any) -> list[Any]:
        return list(
            await asyncio.gather(*(session.call_tool("describe_graph", {}) for _ in range(5)))
        )

    assert all(not r.is_error for r in stdio.run(concurrent))
    assert "Traceback" not in stdio.stderr()


def test_raw_stdio_garbage_null_arguments_and_protocol_errors(sleepy_config: Path) -> None:
    raw = RawMcp(sleepy_config)
    try:
        raw.send(INITIALIZE)
        assert raw.receive()["result"]["serverInfo"]["name"] == "capability-graph"
        raw.send(INITIALIZED)
        for garbage in [
            b"not json",
            b"{",
            b"[]",
            b'{"jsonrpc": "2.0"}',
            b'{"jsonrpc":"2.0","id":"x","method":5}',
            b"\xff\xfe\x00 binary",
            b'{"id": 1, "method": "tools/list"}',
            SECRET_TEXT.encode(),
        ]:
            raw.send(garbage)
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        answers = {}
        while 1 not in answers:
            message = raw.receive()
            answers[message.get("id")] = message
        assert len(answers[1]["result"]["tools"]) == 5

        raw.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "describe_graph", "arguments": None},
            }
        )
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "describe_graph", "arguments": [1]},
            }
        )
        raw.send({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"})
        raw.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"arguments": {}}})
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "tools/call",
                "params": {"name": "match_capabilities", "arguments": {"request": "x"}},
            }
        )
        raw.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6}}
        )
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "list_capabilities", "arguments": {}},
            }
        )
        while 7 not in answers:
            message = raw.receive()
            answers[message.get("id")] = message
        null_arguments = answers[2]["result"]
        assert null_arguments["isError"] is True
        assert "structuredContent" not in null_arguments
        assert json.loads(null_arguments["content"][0]["text"]) == expected(
            "CG_INPUT_INVALID", "query", "/ must be an object"
        )
        assert json.loads(answers[3]["result"]["content"][0]["text"]) == expected(
            "CG_INPUT_INVALID", "query", "/ must be an object"
        )  # not an object: the core's error, like null (CG-MCP-7)
        assert answers[4]["error"]["code"] == -32601
        assert answers[5]["error"]["code"] == -32602
        assert answers[7]["result"]["structuredContent"]["status"] == "ok"
    finally:
        status, stderr = raw.close()
    assert 6 not in answers  # a cancelled request is never answered
    assert status == 0
    assert b"Traceback" not in stderr
    assert SECRET_TEXT.encode() not in stderr


def test_mcp_command_with_a_bad_config_fails_before_serving(tmp_path: Path) -> None:
    run = cli("mcp", "--config", str(tmp_path / "missing.json"))
    assert run.status == 1
    assert run.envelope()["error"] == expected(
        "CG_CONFIG_INVALID", "config", "Cannot read a valid bounded JSON configuration file"
    )


# --- every request is answered (CG-MCP-6 .. CG-MCP-9) -------------------------------------------


def _call_frame(ident: Any, params_text: str) -> bytes:
    frame = '{"jsonrpc":"2.0","id":' + json.dumps(ident) + ',"method":"tools/call","params":'
    return (frame + params_text + "}").encode()


def _answer(raw: RawMcp, ident: Any, timeout: float = 30) -> dict[str, Any]:
    while True:
        message = raw.receive(timeout=timeout)
        if message.get("id") == ident:
            return message


def _tool_error(answer: dict[str, Any]) -> dict[str, Any]:
    result = answer["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result
    error: dict[str, Any] = json.loads(result["content"][0]["text"])
    return error


@pytest.fixture(scope="module")
def raw(matched_config: Path) -> Iterator[RawMcp]:
    server = RawMcp(matched_config)
    server.send(INITIALIZE)
    server.receive(timeout=60)
    server.send(INITIALIZED)
    yield server
    status, stderr = server.close()
    assert status == 0
    assert b"Traceback" not in stderr


def _still_serving(raw: RawMcp) -> None:
    raw.send(_call_frame("alive", '{"name":"describe_graph"}'))
    assert "isError" not in _answer(raw, "alive")["result"]


@pytest.mark.parametrize(
    ("params", "error"),
    [
        (
            '{"name":"list_capabilities","arguments":{"tags":["\\ud800"]}}',
            expected("CG_INPUT_INVALID", "query", "/tags/0 a string has a lone surrogate"),
        ),
        (
            '{"name":"describe_graph","arguments":{"\\udc00":1}}',
            expected("CG_INPUT_INVALID", "query", "/ a string has a lone surrogate"),
        ),
        (
            '{"name":"match_capabilities","arguments":{"request":"x","context":{"a":"\\ud800"}}}',
            expected(
                "CG_CONTEXT_INVALID",
                "match",
                "/context values must be strings of valid Unicode text",
            ),
        ),
        (
            '{"name":"list_capabilities","arguments":{"tags":' + "[" * 300 + "]" * 300 + "}}",
            expected("CG_INPUT_INVALID", "query", "/tags" + "/0" * 32 + " nesting deeper than 32"),
        ),
    ],
)
def test_arguments_the_sdk_cannot_parse_are_answered_by_the_core(
    raw: RawMcp, params: str, error: dict[str, Any]
) -> None:
    raw.send(_call_frame(31, params))
    assert _tool_error(_answer(raw, 31)) == error
    _still_serving(raw)


@pytest.mark.parametrize("levels", [10_000, 1_000_000])
def test_arguments_nested_any_depth_are_answered_within_a_bound(raw: RawMcp, levels: int) -> None:
    from capability_graph._core.operations import parse_arguments_text

    arguments = '{"tags":' + "[" * levels + "]" * levels + "}"
    with pytest.raises(GraphError) as core:  # the core's verdict on the same text
        parse_arguments_text("list_capabilities", arguments)
    started = time.monotonic()
    raw.send(_call_frame(32, '{"name":"list_capabilities","arguments":' + arguments + "}"))
    answer = _answer(raw, 32, timeout=60)
    assert time.monotonic() - started < 30
    assert _tool_error(answer) == core.value.to_json()
    _still_serving(raw)


@pytest.mark.parametrize("arguments", ["null", "[]", '"x"', "1", "true"])
def test_arguments_that_are_not_an_object_are_is_error(raw: RawMcp, arguments: str) -> None:
    raw.send(_call_frame(33, '{"name":"describe_graph","arguments":' + arguments + "}"))
    assert _tool_error(_answer(raw, 33)) == expected(
        "CG_INPUT_INVALID", "query", "/ must be an object"
    )


@pytest.mark.parametrize(
    "params",
    ['{"name":"nope","arguments":{}}', '{"name":5}', '{"arguments":{}}', '{"name":"\\ud800"}'],
)
def test_a_name_of_no_tool_is_exactly_unknown_tool(raw: RawMcp, params: str) -> None:
    raw.send(_call_frame(34, params))
    assert _answer(raw, 34) == {
        "jsonrpc": "2.0",
        "id": 34,
        "error": {"code": -32602, "message": "Unknown tool"},
    }
    raw.send(b'{"jsonrpc":"2.0","id":35,"method":"tools/call"}')
    assert _answer(raw, 35)["error"] == {"code": -32602, "message": "Unknown tool"}


@pytest.mark.parametrize(
    "extra",
    [
        ',"_meta":{"progressToken":1}',
        ',"_meta":5',
        ',"_meta":{"a":"\\ud800"}',
        ',"unknown":1',
        ',"capability-graph/screened":{"nonce":"","arguments":"[]"}',
    ],
)
def test_other_params_members_do_not_change_the_outcome(raw: RawMcp, extra: str) -> None:
    raw.send(_call_frame(36, '{"name":"describe_graph","arguments":{}' + extra + "}"))
    result = _answer(raw, 36)["result"]
    assert set(result) == {"content", "structuredContent"}  # no isError on success


def test_another_request_the_sdk_cannot_parse_is_answered_parse_error(raw: RawMcp) -> None:
    raw.send(b'{"jsonrpc":"2.0","id":37,"method":"tools/list","params":{"_meta":{"a":"\\ud800"}}}')
    assert _answer(raw, 37)["error"] == {"code": -32700, "message": "Parse error"}
    _still_serving(raw)


def test_initialize_carries_the_instructions_text(raw: RawMcp) -> None:
    from capability_graph._surfaces.mcp import INSTRUCTIONS

    assert INSTRUCTIONS == (
        "Capability Graph: discover what the configured products and services can do. "
        "Call describe_graph first, then list_capabilities or match_capabilities to find "
        "capabilities, resolve_capabilities for their details, relations and documents, and "
        "read_document for a local document's text. A failed call returns isError with a JSON "
        "error object whose nextAction says what to do next."
    )
