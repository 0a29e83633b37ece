"""The request-text parser: a JSON text has one meaning: duplicate member names and integer literals
too long to convert are CG_INPUT_INVALID, never "the last one wins" and never a crash."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capability_graph import GraphError
from capability_graph._core.json import MalformedJson, NotPureJson, parse_request_text
from capability_graph._core.operations import parse_arguments_text
from capability_graph_testing.common import expected

KEYS = st.text(alphabet="ab/~", min_size=1, max_size=3)
VALUES = st.recursive(
    st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=3),
    max_leaves=12,
)


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def with_first_member_twice(value: Any, pointer: str = "") -> tuple[str, str | None]:
    """``value`` as JSON text where the first non-empty object (in text order) repeats its first
    member; and that object's pointer (None when there is no such object)."""
    if isinstance(value, dict) and value:
        first = next(iter(value))
        members = [(first, value[first]), *value.items()]
        text = "{" + ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in members) + "}"
        return text, pointer
    if isinstance(value, (dict, list)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        parts, found = [], None
        for name, child in items:
            if found is None:
                part, found = with_first_member_twice(child, f"{pointer}/{_escape(str(name))}")
            else:
                part = json.dumps(child)
            parts.append(f"{json.dumps(name)}:{part}" if isinstance(value, dict) else part)
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        return opening + ",".join(parts) + closing, found
    return json.dumps(value), None


@given(VALUES)
def test_a_text_with_unique_names_parses_as_json_does(value: Any) -> None:
    assert parse_request_text(json.dumps(value)) == value


@given(VALUES)
def test_a_duplicate_name_anywhere_is_named_by_the_pointer_of_its_object(value: Any) -> None:
    text, pointer = with_first_member_twice(value)
    if pointer is None:
        assert parse_request_text(text) == value
        return
    with pytest.raises(NotPureJson) as excinfo:
        parse_request_text(text, "/context")
    assert (excinfo.value.reason, excinfo.value.pointer) == (
        "an object has a duplicate key",
        "/context" + pointer,
    )


def test_the_first_problem_in_text_order_is_reported() -> None:
    text = '{"a": [1, {"b": 1, "b": 2}], "c": {"d": 1, "d": 1}, "e": ' + "9" * 500 + "}"
    with pytest.raises(NotPureJson) as excinfo:
        parse_request_text(text)
    assert excinfo.value.pointer == "/a/1"


@pytest.mark.parametrize("digits", [401, 5000, 100_000])
def test_an_integer_literal_too_long_to_convert_is_not_pure(digits: int) -> None:
    with pytest.raises(NotPureJson) as excinfo:
        parse_request_text('{"limit": [-' + "7" * digits + "]}")
    assert (excinfo.value.reason, excinfo.value.pointer) == (
        "integers must stay within +/-2^53",
        "/limit/0",
    )


@pytest.mark.parametrize("depth", [33, 1000, 100_000])
def test_a_container_at_depth_33_is_too_deep_at_its_pointer_whatever_its_depth(depth: int) -> None:
    # CG-CONV-15: the container at depth 33 is not read (to its closing bracket), so how deep the
    # text goes does not change the outcome; a bracket inside a string never counts.
    text = '{"a": "[", "b": ' + "[" * depth + '"]"' + "]" * depth + "}"
    with pytest.raises(NotPureJson) as excinfo:
        parse_request_text(text)
    assert (excinfo.value.reason, excinfo.value.pointer) == (
        "nesting deeper than 32",
        "/b" + "/0" * 32,
    )


@pytest.mark.parametrize("depth", [5, 33, 1000, 100_000])
def test_a_text_whose_brackets_do_not_close_is_not_json_whatever_its_depth(depth: int) -> None:
    with pytest.raises(MalformedJson):
        parse_request_text('{"b": ' + "[" * depth + "]" * (depth - 1) + "}")


def test_what_a_container_at_depth_33_holds_is_not_read() -> None:
    text = "[" * 33 + '[1 2 NaN {"a": 1, "a": 2}' + "]" * 34
    with pytest.raises(NotPureJson) as excinfo:
        parse_request_text(text)
    assert excinfo.value.reason == "nesting deeper than 32"


def test_a_scalar_held_at_depth_32_is_not_too_deep() -> None:
    # CG-CONV-11: only containers count.
    assert parse_request_text("[" * 33 + "1" + "]" * 33) is not None


def test_the_depth_of_a_value_text_counts_from_the_request_root() -> None:
    # A --context value lies at depth 2: its container at depth 31 is at depth 33 of the request.
    with pytest.raises(NotPureJson) as excinfo:
        parse_request_text("[" * 32 + "]" * 32, "/context/k", depth=2)
    assert excinfo.value.pointer == "/context/k" + "/0" * 31


def test_a_400_digit_integer_is_left_to_the_range_check() -> None:
    assert parse_request_text("1" * 400) == int("1" * 400)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        '{"a": 1,}',
        '[{"a": 1, "a": 2}, ',
        '{"a": 1, "a": 2} x',
        "NaN x",
        '{"limit": NaN}',
        "[Infinity]",
        "[-Infinity]",
        "[" * 100_000,
        "[" * 40 + "]" * 40 + " x",
    ],
    ids=[
        "empty",
        "open",
        "trailing comma",
        "unclosed",
        "trailing text",
        "NaN",
        "NaN member",
        "Infinity",
        "minus Infinity",
        "deep unclosed",
        "deep then trailing text",
    ],
)
def test_a_text_that_is_not_json_is_malformed_even_after_a_duplicate(text: str) -> None:
    with pytest.raises(MalformedJson):
        parse_request_text(text)


@pytest.mark.parametrize(
    ("tool", "phase"),
    [
        ("describe_graph", "query"),
        ("list_capabilities", "query"),
        ("resolve_capabilities", "query"),
        ("match_capabilities", "match"),
        ("read_document", "document"),
        ("no_such_tool", "query"),
    ],
)
def test_a_duplicate_is_input_invalid_in_the_tools_phase(tool: str, phase: str) -> None:
    with pytest.raises(GraphError) as excinfo:
        parse_arguments_text(tool, '{"limit": 1, "limit": 2}')
    assert excinfo.value.to_json() == expected(
        "CG_INPUT_INVALID", phase, "/ an object has a duplicate key"
    )


def test_a_pointer_never_names_a_key_outside_the_contract() -> None:
    with pytest.raises(GraphError) as excinfo:
        parse_arguments_text("list_capabilities", '{"sk-SECRET": {"x": 1, "x": 2}}')
    assert excinfo.value.message == "/ an object has a duplicate key"
