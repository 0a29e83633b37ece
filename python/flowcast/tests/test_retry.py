"""is_retryable: the single provider-fallback test (the vectors hold the full table)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import capability_graph_flowcast as flowcast


class ApiError(Exception):
    def __init__(self, message: str, *, api_status: object = None) -> None:
        super().__init__(message)
        if api_status is not None:
            self.api_status = api_status


def test_a_real_spawn_timeout_is_retryable() -> None:
    with pytest.raises(flowcast.TimeoutError) as caught:
        flowcast.spawn_cli_sync("sh", ["-c", "sleep 30"], timeout=0.2, kill_grace=0.1)
    assert flowcast.is_retryable(caught.value) is True


def test_a_cli_exiting_with_a_rate_limit_complaint_is_retryable() -> None:
    with pytest.raises(flowcast.SpawnError) as caught:
        flowcast.spawn_cli_sync("sh", ["-c", "echo 'Error: 429 Too Many Requests' >&2; exit 1"])
    assert flowcast.is_retryable(caught.value) is True


def test_a_cli_exiting_with_a_plain_failure_is_not_retryable() -> None:
    with pytest.raises(flowcast.SpawnError) as caught:
        flowcast.spawn_cli_sync("sh", ["-c", "echo 'syntax error' >&2; exit 2"])
    assert flowcast.is_retryable(caught.value) is False


def test_a_missing_cli_is_not_retryable() -> None:
    with pytest.raises(flowcast.SpawnError) as caught:
        flowcast.spawn_cli_sync("flowcast-no-such-program-7f3a")
    assert flowcast.is_retryable(caught.value) is False


def test_api_status_attribute_429_is_retryable() -> None:
    assert flowcast.is_retryable(ApiError("failed", api_status=429)) is True


def test_http_status_enum_counts_as_its_number() -> None:
    assert flowcast.is_retryable(ApiError("x", api_status=HTTPStatus.TOO_MANY_REQUESTS)) is True


def test_a_structured_status_silences_the_message() -> None:
    assert flowcast.is_retryable(ApiError("rate limit", api_status=500)) is False


def test_an_object_with_a_message_attribute_is_read() -> None:
    class Result:
        message = "quota exhausted"

    assert flowcast.is_retryable(Result()) is True


def test_a_plain_string_is_not_an_error() -> None:
    assert flowcast.is_retryable("rate limit") is False


def test_a_hostile_object_is_not_retryable_and_does_not_raise() -> None:
    class Hostile:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError(name)

        def __bool__(self) -> bool:
            raise RuntimeError("bool")

    assert flowcast.is_retryable(Hostile()) is False


def test_an_error_with_an_unprintable_message_is_not_retryable() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert flowcast.is_retryable(Unprintable()) is False


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(json_values)
def test_is_retryable_never_raises_on_json_data(value: object) -> None:
    assert flowcast.is_retryable(value) in (True, False)


@given(st.text(), st.one_of(st.none(), st.integers(), st.floats(), st.text(), st.booleans()))
def test_is_retryable_never_raises_on_errors(message: str, status: object) -> None:
    assert flowcast.is_retryable(ApiError(message, api_status=status)) in (True, False)


# Drawing a value of an arbitrary type occasionally builds an expensive one (a draw of 1.8 s was
# seen on a loaded machine): the time says nothing about is_retryable, so it is not a failure.
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.from_type(type).flatmap(st.from_type))
def test_is_retryable_never_raises_on_arbitrary_objects(value: object) -> None:
    assert flowcast.is_retryable(value) in (True, False)


@given(st.text(), st.sampled_from([None, 429, 529, 500]))
def test_an_error_and_its_json_form_agree(message: str, status: int | None) -> None:
    error = flowcast.SpawnError(message)
    if status is not None:
        error.api_status = status  # type: ignore[attr-defined]
    data = error.to_dict() | ({"apiStatus": status} if status is not None else {})
    assert flowcast.is_retryable(error) == flowcast.is_retryable(data)
