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


def test_one_module_per_schema_with_the_header(generated: dict[str, str]) -> None:
    expected = {_spec.module_name(n) + ".py" for n in _spec.load_schemas()} | {"__init__.py"}
    assert set(generated) == expected
    for text in generated.values():
        assert text.startswith(codegen.HEADER + "\n")


def test_generation_is_deterministic(generated: dict[str, str], tmp_path: Path) -> None:
    # Another folder, another run: byte-identical.
    shutil.copytree(_spec.SCHEMAS, tmp_path / "elsewhere")
    assert codegen.generate(tmp_path / "elsewhere") == generated


def test_titles_name_the_models() -> None:
    for name, schema in _spec.load_schemas().items():
        module = importlib.import_module(
            f"capability_graph._generated.models.{_spec.module_name(name)}"
        )
        assert hasattr(module, schema["title"]), name
        for key in schema.get("$defs", {}):
            assert hasattr(module, key), f"{name}#/$defs/{key}"


def test_check_fails_when_a_schema_changes(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(schema: dict[str, Any]) -> None:
        schema["properties"]["limit"]["maximum"] = 50

    _edit(tree / "schemas/list-request.schema.json", change)
    assert _run(tree, "--check") == 1
    err = capsys.readouterr().err
    assert "changed:" in err
    assert "list_request.py" in err
    assert "le=50" in err  # the diff is shown
    assert "tools.json (tool schemas differ" in err


def test_check_fails_when_a_schema_is_removed(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "schemas/reload-request.schema.json").unlink()
    assert _run(tree, "--check") == 1
    err = capsys.readouterr().err
    assert "unexpected:" in err
    assert "reload_request.py" in err


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
    assert _run(tree, "--check") == 1
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
    (tree / "schemas/reload-request.schema.json").unlink()

    def change(schema: dict[str, Any]) -> None:
        schema["properties"]["limit"]["maximum"] = 50

    _edit(tree / "schemas/match-request.schema.json", change)
    tools_before = (tree / "tools.json").read_text(encoding="utf-8")
    assert _run(tree) == 0
    out = capsys.readouterr().out
    assert "removed" in out
    assert "reload_request.py" in out
    assert not (tree / "models/reload_request.py").exists()
    assert "le=20" not in (tree / "models/match_request.py").read_text(encoding="utf-8")
    tools_after = json.loads((tree / "tools.json").read_text(encoding="utf-8"))
    match = next(t for t in tools_after["tools"] if t["name"] == "match_capabilities")
    assert match["inputSchema"]["properties"]["limit"]["maximum"] == 50
    assert json.loads(tools_before)["tools"][3]["description"] == match["description"]
    assert _run(tree, "--check") == 0


def test_missing_schema_folder_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "schemas").mkdir()
    assert codegen.main(["--check", "--schemas", str(tmp_path / "schemas"), "--no-tools"]) == 1
    assert "no *.schema.json" in capsys.readouterr().err
