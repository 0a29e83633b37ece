"""Verdicts that mean what they say: per-surface verdicts in every report format, a pass only when
all four surfaces ran the whole suite, selections and expected failures applied consistently,
readable failures (schema branches, envelope members, unconfirmed MCP batch failures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from capability_graph_conformance.baseline import BaselineOutcome
from capability_graph_conformance.cases import CaseResult
from capability_graph_conformance.manifest import Manifest
from capability_graph_conformance.reports import driver_self_report, surface_verdicts, verdict_text
from capability_graph_conformance.runner import RunOptions, run_suite
from capability_graph_conformance.schemas import SchemaSet
from capability_graph_conformance.suite import Suite, Vector


def _vector(vector_id: str) -> Vector:
    return Vector(Path(f"{vector_id}.json"), "x", {"id": vector_id, "surfaces": ["sdk"]})


def _case(surface: str, outcome: str, *, reason: str = "", expected: bool = False) -> CaseResult:
    case = CaseResult(_vector(f"cg.x.{surface}-{outcome}"), surface)
    case.outcome = outcome  # type: ignore[assignment]
    case.reason = reason
    case.expected_failure = expected
    return case


def _all_passed() -> list[CaseResult]:
    return [_case(s, "passed") for s in ("sdk", "tool", "mcp", "cli")]


# -- the verdict rules -----------------------------------------------------------------------------


def test_every_surface_passing_is_a_pass_of_each() -> None:
    verdicts = surface_verdicts(_all_passed(), BaselineOutcome())
    assert {s: v["verdict"] for s, v in verdicts.items()} == dict.fromkeys(
        ("sdk", "tool", "mcp", "cli"), "pass"
    )
    assert verdict_text("pass", verdicts, 10, 10) == "PASS (sdk, tool, mcp, cli)"


def test_a_surface_whose_cases_were_all_skipped_is_not_run_with_the_skip_reason() -> None:
    cases = [*_all_passed()[:2], _case("mcp", "skipped", reason="the manifest has no MCP command")]
    cases.append(_case("cli", "passed"))
    verdicts = surface_verdicts(cases, BaselineOutcome())
    assert verdicts["mcp"] == {
        "verdict": "not-run",
        "reason": "the manifest has no MCP command",
        "applicable": 1,
        "ran": 0,
    }
    assert verdict_text("partial", verdicts, 10, 10) == "PASS (sdk, tool, cli; mcp not run)"


def test_a_surface_with_only_not_applicable_cases_is_not_run() -> None:
    cases = [*_all_passed()[:3], _case("cli", "not-applicable")]
    verdicts = surface_verdicts(cases, BaselineOutcome())
    assert verdicts["cli"]["verdict"] == "not-run"
    assert verdicts["cli"]["reason"] == "no selected vector applies"


def test_skipped_cases_or_expected_failures_make_a_surface_incomplete() -> None:
    cases = [
        _case("sdk", "passed"),
        _case("sdk", "skipped", reason="the driver does not support step 2 (signal)"),
        _case("tool", "passed"),
        _case("tool", "failed", expected=True),
        _case("mcp", "passed"),
        _case("cli", "passed"),
    ]
    verdicts = surface_verdicts(cases, BaselineOutcome())
    assert verdicts["sdk"]["verdict"] == "incomplete"
    assert verdicts["sdk"]["reason"] == (
        "1 of 2 case(s) not run (the driver does not support step 2 (signal))"
    )
    assert verdicts["tool"]["verdict"] == "incomplete"
    assert verdicts["tool"]["reason"] == "1 expected failure(s)"
    assert verdict_text("partial", verdicts, 10, 10) == "PASS (mcp, cli; sdk, tool incomplete)"


def test_an_unexpected_failure_or_a_wrong_list_entry_fails_its_surface() -> None:
    cases = [*_all_passed()[:3], _case("cli", "errored")]
    outcome = BaselineOutcome(unexpected_passes=[("cg.x.sdk-passed", "sdk")])
    verdicts = surface_verdicts(cases, outcome)
    assert verdicts["sdk"] == {
        "verdict": "fail",
        "reason": "1 expected-failure entry(ies) wrong",
        "applicable": 1,
        "ran": 1,
    }
    assert verdicts["cli"]["reason"] == "1 case(s) failed or errored"
    assert verdict_text("fail", verdicts, 10, 10) == (
        "FAIL (sdk: 1 expected-failure entry(ies) wrong; cli: 1 case(s) failed or errored)"
    )


def test_a_selection_of_vectors_is_named_in_the_verdict() -> None:
    verdicts = surface_verdicts(_all_passed(), BaselineOutcome())
    assert (
        verdict_text("partial", verdicts, 3, 172) == "PASS (sdk, tool, mcp, cli; 3 of 172 vectors)"
    )


# -- through the harness ---------------------------------------------------------------------------


@pytest.fixture
def no_mcp_manifest(fakes: Path, tmp_path: Path) -> Path:
    """The conforming fake (tests/fakes/fake_impl.py), with no MCP command in its manifest."""
    text = (fakes / "none.json").read_text(encoding="utf-8").replace("{here}", str(fakes))
    data = json.loads(text)
    del data["mcp"]
    data["name"] = "fake-without-mcp"
    path = tmp_path / "without-mcp.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.slow
def test_an_implementation_without_mcp_is_not_certified_on_mcp_in_any_format(
    harness: Any, fixture_suite_root: Path, tmp_path: Path, no_mcp_manifest: Path
) -> None:
    reports = tmp_path / "reports"
    status, out, _ = harness(
        "run",
        "--suite-root",
        str(fixture_suite_root),
        "--no-progress",
        "--report-dir",
        str(reports),
        "-i",
        str(no_mcp_manifest),
        "-k",
        "cg.query.capability-not-found",
    )
    report = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    total = report["selection"]["suiteVectors"]
    text = f"PASS (sdk, tool, cli; mcp not run; 1 of {total} vectors)"
    assert status == 0
    assert report["verdict"] == "partial"
    assert report["verdictText"] == text
    assert report["surfaces"]["mcp"]["verdict"] == "not-run"
    assert report["surfaces"]["mcp"]["reason"] == "the manifest has no MCP command"
    assert "mcp not-run: the manifest has no MCP command" in report["reasons"]
    assert f"**Verdict: {text}**" in out
    markdown = (reports / "summary.md").read_text(encoding="utf-8")
    assert "| mcp | not-run (the manifest has no MCP command) |" in markdown
    junit = ET.fromstring((reports / "junit.xml").read_text(encoding="utf-8"))
    (mcp_suite,) = [s for s in junit if s.get("name") == "mcp"]
    properties = {p.get("name"): p.get("value") for p in mcp_suite.iter("property")}
    assert properties == {
        "verdict": text,
        "surfaceVerdict": "not-run",
        "surfaceReason": "the manifest has no MCP command",
    }
    html = (reports / "matrix.html").read_text(encoding="utf-8")
    assert f"Verdict: {text}" in html
    assert "<span class='sv-not-run' title='the manifest has no MCP command'>not-run</span>" in html

    # --strict certifies only a full pass
    status, _, _ = harness(
        "run",
        "--suite-root",
        str(fixture_suite_root),
        "--no-progress",
        "--report-dir",
        str(tmp_path / "strict"),
        "-i",
        str(no_mcp_manifest),
        "-k",
        "cg.query.capability-not-found",
        "--strict",
    )
    assert status == 1


#: What the summary and the console say when the driver's self-report is not the manifest's.
FAKE_SELF_REPORT = (
    "The driver reports itself as fake-none 0 (Python); this report names the implementation as "
    "its manifest does."
)


@pytest.mark.slow
def test_every_format_names_the_implementation_by_its_manifest_not_the_drivers_self_report(
    harness: Any, fixture_suite_root: Path, tmp_path: Path, no_mcp_manifest: Path
) -> None:
    """The manifest says fake-without-mcp; its driver (the fake's) says fake-none of itself."""
    reports = tmp_path / "reports"
    status, out, _ = harness(
        "run", "--suite-root", str(fixture_suite_root), "--no-progress", "--report-dir",
        str(reports), "-i", str(no_mcp_manifest), "-k", "cg.query.capability-not-found",
        "--write-baseline", str(tmp_path / "baseline.json"),
    )  # fmt: skip
    assert status == 0
    report = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in report["implementation"].items() if k != "driver"} == {
        "name": "fake-without-mcp",
        "language": "Python",
        "version": "0",
    }
    assert report["implementation"]["driver"]["implementation"] == {
        "name": "fake-none",
        "language": "Python",
        "version": "0",
    }
    summary = (reports / "summary.md").read_text(encoding="utf-8").splitlines()
    assert summary[0] == "# Conformance: fake-without-mcp 0 (Python)"
    assert summary[3:6] == ["", FAKE_SELF_REPORT, ""]
    assert "\n# Conformance: fake-without-mcp 0 (Python)\n" in out  # after "wrote 0 ..."
    assert f"\n{FAKE_SELF_REPORT}\n" in out
    junit = ET.fromstring((reports / "junit.xml").read_text(encoding="utf-8"))
    assert junit.get("name") == "cg-conformance fake-without-mcp"
    html = (reports / "matrix.html").read_text(encoding="utf-8")
    assert "<title>Conformance matrix: fake-without-mcp</title>" in html
    baseline = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
    assert baseline["implementation"] == "fake-without-mcp"


