"""The CLI surface: each case one process of the implementation's CLI.

A case runs the vector's ``setup`` commands, then its command (an argv vector as written, a call
vector as ``call TOOL --arguments JSON``), optionally interrupted by a signal, and checks the exit
status, stdout (a result, a maintenance report) or stderr (the one-line error envelope), the
files the command may touch and that no output leaks a forbidden string (a maintenance report may
name the user's own paths, CG-CONF-5). ``signal``, ``cliStdout`` and ``setup`` are the vector
members of CG-CONF-4.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from ._json import dumps, preview
from .cases import CaseResult, check_cli_envelope, check_forbidden, check_result
from .matching import match
from .session import RunSession
from .workspace import Workdir

__all__ = ["run_cli_case"]


#: CLI commands that write a report for the host rather than a result for a caller.
_MAINTENANCE_COMMANDS: Final = frozenset(("doctor", "init", "mcp-install", "mcp-uninstall"))
#: The signals a vector may deliver to a CLI process.
_SIGNALS = {"SIGINT": signal.SIGINT}


async def run_cli_case(session: RunSession, case: CaseResult) -> None:
    await session.guarded(case, _cli)


async def _cli(session: RunSession, case: CaseResult) -> None:
    manifest = session.manifest
    assert manifest.cli is not None
    vector = case.vector
    expect = vector.expect_for("cli")
    files = expect.get("exit", {}).get("files", {})
    setup = vector.data.get("setup", [])
    # a command that may write files gets a folder of its own
    workdir = session.workspace.for_vector(
        vector, surface="cli", private=bool(files) or bool(setup)
    )
    config = str(workdir.config_path)
    for index, command in enumerate(setup):
        if not await _setup_command(session, case, workdir, index, command):
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
        process = await _spawn(
            session, argv, workdir, extra_env, _interruptible if signal_spec is not None else None
        )
    except OSError as error:
        case.error(f"cannot start the CLI {argv[0]!r}: {error}")
        return
    exchange = asyncio.ensure_future(process.communicate())
    if signal_spec is not None:
        await _deliver_signal(case, process, exchange, signal_spec)
    try:
        stdout, stderr = await asyncio.wait_for(exchange, session.options.process_timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        case.error(f"the CLI did not finish within {session.options.process_timeout:g} s")
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
            session.schemas,
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
                else session.suite.cli_tools.get(str(vector.data.get("argv", [""])[0]))
            )
            check_result(case, result, expect["result"], session.schemas, tool=tool)
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
                case.check("cli-stdout-json", False, f"stdout is not JSON: {preview(stdout, 300)}")
            else:
                if "stdoutSchema" in exit_expect:
                    problems = session.schemas.errors(exit_expect["stdoutSchema"], value)
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
        check_forbidden(case, [("CLI stderr", stderr)], session.forbid(case, workdir))
        check_forbidden(case, [("CLI stdout", stdout)], list(vector.forbid))
    else:
        check_forbidden(
            case, [("CLI stdout", stdout), ("CLI stderr", stderr)], session.forbid(case, workdir)
        )
    if any(not c.passed for c in case.checks):
        case.evidence = evidence


async def _spawn(
    session: RunSession,
    argv: Sequence[str | bytes],
    workdir: Workdir,
    extra_env: dict[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> asyncio.subprocess.Process:
    """Start the CLI in the case's folder (unless the manifest names one), output captured."""
    manifest = session.manifest
    assert manifest.cli is not None
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=manifest.cwd(manifest.cli) or str(workdir.path),
        env=session.environment(extra_env),
        preexec_fn=preexec_fn,
    )


async def _setup_command(
    session: RunSession, case: CaseResult, workdir: Workdir, index: int, command: list[str]
) -> bool:
    """Run one of the vector's ``setup`` commands (the same CLI, the same folder); it must
    exit 0. False when it did not (the case has failed)."""
    manifest = session.manifest
    assert manifest.cli is not None
    config = str(workdir.config_path)
    argv = manifest.expand(manifest.cli) + [a.replace("{config}", config) for a in command]
    try:
        process = await _spawn(session, argv, workdir)
    except OSError as error:
        case.error(f"setup[{index}]: cannot start the CLI {argv[0]!r}: {error}")
        return False
    try:
        stdout, stderr = await asyncio.wait_for(
            process.communicate(), session.options.process_timeout
        )
    except TimeoutError:
        process.kill()
        await process.wait()
        case.error(
            f"setup[{index}]: the CLI did not finish within {session.options.process_timeout:g} s"
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
