"""Proof of teeth: each fake implementation is the reference with one mutation, and fails exactly
the cases it should (computed from the vectors, so new vectors keep the tests exact)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from capability_graph_conformance.check import expected_codes
from capability_graph_conformance.runner import select_vectors
from capability_graph_conformance.suite import Suite, Vector

pytestmark = pytest.mark.slow

Cases = set[tuple[str, str]]


def _run(
    run_report: Any, fakes: Path, fake: str, patterns: list[str], *extra: str
) -> dict[str, Any]:
    args = ["-i", str(fakes / f"{fake}.json"), *extra]
    for pattern in patterns:
        args += ["-k", pattern]
    _status, report = run_report(*args)
    result: dict[str, Any] = report
    return result


def _expected(suite: Suite, patterns: list[str], predicate: Callable[[Vector, str], bool]) -> Cases:
    return {
        (v.id, s)
        for v in select_vectors(suite.vectors, patterns)
        for s in v.surfaces
        if predicate(v, s)
    }


def test_cli_reporting_another_next_action(
    run_report: Any, fakes: Path, suite: Suite, failing_cases: Any
) -> None:
    patterns = [
        "cg.seed.error-mjs",
        "cg.query.capability-not-found",
        "cg.query.provider-not-found",
        "cg.precedence.named-root-fails-whole-call",
        "cg.cli.resolve-command",
        "cg.cli.describe-command",
    ]
    report = _run(run_report, fakes, "cli-next-action", patterns)
    expected = _expected(
        suite,
        patterns,
        lambda v, s: (
            s == "cli"
            and v.expect_for("cli").get("error", {}).get("code") == "CG_CAPABILITY_NOT_FOUND"
        ),
    )
    assert len(expected) == 4
    assert failing_cases(report) == expected
    for case in report["cases"]:
        if (case["vector"], case["surface"]) in expected:
            names = {c["name"] for c in case["checks"] if not c["passed"]}
            assert "error-next-action" in names
            if case["vector"] != "cg.cli.resolve-command":  # argv vectors run on the CLI only
                assert "identical-across-surfaces" in names


def test_mcp_error_with_structured_content(
    run_report: Any, fakes: Path, suite: Suite, failing_cases: Any
) -> None:
    patterns = [
        "cg.seed.error-mjs",
        "cg.query.unknown-tool",
        "cg.query.describe",
        "cg.config.file-missing",
        "cg.document.url-reference-only",
    ]
    # the mutation is on MCP; the SDK is there for the cross-surface comparison
    report = _run(run_report, fakes, "mcp-structured-content", patterns, "-s", "mcp", "-s", "sdk")
    expected = _expected(
        suite,
        patterns,
        lambda v, s: s == "mcp" and v.kind == "call" and "error" in v.expect_for("mcp"),
    )
    assert expected == {("cg.seed.error-mjs", "mcp"), ("cg.document.url-reference-only", "mcp")}
    assert failing_cases(report) == expected
    for case in report["cases"]:
        if (case["vector"], case["surface"]) in expected:
            assert "mcp-no-structured-content" in {
                c["name"] for c in case["checks"] if not c["passed"]
            }


def _leaks(vector: Vector) -> bool:
    """Whether a scripted executor of the vector raises text that the vector forbids."""
    text = str(vector.data.get("config", {}).get("model", {}).get("steps", []))
    return any(secret in text for secret in vector.forbid)


def test_leaking_the_raw_executor_message(
    run_report: Any, fakes: Path, suite: Suite, failing_cases: Any
) -> None:
    patterns = [
        "cg.model.plain-exception",
        "cg.model.refused-illegal-action",
        "cg.model.output-bad-status",
        "cg.cli.match-projection",
    ]
    report = _run(run_report, fakes, "leak-raw-message", patterns)
    expected = _expected(suite, patterns, lambda v, s: _leaks(v))
    assert len(expected) == 2 * 4 + 1
    assert failing_cases(report) == expected
    for case in report["cases"]:
        if (case["vector"], case["surface"]) in expected:
            assert "no-forbidden-text" in {c["name"] for c in case["checks"] if not c["passed"]}


def test_a_refusal_reported_as_no_match(
    run_report: Any, fakes: Path, suite: Suite, failing_cases: Any
) -> None:
    patterns = [
        "cg.model.refused-missing-action",
        "cg.model.action-of-another-code",
        "cg.lifecycle.script-advances",
        "cg.model.plain-exception",
    ]
    report = _run(run_report, fakes, "refusal-no-match", patterns)
    expected = _expected(suite, patterns, lambda v, s: "CG_MODEL_REFUSED" in expected_codes(v))
    assert len(expected) == 4 + 4 + 2
    assert failing_cases(report) == expected


def test_a_crashing_driver_errors_its_cases_and_the_run_goes_on(
    run_report: Any, fakes: Path, suite: Suite, failing_cases: Any
) -> None:
    patterns = [
        "cg.document.read-ok",
        "cg.document.not-declared",
        "cg.query.describe",
        "cg.seed.error-mjs",
    ]
    report = _run(run_report, fakes, "crashing-driver", patterns, "-s", "sdk", "-s", "tool")
    expected = _expected(
        suite,
        patterns,
        lambda v, s: s in ("sdk", "tool") and v.data.get("call", {}).get("tool") == "read_document",
    )
    assert len(expected) == 4
    assert failing_cases(report) == expected
    for case in report["cases"]:
        if (case["vector"], case["surface"]) in expected:
            assert case["outcome"] == "errored"
            assert "the driver exited (status 3)" in case["reason"]
    assert report["summary"]["passed"] == 4


def test_a_driver_breaking_the_protocol_errors_that_case(
    run_report: Any, fakes: Path, failing_cases: Any
) -> None:
    report = _run(
        run_report,
        fakes,
        "bad-protocol-driver",
        ["cg.query.list-ok", "cg.query.describe"],
        "-s",
        "sdk",
    )
    assert failing_cases(report) == {("cg.query.list-ok", "sdk")}
    (case,) = [
        c for c in report["cases"] if c["vector"] == "cg.query.list-ok" and c["surface"] == "sdk"
    ]
    assert case["outcome"] == "errored"
    assert "broke the protocol" in case["reason"]


def test_a_cli_that_does_not_cancel_on_sigint(run_report: Any, fakes: Path) -> None:
    patterns = ["cg.cli.match-interrupted", "cg.cli.match-command"]
    report = _run(run_report, fakes, "sigint-not-cancelling", patterns)
    failing = {(c["vector"], c["surface"]): c for c in report["cases"] if c["outcome"] == "failed"}
    assert set(failing) == {("cg.cli.match-interrupted", "cli")}
    checks = {c["name"]: c["passed"] for c in failing["cg.cli.match-interrupted", "cli"]["checks"]}
    # the process was interrupted (130) but said nothing: no envelope, no CG_MODEL_CANCELLED
    assert checks["cli-signal-delivered"] is True
    assert checks["cli-exit-status"] is True
    assert checks["cli-stderr-one-line"] is False


def test_an_init_that_overwrites_a_differing_configuration(
    run_report: Any, fakes: Path, failing_cases: Any
) -> None:
    patterns = ["cg.cli.init-*"]
    report = _run(run_report, fakes, "init-overwrites", patterns)
    # Both vectors over the maintenance fixture's differing configuration catch it.
    assert failing_cases(report) == {
        ("cg.cli.init-conflict", "cli"),
        ("cg.cli.init-checks-in-plan-order", "cli"),
    }
    (case,) = [
        c
        for c in report["cases"]
        if c["outcome"] == "failed" and c["vector"] == "cg.cli.init-conflict"
    ]
    failed = {c["name"]: c.get("detail", "") for c in case["checks"] if not c["passed"]}
    assert failed["cli-exit-status"] == "expected 3, got 0"
    assert failed["cli-files"].startswith("capability-graph.json changed (")
    assert "providers exists" in failed["cli-files"]


def test_an_init_that_prints_no_text_report(
    run_report: Any, fakes: Path, failing_cases: Any
) -> None:
    report = _run(run_report, fakes, "silent-text-report", ["cg.cli.init-*"])
    # Only the vector without --json sees it: the report is missing from stdout, not wrong.
    assert failing_cases(report) == {("cg.cli.init-dry-run-text-report", "cli")}
    (case,) = [c for c in report["cases"] if c["outcome"] == "failed"]
    failed = {c["name"]: c.get("detail", "") for c in case["checks"] if not c["passed"]}
    assert failed == {"cli-stdout-non-empty": "stdout is empty"}


def test_a_tool_adapter_with_a_stale_definition(run_report: Any, fakes: Path) -> None:
    report = _run(
        run_report, fakes, "stale-tool-definitions", ["cg.query.tool-adapter-definitions"]
    )
    (case,) = [c for c in report["cases"] if c["surface"] == "tool"]
    assert case["outcome"] == "failed"
    failed = [c for c in case["checks"] if not c["passed"]]
    assert failed == [
        {
            "name": "tool-definitions",
            "passed": False,
            "detail": "step 1 (tools): match_capabilities differs from tools.json in description",
        }
    ]


def test_an_mcp_server_listing_tools_without_annotations(run_report: Any, fakes: Path) -> None:
    report = _run(run_report, fakes, "mcp-no-annotations", ["cg.query.describe"], "-s", "mcp")
    (case,) = [c for c in report["cases"] if c["surface"] == "mcp"]
    failed = [c for c in case["checks"] if not c["passed"]]
    assert [c["name"] for c in failed] == ["mcp-tools-list"]
    assert failed[0]["detail"].startswith("describe_graph differs from tools.json in annotations")
