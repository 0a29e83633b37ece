"""Reports of a run: JSON (``spec/conformance/report.schema.json``), Markdown, JUnit XML, HTML.

The JSON report is the source of the others and of ``cg-conformance compare``. The HTML report is
a self-contained matrix (vectors x surfaces) for the documentation site.
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import platform
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from . import DRIVER_PROTOCOL, SUITE_VERSION, __version__
from ._json import dumps
from .baseline import Baseline, BaselineOutcome
from .cases import OUTCOMES, CaseResult
from .runner import RunResult
from .suite import SURFACES, Suite

__all__ = [
    "add_report_arguments",
    "build_report",
    "driver_self_report",
    "html_matrix",
    "junit_xml",
    "markdown_summary",
    "surface_verdicts",
    "verdict_text",
]

REPORT_FORMAT = "cg-conformance-report/1"


def add_report_arguments(
    parser: argparse.ArgumentParser, *, default_dir: str, written: str, copies: Mapping[str, str]
) -> None:
    """``--report-dir DIR`` (where the command writes ``written``) and, per ``copies`` entry
    ``flag: what``, ``--flag FILE`` to also write ``what`` there: ``run`` and ``explore`` write
    their reports alike."""
    parser.add_argument(
        "--report-dir",
        type=Path,
        default=Path(default_dir),
        metavar="DIR",
        help=f"where {written} go (default: %(default)s)",
    )
    for flag, what in copies.items():
        parser.add_argument(f"--{flag}", type=Path, metavar="FILE", help=f"also write {what} here")


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


def surface_verdicts(
    cases: list[CaseResult], outcome: BaselineOutcome
) -> dict[str, dict[str, Any]]:
    """What each surface certifies.

    * ``pass``: every applicable case of the selection ran and passed;
    * ``fail``: a case failed or errored without being an expected failure, or an entry of the
      expected-failures list for this surface passed or matched nothing;
    * ``incomplete``: nothing failed unexpectedly, but some cases did not run (skipped) or are
      expected failures;
    * ``not-run``: no case of this surface ran (not selected, no command, no applicable vector).
    """
    baseline_problems = Counter(s for _, s in [*outcome.unexpected_passes, *outcome.unmatched])
    verdicts: dict[str, dict[str, Any]] = {}
    for surface in SURFACES:
        applicable = [c for c in cases if c.surface == surface and c.outcome != "not-applicable"]
        ran = [c for c in applicable if c.outcome != "skipped"]
        skipped = [c for c in applicable if c.outcome == "skipped"]
        expected = [c for c in ran if c.expected_failure]
        bad = [c for c in ran if c.outcome in ("failed", "errored") and not c.expected_failure]
        entry: dict[str, Any] = {"applicable": len(applicable), "ran": len(ran)}
        if bad or baseline_problems[surface]:
            parts = []
            if bad:
                parts.append(f"{len(bad)} case(s) failed or errored")
            if baseline_problems[surface]:
                parts.append(f"{baseline_problems[surface]} expected-failure entry(ies) wrong")
            entry.update(verdict="fail", reason=", ".join(parts))
        elif not applicable:
            entry.update(verdict="not-run", reason="no selected vector applies")
        elif not ran:
            entry.update(verdict="not-run", reason=_most_common(c.reason for c in skipped))
        elif skipped or expected:
            parts = []
            if expected:
                parts.append(f"{len(expected)} expected failure(s)")
            if skipped:
                why = _most_common(c.reason for c in skipped)
                parts.append(f"{len(skipped)} of {len(applicable)} case(s) not run ({why})")
            entry.update(verdict="incomplete", reason="; ".join(parts))
        else:
            entry.update(verdict="pass")
        verdicts[surface] = entry
    return verdicts


def _most_common(reasons: Iterable[str]) -> str:
    counted = Counter(reasons).most_common(1)
    return counted[0][0] if counted else ""


#: The reason, and the verdict text ``FAIL (no check ran)``, of a run that checked nothing
#: (CG-CONF-1): every case was skipped or not applicable, or errored before its first check.
NO_CHECK_RAN = "no check ran"


def verdict_text(
    verdict: str,
    surfaces: dict[str, dict[str, Any]],
    selected: int,
    total: int,
    reasons: Sequence[str] = (),
) -> str:
    """The verdict in words, saying exactly what was certified: ``PASS (sdk, tool, mcp, cli)``,
    ``PASS (sdk, tool, cli; mcp not run)``, ``FAIL (mcp: 2 case(s) failed or errored)``; a run
    that fails with no failing surface says why from its ``reasons``: ``FAIL (no check ran)``."""
    if verdict == "fail":
        failing = [f"{s}: {v['reason']}" for s, v in surfaces.items() if v["verdict"] == "fail"]
        return "FAIL (" + ("; ".join(failing or reasons) or "see the reasons") + ")"
    passed = [s for s, v in surfaces.items() if v["verdict"] == "pass"]
    parts = [", ".join(passed) if passed else "no surface"]
    incomplete = [s for s, v in surfaces.items() if v["verdict"] == "incomplete"]
    not_run = [s for s, v in surfaces.items() if v["verdict"] == "not-run"]
    if incomplete:
        parts.append(", ".join(incomplete) + " incomplete")
    if not_run:
        parts.append(", ".join(not_run) + " not run")
    if selected < total:
        parts.append(f"{selected} of {total} vectors")
    return "PASS (" + "; ".join(parts) + ")"


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
    unconfirmed = [c for c in bad if c.unconfirmed]
    if unconfirmed:
        reasons.append(
            f"{len(unconfirmed)} MCP failure(s) seen on a server shared by a batch of vectors "
            "and not confirmed alone (--no-batch runs each on its own server): "
            + ", ".join(c.vector.id for c in unconfirmed[:10])
        )
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
    if summary["checks"] == 0:  # a skipped case holds no check (CG-CONF-7)
        reasons.append(NO_CHECK_RAN)
    surfaces = surface_verdicts(cases, outcome)
    total = len(suite.vectors)
    if reasons:
        verdict = "fail"
    elif all(v["verdict"] == "pass" for v in surfaces.values()) and len(run.vectors) == total:
        verdict = "pass"
    else:
        verdict = "partial"
        for surface, entry in surfaces.items():
            if entry["verdict"] != "pass":
                reasons.append(f"{surface} {entry['verdict']}: {entry['reason']}")
        if len(run.vectors) < total:
            reasons.append(f"a selection: {len(run.vectors)} of {total} vectors (-k)")
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
        "verdict": verdict,
        "verdictText": verdict_text(verdict, surfaces, len(run.vectors), total, reasons),
        "reasons": reasons,
        "selection": {
            "patterns": list(run.options.patterns),
            "surfaces": [s for s in SURFACES if s in run.options.surfaces],
            "vectors": len(run.vectors),
            "suiteVectors": total,
            "exitFirst": run.options.exit_first,
        },
        "surfaces": surfaces,
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
    if case.unconfirmed:
        data["unconfirmed"] = True
        data["reason"] = (
            "seen on a server shared by a batch of vectors, not confirmed alone: " + case.reason
        )
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
        f"**Verdict: {report['verdictText']}** - suite {suite['version']} "
        f"({suite['vectors']} vectors), contract {suite['contract']} {suite['contractVersion']}, "
        f"driver protocol {suite['driverProtocol']}, {report['durationMs'] / 1000:.1f} s",
        "",
    ]
    note = driver_self_report(impl)
    if note:
        lines += [note, ""]
    if report["reasons"]:
        lines += [f"- {reason}" for reason in report["reasons"]] + [""]
    lines += [
        "| surface | verdict | passed | failed | errored | skipped | n/a | expected failures "
        "| checks |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    verdicts = {s: _surface_label(v) for s, v in report["surfaces"].items()}
    verdicts["total"] = report["verdict"]
    for surface, counts in [*report["bySurface"].items(), ("total", report["summary"])]:
        lines.append(
            f"| {surface} | {verdicts[surface]} | {counts['passed']} | {counts['failed']} | "
            f"{counts['errored']} | {counts['skipped']} | {counts['not-applicable']} | "
            f"{counts['expectedFailures']} | {counts['checks']} |"
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


def driver_self_report(implementation: dict[str, Any]) -> str:
    """A line on what the driver says of itself in ``started``, when that is not what the
    manifest says (the report names the implementation by its manifest); else ""."""
    started = implementation.get("driver")
    told = started.get("implementation") if isinstance(started, dict) else None
    if not isinstance(told, dict):
        return ""
    keys = ("name", "version", "language")
    if all(told.get(k) == implementation.get(k) for k in keys):
        return ""
    name, version, language = (told.get(k) for k in keys)
    return (
        f"The driver reports itself as {name} {version} ({language}); this report names the "
        "implementation as its manifest does."
    )


def _surface_label(entry: dict[str, Any]) -> str:
    reason = str(entry.get("reason", "")).replace("|", "\\|")
    return str(entry["verdict"]) + (f" ({reason})" if reason else "")


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
        properties = ET.SubElement(suite, "properties")
        entry = report["surfaces"][surface]
        for name, value in (
            ("verdict", report["verdictText"]),
            ("surfaceVerdict", entry["verdict"]),
            ("surfaceReason", entry.get("reason", "")),
        ):
            if value:
                ET.SubElement(properties, "property", name=name, value=value)
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
.verdict-pass{color:#116329}.verdict-fail{color:#a40e26}.verdict-partial{color:#7d4e00}
.sv-pass{color:#116329}.sv-fail{color:#a40e26}.sv-incomplete,.sv-not-run{color:#7d4e00}
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
        f"{esc(report['verdictText'])}</strong> - suite {esc(suite['version'])}, "
        f"{suite['vectors']} vectors, contract {esc(suite['contract'])} "
        f"{esc(suite['contractVersion'])}, {report['durationMs'] / 1000:.1f} s, "
        f"{report['summary']['checks']} checks</p>",
    ]
    if report["reasons"]:
        parts.append("<ul>" + "".join(f"<li>{esc(r)}</li>" for r in report["reasons"]) + "</ul>")
    header = "".join(
        f"<th>{s}<br><span class='sv-{esc(report['surfaces'][s]['verdict'])}' "
        f"title='{esc(report['surfaces'][s].get('reason', ''), quote=True)}'>"
        f"{esc(report['surfaces'][s]['verdict'])}</span></th>"
        for s in SURFACES
    )
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
