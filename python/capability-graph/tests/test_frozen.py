"""Result parts shared with the snapshot are read-only, and copies of them are plain JSON."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capability_graph import BlockingCapabilityGraph
from capability_graph._core.frozen import FrozenDict, FrozenList, freeze, serialized_size
from capability_graph._core.json import dump_bytes
from capability_graph_testing.common import capability, inline, provider, schema_validator

MUTATIONS = [
    ("setitem", lambda d: d.__setitem__("id", "x")),
    ("delitem", lambda d: d.__delitem__("id")),
    ("update", lambda d: d.update(id="x")),
    ("pop", lambda d: d.pop("id")),
    ("clear", lambda d: d.clear()),
    ("setdefault", lambda d: d.setdefault("new", 1)),
    ("nested-append", lambda d: d["tags"].append("x")),
    ("nested-sort", lambda d: d["tags"].sort()),
]


@pytest.fixture(scope="module")
def detail() -> Any:
    with BlockingCapabilityGraph.open(
        inline(provider("acme", capability("a", tags=["b", "a"])))
    ) as graph:
        return graph.call("resolve_capabilities", {"ids": ["acme::a"]})["capabilities"][0]


@pytest.mark.parametrize("mutate", [m for _, m in MUTATIONS], ids=[n for n, _ in MUTATIONS])
def test_shared_detail_cannot_be_mutated(detail: Any, mutate: Any) -> None:
    with pytest.raises(TypeError, match="read-only"):
        mutate(detail)


def test_a_second_resolve_returns_the_untouched_detail() -> None:
    with BlockingCapabilityGraph.open(
        inline(provider("acme", capability("a", tags=["t"])))
    ) as graph:
        first = graph.call("resolve_capabilities", {"ids": ["acme::a"]})["capabilities"][0]
        with pytest.raises(TypeError):
            first["tags"].append("x")
        assert graph.resolve(ids=["acme::a"]).capabilities[0].tags == ["t"]


def test_deepcopy_gives_a_plain_mutable_copy(detail: Any) -> None:
    clone = copy.deepcopy(detail)
    assert type(clone) is dict
    assert type(clone["tags"]) is list
    clone["tags"].append("x")
    assert clone != detail


def test_frozen_values_serialize_and_validate_as_plain_json(detail: Any) -> None:
    assert json.loads(json.dumps(detail)) == detail
    schema_validator("capability-detail.schema.json").validate(detail)


def test_pickle_round_trip_gives_plain_containers() -> None:
    frozen = freeze({"a": [1, {"b": 2}]})
    clone = pickle.loads(pickle.dumps(frozen))
    assert clone == {"a": [1, {"b": 2}]}
    assert type(clone) is dict


def test_freeze_converts_every_container() -> None:
    frozen = freeze({"a": [1, {"b": [2]}]})
    assert isinstance(frozen, FrozenDict)
    assert isinstance(frozen["a"], FrozenList)
    assert isinstance(frozen["a"][1]["b"], FrozenList)


# JSON values in which any object or array may be a frozen part (as in a resolve result: plain
# edges beside frozen details), text with escapes, non-ASCII and lone surrogates included.
_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)


def _maybe_frozen(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    containers = st.lists(children, max_size=4) | st.dictionaries(
        st.text(max_size=5), children, max_size=4
    )
    return st.tuples(containers, st.booleans()).map(
        lambda pair: freeze(pair[0]) if pair[1] else pair[0]
    )


@given(st.recursive(_SCALARS, _maybe_frozen, max_leaves=30))
def test_serialized_size_is_the_length_of_the_compact_serialization(value: Any) -> None:
    assert serialized_size(value) == len(dump_bytes(value))
    assert serialized_size(value) == len(dump_bytes(value))  # the second time from memory


def test_a_frozen_part_serialized_once_keeps_its_size() -> None:
    part = freeze({"id": "acme::a", "tags": ["x", "y"]})
    assert serialized_size({"capabilities": [part, part], "edges": [{"from": "a"}]}) == len(
        dump_bytes({"capabilities": [part, part], "edges": [{"from": "a"}]})
    )
    assert part._size == len(dump_bytes(part))