def test_the_drivers_self_report_is_a_line_only_when_it_is_not_the_manifests() -> None:
    manifest = {"name": "fake-without-mcp", "language": "Python", "version": "0"}
    told = {"name": "fake-none", "language": "Python", "version": "0"}
    started = {"type": "started", "protocol": "1.1", "implementation": told, "surfaces": ["sdk"]}
    assert driver_self_report({**manifest, "driver": started}) == FAKE_SELF_REPORT
    assert driver_self_report({**told, "driver": started}) == ""  # the same: nothing to say
    assert driver_self_report(manifest) == ""  # no driver (a CLI-only manifest)


@pytest.mark.slow
def test_an_expected_failure_on_a_surface_outside_the_selection_is_ignored(
    harness: Any, fixture_suite_root: Path, fakes: Path, tmp_path: Path
) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(
        json.dumps(
            {
                "implementation": "fake-cli-next-action",
                "entries": [
                    {"vector": "cg.query.capability-not-found", "surface": "cli", "reason": "r"}
                ],
            }
        ),
        encoding="utf-8",
    )
    vector = "cg.query.capability-not-found"
    common = ["run", "--suite-root", str(fixture_suite_root), "--no-progress", "-k", vector]
    common += ["-i", str(fakes / "cli-next-action.json"), "--expected-failures", str(baseline)]

    # -s sdk: the cli entry is not contradicted (the case did not run), the run succeeds
    status, _, _ = harness(*common, "-s", "sdk", "--report-dir", str(tmp_path / "a"))
    report = json.loads((tmp_path / "a" / "report.json").read_text(encoding="utf-8"))
    assert status == 0, report["reasons"]
    assert report["baseline"]["unmatched"] == []
    assert report["surfaces"]["cli"]["verdict"] == "not-run"

    # with the cli: the expected failure holds, and the cli is incomplete, not a pass
    status, _, _ = harness(*common, "-s", "sdk", "-s", "cli", "--report-dir", str(tmp_path / "b"))
    report = json.loads((tmp_path / "b" / "report.json").read_text(encoding="utf-8"))
    assert status == 0, report["reasons"]
    assert report["surfaces"]["cli"] == {
        "verdict": "incomplete",
        "reason": "1 expected failure(s)",
        "applicable": 1,
        "ran": 1,
    }
    assert report["verdict"] == "partial"


