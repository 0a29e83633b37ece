"""The state one run shares between its surfaces (:mod:`.runner` plans the cases and runs the
surface modules, :mod:`.run_driver`, :mod:`.run_cli` and :mod:`.run_mcp`, which run them).

A :class:`RunSession` holds the options, the manifest, the working folders, the scripted endpoint
and the slots that bound how many processes run at once; it finishes every case the same way
(:meth:`RunSession.done`: the endpoint's findings, --exit-first, progress) and never lets a harness
defect stop the run (:meth:`RunSession.guarded`: the case is errored with context).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._json import canonical
from .cases import CaseResult
from .endpoint import Endpoint
from .manifest import Manifest
from .schemas import SchemaSet
from .suite import SURFACES, Suite, Vector
from .workspace import Workdir, Workspace, endpoint_key

__all__ = ["MAX_CONFIRMATIONS", "Progress", "RunOptions", "RunSession", "tool_list_problems"]

#: How many failing cases of one MCP batch are confirmed on dedicated servers.
MAX_CONFIRMATIONS = 8

Progress = Callable[[CaseResult], None]


@dataclass
class RunOptions:
    surfaces: Sequence[str] = SURFACES
    patterns: Sequence[str] = ()
    jobs: int = 0  # 0: the number of CPUs + 1 (cg-conformance run -j)
    batch: bool = True
    keep_workdir: bool = False
    step_timeout: float = 60.0
    process_timeout: float = 60.0
    #: Stop starting cases after the first failed or errored one (the rest are skipped).
    exit_first: bool = False
    #: Failing cases of one MCP batch re-run alone; the others are reported as not confirmed.
    max_confirmations: int = MAX_CONFIRMATIONS


def _no_progress(_case: CaseResult) -> None:
    pass


@dataclass
class RunSession:
    suite: Suite
    schemas: SchemaSet
    manifest: Manifest
    options: RunOptions
    vectors: list[Vector]
    progress: Progress = _no_progress
    #: What the report names: the manifest's name, language and version, always; once a driver
    #: has started, ``driver`` holds its ``started`` message (its self-report).
    implementation: dict[str, Any] = field(init=False)
    slots: asyncio.Semaphore = field(init=False)
    stopped: bool = field(default=False, init=False)  # --exit-first: a case failed, start no other
    #: The scripted endpoint, started when a selected vector has one.
    endpoint: Endpoint | None = field(default=None, init=False)
    workspace: Workspace = field(init=False)  # set by the runner once the working root exists

    def __post_init__(self) -> None:
        manifest = self.manifest
        self.implementation = {
            "name": manifest.name,
            "language": manifest.language,
            "version": manifest.version,
        }
        jobs = self.options.jobs or (os.cpu_count() or 2) + 1
        self.slots = asyncio.Semaphore(max(1, jobs))

    async def guarded(
        self, case: CaseResult, body: Callable[[RunSession, CaseResult], Awaitable[None]]
    ) -> None:
        """Run ``body`` on ``case`` in a slot, unless --exit-first stopped the run; a harness
        defect errors the case with context and never stops the run."""
        async with self.slots:
            if self.stop_here(case):
                return
            began = time.monotonic()
            try:
                await body(self, case)
            except Exception as error:  # noqa: BLE001 -- a harness defect must not stop the run
                case.error(f"harness error: {type(error).__name__}: {error}")
            self.done(case, began)

    def done(self, case: CaseResult, started: float) -> None:
        case.duration_ms = int((time.monotonic() - started) * 1000)
        if case.outcome not in ("errored", "skipped"):
            self._check_endpoint(case)
            case.finish()
        if self.options.exit_first and case.outcome in ("failed", "errored"):
            self.stopped = True
        self.progress(case)

    def stop_here(self, case: CaseResult) -> bool:
        """With --exit-first, once a case has failed: skip ``case`` (reported) and say so."""
        if not self.stopped:
            return False
        case.skip("not run: an earlier case failed (--exit-first)")
        self.progress(case)
        return True

    def forbid(self, case: CaseResult, *workdirs: Workdir) -> list[str]:
        paths: list[str] = []
        for workdir in workdirs:
            paths += [str(workdir.path), os.path.realpath(workdir.path)]
        keys = self.endpoint.secrets if self.endpoint is not None else ()
        return [*case.vector.forbid, *dict.fromkeys(paths), *keys]

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of every process the run starts: the manifest's, the endpoint's keys
        (when a vector has an endpoint) and ``extra``."""
        keys = self.endpoint.environment() if self.endpoint is not None else {}
        return self.manifest.environment({**keys, **(extra or {})})

    def _check_endpoint(self, case: CaseResult) -> None:
        """What the scripted endpoint saw of the vector's requests (spec/conformance/README.md,
        "The scripted endpoint"): each as the executor annex asks, and none when it says none."""
        script = case.vector.data.get("endpoint")
        if script is None or self.endpoint is None:
            return
        requests, problems = self.endpoint.findings(endpoint_key(case.vector, case.surface))
        case.check("endpoint-requests", not problems, "; ".join(dict.fromkeys(problems)))
        expected = script.get("requests")
        if expected == "none":
            case.check(
                "endpoint-not-called",
                requests == 0,
                f"the implementation sent {requests} request(s) where none may be sent",
            )
        elif isinstance(expected, int):
            case.check(
                "endpoint-request-count",
                requests == expected,
                f"the implementation sent {requests} request(s), not {expected}",
            )


def tool_list_problems(
    observed: dict[Any, dict[str, Any]], contract: dict[str, dict[str, Any]], *, whole: bool
) -> list[str]:
    """How a listed set of tools differs from the contract's (tools.json), tool by tool: the
    names and their order, then each tool's differing members (``whole``: the tool's extra
    members too, as the Tool Adapter's definitions must be the contract's exactly; an MCP server
    may add members of its protocol, so only the contract's members are compared there)."""
    problems = []
    if list(observed) != list(contract):
        problems.append(f"tools {list(observed)}, the contract's {list(contract)}")
    for name, tool in contract.items():
        if name not in observed:
            continue
        seen = observed[name]
        keys = set(tool) | set(seen) if whole else set(tool)
        members = sorted(k for k in keys if canonical(tool.get(k)) != canonical(seen.get(k)))
        if members:
            problems.append(f"{name} differs from tools.json in {', '.join(members)}")
    return problems
