"""The match pipeline after the catalog is built: run the executor, bound it, validate, project.

Why one module of this size: the four stop conditions of a match and the projection of each
outcome are one state machine.

:func:`run_match` runs one executor call under four stop conditions and answers with exactly one
outcome (spec/capability-graph/executors.md, "Running a match"):

* the executor's result arrived -> it is validated (:func:`validate_executor_output`);
* the executor raised -> :func:`project_executor_failure` (CG-MODEL-5, CG-MODEL-6);
* ``job.deadline`` passed -> ``CG_MODEL_TIMEOUT``;
* the caller's :class:`CancelToken` fired -> ``CG_MODEL_CANCELLED``;
* the graph's stop signal fired (``close()``) -> ``CG_GRAPH_CLOSED``/``lifecycle``.

When several hold at the moment the runner looks, ``close`` wins over cancel, cancel over a
result, and a result that is already there over the deadline. In every case but a result the
executor task is cancelled (so a subprocess tree is killed and connections are closed) and the
runner waits for that cancellation to finish before it answers — so when the error reaches the
caller the work has stopped, even if the caller then closes its event loop at once — for at most
``CLEANUP_LIMIT_S``; a result that arrives meanwhile is never looked at. Every GraphError is
raised ``from None``: the raw cause is never chained to what the caller sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import math
import threading
import time
from collections.abc import Callable, Collection, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, NoReturn, TypeAlias

from .._generated.taxonomy import REGISTRY, ErrorCode, NextAction, Phase
from .cancel import CancelToken
from .errors import GraphError
from .executors import Executor
from .executors.job import MatchJob
from .json import dump_bytes

__all__ = [
    "MODEL_CODES",
    "MatchOutcome",
    "MatchStatus",
    "StopSignal",
    "project_executor_failure",
    "run_match",
    "validate_executor_output",
]

MatchStatus: TypeAlias = Literal["matched", "no_match", "unknown"]
StopSignal: TypeAlias = "CancelToken | asyncio.Event | asyncio.Future[Any]"

#: The codes an executor may raise and keep (every ``CG_MODEL_*`` code of the registry).
MODEL_CODES: Final = frozenset(code for code in ErrorCode if code.value.startswith("CG_MODEL_"))

#: A candidate's ``reason``: 1..1024 characters (match-candidate.schema.json).
MAX_REASON: Final = 1024
_STATUSES: Final = frozenset(("matched", "no_match", "unknown"))
_RESULT_KEYS: Final = frozenset(("status", "candidates"))
_CANDIDATE_KEYS: Final = frozenset(("id", "confidence", "reason"))

#: How long the runner waits for a cancelled executor task to finish its cleanup (killing a
#: process tree, closing connections) before it answers anyway; the cleanup then goes on in the
#: background and its result is discarded. Well-behaved executors stop within milliseconds.
CLEANUP_LIMIT_S: Final = 10.0

# Cancelled executor tasks that outlived CLEANUP_LIMIT_S, kept alive until they finish.
_ORPHANS: set[asyncio.Future[Any]] = set()


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """A validated executor answer: ``candidates`` are ``{id, confidence[, reason]}`` dicts."""

    status: MatchStatus
    candidates: list[dict[str, Any]]


def _error(code: ErrorCode, action: NextAction | None = None) -> GraphError:
    entry = REGISTRY[code]
    phase = Phase.MATCH if Phase.MATCH in entry.phases else entry.phases[0]
    return GraphError(
        code,
        phase,
        entry.messages["default"],
        entry.default_action if action is None else action,
    )


def _plain_str(value: object) -> str | None:
    """``value`` as an exact ``str`` (a subclass cannot run code in comparisons), else None."""
    return str.__str__(value) if isinstance(value, str) else None


def _attribute(exc: BaseException, name: str) -> object:
    try:
        return getattr(exc, name, None)
    except Exception:  # noqa: BLE001 -- a foreign exception's property may raise: absent
        return None


def project_executor_failure(exc: BaseException) -> GraphError:
    """Project anything an executor raised into the ``CG_MODEL_*`` error the caller sees.

    An *executor error* is any exception with a string ``code`` attribute (GraphError included)
    and an optional ``next_action`` (or ``nextAction``). A ``CG_MODEL_*`` code is kept; its
    nextAction is kept only if it is the code's default or one of the code's ``executorActions``,
    else the default replaces it (so a missing, unknown or illegal action falls back by code).
    Any other code, a code that is not a string, and a plain exception become
    ``CG_MODEL_UNAVAILABLE`` + ``retry``. The message is always the registry's safe message and
    the phase is always ``match``: no text of ``exc`` survives.
    """
    code_text = _plain_str(_attribute(exc, "code"))
    code = ErrorCode(code_text) if code_text in _CODES else None
    if code is None or code not in MODEL_CODES:
        return _error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)
    entry = REGISTRY[code]
    raw_action = _attribute(exc, "next_action")
    if raw_action is None:
        raw_action = _attribute(exc, "nextAction")
    action_text = _plain_str(raw_action)
    action = NextAction(action_text) if action_text in _ACTIONS else None
    if action is None or (action != entry.default_action and action not in entry.executor_actions):
        action = entry.default_action
    return _error(code, action)


_CODES: Final = frozenset(code.value for code in ErrorCode)
_ACTIONS: Final = frozenset(action.value for action in NextAction)


def validate_executor_output(
    raw: object,
    *,
    authorized_ids: Container[str],
    limit: int,
    max_output_bytes: int,
) -> MatchOutcome:
    """Check an executor's raw output; return the outcome or raise its error (CG-MODEL-8).

    Checks, in this order (the first failure wins):

    1. ``raw`` is JSON data (objects with string keys, arrays, strings, finite numbers, booleans,
       null), else ``CG_MODEL_OUTPUT_INVALID``;
    2. its compact UTF-8 JSON serialization is at most ``max_output_bytes``, else
       ``CG_MODEL_OUTPUT_TOO_LARGE``;
    3. the shape, for the whole document, else ``CG_MODEL_OUTPUT_INVALID``: an object with exactly
       ``status`` and ``candidates``; ``status`` one of matched / no_match / unknown;
       ``candidates`` an array of at most ``limit`` objects with a string ``id``, a number
       ``confidence`` in [0, 1], an optional ``reason`` of 1..1024 characters and no other
       key; ``matched`` has at least one candidate, ``no_match`` and ``unknown`` have none;
    4. the selection, candidate by candidate: each ``id`` is in ``authorized_ids`` and appears
       once, else ``CG_MODEL_INVALID_SELECTION``.
    """
    try:
        # json.dumps refuses what is not JSON data; the size is the compact serialization's,
        # numbers as RFC 8785 writes them (CG-BUD-9), as every implementation measures it.
        json.dumps(raw, ensure_ascii=False, allow_nan=False).encode("utf-8")
        size = len(dump_bytes(raw))
    except (TypeError, ValueError, RecursionError):  # not JSON data, NaN, lone surrogate, cycle
        raise _error(ErrorCode.CG_MODEL_OUTPUT_INVALID) from None
    if size > max_output_bytes:
        raise _error(ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE)
    status, candidates = _check_shape(raw, limit)
    seen: set[str] = set()
    for candidate in candidates:
        if candidate["id"] not in authorized_ids or candidate["id"] in seen:
            raise _error(ErrorCode.CG_MODEL_INVALID_SELECTION)
        seen.add(candidate["id"])
    return MatchOutcome(status, candidates)


def _check_shape(raw: object, limit: int) -> tuple[MatchStatus, list[dict[str, Any]]]:
    invalid = _error(ErrorCode.CG_MODEL_OUTPUT_INVALID)
    if not isinstance(raw, Mapping) or set(raw) != _RESULT_KEYS:
        raise invalid
    status = _plain_str(raw["status"])
    items = raw["candidates"]
    if status not in _STATUSES or not isinstance(items, list | tuple) or len(items) > limit:
        raise invalid
    candidates: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, Mapping) or not _CANDIDATE_KEYS.issuperset(item):
            raise invalid
        ident = _plain_str(item.get("id"))
        confidence = item.get("confidence")
        if (
            ident is None
            or isinstance(confidence, bool)
            or not isinstance(confidence, int | float)
            or not (math.isfinite(confidence) and 0 <= confidence <= 1)
        ):
            raise invalid
        # A confidence is a float on every surface (1 is 1.0), as the generated public type
        # (MatchCandidate) holds it: the SDK's typed result and call() write the same JSON.
        candidate: dict[str, Any] = {"id": ident, "confidence": float(confidence)}
        if "reason" in item:
            reason = _plain_str(item["reason"])
            if reason is None or not 1 <= len(reason) <= MAX_REASON:
                raise invalid
            candidate["reason"] = reason
        candidates.append(candidate)
    if (status == "matched") != bool(candidates):
        raise invalid
    return status, candidates  # type: ignore[return-value]  # status is one of _STATUSES


class _CatalogIds(Container[str]):
    """``id in catalog``, with the id set built only when a candidate needs checking (and
    reused across matches for a catalog passed as the same tuple, which cannot change)."""

    def __init__(self, catalog: Sequence[Mapping[str, Any]]) -> None:
        self._catalog = catalog
        self._ids: Collection[str] | None = None

    def __contains__(self, item: object) -> bool:
        if self._ids is None:
            self._ids = _catalog_id_set(self._catalog)
        return item in self._ids


_ID_SETS: list[tuple[Sequence[Mapping[str, Any]], frozenset[str]]] = []
_ID_SETS_LOCK: Final = threading.Lock()


def _catalog_id_set(catalog: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    if type(catalog) is not tuple:
        return frozenset(entry["id"] for entry in catalog)
    with _ID_SETS_LOCK:
        for cached, ids in _ID_SETS:
            if cached is catalog:
                return ids
    ids = frozenset(entry["id"] for entry in catalog)
    with _ID_SETS_LOCK:
        _ID_SETS.insert(0, (catalog, ids))
        del _ID_SETS[4:]
    return ids


async def run_match(
    executor: Executor | None,
    job: MatchJob,
    *,
    cancel: CancelToken | None,
    max_output_bytes: int,
    stop: StopSignal | None = None,
) -> MatchOutcome:
    """Run ``executor`` on ``job`` under the deadline, the caller's token and the stop signal.

    ``executor`` None is ``CG_MODEL_NOT_CONFIGURED``. ``stop`` is the graph's close signal (a
    :class:`CancelToken`, which may be set from any thread, an ``asyncio.Event`` or a future of
    the running loop). If the coroutine running ``run_match`` is itself cancelled, the executor
    is stopped the same way and ``CancelledError`` propagates.
    """
    if executor is None:
        raise _error(ErrorCode.CG_MODEL_NOT_CONFIGURED)
    interrupted = _Interrupt(asyncio.get_running_loop(), cancel, stop)
    try:
        if interrupted.stopped():
            raise _error(ErrorCode.CG_GRAPH_CLOSED)
        if cancel is not None and cancel.cancelled:
            raise _error(ErrorCode.CG_MODEL_CANCELLED)
        remaining = job.deadline - time.monotonic()
        if remaining <= 0:
            raise _error(ErrorCode.CG_MODEL_TIMEOUT)
        job = dataclasses.replace(job, max_output_bytes=max_output_bytes)
        raw = await _run_executor(executor, job, interrupted, remaining)
    finally:
        interrupted.close()
    return validate_executor_output(
        raw,
        authorized_ids=_CatalogIds(job.catalog),
        limit=job.limit,
        max_output_bytes=max_output_bytes,
    )


async def _run_executor(
    executor: Executor, job: MatchJob, interrupted: _Interrupt, remaining: float
) -> object:
    projected: GraphError | None = None
    try:
        call: object = executor.match(job)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 -- a foreign executor failing synchronously
        projected = project_executor_failure(exc)
    if projected is not None:
        # Raised outside the except block: the raw exception is not even the __context__.
        raise projected
    if not inspect.isawaitable(call):  # tolerated: a foreign executor with a plain ``match``
        return call
    task = asyncio.ensure_future(call)
    try:
        await asyncio.wait(
            (task, interrupted.future), timeout=remaining, return_when=asyncio.FIRST_COMPLETED
        )
    except asyncio.CancelledError:  # the task running the match was cancelled
        await _stop_then_raise(task, interrupted, None)
    if interrupted.stopped():
        await _stop_then_raise(task, interrupted, ErrorCode.CG_GRAPH_CLOSED)
    if interrupted.cancelled():
        await _stop_then_raise(task, interrupted, ErrorCode.CG_MODEL_CANCELLED)
    if not task.done():
        await _stop_then_raise(task, interrupted, ErrorCode.CG_MODEL_TIMEOUT)
    if task.cancelled():  # the executor cancelled itself: an executor failure like any other
        raise _error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)
    failure = task.exception()
    if failure is not None:
        raise project_executor_failure(failure) from None
    return task.result()


async def _stop_then_raise(
    task: asyncio.Future[Any], interrupted: _Interrupt, code: ErrorCode | None
) -> NoReturn:
    """Stop the executor, then raise ``code`` (None: re-raise the CancelledError being handled).

    If the task running the match is cancelled — by the caller, or because the graph's owner
    tears its event loop down right after ``close()`` — while the graph is closed, the answer is
    still ``CG_GRAPH_CLOSED``: an active match is terminated at close with that error (CG-LIFE-9).
    """
    try:
        await _stop(task)
    except asyncio.CancelledError:
        if interrupted.stopped():
            raise _error(ErrorCode.CG_GRAPH_CLOSED) from None
        raise
    if code is None:
        if interrupted.stopped():
            raise _error(ErrorCode.CG_GRAPH_CLOSED) from None
        raise asyncio.CancelledError
    raise _error(code)


async def _stop(task: asyncio.Future[Any]) -> None:
    """Cancel the executor task and wait (bounded) until its cleanup has finished."""
    if not task.done():
        task.cancel()
        try:
            await asyncio.wait((task,), timeout=CLEANUP_LIMIT_S)
        except asyncio.CancelledError:
            _adopt(task)
            raise
    if task.done():
        _consume(task)
    else:
        _adopt(task)


def _adopt(task: asyncio.Future[Any]) -> None:
    """Keep a still-running executor task alive (and its late outcome unused) until it ends."""
    if task.done():
        _consume(task)
        return
    _ORPHANS.add(task)
    task.add_done_callback(_orphan_done)


def _consume(task: asyncio.Future[Any]) -> None:
    # Retrieve (and drop) a late exception so asyncio never logs it as "never retrieved".
    if not task.cancelled():
        task.exception()


def _orphan_done(task: asyncio.Future[Any]) -> None:
    _ORPHANS.discard(task)
    _consume(task)


class _Interrupt:
    """One future of the running loop, resolved by the cancel token or the stop signal."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        cancel: CancelToken | None,
        stop: StopSignal | None,
    ) -> None:
        self.future: asyncio.Future[None] = loop.create_future()
        self._cancel = cancel
        self._stop = stop
        self._cleanups: list[Callable[[], None]] = []
        self._loop = loop

        def wake_threadsafe() -> None:
            # A closed loop raises RuntimeError: then nobody waits any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake)

        if cancel is not None:
            self._cleanups.append(cancel.add_callback(wake_threadsafe))
        if isinstance(stop, CancelToken):
            self._cleanups.append(stop.add_callback(wake_threadsafe))
        elif isinstance(stop, asyncio.Event):
            waiter = loop.create_task(stop.wait())
            waiter.add_done_callback(self._wake_from)
            self._cleanups.append(lambda: _cancel_quietly(waiter))
        elif stop is not None:
            future = stop
            future.add_done_callback(self._wake_from)
            self._cleanups.append(lambda: _remove_callback(future, self._wake_from))

    def _wake_from(self, _: object) -> None:
        self._wake()

    def _wake(self) -> None:
        if not self.future.done():
            self.future.set_result(None)

    def stopped(self) -> bool:
        stop = self._stop
        if stop is None:
            return False
        if isinstance(stop, CancelToken):
            return stop.cancelled
        if isinstance(stop, asyncio.Event):
            return stop.is_set()
        return stop.done()

    def cancelled(self) -> bool:
        return self._cancel is not None and self._cancel.cancelled

    def close(self) -> None:
        for cleanup in self._cleanups:
            cleanup()
        if not self.future.done():
            self.future.cancel()


def _cancel_quietly(task: asyncio.Future[Any]) -> None:
    task.cancel()


def _remove_callback(future: asyncio.Future[Any], callback: Callable[[Any], None]) -> None:
    future.remove_done_callback(callback)