@pytest.mark.slow
def test_exit_first_skips_every_case_after_the_first_failure(run_fake: Any) -> None:
    # in id order: the document vector fails, the query vectors after it are not run
    patterns = [
        "cg.document.capability-not-found",
        "cg.query.capability-not-found",
        "cg.query.list-empty",
    ]
    args = ["-s", "cli", "-j", "1", "-x", *[a for p in patterns for a in ("-k", p)]]
    status, report = run_fake("cli-next-action", *args)
    cli_cases = [c for c in report["cases"] if c["surface"] == "cli"]
    assert status == 1
    assert [c["outcome"] for c in cli_cases].count("failed") == 1
    skipped = [c for c in cli_cases if c["outcome"] == "skipped"]
    assert skipped
    assert all(c["reason"] == "not run: an earlier case failed (--exit-first)" for c in skipped)
    assert report["selection"]["exitFirst"] is True


@pytest.mark.slow
def test_tool_envelope_names_the_extra_member(run_fake: Any) -> None:
    _status, report = run_fake(
        "tool-extra-member", "-s", "tool", "-k", "cg.query.capability-not-found"
    )
    (case,) = [c for c in report["cases"] if c["surface"] == "tool"]
    (check,) = [c for c in case["checks"] if not c["passed"]]
    assert check == {
        "name": "tool-envelope",
        "passed": False,
        "detail": "step 1 (call): expected {ok: false, error}: extra member(s) 'debug'",
    }


