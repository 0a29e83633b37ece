"""tools/codegen.py: the committed outputs are what the spec generates, one run regenerates
everything in dependency order, and the check fails on every kind of drift (a changed, missing
or unexpected output) in every step. Drift is provoked in temporary copies only; the docs step
has its own tests (test_docs.py)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _spec
import codegen
import pytest
from generate.base import Repo
from generate.models import HEADER, MODELLED, generate, modelled

#: Every step but the docs (which runs the example programs; see test_docs.py).
SPEC_STEPS = [step.name for step in codegen.STEPS if step.name != "docs"]


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    """The modules generated from the real schemas (one datamodel-codegen run for the module)."""
    return generate(Repo().load_schemas())


def _check(repo: Repo, *steps: str) -> int:
    return codegen.run(repo, check=True, steps=steps or SPEC_STEPS)


def _write(repo: Repo) -> int:
    return codegen.run(repo, check=False, steps=SPEC_STEPS)


def _edit(path: Path, change: Callable[[Any], None]) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def test_check_passes_on_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    """The committed outputs are what the spec generates."""
    assert _check(Repo()) == 0
    out = capsys.readouterr().out
    for name in SPEC_STEPS:
        assert f"codegen: {name}: " in out
        assert f"codegen: {name}: 0 files" not in out


def test_steps_run_in_dependency_order() -> None:
    # enums first (every schema references it), docs last (they read the generated taxonomy
    # and tools.json).
    names = [step.name for step in codegen.STEPS]
    assert names[0] == "enums"
    assert names[-1] == "docs"
    assert names.index("models") < names.index("tools")
    assert len(set(names)) == len(names)


def test_one_module_per_modelled_schema_with_the_header(generated: dict[str, str]) -> None:
    wanted = modelled(_spec.load_schemas())
    assert set(MODELLED) <= wanted
    assert "tools.schema.json" not in wanted  # no runtime code uses a model of it
    expected = {_spec.module_name(n) + ".py" for n in wanted} | {"__init__.py"}
    assert set(generated) == expected
    for text in generated.values():
        assert text.startswith(HEADER + "\n")


def test_generation_is_deterministic(generated: dict[str, str], spec_tree: Repo) -> None:
    # Another folder, another run: byte-identical.
    assert generate(spec_tree.load_schemas()) == generated


def test_titles_name_the_models() -> None:
    schemas = _spec.load_schemas()
    for name in sorted(modelled(schemas)):
        schema = schemas[name]
        module = importlib.import_module(
            f"capability_graph._generated.models.{_spec.module_name(name)}"
        )
        assert hasattr(module, schema["title"]), name
        for key in schema.get("$defs", {}):
            assert hasattr(module, key), f"{name}#/$defs/{key}"


def _fewer_ids(schema: dict[str, Any]) -> None:
    schema["properties"]["ids"]["maxItems"] = 50


def test_check_fails_when_a_schema_changes(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit(spec_tree.schemas / "resolve-request.schema.json", _fewer_ids)
    assert _check(spec_tree) == 1
    err = capsys.readouterr().err
    assert "changed: generated/models/resolve_request.py" in err
    assert "max_length=50" in err  # the diff is shown
    assert "changed: spec/tools.json" in err
    assert "changed: generated/validators/resolve_request.py" in err


def test_check_fails_when_a_schema_is_removed(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    (spec_tree.schemas / "match-result.schema.json").unlink()
    assert _check(spec_tree) == 1
    # the operation table still names it as match's result: the tool schemas cannot be bundled
    assert "match-result.schema.json (no such schema)" in capsys.readouterr().err


def test_check_fails_when_a_schema_is_added(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = {
        "$schema": _spec.DIALECT,
        "$id": _spec.BASE_URI + "ping-request.schema.json",
        "title": "PingRequest",
        "description": "A new request.",
        "type": "object",
        "additionalProperties": False,
        "properties": {},
    }
    (spec_tree.schemas / "ping-request.schema.json").write_text(
        json.dumps(schema), encoding="utf-8"
    )
    assert _check(spec_tree, "models") == 0  # no model uses it: no module

    def ping(schema: dict[str, Any]) -> None:
        schema["properties"]["ping"] = {"$ref": "ping-request.schema.json"}

    _edit(spec_tree.schemas / "resolve-request.schema.json", ping)  # now a model uses it
    assert _check(spec_tree, "models") == 1
    assert "missing: generated/models/ping_request.py" in capsys.readouterr().err


def test_check_fails_when_a_module_is_edited_by_hand(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    module = spec_tree.models / "error.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# tweak\n", encoding="utf-8")
    assert _check(spec_tree) == 1
    assert "changed: generated/models/error.py" in capsys.readouterr().err


def test_check_fails_on_a_validator_no_schema_compiles(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    (spec_tree.validators / "ping_request.py").write_text("validate = None\n", encoding="utf-8")
    assert _check(spec_tree) == 1
    assert "unexpected: generated/validators/ping_request.py" in capsys.readouterr().err


def test_check_fails_when_tools_json_is_stale(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(document: dict[str, Any]) -> None:
        document["tools"][0]["inputSchema"] = {"type": "object"}

    _edit(spec_tree.tools_json, change)
    assert _check(spec_tree) == 1
    assert "changed: spec/tools.json (differs from its sources)" in capsys.readouterr().err


def test_check_fails_when_a_schema_default_changes(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(schema: dict[str, Any]) -> None:
        schema["properties"]["maxInputBytes"]["default"] = 1024

    _edit(spec_tree.schemas / "budgets.schema.json", change)
    assert _check(spec_tree) == 1
    err = capsys.readouterr().err
    assert "changed: generated/defaults.py" in err
    assert "+    'maxInputBytes': 1024," in err


def test_a_taxonomy_change_regenerates_every_dependent_in_one_write(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The enums schema is written before the models, validators and tools.json read it: one
    write leaves nothing stale (a second run finds everything in sync)."""
    (spec_tree.spec / "tools.json").write_text("{}\n", encoding="utf-8")

    def change(registry: dict[str, Any]) -> None:
        registry["nextActions"].append({"id": "wait_and_see", "en": "Wait.", "zh": "等待。"})

    _edit(spec_tree.taxonomy, change)
    assert _check(spec_tree) == 1
    err = capsys.readouterr().err
    for output in (
        "spec/schemas/enums.schema.json",
        "generated/models/enums.py",
        "generated/taxonomy.py",
    ):
        assert f"changed: {output}" in err
    assert _write(spec_tree) == 0
    assert "WAIT_AND_SEE" in (spec_tree.generated / "taxonomy.py").read_text(encoding="utf-8")
    assert "wait_and_see" in (spec_tree.models / "enums.py").read_text(encoding="utf-8")
    assert _check(spec_tree) == 0


