"""The early input-size check: a lower bound of the compact JSON size, never above it, so a
request of exactly maxInputBytes is accepted and only a larger one is refused."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from capability_graph._core.json import dump_bytes
from capability_graph._core.operations.requests import _surely_larger_than

# Lone surrogates (which st.characters() leaves out) included: six bytes each in the compact
# serialization.
LONE_SURROGATES = st.integers(min_value=0xD800, max_value=0xDFFF).map(chr)
TEXT = st.text(alphabet=st.characters() | LONE_SURROGATES)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**53), max_value=2**53) | TEXT,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(TEXT, children, max_size=5),
    max_leaves=30,
)
PLAIN_ASCII = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", max_size=40)


@given(JSON_VALUES)
def test_the_bound_never_refuses_a_request_that_fits_exactly(value: Any) -> None:
    assert not _surely_larger_than(value, len(dump_bytes(value)))


@given(st.dictionaries(PLAIN_ASCII, st.lists(PLAIN_ASCII, max_size=8), max_size=4))
def test_the_bound_is_exact_for_plain_ascii_strings(value: dict[str, list[str]]) -> None:
    size = len(dump_bytes(value))
    assert _surely_larger_than(value, size - 1)


def test_three_tags_of_exactly_the_limit_are_not_refused() -> None:
    request = {"tags": ["a" * 60, "b" * 60, "c" * 40]}
    assert len(dump_bytes(request)) == 179
    assert not _surely_larger_than(request, 179)


def test_a_lone_surrogate_counts_six_bytes_in_the_bound() -> None:
    request = {"tags": ["\ud800" * 5]}  # {"tags":[""]} is 13 bytes, five escapes 30
    assert len(dump_bytes(request)) == 43
    assert _surely_larger_than(request, 42)