@pytest.mark.slow
def test_an_mcp_batch_failure_not_confirmed_alone_says_so(
    fixture_suite: Suite, schemas: SchemaSet, fakes: Path
) -> None:
    from capability_graph_conformance.baseline import Baseline, apply_baseline
    from capability_graph_conformance.reports import build_report, markdown_summary

    suite = fixture_suite
    manifest = Manifest.load(fakes / "refusal-no-match.json", schemas)
    patterns = ("cg.model.refused-missing-action", "cg.model.action-of-another-code")
    options = RunOptions(surfaces=("mcp",), patterns=patterns, max_confirmations=0)
    run = run_suite(suite, schemas, manifest, options)
    outcome = apply_baseline(run.cases, Baseline(), set(), set())
    report = build_report(run, suite, Baseline(), outcome)
    failing = [c for c in report["cases"] if c["outcome"] == "failed"]
    assert {c["vector"] for c in failing} == set(patterns)
    for case in failing:
        assert case["unconfirmed"] is True
        assert case["reason"].startswith(
            "seen on a server shared by a batch of vectors, not confirmed alone: "
        )
    assert any("not confirmed alone" in reason for reason in report["reasons"])
    assert "not confirmed alone" in markdown_summary(report)
    assert schemas.errors("conformance/report.schema.json", report) == []


# -- a case is decided by the checks that ran (CG-CONF-7) ------------------------------------------

#: The fixture suite's vectors whose Tool Adapter call fails (an error envelope): the ones the
#: mutation tool-extra-member breaks.
ERROR_ENVELOPES = {
    "cg.document.capability-not-found",
    "cg.model.action-of-another-code",
    "cg.model.plain-exception",
    "cg.model.refused-missing-action",
    "cg.query.capability-not-found",
}
SDK_TOOL = ("sdk", "tool")


def _driver_cases(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (c["vector"], c["surface"]): c
        for c in report["cases"]
        if c["surface"] in ("sdk", "tool") and c["outcome"] != "not-applicable"
    }


@pytest.mark.slow
def test_a_close_answered_unsupported_hides_no_failed_check(run_fake: Any) -> None:
    """The driver answers the harness's trailing close 'unsupported' and its Tool Adapter adds a
    member to every error envelope: those cases fail, the run fails (the harness before CG-CONF-7
    skipped every case: PASS (no surface; sdk, tool, mcp, cli not run), exit 0)."""
    status, report = run_fake("close-unsupported+tool-extra-member", "-s", "sdk", "-s", "tool")
    assert status == 1
    assert report["verdict"] == "fail"
    assert report["verdictText"] == "FAIL (tool: 5 case(s) failed or errored)"
    cases = _driver_cases(report)
    assert {k for k, c in cases.items() if c["outcome"] == "failed"} == {
        (v, "tool") for v in ERROR_ENVELOPES
    }
    assert {c["outcome"] for k, c in cases.items() if k[0] not in ERROR_ENVELOPES} == {"passed"}
    assert {c["outcome"] for k, c in cases.items() if k[1] == "sdk"} == {"passed"}
    case = cases["cg.query.capability-not-found", "tool"]
    assert case["reason"] == (
        "tool-envelope: step 1 (call): expected {ok: false, error}: extra member(s) 'debug'"
    )


@pytest.mark.slow
def test_a_close_answered_unsupported_skips_no_case(run_fake: Any) -> None:
    status, report = run_fake("close-unsupported", "-s", "sdk", "-s", "tool")
    assert status == 0, report["reasons"]
    assert report["verdictText"] == "PASS (sdk, tool; mcp, cli not run)"
    assert {c["outcome"] for c in _driver_cases(report).values()} == {"passed"}
    assert report["surfaces"]["sdk"] == {"verdict": "pass", "applicable": 6, "ran": 6}
    assert report["surfaces"]["tool"] == {"verdict": "pass", "applicable": 7, "ran": 7}


@pytest.fixture
def reload_suite(fixture_suite_root: Path, tmp_path: Path) -> Path:
    """The fixture suite and one scenario whose last step, reload, the fake does not support."""
    import shutil

    root = tmp_path / "suite"
    shutil.copytree(fixture_suite_root, root)
    vector = {
        "id": "cg.query.reload-after-not-found",
        "title": "A resolve that fails, then a reload",
        "requirements": ["CG-SDK-1", "CG-TOOL-1"],
        "level": "required",
        "fixture": "minimal",
        "steps": [
            {"op": "open"},
            {
                "op": "call",
                "tool": "resolve_capabilities",
                "arguments": {"ids": ["acme::missing"]},
                "expect": {
                    "error": {
                        "code": "CG_CAPABILITY_NOT_FOUND",
                        "phase": "query",
                        "nextAction": "refresh",
                        "message": "Requested capability does not exist",
                    }
                },
            },
            {"op": "reload"},
        ],
        "surfaces": ["sdk", "tool"],
    }
    path = root / "conformance/vectors/capability-graph/query/reload-after-not-found.json"
    path.write_text(json.dumps(vector), encoding="utf-8")
    return root


