"""``match``: ask the model executor which capabilities of the authorized catalog fit a request.

The catalog the executor sees holds only what the caller may see (the named providers, else the
scope): frozen summaries plus ``whenToUse``. It is built once per snapshot and provider selection
and shared by every match on it, so an executor that indexes the catalog (lexical) can key its
cache on the very same object. The executor itself is never trusted: ``_match.run_match``
enforces the deadline, cancellation and close and validates its output.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..._generated.defaults import MATCH_LIMIT
from ..._generated.taxonomy import ErrorCode, Phase
from ..config import HostConfig
from ..context import validate_context
from ..errors import GraphError
from ..executors import configured_timeout_ms
from ..executors.job import MatchJob
from ..frozen import freeze
from ..match import run_match
from ..slices import SharedSteps, Slicer, Steps
from ..snapshot import Snapshot
from .common import OperationContext, capabilities_of, check_named_providers, selected_providers

__all__ = ["handle", "match_catalog_steps"]


async def handle(context: OperationContext, request: Mapping[str, Any]) -> dict[str, Any]:
    snapshot, config = context.snapshot, context.config
    caller_context = validate_context(request["context"]) if "context" in request else {}
    named = request.get("providers")
    if named is not None:
        check_named_providers(snapshot, config, named, Phase.MATCH)
    if context.executor is None:
        raise GraphError.of(ErrorCode.CG_MODEL_NOT_CONFIGURED)
    timeout_ms = request.get("timeoutMs", configured_timeout_ms(config.model))
    deadline = time.monotonic() + timeout_ms / 1000
    size = sum(
        len(snapshot.providers[p].capabilities) for p in selected_providers(snapshot, config, named)
    )
    if size > config.budgets.max_catalog_entries:
        raise GraphError.of(ErrorCode.CG_CATALOG_TOO_LARGE, Phase.MATCH)
    entries = await _catalog(context, named, deadline)
    job = MatchJob(
        request=request["request"],
        context=caller_context,
        catalog=entries,
        limit=request.get("limit", MATCH_LIMIT),
        deadline=deadline,
    )
    outcome = await run_match(
        context.executor,
        job,
        cancel=context.cancel,
        max_output_bytes=config.budgets.max_model_output_bytes,
        stop=context.stop,
    )
    return {
        "status": outcome.status,
        "revision": snapshot.revision,
        "executor": context.executor_name,
        "candidates": outcome.candidates,
    }


async def _catalog(
    context: OperationContext, named: Sequence[str] | None, deadline: float
) -> tuple[Any, ...]:
    """The match catalog, in time slices on the loop (summarizing 100,000 capabilities takes
    seconds, which no other request must wait for), no longer than the match's deadline -- past
    it the match is ``CG_MODEL_TIMEOUT`` and the build keeps its progress for the next match."""
    steps = match_catalog_steps(context.snapshot, context.config, named)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            catalog: tuple[Any, ...] = done.value
            return catalog
        await asyncio.sleep(0)
        context.check_open()
        if context.cancel is not None and context.cancel.cancelled:
            raise GraphError.of(ErrorCode.CG_MODEL_CANCELLED)
        if time.monotonic() >= deadline:
            raise GraphError.of(ErrorCode.CG_MODEL_TIMEOUT)


#: Catalog builds in progress, by (snapshot, selection); each holds its snapshot. Bounded: a
#: build dropped here (its snapshot long replaced) is simply started again if ever needed.
_CATALOG_BUILDS: Final[OrderedDict[tuple[int, Any], tuple[Snapshot, SharedSteps[Any]]]] = (
    OrderedDict()
)
_CATALOG_BUILDS_LOCK: Final = threading.Lock()
_CATALOG_BUILDS_MAX: Final = 8


def match_catalog_steps(
    snapshot: Snapshot, config: HostConfig, named: Sequence[str] | None
) -> Steps[tuple[Any, ...]]:
    """The catalog of a selection in time slices, one build shared by every match waiting for
    it; a finished catalog is kept on the snapshot."""
    key = tuple(sorted(set(named))) if named else None
    cached = snapshot.catalogs.get(key)
    if cached is not None:
        return cached
    with _CATALOG_BUILDS_LOCK:
        building = _CATALOG_BUILDS.get((id(snapshot), key))
        if building is None or building[0] is not snapshot:
            work = SharedSteps(_build_catalog(snapshot, config, named, key))
            building = _CATALOG_BUILDS[(id(snapshot), key)] = (snapshot, work)
            while len(_CATALOG_BUILDS) > _CATALOG_BUILDS_MAX:
                _CATALOG_BUILDS.popitem(last=False)
    catalog: tuple[Any, ...] = yield from building[1].wait()
    with _CATALOG_BUILDS_LOCK:
        if _CATALOG_BUILDS.get((id(snapshot), key)) is building:
            del _CATALOG_BUILDS[(id(snapshot), key)]
    return catalog


def _build_catalog(
    snapshot: Snapshot, config: HostConfig, named: Sequence[str] | None, key: Any
) -> Steps[tuple[Any, ...]]:
    slicer = Slicer()
    entries = []
    for capability in capabilities_of(snapshot, selected_providers(snapshot, config, named)):
        entry = capability.summary()
        if "whenToUse" in capability.declaration:
            entry["whenToUse"] = capability.declaration["whenToUse"]
        entries.append(freeze(entry))
        if slicer.due():
            yield
    catalog = snapshot.catalogs[key] = tuple(entries)
    return catalog
