"""Pure-JSON parsing and the serialization every surface shares."""

from __future__ import annotations

import json
from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from capability_graph._core.json import (
    MAX_DEPTH,
    NotPureJson,
    canonical_bytes,
    check_depth,
    check_pure_value,
    dump_bytes,
    parse_definition_json,
    parse_pure_json,
)
from capability_graph._core.json.pure import _deeper_than_max, _raise_first_too_deep
from capability_graph_testing.common import SCHEMAS

JSON_DATA = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(exclude_categories=["Cs"])),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.characters(exclude_categories=["Cs"])), children, max_size=4
        )
    ),
    max_leaves=20,
)


def _compact_reference(value: Any) -> str:
    """The compact serialization written by the stdlib, each float as ``rfc8785`` writes it."""
    if isinstance(value, float):
        return rfc8785.dumps(value).decode("ascii")
    if isinstance(value, dict):
        members = (
            json.dumps(k, ensure_ascii=False) + ":" + _compact_reference(v)
            for k, v in value.items()
        )
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_compact_reference(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)


@given(JSON_DATA)
def test_dump_bytes_is_the_compact_serialization_with_rfc8785_numbers(value: Any) -> None:
    # CG-BUD-9: the stdlib's compact text, except numbers, written in their ECMAScript form.
    assert dump_bytes(value) == _compact_reference(value).encode("utf-8")


@pytest.mark.parametrize(
    ("number", "form"),
    [
        (1.0, b"1"),
        (-0.0, b"0"),
        (1e-7, b"1e-7"),
        (0.000001, b"0.000001"),
        (1e21, b"1e+21"),
        (1e20, b"100000000000000000000"),
        (1.5e300, b"1.5e+300"),
        (-2.5e-7, b"-2.5e-7"),
    ],
)
def test_dump_bytes_writes_numbers_as_ecmascript_does(number: float, form: bytes) -> None:
    assert dump_bytes(number) == form
    assert dump_bytes({"n": [number]}) == b'{"n":[' + form + b"]}"


# Every finite float and every character but a lone surrogate, in keys too: exactly the values
# where orjson's sorted output and RFC 8785 can part (numbers, non-BMP key order) included.
# Integers stay inside ``rfc8785``'s domain, which stops one short of pure JSON's +/-2**53
# (that edge is an example below).
SAFE_INTEGERS = st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]))
CANONICAL_INPUT = st.recursive(
    st.booleans() | SAFE_INTEGERS | st.floats(allow_nan=False, allow_infinity=False) | ANY_TEXT,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(ANY_TEXT, children, max_size=4)
    ),
    max_leaves=20,
)


@given(CANONICAL_INPUT)
def test_canonical_bytes_are_the_rfc8785_serialization(value: Any) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


