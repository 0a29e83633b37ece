"""The SDK and Tool Adapter surfaces, through the implementation's driver.

One driver process runs every SDK and Tool Adapter case, one after the other (the driver
protocol, :mod:`.driver`). Each case is a scenario of steps (a call vector: open, call, close);
the files it writes and removes are the harness's, every other step goes to the driver, and each
observation is checked against the step's expectation: a raised GraphError or a returned result
on the SDK, the ``{ok, error}`` / ``{ok, result}`` envelope on the Tool Adapter (a failure names
the extra or missing member, CG-CONF-3); the ``tools`` step of protocol 1.1 compares the
adapter's definitions with tools.json (CG-CONF-4). The checks that ran decide a case (CG-CONF-7):
a step answered ``unsupported`` skips it only when no check failed, and the ``close`` the harness
sends after every scenario is its clean-up, never checked and never a reason to skip. A failed
case keeps what the driver answered for its failing steps as evidence. A driver that crashes,
hangs or breaks the protocol errors the case with its stderr, and the next case gets a fresh
driver.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from typing import Any

from ._json import dumps, preview
from .cases import CaseResult, check_error_object, check_forbidden, check_result
from .driver import DriverClient, DriverError
from .matching import match, substitute
from .schemas import json_type
from .session import RunSession, tool_list_problems
from .suite import Vector
from .workspace import remove_file, write_file

__all__ = ["run_driver_cases"]


async def run_driver_cases(session: RunSession, cases: list[CaseResult]) -> None:
    if not cases:
        return
    assert session.manifest.driver is not None
    driver: DriverClient | None = None
    start_error = ""
    for case in cases:
        if session.stop_here(case):
            continue
        began = time.monotonic()
        if driver is None or not driver.alive:
            if driver is not None:
                await driver.kill()
            driver, start_error = await _start_driver(session)
        if driver is None:
            case.error(f"the driver could not be started: {start_error}")
            session.done(case, began)
            continue
        surfaces = driver.started.get("surfaces", [])
        if case.surface not in surfaces:
            case.skip(f"the driver does not drive the {case.surface} surface")
            session.done(case, began)
            continue
        try:
            await _driver_case(session, driver, case)
        except DriverError as error:
            case.error(str(error), {"driverStderr": driver.stderr_tail()})
            await driver.kill()
        except Exception as error:  # noqa: BLE001 -- a harness defect must not stop the run
            case.error(f"harness error: {type(error).__name__}: {error}")
        session.done(case, began)
    if driver is not None:
        await driver.stop()


async def _start_driver(session: RunSession) -> tuple[DriverClient | None, str]:
    manifest = session.manifest
    assert manifest.driver is not None
    cwd = manifest.cwd(manifest.driver) or tempfile.mkdtemp(prefix="cg-driver-")
    driver = DriverClient(
        manifest.expand(manifest.driver),
        cwd=cwd,
        env=session.environment(),
        schemas=session.schemas,
    )
    try:
        started = await driver.start()
    except DriverError as error:
        await driver.kill()
        return None, f"{error}"
    # The report names the implementation by its manifest (what the user wrote); the driver's
    # own 'started' message is kept beside it, as its self-report.
    session.implementation["driver"] = started
    return driver, ""


async def _driver_case(session: RunSession, driver: DriverClient, case: CaseResult) -> None:
    """Run the case's scenario and check each step (CG-CONF-7: the checks that ran decide).

    A scenario step the driver answers ``unsupported`` ends the scenario: the case is skipped
    with that reason only when none of its checks failed (a failed check is never hidden: the
    case is then failed). The trailing ``close`` is the harness's clean-up: it is sent after the
    scenario however it ended, is not checked, and its answer (``unsupported`` included) never
    skips the case."""
    vector = case.vector
    steps = _scenario(vector)
    workdir = session.workspace.for_vector(
        vector, surface=case.surface, private=vector.kind == "steps"
    )
    driver.take_stderr()
    emitted: list[tuple[str, bytes]] = []
    captures: dict[str, Any] = {}
    handles: dict[str, str] = {}  # handle -> tool
    answers: list[tuple[str, dict[str, Any]]] = []  # (label, observation) of each checked step
    failing: list[str] = []  # labels of the steps whose checks failed
    unsupported = ""  # why the scenario ended early: a step the driver does not support
    for index, step in enumerate(steps):
        op = step["op"]
        label = f"step {index} ({op})"
        cleanup = bool(step.get("cleanup"))
        if unsupported and not cleanup:
            continue
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
        observation, raw = await driver.run(case.surface, message, session.options.step_timeout)
        emitted.append((f"driver observation ({label})", raw))
        if cleanup:
            continue  # the harness's clean-up: not checked, whatever the driver answered
        if observation.get("outcome") == "unsupported":
            unsupported = f"the driver does not support {label}: {observation.get('reason', '')}"
            continue  # on to the clean-up
        tool = step.get("tool") or handles.get(step.get("handle", ""), "")
        failed_before = _failed(case)
        _check_step(session, case, step, observation, tool, captures, label)
        answers.append((label, observation))
        if _failed(case) > failed_before:
            failing.append(label)
    stderr = driver.take_stderr()
    emitted.append(("driver stderr", stderr))
    check_forbidden(case, emitted, session.forbid(case, workdir))
    # Reported only if the case ends failed (checks made later count too: the endpoint's
    # findings, the comparison across surfaces).
    case.evidence = _evidence(answers, failing, stderr)
    if unsupported and not _failed(case):
        # Skipped: not run to the end, so it certifies nothing and holds no check (every check
        # that ran held; a failed one would have made the case failed instead).
        case.checks.clear()
        case.observed.clear()
        case.skip(unsupported)
    elif case.outcome == "passed" and not case.checks:
        case.error("no check ran")


def _failed(case: CaseResult) -> int:
    return sum(1 for check in case.checks if not check.passed)


#: At most this many steps' answers are kept as a failed case's evidence, each as a preview.
EVIDENCE_STEPS = 4


def _evidence(
    answers: list[tuple[str, dict[str, Any]]], failing: list[str], stderr: bytes
) -> dict[str, Any]:
    """What the driver answered, for a failed SDK or Tool Adapter case: the steps whose checks
    failed (when none did, because a check of the whole case failed -- a forbidden string, the
    comparison across surfaces, the scripted endpoint's findings -- every checked step), at most
    ``EVIDENCE_STEPS`` of them, each observation as a one-line preview of at most 600 characters,
    and a preview of the driver's stderr during the case: bounded as the CLI's and MCP's evidence
    are."""
    chosen = [(label, o) for label, o in answers if label in failing] or answers
    return {
        "steps": [
            {"step": label, "observation": preview(observation)}
            for label, observation in chosen[:EVIDENCE_STEPS]
        ],
        "driverStderr": preview(stderr),
    }


def _check_step(
    session: RunSession,
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
        case.check("driver-started", outcome == "started", f"{label}: {preview(observation, 300)}")
        return
    if op == "tools":
        _check_tool_definitions(session, case, observation, label)
        return
    if expect is None:
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
            problems = session.schemas.errors("tool-outcome.schema.json", value)
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
        check_error_object(case, error, expect["error"], session.schemas, label)
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
        check_result(case, result, expect["result"], session.schemas, tool=tool, captures=captures)
    elif op == "reload":
        check_result(
            case,
            result,
            expect["result"],
            session.schemas,
            schema="reload-result.schema.json",
            captures=captures,
        )
    else:
        mismatches = match(expect["result"], result, captures)
        case.check("result-match", not mismatches, "; ".join(mismatches[:4]))


def _check_tool_definitions(
    session: RunSession, case: CaseResult, observation: dict[str, Any], label: str
) -> None:
    """The adapter's tool definitions are the contract's (tools.json), tool by tool."""
    if not case.check(
        "tool-definitions-returned",
        observation.get("outcome") == "returned" and isinstance(observation.get("value"), list),
        f"{label}: expected the list of tool definitions, got {preview(observation, 300)}",
    ):
        return
    observed = {t.get("name"): t for t in observation["value"] if isinstance(t, dict)}
    contract = {t["name"]: t for t in session.suite.tools.get("tools", ())}
    problems = tool_list_problems(observed, contract, whole=True)
    case.observed.append(("result", observation["value"]))
    case.check("tool-definitions", not problems, f"{label}: " + "; ".join(problems))


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
