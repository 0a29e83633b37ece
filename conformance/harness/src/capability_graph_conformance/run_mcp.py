"""The MCP surface: the implementation's MCP server over stdio.

* A startup vector (one whose configuration cannot be opened) starts a server of its own, which
  must fail like a CLI graph command.
* Call vectors run in groups that share one server: vectors whose configurations are identical
  share a server (a server that served one vector is as good as a fresh one for the next, except
  for the scripted executor, which consumes one step per match). Vectors that differ only in a
  one-step script are *batched*: one server whose script is their steps in order, each match
  consuming its own. A case of a batch that fails is confirmed on a dedicated server; one left
  unconfirmed (past ``max_confirmations``) is reported as such (CG-CONF-3).
* Every server's ``tools/list`` is checked against tools.json on the first case it serves.
"""

from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING, Any

from ._json import NO_ARGUMENTS, canonical, preview
from .cases import CaseResult, check_cli_envelope, check_forbidden, check_mcp_result
from .session import RunSession, tool_list_problems
from .suite import Vector
from .workspace import Workdir

if TYPE_CHECKING:
    from .mcp_client import McpConnection

__all__ = ["mcp_groups"]


def mcp_groups(session: RunSession, cases: list[CaseResult]) -> list[Any]:
    """Coroutines: one per startup vector, one per group of call vectors sharing a server."""
    coroutines: list[Any] = []
    groups: dict[str, list[CaseResult]] = {}
    for case in cases:
        vector = case.vector
        if vector.kind == "open":
            coroutines.append(session.guarded(case, _startup))
            continue
        key = _key(session, vector) if session.options.batch else vector.id
        groups.setdefault(key, []).append(case)
    for group in groups.values():
        coroutines.append(_group(session, group))
    return coroutines


def _key(session: RunSession, vector: Vector) -> str:
    config = session.workspace.effective_config(vector, "mcp")
    steps = _script(config)
    if steps is not None and len(steps) == 1:
        stripped = copy.deepcopy(config)
        assert isinstance(stripped, dict)
        stripped["model"].pop("steps")
        return f"{vector.fixture}\0batch\0{canonical(stripped)}"
    return f"{vector.fixture}\0{canonical(config) if config is not None else ''}"


def _connect(session: RunSession, workdir: Workdir) -> McpConnection:
    """A server of the manifest's MCP command on the folder's configuration, run in the folder
    (unless the manifest names one)."""
    from .mcp_client import McpConnection  # the SDK costs ~1 s to import: only when MCP runs

    manifest = session.manifest
    assert manifest.mcp is not None
    return McpConnection(
        manifest.expand(manifest.mcp, config=str(workdir.config_path)),
        cwd=manifest.cwd(manifest.mcp) or str(workdir.path),
        env=session.environment(),
        start_timeout=session.options.process_timeout,
    )


async def _startup(session: RunSession, case: CaseResult) -> None:
    from .mcp_client import McpStartupFailure  # the SDK costs ~1 s to import

    workdir = session.workspace.for_vector(case.vector, surface="mcp")
    expect = case.vector.expect_for("mcp")
    try:
        async with _connect(session, workdir) as server:
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
            session.schemas,
            prefix="mcp",
        )
        chunks = [("MCP stdout", failure.stdout), ("MCP stderr", failure.stderr)]
        if any(not c.passed for c in case.checks):
            case.evidence = {
                "exit": failure.exit_code,
                "stdout": preview(failure.stdout),
                "stderr": preview(failure.stderr),
            }
    check_forbidden(case, chunks, session.forbid(case, workdir))


