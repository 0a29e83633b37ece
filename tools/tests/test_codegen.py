"""tools/codegen.py: the committed models and tools.json are in sync with the schemas, and the
drift check fails on every kind of drift. Drift is provoked in temporary copies only."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path
from typing import Any

import _spec
import codegen
import pytest


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    """The modules generated from the real schemas (one datamodel-codegen run for the module)."""
    return codegen.generate(_spec.SCHEMAS)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the schemas, the committed models and tools.json."""
    shutil.copytree(_spec.SCHEMAS, tmp_path / "schemas")
    shutil.copytree(_spec.MODELS, tmp_path / "models", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(_spec.TOOLS_JSON, tmp_path / "tools.json")
    return tmp_path


def _run(tree: Path, *extra: str) -> int:
    return codegen.main(
        [
            "--schemas",
            str(tree / "schemas"),
            "--output",
            str(tree / "models"),
            "--tools",
            str(tree / "tools.json"),
            *extra,
        ]
    )


def _edit(path: Path, change: Any) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def test_check_passes_on_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    """The committed models and tools.json are what the schemas generate."""
    assert codegen.main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_one_module_per_modelled_schema_with_the_header(generated: dict[str, str]) -> None:
    modelled = codegen.modelled(_spec.load_schemas())
    assert set(codegen.MODELLED) <= modelled
    assert "tools.schema.json" not in modelled  # no runtime code uses a model of it
    expected = {_spec.module_name(n) + ".py" for n in modelled} | {"__init__.py"}
    assert set(generated) == expected
    for text in generated.values():
        assert text.startswith(codegen.HEADER + "\n")


def test_generation_is_deterministic(generated: dict[str, str], tmp_path: Path) -> None:
    # Another folder, another run: byte-identical.
    shutil.copytree(_spec.SCHEMAS, tmp_path / "elsewhere")
    assert codegen.generate(tmp_path / "elsewhere") == generated


def test_titles_name_the_models() -> None:
    schemas = _spec.load_schemas()
    for name in sorted(codegen.modelled(schemas)):
        schema = schemas[name]
        module = importlib.import_module(
            f"capability_graph._generated.models.{_spec.module_name(name)}"
        )
        assert hasattr(module, schema["title"]), name
        for key in schema.get("$defs", {}):
            assert hasattr(module, key), f"{name}#/$defs/{key}"


def _fewer_ids(schema: dict[str, Any]) -> None:
    schema["properties"]["ids"]["maxItems"] = 50


def test_check_fails_when_a_schema_changes(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(tree / "schemas/resolve-request.schema.json", _fewer_ids)
    assert _run(tree, "--check") == 1
    err = capsys.readouterr().err
    assert "changed:" in err
    assert "resolve_request.py" in err
    assert "max_length=50" in err  # the diff is shown
    assert "tools.json (tool schemas differ" in err


def test_check_fails_when_a_schema_is_removed(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "schemas/match-result.schema.json").unlink()
    assert _run(tree, "--check", "--no-tools") == 1
    err = capsys.readouterr().err
    assert "unexpected:" in err
    assert "match_result.py" in err


def test_check_fails_when_a_schema_is_added(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = {
        "$schema": _spec.DIALECT,
        "$id": _spec.BASE_URI + "ping-request.schema.json",
        "title": "PingRequest",
        "description": "A new request.",
        "type": "object",
        "additionalProperties": False,
        "properties": {},
    }
    (tree / "schemas/ping-request.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    assert _run(tree, "--check") == 0  # no model uses it: no module

    def ping(schema: dict[str, Any]) -> None:
        schema["properties"]["ping"] = {"$ref": "ping-request.schema.json"}

    _edit(tree / "schemas/resolve-request.schema.json", ping)  # now a model uses it
    assert _run(tree, "--check", "--no-tools") == 1
    err = capsys.readouterr().err
    assert "missing:" in err
    assert "ping_request.py" in err


def test_check_fails_when_a_module_is_edited_by_hand(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tree / "models/error.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n# tweak\n", encoding="utf-8")
    assert _run(tree, "--check") == 1
    assert "changed:" in capsys.readouterr().err


def test_check_fails_when_tools_json_is_stale(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(document: dict[str, Any]) -> None:
        document["tools"][0]["inputSchema"] = {"type": "object"}

    _edit(tree / "tools.json", change)
    assert _run(tree, "--check") == 1
    assert "tools.json (tool schemas differ" in capsys.readouterr().err


def test_write_regenerates_and_removes_stale_modules(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "models/reload_request.py").write_text("# a module no model needs\n", encoding="utf-8")
    _edit(tree / "schemas/resolve-request.schema.json", _fewer_ids)
    tools_before = (tree / "tools.json").read_text(encoding="utf-8")
    assert _run(tree) == 0
    out = capsys.readouterr().out
    assert "removed" in out
    assert "reload_request.py" in out
    assert not (tree / "models/reload_request.py").exists()
    assert "max_length=50" in (tree / "models/resolve_request.py").read_text(encoding="utf-8")
    tools_after = json.loads((tree / "tools.json").read_text(encoding="utf-8"))
    resolve = next(t for t in tools_after["tools"] if t["name"] == "resolve_capabilities")
    assert resolve["inputSchema"]["properties"]["ids"]["maxItems"] == 50
    assert json.loads(tools_before)["tools"][2]["description"] == resolve["description"]
    assert _run(tree, "--check") == 0


def test_missing_schema_folder_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "schemas").mkdir()
    assert codegen.main(["--check", "--schemas", str(tmp_path / "schemas"), "--no-tools"]) == 1
    assert "no *.schema.json" in capsys.readouterr().err
