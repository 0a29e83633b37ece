"""tools.json and the Python operation table are generated from the operation table:
``codegen.py --check`` fails when they differ from it, and writing regenerates both."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import codegen
import pytest
from generate.base import Repo

STEPS = ["tools", "operations"]


@pytest.fixture
def tree(tmp_path: Path) -> Repo:
    """A copy of spec/capability-graph and of the generated package."""
    real = Repo()
    shutil.copytree(real.spec, tmp_path / "spec")
    shutil.copytree(
        real.generated, tmp_path / "generated", ignore=shutil.ignore_patterns("__pycache__")
    )
    return Repo(root=tmp_path, spec=tmp_path / "spec", generated=tmp_path / "generated")


def _retitle(tree: Repo) -> None:
    table = json.loads(tree.operations.read_text(encoding="utf-8"))
    table["operations"][1]["title"] = "List what you may use"
    tree.operations.write_text(json.dumps(table, indent=2), encoding="utf-8")


def test_committed_outputs_are_what_the_table_generates(tree: Repo) -> None:
    assert codegen.run(tree, check=True, steps=STEPS) == 0


def test_check_fails_when_the_table_changes_and_its_outputs_do_not(
    tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    _retitle(tree)
    assert codegen.run(tree, check=True, steps=STEPS) == 1
    err = capsys.readouterr().err
    assert "changed: spec/tools.json (differs from its sources)" in err
    assert "changed: generated/operations.py (differs from its sources)" in err
    assert '+      "title": "List what you may use",' in err


def test_write_regenerates_the_outputs_from_the_table(tree: Repo) -> None:
    _retitle(tree)
    assert codegen.run(tree, check=False, steps=STEPS) == 0
    tools = json.loads(tree.tools_json.read_text(encoding="utf-8"))["tools"]
    assert [tool["title"] for tool in tools][1] == "List what you may use"
    assert "title='List what you may use'" in (tree.generated / "operations.py").read_text(
        encoding="utf-8"
    )
    assert codegen.run(tree, check=True, steps=STEPS) == 0


def test_an_invalid_table_is_an_error(tree: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    table = json.loads(tree.operations.read_text(encoding="utf-8"))
    del table["operations"][0]["phase"]
    tree.operations.write_text(json.dumps(table), encoding="utf-8")
    assert codegen.run(tree, check=True, steps=STEPS) == 1
    err = capsys.readouterr().err
    assert "codegen: tools: operations.json: $.operations[0]: 'phase' is a required property" in err