async def _group(session: RunSession, group: list[CaseResult]) -> None:
    configs = [session.workspace.effective_config(c.vector, "mcp") for c in group]
    batched = (
        len(group) > 1 and _script(configs[0]) is not None and len(_script(configs[0]) or ()) == 1
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
        workdir = session.workspace.make(group[0].vector.fixture, config)
    else:
        altered = False
        workdir = session.workspace.for_vector(group[0].vector, surface="mcp")
    await _serve(session, group, workdir)
    if altered:
        failing = [
            c for c in group if any(not k.passed for k in c.checks) or c.outcome == "errored"
        ]
        for case in failing[: session.options.max_confirmations]:
            confirmation = CaseResult(case.vector, "mcp")
            await _serve(
                session,
                [confirmation],
                session.workspace.for_vector(case.vector, surface="mcp"),
                report=False,
            )
            case.checks, case.observed = confirmation.checks, confirmation.observed
            case.outcome, case.reason, case.evidence = (
                confirmation.outcome,
                confirmation.reason,
                confirmation.evidence,
            )
            case.finish()
        for case in failing[session.options.max_confirmations :]:
            case.unconfirmed = True


async def _serve(
    session: RunSession, group: list[CaseResult], workdir: Workdir, report: bool = True
) -> None:
    from .mcp_client import McpStartupFailure

    pending = list(group)
    async with session.slots:
        if report:
            while pending and session.stopped:
                session.stop_here(pending.pop(0))
        while pending:
            current: CaseResult | None = None
            began = time.monotonic()
            try:
                async with _connect(session, workdir) as server:
                    listed = False
                    while pending:
                        current = pending.pop(0)
                        if report and session.stop_here(current):
                            current = None
                            continue
                        began = time.monotonic()
                        if not listed:  # every server lists exactly the contract's tools
                            listed = True
                            await _tools_list(session, server, current)
                        await _call(session, server, current, workdir)
                        _done(session, current, began, report)
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
                _done(session, case, began, report)
            except Exception as error:  # noqa: BLE001 -- a harness defect must not stop the run
                failed_case = current or (pending.pop(0) if pending else None)
                if failed_case is not None:
                    failed_case.error(f"harness error: {type(error).__name__}: {error}")
                    _done(session, failed_case, began, report)


def _done(session: RunSession, case: CaseResult, began: float, report: bool) -> None:
    if report:
        session.done(case, began)
    else:
        case.duration_ms = int((time.monotonic() - began) * 1000)


async def _tools_list(session: RunSession, server: McpConnection, case: CaseResult) -> None:
    """``tools/list`` of a fresh server holds the tools of tools.json, member for member
    (a check of the first case the server serves)."""
    result = await server.list_tools(session.options.step_timeout)
    listed = result.get("tools") if isinstance(result, dict) else None
    if not case.check(
        "mcp-tools-list-returned",
        isinstance(listed, list),
        f"tools/list answered {preview(result, 300)}",
    ):
        return
    assert isinstance(listed, list)
    observed = {t.get("name"): t for t in listed if isinstance(t, dict)}
    contract = {t["name"]: t for t in session.suite.tools.get("tools", ())}
    problems = tool_list_problems(observed, contract, whole=False)
    case.check("mcp-tools-list", not problems, "; ".join(problems))


async def _call(
    session: RunSession, server: McpConnection, case: CaseResult, workdir: Workdir
) -> None:
    vector = case.vector
    call = vector.data["call"]
    result = await server.call(
        call["tool"], call.get("arguments", NO_ARGUMENTS), session.options.step_timeout
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
        case.check("mcp-response", False, f"{result.detail}; stderr {preview(result.stderr, 400)}")
    elif "error" in response:
        case.check(
            "mcp-tool-result",
            False,
            f"a JSON-RPC error instead of a tool result: {preview(response, 300)}",
        )
    else:
        check_mcp_result(case, response.get("result"), expect, call["tool"], session.schemas)
    check_forbidden(
        case,
        [("MCP frames", b"\n".join(result.frames)), ("MCP stderr", result.stderr)],
        session.forbid(case, workdir),
    )
    if any(not c.passed for c in case.checks):
        case.evidence = {"response": response, "stderr": preview(result.stderr)}


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
