#!/usr/bin/env python3
"""Mutation testing of the Python reference, with the conformance suite as the oracle.

    python tools/mutation.py [MODULE ...] [--work DIR] [--timeout S] [--fresh]

For each module of ``python/capability-graph/src/capability_graph`` (default: the core modules
most worth it and the two surfaces they feed), cosmic-ray (pinned in the ``mutation`` nox
session) mutates the source in place, one mutant at a time, and runs ``cg-conformance run`` on
this checkout. A mutant is *killed* when the suite fails (or does not finish within the timeout)
and *survives* when the suite still passes. The oracle runs the surfaces that can see the module:
the SDK and Tool Adapter for the core, the SDK plus the surface itself for ``_mcp.py`` and the
modules of the CLI package (``cli/graph.py`` and the like); ``--exit-first`` stops it at the
first failing case, so a killed mutant costs a fraction of a full run.

Operators: cosmic-ray's core set minus the arithmetic and bitwise cross-replacements (``a + b`` to
``a << b`` and so on; the reference does almost no arithmetic, and those mutants are either
trivially killed or equivalent), the comparison replacements that only swap one ordering for an
unrelated one, and the variable replacer/inserter. The list is ``EXCLUDED_OPERATORS``; the report
states the figures cosmic-ray itself prints (``cr-report``, ``cr-rate``).

The sessions (``<work>/<module>.sqlite``) are resumable: run again to finish pending mutants,
``--fresh`` to start over. ``docs/conformance/mutation.md`` records the figures and classifies
every survivor.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "capability-graph" / "src" / "capability_graph"
DEFAULT_MODULES = (
    "_operations",  # the package of the operation handlers (cosmic-ray mutates each module)
    "_snapshot.py",
    "_config.py",
    "_cursor.py",
    "_tools.py",
    "_mcp.py",
)
#: The surfaces whose cases can observe a mutant of the module (the SDK is always there: every
#: surface projects the core, and the cross-surface comparison needs two surfaces).
ORACLE_SURFACES = {
    "_mcp.py": ("sdk", "mcp"),
}
CLI_SURFACES = ("sdk", "cli")  # every module of the CLI package, ``cli/``
DEFAULT_SURFACES = ("sdk", "tool")
EXCLUDED_OPERATORS = (
    # arithmetic and bitwise cross-replacements, except the sign and scale swaps
    r"core/ReplaceBinaryOperator_(?!Add_Sub$|Sub_Add$|Mul_Div$|Div_Mul$|FloorDiv_Mul$|Mod_FloorDiv$)",
    # comparisons: keep negation, boundary and identity swaps
    r"core/ReplaceComparisonOperator_(?!Eq_NotEq$|NotEq_Eq$|Lt_LtE$|LtE_Lt$|Gt_GtE$|GtE_Gt$"
    r"|Lt_GtE$|GtE_Lt$|Gt_LtE$|LtE_Gt$|Is_IsNot$|IsNot_Is$)",
    r"core/ReplaceUnaryOperator_(?!Delete_Not$|USub_UAdd$)",
    r"core/VariableReplacer",
    r"core/VariableInserter",
)


def oracle_command(module: str, timeout: float) -> str:
    """The test command cosmic-ray runs for each mutant of ``module``."""
    if module.startswith("cli/"):
        surfaces = CLI_SURFACES
    else:
        surfaces = ORACLE_SURFACES.get(module, DEFAULT_SURFACES)
    report_dir = Path(tempfile.gettempdir()) / f"cg-mutation-report-{os.getpid()}"
    argv = [
        sys.executable,
        "-m",
        "capability_graph_conformance",
        "run",
        "--suite-root",
        str(ROOT),
        "--no-progress",
        "--no-expected-failures",
        "--exit-first",
        "--timeout",
        f"{timeout:g}",
        "--report-dir",
        str(report_dir),
    ]
    for surface in surfaces:
        argv += ["-s", surface]
    return shlex.join(argv)


def config_text(module: str, step_timeout: float, mutant_timeout: float) -> str:
    excluded = ", ".join(f"'{pattern}'" for pattern in EXCLUDED_OPERATORS)
    return (
        "[cosmic-ray]\n"
        f"module-path = '{PACKAGE / module}'\n"
        f"timeout = {mutant_timeout:g}\n"
        "excluded-modules = []\n"
        f"test-command = '{oracle_command(module, step_timeout)}'\n"
        "\n[cosmic-ray.distributor]\nname = 'local'\n"
        f"\n[cosmic-ray.filters.operators-filter]\nexclude-operators = [{excluded}]\n"
    )


def _environment() -> dict[str, str]:
    # This checkout's sources win over whatever is installed, so the oracle sees the mutant.
    paths = [
        ROOT / "python" / "capability-graph" / "src",
        ROOT / "python" / "flowcast" / "src",
        ROOT / "conformance" / "harness" / "src",
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    env.pop("CAPABILITY_GRAPH_CONFIG", None)
    return env


def _file_stem(module: str) -> str:
    """The name of a module's session files: ``cli/graph.py`` is ``cli.graph.py``."""
    return module.replace("/", ".")


