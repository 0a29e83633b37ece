"""The conformance schemas follow the spec's conventions (as tools/check_spec.py enforces for
spec/capability-graph): every object schema declares additionalProperties, patterns are anchored,
$defs are titled by their key, and nothing but the documented placeholders accepts null."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from capability_graph_conformance.schemas import SchemaSet, ecma_search

SUBSCHEMA_MAPS = ("$defs", "properties", "patternProperties")
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SUBSCHEMA_ONE = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
)


def _subschemas(schema: Any, pointer: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(schema, dict):
        return
    yield pointer, schema
    for key in SUBSCHEMA_MAPS:
        for name, sub in (schema.get(key) or {}).items():
            yield from _subschemas(sub, f"{pointer}/{key}/{name}")
    for key in SUBSCHEMA_LISTS:
        for index, sub in enumerate(schema.get(key) or ()):
            yield from _subschemas(sub, f"{pointer}/{key}/{index}")
    for key in SUBSCHEMA_ONE:
        if isinstance(schema.get(key), dict):
            yield from _subschemas(schema[key], f"{pointer}/{key}")


def _schemas(repo: Path) -> list[Path]:
    return sorted((repo / "spec" / "conformance").glob("*.schema.json"))


def test_there_are_five_conformance_schemas(repo: Path) -> None:
    assert [p.name for p in _schemas(repo)] == [
        "driver-protocol.schema.json",
        "expected-failures.schema.json",
        "manifest.schema.json",
        "report.schema.json",
        "vector.schema.json",
    ]


@pytest.mark.parametrize(
    "name", ["driver-protocol", "expected-failures", "manifest", "report", "vector"]
)
def test_conventions(repo: Path, name: str) -> None:
    schema = json.loads((repo / "spec" / "conformance" / f"{name}.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert (
        schema["$id"] == f"https://schemas.capability-graph.dev/v1/conformance/{name}.schema.json"
    )
    problems = []
    for pointer, sub in _subschemas(schema):
        if sub.get("type") == "object" and "additionalProperties" not in sub:
            problems.append(f"{pointer}: object without additionalProperties")
        pattern = sub.get("pattern")
        if isinstance(pattern, str) and not (pattern.startswith("^") and pattern.endswith("$")):
            problems.append(f"{pointer}: unanchored pattern {pattern}")
        if isinstance(pattern, str):
            re.compile(pattern)
    for key, definition in schema.get("$defs", {}).items():
        if definition.get("title") != key:
            problems.append(f"$defs/{key} needs title {key}")
    assert problems == []


def test_patterns_are_ecma_262() -> None:
    assert ecma_search("^a$", "a")
    assert not ecma_search("^a$", "a\n")  # Python's re alone would accept this


def test_driver_messages(schemas: SchemaSet) -> None:
    valid = [
        {"type": "start", "protocol": "1.0", "suite": "1.0.0"},
        {
            "type": "run",
            "seq": 1,
            "surface": "tool",
            "step": {"op": "call", "tool": "t", "arguments": {}},
        },
        {"type": "observation", "seq": 1, "observation": {"outcome": "returned", "value": None}},
        {
            "type": "observation",
            "seq": 2,
            "observation": {
                "outcome": "raised",
                "graphError": True,
                "error": {"code": "X"},
                "display": "x",
            },
        },
        {
            "type": "started",
            "protocol": "1.0",
            "implementation": {"name": "n", "language": "l", "version": "v"},
            "surfaces": ["sdk"],
        },
        {"type": "stop"},
        {"type": "stopped"},
    ]
    for message in valid:
        assert schemas.errors("conformance/driver-protocol.schema.json", message) == [], message
    invalid = [
        {"type": "run", "seq": 0, "surface": "sdk", "step": {"op": "close"}},
        {"type": "run", "seq": 1, "surface": "mcp", "step": {"op": "close"}},
        {"type": "run", "seq": 1, "surface": "sdk", "step": {"op": "open"}},
        {"type": "observation", "seq": 1, "observation": {"outcome": "maybe"}},
        {"type": "observation", "seq": 1, "observation": {"outcome": "raised", "display": "x"}},
    ]
    for message in invalid:
        assert schemas.errors("conformance/driver-protocol.schema.json", message) != [], message


def test_manifest_requires_the_config_placeholder_in_the_mcp_command(schemas: SchemaSet) -> None:
    manifest = {"name": "x", "language": "Go", "version": "1", "mcp": {"argv": ["x", "mcp"]}}
    assert schemas.errors("conformance/manifest.schema.json", manifest) != []
    manifest["mcp"] = {"argv": ["x", "mcp", "--config", "{config}"]}
    assert schemas.errors("conformance/manifest.schema.json", manifest) == []


def test_every_vector_and_manifest_validates(schemas: SchemaSet, repo: Path) -> None:
    fixture_suite = repo / "conformance" / "harness" / "tests" / "fixtures" / "suite"
    for vectors in (repo / "conformance", fixture_suite / "conformance"):
        for path in (vectors / "vectors" / "capability-graph").rglob("*.json"):
            data = json.loads(path.read_text())
            assert schemas.errors("conformance/vector.schema.json", data) == [], path
    for path in (repo / "conformance" / "harness" / "tests" / "fakes").glob("*.json"):
        assert (
            schemas.errors("conformance/manifest.schema.json", json.loads(path.read_text())) == []
        )


def test_an_argv_item_is_a_text_or_exact_bytes_in_base64(schemas: SchemaSet) -> None:
    """An argument that is not UTF-8 (CG-CLI-19) is written {"base64": ...}; the first item,
    the command, is always a text."""
    vector = {
        "id": "cg.cli.x",
        "title": "x",
        "requirements": ["CG-CLI-19"],
        "level": "required",
        "fixture": "minimal",
        "argv": ["list", "--cursor", {"base64": "Y2Fm6Q=="}],
        "expect": {"exit": {"code": 2}},
        "surfaces": ["cli"],
    }
    assert schemas.errors("conformance/vector.schema.json", vector) == []
    for argv in (
        [{"base64": "/w=="}],
        ["list", {"base64": "not base64!"}],
        ["list", {"base64": "/w==", "text": "x"}],
        ["list", {"bytes": "/w=="}],
    ):
        assert schemas.errors("conformance/vector.schema.json", {**vector, "argv": argv}) != []
