"""Spawning processes: capture merged output, enforce timeouts on whole process trees.

Why one module of this size: spawn, capture, timeout and kill share one process group's
lifecycle, which is easiest to check read together.

Every child runs in a new session (so a new process group whose id is its pid). A timeout —
or the cancellation of the awaiting task — terminates the *group*: SIGTERM, then SIGKILL to
whatever is still alive after ``kill_grace`` seconds; the child is reaped before the call
returns or the cancellation propagates. A descendant that starts its own session leaves the
group and is out of reach (POSIX only; Windows is not supported).

A call returns when the child has exited *and* its output pipe is closed: a background
descendant that keeps the pipe open keeps the call waiting (up to ``timeout``), as in Node's
``close`` event. With ``stop_group=True`` the group is stopped (TERM, KILL after
``kill_grace``) as soon as the child exits, whatever its exit status, so that nothing it left
running survives the call or holds the pipe open.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._errors import SpawnError, TimeoutError
from ._sync import run_blocking

__all__ = [
    "DEFAULT_KILL_GRACE",
    "MAX_OUTPUT_BYTES",
    "TRUNCATION_MARKER",
    "SpawnResult",
    "spawn_capture",
    "spawn_capture_sync",
    "spawn_cli",
    "spawn_cli_sync",
]

MAX_OUTPUT_BYTES: Final = 16 * 1024 * 1024
"""Output kept per process (stdout and stderr together); the rest is read and dropped."""
TRUNCATION_MARKER: Final = "\n[output truncated]"
"""Appended once to output that went over MAX_OUTPUT_BYTES."""
DEFAULT_KILL_GRACE: Final = 5.0
"""Seconds between SIGTERM and SIGKILL when a process tree is terminated."""

_TAIL_CHARS: Final = 500
_POLL_FIRST: Final = 0.005
_POLL_MAX: Final = 0.05
_KILL_SETTLE: Final = 1.0

StrPath = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class SpawnResult:
    """What ``spawn_capture`` observed. It never raises for a process that misbehaves.

    ``stdout`` is stdout and stderr merged in arrival order (capped, see MAX_OUTPUT_BYTES);
    ``exit_code`` is None when the process never started, negative (``-signum``) when a signal
    ended it; ``spawn_error`` is the errno name (``"ENOENT"``, ``"EACCES"``...) when it could not
    start at all; ``truncated`` says whether the truncation marker was appended.
    """

    stdout: str
    exit_code: int | None
    timed_out: bool
    spawn_error: str | None = None
    truncated: bool = False


class _Capture:
    def __init__(self, limit: int) -> None:
        self._chunks: list[bytes] = []
        self._room = limit
        self.truncated = False

    def feed(self, data: bytes) -> None:
        if self.truncated:
            return
        if len(data) > self._room:
            self._chunks.append(data[: self._room])
            self._room = 0
            self.truncated = True
        else:
            self._chunks.append(data)
            self._room -= len(data)

    def text(self) -> str:
        text = b"".join(self._chunks).decode("utf-8", errors="replace")
        return text + TRUNCATION_MARKER if self.truncated else text


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, capture: _Capture, loop: asyncio.AbstractEventLoop) -> None:
        self._capture = capture
        self.exited: asyncio.Future[None] = loop.create_future()
        self.stdout_closed: asyncio.Future[None] = loop.create_future()
        self.finished: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if isinstance(data, bytes):
            self._capture.feed(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            _resolve(self.stdout_closed)
            self._maybe_finished()

    def process_exited(self) -> None:
        _resolve(self.exited)
        self._maybe_finished()

    def _maybe_finished(self) -> None:
        if self.exited.done() and self.stdout_closed.done():
            _resolve(self.finished)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _errno_name(exc: OSError) -> str:
    if exc.errno is not None and exc.errno in errno.errorcode:
        return errno.errorcode[exc.errno]
    return type(exc).__name__


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is still running (zombies do not count).

    On Linux /proc is scanned, so that zombies left to a non-reaping init are not mistaken for
    survivors; elsewhere ``killpg(pgid, 0)`` decides.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            return True
    return False


async def _terminate(
    protocol: _Protocol, transport: asyncio.SubprocessTransport, pgid: int, grace: float
) -> None:
    """TERM the group, KILL it after ``grace`` if anything survives, reap the leader."""
    loop = asyncio.get_running_loop()
    _signal_group(pgid, signal.SIGTERM)
    deadline = loop.time() + grace
    delay = _POLL_FIRST
    while True:
        if protocol.exited.done() and not group_alive(pgid):
            break
        if loop.time() >= deadline:
            _signal_group(pgid, signal.SIGKILL)
            break
        await asyncio.sleep(min(delay, max(deadline - loop.time(), 0)))
        delay = min(delay * 2, _POLL_MAX)
    await protocol.exited
    # SIGKILL is delivered asynchronously: wait (briefly) until the group is really gone.
    settle = loop.time() + _KILL_SETTLE
    while group_alive(pgid) and loop.time() < settle:
        await asyncio.sleep(_POLL_FIRST)
    # The group is gone; a descendant that left it may still hold the pipe: wait briefly.
    await asyncio.wait([protocol.stdout_closed], timeout=max(grace, 0.1))


async def _abort_start(start: asyncio.Future[Any], grace: float) -> None:
    """The caller was cancelled while the process was starting: once it has started, kill
    its tree (if it could not start, there is nothing to do)."""
    try:
        transport, protocol = await start
    except (OSError, ValueError):
        return
    try:
        await _terminate(protocol, transport, transport.get_pid(), grace)
    finally:
        transport.close()


async def _uninterruptible(coro: Any) -> None:
    """Run cleanup to completion even if the awaiting task is cancelled again meanwhile."""
    task = asyncio.ensure_future(coro)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                break
            cancelled = True
    task.result()
    if cancelled:
        raise asyncio.CancelledError


def _argv(cmd: StrPath, args: Sequence[StrPath]) -> list[str]:
    if isinstance(args, str | bytes):
        raise TypeError("args must be a sequence of arguments, not a single string")
    return [os.fspath(cmd), *(os.fspath(a) for a in args)]


def _check_timing(timeout: float | None, kill_grace: float) -> None:
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    if not kill_grace >= 0:
        raise ValueError(f"kill_grace must be >= 0 seconds, not {kill_grace!r}")


async def spawn_capture(
    cmd: StrPath,
    args: Sequence[StrPath] = (),
    *,
    cwd: StrPath | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | bytes | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
    stop_group: bool = False,
) -> SpawnResult:
    """Run ``cmd args...`` and capture its merged output. Never raises for the process's sake.

    ``env`` replaces the environment (as with ``subprocess``; ``cmd`` is looked up on its
    ``PATH``); ``stdin`` is written then closed (default: /dev/null). On ``timeout`` seconds the
    process tree is terminated (TERM, KILL after ``kill_grace``) and ``timed_out`` is True. If
    the awaiting task is cancelled, the tree is terminated and reaped the same way before
    CancelledError propagates. With ``stop_group`` the tree is also terminated the same way as
    soon as the process exits (successfully or not): a background descendant neither survives
    the call nor keeps it waiting by holding the output pipe.
    """
    argv = _argv(cmd, args)
    _check_timing(timeout, kill_grace)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    loop = asyncio.get_running_loop()
    capture = _Capture(MAX_OUTPUT_BYTES)
    start = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: _Protocol(capture, loop),
            *argv,
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    )
    try:
        # Shielded: cancelled while starting, we still get the transport and kill the tree.
        transport, protocol = await asyncio.shield(start)
    except asyncio.CancelledError:
        await _uninterruptible(_abort_start(start, kill_grace))
        raise
    except OSError as exc:
        return SpawnResult(stdout="", exit_code=None, timed_out=False, spawn_error=_errno_name(exc))
    except ValueError:  # an embedded NUL byte in argv, cwd or env
        return SpawnResult(stdout="", exit_code=None, timed_out=False, spawn_error="EINVAL")
    pgid = transport.get_pid()
    timed_out = False
    try:
        if data is not None:
            pipe = transport.get_pipe_transport(0)
            if pipe is not None:
                pipe.write(data)  # type: ignore[attr-defined]
                pipe.close()
        ended = protocol.exited if stop_group else protocol.finished
        try:
            done, _ = await asyncio.wait([ended], timeout=timeout)
        except asyncio.CancelledError:
            await _uninterruptible(_terminate(protocol, transport, pgid, kill_grace))
            raise
        if not done:
            timed_out = True
            await _uninterruptible(_terminate(protocol, transport, pgid, kill_grace))
        elif stop_group and (not protocol.finished.done() or group_alive(pgid)):
            # The process exited and left something in its group (or the pipe still open):
            # stopped as on a timeout, but the outcome is the process's own.
            await _uninterruptible(_terminate(protocol, transport, pgid, kill_grace))
        return SpawnResult(
            stdout=capture.text(),
            exit_code=transport.get_returncode(),
            timed_out=timed_out,
            truncated=capture.truncated,
        )
    finally:
        transport.close()


def _describe_spawn_error(name: str) -> str:
    number = getattr(errno, name, None)
    if isinstance(number, int):
        return f"{os.strerror(number)} ({name})"
    return name


def raise_for_result(cli: str, result: SpawnResult, timeout: float | None) -> str:
    """Turn a SpawnResult into ``stdout`` or the error ``spawn_cli`` raises, in this order:
    could not start -> SpawnError; timed out -> TimeoutError; non-zero -> SpawnError."""
    if result.spawn_error is not None:
        raise SpawnError(
            f"cannot start '{cli}': {_describe_spawn_error(result.spawn_error)}",
            spawn_error=result.spawn_error,
        )
    if result.timed_out:
        raise TimeoutError(f"'{cli}' timed out after {timeout:g}s")
    code = result.exit_code
    if code != 0:
        if code is not None and code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        tail = result.stdout[-_TAIL_CHARS:].strip()
        raise SpawnError(
            f"'{cli}' {how}: {tail}" if tail else f"'{cli}' {how}",
            exit_code=code,
            output=result.stdout,
        )
    return result.stdout


async def spawn_cli(
    cli: StrPath,
    args: Sequence[StrPath] = (),
    *,
    cwd: StrPath | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | bytes | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
    stop_group: bool = False,
) -> str:
    """Run a CLI and return its (merged, capped) output, or raise.

    Raises SpawnError with ``spawn_error`` set (e.g. ``"ENOENT"``) when it cannot start,
    TimeoutError when it runs past ``timeout`` (its process tree is killed), SpawnError with
    ``exit_code`` and ``output`` when it exits non-zero; the message ends with the last 500
    characters of output, so ``is_retryable`` can see a CLI's "rate limit" complaint. Parameters
    as for ``spawn_capture``; cancellation kills the process tree too.
    """
    result = await spawn_capture(
        cli,
        args,
        cwd=cwd,
        timeout=timeout,
        env=env,
        stdin=stdin,
        kill_grace=kill_grace,
        stop_group=stop_group,
    )
    return raise_for_result(os.fspath(cli), result, timeout)


def spawn_capture_sync(
    cmd: StrPath,
    args: Sequence[StrPath] = (),
    *,
    cwd: StrPath | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | bytes | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
    stop_group: bool = False,
) -> SpawnResult:
    """Blocking twin of ``spawn_capture``."""
    return run_blocking(
        spawn_capture,
        cmd,
        args,
        cwd=cwd,
        timeout=timeout,
        env=env,
        stdin=stdin,
        kill_grace=kill_grace,
        stop_group=stop_group,
    )


def spawn_cli_sync(
    cli: StrPath,
    args: Sequence[StrPath] = (),
    *,
    cwd: StrPath | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | bytes | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
    stop_group: bool = False,
) -> str:
    """Blocking twin of ``spawn_cli``."""
    return run_blocking(
        spawn_cli,
        cli,
        args,
        cwd=cwd,
        timeout=timeout,
        env=env,
        stdin=stdin,
        kill_grace=kill_grace,
        stop_group=stop_group,
    )
