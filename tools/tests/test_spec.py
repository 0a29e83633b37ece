"""The spec is consistent, every example is judged as labelled by the JSON Schemas, and the
generated Pydantic models agree with the schemas on the same corpus, and the generated views
read every valid example of the schemas they view."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import _spec
import check_spec
import pytest
from capability_graph_conformance.schemas import ecma_to_python
from generate.models import modelled
from generate.views import VIEWED
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError

import capability_graph
from capability_graph_testing.common import read_whole

EXAMPLES = list(_spec.iter_examples())
_SCHEMAS = _spec.load_schemas()
#: The schemas that have generated models (the others are judged by the JSON Schemas alone).
MODELLED = modelled(_SCHEMAS)

# Rules only the JSON Schemas enforce: the generated models accept these invalid examples.
# Each is listed with the reason; the implementation checks them in code where they matter.
SCHEMA_ONLY: dict[str, str] = {
    # Cross-field rules written with if/then/else: datamodel-code-generator ignores if/then/else.
    "match-result/invalid/matched-without-candidates": "if/then: matched needs candidates",
    "match-result/invalid/no-match-with-candidates": "if/then: no_match has no candidates",
    "list-result/invalid/empty-with-items": "if/then: an empty catalog has no items",
    "list-result/invalid/empty-with-next-cursor": "if/then: an empty catalog has no cursor",
}
#: The schemas whose public type is a generated view (the resolve result and what it holds).
VIEWED_SCHEMAS = modelled(_SCHEMAS, VIEWED) - {"ids.schema.json", "definition.schema.json"}

# The corpus both validators must agree on covers these rules (CG-CONV-2 .. CG-CONV-8,
# CG-REQ-2, CG-CTX-1).
CORPUS_RULES = (
    "null-optional-field",
    "unknown-key",
    "boolean-where-integer",
    "string-where-list",
    "string-where-integer",
    "path-with-dotdot",
)


def _example_id(example: _spec.Example) -> str:
    return example.id


def _model_adapter(
    schema_name: str, schemas: dict[str, dict[str, Any]], package: str = "models"
) -> TypeAdapter[Any]:
    module = importlib.import_module(
        f"capability_graph._generated.{package}.{_spec.module_name(schema_name)}"
    )
    return TypeAdapter(getattr(module, schemas[schema_name]["title"]))


def _verdicts(adapter: TypeAdapter[Any], text: str) -> dict[str, bool]:
    """Whether ``adapter`` accepts ``text``, given as JSON text and as a parsed value."""
    verdicts = {}
    for mode in ("python", "json"):
        try:
            if mode == "json":
                adapter.validate_json(text)
            else:
                adapter.validate_python(json.loads(text))
        except ValidationError:
            verdicts[mode] = False
        else:
            verdicts[mode] = True
    return verdicts


def test_spec_checks_pass() -> None:
    report: list[str] = []
    assert check_spec.check_all(report=report) == []
    assert len(report) == len(EXAMPLES)


def test_check_spec_main_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_spec.main([]) == 0
    assert "check_spec: ok" in capsys.readouterr().out


@pytest.mark.parametrize("example", EXAMPLES, ids=_example_id)
def test_example_is_judged_as_labelled(
    example: _spec.Example, schemas: dict[str, dict[str, Any]], registry: Any
) -> None:
    validator = _spec.validator_for(example.schema, schemas, registry)
    errors = [e.message for e in validator.iter_errors(example.load())]
    if example.valid:
        assert errors == []
    else:
        assert errors, "an invalid example was accepted"


@pytest.mark.parametrize(
    "example",
    [
        e
        for e in EXAMPLES
        if e.schema in MODELLED
        and not check_spec.defs_only(_spec.load_json(_spec.SCHEMAS / e.schema))
    ],
    ids=_example_id,
)
def test_generated_models_agree(example: _spec.Example, schemas: dict[str, dict[str, Any]]) -> None:
    adapter = _model_adapter(example.schema, schemas)
    verdicts = _verdicts(adapter, example.path.read_text(encoding="utf-8"))
    if example.id in SCHEMA_ONLY:
        # Documented gap (see SCHEMA_ONLY); if the models start enforcing it, move it out.
        assert verdicts == {"python": True, "json": True}, SCHEMA_ONLY[example.id]
    else:
        assert verdicts == {"python": example.valid, "json": example.valid}


@pytest.mark.parametrize(
    "example",
    [e for e in EXAMPLES if e.schema in VIEWED_SCHEMAS and e.valid],
    ids=_example_id,
)
def test_generated_views_read_every_valid_example(example: _spec.Example) -> None:
    value = json.loads(example.path.read_text(encoding="utf-8"))
    title = _SCHEMAS[example.schema]["title"]
    if title == "DocumentMetadata":  # the union: its member by the discriminator
        title = {"file": "FileDocumentMetadata", "url": "UrlDocumentMetadata"}[value["kind"]]
    view = getattr(capability_graph, title)(value)
    assert read_whole(view) == value == view.to_json()


def test_schema_only_entries_exist() -> None:
    ids = {e.id for e in EXAMPLES if e.schema in MODELLED}
    assert set(SCHEMA_ONLY) <= ids
    assert all(not e.valid for e in EXAMPLES if e.id in SCHEMA_ONLY)
    assert {
        "resolve-result.schema.json",
        "capability-detail.schema.json",
        "document-metadata.schema.json",
    } == VIEWED_SCHEMAS


@pytest.mark.parametrize("rule", CORPUS_RULES)
def test_corpus_covers_rule(rule: str) -> None:
    covered = [e.id for e in EXAMPLES if not e.valid and e.path.stem == rule]
    assert covered, f"no invalid example named {rule}.json"


def test_every_main_schema_has_examples_of_both_kinds(schemas: dict[str, dict[str, Any]]) -> None:
    for name, schema in schemas.items():
        if check_spec.defs_only(schema):
            continue
        kinds = {e.valid for e in EXAMPLES if e.schema == name}
        assert kinds == {True, False}, name


def test_integral_float_is_where_validators_differ(
    schemas: dict[str, dict[str, Any]], registry: Any
) -> None:
    """JSON Schema (and JavaScript, where 5.0 is 5) counts 5.0 as an integer; the generated models
    use StrictInt and reject it. The corpus leaves this case out on purpose: vectors must not
    depend on it."""
    request = {"ids": ["acme::a"], "relations": {"depth": 2.0}}
    assert _spec.validator_for("resolve-request.schema.json", schemas, registry).is_valid(request)
    with pytest.raises(ValidationError):
        _model_adapter("resolve-request.schema.json", schemas).validate_python(request)


def test_models_reject_null_and_omit_missing(schemas: dict[str, dict[str, Any]]) -> None:
    """Omitted is fine, null is not, and an omitted field stays out of the dump."""
    adapter = _model_adapter("error.schema.json", schemas)
    error = {"code": "CG_GRAPH_CLOSED", "phase": "lifecycle", "message": "The graph is closed"}
    assert adapter.dump_python(adapter.validate_python(error), mode="json") == error
    with pytest.raises(ValidationError):
        adapter.validate_python({**error, "nextAction": None})


def test_patterns_follow_ecma_end_of_string(
    schemas: dict[str, dict[str, Any]], registry: Any
) -> None:
    """A stock Python validator lets ``$`` match before a final newline; ours does not."""
    definition = {"providerId": "acme\n", "name": "A", "version": "1", "capabilities": []}
    stock = Draft202012Validator(schemas["definition.schema.json"], registry=registry)
    assert stock.is_valid(definition)
    assert not _spec.validator_for("definition.schema.json", schemas, registry).is_valid(definition)


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        ("^[a-z]+$", r"^[a-z]+\Z"),
        (r"^a\$$", r"^a\$\Z"),
        ("^[$]$", r"^[$]\Z"),
        (r"^[\]$]$", r"^[\]$]\Z"),
    ],
)
def test_ecma_to_python(pattern: str, python: str) -> None:
    # The harness's translation, which _spec's validators use (one copy for tools and suite).
    assert ecma_to_python(pattern) == python
    assert _spec.ecma_to_python is ecma_to_python


def test_tool_schemas_are_self_contained_objects() -> None:
    document = _spec.load_json(_spec.TOOLS_JSON)
    assert [t["name"] for t in document["tools"]] == [t.name for t in _spec.TOOLS]
    for tool in document["tools"]:
        for key in ("inputSchema", "outputSchema"):
            schema = tool[key]
            assert schema["type"] == "object"
            text = json.dumps(schema)
            assert ".schema.json" not in text, (tool["name"], key)
            assert "$id" not in text, (tool["name"], key)


def test_seed_envelopes_are_examples_verbatim() -> None:
    """The seed's error JSON, Tool Adapter envelope and CLI envelope, as printed there."""
    seed_error = {
        "code": "CG_CAPABILITY_NOT_FOUND",
        "phase": "query",
        "message": "Requested capability does not exist",
        "nextAction": "refresh",
    }
    seed_cli = {
        "ok": False,
        "error": {
            "code": "CG_CONFIG_INVALID",
            "phase": "config",
            "message": "Cannot read a valid bounded JSON configuration file",
            "nextAction": "check_config",
        },
    }
    examples = _spec.EXAMPLES
    assert _spec.load_json(examples / "error/valid/seed-capability-not-found.json") == seed_error
    assert _spec.load_json(examples / "sdk-error/valid/seed-error-mjs.json") == seed_error
    assert _spec.load_json(examples / "tool-outcome/valid/seed-capability-not-found.json") == {
        "ok": False,
        "error": seed_error,
    }
    assert _spec.load_json(examples / "cli-error/valid/seed-doctor-missing-config.json") == seed_cli


