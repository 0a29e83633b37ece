#!/usr/bin/env python3
"""Mutation testing of the Python reference, with the conformance suite as the oracle.

From ``python/capability-graph/`` (the nox session runs it from the repository's root)::

    python scripts/mutation.py [MODULE ...] [--sample N --seed S] [--confirm] [--work DIR]
                             [--timeout S] [--fresh] [--summary]

For each module of ``python/capability-graph/src/capability_graph`` (default: every module in
``ORACLES``), cosmic-ray (pinned in the ``mutation`` nox session) mutates the source in place, one
mutant at a time, and runs ``cg-conformance run`` on this checkout. A mutant is *killed* when the
suite fails (or does not finish within the timeout) and *survives* when the suite still passes.

The oracle of a module is the part of the suite that can see it (``ORACLES``): the surfaces that
reach the module and, for the modules only a few areas exercise, the vectors of those areas
(``-k`` patterns). ``--exit-first`` stops it at the first failing case, so a killed mutant costs a
fraction of a run. A narrow oracle could hide a kill, so ``--confirm`` runs every survivor of the
narrow oracle once more against the whole suite on all four surfaces, and records it as killed
when that fails (the output says "killed by the whole suite").

Each mutant costs a suite run, so ``--sample N --seed S`` keeps a reproducible random sample of
N mutants per module (the same source, operators, N and S give the same mutants); the others are
recorded as skipped, as the filtered operators are.

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
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "python" / "capability-graph" / "src" / "capability_graph"
ALL_SURFACES = ("sdk", "tool", "mcp", "cli")
CORE = (("sdk", "tool"), ())  # every vector, on the SDK and the Tool Adapter
CLI = (("sdk", "cli"), ())  # every vector, on the SDK and the CLI
#: Maintenance on the command line: doctor, init and mcp install/uninstall are CLI vectors of the
#: ``cli`` area (``cg.cli.*doctor*``, ``cg.cli.*init-*``, ``cg.cli.*mcp-*``) and the ``seed``
#: area; no other vector runs their code (the graph commands go through ``cli/graph.py``).
DOCTOR = (("cli",), ("cg.cli.*doctor*", "cg.seed.*"))
INSTALL = (("cli",), ("cg.cli.*mcp-*",))
#: module -> (surfaces, vector-id patterns; none: every vector). The SDK is in every oracle that
#: judges a core module: every surface projects the core, and the cross-surface comparison needs
#: two surfaces. Why each selection cannot hide a kill is said beside it; ``--confirm`` checks it.
ORACLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "_core/operations": CORE,  # the operation handlers (cosmic-ray mutates each module)
    "_core/snapshot.py": CORE,
    "_core/config.py": CORE,
    "_core/cursor.py": CORE,
    "_surfaces/tools.py": CORE,
    "_surfaces/mcp.py": (("sdk", "mcp"), ()),
    # Bodies are checked when a graph loads and read by read_document and resolve (media types);
    # every such vector runs on the SDK. doctor reads bodies too, but through the same function.
    "_core/documents.py": (
        ("sdk", "tool"),
        ("cg.document.*", "cg.load.*", "cg.budget.*", "cg.query.*"),
    ),
    # Creating and replacing files: only init and mcp install/uninstall write any.
    "_core/files.py": (("cli",), ("cg.cli.*init-*", "cg.cli.*mcp-*")),
    # The lexical ranking is reached only by a match whose configuration names it; the outcome
    # vectors are those (the other model vectors use the scripted executor).
    "_core/executors/lexical.py": (("sdk", "tool"), ("cg.outcome.*", "cg.model.*", "cg.config.*")),
    # The configuration vectors reach the executor's option checks; the cg.model.openai-* vectors
    # call it against the harness's scripted endpoint (its request, every row of its table).
    "_core/executors/openai.py": (("sdk", "tool"), ("cg.config.*", "cg.model.*")),
    # mcp install explains a graph that does not open with the doctor's configuration facts.
    "_maintenance/causes.py": (("cli",), ("cg.cli.*doctor*", "cg.seed.*", "cg.cli.*mcp-install*")),
    "_maintenance/diagnose.py": DOCTOR,
    "_surfaces/cli/doctor.py": DOCTOR,
    "_maintenance/mcp_install.py": INSTALL,
    "_maintenance/client_files": INSTALL,  # the package of the two editors
    "_surfaces/cli/mcp_install.py": INSTALL,
}
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


def oracle_command(module: str, timeout: float, *, whole: bool = False) -> str:
    """The test command cosmic-ray runs for each mutant of ``module`` (``whole``: the whole suite
    on every surface, the check of a survivor by ``--confirm``)."""
    if whole:
        surfaces, patterns = ALL_SURFACES, ()
    elif module in ORACLES:
        surfaces, patterns = ORACLES[module]
    else:
        surfaces, patterns = CLI if module.startswith("cli/") else CORE
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
    for pattern in patterns:
        argv += ["-k", pattern]
    return shlex.join(argv)


def config_text(module: str, step_timeout: float, mutant_timeout: float) -> str:
    excluded = ", ".join(f"'{pattern}'" for pattern in EXCLUDED_OPERATORS)
    return (
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(str(PACKAGE / module))}\n"
        f"timeout = {mutant_timeout:g}\n"
        "excluded-modules = []\n"
        # a TOML basic string: the command quotes the vector patterns
        f"test-command = {json.dumps(oracle_command(module, step_timeout))}\n"
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


def sample(session: Path, size: int, seed: int) -> None:
    """Keep ``size`` of the session's pending mutants, chosen by ``seed``; skip the others.

    The pending mutants are put in source order (position, operator, occurrence) before the
    draw, so the sample depends on the source and the seed, not on cosmic-ray's random job ids.
    """
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(session), WorkDB.Mode.open) as db:
        pending = sorted(
            db.pending_work_items,
            key=lambda item: [
                (str(m.module_path), m.start_pos, m.end_pos, m.operator_name, m.occurrence)
                for m in item.mutations
            ],
        )
        if len(pending) <= size:
            return
        kept = {item.job_id for item in random.Random(seed).sample(pending, size)}
        for item in pending:
            if item.job_id not in kept:
                db.set_result(
                    item.job_id,
                    WorkResult(
                        worker_outcome=WorkerOutcome.SKIPPED,
                        output=f"not in the sample (--sample {size} --seed {seed})",
                    ),
                )


def confirm(module: str, session: Path, step_timeout: float, mutant_timeout: float) -> None:
    """Run every survivor once more against the whole suite; a failure is recorded as a kill."""
    from cosmic_ray.mutating import use_mutation
    from cosmic_ray.plugins import get_operator
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    env = _environment()
    whole = shlex.split(oracle_command(module, step_timeout, whole=True))
    with use_db(str(session), WorkDB.Mode.open) as db:
        survivors = [
            (item, result)
            for item, result in db.completed_work_items
            if result.worker_outcome == WorkerOutcome.NORMAL
            and result.test_outcome == TestOutcome.SURVIVED
            and "killed by the whole suite" not in (result.output or "")
            and "survived the whole suite" not in (result.output or "")
        ]
        for item, result in survivors:
            (mutation,) = item.mutations
            operator = get_operator(mutation.operator_name)(**(mutation.operator_args or {}))
            with use_mutation(mutation.module_path, operator, mutation.occurrence):
                try:
                    run = _run(whole, env, capture_output=True, timeout=mutant_timeout * 5)
                    failed = run.returncode != 0
                except subprocess.TimeoutExpired:
                    failed = True
            verdict = "killed by the whole suite" if failed else "survived the whole suite"
            print(f"  confirm {item.job_id} {module}:{mutation.start_pos[0]}: {verdict}")
            db.set_result(
                item.job_id,
                WorkResult(
                    worker_outcome=WorkerOutcome.NORMAL,
                    test_outcome=TestOutcome.KILLED if failed else TestOutcome.SURVIVED,
                    output=f"{verdict}\n{result.output or ''}",
                    diff=result.diff,
                ),
            )


def mutate(
    module: str,
    work: Path,
    step_timeout: float,
    mutant_timeout: float,
    fresh: bool,
    sample_size: int | None,
    seed: int,
    confirm_survivors: bool,
) -> int:
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
        if sample_size is not None:
            sample(session, sample_size, seed)
    started = time.monotonic()
    _run([_tool("cosmic-ray"), "exec", str(config), str(session)], env)
    elapsed = time.monotonic() - started
    if confirm_survivors:
        confirm(module, session, step_timeout, mutant_timeout)
    summary(module, session, elapsed)
    return 0


def summary(module: str, session: Path, elapsed: float | None = None) -> None:
    """cosmic-ray's own figures for the module, then every surviving mutant with its diff
    (``elapsed``: the seconds this run's ``cosmic-ray exec`` took, for the time per mutant)."""
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
        # cosmic-ray records a mutant that outlived its timeout as killed, with output "timeout"
        timeouts = [r for _, r in ran if r.output == "timeout"]
        confirmed = [r for _, r in ran if "killed by the whole suite" in (r.output or "")]
        killed = len(ran) - len(survivors)
        score = 100.0 * killed / len(ran) if ran else 0.0
        print(
            f"mutants run: {len(ran)}, killed: {killed} (timeout: {len(timeouts)}, "
            f"by the whole suite: {len(confirmed)}), survived: {len(survivors)}"
        )
        print(f"mutation score: {score:.1f}%")
        if elapsed is not None and ran:
            print(f"this run: {elapsed:.0f} s ({elapsed / len(ran):.1f} s per mutant run)")
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
    parser.add_argument(
        "--sample", type=int, metavar="N", help="run a random sample of N mutants per module"
    )
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default: 0)")
    parser.add_argument(
        "--confirm",
        action="store_true",
        help="run each survivor against the whole suite on all four surfaces",
    )
    args = parser.parse_args(argv)
    modules = args.modules or list(ORACLES)
    unknown = [m for m in modules if not (PACKAGE / m).exists() or m.startswith("_generated")]
    if unknown:
        parser.error(f"not a module of the package: {', '.join(unknown)}")
    args.work.mkdir(parents=True, exist_ok=True)
    status = 0
    for module in modules:
        if args.summary:
            summary(module, args.work / f"{_file_stem(module)}.sqlite")
        else:
            status |= mutate(
                module,
                args.work,
                args.step_timeout,
                args.timeout,
                args.fresh,
                args.sample,
                args.seed,
                args.confirm,
            )
    return status


if __name__ == "__main__":
    sys.exit(main())
