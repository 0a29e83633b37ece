"""Proof of teeth: the harness runs the fixture suite (tests/fixtures/suite) against a standalone
fake implementation (tests/fakes/fake_impl.py) with one mutation, and fails exactly the cases it
should, with the check that names the broken rule. Unmutated, the fake passes every case."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.slow

Cases = set[tuple[str, str]]

#: The fixture suite's vectors on their surfaces, by what they exercise.
NOT_FOUND_CALLS = ("cg.query.capability-not-found", "cg.document.capability-not-found")
LEAKING_MATCHES = (
    "cg.model.plain-exception",
    "cg.model.refused-missing-action",
    "cg.model.action-of-another-code",
)
REFUSALS = ("cg.model.refused-missing-action", "cg.model.action-of-another-code")
CALL_SURFACES = ("sdk", "tool", "mcp", "cli")


def _failing(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (c["vector"], c["surface"]): c
        for c in report["cases"]
        if c["outcome"] in ("failed", "errored")
    }


def _failed_checks(case: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c.get("detail", "") for c in case["checks"] if not c["passed"]}


def test_the_unmutated_fake_passes_the_fixture_suite_on_every_surface(run_fake: Any) -> None:
    status, report = run_fake("none")
    assert status == 0, report["reasons"]
    assert report["verdictText"] == "PASS (sdk, tool, mcp, cli)"
    assert report["summary"]["passed"] == 30
    assert report["summary"]["failed"] == report["summary"]["errored"] == 0


def test_cli_reporting_another_next_action(run_fake: Any) -> None:
    _status, report = run_fake("cli-next-action")
    failing = _failing(report)
    # The CLI's graph commands only: its mcp command reports through MCP, unchanged.
    assert set(failing) == {(v, "cli") for v in (*NOT_FOUND_CALLS, "cg.cli.resolve-command")}
    for (vector, _surface), case in failing.items():
        names = set(_failed_checks(case))
        assert "error-next-action" in names
        if vector != "cg.cli.resolve-command":  # argv vectors run on the CLI only
            assert "identical-across-surfaces" in names


def test_mcp_error_with_structured_content(run_fake: Any) -> None:
    _status, report = run_fake("mcp-structured-content")
    failing = _failing(report)
    assert set(failing) == {(v, "mcp") for v in (*NOT_FOUND_CALLS, *LEAKING_MATCHES)}
    for case in failing.values():
        assert "mcp-no-structured-content" in _failed_checks(case)


def test_leaking_the_raw_executor_message(run_fake: Any) -> None:
    _status, report = run_fake("leak-raw-message")
    failing = _failing(report)
    assert set(failing) == {(v, s) for v in LEAKING_MATCHES for s in CALL_SURFACES}
    for case in failing.values():
        assert "no-forbidden-text" in _failed_checks(case)


def test_a_refusal_reported_as_no_match(run_fake: Any) -> None:
    _status, report = run_fake("refusal-no-match")
    assert set(_failing(report)) == {(v, s) for v in REFUSALS for s in CALL_SURFACES}


def test_a_crashing_driver_errors_its_cases_and_the_run_goes_on(run_fake: Any) -> None:
    _status, report = run_fake("crashing-driver")
    failing = _failing(report)
    assert set(failing) == {("cg.document.capability-not-found", s) for s in ("sdk", "tool")}
    for case in failing.values():
        assert case["outcome"] == "errored"
        assert "the driver exited (status 3)" in case["reason"]
    # a fresh driver served every later case: all the others passed
    assert report["summary"]["passed"] == 30 - 2


def test_a_driver_breaking_the_protocol_errors_that_case(run_fake: Any) -> None:
    _status, report = run_fake("bad-protocol-driver", "-s", "sdk")
    failing = _failing(report)
    assert set(failing) == {("cg.query.list-empty", "sdk")}
    (case,) = failing.values()
    assert case["outcome"] == "errored"
    assert "broke the protocol" in case["reason"]


def test_a_cli_that_does_not_cancel_on_sigint(run_fake: Any) -> None:
    _status, report = run_fake("sigint-not-cancelling", "-s", "cli")
    failing = _failing(report)
    assert set(failing) == {("cg.cli.match-interrupted", "cli")}
    checks = {c["name"]: c["passed"] for c in failing["cg.cli.match-interrupted", "cli"]["checks"]}
    # the process was interrupted (130) but said nothing: no envelope, no CG_MODEL_CANCELLED
    assert checks["cli-signal-delivered"] is True
    assert checks["cli-exit-status"] is True
    assert checks["cli-stderr-one-line"] is False


def test_an_init_that_overwrites_a_differing_configuration(run_fake: Any) -> None:
    _status, report = run_fake("init-overwrites", "-k", "cg.cli.init-*")
    # Only the vector over the maintenance fixture's differing configuration catches it.
    failing = _failing(report)
    assert set(failing) == {("cg.cli.init-conflict", "cli")}
    failed = _failed_checks(failing["cg.cli.init-conflict", "cli"])
    assert failed["cli-exit-status"] == "expected 3, got 0"
    assert failed["cli-files"].startswith("capability-graph.json changed (")
    assert "providers exists" in failed["cli-files"]


def test_an_init_that_prints_no_text_report(run_fake: Any) -> None:
    _status, report = run_fake("silent-text-report", "-k", "cg.cli.init-*")
    # Only the vector without --json sees it: the report is missing from stdout, not wrong.
    failing = _failing(report)
    assert set(failing) == {("cg.cli.init-dry-run-text-report", "cli")}
    (case,) = failing.values()
    assert _failed_checks(case) == {"cli-stdout-non-empty": "stdout is empty"}


def test_a_tool_adapter_with_a_stale_definition(run_fake: Any) -> None:
    _status, report = run_fake("stale-tool-definitions")
    failing = _failing(report)
    assert set(failing) == {("cg.query.tool-adapter-definitions", "tool")}
    failed = [c for c in failing["cg.query.tool-adapter-definitions", "tool"]["checks"]]
    assert [c for c in failed if not c["passed"]] == [
        {
            "name": "tool-definitions",
            "passed": False,
            "detail": "step 1 (tools): match_capabilities differs from tools.json in description",
        }
    ]


def test_an_mcp_server_listing_tools_without_annotations(run_fake: Any) -> None:
    _status, report = run_fake("mcp-no-annotations", "-s", "mcp")
    failing = _failing(report)
    # tools/list is checked on the first case each server serves: one server for the minimal
    # fixture's calls, one for the model fixture's batch.
    assert set(failing) == {
        ("cg.document.capability-not-found", "mcp"),
        ("cg.model.action-of-another-code", "mcp"),
    }
    for case in failing.values():
        failed = _failed_checks(case)
        assert list(failed) == ["mcp-tools-list"]
        assert failed["mcp-tools-list"].startswith(
            "describe_graph differs from tools.json in annotations"
        )
