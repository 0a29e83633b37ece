"""The error hierarchy: classes, codes, fields, JSON forms, pickling."""

from __future__ import annotations

import builtins
import json
import pickle
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import SPEC_DIR

FLOWCAST_SUBCLASSES = [
    flowcast.TimeoutError,
    flowcast.SpawnError,
    flowcast.GateError,
    flowcast.SchemaError,
    flowcast.ConfigError,
    flowcast.PathError,
    flowcast.GuardError,
    flowcast.GitError,
    flowcast.VerifyError,
    flowcast.ParallelError,
    flowcast.LockError,
]


def _validator(name: str) -> jsonschema.protocols.Validator:
    resources = []
    for path in (SPEC_DIR / "schemas").glob("*.schema.json"):
        schema = json.loads(path.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    registry = Registry().with_resources(resources)
    schema = json.loads((SPEC_DIR / "schemas" / name).read_text())
    return jsonschema.Draft202012Validator(schema, registry=registry)


ERROR_SCHEMA = _validator("error.schema.json")
PAUSE_SCHEMA = _validator("pause-signal.schema.json")


def samples() -> list[flowcast.FlowcastError]:
    rollback = flowcast.GuardError("rollback failed", code="ROLLBACK_FAIL")
    rollback.__cause__ = ValueError("the change broke")
    return [
        flowcast.FlowcastError("step 'x' is already running", code="STEP_REENTRY"),
        flowcast.TimeoutError("'codex' timed out after 1s"),
        flowcast.SpawnError("cannot start", spawn_error="ENOENT"),
        flowcast.SpawnError("exited", exit_code=2, output="out"),
        flowcast.GateError("quality gate 't' failed (exit 1)", gate="t", exit_code=1, output=""),
        flowcast.SchemaError("bad", schema_error="/a: wrong"),
        flowcast.ConfigError("bad config"),
        flowcast.PathError("bad name"),
        flowcast.GuardError("dirty"),
        rollback,
        flowcast.GitError("git commit failed", stderr="fatal: x"),
        flowcast.VerifyError("all failed", voter_errors=[flowcast.VoterError("l", "boom")]),
        flowcast.ParallelError(
            "1 failed",
            failures=[
                flowcast.ParallelFailure(
                    0, flowcast.GateError("g", gate="g", exit_code=1, output="")
                ),
                flowcast.ParallelFailure(3, KeyError("k")),
            ],
        ),
        flowcast.LockError("busy", code="LOCK_BUSY"),
        flowcast.LockError("pending", code="LOCK_OWNER_PENDING"),
        flowcast.LockError("exhausted", code="LOCK_RETRY_EXHAUSTED"),
    ]


@pytest.mark.parametrize("cls", FLOWCAST_SUBCLASSES, ids=lambda c: c.__name__)
def test_every_error_class_is_a_flowcast_error(cls: type[Exception]) -> None:
    assert issubclass(cls, flowcast.FlowcastError)


def test_timeout_error_is_also_the_builtin_timeout_error() -> None:
    assert issubclass(flowcast.TimeoutError, builtins.TimeoutError)
    assert issubclass(flowcast.TimeoutError, OSError)


def test_timeout_error_has_timed_out_true() -> None:
    assert flowcast.TimeoutError("late").timed_out is True


def test_config_error_has_config_error_true() -> None:
    assert flowcast.ConfigError("bad").config_error is True


def test_pause_signal_is_not_a_flowcast_error() -> None:
    signal = flowcast.PauseSignal("needs review", {"pr": 7})
    assert not isinstance(signal, flowcast.FlowcastError)
    assert isinstance(signal, Exception)
    assert (signal.pause_reason, signal.pause_context) == ("needs review", {"pr": 7})


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (flowcast.TimeoutError("x"), "TIMEOUT"),
        (flowcast.SpawnError("x"), "SPAWN_ERROR"),
        (flowcast.GateError("x", gate="g", exit_code=1, output=""), "GATE_FAIL"),
        (flowcast.SchemaError("x", schema_error="e"), "SCHEMA_ERROR"),
        (flowcast.ConfigError("x"), "CONFIG_ERROR"),
        (flowcast.PathError("x"), "PATH_ERROR"),
        (flowcast.GuardError("x"), "GUARD_FAIL"),
        (flowcast.GitError("x"), "GIT_FAIL"),
        (flowcast.VerifyError("x", voter_errors=[]), "VERIFY_FAIL"),
        (flowcast.ParallelError("x", failures=[]), "PARALLEL_FAIL"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_each_class_carries_its_code(error: flowcast.FlowcastError, code: str) -> None:
    assert error.code == code


def test_guard_error_refuses_a_code_that_is_not_its_own() -> None:
    with pytest.raises(ValueError, match="GuardError code"):
        flowcast.GuardError("x", code="LOCK_BUSY")


def test_lock_error_refuses_a_code_that_is_not_its_own() -> None:
    with pytest.raises(ValueError, match="LockError code"):
        flowcast.LockError("x", code="GUARD_FAIL")


def test_message_is_str_of_the_error() -> None:
    error = flowcast.GitError("git add failed (exit 128)", stderr="fatal")
    assert str(error) == error.message == "git add failed (exit 128)"


@pytest.mark.parametrize("error", samples(), ids=lambda e: f"{type(e).__name__}-{e.code}")
def test_to_dict_follows_the_error_schema(error: flowcast.FlowcastError) -> None:
    data = error.to_dict()
    assert list(ERROR_SCHEMA.iter_errors(data)) == []
    assert (data["name"], data["code"], data["message"]) == (
        type(error).__name__,
        error.code,
        str(error),
    )


@pytest.mark.parametrize("error", samples(), ids=lambda e: f"{type(e).__name__}-{e.code}")
def test_to_dict_is_json(error: flowcast.FlowcastError) -> None:
    assert json.loads(json.dumps(error.to_dict())) == error.to_dict()


def test_to_dict_uses_camel_case_fields() -> None:
    error = flowcast.SpawnError("x", spawn_error=None, exit_code=3, output="o")
    assert error.to_dict() == {
        "name": "SpawnError",
        "code": "SPAWN_ERROR",
        "message": "x",
        "spawnError": None,
        "exitCode": 3,
        "output": "o",
    }


def test_rollback_failure_projects_its_cause() -> None:
    error = flowcast.GuardError("rollback failed", code="ROLLBACK_FAIL")
    error.__cause__ = RuntimeError("original")
    assert error.to_dict()["cause"] == {"name": "RuntimeError", "message": "original"}


def test_parallel_failures_project_nested_errors_by_their_own_json() -> None:
    nested = flowcast.ConfigError("nested")
    error = flowcast.ParallelError("x", failures=[flowcast.ParallelFailure(1, nested)])
    assert error.to_dict()["failures"] == [{"index": 1, "error": nested.to_dict()}]


def test_pause_signal_to_dict_follows_its_schema() -> None:
    signal = flowcast.PauseSignal("waiting", {"when": object(), "n": 1})
    data = signal.to_dict()
    assert list(PAUSE_SCHEMA.iter_errors(data)) == []
    assert data["pauseContext"]["n"] == 1
    assert isinstance(data["pauseContext"]["when"], str)


def test_error_to_dict_of_a_foreign_exception_is_name_and_message() -> None:
    assert flowcast.error_to_dict(KeyError("k")) == {"name": "KeyError", "message": "'k'"}


def test_error_to_dict_survives_an_unprintable_exception() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert flowcast.error_to_dict(Unprintable())["message"] == "<unprintable Unprintable>"


@pytest.mark.parametrize("error", samples(), ids=lambda e: f"{type(e).__name__}-{e.code}")
def test_errors_survive_pickling(error: flowcast.FlowcastError) -> None:
    copy: Any = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert copy.to_dict() == {k: v for k, v in error.to_dict().items() if k != "cause"}
    assert str(copy) == str(error)


def test_pause_signal_survives_pickling() -> None:
    copy = pickle.loads(pickle.dumps(flowcast.PauseSignal("r", {"a": 1})))
    assert (copy.pause_reason, copy.pause_context) == ("r", {"a": 1})


def test_hierarchy_is_drawn_in_the_errors_module_docstring() -> None:
    from capability_graph_flowcast import _errors

    doc = _errors.__doc__ or ""
    for cls in [flowcast.FlowcastError, *FLOWCAST_SUBCLASSES, flowcast.PauseSignal]:
        assert cls.__name__ in doc
