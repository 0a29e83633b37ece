"""The ``cg-conformance`` command.

``run``      run the suite against an implementation (default: the Python reference)
``check``    validate the vectors, their registry and requirement coverage and the schemas
``compare``  list regressions, fixes and other differences between two JSON reports
``list``     list the vectors
``explore``  generate cases and compare two implementations on them (generative mode)

Exit status: 0 success, 1 conformance failure (or a bad suite), 2 usage error or an
unusable manifest / expected-failures list. ``run`` succeeds when its verdict is *pass* or
*partial* (nothing failed; the verdict names what was not certified); with ``--strict`` only a
*pass* (all four surfaces, the whole suite, no expected failure) succeeds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import DRIVER_PROTOCOL, SUITE_VERSION, __version__
from .baseline import Baseline, BaselineError, apply_baseline, baseline_document
from .check import check_suite, format_report
from .compare import compare_reports, load_report
from .explore.command import add_parser as add_explore_parser
from .explore.command import run_explore
from .manifest import Manifest, ManifestError
from .progress import ProgressBar
from .reports import add_report_arguments, build_report, html_matrix, junit_xml, markdown_summary
from .runner import RunOptions, run_suite, select_vectors
from .schemas import SchemaSet
from .suite import SURFACES, Suite, SuiteError

__all__ = ["main", "run"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: ``run -j``: the default is one more than the CPUs (RunOptions.jobs 0), as docs/conformance.md
#: says ("Cost"), so a slot is busy while another process starts or exits.
JOBS_HELP = "processes at a time for CLI and MCP cases (default: the number of CPUs + 1)"


def _version_text(suite: Suite | None) -> str:
    contract = f"{suite.contract} {suite.contract_version}" if suite is not None else "unknown"
    return (
        f"cg-conformance {__version__} (suite {SUITE_VERSION}, contract {contract}, "
        f"driver protocol {DRIVER_PROTOCOL})"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cg-conformance",
        description="Conformance suite of Capability Graph: run golden vectors against an "
        "implementation's SDK, Tool Adapter, MCP server and CLI.",
    )
    parser.add_argument(
        "--version", action="store_true", help="print suite, contract and driver-protocol versions"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser("run", help="run the suite (default: against the Python reference)")
    _suite_flag(run)
    run.add_argument(
        "-i",
        "--implementation",
        type=Path,
        metavar="MANIFEST",
        help="implementation manifest (default: the Python reference)",
    )
    run.add_argument(
        "-k",
        "--vector",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only vectors whose id matches (shell pattern; repeatable)",
    )
    run.add_argument(
        "-s",
        "--surface",
        action="append",
        choices=SURFACES,
        help="only these surfaces (repeatable)",
    )
    group = run.add_mutually_exclusive_group()
    group.add_argument(
        "--expected-failures",
        type=Path,
        metavar="FILE",
        help="expected-failures list (default: the manifest's)",
    )
    group.add_argument(
        "--no-expected-failures",
        action="store_true",
        help="ignore the manifest's expected-failures list",
    )
    run.add_argument(
        "--write-baseline",
        type=Path,
        metavar="FILE",
        help="write the current failures as an expected-failures list",
    )
    add_report_arguments(
        run,
        default_dir="cg-conformance-report",
        written="report.json, summary.md, junit.xml and matrix.html",
        copies={
            "json": "the JSON report",
            "junit": "the JUnit XML",
            "html": "the HTML matrix",
            "markdown": "the Markdown summary",
        },
    )
    run.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help=JOBS_HELP,
    )
    run.add_argument(
        "--no-batch",
        action="store_true",
        help="one MCP server per distinct configuration, no script batching",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    run.add_argument(
        "--strict",
        action="store_true",
        help="fail unless the verdict is pass: all four surfaces ran the whole suite and passed",
    )
    run.add_argument(
        "-x",
        "--exit-first",
        action="store_true",
        help="start no case after the first failed or errored one (the rest are skipped)",
    )
    run.add_argument(
        "--keep-workdir",
        action="store_true",
        help="keep the working folders (their path is printed)",
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds a step or process may take (default: %(default)s)",
    )

    check = commands.add_parser(
        "check", help="validate the vectors, their registry coverage and requirement coverage"
    )
    _suite_flag(check)

    compare = commands.add_parser("compare", help="regressions and fixes between two JSON reports")
    compare.add_argument("old", type=Path)
    compare.add_argument("new", type=Path)
    compare.add_argument(
        "--strict",
        action="store_true",
        help="fail on any difference (outcome, added, removed, evidence), not only regressions",
    )

    add_explore_parser(commands)

    listing = commands.add_parser("list", help="list the vectors")
    _suite_flag(listing)
    listing.add_argument("-k", "--vector", action="append", default=[], metavar="PATTERN")
    return parser


def _suite_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--suite-root",
        type=Path,
        metavar="DIR",
        help="read the suite from a repository checkout instead of the package",
    )


def _suite(args: argparse.Namespace) -> Suite:
    root = getattr(args, "suite_root", None)
    return Suite.from_repository(root) if root is not None else Suite.packaged()


def main() -> NoReturn:
    sys.exit(run(sys.argv[1:]))


def run(argv: Sequence[str]) -> int:
    parser = _parser()
    args = parser.parse_args(list(argv))
    try:
        if args.version:
            try:
                suite: Suite | None = Suite.packaged()
            except SuiteError:
                suite = None
            print(_version_text(suite))
            return EXIT_OK
        if args.command is None or args.command == "run":
            if args.command is None:
                args = parser.parse_args(["run", *argv])
            return _run(args)
        if args.command == "check":
            report = check_suite(_suite(args))
            print(format_report(report))
            return EXIT_OK if report.ok else EXIT_FAILED
        if args.command == "compare":
            comparison = compare_reports(load_report(args.old), load_report(args.new))
            print(comparison.text())
            differs = not comparison.identical if args.strict else bool(comparison.regressions)
            return EXIT_FAILED if differs else EXIT_OK
        if args.command == "explore":
            return run_explore(args)
        if args.command == "list":
            for vector in select_vectors(_suite(args).vectors, args.vector):
                print(f"{vector.id}\t{','.join(vector.surfaces)}\t{vector.title}")
            return EXIT_OK
    except (SuiteError, ManifestError, BaselineError, ValueError, OSError) as error:
        print(f"cg-conformance: {error}", file=sys.stderr)
        return EXIT_USAGE
    parser.error(f"unknown command {args.command}")


def _run(args: argparse.Namespace) -> int:
    suite = _suite(args)
    schemas = SchemaSet(suite)
    manifest_path = args.implementation or suite.reference_manifest
    manifest = Manifest.load(manifest_path, schemas)
    baseline = Baseline()
    if args.expected_failures is not None:
        baseline = Baseline.load(args.expected_failures, schemas)
    elif (
        not args.no_expected_failures
        and manifest.expected_failures is not None
        and manifest.expected_failures.exists()
    ):
        baseline = Baseline.load(manifest.expected_failures, schemas)
    selected = select_vectors(suite.vectors, args.vector)
    if not selected:
        print("cg-conformance: no vector matches the selection", file=sys.stderr)
        return EXIT_USAGE
    options = RunOptions(
        surfaces=tuple(args.surface or SURFACES),
        patterns=tuple(args.vector),
        jobs=args.jobs,
        batch=not args.no_batch,
        keep_workdir=args.keep_workdir,
        step_timeout=args.timeout,
        process_timeout=args.timeout,
        exit_first=args.exit_first,
    )
    bar = ProgressBar(len(selected) * len(SURFACES), enabled=not args.no_progress)
    result = run_suite(suite, schemas, manifest, options, bar)
    bar.close()
    outcome = apply_baseline(
        result.cases, baseline, {v.id for v in suite.vectors}, {v.id for v in selected}
    )
    report = build_report(result, suite, baseline, outcome)
    problems = schemas.errors("conformance/report.schema.json", report)
    if problems:  # a harness defect; the report is still written for inspection
        print(
            "cg-conformance: the report does not match its schema: " + "; ".join(problems),
            file=sys.stderr,
        )
    _write_reports(report, args)
    if args.write_baseline is not None:
        document = baseline_document(report["implementation"]["name"], result.cases)
        _write(args.write_baseline, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {len(document['entries'])} expected failure(s) to {args.write_baseline}")
    if result.workdir:
        print(f"working folders kept in {result.workdir}")
    print(markdown_summary(report).split("\n## ")[0].rstrip())
    print(f"reports: {args.report_dir}{os.sep}(report.json, summary.md, junit.xml, matrix.html)")
    accepted = ("pass",) if args.strict else ("pass", "partial")
    return EXIT_OK if report["verdict"] in accepted and not problems else EXIT_FAILED


def _write_reports(report: dict[str, Any], args: argparse.Namespace) -> None:
    texts = {
        "report.json": json.dumps(report, indent=2, ensure_ascii=False) + "\n",
        "summary.md": markdown_summary(report),
        "junit.xml": junit_xml(report),
        "matrix.html": html_matrix(report),
    }
    for name, text in texts.items():
        _write(args.report_dir / name, text)
    for flag, name in (
        ("json", "report.json"),
        ("markdown", "summary.md"),
        ("junit", "junit.xml"),
        ("html", "matrix.html"),
    ):
        path = getattr(args, flag)
        if path is not None:
            _write(path, texts[name])


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
