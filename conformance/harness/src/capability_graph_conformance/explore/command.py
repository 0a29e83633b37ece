"""``cg-conformance explore``: its options and what it prints and writes."""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from .._json import escape_lone_surrogates
from ..manifest import Manifest
from ..reports import add_report_arguments
from ..schemas import SchemaSet
from ..suite import SURFACES, Suite
from .engine import ExploreOptions, explore
from .report import build_report, junit_xml, load_known, markdown_summary, unexpected
from .strategies import CAMPAIGNS
from .vectors import vector_for

__all__ = ["add_parser", "run_explore"]


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "explore",
        help="generate cases and compare two implementations on them (differential and "
        "property oracles)",
        description="Generate cases from the schemas, the operation table and the CLI grammar, "
        "run them on the implementation under test and on another one (default: the Python "
        "reference), and report the differences and the broken properties, each shrunk to a "
        "minimal input. Exit 0 when nothing was found (or only what --expect-differences "
        "lists), 1 otherwise, 2 on a usage error.",
    )
    parser.add_argument(
        "-i",
        "--implementation",
        type=Path,
        metavar="MANIFEST",
        help="the implementation under test (default: the Python reference)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="MANIFEST",
        help="the implementation to compare with (default: the Python reference)",
    )
    parser.add_argument(
        "-c",
        "--campaign",
        action="append",
        choices=sorted(CAMPAIGNS),
        help="only these campaigns (repeatable; default: all)",
    )
    parser.add_argument(
        "-s",
        "--surface",
        action="append",
        choices=SURFACES,
        help="only these surfaces (repeatable; default: each campaign's)",
    )
    parser.add_argument("--seed", type=int, help="the run's seed (default: a random one, printed)")
    parser.add_argument(
        "--count",
        type=int,
        default=200,
        metavar="N",
        help="cases per campaign (default: %(default)s)",
    )
    parser.add_argument(
        "--time-budget",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="time for the whole run, shared by the campaigns (default: %(default)s)",
    )
    parser.add_argument(
        "--case",
        type=int,
        action="append",
        default=[],
        metavar="INDEX",
        help="replay only this case index of each campaign (repeatable)",
    )
    parser.add_argument(
        "--shrink-attempts",
        type=int,
        default=120,
        metavar="N",
        help="runs spent shrinking each new find (default: %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds one answer may take (default: %(default)s)",
    )
    parser.add_argument(
        "--sample-every",
        type=int,
        metavar="N",
        help="run the surfaces that a campaign samples (those starting a process per "
        "configuration: MCP, the CLI) on every N-th case instead of the campaign's own interval",
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=2, help="CLI cases at a time (default: %(default)s)"
    )
    parser.add_argument(
        "--write-vectors",
        type=Path,
        metavar="DIR",
        help="write each difference's minimal input as a vector under "
        "DIR/<area>/ (the reference's answer is the expectation)",
    )
    parser.add_argument(
        "--expect-differences",
        type=Path,
        metavar="FILE",
        help="signatures (shell patterns, one a line) of known finds that do not fail the run",
    )
    add_report_arguments(
        parser,
        default_dir="cg-conformance-explore",
        written="report.json, summary.md and junit.xml",
        copies={"json": "the JSON", "markdown": "the Markdown summary", "junit": "JUnit XML"},
    )
    parser.add_argument(
        "--suite-root",
        type=Path,
        metavar="DIR",
        help="read the suite from a repository checkout instead of the package",
    )
    return parser


def run_explore(args: argparse.Namespace) -> int:
    suite = Suite.from_repository(args.suite_root) if args.suite_root else Suite.packaged()
    schemas = SchemaSet(suite)
    subject = Manifest.load(args.implementation or suite.reference_manifest, schemas)
    against = Manifest.load(args.against or suite.reference_manifest, schemas)
    known = load_known(args.expect_differences) if args.expect_differences else []
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**9)
    if args.count < 1 or args.time_budget <= 0:
        raise ValueError("--count and --time-budget must be positive")
    if args.sample_every is not None and args.sample_every < 1:
        raise ValueError("--sample-every must be positive")
    options = ExploreOptions(
        campaigns=tuple(args.campaign or CAMPAIGNS),
        seed=seed,
        count=args.count,
        time_budget=args.time_budget,
        timeout=args.timeout,
        shrink_attempts=max(0, args.shrink_attempts),
        jobs=max(1, args.jobs),
        only=tuple(args.case),
        surfaces=tuple(args.surface or ()),
        sample_every=args.sample_every,
    )
    print(
        f"cg-conformance explore: {subject.name} against {against.name}, seed {seed}",
        file=sys.stderr,
    )
    result = explore(suite, schemas, subject, against, options)
    if args.write_vectors is not None:
        for finding in result.findings:
            if finding.kind != "difference":
                continue
            reference = finding.outcomes.get(against.name)
            if reference is None:
                continue
            made = vector_for(finding.minimal, finding.surface, reference, finding.signature, seed)
            if isinstance(made, str):
                finding.vector = f"not written: {made}"
                continue
            area, vector = made
            path = args.write_vectors / area / (vector["id"].split(".", 2)[2] + ".json")
            _write(path, json.dumps(vector, indent=2, ensure_ascii=False) + "\n")
            problems = schemas.errors("conformance/vector.schema.json", vector)
            finding.vector = str(path) + (
                f" (does not match vector.schema.json: {'; '.join(problems)})" if problems else ""
            )
    report = build_report(result)
    summary = markdown_summary(report, known if args.expect_differences else None)
    texts = {
        "report.json": json.dumps(report, indent=2, ensure_ascii=False) + "\n",
        "summary.md": summary,
        "junit.xml": junit_xml(report),
    }
    for name, text in texts.items():
        _write(args.report_dir / name, text)
    for flag, name in (("json", "report.json"), ("markdown", "summary.md"), ("junit", "junit.xml")):
        path = getattr(args, flag)
        if path is not None:
            _write(path, texts[name])
    print(summary.split("\n## ")[0].rstrip())
    for finding in report["findings"]:
        print(f"- [{finding['kind']}] {finding['signature']}")
    left = unexpected(report, known)
    if known:
        print(f"{len(report['findings']) - len(left)} known, {len(left)} unexpected find(s)")
    print(f"reports: {args.report_dir}/(report.json, summary.md, junit.xml)")
    return 1 if left else 0


def _write(path: Path, text: str) -> None:
    # Reports and vectors are UTF-8 files: a generated lone surrogate is written as its escape.
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(escape_lone_surrogates(text), encoding="utf-8")
