"""validate_context: flat scalar facts, pointer messages that never echo a value."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capability_graph import GraphError
from capability_graph._core.context import validate_context
from capability_graph_testing.matching import SECRET


def context_error(message: str) -> dict[str, str]:
    return {
        "code": "CG_CONTEXT_INVALID",
        "phase": "match",
        "message": message,
        "nextAction": "fix_input",
    }


def error_of(value: object) -> dict[str, str]:
    with pytest.raises(GraphError) as info:
        validate_context(value)
    return info.value.to_json()


def test_valid_context_is_copied_into_a_plain_dict() -> None:
    value: dict[str, Any] = {
        "framework": "fastapi",
        "a.b-c_d": "",
        "count": 3,
        "ratio": 0.5,
        "negative": -(2**53),
        "flag": False,
        "long": "x" * 1024,
        "unicode": "中文 ✓",
        "Z" + "z" * 63: True,
    }
    result = validate_context(value)
    assert result == value
    assert result is not value
    assert type(result) is dict
    assert validate_context({}) == {}
    assert validate_context(OrderedDict(a=1)) == {"a": 1}


def test_bool_stays_bool_and_subclasses_become_plain_types() -> None:
    class Name(str):
        pass

    result = validate_context({"flag": True, "name": Name("x")})
    assert result["flag"] is True
    assert type(result["name"]) is str


def test_exactly_64_keys_is_allowed_and_65_is_not() -> None:
    assert len(validate_context({f"k{i}": i for i in range(64)})) == 64
    assert error_of({f"k{i}": i for i in range(65)}) == context_error(
        "/context must have at most 64 keys"
    )


@pytest.mark.parametrize("value", [None, [], "a=b", 3, [("a", 1)], {SECRET}])
def test_non_object_context(value: object) -> None:
    assert error_of(value) == context_error("/context must be an object")


@pytest.mark.parametrize(
    "key", ["", "1abc", "_a", "a b", "a/b", "a~b", "é", "a" * 65, SECRET + "!", 7, ("a",)]
)
def test_bad_key_is_reported_without_naming_it(key: object) -> None:
    assert error_of({key: "v"}) == context_error(
        "/context keys must match ^[A-Za-z][A-Za-z0-9_.-]{0,63}$"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "/context values must be strings, finite numbers or booleans"),
        ([1], "/context values must be strings, finite numbers or booleans"),
        ({"a": 1}, "/context values must be strings, finite numbers or booleans"),
        (float("nan"), "/context values must be strings, finite numbers or booleans"),
        (float("inf"), "/context values must be strings, finite numbers or booleans"),
        (-float("inf"), "/context values must be strings, finite numbers or booleans"),
        (b"bytes", "/context values must be strings, finite numbers or booleans"),
        (2**53 + 1, "/context values must be integers between -2^53 and 2^53"),
        ("x" * 1025, "/context values must be strings of at most 1024 characters"),
        ("\ud800", "/context values must be strings of valid Unicode text"),
    ],
)
def test_bad_value_names_the_expected_type_but_never_the_key(value: object, message: str) -> None:
    assert error_of({"k": value}) == context_error(message)


def test_first_problem_in_document_order_wins() -> None:
    assert error_of({"ok": 1, "b": None, "1bad": 2}) == context_error(
        "/context values must be strings, finite numbers or booleans"
    )
    assert error_of({"ok": 1, "1bad": 2, "b": None}) == context_error(
        "/context keys must match ^[A-Za-z][A-Za-z0-9_.-]{0,63}$"
    )


def test_a_secret_key_is_never_echoed() -> None:
    error = error_of({"SECRET-4f1c": None})
    assert "SECRET" not in error["message"]


@given(st.text(min_size=1))
def test_messages_never_echo_values(text: str) -> None:
    planted = SECRET + text
    for value in ({"k": [planted]}, {"k": planted * 300}, {planted + " ": 1}, {"k": {planted: 1}}):
        with pytest.raises(GraphError) as info:
            validate_context(value)
        assert SECRET not in json.dumps(info.value.to_json(), ensure_ascii=False)
