"""The registry is the single source of truth: every projection of it agrees with it."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from capability_graph import ErrorCode, GraphError, NextAction, Phase
from capability_graph._generated.taxonomy import REGISTRY
from capability_graph_testing.common import REPO, SPEC, load_json, schema_validator

SPECIFIED_TABLE = {
    # code: (phases, default action, actions an executor may also set), as the specification
    # states them (CG-ERR-3, CG-MODEL-5)
    "CG_CONFIG_INVALID": (["config"], "check_config", []),
    "CG_DEFINITION_INVALID": (["load"], "check_config", []),
    "CG_RELATION_INVALID": (["load"], "check_config", []),
    "CG_RELATION_CYCLE": (["load"], "check_config", []),
    "CG_CONTEXT_INVALID": (["match"], "fix_input", []),
    "CG_INPUT_INVALID": (["query", "match", "document"], "fix_input", []),
    "CG_ACCESS_DENIED": (["query", "match", "document"], "contact_admin", []),
    "CG_PROVIDER_NOT_FOUND": (["query", "match", "document"], "refresh", []),
    "CG_CAPABILITY_NOT_FOUND": (["query", "document"], "refresh", []),
    "CG_CATALOG_TOO_LARGE": (["load", "match"], "narrow_scope", []),
    "CG_RESULT_TOO_LARGE": (["query", "match", "document"], "narrow_scope", []),
    "CG_INPUT_TOO_LARGE": (["query", "match", "document"], "narrow_scope", []),
    "CG_GRAPH_CLOSED": (["lifecycle"], None, []),
    "CG_RELOAD_FAILED": (["load"], "check_config", []),
    "CG_DOCUMENT_ROOT_REQUIRED": (["document"], "check_config", []),
    "CG_DOCUMENT_NOT_FOUND": (["document"], "refresh", []),
    "CG_DOCUMENT_ACCESS_DENIED": (["document"], "check_config", []),
    "CG_DOCUMENT_REFERENCE_ONLY": (["document"], "fix_input", []),
    "CG_DOCUMENT_TOO_LARGE": (["document"], "narrow_scope", []),
    "CG_DOCUMENT_UNREADABLE": (["document"], "check_config", []),
    "CG_MODEL_NOT_CONFIGURED": (["match"], "check_config", []),
    "CG_MODEL_UNAVAILABLE": (["match"], "retry", ["check_config"]),
    "CG_MODEL_EXECUTOR_UNSAFE": (["match"], "check_config", []),
    "CG_MODEL_CONTEXT_EXCEEDED": (["match"], "narrow_scope", []),
    "CG_MODEL_OUTPUT_INVALID": (["match"], "retry", ["check_config"]),
    "CG_MODEL_INVALID_SELECTION": (["match"], "refresh", []),
    "CG_MODEL_OUTPUT_TOO_LARGE": (["match"], "narrow_scope", []),
    "CG_MODEL_REFUSED": (["match"], "fix_input", []),
    "CG_MODEL_TIMEOUT": (["match"], "retry", []),
    "CG_MODEL_CANCELLED": (["match"], "retry", []),
}


def test_registry_holds_exactly_the_designed_codes(taxonomy: dict[str, Any]) -> None:
    table = {
        c["code"]: (c["phases"], c.get("defaultAction"), c["executorActions"])
        for c in taxonomy["codes"]
    }
    assert table == SPECIFIED_TABLE


def test_registry_phases_and_actions_are_the_designed_ones(taxonomy: dict[str, Any]) -> None:
    assert [p["id"] for p in taxonomy["phases"]] == [
        "config", "load", "query", "match", "document", "lifecycle",
    ]  # fmt: skip
    assert [a["id"] for a in taxonomy["nextActions"]] == [
        "fix_input", "check_config", "refresh", "narrow_scope", "retry", "contact_admin",
    ]  # fmt: skip


def test_python_enums_match_the_registry(taxonomy: dict[str, Any]) -> None:
    assert [c.value for c in ErrorCode] == [c["code"] for c in taxonomy["codes"]]
    assert [p.value for p in Phase] == [p["id"] for p in taxonomy["phases"]]
    assert [a.value for a in NextAction] == [a["id"] for a in taxonomy["nextActions"]]


def test_schema_enums_match_the_registry(taxonomy: dict[str, Any]) -> None:
    defs = load_json(SPEC / "schemas" / "enums.schema.json")["$defs"]
    assert defs["ErrorCode"]["enum"] == [c["code"] for c in taxonomy["codes"]]
    assert defs["Phase"]["enum"] == [p["id"] for p in taxonomy["phases"]]
    assert defs["NextAction"]["enum"] == [a["id"] for a in taxonomy["nextActions"]]


def test_python_registry_entries_match_the_json(taxonomy: dict[str, Any]) -> None:
    for entry in taxonomy["codes"]:
        generated = REGISTRY[ErrorCode(entry["code"])]
        assert [p.value for p in generated.phases] == entry["phases"]
        assert generated.default_action == entry.get("defaultAction")
        assert [a.value for a in generated.executor_actions] == entry["executorActions"]
        assert dict(generated.messages) == entry["messages"]
        assert generated.en.summary == entry["en"]["summary"]
        assert generated.zh.handling == entry["zh"]["handling"]


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_code_in_every_phase_builds_a_schema_valid_error(code: ErrorCode) -> None:
    validator = schema_validator("error.schema.json")
    for phase in REGISTRY[code].phases:
        for variant in REGISTRY[code].messages:
            validator.validate(GraphError.of(code, phase, variant=variant).to_json())


def test_generated_taxonomy_is_in_sync_with_the_registry() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "codegen.py"),
            "--check",
            "--step",
            "enums",
            "--step",
            "taxonomy",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_reference_messages_are_single_safe_lines(taxonomy: dict[str, Any]) -> None:
    for entry in taxonomy["codes"]:
        for message in entry["messages"].values():
            assert message.isprintable()
            assert "/" not in message or message.startswith("/")
            json.dumps(message, ensure_ascii=True)


def test_generated_models_enums_match_the_registry(taxonomy: dict[str, Any]) -> None:
    from typing import get_args

    from capability_graph._generated.models import enums

    def values(alias: Any) -> list[str]:  # Annotated[Literal[...], Field(...)]
        return list(get_args(get_args(alias.__value__)[0]))

    assert values(enums.ErrorCode) == [c["code"] for c in taxonomy["codes"]]
    assert values(enums.Phase) == [p["id"] for p in taxonomy["phases"]]
    assert values(enums.NextAction) == [a["id"] for a in taxonomy["nextActions"]]


@pytest.mark.parametrize("code", list(ErrorCode))
def test_generated_error_model_accepts_every_graph_error(code: ErrorCode) -> None:
    from capability_graph import ErrorObject as ErrorModel

    for phase in REGISTRY[code].phases:
        error = GraphError.of(code, phase).to_json()
        dumped = ErrorModel.model_validate(error).model_dump(mode="json", exclude_unset=True)
        assert dumped == error
