"""The error registry, read from ``spec/`` (``taxonomy.json``), not from the implementation.

The codes, phases and next actions the checks hold emitted errors to; the phase each Tool Adapter
tool reports errors in and the result schema of each; :func:`expected_error`, the exact error
object a code stands for with the registry's default message.
"""

from __future__ import annotations

from typing import Any

from capability_graph_testing.common import SPEC, load_json

_TAXONOMY = load_json(SPEC / "taxonomy.json")
REGISTRY: dict[str, dict[str, Any]] = {entry["code"]: entry for entry in _TAXONOMY["codes"]}
ACTIONS: tuple[str, ...] = tuple(action["id"] for action in _TAXONOMY["nextActions"])
PHASES: tuple[str, ...] = tuple(phase["id"] for phase in _TAXONOMY["phases"])
MODEL_CODES = frozenset(code for code in REGISTRY if code.startswith("CG_MODEL_"))
TOOL_PHASES = {
    "describe_graph": "query",
    "list_capabilities": "query",
    "resolve_capabilities": "query",
    "match_capabilities": "match",
    "read_document": "document",
}
TOOLS = tuple(TOOL_PHASES)
RESULT_SCHEMAS = {
    "describe_graph": "describe-result.schema.json",
    "list_capabilities": "list-result.schema.json",
    "resolve_capabilities": "resolve-result.schema.json",
    "match_capabilities": "match-result.schema.json",
    "read_document": "read-document-result.schema.json",
}


_DEFAULT: Any = object()


def expected_error(code: str, phase: str, action: str | None = _DEFAULT) -> dict[str, str]:
    """The exact error object with the registry's default message (and default action)."""
    entry = REGISTRY[code]
    error = {"code": code, "phase": phase, "message": entry["messages"]["default"]}
    resolved = entry.get("defaultAction") if action is _DEFAULT else action
    if resolved is not None:
        error["nextAction"] = resolved
    return error


CLOSED = expected_error("CG_GRAPH_CLOSED", "lifecycle")
