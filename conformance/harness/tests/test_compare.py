"""``cg-conformance compare``: every difference between two reports is listed, and ``--strict``
fails on any of them (how two implementations of the contract are compared)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capability_graph_conformance.cli import run
from capability_graph_conformance.compare import compare_reports


def _case(vector: str, surface: str, outcome: str, evidence: Any = None) -> dict[str, Any]:
    case: dict[str, Any] = {"vector": vector, "surface": surface, "outcome": outcome}
    if evidence is not None:
        case["evidence"] = evidence
    return case


def _report(*cases: dict[str, Any]) -> dict[str, Any]:
    return {"format": "cg-conformance-report/1", "cases": list(cases)}


def _write(path: Path, report: dict[str, Any]) -> str:
    path.write_text(json.dumps(report), encoding="utf-8")
    return str(path)


def _error(message: str) -> dict[str, Any]:
    return {
        "stderr": {
            "code": "CG_CAPABILITY_NOT_FOUND",
            "phase": "resolve",
            "message": message,
            "nextAction": "search",
        }
    }


def test_the_same_outcomes_are_identical() -> None:
    report = _report(_case("cg.a", "sdk", "passed"), _case("cg.a", "mcp", "not-applicable"))
    comparison = compare_reports(report, report)
    assert comparison.identical
    assert comparison.text() == (
        "0 regression(s), 0 fix(es), 0 other change(s), 0 added, 0 removed, 0 different evidence"
    )


def test_an_outcome_change_that_is_neither_regression_nor_fix_is_listed() -> None:
    comparison = compare_reports(
        _report(_case("cg.a", "cli", "passed")), _report(_case("cg.a", "cli", "skipped"))
    )
    assert comparison.changes == [("cg.a", "cli", "passed", "skipped")]
    assert not comparison.identical
    assert "other changes:\n  cg.a [cli]: passed -> skipped" in comparison.text()


def test_a_different_error_object_of_a_case_failed_on_both_sides_is_a_difference() -> None:
    comparison = compare_reports(
        _report(_case("cg.a", "cli", "failed", _error("Capability 'x' was not found."))),
        _report(_case("cg.a", "cli", "failed", _error("Capability 'x' not found."))),
    )
    assert comparison.regressions == comparison.fixes == comparison.changes == []
    assert [row[:2] for row in comparison.evidence] == [("cg.a", "cli")]
    assert not comparison.identical
    assert '"message":"Capability \'x\' not found."' in comparison.text()


def test_the_member_order_of_the_evidence_is_compared_byte_for_byte() -> None:
    error = _error("m")["stderr"]
    reordered = dict(reversed(list(error.items())))
    comparison = compare_reports(
        _report(_case("cg.a", "sdk", "failed", {"error": error})),
        _report(_case("cg.a", "sdk", "failed", {"error": reordered})),
    )
    assert len(comparison.evidence) == 1


def test_the_same_evidence_on_both_sides_is_identical() -> None:
    report = _report(_case("cg.a", "sdk", "errored", _error("m")))
    assert compare_reports(report, report).identical


@pytest.mark.parametrize(
    ("old", "new", "status"),
    [
        ([_case("cg.a", "sdk", "passed")], [_case("cg.a", "sdk", "passed")], 0),
        ([_case("cg.a", "sdk", "passed")], [_case("cg.a", "sdk", "skipped")], 1),
        ([_case("cg.a", "sdk", "passed")], [], 1),
        ([], [_case("cg.a", "sdk", "passed")], 1),
        ([_case("cg.a", "sdk", "failed", "x")], [_case("cg.a", "sdk", "failed", "y")], 1),
    ],
    ids=["same", "changed", "removed", "added", "evidence"],
)
def test_strict_exits_1_on_any_difference(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    old: list[dict[str, Any]],
    new: list[dict[str, Any]],
    status: int,
) -> None:
    old_path = _write(tmp_path / "old.json", _report(*old))
    new_path = _write(tmp_path / "new.json", _report(*new))
    assert run(["compare", "--strict", old_path, new_path]) == status
    # without --strict only a regression fails
    assert run(["compare", old_path, new_path]) == 0
    capsys.readouterr()