# -- the checker finds problems (in a temporary copy of the spec) -------------------------------


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    target = tmp_path / "capability-graph"
    shutil.copytree(_spec.SPEC, target, ignore=shutil.ignore_patterns("taxonomy*.json"))
    return target


def _edit(path: Path, change: Any) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value), encoding="utf-8")


def _problems(spec: Path) -> list[str]:
    return check_spec.check_all(spec / "schemas", spec / "examples", spec / "tools.json")


def test_checker_reports_unresolvable_ref(spec_copy: Path) -> None:
    def change(schema: dict[str, Any]) -> None:
        schema["properties"]["cursor"]["$ref"] = "ids.schema.json#/$defs/Kursor"

    _edit(spec_copy / "schemas/list-request.schema.json", change)
    problems = _problems(spec_copy)
    assert any("does not resolve" in p and "Kursor" in p for p in problems)
    assert any("cannot be bundled" in p for p in problems)


def test_checker_reports_metaschema_and_lint_errors(spec_copy: Path) -> None:
    def change(schema: dict[str, Any]) -> None:
        schema["properties"]["limit"]["type"] = ["integer", "null"]
        schema["properties"]["limit"]["minimum"] = "one"
        schema["properties"]["cursor"] = {"type": "object", "format": "uri"}
        schema["$id"] = "https://example.com/other.json"

    _edit(spec_copy / "schemas/list-request.schema.json", change)
    problems = "\n".join(_problems(spec_copy))
    assert "not a valid 2020-12 schema" in problems
    assert "accepts null" in problems
    assert "must declare additionalProperties" in problems
    assert "format 'uri'" in problems
    assert "$id must be" in problems


