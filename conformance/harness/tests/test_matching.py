"""The JSON patterns of the vectors."""

from __future__ import annotations

import pytest
from capability_graph_conformance.matching import json_equal, match, substitute


def test_objects_match_their_members_and_allow_extra_ones() -> None:
    assert match({"a": 1}, {"a": 1, "b": 2}) == []
    assert match({"a": 1}, {"a": 2}) == ["$.a: expected 1, got 2"]
    assert match({"a": 1}, {}) == ["$.a: missing"]


def test_arrays_match_element_wise_with_the_same_length() -> None:
    assert match([{"id": "x"}], [{"id": "x", "more": 1}]) == []
    assert match([1, 2], [1]) != []
    assert match([1, 2], [2, 1]) != []


def test_json_equality_of_scalars() -> None:
    assert json_equal(1, 1.0)
    assert not json_equal(True, 1)
    assert not json_equal(0, False)
    assert not json_equal("1", 1)
    assert json_equal(None, None)
    assert match(True, 1) != []


@pytest.mark.parametrize(
    ("pattern", "good", "bad"),
    [
        ({"$pattern": "^r:[0-9a-f]{16}$"}, "r:0123456789abcdef", "r:0123456789abcdef\n"),
        ({"$type": "integer"}, 3, 3.5),
        ({"$type": "number"}, 0.5, True),
        ({"$type": "string"}, "x", 1),
        ({"$length": 2}, [1, 2], [1]),
        ({"$contains": {"id": "b"}}, [{"id": "a"}, {"id": "b", "x": 1}], [{"id": "a"}]),
        ({"$exact": {"a": {"$type": "string"}}}, {"a": "x"}, {"a": "x", "b": 1}),
        ({"$exact": [{"id": 1}]}, [{"id": 1}], [{"id": 1, "extra": True}]),
    ],
)
def test_matchers(pattern: object, good: object, bad: object) -> None:
    assert match(pattern, good) == []
    assert match(pattern, bad) != []


def test_absent_members() -> None:
    assert match({"nextCursor": {"$absent": True}}, {"items": []}) == []
    assert match({"nextCursor": {"$absent": True}}, {"nextCursor": "x"}) != []


def test_captures_compare_across_steps() -> None:
    captures: dict[str, object] = {}
    assert match({"revision": {"$capture": "r"}}, {"revision": "r:1"}, captures) == []
    assert captures == {"r": "r:1"}
    assert match({"revision": {"$same": "r"}}, {"revision": "r:1"}, captures) == []
    assert match({"revision": {"$same": "r"}}, {"revision": "r:2"}, captures) != []
    assert match({"revision": {"$differs": "r"}}, {"revision": "r:2"}, captures) == []
    assert match({"revision": {"$same": "never"}}, {"revision": "r:1"}, captures) != []


def test_substitute_replaces_captured_values() -> None:
    arguments = {"limit": 1, "cursor": {"$captured": "c"}, "list": [{"$captured": "c"}]}
    assert substitute(arguments, {"c": "abc"}) == {"limit": 1, "cursor": "abc", "list": ["abc"]}
    with pytest.raises(KeyError):
        substitute(arguments, {})


def test_substitute_edits_a_captured_string() -> None:
    # "QUJD" + "RA": the last character of a 6-character text carries 4 unused bits.
    captures = {"c": "QUJDRA"}
    assert substitute({"cursor": {"$captured": "c", "$append": "=="}}, captures) == {
        "cursor": "QUJDRA=="
    }
    assert substitute({"$captured": "c", "$setUnusedBits": True}, captures) == "QUJDRP"
    assert substitute({"$captured": "c", "$setUnusedBits": True}, {"c": "QUJDREU"}) == "QUJDREX"
    with pytest.raises(ValueError, match="no unused bits"):
        substitute({"$captured": "c", "$setUnusedBits": True}, {"c": "QUJD"})
    with pytest.raises(ValueError, match="cannot edit"):
        substitute({"$captured": "c", "$append": "="}, {"c": 1})
