"""Requests given as JSON text: one parser on every surface (duplicate member names and integer
literals too long to convert are ``CG_INPUT_INVALID``, never "last wins", never silence).

The core function is :func:`capability_graph._core.operations.parse_arguments_text`; the MCP server
screens every frame with the same rules before the SDK parses it (the SDK keeps the last of
duplicate names, and drops a frame with an integer of more than 4,300 digits unanswered).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capability_graph import GraphError
from capability_graph_testing.battery import battery_settings
from capability_graph_testing.common import expected
from capability_graph_testing.surfaces import INITIALIZE, INITIALIZED, RawMcp, write_graph


def parse_arguments_text(tool: str, text: str | bytes, **options: Any) -> Any:
    from capability_graph._core.operations import parse_arguments_text as core

    return core(tool, text, **options)


DUPLICATE_AT_ROOT = expected("CG_INPUT_INVALID", "query", "/ an object has a duplicate key")
HUGE = "9" * 5000
LIMIT_HUGE = '{"limit": ' + HUGE + "}"


def error_of_text(tool: str, text: str | bytes) -> dict[str, Any]:
    with pytest.raises(GraphError) as caught:
        parse_arguments_text(tool, text)
    return caught.value.to_json()


# --- the core function --------------------------------------------------------------------------


def test_a_duplicate_member_name_is_input_invalid_in_the_tools_phase() -> None:
    assert error_of_text("list_capabilities", '{"limit": 1, "limit": 2}') == DUPLICATE_AT_ROOT
    assert error_of_text("match_capabilities", '{"request": "a", "request": "b"}') == expected(
        "CG_INPUT_INVALID", "match", "/ an object has a duplicate key"
    )


def test_a_duplicate_in_a_nested_object_names_its_pointer() -> None:
    text = '{"request": "x", "context": {"facts": {"a": 1, "a": 2}}}'
    error = error_of_text("match_capabilities", text)
    assert error["code"] == "CG_INPUT_INVALID"
    assert error["message"].endswith("an object has a duplicate key")
    assert error["message"] != "/ an object has a duplicate key"  # it names where


def test_an_integer_too_long_to_convert_is_input_invalid() -> None:
    assert error_of_text("list_capabilities", LIMIT_HUGE) == expected(
        "CG_INPUT_INVALID", "query", "/limit integers must stay within +/-2^53"
    )
    assert error_of_text("list_capabilities", '{"limit": -' + HUGE + "}")["code"] == (
        "CG_INPUT_INVALID"
    )


def test_a_well_formed_text_is_its_value() -> None:
    text = '{"request": "x", "context": {"n": 1}, "limit": 3}'
    assert parse_arguments_text("match_capabilities", text) == json.loads(text)


def test_a_text_over_max_input_bytes_is_input_too_large_before_it_is_parsed() -> None:
    with pytest.raises(GraphError) as caught:
        parse_arguments_text("list_capabilities", "[" * 100, max_input_bytes=10)
    assert caught.value.to_json() == expected("CG_INPUT_TOO_LARGE", "query")


@given(text=st.one_of(st.text(max_size=200), st.binary(max_size=200).map(bytes)))
@battery_settings(200)
def test_any_text_is_a_value_or_input_invalid(text: str | bytes) -> None:
    outcome: Any
    try:
        outcome = parse_arguments_text("describe_graph", text)
    except GraphError as error:
        outcome = error.to_json()
        assert (outcome["code"], outcome["phase"]) == ("CG_INPUT_INVALID", "query")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=20,
)


@given(
    value=st.dictionaries(st.text(max_size=4), JSON_VALUES, min_size=1, max_size=4), data=st.data()
)
@battery_settings(100)
def test_a_duplicate_inserted_anywhere_is_always_refused(
    value: dict[str, Any], data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(value)))
    text = json.dumps(value)
    # Repeat the first member at the end of the root object.
    doubled = text[:-1] + ", " + json.dumps(name) + ": " + json.dumps(value[name]) + "}"
    assert error_of_text("list_capabilities", doubled) == DUPLICATE_AT_ROOT


# --- MCP over real stdio, raw frames ------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawMcp]:
    mcp = RawMcp(write_graph(tmp_path_factory.mktemp("frames")))
    mcp.send(INITIALIZE)
    mcp.receive(timeout=60)
    mcp.send(INITIALIZED)
    yield mcp
    status, stderr = mcp.close()
    assert status == 0
    assert b"Traceback" not in stderr


def call_frame(ident: Any, name: str, arguments_text: str) -> bytes:
    envelope = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": name}}
    text = json.dumps(envelope)
    # The arguments text goes in verbatim: json.dumps would merge duplicates and refuse HUGE.
    return (text[:-2] + ', "arguments": ' + arguments_text + "}}").encode()


def tool_error(answer: dict[str, Any]) -> dict[str, Any]:
    result = answer["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result
    (item,) = result["content"]
    error: dict[str, Any] = json.loads(item["text"])
    return error


def still_serving(server: RawMcp) -> None:
    server.send(call_frame(99, "list_capabilities", '{"limit": 1}'))
    answer = server.receive(timeout=60)
    assert answer["id"] == 99
    assert answer["result"]["structuredContent"]["items"][0]["id"] == "acme::a"


@pytest.mark.parametrize(
    "arguments_text",
    ['{"limit": 1, "limit": 2}', '{"providers": ["acme"], "tags": ["http"], "providers": ["x"]}'],
)
def test_tools_call_arguments_with_a_duplicate_name_are_input_invalid(
    server: RawMcp, arguments_text: str
) -> None:
    server.send(call_frame(7, "list_capabilities", arguments_text))
    answer = server.receive(timeout=60)
    assert answer["id"] == 7
    assert tool_error(answer) == DUPLICATE_AT_ROOT
    still_serving(server)


def test_a_nested_duplicate_in_tools_call_arguments_is_input_invalid(server: RawMcp) -> None:
    arguments_text = '{"request": "x", "context": {"a": {"b": 1, "b": 2}}}'
    server.send(call_frame("n", "match_capabilities", arguments_text))
    answer = server.receive(timeout=60)
    assert answer["id"] == "n"
    assert tool_error(answer) == error_of_text("match_capabilities", arguments_text)


def test_tools_call_with_a_5000_digit_integer_is_answered_input_invalid(server: RawMcp) -> None:
    server.send(call_frame(8, "list_capabilities", LIMIT_HUGE))
    answer = server.receive(timeout=60)
    assert answer["id"] == 8
    assert tool_error(answer) == expected(
        "CG_INPUT_INVALID", "query", "/limit integers must stay within +/-2^53"
    )
    still_serving(server)


def test_another_request_with_a_5000_digit_integer_is_answered_parse_error(
    server: RawMcp,
) -> None:
    frame = '{"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": {"n": %s}}}'
    server.send((frame % HUGE).encode())
    assert server.receive(timeout=60) == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32700, "message": "Parse error"},
    }
    still_serving(server)


def test_a_duplicate_in_an_unknown_tools_call_is_the_unknown_tool_error(server: RawMcp) -> None:
    server.send(call_frame(10, "no_such_tool", '{"a": 1, "a": 2}'))
    answer = server.receive(timeout=60)
    assert answer["id"] == 10
    assert answer["error"]["code"] == -32602


@given(
    value=st.dictionaries(
        st.sampled_from(["limit", "tags", "providers", "x"]), JSON_VALUES, min_size=1, max_size=3
    ),
    digits=st.integers(4301, 6000),
)
@battery_settings(25)
def test_every_rejected_frame_gets_exactly_one_answer(
    server: RawMcp, value: dict[str, Any], digits: int
) -> None:
    text = json.dumps(value)[:-1] + ', "big": ' + "7" * digits + "}"
    server.send(call_frame(11, "list_capabilities", text))
    answer = server.receive(timeout=60)
    assert answer["id"] == 11
    assert tool_error(answer)["code"] == "CG_INPUT_INVALID"


# --- a request given to call as JSON text (CG-CONV-17) -------------------------------------------

_DEFINITION = {
    "providerId": "acme",
    "name": "Acme",
    "version": "1",
    "capabilities": [
        {"id": i, "name": i.upper(), "description": f"Capability {i}.", "tags": ["x"]}
        for i in ("a", "b", "c")
    ],
}
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
_MEMBERS = st.sampled_from(["ids", "providers", "tags", "limit", "cursor", "relations", "x"])
#: Requests near the schemas, or any JSON value but a string (a string given to call is a text).
_REQUESTS = st.dictionaries(_MEMBERS, _JSON, max_size=3) | _JSON.filter(
    lambda value: not isinstance(value, str)
)


@pytest.fixture(scope="module")
def text_graph() -> Iterator[Any]:
    from capability_graph import BlockingCapabilityGraph

    graph = BlockingCapabilityGraph.open({"providers": [{"definition": _DEFINITION}]})
    yield graph
    graph.close()


def _outcome(graph: Any, tool: str, arguments: Any) -> dict[str, Any]:
    try:
        return {"result": graph.call(tool, arguments)}
    except GraphError as error:
        return {"error": error.to_json()}


@given(
    tool=st.sampled_from(["list_capabilities", "resolve_capabilities", "describe_graph"]),
    value=_REQUESTS,
)
@battery_settings(300)
def test_a_request_and_its_json_text_are_the_same_request(
    text_graph: Any, tool: str, value: Any
) -> None:
    assert _outcome(text_graph, tool, json.dumps(value)) == _outcome(text_graph, tool, value)


@given(value=_JSON)
@battery_settings(100)
def test_a_text_holding_a_json_string_is_never_read_again(text_graph: Any, value: Any) -> None:
    twice = json.dumps(json.dumps(value))
    assert _outcome(text_graph, "describe_graph", twice) == {
        "error": expected("CG_INPUT_INVALID", "query", "/ must be an object")
    }