def test_checker_reports_mislabelled_example(spec_copy: Path) -> None:
    examples = spec_copy / "examples/context"
    (examples / "invalid/null-value.json").rename(examples / "valid/null-value.json")
    (examples / "valid/empty.json").rename(examples / "invalid/empty.json")
    problems = _problems(spec_copy)
    assert "examples/context/valid/null-value: labelled valid but rejected" in problems[0]
    assert any("context/invalid/empty: labelled invalid but accepted" in p for p in problems)


def test_checker_reports_stale_tools_json(spec_copy: Path) -> None:
    def change(schema: dict[str, Any]) -> None:
        schema["properties"]["limit"]["maximum"] = 50

    _edit(spec_copy / "schemas/match-request.schema.json", change)
    problems = _problems(spec_copy)
    assert any("match_capabilities.inputSchema: differs from the bundle" in p for p in problems)


def test_checker_reports_missing_examples(spec_copy: Path) -> None:
    shutil.rmtree(spec_copy / "examples/reload-request/invalid")
    problems = _problems(spec_copy)
    assert problems == [
        "reload-request.schema.json: no invalid example in examples/reload-request/invalid/"
    ]


def test_checker_derives_the_discriminators_the_schemas_annotate() -> None:
    """[CG-MSG-21]: the oneOfs with a discriminator, derived from the branches alone."""
    reg = _spec.registry(_SCHEMAS)
    derived = {
        subschema["title"]: check_spec.derived_discriminator(
            subschema["oneOf"], reg.resolver(base_uri=_spec.BASE_URI + name)
        )
        for name, schema in _SCHEMAS.items()
        for _, subschema in _spec.iter_subschemas(schema)
        if "oneOf" in subschema
    }
    assert derived == {
        "ModelConfig": "executor",
        "ScriptedStep": None,
        "ProviderSource": None,
        "DocumentDeclaration": None,
        "DocumentMetadata": "kind",
        "McpToolResult": None,
        "ReloadResult": "ok",
        "ProviderReloadOutcome": "ok",
        "ToolOutcome": "ok",
        "ToolResult": None,
    }


def test_checker_reports_a_discriminator_annotation_that_is_not_derived(spec_copy: Path) -> None:
    def change(schema: dict[str, Any]) -> None:
        del schema["$defs"]["ModelConfig"]["discriminator"]
        schema["$defs"]["ProviderSource"]["discriminator"] = {"propertyName": "path"}

    _edit(spec_copy / "schemas/config.schema.json", change)
    problems = _problems(spec_copy)
    assert (
        "config.schema.json#/$defs/ModelConfig: the oneOf has the discriminator 'executor'"
        ' (CG-MSG-21): annotate it {"discriminator": {"propertyName": "executor"}}'
    ) in problems
    assert (
        "config.schema.json#/$defs/ProviderSource:"
        " a discriminator annotation on a oneOf without one"
    ) in problems


def test_checker_reports_a_discriminator_annotation_naming_another_member(
    spec_copy: Path,
) -> None:
    def change(schema: dict[str, Any]) -> None:
        schema["$defs"]["ModelConfig"]["discriminator"] = {"propertyName": "timeoutMs"}

    _edit(spec_copy / "schemas/config.schema.json", change)
    assert any(
        "ModelConfig: the oneOf has the discriminator 'executor'" in p for p in _problems(spec_copy)
    )