@pytest.mark.slow
def test_a_step_answered_unsupported_skips_its_case_only_when_no_check_failed(
    harness: Any, reload_suite: Path, fakes: Path, tmp_path: Path, schemas: SchemaSet
) -> None:
    reports = tmp_path / "reports"
    status, _, _ = harness(
        "run", "--suite-root", str(reload_suite), "--no-progress", "--report-dir", str(reports),
        "-i", str(fakes / "tool-extra-member.json"), "-k", "cg.query.reload-after-not-found",
    )  # fmt: skip
    report = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    assert schemas.errors("conformance/report.schema.json", report) == []
    assert status == 1
    sdk, tool = (_driver_cases(report)["cg.query.reload-after-not-found", s] for s in SDK_TOOL)
    # the SDK's checks all held before the reload: skipped, holding no check
    assert sdk["outcome"] == "skipped"
    assert (
        sdk["reason"]
        == "the driver does not support step 2 (reload): the fake has no step 'reload'"
    )
    assert sdk["checks"] == []
    # the Tool Adapter's call had already failed a check: failed, with what the driver answered
    assert tool["outcome"] == "failed"
    assert tool["reason"] == (
        "tool-envelope: step 1 (call): expected {ok: false, error}: extra member(s) 'debug'"
    )
    assert tool["evidence"] == {
        "steps": [
            {
                "step": "step 1 (call)",
                "observation": '{"outcome":"returned","value":{"ok":false,"error":'
                '{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":'
                '"Requested capability does not exist","nextAction":"refresh"},"debug":true}}',
            }
        ],
        "driverStderr": "",
    }


def test_the_evidence_of_a_driver_case_is_bounded() -> None:
    from capability_graph_conformance.run_driver import EVIDENCE_STEPS, _evidence

    big = {"outcome": "returned", "value": "x" * 5000}
    answers = [(f"step {i} (call)", big) for i in range(10)]
    evidence = _evidence(answers, [], b"e" * 5000)
    assert len(evidence["steps"]) == EVIDENCE_STEPS == 4
    assert [s["step"] for s in evidence["steps"]] == [f"step {i} (call)" for i in range(4)]
    assert all(len(s["observation"]) == 600 for s in evidence["steps"])
    assert evidence["steps"][0]["observation"].endswith("xxx...")
    assert len(evidence["driverStderr"]) == 600
    # the failing steps first: only they are kept when some step failed a check
    assert [s["step"] for s in _evidence(answers, ["step 7 (call)"], b"")["steps"]] == [
        "step 7 (call)"
    ]


def test_a_run_that_checked_nothing_says_so_in_its_verdict_text() -> None:
    verdicts = surface_verdicts([_case("sdk", "skipped", reason="r")], BaselineOutcome())
    assert verdict_text("fail", verdicts, 1, 1, ["no check ran"]) == "FAIL (no check ran)"


# -- readable schema failures ----------------------------------------------------------------------


def test_a_schema_failure_names_the_member_and_the_branch_not_the_value(
    schemas: SchemaSet,
) -> None:
    envelope = {
        "ok": False,
        "error": {
            "code": "CG_CAPABILITY_NOT_FOUND",
            "phase": "query",
            "message": "Requested capability does not exist",
            "nextAction": "refresh",
            "trace": "x" * 200,
        },
    }
    (problem,) = schemas.errors("tool-outcome.schema.json", envelope)
    assert problem.startswith("$: matches none of the 2 branches of oneOf; closest: branch 1")
    assert "$.error: Additional properties are not allowed ('trace' was unexpected)" in problem
    assert "x" * 100 not in problem


def test_a_type_failure_names_the_expected_and_the_seen_type(schemas: SchemaSet) -> None:
    error = {"code": "CG_CAPABILITY_NOT_FOUND", "phase": "query", "message": ["a", "list"]}
    assert schemas.errors("error.schema.json", error) == ["$.message: expected string, got array"]
