"""assert_safe_ident (the vectors hold the table)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import capability_graph_flowcast as flowcast


def test_a_safe_name_is_returned() -> None:
    assert flowcast.assert_safe_ident("run-2024.01_a") == "run-2024.01_a"


def test_an_unsafe_name_raises_path_error_naming_the_field() -> None:
    with pytest.raises(flowcast.PathError, match=r"invalid run_id '\.\./x'") as caught:
        flowcast.assert_safe_ident("../x", field="run_id")
    assert caught.value.code == "PATH_ERROR"


def test_a_very_long_name_is_shortened_in_the_message() -> None:
    with pytest.raises(flowcast.PathError) as caught:
        flowcast.assert_safe_ident("/" * 10_000)
    assert len(str(caught.value)) < 250


def test_a_non_string_raises_path_error() -> None:
    with pytest.raises(flowcast.PathError, match="a bytes, not a str"):
        flowcast.assert_safe_ident(b"name")


PATTERN = re.compile(flowcast.SAFE_IDENT_PATTERN)


@given(st.one_of(st.text(), st.binary(), st.integers(), st.none(), st.floats()))
def test_assert_safe_ident_only_ever_returns_the_name_or_raises_path_error(value: object) -> None:
    try:
        assert flowcast.assert_safe_ident(value) is value
    except flowcast.PathError:
        return


@given(st.text(alphabet=st.characters(codec="ascii"), max_size=12))
def test_the_published_pattern_decides_with_full_match(value: str) -> None:
    expected = PATTERN.fullmatch(value) is not None and not value.endswith("\n")
    try:
        flowcast.assert_safe_ident(value)
        accepted = True
    except flowcast.PathError:
        accepted = False
    assert accepted == expected


@given(st.text(alphabet="ab.-_/", min_size=1, max_size=8))
def test_a_safe_name_is_never_a_path_with_more_than_one_part(value: str) -> None:
    try:
        flowcast.assert_safe_ident(value)
    except flowcast.PathError:
        return
    assert "/" not in value
    assert value not in (".", "..")
    assert not value.startswith("-")
