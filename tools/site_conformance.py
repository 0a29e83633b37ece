"""The site's conformance figures, from a run of the suite in the same docs build.

The conformance page states each implementation's verdict, vector and case counts, checks and
time, and links the vectors x surfaces matrices. Committed, those went stale (a page said 203
vectors when the suite held 320). So the ``docs`` session runs the whole suite against the Python
reference and against the TypeScript implementation (when ``typescript/dist`` is built) and this
writes, untracked:

- ``docs/conformance/latest-run.md``: the two result boxes, included by ``docs/conformance.md``
  (a snippet: the strict build fails when it is missing);
- ``docs/conformance/matrix.html`` and ``docs/conformance/matrix-typescript.html``: the
  harness's matrices, standalone pages outside the theme, with the site's CJK font put first in
  their font stacks (``with_site_font``; their vector titles hold Chinese text).

Exit 1 when a run does not pass: the site never shows a verdict the suite did not give.

    python tools/site_conformance.py [--reports DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import site_font

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "conformance"
SNIPPET = DOCS / "latest-run.md"

#: (report name, manifest arguments, matrix file, title, how it was reached)
RUNS: tuple[tuple[str, list[str], str, str, str], ...] = (
    (
        "python",
        [],
        "matrix.html",
        "The Python reference",
        "the reference (the harness's default implementation)",
    ),
    (
        "typescript",
        ["-i", "typescript/conformance.json"],
        "matrix-typescript.html",
        "The TypeScript implementation",
        "`typescript/` (manifest `typescript/conformance.json`, driver "
        "`typescript/conformance/driver.ts`)",
    ),
)


#: What the site's copy of a matrix gets after the harness's stylesheet: the font's stylesheet
#: (the site's assets/, one folder up) and the harness's two font stacks with the family first,
#: as docs/stylesheets/fonts.css does for the theme's.
SITE_FONT = (
    f'<link rel=stylesheet href="../{site_font.STYLESHEET}"><style>'
    f'body{{font-family:"{site_font.FAMILY}",system-ui,sans-serif}}'
    f'.v{{font-family:"{site_font.FAMILY}",ui-monospace,monospace}}</style>'
)


def with_site_font(html: str) -> str:
    """The harness's matrix page with SITE_FONT after its stylesheet."""
    head, found, rest = html.partition("</style>")
    if not found:
        raise SystemExit("site_conformance: the harness's matrix has no </style> any more")
    return head + found + "\n" + SITE_FONT + rest


def run_suite(name: str, manifest: list[str], reports: Path) -> dict[str, Any]:
    """Run the whole suite (--strict) and return its JSON report."""
    folder = reports / name
    beside = Path(sys.executable).parent / "cg-conformance"  # the environment running this
    program = str(beside) if beside.exists() else "cg-conformance"
    argv = [program, "run", *manifest, "--strict", "--no-progress"]
    argv += ["--report-dir", str(folder)]
    subprocess.run(argv, cwd=ROOT, check=False, timeout=3600, stdout=subprocess.DEVNULL)
    written = folder / "report.json"
    if not written.is_file():
        raise SystemExit(f"site_conformance: the {name} run wrote no report ({written})")
    report: dict[str, Any] = json.loads(written.read_text(encoding="utf-8"))
    return report


def box(title: str, reached: str, report: dict[str, Any], matrix: str) -> str:
    """One admonition: the verdict and the figures of one run."""
    summary, suite = report["summary"], report["suite"]
    cases = summary["total"] - summary["not-applicable"]
    load = os.getloadavg()[0]
    kind = "success" if report["verdict"] == "pass" else "failure"
    return (
        f'!!! {kind} "{title}: {report["verdictText"]}"\n'
        f"    The whole suite {suite['version']} (contract {suite['contractVersion']}) against "
        f"{reached}, run by this site's build: `{report['verdictText']}`, "
        f"{suite['vectors']:,} vectors, {cases:,} cases on four surfaces "
        f"({summary['not-applicable']:,} not applicable, {summary['skipped']:,} skipped), "
        f"{summary['checks']:,} checks, {summary['failed']:,} failed, "
        f"{summary['errored']:,} errored, {summary['expectedFailures']:,} expected failures; "
        f"{report['durationMs'] / 1000:.0f} s on {os.cpu_count()} cores "
        f"(load average {load:.1f}). See the [vectors x surfaces matrix](conformance/{matrix}).\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=Path, help="keep the reports here (default: temporary)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cg-site-") as temporary:
        reports = args.reports or Path(temporary)
        boxes, failed = [], []
        for name, manifest, matrix, title, reached in RUNS:
            if name == "typescript" and not (ROOT / "typescript" / "dist").is_dir():
                print("site_conformance: typescript/dist is not built", file=sys.stderr)
                return 1
            report = run_suite(name, manifest, reports)
            page = (reports / name / "matrix.html").read_text(encoding="utf-8")
            (DOCS / matrix).write_text(with_site_font(page), encoding="utf-8")
            boxes.append(box(title, reached, report, matrix))
            print(f"site_conformance: {name}: {report['verdictText']}")
            if report["verdict"] != "pass":
                failed.append(name)
    header = "<!-- Written by tools/site_conformance.py in the docs build; not tracked. -->\n\n"
    SNIPPET.write_text(header + "\n".join(boxes), encoding="utf-8")
    if failed:
        print(f"site_conformance: not PASS: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
