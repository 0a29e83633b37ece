"""Running the suite: every selected vector on every surface, concurrently where it is safe.

* SDK and Tool Adapter cases run one after the other through one driver process.
* CLI cases run as subprocesses, a few at a time.
* MCP cases run in groups that share one server: vectors whose configurations are identical
  share a server (a server that served one vector is as good as a fresh one for the next,
  except for the scripted executor, which consumes one step per match). Vectors that differ only
  in a one-step script are *batched*: one server whose script is their steps in order, each match
  consuming its own. A case of a batch that fails is confirmed on a dedicated server.
* A case that crashes (a driver that dies, a server that hangs, a timeout) is reported as
  errored with context and never stops the run.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import fnmatch
import json
import os
import signal
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ._json import NO_ARGUMENTS, canonical, dumps, preview
from .cases import (
    CaseResult,
    check_cli_envelope,
    check_error_object,
    check_forbidden,
    check_mcp_result,
    check_result,
    cross_check,
)
from .driver import DriverClient, DriverError
from .endpoint import Endpoint
from .manifest import Manifest
from .matching import match, substitute
from .schemas import SchemaSet, json_type
from .suite import SURFACES, Suite, Vector
from .workspace import Workdir, Workspace, endpoint_key, remove_file, write_file

if TYPE_CHECKING:
    from .mcp_client import McpConnection

__all__ = ["RunOptions", "RunResult", "run_suite", "select_vectors"]

_DRIVER_OPS = frozenset(("open", "call", "await", "cancel", "reload", "close", "tools"))
#: How many failing cases of one MCP batch are confirmed on dedicated servers.
MAX_CONFIRMATIONS = 8
#: The signals a vector may deliver to a CLI process.
_SIGNALS = {"SIGINT": signal.SIGINT}


@dataclass
class RunOptions:
    surfaces: Sequence[str] = SURFACES
    patterns: Sequence[str] = ()
    jobs: int = 0  # 0: the number of CPUs
    batch: bool = True
    keep_workdir: bool = False
    step_timeout: float = 60.0
    process_timeout: float = 60.0
    #: Stop starting cases after the first failed or errored one (the rest are skipped).
    exit_first: bool = False
    #: Failing cases of one MCP batch re-run alone; the others are reported as not confirmed.
    max_confirmations: int = MAX_CONFIRMATIONS


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


Progress = Callable[[CaseResult], None]


def run_suite(
    suite: Suite,
    schemas: SchemaSet,
    manifest: Manifest,
    options: RunOptions,
    progress: Progress | None = None,
) -> RunResult:
    return asyncio.run(_Runner(suite, schemas, manifest, options, progress).run())


class _Runner:
    def __init__(
        self,
        suite: Suite,
        schemas: SchemaSet,
        manifest: Manifest,
        options: RunOptions,
        progress: Progress | None,
    ) -> None:
        self.suite = suite
        self.schemas = schemas
        self.manifest = manifest
        self.options = options
        self.progress = progress or (lambda _case: None)
        self.vectors = select_vectors(suite.vectors, options.patterns)
        self.cases: dict[tuple[str, str], CaseResult] = {}
        self.implementation: dict[str, Any] = {
            "name": manifest.name,
            "language": manifest.language,
            "version": manifest.version,
        }
        jobs = options.jobs or (os.cpu_count() or 2) + 1
        self.slots = asyncio.Semaphore(max(1, jobs))
        self.stopped = False  # --exit-first: a case failed, start no other
        #: The scripted endpoint, started when a selected vector has one.
        self.endpoint: Endpoint | None = None

    # -- planning -------------------------------------------------------------------------------

    def _plan(self) -> tuple[list[CaseResult], list[CaseResult], list[CaseResult]]:
        driver_cases, cli_cases, mcp_cases = [], [], []
        commands = {
            "sdk": self.manifest.driver,
            "tool": self.manifest.driver,
            "mcp": self.manifest.mcp,
            "cli": self.manifest.cli,
        }
        for vector in self.vectors:
            for surface in SURFACES:
                case = CaseResult(vector, surface)
                self.cases[case.key] = case
                if surface not in vector.surfaces:
                    case.outcome = "not-applicable"
                    case.reason = "the vector cannot be expressed on this surface"
                elif surface not in self.options.surfaces:
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

    async def run(self) -> RunResult:
        started = time.time()
        clock = time.monotonic()
        driver_cases, cli_cases, mcp_cases = self._plan()
        for case in self.cases.values():
            if case.outcome in ("not-applicable", "skipped"):
                self.progress(case)
        keep = self.options.keep_workdir
        root = Path(tempfile.mkdtemp(prefix="cg-conformance-"))
        if any("endpoint" in vector.data for vector in self.vectors):
            self.endpoint = Endpoint()
            self.endpoint.start()
        try:
            self.workspace = Workspace(self.suite, root, self.endpoint)
            tasks = [asyncio.create_task(self._driver_cases(driver_cases))]
            tasks += [asyncio.create_task(g) for g in self._mcp_groups(mcp_cases)]
            tasks += [asyncio.create_task(self._cli_case(c)) for c in cli_cases]
            await asyncio.gather(*tasks)
        finally:
            if self.endpoint is not None:
                self.endpoint.close()
            if not keep:
                _remove_tree(root)
        by_vector: dict[str, list[CaseResult]] = {}
        for case in self.cases.values():
            by_vector.setdefault(case.vector.id, []).append(case)
        for cases in by_vector.values():
            cross_check(cases)
            for case in cases:
                case.finish()
        ordered = [self.cases[(v.id, s)] for v in self.vectors for s in SURFACES]
        return RunResult(
            cases=ordered,
            implementation=self.implementation,
            started_at=started,
            duration_s=time.monotonic() - clock,
            vectors=self.vectors,
            workdir=str(root) if keep else None,
            options=self.options,
        )

    def _done(self, case: CaseResult, started: float) -> None:
        case.duration_ms = int((time.monotonic() - started) * 1000)
        if case.outcome not in ("errored", "skipped"):
            self._check_endpoint(case)
            case.finish()
        if self.options.exit_first and case.outcome in ("failed", "errored"):
            self.stopped = True
        self.progress(case)

    def _stop_here(self, case: CaseResult) -> bool:
        """With --exit-first, once a case has failed: skip ``case`` (reported) and say so."""
        if not self.stopped:
            return False
        case.skip("not run: an earlier case failed (--exit-first)")
        self.progress(case)
        return True

    def _forbid(self, case: CaseResult, *workdirs: Workdir) -> list[str]:
        paths: list[str] = []
        for workdir in workdirs:
            paths += [str(workdir.path), os.path.realpath(workdir.path)]
        keys = self.endpoint.secrets if self.endpoint is not None else ()
        return [*case.vector.forbid, *dict.fromkeys(paths), *keys]

    def _environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
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

    # -- SDK and Tool Adapter, through the driver ------------------------------------------------

    async def _driver_cases(self, cases: list[CaseResult]) -> None:
        if not cases:
            return
        assert self.manifest.driver is not None
        driver: DriverClient | None = None
        start_error = ""
        for case in cases:
            if self._stop_here(case):
                continue
            began = time.monotonic()
            if driver is None or not driver.alive:
                if driver is not None:
                    await driver.kill()
                driver, start_error = await self._start_driver()
            if driver is None:
                case.error(f"the driver could not be started: {start_error}")
                self._done(case, began)
                continue
            surfaces = driver.started.get("surfaces", [])
            if case.surface not in surfaces:
                case.skip(f"the driver does not drive the {case.surface} surface")
                self._done(case, began)
                continue
            try:
                await self._driver_case(driver, case)
            except DriverError as error:
                case.error(str(error), {"driverStderr": driver.stderr_tail()})
                await driver.kill()
            except Exception as error:  # noqa: BLE001 -- a harness defect must not stop the run
                case.error(f"harness error: {type(error).__name__}: {error}")
            self._done(case, began)
        if driver is not None:
            await driver.stop()

    async def _start_driver(self) -> tuple[DriverClient | None, str]:
        manifest = self.manifest
        assert manifest.driver is not None
        cwd = manifest.cwd(manifest.driver) or tempfile.mkdtemp(prefix="cg-driver-")
        driver = DriverClient(
            manifest.expand(manifest.driver),
            cwd=cwd,
            env=self._environment(),
            schemas=self.schemas,
        )
        try:
            started = await driver.start()
        except DriverError as error:
            await driver.kill()
            return None, f"{error}"
        info = started.get("implementation", {})
        self.implementation = {
            "name": info.get("name", manifest.name),
            "language": info.get("language", manifest.language),
            "version": info.get("version", manifest.version),
            "driver": started,
        }
        return driver, ""

    async def _driver_case(self, driver: DriverClient, case: CaseResult) -> None:
        vector = case.vector
        steps = _scenario(vector)
        workdir = self.workspace.for_vector(
            vector, surface=case.surface, private=vector.kind == "steps"
        )
        driver.take_stderr()
        emitted: list[tuple[str, bytes]] = []
        captures: dict[str, Any] = {}
        handles: dict[str, str] = {}  # handle -> tool
        for index, step in enumerate(steps):
            op = step["op"]
            label = f"step {index} ({op})"
            if op == "writeFile":
                data = (
                    step["text"].encode("utf-8")
                    if "text" in step
                    else (dumps(step.get("json")) + "\n").encode("utf-8")
                )
                write_file(workdir, step["path"], data)
                continue
            if op == "removeFile":
                remove_file(workdir, step["path"])
                continue
            if op == "sleep":
                await asyncio.sleep(step["ms"] / 1000)
                continue
            message: dict[str, Any] = {"op": op}
            if op == "open":
                message["config"] = str(workdir.config_path)
            for key in ("tool", "handle", "providers"):
                if key in step:
                    message[key] = step[key]
            if "arguments" in step:
                try:
                    message["arguments"] = substitute(step["arguments"], captures)
                except (KeyError, ValueError) as error:
                    case.error(f"{label}: {error}")
                    return
            if op == "call" and "handle" in step:
                handles[step["handle"]] = step["tool"]
            observation, raw = await driver.run(case.surface, message, self.options.step_timeout)
            emitted.append((f"driver observation ({label})", raw))
            if observation.get("outcome") == "unsupported":
                case.skip(f"the driver does not support {label}: {observation.get('reason', '')}")
                await driver.run(case.surface, {"op": "close"}, self.options.step_timeout)
                return
            tool = step.get("tool") or handles.get(step.get("handle", ""), "")
            self._check_driver_step(case, step, observation, tool, captures, label)
        emitted.append(("driver stderr", driver.take_stderr()))
        check_forbidden(case, emitted, self._forbid(case, workdir))
        if case.outcome == "passed" and not case.checks:
            case.error("no check ran")

    def _check_driver_step(
        self,
        case: CaseResult,
        step: dict[str, Any],
        observation: dict[str, Any],
        tool: str,
        captures: dict[str, Any],
        label: str,
    ) -> None:
        op = step["op"]
        expect = step.get("expect")
        outcome = observation.get("outcome")
        through_tool = case.surface == "tool" and op in ("call", "await")
        if op == "call" and "handle" in step:
            case.check(
                "driver-started", outcome == "started", f"{label}: {preview(observation, 300)}"
            )
            return
        if op == "tools":
            self._check_tool_definitions(case, observation, label)
            return
        if expect is None:
            if step.get("cleanup"):
                return
            ok = outcome == "returned"
            if ok and through_tool:
                value = observation.get("value")
                ok = isinstance(value, dict) and value.get("ok") is True
            case.check("step-succeeds", ok, f"{label} must not fail: {preview(observation, 300)}")
            return
        if "error" in expect:
            if through_tool:
                value = observation.get("value")
                problem = _envelope_problem(observation, ok=False)
                if not case.check("tool-envelope", not problem, f"{label}: {problem}"):
                    return
                problems = self.schemas.errors("tool-outcome.schema.json", value)
                case.check("tool-envelope-schema", not problems, "; ".join(problems))
                assert isinstance(value, dict)
                error = value["error"]
            else:
                if not case.check(
                    "sdk-raises-graph-error",
                    outcome == "raised"
                    and observation.get("graphError") is True
                    and "error" in observation,
                    f"{label}: expected a raised GraphError, got {preview(observation, 300)}",
                ):
                    return
                error = observation["error"]
            case.observed.append(("error", error))
            check_error_object(case, error, expect["error"], self.schemas, label)
            return
        # a result
        if through_tool:
            value = observation.get("value")
            problem = _envelope_problem(observation, ok=True)
            if not case.check("tool-envelope", not problem, f"{label}: {problem}"):
                return
            assert isinstance(value, dict)
            result = value["result"]
        else:
            if not case.check(
                "sdk-returns", outcome == "returned", f"{label}: {preview(observation, 300)}"
            ):
                return
            result = observation.get("value")
        case.observed.append(("result", result))
        if op in ("call", "await"):
            check_result(case, result, expect["result"], self.schemas, tool=tool, captures=captures)
        elif op == "reload":
            check_result(
                case,
                result,
                expect["result"],
                self.schemas,
                schema="reload-result.schema.json",
                captures=captures,
            )
        else:
            mismatches = match(expect["result"], result, captures)
            case.check("result-match", not mismatches, "; ".join(mismatches[:4]))

    def _check_tool_definitions(
        self, case: CaseResult, observation: dict[str, Any], label: str
    ) -> None:
        """The adapter's tool definitions are the contract's (tools.json), tool by tool."""
        if not case.check(
            "tool-definitions-returned",
            observation.get("outcome") == "returned" and isinstance(observation.get("value"), list),
            f"{label}: expected the list of tool definitions, got {preview(observation, 300)}",
        ):
            return
        observed = {t.get("name"): t for t in observation["value"] if isinstance(t, dict)}
        contract = {t["name"]: t for t in self.suite.tools.get("tools", ())}
        problems = []
        if list(observed) != list(contract):
            problems.append(f"tools {list(observed)}, the contract's {list(contract)}")
        for name, tool in contract.items():
            if name in observed and canonical(observed[name]) != canonical(tool):
                members = sorted(
                    k
                    for k in set(tool) | set(observed[name])
                    if canonical(tool.get(k)) != canonical(observed[name].get(k))
                )
                problems.append(f"{name} differs from tools.json in {', '.join(members)}")
        case.observed.append(("result", observation["value"]))
        case.check("tool-definitions", not problems, f"{label}: " + "; ".join(problems))

    # -- CLI ------------------------------------------------------------------------------------

    async def _cli_case(self, case: CaseResult) -> None:
        async with self.slots:
            if self._stop_here(case):
                return
            began = time.monotonic()
            try:
                await self._cli(case)
            except Exception as error:  # noqa: BLE001
                case.error(f"harness error: {type(error).__name__}: {error}")
            self._done(case, began)

    async def _cli(self, case: CaseResult) -> None:
        manifest = self.manifest
        assert manifest.cli is not None
        vector = case.vector
        expect = vector.expect_for("cli")
        files = expect.get("exit", {}).get("files", {})
        setup = vector.data.get("setup", [])
        # a command that may write files gets a folder of its own
        workdir = self.workspace.for_vector(
            vector, surface="cli", private=bool(files) or bool(setup)
        )
        config = str(workdir.config_path)
        for index, command in enumerate(setup):
            if not await self._setup_command(case, workdir, index, command):
                return
        before = {path: _read_or_none(workdir.path / path) for path in files}
        extra_env: dict[str, str] = {}
        if vector.kind == "argv":
            arguments = [_cli_argument(a, config) for a in vector.data["argv"]]
            extra_env = {
                k: v.replace("{config}", config) for k, v in vector.data.get("env", {}).items()
            }
        elif vector.kind == "open":
            arguments = ["call", "describe_graph", "--arguments", "{}", "--config", config]
        else:
            call = vector.data["call"]
            given = ["--arguments", dumps(call["arguments"])] if "arguments" in call else []
            arguments = ["call", call["tool"], *given, "--config", config]
        argv = manifest.expand(manifest.cli) + arguments
        signal_spec = vector.data.get("signal")
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=manifest.cwd(manifest.cli) or str(workdir.path),
                env=self._environment(extra_env),
                preexec_fn=_interruptible if signal_spec is not None else None,
            )
        except OSError as error:
            case.error(f"cannot start the CLI {argv[0]!r}: {error}")
            return
        exchange = asyncio.ensure_future(process.communicate())
        if signal_spec is not None:
            await self._deliver_signal(case, process, exchange, signal_spec)
        try:
            stdout, stderr = await asyncio.wait_for(exchange, self.options.process_timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            case.error(f"the CLI did not finish within {self.options.process_timeout:g} s")
            return
        evidence = {
            "argv": [a if isinstance(a, str) else {"base64": _base64(a)} for a in arguments],
            "exit": process.returncode,
            "stdout": preview(stdout),
            "stderr": preview(stderr),
        }
        if "error" in expect:
            check_cli_envelope(
                case,
                process.returncode,
                stdout,
                stderr,
                expect["error"],
                self.schemas,
                stdout_report=vector.data.get("cliStdout") == "report",
            )
        elif "result" in expect:
            case.check(
                "cli-exit-status",
                process.returncode == 0,
                f"expected 0, got {process.returncode}; stderr {preview(stderr, 300)}",
            )
            try:
                result = json.loads(stdout)
            except ValueError:
                case.check(
                    "cli-stdout-json",
                    False,
                    f"stdout is not one JSON document: {preview(stdout, 300)}",
                )
            else:
                case.observed.append(("result", result))
                tool = (
                    vector.data["call"]["tool"]
                    if vector.kind == "call"
                    else self.suite.cli_tools.get(str(vector.data.get("argv", [""])[0]))
                )
                check_result(case, result, expect["result"], self.schemas, tool=tool)
        else:
            exit_expect = expect.get("exit", {})
            code = exit_expect.get("code")
            case.check(
                "cli-exit-status",
                process.returncode == code,
                f"expected {code}, got {process.returncode}",
            )
            if exit_expect.get("stdoutEmpty"):
                case.check("cli-stdout-empty", stdout == b"", f"stdout: {preview(stdout, 300)}")
            if exit_expect.get("stdoutNonEmpty"):
                case.check("cli-stdout-non-empty", bool(stdout.strip()), "stdout is empty")
            if exit_expect.get("stderrNonEmpty"):
                case.check("cli-stderr-non-empty", bool(stderr.strip()), "stderr is empty")
            if exit_expect.get("stderrEmpty"):
                case.check("cli-stderr-empty", stderr == b"", f"stderr: {preview(stderr, 300)}")
            if "stdoutJson" in exit_expect or "stdoutSchema" in exit_expect:
                try:
                    value = json.loads(stdout)
                except ValueError:
                    case.check(
                        "cli-stdout-json", False, f"stdout is not JSON: {preview(stdout, 300)}"
                    )
                else:
                    if "stdoutSchema" in exit_expect:
                        problems = self.schemas.errors(exit_expect["stdoutSchema"], value)
                        case.check("cli-stdout-schema", not problems, "; ".join(problems))
                    if "stdoutJson" in exit_expect:
                        mismatches = match(exit_expect["stdoutJson"], value)
                        case.check("cli-stdout-match", not mismatches, "; ".join(mismatches[:4]))
            if files:
                _check_files(case, workdir, files, before)
        argv = vector.data.get("argv", [""])
        if (
            "exit" in expect
            or vector.data.get("cliStdout") == "report"
            or (vector.kind == "argv" and str(argv[0]) in _MAINTENANCE_COMMANDS)
        ):
            # A maintenance report is trusted output for the host and may name the host's local
            # paths (CG-MAINT-3); stderr, and every other output, must not name the working folder.
            check_forbidden(case, [("CLI stderr", stderr)], self._forbid(case, workdir))
            check_forbidden(case, [("CLI stdout", stdout)], list(vector.forbid))
        else:
            check_forbidden(
                case, [("CLI stdout", stdout), ("CLI stderr", stderr)], self._forbid(case, workdir)
            )
        if any(not c.passed for c in case.checks):
            case.evidence = evidence

    async def _setup_command(
        self, case: CaseResult, workdir: Workdir, index: int, command: list[str]
    ) -> bool:
        """Run one of the vector's ``setup`` commands (the same CLI, the same folder); it must
        exit 0. False when it did not (the case has failed)."""
        manifest = self.manifest
        assert manifest.cli is not None
        config = str(workdir.config_path)
        argv = manifest.expand(manifest.cli) + [a.replace("{config}", config) for a in command]
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=manifest.cwd(manifest.cli) or str(workdir.path),
                env=self._environment(),
            )
        except OSError as error:
            case.error(f"setup[{index}]: cannot start the CLI {argv[0]!r}: {error}")
            return False
        try:
            stdout, stderr = await asyncio.wait_for(
                process.communicate(), self.options.process_timeout
            )
        except TimeoutError:
            process.kill()
            await process.wait()
            case.error(
                f"setup[{index}]: the CLI did not finish within {self.options.process_timeout:g} s"
            )
            return False
        case.check(
            "cli-setup",
            process.returncode == 0,
            f"setup[{index}] {command[0]}: expected exit 0, got {process.returncode}; "
            f"stdout {preview(stdout, 200)}; stderr {preview(stderr, 200)}",
        )
        return process.returncode == 0

    async def _deliver_signal(
        self,
        case: CaseResult,
        process: asyncio.subprocess.Process,
        exchange: asyncio.Future[tuple[bytes, bytes]],
        spec: dict[str, Any],
    ) -> None:
        """Send the vector's signal to the CLI process ``afterMs`` after it started; a process
        that finished before that fails the case (the signal could not test anything)."""
        name, after_ms = spec["name"], spec["afterMs"]
        done, _ = await asyncio.wait({exchange}, timeout=after_ms / 1000)
        if not done:
            await _until_waiting(process.pid, exchange)
        delivered = not exchange.done() and process.returncode is None
        if delivered:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(_SIGNALS[name])
        case.check(
            "cli-signal-delivered",
            delivered,
            f"the CLI exited (status {process.returncode}) before {name} was due "
            f"({after_ms} ms after it started)",
        )

    # -- MCP ------------------------------------------------------------------------------------

    def _mcp_groups(self, cases: list[CaseResult]) -> list[Any]:
        """Coroutines: one per startup vector, one per group of call vectors sharing a server."""
        coroutines: list[Any] = []
        groups: dict[str, list[CaseResult]] = {}
        for case in cases:
            vector = case.vector
            if vector.kind == "open":
                coroutines.append(self._mcp_startup_case(case))
                continue
            key = self._mcp_key(vector) if self.options.batch else vector.id
            groups.setdefault(key, []).append(case)
        for group in groups.values():
            coroutines.append(self._mcp_group(group))
        return coroutines

    def _mcp_key(self, vector: Vector) -> str:
        config = self.workspace.effective_config(vector, "mcp")
        steps = _script(config)
        if steps is not None and len(steps) == 1:
            stripped = copy.deepcopy(config)
            assert isinstance(stripped, dict)
            stripped["model"].pop("steps")
            return f"{vector.fixture}\0batch\0{canonical(stripped)}"
        return f"{vector.fixture}\0{canonical(config) if config is not None else ''}"

    async def _mcp_startup_case(self, case: CaseResult) -> None:
        async with self.slots:
            if self._stop_here(case):
                return
            began = time.monotonic()
            try:
                await self._mcp_startup(case)
            except Exception as error:  # noqa: BLE001
                case.error(f"harness error: {type(error).__name__}: {error}")
            self._done(case, began)

    async def _mcp_startup(self, case: CaseResult) -> None:
        from .mcp_client import McpConnection, McpStartupFailure  # the SDK costs ~1 s to import

        manifest = self.manifest
        assert manifest.mcp is not None
        workdir = self.workspace.for_vector(case.vector, surface="mcp")
        argv = manifest.expand(manifest.mcp, config=str(workdir.config_path))
        expect = case.vector.expect_for("mcp")
        try:
            async with McpConnection(
                argv,
                cwd=manifest.cwd(manifest.mcp) or str(workdir.path),
                env=self._environment(),
                start_timeout=self.options.process_timeout,
            ) as server:
                case.check(
                    "mcp-startup-fails",
                    False,
                    "the server started although the configuration cannot be opened",
                )
                chunks = [
                    ("MCP frames", b"\n".join(server.frames)),
                    ("MCP stderr", bytes(server.stderr)),
                ]
        except McpStartupFailure as failure:
            if failure.exit_code is None and not failure.stderr:
                case.error(f"the MCP server could not be run: {failure.detail}")
                return
            check_cli_envelope(
                case,
                failure.exit_code,
                failure.stdout,
                failure.stderr,
                expect["error"],
                self.schemas,
                prefix="mcp",
            )
            chunks = [("MCP stdout", failure.stdout), ("MCP stderr", failure.stderr)]
            if any(not c.passed for c in case.checks):
                case.evidence = {
                    "exit": failure.exit_code,
                    "stdout": preview(failure.stdout),
                    "stderr": preview(failure.stderr),
                }
        check_forbidden(case, chunks, self._forbid(case, workdir))

    async def _mcp_group(self, group: list[CaseResult]) -> None:
        configs = [self.workspace.effective_config(c.vector, "mcp") for c in group]
        batched = (
            len(group) > 1
            and _script(configs[0]) is not None
            and len(_script(configs[0]) or ()) == 1
        )
        if batched:
            steps = [
                (_script(cfg) or [None])[0]
                for case, cfg in zip(group, configs, strict=True)
                if _reaches_executor(case.vector, cfg)
            ]
            config = copy.deepcopy(configs[0])
            if steps:
                assert isinstance(config, dict)
                config["model"]["steps"] = steps
            altered = len(steps) > 1
            workdir = self.workspace.make(group[0].vector.fixture, config)
        else:
            altered = False
            workdir = self.workspace.for_vector(group[0].vector, surface="mcp")
        await self._mcp_serve(group, workdir)
        if altered:
            failing = [
                c for c in group if any(not k.passed for k in c.checks) or c.outcome == "errored"
            ]
            for case in failing[: self.options.max_confirmations]:
                confirmation = CaseResult(case.vector, "mcp")
                await self._mcp_serve(
                    [confirmation],
                    self.workspace.for_vector(case.vector, surface="mcp"),
                    report=False,
                )
                case.checks, case.observed = confirmation.checks, confirmation.observed
                case.outcome, case.reason, case.evidence = (
                    confirmation.outcome,
                    confirmation.reason,
                    confirmation.evidence,
                )
                case.finish()
            for case in failing[self.options.max_confirmations :]:
                case.unconfirmed = True

    async def _mcp_serve(
        self, group: list[CaseResult], workdir: Workdir, report: bool = True
    ) -> None:
        from .mcp_client import McpConnection, McpStartupFailure

        manifest = self.manifest
        assert manifest.mcp is not None
        argv = manifest.expand(manifest.mcp, config=str(workdir.config_path))
        pending = list(group)
        async with self.slots:
            if report:
                while pending and self.stopped:
                    self._stop_here(pending.pop(0))
            while pending:
                current: CaseResult | None = None
                began = time.monotonic()
                try:
                    async with McpConnection(
                        argv,
                        cwd=manifest.cwd(manifest.mcp) or str(workdir.path),
                        env=self._environment(),
                        start_timeout=self.options.process_timeout,
                    ) as server:
                        listed = False
                        while pending:
                            current = pending.pop(0)
                            if report and self._stop_here(current):
                                current = None
                                continue
                            began = time.monotonic()
                            if not listed:  # every server lists exactly the contract's tools
                                listed = True
                                await self._mcp_tools_list(server, current)
                            await self._mcp_call(server, current, workdir)
                            self._mcp_done(current, began, report)
                            current = None
                            if not server.alive:
                                break  # the next case gets a fresh server
                except McpStartupFailure as failure:
                    case = current or pending.pop(0)
                    detail = (
                        "the MCP server did not start with a valid configuration: "
                        f"{failure.detail}; exit {failure.exit_code}; "
                        f"stderr {preview(failure.stderr, 600)}"
                    )
                    if failure.exit_code is None and not failure.stderr:
                        case.error(detail)
                    else:
                        case.check("mcp-startup", False, detail)
                    self._mcp_done(case, began, report)
                except Exception as error:  # noqa: BLE001 -- a harness defect must not stop the run
                    failed_case = current or (pending.pop(0) if pending else None)
                    if failed_case is not None:
                        failed_case.error(f"harness error: {type(error).__name__}: {error}")
                        self._mcp_done(failed_case, began, report)

    def _mcp_done(self, case: CaseResult, began: float, report: bool) -> None:
        if report:
            self._done(case, began)
        else:
            case.duration_ms = int((time.monotonic() - began) * 1000)

    async def _mcp_tools_list(self, server: McpConnection, case: CaseResult) -> None:
        """``tools/list`` of a fresh server holds the tools of tools.json, member for member
        (a check of the first case the server serves)."""
        result = await server.list_tools(self.options.step_timeout)
        listed = result.get("tools") if isinstance(result, dict) else None
        if not case.check(
            "mcp-tools-list-returned",
            isinstance(listed, list),
            f"tools/list answered {preview(result, 300)}",
        ):
            return
        assert isinstance(listed, list)
        observed = {t.get("name"): t for t in listed if isinstance(t, dict)}
        contract = {t["name"]: t for t in self.suite.tools.get("tools", ())}
        problems = []
        if list(observed) != list(contract):
            problems.append(f"tools {list(observed)}, the contract's {list(contract)}")
        for name, tool in contract.items():
            if name in observed:
                members = sorted(
                    k for k in tool if canonical(tool[k]) != canonical(observed[name].get(k))
                )
                if members:
                    problems.append(f"{name} differs from tools.json in {', '.join(members)}")
        case.check("mcp-tools-list", not problems, "; ".join(problems))

    async def _mcp_call(self, server: McpConnection, case: CaseResult, workdir: Workdir) -> None:
        vector = case.vector
        call = vector.data["call"]
        result = await server.call(
            call["tool"], call.get("arguments", NO_ARGUMENTS), self.options.step_timeout
        )
        expect = vector.expect_for("mcp")
        response = result.response or {}
        if "protocolError" in expect:
            code = expect["protocolError"]["code"]
            error = response.get("error")
            case.check(
                "mcp-protocol-error",
                isinstance(error, dict) and error.get("code") == code and "result" not in response,
                f"expected a JSON-RPC error {code}, got {preview(response or result.detail, 300)}",
            )
            message = expect["protocolError"].get("message")
            if message is not None and isinstance(error, dict):
                case.check(
                    "mcp-protocol-error-message",
                    error.get("message") == message and "data" not in error,
                    f"expected the message {message!r} and no data, got {preview(error, 300)}",
                )
        elif result.kind == "no-response":
            case.check(
                "mcp-response", False, f"{result.detail}; stderr {preview(result.stderr, 400)}"
            )
        elif "error" in response:
            case.check(
                "mcp-tool-result",
                False,
                f"a JSON-RPC error instead of a tool result: {preview(response, 300)}",
            )
        else:
            check_mcp_result(case, response.get("result"), expect, call["tool"], self.schemas)
        check_forbidden(
            case,
            [("MCP frames", b"\n".join(result.frames)), ("MCP stderr", result.stderr)],
            self._forbid(case, workdir),
        )
        if any(not c.passed for c in case.checks):
            case.evidence = {"response": response, "stderr": preview(result.stderr)}


#: CLI commands that write a report for the host rather than a result for a caller.
_MAINTENANCE_COMMANDS: Final = frozenset(("doctor", "init", "mcp-install", "mcp-uninstall"))


def _envelope_problem(observation: dict[str, Any], *, ok: bool) -> str:
    """What is wrong with a Tool Adapter observation that should be ``{"ok": ok, ...}`` (the
    extra or missing members by name), or "" when it is that envelope."""
    member = "result" if ok else "error"
    wanted = f"{{ok: {str(ok).lower()}, {member}}}"
    if observation.get("outcome") != "returned":
        return f"expected the adapter to return {wanted}, but it {_what_happened(observation)}"
    value = observation.get("value")
    if not isinstance(value, dict):
        return f"expected {wanted}, got a JSON {json_type(value)}: {preview(value, 200)}"
    problems = []
    extra = sorted(set(value) - {"ok", member})
    missing = sorted({"ok", member} - set(value))
    if extra:
        problems.append("extra member(s) " + ", ".join(repr(k) for k in extra))
    if missing:
        problems.append("missing member(s) " + ", ".join(repr(k) for k in missing))
    if "ok" in value and value["ok"] is not ok:
        problems.append(f"ok is {preview(value['ok'], 40)}, not {str(ok).lower()}")
    return f"expected {wanted}: " + "; ".join(problems) if problems else ""


def _what_happened(observation: dict[str, Any]) -> str:
    outcome = observation.get("outcome")
    if outcome == "raised":
        kind = "a GraphError" if observation.get("graphError") else observation.get("errorType")
        return f"raised {kind}: {preview(observation.get('display', ''), 200)}"
    return f"answered {preview(observation, 200)}"


def _scenario(vector: Vector) -> list[dict[str, Any]]:
    """The driver scenario of a vector: its steps, or open / call / close."""
    kind = vector.kind
    if kind == "steps":
        steps = [dict(s) for s in vector.data["steps"]]
    elif kind == "open":
        steps = [{"op": "open", "expect": vector.expect}]
    else:
        call = vector.data["call"]
        steps = [
            {"op": "open"},
            {
                "op": "call",
                "tool": call["tool"],
                "arguments": call.get("arguments", {}),  # none given: {} (CG-MCP-2)
                "expect": vector.expect,
            },
        ]
    steps.append({"op": "close", "cleanup": True})
    return steps


def _script(config: Any) -> list[Any] | None:
    """The steps of a scripted executor configuration, else None."""
    model = config.get("model") if isinstance(config, dict) else None
    if (
        isinstance(model, dict)
        and model.get("executor") == "scripted"
        and isinstance(model.get("steps"), list)
    ):
        return list(model["steps"])
    return None


def _reaches_executor(vector: Vector, config: Any) -> bool:
    """Whether a correct implementation consults the executor for this vector's call (and so
    consumes one scripted step)."""
    call = vector.data.get("call", {})
    if call.get("tool") != "match_capabilities" or _script(config) is None:
        return False
    expect = vector.expect
    if "result" in expect:
        return True
    code = str(expect.get("error", {}).get("code", ""))
    return code.startswith("CG_MODEL_") or code == "CG_RESULT_TOO_LARGE"


#: A process whose state shows it waiting (not running) this long is under way.
_SETTLED_S = 0.5
_SETTLE_LIMIT_S = 20.0


async def _until_waiting(pid: int, exchange: asyncio.Future[Any]) -> None:
    """Wait until every thread of process ``pid`` has been waiting (state S in /proc, not
    running, runnable or in uninterruptible I/O) for half a second, at most 20 s; return at once
    where /proc does not exist."""
    tasks = Path(f"/proc/{pid}/task")
    clock = asyncio.get_running_loop().time
    deadline = clock() + _SETTLE_LIMIT_S
    waiting_since: float | None = None
    while clock() < deadline and not exchange.done():
        try:
            states = {
                (task / "stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()[0]
                for task in tasks.iterdir()
            }
        except (OSError, IndexError, UnicodeDecodeError):
            return  # no /proc (or the process is gone): the time alone decides
        now = clock()
        if states != {"S"}:
            waiting_since = None
        elif waiting_since is None:
            waiting_since = now
        elif now - waiting_since >= _SETTLED_S:
            return
        await asyncio.sleep(0.05)


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _check_files(
    case: CaseResult, workdir: Workdir, files: dict[str, str], before: dict[str, bytes | None]
) -> None:
    """The working folder after a command: each path unchanged (byte for byte), absent or
    present (a regular file)."""
    problems = []
    for relative, state in files.items():
        path = workdir.path / relative
        after = _read_or_none(path)
        if state == "unchanged":
            if before[relative] is None:
                problems.append(f"{relative} did not exist before the command")
            elif after is None:
                problems.append(f"{relative} was removed")
            elif after != before[relative]:
                problems.append(
                    f"{relative} changed ({len(before[relative] or b'')} -> {len(after)} bytes)"
                )
        elif state == "absent" and os.path.lexists(path):
            problems.append(f"{relative} exists")
        elif state == "present" and not (path.is_file() and not path.is_symlink()):
            problems.append(f"{relative} is not a regular file")
    case.check("cli-files", not problems, "; ".join(problems))


def _remove_tree(root: Path) -> None:
    import shutil

    with contextlib.suppress(OSError):
        shutil.rmtree(root)


def _interruptible() -> None:
    """In a CLI process that a vector interrupts, before it runs: Ctrl-C's default disposition.

    A harness started in the background (a shell's ``cmd &``, ``nohup``) inherits SIGINT ignored,
    and so would the CLI; the vector's premise is a user's interrupt, which an ignored signal
    never is."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli_argument(item: str | dict[str, str], config: str) -> str | bytes:
    """One argument of an argv vector: a text ('{config}' replaced), or exact bytes given as
    {"base64": ...} (an argument that is not UTF-8, CG-CLI-19)."""
    if isinstance(item, str):
        return item.replace("{config}", config)
    return base64.b64decode(item["base64"], validate=True)


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
