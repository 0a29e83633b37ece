"""What the operation handlers share: the context they run in, and scope and existence checks.

Every handler has one signature, :data:`Handler`: ``async def handle(context, request)`` takes
the :class:`OperationContext` of the call and the JSON request (already checked by
``prepare_request``) and returns the JSON result, raising GraphError in the precedence order of
the contract (CG-PREC-1..10): closed graph (the caller) -> input size -> input shape -> context
-> scope of explicitly named providers and capabilities -> existence -> budgets on the work ->
execution -> result size.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..._generated.taxonomy import ErrorCode, Phase
from ..cancel import CancelToken
from ..config import HostConfig
from ..errors import GraphError
from ..executors import Executor
from ..snapshot import Capability, Snapshot

__all__ = [
    "Handler",
    "OperationContext",
    "capabilities_of",
    "check_named_providers",
    "find_capabilities",
    "in_scope",
    "scoped_providers",
    "selected_providers",
]


@dataclass(frozen=True, slots=True)
class OperationContext:
    """Everything a handler may use besides its request; one per call.

    ``snapshot`` is the snapshot the call reads from start to end (a reload publishes a new one
    for later calls). ``cancel`` is the caller's token (None: the caller cannot cancel);
    ``stop`` is the graph's, cancelled when the graph closes.
    """

    snapshot: Snapshot
    config: HostConfig
    executor: Executor | None
    #: The executor's name as results show it (None when no executor is configured).
    executor_name: str | None
    cancel: CancelToken | None
    stop: CancelToken

    def check_open(self) -> None:
        """``CG_GRAPH_CLOSED`` once the graph was closed (for handlers that work in steps)."""
        if self.stop.cancelled:
            raise GraphError(ErrorCode.CG_GRAPH_CLOSED)


#: The one signature of every operation handler (the ``handle`` of each handler module).
Handler: TypeAlias = Callable[
    [OperationContext, Mapping[str, Any]], Coroutine[Any, Any, dict[str, Any]]
]


def in_scope(config: HostConfig, provider_id: str) -> bool:
    return config.scope is None or provider_id in config.scope


def scoped_providers(snapshot: Snapshot, config: HostConfig) -> list[str]:
    return [p for p in snapshot.providers if in_scope(config, p)]


def selected_providers(
    snapshot: Snapshot, config: HostConfig, named: Sequence[str] | None
) -> list[str]:
    """The providers a request selects: those it names (already checked), else the scope."""
    if named:
        wanted = set(named)
        return [p for p in snapshot.providers if p in wanted]
    return scoped_providers(snapshot, config)


def capabilities_of(
    snapshot: Snapshot, providers: Sequence[str], tags: Sequence[str] | None = None
) -> Iterator[Capability]:
    """The capabilities of ``providers`` in listing order, only those with every tag of ``tags``."""
    wanted = set(tags) if tags else None
    for provider_id in providers:
        for capability in snapshot.providers[provider_id].capabilities.values():
            if wanted is None or wanted.issubset(capability.declaration.get("tags", ())):
                yield capability


def check_named_providers(
    snapshot: Snapshot, config: HostConfig, provider_ids: Iterable[str], phase: Phase
) -> None:
    """Scope first for every name (denied whether or not it exists), then existence."""
    names = list(provider_ids)
    for provider_id in names:
        if not in_scope(config, provider_id):
            raise GraphError.of(ErrorCode.CG_ACCESS_DENIED, phase)
    for provider_id in names:
        if provider_id not in snapshot.providers:
            raise GraphError.of(ErrorCode.CG_PROVIDER_NOT_FOUND, phase)


def find_capabilities(
    snapshot: Snapshot, config: HostConfig, full_ids: Sequence[str], phase: Phase
) -> list[Capability]:
    check_named_providers(snapshot, config, (i.partition("::")[0] for i in full_ids), phase)
    found = []
    for full_id in full_ids:
        capability = snapshot.capabilities.get(full_id)
        if capability is None:
            raise GraphError.of(ErrorCode.CG_CAPABILITY_NOT_FOUND, phase)
        found.append(capability)
    return found
