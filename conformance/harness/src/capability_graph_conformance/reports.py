"""Reports of a run: JSON (``spec/conformance/report.schema.json``), Markdown, JUnit XML, HTML.

The JSON report is the source of the others and of ``cg-conformance compare``. The HTML report is
a self-contained matrix (vectors x surfaces) for the documentation site.
"""

from __future__ import annotations

import datetime as dt
import html
import platform
import sys
from collections.abc import Iterable
from typing import Any
from xml.etree import ElementTree as ET

from . import DRIVER_PROTOCOL, SUITE_VERSION, __version__
from ._json import dumps
from .baseline import Baseline, BaselineOutcome
from .cases import OUTCOMES, CaseResult
from .runner import RunResult
from .suite import SURFACES, Suite

__all__ = ["build_report", "html_matrix", "junit_xml", "markdown_summary"]

REPORT_FORMAT = "cg-conformance-report/1"


def _counts(cases: Iterable[CaseResult], unexpected: set[tuple[str, str]]) -> dict[str, int]:
    counts: dict[str, int] = {
        "total": 0,
        **{o: 0 for o in OUTCOMES},
        "expectedFailures": 0,
        "unexpectedPasses": 0,
        "checks": 0,
    }
    for case in cases:
        counts["total"] += 1
        counts[case.outcome] += 1
        counts["checks"] += len(case.checks)
        if case.expected_failure:
            counts["expectedFailures"] += 1
        if case.key in unexpected:
            counts["unexpectedPasses"] += 1
    return counts


def build_report(
    run: RunResult, suite: Suite, baseline: Baseline, outcome: BaselineOutcome
) -> dict[str, Any]:
    unexpected = set(outcome.unexpected_passes)
    cases = run.cases
    summary = _counts(cases, unexpected)
    reasons: list[str] = []
    bad = [c for c in cases if c.outcome in ("failed", "errored") and not c.expected_failure]
    if bad:
        listed = ", ".join(f"{c.vector.id} [{c.surface}]" for c in bad[:10])
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        reasons.append(f"{len(bad)} case(s) failed or errored: {listed}{more}")
    if outcome.unexpected_passes:
        reasons.append(
            "expected failures that passed (remove them from the list): "
            + ", ".join(f"{v} [{s}]" for v, s in outcome.unexpected_passes)
        )
    if outcome.unmatched:
        reasons.append(
            "expected-failure entries that match no failing case: "
            + ", ".join(f"{v} [{s}]" for v, s in outcome.unmatched)
        )
    if summary["checks"] == 0:
        reasons.append("no check ran")
    baseline_json: dict[str, Any] = {
        "entries": len(baseline.entries),
        "unexpectedPasses": [{"vector": v, "surface": s} for v, s in outcome.unexpected_passes],
        "unmatched": [{"vector": v, "surface": s} for v, s in outcome.unmatched],
    }
    if baseline.path is not None:
        baseline_json["path"] = str(baseline.path)
    implementation = {
        k: v
        for k, v in run.implementation.items()
        if k in ("name", "language", "version", "driver")
    }
    implementation = {k: (str(v) if k != "driver" else v) for k, v in implementation.items()}
    return {
        "format": REPORT_FORMAT,
        "suite": {
            "version": SUITE_VERSION,
            "contract": suite.contract,
            "contractVersion": suite.contract_version,
            "driverProtocol": DRIVER_PROTOCOL,
            "vectors": len(run.vectors),
            "source": suite.source,
        },
        "harness": {
            "version": __version__,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
        },
        "implementation": implementation,
        "startedAt": dt.datetime.fromtimestamp(run.started_at, dt.UTC).strftime(
            "%Y-%m-%dT%H:%M:%S.%fZ"
        ),
        "durationMs": int(run.duration_s * 1000),
        "verdict": "fail" if reasons else "pass",
        "reasons": reasons,
        "summary": summary,
        "bySurface": {
            s: _counts((c for c in cases if c.surface == s), unexpected) for s in SURFACES
        },
        "baseline": baseline_json,
        "cases": [_case_json(c) for c in cases],
    }


