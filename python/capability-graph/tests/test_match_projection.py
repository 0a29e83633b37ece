"""Projection of executor failures (CG-MODEL-5), table-driven: every CG_MODEL_* code x every
action kind (missing, default, each allowed, each illegal, unknown) x a secret planted in the raw
message, raised as a GraphError, a duck-typed executor error and through the scripted executor."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capability_graph import GraphError
from capability_graph._core.executors import build_executor
from capability_graph._core.match import MODEL_CODES, project_executor_failure, run_match
from capability_graph._generated.taxonomy import REGISTRY, ErrorCode, NextAction
from capability_graph_testing.matching import SECRET, make_job, model_error, raises_graph_error, run

MODEL = sorted(MODEL_CODES)
NON_MODEL = sorted(set(ErrorCode) - MODEL_CODES)
UNAVAILABLE_RETRY = model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)


class DuckError(Exception):
    """A foreign executor's error: ``code`` plus an optional action attribute."""

    def __init__(self, message: str, code: object, **attrs: object) -> None:
        super().__init__(message)
        self.code = code
        for name, value in attrs.items():
            setattr(self, name, value)


def _action_cases() -> list[tuple[ErrorCode, str | None, str]]:
    """(code, action given by the executor or None for missing, expected nextAction kind)."""
    cases: list[tuple[ErrorCode, str | None, str]] = []
    for code in MODEL:
        entry = REGISTRY[code]
        cases.append((code, None, "default"))
        assert entry.default_action is not None
        cases.append((code, entry.default_action.value, "default"))
        cases.extend((code, action.value, action.value) for action in entry.executor_actions)
        legal = {entry.default_action, *entry.executor_actions}
        cases.extend((code, a.value, "default") for a in NextAction if a not in legal)
        cases.append((code, "reboot_the_world", "default"))
        cases.append((code, f"{SECRET}\n", "default"))
    return cases


ACTION_CASES = _action_cases()


def _expected(code: ErrorCode, kind: str) -> dict[str, str]:
    return model_error(code, "default" if kind == "default" else kind)


def test_fallback_actions_are_the_seed_table() -> None:
    # Missing or illegal nextAction falls back by code (CG-MODEL-5).
    fallback = {code.value: REGISTRY[code].default_action for code in MODEL}
    assert fallback == {
        "CG_MODEL_NOT_CONFIGURED": NextAction.CHECK_CONFIG,
        "CG_MODEL_UNAVAILABLE": NextAction.RETRY,
        "CG_MODEL_EXECUTOR_UNSAFE": NextAction.CHECK_CONFIG,
        "CG_MODEL_CONTEXT_EXCEEDED": NextAction.NARROW_SCOPE,
        "CG_MODEL_OUTPUT_INVALID": NextAction.RETRY,
        "CG_MODEL_INVALID_SELECTION": NextAction.REFRESH,
        "CG_MODEL_OUTPUT_TOO_LARGE": NextAction.NARROW_SCOPE,
        "CG_MODEL_REFUSED": NextAction.FIX_INPUT,
        "CG_MODEL_TIMEOUT": NextAction.RETRY,
        "CG_MODEL_CANCELLED": NextAction.RETRY,
    }


@pytest.mark.parametrize(("code", "action", "kind"), ACTION_CASES)
@pytest.mark.parametrize("attribute", ["next_action", "nextAction"])
def test_duck_typed_model_error_keeps_code_and_only_a_legal_action(
    code: ErrorCode, action: str | None, kind: str, attribute: str
) -> None:
    attrs = {} if action is None else {attribute: action}
    exc = DuckError(f"upstream said {SECRET} at /home/user/.env", code.value, **attrs)
    assert project_executor_failure(exc).to_json() == _expected(code, kind)


@pytest.mark.parametrize(("code", "action", "kind"), ACTION_CASES)
def test_scripted_raise_is_projected_through_run_match(
    code: ErrorCode, action: str | None, kind: str
) -> None:
    raise_step: dict[str, Any] = {"code": code.value, "message": f"{SECRET} token=abc"}
    if action is not None:
        raise_step["nextAction"] = action
    executor = build_executor({"executor": "scripted", "steps": [{"raise": raise_step}]})
    error = run(
        raises_graph_error(run_match(executor, make_job(), cancel=None, max_output_bytes=65536))
    )
    assert error.to_json() == _expected(code, kind)
    assert error.__cause__ is None
    assert error.__suppress_context__


