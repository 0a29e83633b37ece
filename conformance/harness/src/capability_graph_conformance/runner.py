"""Running the suite: every selected vector on every surface, concurrently where it is safe.

This module plans the cases and runs the surfaces side by side; each surface has a module of its
own, read top to bottom:

* :mod:`.run_driver`: SDK and Tool Adapter cases, one after the other through one driver process.
* :mod:`.run_cli`: CLI cases, as subprocesses, a few at a time.
* :mod:`.run_mcp`: MCP cases, in groups that share one server (batched where only a one-step
  script differs, failures confirmed on a dedicated server).
* :mod:`.session`: what they share (options, working folders, the scripted endpoint, the slots
  that bound how many processes run at once, how a case finishes).

A case that crashes (a driver that dies, a server that hangs, a timeout) is reported as errored
with context and never stops the run. A selection (``-k``, ``-s``, ``-x``) runs only what it
names; the others are skipped with the reason (CG-CONF-2).
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cases import CaseResult, cross_check
from .endpoint import Endpoint
from .manifest import Manifest
from .run_cli import run_cli_case
from .run_driver import run_driver_cases
from .run_mcp import mcp_groups
from .schemas import SchemaSet
from .session import MAX_CONFIRMATIONS, Progress, RunOptions, RunSession
from .suite import SURFACES, Suite, Vector
from .workspace import Workspace

__all__ = ["MAX_CONFIRMATIONS", "RunOptions", "RunResult", "run_suite", "select_vectors"]


@dataclass
class RunResult:
    cases: list[CaseResult]
    implementation: dict[str, Any]
    started_at: float
    duration_s: float
    vectors: list[Vector] = field(default_factory=list)
    workdir: str | None = None
    options: RunOptions = field(default_factory=RunOptions)


def select_vectors(vectors: Sequence[Vector], patterns: Sequence[str]) -> list[Vector]:
    """The vectors whose id matches one of ``patterns`` (shell-style; all when none)."""
    if not patterns:
        return list(vectors)
    return [v for v in vectors if any(fnmatch.fnmatchcase(v.id, p) for p in patterns)]


def run_suite(
    suite: Suite,
    schemas: SchemaSet,
    manifest: Manifest,
    options: RunOptions,
    progress: Progress | None = None,
) -> RunResult:
    vectors = select_vectors(suite.vectors, options.patterns)
    session = RunSession(suite, schemas, manifest, options, vectors)
    if progress is not None:
        session.progress = progress
    return asyncio.run(_run(session))


def _plan(
    session: RunSession, cases: dict[tuple[str, str], CaseResult]
) -> tuple[list[CaseResult], list[CaseResult], list[CaseResult]]:
    """Every (vector, surface) case, in ``cases``; the runnable ones by surface module."""
    driver_cases, cli_cases, mcp_cases = [], [], []
    commands = {
        "sdk": session.manifest.driver,
        "tool": session.manifest.driver,
        "mcp": session.manifest.mcp,
        "cli": session.manifest.cli,
    }
    for vector in session.vectors:
        for surface in SURFACES:
            case = CaseResult(vector, surface)
            cases[case.key] = case
            if surface not in vector.surfaces:
                case.outcome = "not-applicable"
                case.reason = "the vector cannot be expressed on this surface"
            elif surface not in session.options.surfaces:
                case.skip("surface not selected")
            elif commands[surface] is None:
                what = "driver" if surface in ("sdk", "tool") else surface.upper()
                case.skip(f"the manifest has no {what} command")
            elif surface in ("sdk", "tool"):
                driver_cases.append(case)
            elif surface == "cli":
                cli_cases.append(case)
            else:
                mcp_cases.append(case)
    return driver_cases, cli_cases, mcp_cases


async def _run(session: RunSession) -> RunResult:
    started = time.time()
    clock = time.monotonic()
    cases: dict[tuple[str, str], CaseResult] = {}
    driver_cases, cli_cases, mcp_cases = _plan(session, cases)
    for case in cases.values():
        if case.outcome in ("not-applicable", "skipped"):
            session.progress(case)
    keep = session.options.keep_workdir
    root = Path(tempfile.mkdtemp(prefix="cg-conformance-"))
    if any("endpoint" in vector.data for vector in session.vectors):
        session.endpoint = Endpoint()
        session.endpoint.start()
    try:
        session.workspace = Workspace(session.suite, root, session.endpoint)
        tasks = [asyncio.create_task(run_driver_cases(session, driver_cases))]
        tasks += [asyncio.create_task(g) for g in mcp_groups(session, mcp_cases)]
        tasks += [asyncio.create_task(run_cli_case(session, c)) for c in cli_cases]
        await asyncio.gather(*tasks)
    finally:
        if session.endpoint is not None:
            session.endpoint.close()
        if not keep:
            _remove_tree(root)
    by_vector: dict[str, list[CaseResult]] = {}
    for case in cases.values():
        by_vector.setdefault(case.vector.id, []).append(case)
    for group in by_vector.values():
        cross_check(group)
        for case in group:
            case.finish()
    ordered = [cases[(v.id, s)] for v in session.vectors for s in SURFACES]
    return RunResult(
        cases=ordered,
        implementation=session.implementation,
        started_at=started,
        duration_s=time.monotonic() - clock,
        vectors=session.vectors,
        workdir=str(root) if keep else None,
        options=session.options,
    )


def _remove_tree(root: Path) -> None:
    import shutil

    with contextlib.suppress(OSError):
        shutil.rmtree(root)
