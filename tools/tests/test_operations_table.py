"""tools.json is generated from the operation table: ``codegen.py --check`` fails when they
differ, and writing regenerates tools.json from the table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import _spec
import codegen
import pytest


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the schemas, the committed models, tools.json and the operation table."""
    shutil.copytree(_spec.SCHEMAS, tmp_path / "schemas")
    shutil.copytree(_spec.MODELS, tmp_path / "models", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(_spec.TOOLS_JSON, tmp_path / "tools.json")
    shutil.copy(_spec.OPERATIONS_JSON, tmp_path / "operations.json")
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
            "--operations",
            str(tree / "operations.json"),
            *extra,
        ]
    )


def _retitle(tree: Path) -> None:
    path = tree / "operations.json"
    table = json.loads(path.read_text(encoding="utf-8"))
    table["operations"][1]["title"] = "List what you may use"
    path.write_text(json.dumps(table, indent=2), encoding="utf-8")


def test_committed_tools_json_is_what_the_table_generates(tree: Path) -> None:
    assert _run(tree, "--check") == 0


def test_check_fails_when_the_table_changes_and_tools_json_does_not(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _retitle(tree)
    assert _run(tree, "--check") == 1
    err = capsys.readouterr().err
    assert "changed: " in err
    assert "tools.json (tool schemas differ from what operations.json" in err
    assert '+      "title": "List what you may use",' in err


def test_write_regenerates_tools_json_from_the_table(tree: Path) -> None:
    _retitle(tree)
    assert _run(tree) == 0
    tools = json.loads((tree / "tools.json").read_text(encoding="utf-8"))["tools"]
    assert [tool["title"] for tool in tools][1] == "List what you may use"
    assert _run(tree, "--check") == 0