def _case_json(case: CaseResult) -> dict[str, Any]:
    data: dict[str, Any] = {
        "vector": case.vector.id,
        "surface": case.surface,
        "title": case.vector.title,
        "level": case.vector.level,
        "outcome": case.outcome,
        "expectedFailure": case.expected_failure,
        "checks": [c.to_json() for c in case.checks],
        "durationMs": case.duration_ms,
    }
    if case.reason:
        data["reason"] = case.reason
    if case.evidence is not None and case.outcome in ("failed", "errored"):
        data["evidence"] = case.evidence
    return data


# -- Markdown --------------------------------------------------------------------------------------

_MARK = {
    "passed": "pass",
    "failed": "FAIL",
    "errored": "ERROR",
    "skipped": "skip",
    "not-applicable": "n/a",
}


def markdown_summary(report: dict[str, Any]) -> str:
    impl = report["implementation"]
    suite = report["suite"]
    lines = [
        f"# Conformance: {impl['name']} {impl['version']} ({impl['language']})",
        "",
        f"**Verdict: {report['verdict'].upper()}** - suite {suite['version']} "
        f"({suite['vectors']} vectors), contract {suite['contract']} {suite['contractVersion']}, "
        f"driver protocol {suite['driverProtocol']}, {report['durationMs'] / 1000:.1f} s",
        "",
    ]
    if report["reasons"]:
        lines += [f"- {reason}" for reason in report["reasons"]] + [""]
    lines += [
        "| surface | passed | failed | errored | skipped | n/a | expected failures | checks |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for surface, counts in [*report["bySurface"].items(), ("total", report["summary"])]:
        lines.append(
            f"| {surface} | {counts['passed']} | {counts['failed']} | {counts['errored']} | "
            f"{counts['skipped']} | {counts['not-applicable']} | {counts['expectedFailures']} | "
            f"{counts['checks']} |"
        )
    problems = [c for c in report["cases"] if c["outcome"] in ("failed", "errored")]
    if problems:
        lines += ["", "## Failed and errored cases", ""]
        lines += ["| vector | surface | outcome | reason |", "|---|---|---|---|"]
        for case in problems:
            outcome = _MARK[case["outcome"]] + (" (expected)" if case["expectedFailure"] else "")
            reason = str(case.get("reason", "")).replace("|", "\\|").replace("\n", " ")[:300]
            lines.append(f"| `{case['vector']}` | {case['surface']} | {outcome} | {reason} |")
    return "\n".join(lines) + "\n"


# -- JUnit XML -----------------------------------------------------------------------------------


def junit_xml(report: dict[str, Any]) -> str:
    """One testsuite per surface, one testcase per applicable vector. Expected failures are
    reported as skipped (as pytest reports xfail)."""
    root = ET.Element("testsuites", name=f"cg-conformance {report['implementation']['name']}")
    for surface in SURFACES:
        cases = [
            c
            for c in report["cases"]
            if c["surface"] == surface and c["outcome"] != "not-applicable"
        ]
        suite = ET.SubElement(root, "testsuite", name=surface, tests=str(len(cases)))
        counts = {"failures": 0, "errors": 0, "skipped": 0}
        total_ms = 0
        for case in cases:
            total_ms += case["durationMs"]
            element = ET.SubElement(
                suite,
                "testcase",
                classname=f"{surface}.{case['vector'].split('.')[1]}",
                name=case["vector"],
                time=f"{case['durationMs'] / 1000:.3f}",
            )
            reason = case.get("reason", "")
            if case["expectedFailure"]:
                ET.SubElement(element, "skipped", message=f"expected failure: {reason}"[:1000])
                counts["skipped"] += 1
            elif case["outcome"] == "failed":
                failure = ET.SubElement(element, "failure", message=reason[:1000])
                failure.text = "\n".join(
                    f"{c['name']}: {c.get('detail', '')}" for c in case["checks"] if not c["passed"]
                )
                counts["failures"] += 1
            elif case["outcome"] == "errored":
                ET.SubElement(element, "error", message=reason[:1000])
                counts["errors"] += 1
            elif case["outcome"] == "skipped":
                ET.SubElement(element, "skipped", message=reason[:1000])
                counts["skipped"] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
        suite.set("time", f"{total_ms / 1000:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# -- HTML matrix -----------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1b1f24}
h1{font-size:1.3rem}table{border-collapse:collapse}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa;position:sticky;top:0}
td.o{text-align:center;font-weight:600;white-space:nowrap}
.passed{background:#dafbe1;color:#116329}.failed{background:#ffebe9;color:#a40e26}
.errored{background:#fff1c2;color:#7d4e00}.skipped{background:#eef1f4;color:#57606a}
.not-applicable{background:#fff;color:#8c959f}.xfail{background:#f3e8ff;color:#6e40c9}
tr.area th{background:#eaeef2;text-align:left}.v{font-family:ui-monospace,monospace;font-size:12px}
.verdict-pass{color:#116329}.verdict-fail{color:#a40e26}
"""
_SYMBOL = {
    "passed": "pass",
    "failed": "FAIL",
    "errored": "ERROR",
    "skipped": "skip",
    "not-applicable": "-",
}


def html_matrix(report: dict[str, Any]) -> str:
    esc = html.escape
    impl = report["implementation"]
    suite = report["suite"]
    cells: dict[tuple[str, str], dict[str, Any]] = {
        (c["vector"], c["surface"]): c for c in report["cases"]
    }
    vectors: dict[str, str] = {}
    for case in report["cases"]:
        vectors.setdefault(case["vector"], case["title"])
    parts = [
        # The page names its (empty) icon itself: served standalone, a browser then asks the
        # server for nothing else (no /favicon.ico).
        '<!doctype html><html lang=en><meta charset=utf-8><link rel=icon href="data:,">',
        f"<title>Conformance matrix: {esc(impl['name'])}</title><style>{_CSS}</style>",
        f"<h1>Conformance matrix: {esc(impl['name'])} {esc(impl['version'])} "
        f"({esc(impl['language'])})</h1>",
        f"<p class='verdict-{esc(report['verdict'])}'><strong>Verdict: "
        f"{esc(report['verdict'].upper())}</strong> - suite {esc(suite['version'])}, "
        f"{suite['vectors']} vectors, contract {esc(suite['contract'])} "
        f"{esc(suite['contractVersion'])}, {report['durationMs'] / 1000:.1f} s, "
        f"{report['summary']['checks']} checks</p>",
    ]
    if report["reasons"]:
        parts.append("<ul>" + "".join(f"<li>{esc(r)}</li>" for r in report["reasons"]) + "</ul>")
    header = "".join(f"<th>{s}</th>" for s in SURFACES)
    parts.append(f"<table><thead><tr><th>vector</th><th>title</th>{header}</tr></thead><tbody>")
    area = None
    for vector_id, title in vectors.items():
        this_area = vector_id.split(".")[1]
        if this_area != area:
            area = this_area
            parts.append(f"<tr class=area><th colspan={2 + len(SURFACES)}>{esc(area)}</th></tr>")
        row = [f"<td class=v>{esc(vector_id)}</td><td>{esc(title)}</td>"]
        for surface in SURFACES:
            case = cells.get((vector_id, surface))
            if case is None:
                row.append("<td></td>")
                continue
            css = "xfail" if case["expectedFailure"] else case["outcome"]
            label = "xfail" if case["expectedFailure"] else _SYMBOL[case["outcome"]]
            tip = esc(case.get("reason", "") or f"{len(case['checks'])} checks", quote=True)
            row.append(f"<td class='o {css}' title='{tip}'>{esc(label)}</td>")
        parts.append("<tr>" + "".join(row) + "</tr>")
    parts.append("</tbody></table>")
    parts.append(
        f"<script type=application/json id=report>{esc(dumps(report['summary']))}</script>"
    )
    return "\n".join(parts) + "\n"
