"""``cg-conformance run`` against the Python reference: outcomes, reports, strict baselines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from capability_graph_conformance import DRIVER_PROTOCOL, SUITE_VERSION
from capability_graph_conformance.schemas import SchemaSet

CROSS_SECTION = [
    "cg.seed.*",
    "cg.query.unknown-tool",
    "cg.outcome.list-empty",
    "cg.config.file-missing",
    "cg.lifecycle.cancel-match",
    "cg.cli.usage-error",
]


def _select(*patterns: str) -> list[str]:
    return [arg for p in patterns for arg in ("-k", p)]


@pytest.mark.slow
def test_reference_passes_a_cross_section_on_every_surface(
    harness: Any, repo: Path, tmp_path: Path, schemas: SchemaSet
) -> None:
    reports = tmp_path / "reports"
    status, out, err = harness(
        "run", "--suite-root", str(repo), "--report-dir", str(reports), *_select(*CROSS_SECTION)
    )
    report = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    assert status == 0, report["reasons"]
    # every surface passed; a selection of vectors is certified as such, not as a pass
    assert report["verdict"] == "partial"
    selected, total = report["selection"]["vectors"], report["selection"]["suiteVectors"]
    assert report["verdictText"] == f"PASS (sdk, tool, mcp, cli; {selected} of {total} vectors)"
    assert {v["verdict"] for v in report["surfaces"].values()} == {"pass"}
    assert schemas.errors("conformance/report.schema.json", report) == []
    assert report["implementation"]["name"] == "python-reference"
    assert report["suite"]["version"] == SUITE_VERSION
    assert report["suite"]["driverProtocol"] == DRIVER_PROTOCOL
    for surface in ("sdk", "tool", "mcp", "cli"):
        assert report["bySurface"][surface]["passed"] > 0
        assert report["bySurface"][surface]["failed"] == 0
    assert report["summary"]["checks"] > 100
    # the matrix: every vector on every surface, not-applicable ones included
    assert len(report["cases"]) == 4 * report["suite"]["vectors"]
    assert {c["outcome"] for c in report["cases"]} == {"passed", "not-applicable"}
    # the progress bar went to stderr, the summary to stdout
    assert "/28 pass " in err
    assert "Verdict: PASS" in out
    # the other formats
    junit = ET.fromstring((reports / "junit.xml").read_text(encoding="utf-8"))
    assert [s.get("name") for s in junit] == ["sdk", "tool", "mcp", "cli"]
    assert all(s.get("failures") == "0" and s.get("errors") == "0" for s in junit)
    html = (reports / "matrix.html").read_text(encoding="utf-8")
    assert "cg.seed.error-mjs" in html
    assert "<table>" in html
    markdown = (reports / "summary.md").read_text(encoding="utf-8")
    assert markdown.startswith("# Conformance: python-reference")


def test_a_run_without_checks_fails(run_report: Any) -> None:
    status, report = run_report("-k", "cg.cli.usage-error", "-s", "sdk")
    assert status == 1
    assert report["verdict"] == "fail"
    assert report["verdictText"] == "FAIL (no check ran)"
    assert report["reasons"] == ["no check ran"]
    assert report["summary"]["checks"] == 0


def test_the_jobs_help_says_the_default_the_code_uses(
    harness: Any, monkeypatch: pytest.MonkeyPatch, suite: Any, schemas: SchemaSet, repo: Path
) -> None:
    from capability_graph_conformance.manifest import Manifest
    from capability_graph_conformance.session import RunOptions, RunSession

    status, out, _ = harness("run", "--help")
    assert status == 0
    assert (
        "-j N, --jobs N processes at a time for CLI and MCP cases (default: the number of CPUs + 1)"
        in " ".join(out.split())
    )
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    manifest = Manifest.load(suite.reference_manifest, schemas)
    session = RunSession(suite, schemas, manifest, RunOptions(), [])
    assert session.slots._value == 4  # 3 CPUs + 1
    session = RunSession(suite, schemas, manifest, RunOptions(jobs=2), [])
    assert session.slots._value == 2


def test_an_empty_selection_is_a_usage_error(harness: Any, repo: Path) -> None:
    status, _out, err = harness("run", "--suite-root", str(repo), "-k", "cg.nothing.*")
    assert status == 2
    assert "no vector matches" in err


def test_a_broken_manifest_is_a_usage_error(harness: Any, repo: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "bad.json"
    manifest.write_text(json.dumps({"name": "Bad Name", "language": "x", "version": "1"}))
    status, _out, err = harness("run", "--suite-root", str(repo), "-i", str(manifest))
    assert status == 2
    assert "bad.json" in err


def test_version(harness: Any) -> None:
    status, out, _ = harness("--version")
    assert status == 0
    assert out.strip() == (
        f"cg-conformance {SUITE_VERSION} (suite {SUITE_VERSION}, contract capability-graph 1.2.0, "
        f"driver protocol {DRIVER_PROTOCOL})"
    )


@pytest.mark.slow
def test_baselines_are_strict(
    harness: Any, fixture_suite_root: Path, fakes: Path, tmp_path: Path
) -> None:
    # the fixture suite, against the fake (tests/fakes/fake_impl.py) with and without a mutation
    selection = [*_select("cg.query.capability-not-found"), "-s", "cli", "-s", "sdk"]
    base = ["run", "--suite-root", str(fixture_suite_root), "--no-progress", *selection]
    baseline = tmp_path / "baseline.json"
    fake = str(fakes / "cli-next-action.json")
    conforming = str(fakes / "none.json")

    # a failing implementation writes its baseline ...
    status, out, _ = harness(
        *base, "-i", fake, "--report-dir", str(tmp_path / "a"), "--write-baseline", str(baseline)
    )
    assert status == 1
    written = json.loads(baseline.read_text(encoding="utf-8"))
    assert [(e["vector"], e["surface"], e["outcome"]) for e in written["entries"]] == [
        ("cg.query.capability-not-found", "cli", "failed")
    ]
    assert "wrote 1 expected failure(s)" in out

    # ... and passes with it: the failure is expected
    status, _, _ = harness(
        *base, "-i", fake, "--report-dir", str(tmp_path / "b"), "--expected-failures", str(baseline)
    )
    report_b = json.loads((tmp_path / "b" / "report.json").read_text(encoding="utf-8"))
    assert status == 0, report_b["reasons"]
    assert report_b["summary"]["expectedFailures"] == 1

    # an implementation that no longer fails it must remove the entry: an unexpected pass fails
    status, _, _ = harness(
        *base,
        "-i",
        conforming,
        "--report-dir",
        str(tmp_path / "c"),
        "--expected-failures",
        str(baseline),
    )
    report_c = json.loads((tmp_path / "c" / "report.json").read_text(encoding="utf-8"))
    assert status == 1
    assert report_c["baseline"]["unexpectedPasses"] == [
        {"vector": "cg.query.capability-not-found", "surface": "cli"}
    ]

    # an entry that matches nothing (a vector the suite does not have) fails too
    stale = {
        "implementation": "x",
        "entries": [{"vector": "cg.seed.no-such-vector", "surface": "sdk", "reason": "stale"}],
    }
    baseline.write_text(json.dumps(stale), encoding="utf-8")
    status, _, _ = harness(
        *base,
        "-i",
        conforming,
        "--report-dir",
        str(tmp_path / "d"),
        "--expected-failures",
        str(baseline),
    )
    report_d = json.loads((tmp_path / "d" / "report.json").read_text(encoding="utf-8"))
    assert status == 1
    assert report_d["baseline"]["unmatched"] == [
        {"vector": "cg.seed.no-such-vector", "surface": "sdk"}
    ]

    # compare: the mutated fake's report against the conforming one's
    status, out, _ = harness(
        "compare", str(tmp_path / "c" / "report.json"), str(tmp_path / "a" / "report.json")
    )
    assert status == 1
    assert "1 regression(s), 0 fix(es)" in out
    assert "cg.query.capability-not-found [cli]: passed -> failed" in out
    status, out, _ = harness(
        "compare", str(tmp_path / "a" / "report.json"), str(tmp_path / "c" / "report.json")
    )
    assert status == 0
    assert "0 regression(s), 1 fix(es)" in out


def test_the_html_matrix_names_its_own_icon_so_a_served_copy_requests_nothing_else() -> None:
    from capability_graph_conformance.reports import html_matrix

    report = {
        "implementation": {"name": "impl", "version": "1", "language": "Python"},
        "suite": {"version": "1", "vectors": 0, "contract": "c", "contractVersion": "1"},
        "verdict": "pass",
        "verdictText": "PASS",
        "durationMs": 0,
        "summary": {"checks": 0},
        "surfaces": {s: {"verdict": "pass"} for s in ("sdk", "tool", "mcp", "cli")},
        "reasons": [],
        "cases": [],
    }
    head = html_matrix(report).split("<title>", 1)[0]
    assert (
        head == '<!doctype html><html lang=en><meta charset=utf-8><link rel=icon href="data:,">\n'
    )
