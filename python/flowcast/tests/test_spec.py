"""spec/flowcast: schemas are valid 2020-12 with resolvable $refs, the taxonomy matches the
Python classes, the vectors validate, and every error code is covered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import SPEC_DIR, VECTORS_DIR

SCHEMA_FILES = [
    *sorted((SPEC_DIR / "schemas").glob("*.schema.json")),
    SPEC_DIR / "taxonomy.schema.json",
]
TAXONOMY = json.loads((SPEC_DIR / "taxonomy.json").read_text())


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def registry() -> Registry:
    return Registry().with_resources(
        (load(p)["$id"], Resource.from_contents(load(p))) for p in SCHEMA_FILES
    )


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for v in node.values() for r in refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs(v)]
    return []


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_schema_is_valid_draft_2020_12(path: Path) -> None:
    schema = load(path)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/" + path.name)
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: p.name)
def test_every_ref_resolves(path: Path) -> None:
    schema = load(path)
    resolver = registry().resolver(base_uri=schema["$id"])
    for ref in refs(schema):
        resolver.lookup(ref)


def test_taxonomy_follows_its_schema() -> None:
    jsonschema.validate(TAXONOMY, load(SPEC_DIR / "taxonomy.schema.json"))


def test_taxonomy_classes_are_the_python_classes_with_their_bases() -> None:
    for entry in TAXONOMY["classes"]:
        cls = getattr(flowcast, entry["name"])
        base = Exception if entry["base"] == "Error" else getattr(flowcast, entry["base"])
        assert cls.__bases__[0] is base, entry["name"]
        assert issubclass(cls, flowcast.FlowcastError) is not entry.get("notFlowcastError", False)


def test_taxonomy_codes_belong_to_the_class_that_raises_them() -> None:
    classes = {c["name"]: c for c in TAXONOMY["classes"]}
    codes = [c["code"] for c in TAXONOMY["codes"]]
    assert len(codes) == len(set(codes))
    for code in TAXONOMY["codes"]:
        assert code["code"] in classes[code["class"]]["codes"]
    assert sorted(codes) == sorted(c for cls in classes.values() for c in cls["codes"])


def test_default_codes_match_the_taxonomy() -> None:
    for entry in TAXONOMY["classes"]:
        cls = getattr(flowcast, entry["name"])
        if entry.get("notFlowcastError") or entry["name"] == "FlowcastError":
            continue
        assert cls.default_code in entry["codes"], entry["name"]


def test_taxonomy_fields_are_the_python_attributes_and_json_keys() -> None:
    sample: dict[str, Any] = {
        "TimeoutError": flowcast.TimeoutError("x"),
        "SpawnError": flowcast.SpawnError("x"),
        "GateError": flowcast.GateError("x", gate="g", exit_code=1, output=""),
        "SchemaError": flowcast.SchemaError("x", schema_error=""),
        "ConfigError": flowcast.ConfigError("x"),
        "GitError": flowcast.GitError("x"),
        "VerifyError": flowcast.VerifyError("x", voter_errors=[]),
        "ParallelError": flowcast.ParallelError("x", failures=[]),
        "PauseSignal": flowcast.PauseSignal("x"),
    }
    for entry in TAXONOMY["classes"]:
        error = sample.get(entry["name"])
        if error is None:
            continue
        data = error.to_dict()
        for field in entry["fields"]:
            assert hasattr(error, field["python"]), (entry["name"], field["python"])
            assert field["json"] in data, (entry["name"], field["json"])


def test_the_published_retryable_pattern_is_the_one_in_use() -> None:
    from capability_graph_flowcast import _retry

    assert TAXONOMY["retryable"]["messagePattern"] == _retry._RETRYABLE_MESSAGE.pattern
    assert set(TAXONOMY["retryable"]["apiStatuses"]) == set(_retry.RETRYABLE_API_STATUSES)


VECTOR_FILES = sorted(VECTORS_DIR.glob("*.json"))


@pytest.mark.parametrize("path", VECTOR_FILES, ids=lambda p: p.name)
def test_vector_file_follows_the_vector_schema(path: Path) -> None:
    schema = load(SPEC_DIR / "schemas" / "vectors.schema.json")
    jsonschema.Draft202012Validator(schema, registry=registry()).validate(load(path))
    data = load(path)
    assert path.stem == data["area"]
    assert all(v["id"].startswith(f"fc.{data['area']}.") for v in data["vectors"])


def test_vector_ids_are_unique() -> None:
    ids = [v["id"] for p in VECTOR_FILES for v in load(p)["vectors"]]
    assert len(ids) == len(set(ids))


def test_every_code_raised_by_a_primitive_is_covered_by_a_vector_or_a_test() -> None:
    vector_codes = {
        code for p in VECTOR_FILES for v in load(p)["vectors"] for code in _codes(v["expect"])
    }
    # Codes that need git, a lock or agent runners are covered by the Python tests instead.
    python_tested = {
        "GUARD_FAIL",
        "ROLLBACK_FAIL",
        "GIT_FAIL",
        "VERIFY_FAIL",
        "LOCK_BUSY",
        "LOCK_RETRY_EXHAUSTED",
        "LOCK_OWNER_PENDING",
        "STEP_REENTRY",
        "SCHEMA_ERROR",
    }
    all_codes = {c["code"] for c in TAXONOMY["codes"]}
    assert all_codes - vector_codes == python_tested


def _codes(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["code"]} if isinstance(node.get("code"), str) else set()
        return own.union(*(_codes(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_codes(v) for v in node))
    return set()
