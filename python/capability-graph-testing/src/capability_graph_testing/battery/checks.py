"""Checks of what a surface emits, against the spec's schemas and the registry.

An error object (``error.schema.json``: a registered code, in one of its phases, with an action
it may carry and a registry message unless the code allows pointer messages), a Tool Adapter
outcome, an MCP ``tools/call`` result, and a failing CLI graph command (exit status, empty stdout,
one ``cli-error`` envelope line on stderr).
"""

from __future__ import annotations

import json
from typing import Any

from capability_graph_testing.battery.registry import REGISTRY, RESULT_SCHEMAS, TOOL_PHASES
from capability_graph_testing.common import schema_validator


def _schema_problems(schema: str, value: Any) -> list[str]:
    return [
        f"{list(e.absolute_path)}: {e.message}" for e in schema_validator(schema).iter_errors(value)
    ]


def check_error(error: Any, *, phase: str | None = None) -> dict[str, str]:
    """``error`` is a contract error object: schema-valid, registered code in a registered phase
    of that code, a nextAction the code may carry, and a registry message unless the code allows
    pointer messages. Returns it."""
    assert isinstance(error, dict), error
    problems = _schema_problems("error.schema.json", error)
    assert not problems, (error, problems)
    entry = REGISTRY[error["code"]]
    assert error["phase"] in entry["phases"], error
    if phase is not None and error["code"] != "CG_GRAPH_CLOSED":
        assert error["phase"] == phase, (error, phase)
    action = error.get("nextAction")
    if entry.get("defaultAction") is None:
        assert action is None, error
    else:
        assert action in {entry.get("defaultAction"), *entry["executorActions"]}, error
    if not entry["pointerMessages"]:
        assert error["message"] in entry["messages"].values(), error
    return error


def check_outcome(outcome: Any, *, tool: str | None = None) -> dict[str, Any]:
    """A Tool Adapter outcome: schema-valid; its error checked; its result schema-valid."""
    problems = _schema_problems("tool-outcome.schema.json", outcome)
    assert not problems, (outcome, problems)
    if outcome["ok"]:
        if tool is not None:
            check_result(tool, outcome["result"])
    else:
        check_error(outcome["error"], phase=TOOL_PHASES.get(tool or ""))
    checked: dict[str, Any] = outcome
    return checked


def check_result(tool: str, result: Any) -> None:
    problems = _schema_problems(RESULT_SCHEMAS[tool], result)
    assert not problems, (tool, problems)


def check_mcp_result(result: Any, *, tool: str | None = None) -> dict[str, Any] | None:
    """A tools/call result on the wire: schema-valid; ``isError`` has exactly one text item whose
    JSON is a checked error object and no structuredContent. Returns the error (or None)."""
    problems = _schema_problems("mcp-tool-result.schema.json", result)
    assert not problems, (result, problems)
    if result.get("isError"):
        assert "structuredContent" not in result, result
        assert len(result["content"]) == 1, result
        return check_error(
            json.loads(result["content"][0]["text"]), phase=TOOL_PHASES.get(tool or "")
        )
    if tool is not None:
        check_result(tool, result["structuredContent"])
    return None


def check_cli_failure(status: int, stdout: str, stderr: str) -> dict[str, str]:
    """A failing graph command: exit 1 (130 for CG_MODEL_CANCELLED), stdout empty, exactly one
    envelope line on stderr."""
    assert status in (1, 130), (status, stdout, stderr)
    assert stdout == "", stdout
    assert stderr.endswith("\n"), stderr
    assert stderr.count("\n") == 1, stderr
    envelope = json.loads(stderr)
    problems = _schema_problems("cli-error.schema.json", envelope)
    assert not problems, (envelope, problems)
    assert (status == 130) == (envelope["error"]["code"] == "CG_MODEL_CANCELLED"), envelope
    return check_error(envelope["error"])
