"""tools.json and the Python operation table are generated from the operation table:
``codegen.py --check`` fails when they differ from it, and writing regenerates both."""

from __future__ import annotations

import json

import codegen
import pytest
from generate.base import Repo

STEPS = ["tools", "operations"]


def _retitle(spec_tree: Repo) -> None:
    table = json.loads(spec_tree.operations.read_text(encoding="utf-8"))
    table["operations"][1]["title"] = "List what you may use"
    spec_tree.operations.write_text(json.dumps(table, indent=2), encoding="utf-8")


def test_committed_outputs_are_what_the_table_generates(spec_tree: Repo) -> None:
    assert codegen.run(spec_tree, check=True, steps=STEPS) == 0


def test_check_fails_when_the_table_changes_and_its_outputs_do_not(
    spec_tree: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    _retitle(spec_tree)
    assert codegen.run(spec_tree, check=True, steps=STEPS) == 1
    err = capsys.readouterr().err
    assert "changed: spec/tools.json (differs from its sources)" in err
    assert "changed: generated/operations.py (differs from its sources)" in err
    assert '+      "title": "List what you may use",' in err


def test_write_regenerates_the_outputs_from_the_table(spec_tree: Repo) -> None:
    _retitle(spec_tree)
    assert codegen.run(spec_tree, check=False, steps=STEPS) == 0
    tools = json.loads(spec_tree.tools_json.read_text(encoding="utf-8"))["tools"]
    assert [tool["title"] for tool in tools][1] == "List what you may use"
    assert "title='List what you may use'" in (spec_tree.generated / "operations.py").read_text(
        encoding="utf-8"
    )
    assert codegen.run(spec_tree, check=True, steps=STEPS) == 0


def test_an_invalid_table_is_an_error(spec_tree: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    table = json.loads(spec_tree.operations.read_text(encoding="utf-8"))
    del table["operations"][0]["phase"]
    spec_tree.operations.write_text(json.dumps(table), encoding="utf-8")
    assert codegen.run(spec_tree, check=True, steps=STEPS) == 1
    err = capsys.readouterr().err
    assert "codegen: tools: operations.json: $.operations[0]: 'phase' is a required property" in err
