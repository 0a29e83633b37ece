"""The resume lock of a run: one live owner at a time, recoverable after crashes.

The lock is a folder created with ``mkdir`` (atomic); its winner writes ``owner.json``
``{"pid", "startedAt", "runId"}`` atomically into it. A contender that finds the folder:

* with a live owner -> LockError LOCK_BUSY (or, with ``wait``, polls; each poll is a retry);
* with a dead owner — no such process, a zombie, or a pid reused by a process that started
  after the lock was taken -> removes the folder and retries (takeovers are serialized by a
  second ``mkdir`` guard, ``lock.takeover``, and re-check the owner under it);
* without a readable owner.json -> polls up to ``owner_wait`` seconds for it; a folder older
  than ``stale_after`` seconds is stale and removed; otherwise LockError LOCK_OWNER_PENDING;

and after ``retries`` retries -> LockError LOCK_RETRY_EXHAUSTED.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from ._errors import LOCK_BUSY, LOCK_OWNER_PENDING, LOCK_RETRY_EXHAUSTED, LockError

__all__ = ["LockOwner", "ResumeLock"]

OWNER_FILE: Final = "owner.json"
_REUSE_TOLERANCE: Final = 2.0  # /proc/stat btime has a one-second resolution
_TAKEOVER_STALE: Final = 10.0  # a takeover guard older than this was left by a crash


def utc_now() -> str:
    """Now as ISO 8601 UTC with milliseconds: ``2025-01-31T12:00:00.000Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_time(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class LockOwner:
    """The content of owner.json."""

    pid: int
    started_at: str
    run_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "startedAt": self.started_at, "runId": self.run_id}


def read_owner(lock_dir: Path) -> LockOwner | None:
    """owner.json of ``lock_dir``, or None when it is missing or not a valid owner record."""
    try:
        data = json.loads((lock_dir / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    pid, started, run_id = data.get("pid"), data.get("startedAt"), data.get("runId")
    if type(pid) is not int or not isinstance(started, str) or not isinstance(run_id, str):
        return None
    return LockOwner(pid=pid, started_at=started, run_id=run_id)


def _proc_stat(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def _start_time(fields: list[bytes]) -> float | None:
    """Process start time (epoch seconds) from /proc/PID/stat fields (Linux)."""
    try:
        with open("/proc/stat", "rb") as f:
            btime = next(int(line.split()[1]) for line in f if line.startswith(b"btime "))
        return btime + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def owner_alive(owner: LockOwner) -> bool:
    """Whether the owner's process still runs and is the one that took the lock."""
    if owner.pid <= 0:
        return False
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    except OverflowError:
        return False
    fields = _proc_stat(owner.pid)
    if fields is None:
        return True  # no /proc: the signal probe is all we know
    if fields[0] == b"Z":
        return False
    started = _start_time(fields)
    locked = _parse_time(owner.started_at)
    return started is None or locked is None or started <= locked + _REUSE_TOLERANCE


class ResumeLock:
    """The resume lock folder at ``path`` (see the module documentation). Use ``acquire`` /
    ``release`` or ``with lock: ...``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        run_id: str,
        retries: int = 20,
        wait: bool = False,
        poll_interval: float = 0.05,
        owner_wait: float = 1.0,
        stale_after: float = 3600.0,
    ) -> None:
        self.path = Path(path)
        self.run_id = run_id
        self.retries = retries
        self.wait = wait
        self.poll_interval = poll_interval
        self.owner_wait = owner_wait
        self.stale_after = stale_after
        self.owner: LockOwner | None = None

    def _try_create(self) -> bool:
        try:
            self.path.mkdir()
        except FileExistsError:
            return False
        owner = LockOwner(pid=os.getpid(), started_at=utc_now(), run_id=self.run_id)
        tmp = self.path / f".{OWNER_FILE}.{uuid.uuid4().hex}.tmp"
        tmp.write_text(json.dumps(owner.to_dict()), encoding="utf-8")
        os.replace(tmp, self.path / OWNER_FILE)
        self.owner = owner
        return True

    def _take_over(self, still_stale: Callable[[], bool]) -> None:
        """Remove a dead or stale lock, one contender at a time: under a second ``mkdir``
        guard, and only if ``still_stale()`` holds once the guard is held (another contender
        may have replaced the lock since we looked)."""
        guard = self.path.with_name(f"{self.path.name}.takeover")
        try:
            guard.mkdir()
        except FileExistsError:
            with contextlib.suppress(OSError):
                if time.time() - guard.stat().st_mtime > _TAKEOVER_STALE:
                    guard.rmdir()  # a contender died mid-takeover
            time.sleep(self.poll_interval)
            return
        try:
            if not still_stale():
                return
            grave = self.path.with_name(f"{self.path.name}.stale-{uuid.uuid4().hex}")
            try:
                os.rename(self.path, grave)
            except FileNotFoundError:
                return
            shutil.rmtree(grave, ignore_errors=True)
        finally:
            with contextlib.suppress(OSError):
                guard.rmdir()

    def _owned_by(self, owner: LockOwner) -> bool:
        return read_owner(self.path) == owner

    def _age(self) -> float:
        try:
            return time.time() - self.path.stat().st_mtime
        except OSError:
            return 0.0

    def _await_owner(self) -> LockOwner | None:
        deadline = time.monotonic() + self.owner_wait
        while True:
            owner = read_owner(self.path)
            if owner is not None or not self.path.exists():
                return owner
            if time.monotonic() >= deadline:
                return None
            time.sleep(self.poll_interval)

    def acquire(self) -> LockOwner:
        """Take the lock (blocking while polling); return the owner record written."""
        for _attempt in range(self.retries + 1):
            if self._try_create():
                assert self.owner is not None
                return self.owner
            owner = read_owner(self.path)
            if owner is None:
                if self._age() > self.stale_after:
                    self._take_over(
                        lambda: read_owner(self.path) is None and self._age() > self.stale_after
                    )
                    continue
                owner = self._await_owner()
                if owner is None:
                    if not self.path.exists():
                        continue
                    raise LockError(
                        f"run {self.run_id!r}: the lock has no owner.json yet "
                        f"(waited {self.owner_wait:g}s); another process may be taking it",
                        code=LOCK_OWNER_PENDING,
                    )
            if owner_alive(owner):
                if not self.wait:
                    raise LockError(
                        f"run {self.run_id!r} is locked by live process {owner.pid} "
                        f"(since {owner.started_at})",
                        code=LOCK_BUSY,
                    )
                time.sleep(self.poll_interval)
                continue
            self._take_over(functools.partial(self._owned_by, owner))
        raise LockError(
            f"run {self.run_id!r}: could not take the lock after {self.retries} retries",
            code=LOCK_RETRY_EXHAUSTED,
        )

    def release(self) -> None:
        """Remove the lock if this object holds it (a lock taken over by others is left)."""
        if self.owner is None:
            return
        if read_owner(self.path) == self.owner:
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(self.path)
        self.owner = None

    def __enter__(self) -> ResumeLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