# Keys and values drawn from characters that straddle the surrogate range (and quotes and
# backslashes, which the key detection must step over): where UTF-16 and code point order part.
STRADDLING_TEXT = st.text(
    alphabet=st.sampled_from(['"', "\\", ":", "a", "\ue000", "\uffff", "\U00010000", "\U0001f600"]),
    max_size=5,
)
NUMBER_FREE_INPUT = st.recursive(
    st.booleans() | STRADDLING_TEXT | ANY_TEXT,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(STRADDLING_TEXT | ANY_TEXT, children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(STRADDLING_TEXT, SAFE_INTEGERS, max_size=6))
def test_canonical_bytes_sort_keys_by_utf16_code_units(value: dict[str, int]) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@given(NUMBER_FREE_INPUT)
def test_canonical_bytes_without_the_number_scan_are_rfc8785_for_number_free_values(
    value: Any,
) -> None:
    assert canonical_bytes(value, numbers=False) == rfc8785.dumps(value)


def test_the_definition_schema_admits_no_numbers_so_revisions_skip_the_number_scan() -> None:
    schema = (SCHEMAS / "definition.schema.json").read_text(encoding="utf-8")
    assert '"number"' not in schema
    assert '"integer"' not in schema


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        ([5.0], b"[5]"),
        ([1e-6], b"[0.000001]"),
        ([1e16], b"[10000000000000000]"),
        ([-0.0], b"[0]"),
        ({"\U0001f600": 1, "\uffff": 2}, '{"\U0001f600":1,"\uffff":2}'.encode()),
        ({"b": [":1.5,"], "a": "\U0001f600"}, '{"a":"\U0001f600","b":[":1.5,"]}'.encode()),
        ({'\U0001f600"': 1, '\uffff"': 2}, '{"\U0001f600\\"":1,"\uffff\\"":2}'.encode()),
        ("x", b'"x"'),
        ([2**53, 0.5, -(2**53)], b"[9007199254740992,0.5,-9007199254740992]"),
    ],
    ids=[
        "integral-float",
        "small-float",
        "large-float",
        "minus-zero",
        "non-bmp-key",
        "look-alikes-on-the-fast-path",
        "non-bmp-key-before-an-escaped-quote",
        "scalar",
        "edge-integers-beside-a-float",
    ],
)
def test_canonical_bytes_where_orjson_and_rfc8785_differ(value: Any, canonical: bytes) -> None:
    assert canonical_bytes(value) == canonical


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_round_trips_through_dump_bytes(value: float) -> None:
    # An integral form ("36746157860689260") is still that float once read as a JSON number.
    assert json.loads(dump_bytes([value]), parse_int=float) == [value]


@given(st.binary(max_size=200))
def test_parse_pure_json_either_parses_or_names_a_reason(data: bytes) -> None:
    reason = "parsed"
    try:
        parse_pure_json(data)
    except NotPureJson as problem:
        reason = problem.reason
    assert reason


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"a": 1, "a": 1}', "an object has a duplicate key"),
        (b"[Infinity]", "not well-formed JSON"),
        (b"[-Infinity]", "not well-formed JSON"),
        (b"\xef\xbb\xbf[]", "a byte order mark is not JSON"),
        (b"[9007199254740993]", "integers must stay within +/-2^53"),
        (b'{"a": null}', "must not be null (omit the key instead)"),
    ],
    ids=["duplicate", "infinity", "minus-infinity", "bom", "big-int", "null"],
)
def test_parse_pure_json_rejects(data: bytes, reason: str) -> None:
    with pytest.raises(NotPureJson) as excinfo:
        parse_pure_json(data)
    assert excinfo.value.reason == reason


def test_depth_32_is_allowed_and_33_is_not() -> None:
    parse_pure_json(b"[" * 32 + b"]" * 32)
    with pytest.raises(NotPureJson):
        parse_pure_json(b"[" * 34 + b"]" * 34)


def test_dump_bytes_of_a_value_too_deep_for_orjson_with_a_lone_surrogate_is_written() -> None:
    # orjson refuses both the depth and the surrogate; the fallback writer has no depth limit.
    value: Any = "\ud800"
    for _ in range(5000):
        value = [value]
    assert dump_bytes(value) == b"[" * 5000 + b'"\\ud800"' + b"]" * 5000


def _nested(depth: int, container: str) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value] if container == "list" else {"k": value}
    return value


@given(
    st.integers(0, 40),
    st.sampled_from(["list", "dict"]),
    st.lists(st.integers(0, 40), max_size=3),
)
def test_the_depth_check_refuses_exactly_what_its_pointer_walk_names(
    depth: int, container: str, siblings: list[int]
) -> None:
    # The fast check (no pointers) and the walk that names the first container too deep agree.
    value = {"a": _nested(depth, container), "b": [_nested(d, container) for d in siblings]}
    deepest = max([depth, *(d + 1 for d in siblings)]) + 1  # containers on the deepest path
    try:
        _raise_first_too_deep(value, "")
    except NotPureJson:
        named = True
    else:
        named = False
    assert _deeper_than_max(value) is named is (deepest - 1 > MAX_DEPTH)


