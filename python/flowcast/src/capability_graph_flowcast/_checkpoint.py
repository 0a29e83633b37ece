"""Checkpoints: resumable runs made of named steps.

A run lives in ``BASE_DIR/.flowcast/runs/RUN_ID/``:

* ``state.json`` — ``{"version", "runId", "status", "createdAt", "updatedAt", "steps",
  "pause"?, "result"?}``, replaced atomically (temp file + rename; the previous version is kept
  as ``state.json.bak`` and read if ``state.json`` is unreadable);
* ``run.log.jsonl`` — one JSON event per line (start, resume, step-start, step-done,
  step-skip, step-error, record, pause, done);
* ``results/`` — step results larger than ``large_result_bytes``;
* ``lock/`` — the resume lock (``owner.json``), taken by ``with`` / ``async with``.

Schemas: ``spec/flowcast/schemas/checkpoint-state.schema.json``, ``run-log-event.schema.json``
and ``lock-owner.schema.json``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Final, NoReturn, TypeVar, overload

from ._errors import STEP_REENTRY, FlowcastError, PauseSignal, _jsonable, error_to_dict
from ._lock import ResumeLock, utc_now
from ._paths import assert_safe_ident
from ._sync import maybe_await

__all__ = ["Checkpoint"]

T = TypeVar("T")

STATE_FILE: Final = "state.json"
BACKUP_FILE: Final = "state.json.bak"
LOG_FILE: Final = "run.log.jsonl"
RESULTS_DIR: Final = "results"
LOCK_DIR: Final = "lock"
STATE_VERSION: Final = 1


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class Checkpoint:
    """A resumable run. Completed steps are skipped (their recorded result is returned) when
    a run with the same ``run_id`` is opened again under the same ``base_dir`` (default: the
    current directory). ``run_id`` must be a safe identifier (PathError otherwise)."""

    def __init__(
        self,
        run_id: str,
        *,
        base_dir: str | os.PathLike[str] | None = None,
        large_result_bytes: int = 64 * 1024,
    ) -> None:
        self.run_id = assert_safe_ident(run_id, "run_id")
        root = Path(base_dir) if base_dir is not None else Path.cwd()
        self.dir = root / ".flowcast" / "runs" / run_id
        self.large_result_bytes = large_result_bytes
        self._running: set[str] = set()
        self._lock: ResumeLock | None = None
        self.resumed = False
        self._opened: dict[str, Any] | None = None

    @property
    def _state(self) -> dict[str, Any]:
        """The run's state, opened (created or resumed) on first use: after the resume lock
        when the checkpoint is used with ``with``."""
        if self._opened is None:
            self._opened = self._open()
        return self._opened

    @_state.setter
    def _state(self, value: dict[str, Any]) -> None:
        self._opened = value

    # -- state ---------------------------------------------------------------------------

    def _load(self) -> dict[str, Any] | None:
        for name in (STATE_FILE, BACKUP_FILE):
            data = _read_json(self.dir / name)
            if isinstance(data, dict) and isinstance(data.get("steps"), dict):
                return data
        return None

    def _open(self) -> dict[str, Any]:
        self.dir.mkdir(parents=True, exist_ok=True)
        state = self._load()
        if state is None:
            now = utc_now()
            state = {
                "version": STATE_VERSION,
                "runId": self.run_id,
                "status": "running",
                "createdAt": now,
                "updatedAt": now,
                "steps": {},
            }
            self._state = state
            self._save()
            self._log("start")
            return state
        previous = state.get("status")
        self.resumed = True
        self._state = state
        if previous == "paused":
            state["status"] = "running"
            state.pop("pause", None)
            self._save()
        self._log("resume", previousStatus=previous, completed=len(state["steps"]))
        return state

    def _save(self) -> None:
        self._state["updatedAt"] = utc_now()
        state_path = self.dir / STATE_FILE
        if state_path.exists():
            backup_tmp = self.dir / f".{BACKUP_FILE}.{uuid.uuid4().hex}.tmp"
            shutil.copyfile(state_path, backup_tmp)
            os.replace(backup_tmp, self.dir / BACKUP_FILE)
        _write_atomic(state_path, json.dumps(self._state, ensure_ascii=False, indent=1))

    def _log(self, event: str, **fields: Any) -> None:
        line = {"ts": utc_now(), "runId": self.run_id, "event": event} | fields
        with open(self.dir / LOG_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(_jsonable(line), ensure_ascii=False) + "\n")

    @property
    def status(self) -> str:
        """``running``, ``paused`` or ``done``."""
        return str(self._state["status"])

    @property
    def state_path(self) -> Path:
        return self.dir / STATE_FILE

    @property
    def log_path(self) -> Path:
        return self.dir / LOG_FILE

    # -- steps ---------------------------------------------------------------------------

    def has(self, key: str) -> bool:
        """Whether step ``key`` has completed (in this run or an earlier attempt of it)."""
        return key in self._state["steps"]

    def result(self, key: str) -> Any:
        """The recorded result of completed step ``key`` (KeyError if it has not completed)."""
        entry = self._state["steps"][key]
        if "resultFile" in entry:
            return _read_json(self.dir / entry["resultFile"])
        return entry.get("result")

    def record(self, key: str, value: Any = None) -> None:
        """Mark step ``key`` completed with ``value`` (JSON data) without running anything."""
        self._store(key, value)
        self._log("record", key=key)

    def _store(self, key: str, value: Any) -> None:
        if not isinstance(key, str) or not key:
            raise ValueError("a step key must be a non-empty string")
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        entry: dict[str, Any] = {"status": "done", "at": utc_now()}
        if len(text.encode()) > self.large_result_bytes:
            name = hashlib.sha256(key.encode()).hexdigest()[:32] + ".json"
            (self.dir / RESULTS_DIR).mkdir(exist_ok=True)
            _write_atomic(self.dir / RESULTS_DIR / name, text)
            entry["resultFile"] = f"{RESULTS_DIR}/{name}"
        else:
            entry["result"] = json.loads(text)
        self._state["steps"][key] = entry
        self._save()

    def _begin(self, key: str) -> bool:
        """True when the step must run; False when its result is recorded already."""
        if key in self._running:
            raise FlowcastError(
                f"step {key!r} of run {self.run_id!r} is already running", code=STEP_REENTRY
            )
        if self.has(key):
            self._log("step-skip", key=key)
            return False
        self._running.add(key)
        self._log("step-start", key=key)
        return True

    def _failed(self, key: str, exc: BaseException) -> None:
        if not isinstance(exc, PauseSignal):
            self._log("step-error", key=key, error=error_to_dict(exc))

    @overload
    async def step(self, key: str, fn: Callable[[], Awaitable[T]]) -> T: ...

    @overload
    async def step(self, key: str, fn: Callable[[], T]) -> T: ...

    async def step(self, key: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` (plain or async, no arguments) as step ``key`` and record its result
        (JSON data); on resume, return the recorded result without running it. A second call
        of a step that is still running raises FlowcastError STEP_REENTRY. A failing step is
        logged and not recorded, so it runs again on resume."""
        if not self._begin(key):
            return self.result(key)
        try:
            value = await maybe_await(fn())
            self._store(key, value)
        except BaseException as exc:
            self._failed(key, exc)
            raise
        finally:
            self._running.discard(key)
        self._log("step-done", key=key)
        return value

    def step_sync(self, key: str, fn: Callable[[], T]) -> T:
        """Blocking twin of ``step`` (``fn`` is a plain function)."""
        if not self._begin(key):
            return self.result(key)  # type: ignore[no-any-return]
        try:
            value = fn()
            self._store(key, value)
        except BaseException as exc:
            self._failed(key, exc)
            raise
        finally:
            self._running.discard(key)
        self._log("step-done", key=key)
        return value

    def pause(self, reason: str, context: Mapping[str, Any] | None = None) -> NoReturn:
        """Save the run as paused and raise PauseSignal(reason, context); the flow's entry
        point decides what happens next. Opening the run again resumes it."""
        signal = PauseSignal(reason, context)
        self._state["status"] = "paused"
        self._state["pause"] = {"reason": reason, "context": _jsonable(signal.pause_context)}
        self._save()
        self._log("pause", reason=reason)
        raise signal

    def done(self, result: Any = None) -> None:
        """Mark the run finished, with an optional final result (JSON data)."""
        self._state["status"] = "done"
        self._state["result"] = _jsonable(result)
        self._save()
        self._log("done")

    # -- the resume lock -----------------------------------------------------------------

    def resume_lock(self, **options: Any) -> ResumeLock:
        """The resume lock of this run (options as for ResumeLock: retries, wait, ...)."""
        return ResumeLock(self.dir / LOCK_DIR, run_id=self.run_id, **options)

    def _locked(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = self.resume_lock()
        self._lock.acquire()
        self._opened = self._open()

    def _unlock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> Checkpoint:
        self._locked()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._unlock()

    async def __aenter__(self) -> Checkpoint:
        await asyncio.to_thread(self._locked)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._unlock()