def _tool(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def _run(
    argv: list[str], env: dict[str, str], **kwargs: object
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, text=True, check=False, **kwargs)  # type: ignore[call-overload]


def mutate(module: str, work: Path, step_timeout: float, mutant_timeout: float, fresh: bool) -> int:
    env = _environment()
    config = work / f"{_file_stem(module)}.toml"
    session = work / f"{_file_stem(module)}.sqlite"
    config.write_text(config_text(module, step_timeout, mutant_timeout), encoding="utf-8")
    if fresh and session.exists():
        session.unlink()
    if not session.exists():
        baseline = _run(shlex.split(oracle_command(module, step_timeout)), env, capture_output=True)
        if baseline.returncode != 0:
            print(f"{module}: the unmutated reference fails the oracle; not mutating")
            print(baseline.stdout[-2000:], baseline.stderr[-2000:])
            return 1
        _run([_tool("cosmic-ray"), "init", str(config), str(session)], env)
        _run([_tool("cr-filter-operators"), str(session), str(config)], env)
        _run([_tool("cr-filter-pragma"), str(session)], env)
    _run([_tool("cosmic-ray"), "exec", str(config), str(session)], env)
    summary(module, session)
    return 0


def summary(module: str, session: Path) -> None:
    """cosmic-ray's own figures for the module, then every surviving mutant with its diff."""
    env = _environment()
    report = _run([_tool("cr-report"), str(session)], env, capture_output=True)
    lines = report.stdout.splitlines()
    totals = [line for line in lines if line.startswith(("total jobs", "complete", "surviving"))]
    rate = _run([_tool("cr-rate"), str(session)], env, capture_output=True).stdout.strip()
    print(f"\n== {module}")
    print("\n".join(totals))
    print(f"survival rate (cr-rate): {rate}%")
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    with use_db(str(session), WorkDB.Mode.open) as db:
        ran = [
            (item, result)
            for item, result in db.completed_work_items
            if result.worker_outcome != WorkerOutcome.SKIPPED
        ]
        survivors = [(i, r) for i, r in ran if r.test_outcome == TestOutcome.SURVIVED]
        killed = len(ran) - len(survivors)
        score = 100.0 * killed / len(ran) if ran else 0.0
        print(f"mutants run: {len(ran)}, killed: {killed}, survived: {len(survivors)}")
        print(f"mutation score: {score:.1f}%")
        for item, result in survivors:
            for mutation in item.mutations:
                line = mutation.start_pos[0]
                print(f"  SURVIVED {item.job_id} {module}:{line} {mutation.operator_name}")
            for diff_line in (result.diff or "").splitlines():
                if diff_line.startswith(("+", "-")) and not diff_line.startswith(("+++", "---")):
                    print(f"      {diff_line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE", help="file names in the package")
    parser.add_argument("--work", type=Path, default=ROOT / ".mutation", help="session folder")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant")
    parser.add_argument("--step-timeout", type=float, default=20.0, help="the oracle's --timeout")
    parser.add_argument("--fresh", action="store_true", help="discard previous sessions")
    parser.add_argument("--summary", action="store_true", help="only print the sessions' figures")
    args = parser.parse_args(argv)
    modules = args.modules or list(DEFAULT_MODULES)
    unknown = [m for m in modules if not (PACKAGE / m).is_file() or m.startswith("_generated")]
    if unknown:
        parser.error(f"not a module of the package: {', '.join(unknown)}")
    args.work.mkdir(parents=True, exist_ok=True)
    status = 0
    for module in modules:
        if args.summary:
            summary(module, args.work / f"{_file_stem(module)}.sqlite")
        else:
            status |= mutate(module, args.work, args.step_timeout, args.timeout, args.fresh)
    return status


if __name__ == "__main__":
    sys.exit(main())
