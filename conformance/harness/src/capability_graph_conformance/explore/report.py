"""The reports of a generative run: JSON (everything), Markdown (a summary to read), JUnit (one
test per campaign and surface, one failure per finding)."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .. import SUITE_VERSION, __version__
from .._json import dumps, preview
from .engine import ExploreResult, Finding
from .oracle import ALLOWED_VARIATIONS

__all__ = ["build_report", "junit_xml", "load_known", "markdown_summary", "unexpected"]

FORMAT = "cg-conformance-explore/1"


def build_report(result: ExploreResult) -> dict[str, Any]:
    options = result.options
    return {
        "format": FORMAT,
        "harness": {"version": __version__, "suite": SUITE_VERSION},
        "seed": result.seed,
        "implementation": result.implementation,
        "against": result.against,
        "durationS": round(result.duration_s, 2),
        "options": {
            "campaigns": list(options.campaigns),
            "count": options.count,
            "timeBudgetS": options.time_budget,
            "shrinkAttempts": options.shrink_attempts,
            "cases": list(options.only),
        },
        "campaigns": [
            {
                "campaign": s.campaign,
                "cases": s.cases,
                "seconds": round(s.seconds, 2),
                "casesPerSecond": round(s.cases / s.seconds, 2) if s.seconds else None,
                "differingCases": s.differing_cases,
                "differingRate": round(s.differing_cases / s.cases, 4) if s.cases else 0,
                "surfaces": {
                    surface: {
                        "compared": n,
                        "differing": s.differing.get(surface, 0),
                        "rate": round(s.differing.get(surface, 0) / n, 4),
                    }
                    for surface, n in s.compared.items()
                },
                "errored": s.errored,
            }
            for s in result.campaigns
        ],
        "allowedVariations": [
            {
                "id": v.id,
                "requirement": v.requirement,
                "surface": v.surface,
                "allows": v.allows,
                "applied": result.variations.get(v.id, 0),
            }
            for v in ALLOWED_VARIATIONS
        ],
        "findings": [_finding(f, result.seed) for f in result.findings],
    }


def _finding(finding: Finding, seed: int) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": finding.kind,
        "signature": finding.signature,
        "campaign": finding.campaign,
        "surface": finding.surface,
        "implementation": finding.implementation,
        "occurrences": finding.occurrences,
        "case": finding.case.to_json(),
        "minimal": finding.minimal.to_json(),
        "shrinkAttempts": finding.shrink_attempts,
        "outcomes": {name: o.to_json() for name, o in finding.outcomes.items()},
        "replay": f"--seed {seed} -c {finding.campaign} --case {finding.case.index}",
    }
    if finding.vector:
        data["vector"] = finding.vector
    return data


def load_known(path: Path) -> list[str]:
    """Signatures (shell patterns) of findings known and accepted: one per line, '#' comments."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def unexpected(report: dict[str, Any], known: list[str]) -> list[dict[str, Any]]:
    """The findings that no known pattern covers."""
    return [
        f
        for f in report["findings"]
        if not any(fnmatch.fnmatchcase(f["signature"], pattern) for pattern in known)
    ]


def markdown_summary(report: dict[str, Any], known: list[str] | None = None) -> str:
    findings = report["findings"]
    differences = [f for f in findings if f["kind"] == "difference"]
    properties = [f for f in findings if f["kind"] == "property"]
    lines = [
        f"# cg-conformance explore: {report['implementation']} against {report['against']}",
        "",
        f"Seed **{report['seed']}** (replay: `cg-conformance explore --seed {report['seed']}`), "
        f"{sum(c['cases'] for c in report['campaigns'])} cases in {report['durationS']} s: "
        f"**{len(differences)}** distinct difference(s), **{len(properties)}** property "
        f"violation(s).",
        "",
        "| campaign | cases | cases/s | differing cases | per surface (differing/compared) "
        "| errored |",
        "|---|---|---|---|---|---|",
    ]
    for c in report["campaigns"]:
        per_surface = ", ".join(
            f"{s} {v['differing']}/{v['compared']}" for s, v in c["surfaces"].items()
        )
        lines.append(
            f"| {c['campaign']} | {c['cases']} | {c['casesPerSecond']} | {c['differingCases']} "
            f"({c['differingRate']:.1%}) | {per_surface} | {c['errored']} |"
        )
    lines += [
        "",
        "## Allowed variation applied",
        "",
        "| rule | requirement | applied | allows |",
        "|---|---|---|---|",
    ]
    for v in report["allowedVariations"]:
        lines.append(f"| {v['id']} | {v['requirement']} | {v['applied']} | {v['allows']} |")
    for title, group in (("Differences", differences), ("Property violations", properties)):
        lines += ["", f"## {title}", ""]
        if not group:
            lines.append("None.")
        for f in group:
            known_mark = ""
            if known is not None and any(fnmatch.fnmatchcase(f["signature"], p) for p in known):
                known_mark = " (known)"
            lines += [
                f"### {f['signature']}{known_mark}",
                "",
                f"{f['occurrences']} case(s); replay `{f['replay']}`; shrunk in "
                f"{f['shrinkAttempts']} attempt(s). Minimal input:",
                "",
                "```json",
                preview(_input(f["minimal"]), 1500),
                "```",
                "",
            ]
            for name, outcome in f["outcomes"].items():
                lines.append(
                    f"- **{name}** ({outcome['surface']}): `"
                    + preview(outcome.get("errored") or outcome["value"], 700).replace("`", "'")
                    + "`"
                )
            if f.get("vector"):
                lines.append(f"- vector: {f['vector']}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _input(case: dict[str, Any]) -> str:
    shown = {k: v for k, v in case.items() if k not in ("campaign", "index")}
    return dumps(shown)


def junit_xml(report: dict[str, Any]) -> str:
    cases = []
    for campaign in report["campaigns"]:
        for surface in campaign["surfaces"]:
            failures = [
                f
                for f in report["findings"]
                if f["campaign"] == campaign["campaign"] and f["surface"] in (surface, "all")
            ]
            body = "".join(
                f"<failure message={quoteattr(f['signature'][:300])}>"
                f"{escape(preview(_input(f['minimal']), 2000))}</failure>"
                for f in failures
            )
            cases.append(
                f'  <testcase classname="explore.{campaign["campaign"]}" name="{surface}">'
                f"{body}</testcase>"
            )
    failures_total = sum(c.count("<failure") for c in cases)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuite name="cg-conformance-explore" tests="{len(cases)}" '
        f'failures="{failures_total}">\n' + "\n".join(cases) + "\n</testsuite>\n"
    )