@pytest.mark.parametrize("code", MODEL)
def test_graph_error_with_default_or_allowed_action_keeps_it_and_gets_the_safe_message(
    code: ErrorCode,
) -> None:
    entry = REGISTRY[code]
    for action in (entry.default_action, *entry.executor_actions):
        raised = GraphError(code, "match", f"raw {SECRET}", action)
        assert project_executor_failure(raised).to_json() == model_error(code, action)


@pytest.mark.parametrize("code", NON_MODEL)
def test_non_model_graph_error_becomes_unavailable_retry(code: ErrorCode) -> None:
    entry = REGISTRY[code]
    raised = GraphError(code, entry.phases[0], f"raw {SECRET}")
    assert project_executor_failure(raised).to_json() == UNAVAILABLE_RETRY


@pytest.mark.parametrize("code", [c.value for c in NON_MODEL])
@pytest.mark.parametrize("action", [None, "check_config", "contact_admin", "x"])
def test_non_model_code_never_carries_its_action(code: str, action: str | None) -> None:
    exc = DuckError(SECRET, code, next_action=action)
    assert project_executor_failure(exc).to_json() == UNAVAILABLE_RETRY


@pytest.mark.parametrize(
    "code",
    [
        "CG_MODEL_SOMETHING_NEW",
        "cg_model_timeout",
        " CG_MODEL_TIMEOUT",
        "",
        SECRET,
        401,
        None,
        ["CG_MODEL_TIMEOUT"],
        b"CG_MODEL_TIMEOUT",
    ],
)
def test_unknown_or_non_string_code_becomes_unavailable_retry(code: object) -> None:
    exc = DuckError(SECRET, code, next_action="check_config")
    assert project_executor_failure(exc).to_json() == UNAVAILABLE_RETRY


@pytest.mark.parametrize(
    "exc",
    [
        ValueError(SECRET),
        RuntimeError(f"/etc/passwd {SECRET}"),
        OSError(2, SECRET, "/root/.ssh/id_rsa"),
        KeyError(SECRET),
        TimeoutError(SECRET),  # a plain TimeoutError is not the runner's deadline
        Exception(),
    ],
)
def test_plain_exception_becomes_unavailable_retry(exc: BaseException) -> None:
    assert project_executor_failure(exc).to_json() == UNAVAILABLE_RETRY


def test_scripted_raise_exception_becomes_unavailable_retry() -> None:
    executor = build_executor({"executor": "scripted", "steps": [{"raiseException": SECRET}]})
    error = run(
        raises_graph_error(run_match(executor, make_job(), cancel=None, max_output_bytes=65536))
    )
    assert error.to_json() == UNAVAILABLE_RETRY


def test_code_property_that_raises_is_treated_as_plain_exception() -> None:
    class Sneaky(Exception):
        @property
        def code(self) -> str:
            raise RuntimeError(SECRET)

    assert project_executor_failure(Sneaky(SECRET)).to_json() == UNAVAILABLE_RETRY


def test_str_subclass_code_and_action_are_read_as_plain_strings() -> None:
    class Weird(str):
        def __str__(self) -> str:
            return SECRET

    exc = DuckError(SECRET, Weird("CG_MODEL_OUTPUT_INVALID"), next_action=Weird("check_config"))
    assert project_executor_failure(exc).to_json() == model_error(
        ErrorCode.CG_MODEL_OUTPUT_INVALID, NextAction.CHECK_CONFIG
    )


def test_next_action_attribute_wins_over_camel_case() -> None:
    exc = DuckError(SECRET, "CG_MODEL_UNAVAILABLE", next_action="retry", nextAction="check_config")
    assert project_executor_failure(exc).to_json() == model_error(
        ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY
    )


@given(
    text=st.text(),
    code=st.one_of(st.sampled_from([c.value for c in ErrorCode]), st.text()),
    action=st.one_of(st.none(), st.sampled_from([a.value for a in NextAction]), st.text()),
    duck=st.booleans(),
)
def test_no_raw_text_ever_survives_projection(
    text: str, code: str, action: str | None, duck: bool
) -> None:
    raw = f"{SECRET}{text}/home/u/.config\x1b[31m\x00"
    exc: BaseException = DuckError(raw, code, nextAction=action) if duck else ValueError(raw)
    projected = project_executor_failure(exc).to_json()
    rendered = json.dumps(projected, ensure_ascii=False)
    assert SECRET not in rendered
    assert projected["phase"] == "match"
    assert projected["code"].startswith("CG_MODEL_")
    assert projected["message"] == REGISTRY[ErrorCode(projected["code"])].messages["default"]
    if not duck or code not in {c.value for c in MODEL_CODES}:
        assert projected == UNAVAILABLE_RETRY
