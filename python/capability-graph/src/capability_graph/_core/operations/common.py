"""What the operation handlers share: the context they run in, and scope and existence checks.

Every handler has one signature, :data:`Handler`: ``async def handle(context, request)`` takes
the :class:`OperationContext` of the call and the JSON request (already checked by
``prepare_request``) and returns the JSON result, raising GraphError in the precedence order of
the contract (CG-PREC-1..10): closed graph (the caller) -> input size -> input shape -> context
-> scope of explicitly named providers and capabilities -> existence -> budgets on the work ->
execution -> result size.
"""

from __future__ import annotations

from collections.abc import (
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, ParamSpec, Protocol, TypeAlias, TypeVar

from ..._generated.taxonomy import ErrorCode, Phase
from ..cancel import CancelToken
from ..config import HostConfig
from ..errors import GraphError
from ..executors import Executor
from ..snapshot import Capability, Snapshot

__all__ = [
    "Handler",
    "HandlerRegistry",
    "OperationContext",
    "RunBlocking",
    "capabilities_of",
    "check_named_providers",
    "find_capabilities",
    "in_place",
    "in_scope",
    "on_a_worker_thread",
    "scoped_providers",
    "selected_providers",
]


P = ParamSpec("P")
T = TypeVar("T")


class RunBlocking(Protocol):
    """How a handler runs blocking work (a file read): ``await context.run_blocking(f, ...)``."""

    def __call__(
        self, function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> Awaitable[T]: ...


async def on_a_worker_thread(function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``function(*args, **kwargs)`` on a worker thread, so that the event loop keeps serving
    while it blocks (a graph on an event loop)."""
    import asyncio  # on a running loop: asyncio is imported already

    return await asyncio.to_thread(function, *args, **kwargs)


async def in_place(function: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``function(*args, **kwargs)`` on the calling thread, without suspending: a graph opened in
    place (one call of a one-shot caller, without an event loop and nothing else to serve)."""
    return function(*args, **kwargs)


class OperationContext:
    """Everything a handler may use besides its request; one per call.

    ``snapshot`` is the snapshot the call reads from start to end (a reload publishes a new one
    for later calls). ``cancel`` is the caller's token (None: the caller cannot cancel);
    ``stop`` is the graph's, cancelled when the graph closes. ``run_blocking`` runs blocking
    work: :func:`on_a_worker_thread`, or :func:`in_place` for a graph opened in place.

    Read-only by convention (a plain class: a dataclass costs a command line's start-up about
    a millisecond to make).
    """

    __slots__ = (
        "cancel",
        "config",
        "executor",
        "executor_name",
        "run_blocking",
        "snapshot",
        "stop",
    )

    def __init__(
        self,
        snapshot: Snapshot,
        config: HostConfig,
        executor: Executor | None,
        executor_name: str | None,
        cancel: CancelToken | None,
        stop: CancelToken,
        run_blocking: RunBlocking,
    ) -> None:
        self.snapshot = snapshot
        self.config = config
        self.executor = executor
        #: The executor's name as results show it (None when no executor is configured).
        self.executor_name = executor_name
        self.cancel = cancel
        self.stop = stop
        self.run_blocking = run_blocking

    def check_open(self) -> None:
        """``CG_GRAPH_CLOSED`` once the graph was closed (for handlers that work in steps)."""
        if self.stop.cancelled:
            raise GraphError(ErrorCode.CG_GRAPH_CLOSED)


#: The one signature of every operation handler (the ``handle`` of each handler module).
Handler: TypeAlias = Callable[
    [OperationContext, Mapping[str, Any]], Coroutine[Any, Any, dict[str, Any]]
]


class HandlerRegistry(Mapping[str, Handler]):
    """The handlers by tool name (``HANDLERS``, generated in ``handlers.py``), in the table's
    order; each handler's module is imported by ``load(tool)`` when its operation is first
    called, so that a command imports only the operation it runs."""

    def __init__(self, tools: tuple[str, ...], load: Callable[[str], Handler]) -> None:
        self._tools = tools
        self._load = load
        self._loaded: dict[str, Handler] = {}

    def __getitem__(self, tool: str) -> Handler:
        handler = self._loaded.get(tool)
        if handler is None:
            handler = self._loaded[tool] = self._load(tool)
        return handler

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)


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


#: How many filtered listings a snapshot keeps (each up to a reference per capability).
SELECTIONS_KEPT = 4


def selection_of(
    snapshot: Snapshot, providers: Sequence[str], tags: Sequence[str] | None
) -> tuple[Capability, ...]:
    """Every capability :func:`capabilities_of` yields, kept on the snapshot by filter, so that
    paging through a selection costs each page its own items, not a walk from the first
    capability to its offset (which made paging through everything quadratic)."""
    key = (tuple(providers), frozenset(tags or ()))
    kept = snapshot.selections.get(key)
    if kept is None:
        kept = tuple(capabilities_of(snapshot, providers, tags))
        if len(snapshot.selections) >= SELECTIONS_KEPT:
            del snapshot.selections[next(iter(snapshot.selections))]
        snapshot.selections[key] = kept
    return kept


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
