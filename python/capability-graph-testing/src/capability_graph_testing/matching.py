"""Helpers for the match pipeline and executor tests (no pytest-asyncio: ``run`` drives a loop)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from capability_graph import ErrorCode, GraphError, NextAction
from capability_graph._testing import REGISTRY, MatchJob
from capability_graph_testing.processes import pid_alive as pid_alive
from capability_graph_testing.processes import wait_dead as wait_dead

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