# JSON texts written by hand, so that objects can repeat a key: a tree of scalars, arrays and
# objects as lists of members, each string escaped by the stdlib (ASCII-only or not).
_TEXT_SCALARS = (
    st.text(alphabet=st.sampled_from('ab"\\/:é😀\u2028\x00'), max_size=6).map(lambda t: ("s", t))
    | st.booleans().map(lambda b: ("b", b))
    | st.sampled_from([("raw", "null"), ("raw", "1"), ("raw", "2.5"), ("raw", '"\\ud800"')])
)
_TEXT_TREES = st.recursive(
    _TEXT_SCALARS,
    lambda children: (
        st.lists(children, max_size=3).map(lambda items: ("a", items))
        | st.lists(st.tuples(st.sampled_from(["k", "x", 'q"', "\\"]), children), max_size=3).map(
            lambda members: ("o", members)
        )
    ),
    max_leaves=12,
)


def _write(tree: tuple[str, Any], ascii_only: bool) -> str:
    kind, body = tree
    if kind == "s":
        return json.dumps(body, ensure_ascii=ascii_only)
    if kind == "b":
        return "true" if body else "false"
    if kind == "raw":
        return str(body)
    if kind == "a":
        return "[" + ",".join(_write(item, ascii_only) for item in body) + "]"
    return (
        "{"
        + ",".join(
            json.dumps(key, ensure_ascii=ascii_only) + " : " + _write(value, ascii_only)
            for key, value in body
        )
        + "}"
    )


def _outcome(parse: Any, data: bytes) -> Any:
    try:
        return ("value", parse(data))
    except NotPureJson as problem:
        return ("refused", problem.reason, problem.pointer)


def _exact_path(data: bytes) -> Any:
    value = parse_pure_json(data, check_values=False)
    check_depth(value)
    return value


@given(_TEXT_TREES, st.booleans())
def test_the_definition_parser_gives_what_the_exact_path_gives(
    tree: tuple[str, Any], ascii_only: bool
) -> None:
    # Duplicate keys (which orjson drops silently), escaped quotes and backslashes, numbers,
    # nulls and lone surrogates: the fast parse accepts only what the exact path accepts, the
    # same value, and refuses with the same reason at the same pointer.
    data = _write(tree, ascii_only).encode("utf-8")
    assert _outcome(parse_definition_json, data) == _outcome(_exact_path, data)


@pytest.mark.parametrize(
    "text",
    [
        b'{"a": "x", "a": "y"}',
        b'{"a": "x\\", "a": "y"}',
        b'{"a\\"": "x", "a\\"": "x"}',
        b'[{"k": [true]}, {"k": [true], "k": [true]}]',
        b"[" * 34 + b"]" * 34,
    ],
    ids=["duplicate", "escaped-backslash", "escaped-quote-key", "duplicate-in-array", "too-deep"],
)
def test_the_definition_parser_refuses_what_orjson_accepts(text: bytes) -> None:
    assert _outcome(parse_definition_json, text) == _outcome(_exact_path, text)
    assert _outcome(parse_definition_json, text)[0] == "refused"


@pytest.mark.parametrize(
    ("number", "out_of_range"),
    [
        (1e20, True),
        (-1e20, True),
        (2.0**53 + 2, True),
        (1e21, False),
        (1e300, False),
        (2.0**53, False),
    ],
)
def test_an_integral_float_is_out_of_range_where_rfc8785_writes_an_integer_literal(
    number: float, out_of_range: bool
) -> None:
    # CG-CONV-6: 1e20 is written 100000000000000000000 (an integer beyond 2^53); 1e21 is 1e+21.
    if out_of_range:
        with pytest.raises(NotPureJson, match="integers must stay within"):
            check_pure_value({"limit": number})
    else:
        check_pure_value({"limit": number})
