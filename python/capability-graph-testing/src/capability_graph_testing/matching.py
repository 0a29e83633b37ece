"""Helpers for the match pipeline and executor tests (no pytest-asyncio: ``run`` drives a loop)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from capability_graph import ErrorCode, GraphError, NextAction
from capability_graph._testing import REGISTRY, MatchJob

T = TypeVar("T")

SECRET = "SECRET-4f1c"

CATALOG: list[dict[str, Any]] = [
    {
        "id": "acme::route.validation",
        "providerId": "acme",
        "name": "Request validation",
        "description": "Validate input before a route handler runs.",
        "whenToUse": "a route needs a declared request contract",
        "tags": ["http", "validation"],
    },
    {
        "id": "acme::schema.request",
        "providerId": "acme",
        "name": "Request schema",
        "description": "Declare the JSON schema of a request body.",
        "tags": ["http", "schema"],
    },
    {
        "id": "billing::invoice.create",
        "providerId": "billing",
        "name": "Create invoice",
        "description": "Create and send an invoice to a customer.",
        "tags": ["billing", "invoice"],
    },
]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def make_job(
    request: str = "validate the request body",
    *,
    catalog: Sequence[Mapping[str, Any]] = CATALOG,
    context: Mapping[str, Any] | None = None,
    limit: int = 5,
    timeout_s: float = 5.0,
    max_output_bytes: int = 65_536,
) -> MatchJob:
    return MatchJob(
        request=request,
        context=dict(context or {}),
        catalog=catalog,
        limit=limit,
        deadline=time.monotonic() + timeout_s,
        max_output_bytes=max_output_bytes,
    )


def model_error(
    code: ErrorCode | str, action: NextAction | str | None = "default"
) -> dict[str, str]:
    """The exact ``to_json()`` of a match-phase model error with the registry's safe message."""
    entry = REGISTRY[ErrorCode(code)]
    error = {"code": entry.code.value, "phase": "match", "message": entry.messages["default"]}
    resolved = entry.default_action if action == "default" else action
    if resolved is not None:
        error["nextAction"] = NextAction(resolved).value
    return error


CLOSED = {"code": "CG_GRAPH_CLOSED", "phase": "lifecycle", "message": "Graph is closed"}


async def raises_graph_error(awaitable: Awaitable[Any]) -> GraphError:
    try:
        await awaitable
    except GraphError as error:
        return error
    raise AssertionError("expected a GraphError")


class FuncExecutor:
    """An executor whose ``match`` is the given coroutine function."""

    name = "func"

    def __init__(self, fn: Callable[[MatchJob], Awaitable[object]]) -> None:
        self._fn = fn
        self.calls = 0

    async def match(self, job: MatchJob) -> object:
        self.calls += 1
        return await self._fn(job)


def returning(value: object) -> FuncExecutor:
    async def fn(job: MatchJob) -> object:
        return value

    return FuncExecutor(fn)


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def wait_dead(pids: Sequence[int], timeout_s: float = 3.0) -> list[int]:
    """Poll until every pid is gone; return the ones still alive at the timeout."""
    deadline = time.monotonic() + timeout_s
    alive = [pid for pid in pids if pid_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [pid for pid in alive if pid_alive(pid)]
    return alive
