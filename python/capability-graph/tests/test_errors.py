"""GraphError: construction rules and the exact error object it projects."""

from __future__ import annotations

import pickle

import pytest

from capability_graph import ErrorCode, GraphError, NextAction, Phase


def test_seed_capability_not_found_serializes_exactly_as_the_seed() -> None:
    error = GraphError.of(ErrorCode.CG_CAPABILITY_NOT_FOUND, Phase.QUERY)
    assert error.to_json() == {
        "code": "CG_CAPABILITY_NOT_FOUND",
        "phase": "query",
        "message": "Requested capability does not exist",
        "nextAction": "refresh",
    }


def test_seed_unreadable_config_message_is_the_unreadable_variant() -> None:
    error = GraphError.of(ErrorCode.CG_CONFIG_INVALID, variant="unreadable")
    assert error.to_json() == {
        "code": "CG_CONFIG_INVALID",
        "phase": "config",
        "message": "Cannot read a valid bounded JSON configuration file",
        "nextAction": "check_config",
    }


def test_to_json_key_order_is_code_phase_message_next_action() -> None:
    error = GraphError.of("CG_INPUT_INVALID", "match")
    assert list(error.to_json()) == ["code", "phase", "message", "nextAction"]


def test_code_without_default_action_omits_next_action() -> None:
    assert GraphError(ErrorCode.CG_GRAPH_CLOSED).to_json() == {
        "code": "CG_GRAPH_CLOSED",
        "phase": "lifecycle",
        "message": "Graph is closed",
    }


def test_attributes_are_registry_enums() -> None:
    error = GraphError("CG_MODEL_UNAVAILABLE", "match", next_action="check_config")
    assert (error.code, error.phase, error.next_action) == (
        ErrorCode.CG_MODEL_UNAVAILABLE,
        Phase.MATCH,
        NextAction.CHECK_CONFIG,
    )
    assert error.message == "Model executor is unavailable"


def test_single_phase_code_infers_its_phase() -> None:
    assert GraphError("CG_RELATION_CYCLE").phase is Phase.LOAD


def test_unknown_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown error code"):
        GraphError("CG_NOPE", "query")


def test_unknown_phase_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown phase"):
        GraphError("CG_INPUT_INVALID", "parsing")


def test_phase_outside_the_codes_phases_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="not raised in phase"):
        GraphError("CG_CAPABILITY_NOT_FOUND", "match")


def test_multi_phase_code_requires_an_explicit_phase() -> None:
    with pytest.raises(ValueError, match="explicit phase"):
        GraphError("CG_INPUT_INVALID")


def test_unknown_next_action_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown nextAction"):
        GraphError("CG_MODEL_REFUSED", next_action="reboot")


def test_next_action_outside_default_and_allowed_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="cannot carry nextAction retry"):
        GraphError("CG_MODEL_REFUSED", next_action="retry")


def test_missing_next_action_on_a_code_with_a_default_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="cannot carry nextAction None"):
        GraphError("CG_MODEL_REFUSED", next_action=None)


def test_unknown_message_variant_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="no message variant"):
        GraphError.of("CG_MODEL_REFUSED", variant="rude")


@pytest.mark.parametrize("message", ["", "two\nlines", "x" * 301])
def test_message_must_be_one_printable_line(message: str) -> None:
    with pytest.raises(ValueError, match="one printable line"):
        GraphError("CG_DEFINITION_INVALID", message=message)


def test_str_leads_with_the_code_and_the_phase() -> None:
    assert str(GraphError.of("CG_GRAPH_CLOSED")) == "CG_GRAPH_CLOSED (lifecycle): Graph is closed"


def test_pickle_round_trip_keeps_the_error_object() -> None:
    error = GraphError("CG_MODEL_OUTPUT_INVALID", next_action="check_config")
    clone = pickle.loads(pickle.dumps(error))
    assert isinstance(clone, GraphError)
    assert clone.to_json() == error.to_json()
