"""The published schemas agree with the conformance vectors.

An implementer who validates with ``spec/capability-graph/schemas`` must get the contract's codes:
every input of every vector (request arguments, the host configuration, the provider
definitions, a match's context) goes through the schema that judges it, and the verdict must
agree with the code the vector expects. A schema that refuses what a later check owns -- a match
context ([CG-CTX-1]), an inline definition ([CG-CFG-3]) -- or accepts what the shape check must
refuse fails here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _spec
import pytest

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "conformance" / "vectors" / "capability-graph"
FIXTURES = REPO / "conformance" / "fixtures"
TOOLS = {
    tool["name"]: tool
    for tool in json.loads((REPO / "spec/capability-graph/tools.json").read_text("utf-8"))["tools"]
}
REQUEST_SCHEMAS = {
    "describe_graph": "describe-request.schema.json",
    "list_capabilities": "list-request.schema.json",
    "resolve_capabilities": "resolve-request.schema.json",
    "match_capabilities": "match-request.schema.json",
    "read_document": "read-document-request.schema.json",
}
DECIDED_BEFORE_SHAPE = ("CG_GRAPH_CLOSED", "CG_INPUT_TOO_LARGE")
CURSOR_MESSAGE = "Cursor is malformed, foreign or stale; restart listing without it"
# Configuration faults that no schema can see: the file itself, the file system, other sources.
CONFIG_FAULTS_BEYOND_SCHEMAS = (
    "Cannot read a valid bounded JSON configuration file",
    "is not a readable regular file",
    "repeats a providerId",
    "names a provider that is not loaded",
    "must not repeat items",
    "must be an existing directory",
    "nests sleepMs steps more than 16 deep",  # [CG-MSG-18]: no schema counts depth
)
# Request faults of the pure-JSON rules that no schema can see: a lone surrogate (JSON Schema
# validates decoded strings) and depth ([CG-CONV-7], [CG-CONV-15]).
REQUEST_FAULTS_BEYOND_SCHEMAS = (
    "a string has a lone surrogate",
    "nesting deeper than 32",
    "strings of valid Unicode text",  # a lone surrogate in a match context ([CG-CTX-1])
    "an object has a duplicate key",  # a request text's parse fault ([CG-MSG-13])
)


@dataclass(frozen=True)
class Judgement:
    """One input of one vector, the schema that judges it, and whether it must pass."""

    vector: str
    what: str
    schema: str
    value: Any
    must_pass: bool


def _merge_patch(base: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    merged = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = _merge_patch(merged.get(key), value)
    return merged


class NotJson(Exception):
    """A fixture file that is deliberately not JSON: no schema can judge it."""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        # RecursionError: a fixture nested deeper than this parser follows (CG-CONV-15 judges
        # such files without parsing them), which no schema can judge either.
        raise NotJson(str(path)) from None


def _config(vector: dict[str, Any]) -> Any:
    path = FIXTURES / vector["fixture"] / "capability-graph.json"
    base = _read_json(path) if path.exists() else None
    if "config" in vector:
        config = _merge_patch(base or {}, vector["config"])
        # A scripted endpoint's base URL replaces {endpoint} before any implementation reads it.
        text = json.dumps(config).replace(
            "{endpoint}", "http://127.0.0.1:8080/v0123456789abcdef/v1"
        )
        return json.loads(text)
    return base


def _definitions(vector: dict[str, Any], config: Any) -> Iterator[tuple[str, Any]]:
    """The definitions the vector's graph loads: inline ones and the fixture's files."""
    if not isinstance(config, dict) or not isinstance(config.get("providers"), list):
        return
    for index, source in enumerate(config["providers"]):
        if not isinstance(source, dict):
            continue
        if "definition" in source:
            yield f"inline definition {index}", source["definition"]
        elif isinstance(source.get("path"), str):
            path = FIXTURES / vector["fixture"] / source["path"]
            if path.is_file():
                yield source["path"], _read_json(path)


def _request_value(arguments: Any) -> Any:
    """The request a vector's arguments stand for on the SDK: a string is a request text, read
    once (CG-CONV-17); a text that is not JSON is :data:`NOT_JSON` (no schema judges it)."""
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments, parse_constant=_not_json)
    except ValueError:
        return NOT_JSON


def _not_json(name: str) -> Any:
    raise ValueError(name)


NOT_JSON = object()


def _calls(vector: dict[str, Any]) -> Iterator[tuple[str, Any, dict[str, Any] | None]]:
    """(tool, arguments, expected error or None) of every call the vector makes."""
    if "call" in vector:
        # A call without arguments is the call with {} (CG-MCP-7).
        call = vector["call"]
        arguments = _request_value(call.get("arguments", {}))
        if arguments is not NOT_JSON:
            yield call["tool"], arguments, vector["expect"].get("error")
    for step in vector.get("steps", ()):
        if step["op"] == "call" and "$captured" not in json.dumps(step["arguments"]):
            yield step["tool"], step["arguments"], step.get("expect", {}).get("error")


def _judgements() -> Iterator[Judgement]:
    for path in sorted(VECTORS.glob("*/*.json")):
        vector = json.loads(path.read_text("utf-8"))
        name = vector["id"]
        expected = vector.get("expect", {}).get("error") if "open" in vector else None
        try:
            config = _config(vector)
        except NotJson:
            continue  # the unreadable configuration: refused before any schema
        config_fault = expected is not None and expected["phase"] == "config"
        # A configuration fault whose message the vector does not pin may be one no schema sees.
        beyond_schemas = config_fault and (
            "message" not in expected
            or any(fault in expected["message"] for fault in CONFIG_FAULTS_BEYOND_SCHEMAS)
        )
        # A maintenance command's vector (argv, no error expectation) may run on a configuration
        # it reports as invalid: its verdict is the report's, not an error code.
        reported = "argv" in vector and expected is None
        if config is not None and not beyond_schemas and not reported:
            yield Judgement(name, "configuration", "config.schema.json", config, not config_fault)
        load_fault = expected is not None and expected["phase"] == "load"
        if not config_fault and not load_fault:
            for where, definition in _definitions(vector, config):
                yield Judgement(name, where, "definition.schema.json", definition, True)
        for tool, arguments, error in _calls(vector):
            if tool not in TOOLS or (error and error["code"] in DECIDED_BEFORE_SHAPE):
                continue  # an unknown tool, a closed graph or a size fault: no shape is judged
            if error and any(f in error.get("message", "") for f in REQUEST_FAULTS_BEYOND_SCHEMAS):
                continue
            shape_fault = (
                error is not None
                and error["code"] == "CG_INPUT_INVALID"
                and error.get("message") != CURSOR_MESSAGE
            )
            yield Judgement(
                name, f"{tool} arguments", REQUEST_SCHEMAS[tool], arguments, not shape_fault
            )
            if tool == "match_capabilities" and not shape_fault and "context" in arguments:
                context_fault = error is not None and error["code"] == "CG_CONTEXT_INVALID"
                yield Judgement(
                    name,
                    "match context",
                    "context.schema.json",
                    arguments["context"],
                    not context_fault,
                )


JUDGEMENTS = list(_judgements())


@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    schemas = _spec.load_schemas()
    registry = _spec.registry(schemas)
    return {name: _spec.validator_for(name, schemas, registry) for name in schemas}


@pytest.mark.parametrize("judgement", JUDGEMENTS, ids=[f"{j.vector}:{j.what}" for j in JUDGEMENTS])
def test_the_schema_verdict_agrees_with_the_code_the_vector_expects(
    judgement: Judgement, validators: dict[str, Any]
) -> None:
    errors = [e.message for e in validators[judgement.schema].iter_errors(judgement.value)]
    if judgement.must_pass:
        assert errors == [], f"{judgement.schema} refuses what the contract accepts here"
    else:
        assert errors, f"{judgement.schema} accepts what the shape check must refuse"


def test_every_vector_area_contributes_judgements() -> None:
    areas = {j.vector.split(".")[1] for j in JUDGEMENTS}
    assert {"query", "context", "config", "load", "budget", "precedence"} <= areas