def test_write_regenerates_and_removes_stale_modules(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    (spec_tree.models / "reload_request.py").write_text(
        "# a module no model needs\n", encoding="utf-8"
    )
    _edit(spec_tree.schemas / "resolve-request.schema.json", _fewer_ids)
    tools_before = spec_tree.tools_json.read_text(encoding="utf-8")
    assert _write(spec_tree) == 0
    out = capsys.readouterr().out
    assert "removed generated/models/reload_request.py" in out
    assert not (spec_tree.models / "reload_request.py").exists()
    text = (spec_tree.models / "resolve_request.py").read_text(encoding="utf-8")
    assert "max_length=50" in text
    tools_after = json.loads(spec_tree.tools_json.read_text(encoding="utf-8"))
    resolve = next(t for t in tools_after["tools"] if t["name"] == "resolve_capabilities")
    assert resolve["inputSchema"]["properties"]["ids"]["maxItems"] == 50
    assert json.loads(tools_before)["tools"][2]["description"] == resolve["description"]
    assert _check(spec_tree) == 0


def test_disagreeing_executor_timeouts_are_an_error(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(schema: dict[str, Any]) -> None:
        schema["$defs"]["CodexExecutorConfig"]["properties"]["timeoutMs"]["default"] = 1000

    _edit(spec_tree.schemas / "config.schema.json", change)
    assert _check(spec_tree) == 1
    err = capsys.readouterr().err
    assert "codegen: defaults: config.schema.json#/$defs/CodexExecutorConfig" in err
    assert "timeoutMs defaults to 1000, the other executors to 60000" in err


def test_a_budget_without_a_default_is_an_error(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(schema: dict[str, Any]) -> None:
        del schema["properties"]["maxResultBytes"]["default"]

    _edit(spec_tree.schemas / "budgets.schema.json", change)
    assert _check(spec_tree) == 1
    assert "budgets.schema.json: no default for maxResultBytes" in capsys.readouterr().err


def test_an_unknown_step_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert codegen.run(Repo(), check=True, steps=["twin"]) == 1
    assert "codegen: no step twin" in capsys.readouterr().err
