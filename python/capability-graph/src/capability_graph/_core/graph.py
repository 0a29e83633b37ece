"""``CapabilityGraph``, the async graph (its blocking twin is generated from it: see
``_generated/blocking.py``).

Every public operation funnels through one JSON entry point, ``CapabilityGraph.call`` (tool name
+ JSON arguments -> JSON result), so the SDK, the Tool Adapter, the MCP server and the CLI share
one validation path, one precedence order and one error projection. ``call`` dispatches to the
operation's handler module (``_operations``); SDK methods only translate keyword arguments into
the JSON request and the JSON result into a typed result. Opening and reloading run the steps of
``_loader``.

``CapabilityGraph.open`` returns a ``GraphOpening``: a coroutine that is also an async context
manager, so both ``graph = await CapabilityGraph.open(...)`` and
``async with CapabilityGraph.open(...) as graph:`` work (and ``async with await ...`` as before).

State: the published ``Snapshot`` is immutable and replaced by one reference assignment, so
a query reads one snapshot from start to end; reloads are serialized by a lock and built off the
event loop; ``close()`` stops every running match with ``CG_GRAPH_CLOSED``.

In place: a one-shot caller (the CLI) opens the graph with :meth:`CapabilityGraph._open_in_place`
and runs one call with :func:`run_in_place`, on its own thread and without an event loop, when
:func:`runs_in_place` says the call never waits on one (every operation but ``match``, whose
deadline, cancellation and executor need the loop). Such a command never imports ``asyncio``
(tens of milliseconds of its start-up): this module imports it only in the coroutines that run
on a loop.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Coroutine, Generator, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from .._generated.taxonomy import ErrorCode, Phase
from . import collector
from . import results as public
from .cancel import CancelToken
from .config import HostConfig
from .errors import GraphError
from .executors import Executor, describe_executor
from .load import LoadedGraph, open_graph, reload_sources
from .operations import (
    HANDLERS,
    OPERATIONS,
    TOOL_OF_METHOD,
    OperationContext,
    check_request_depth,
    check_result_size,
    prepare_request,
    request_of_text,
)
from .operations.common import RunBlocking, in_place, on_a_worker_thread
from .operations.describe import described
from .snapshot import Provider, Snapshot

if TYPE_CHECKING:
    import asyncio

    from .results import (
        DescribeResult,
        ListResult,
        MatchResult,
        ReadDocumentResult,
        RelationTraversal,
        ReloadResult,
        ResolveResult,
    )

__all__ = ["CapabilityGraph", "GraphOpening", "Strings", "run_in_place", "runs_in_place"]

G = TypeVar("G", bound="CapabilityGraph")
T = TypeVar("T")
# ``list`` is an operation name on the graph classes; annotations inside them use this alias.
Strings = list[str]


def _request(**arguments: Any) -> dict[str, Any]:
    """SDK keyword arguments -> JSON request: ``None`` means omitted (Python's idiom), and a
    generated model (``RelationTraversal``) is its JSON form, with what it omits left out."""
    return {
        key: value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if hasattr(value, "model_dump")
        else value
        for key, value in arguments.items()
        if value is not None
    }


# A repr lists at most this many provider ids and says how many it left out.
_REPR_PROVIDERS = 10


class GraphOpening(Coroutine[Any, Any, G], Generic[G]):
    """What [CapabilityGraph.open][capability_graph.CapabilityGraph.open] returns: a coroutine
    that opens the graph, usable in two ways.

    - ``graph = await CapabilityGraph.open(config)``: the caller closes the graph.
    - ``async with CapabilityGraph.open(config) as graph:``: the graph is closed on exit, also
      when the block raises. (``async with await CapabilityGraph.open(config)`` works too: the
      graph is itself an async context manager.)

    Like any coroutine it is used once, and it can be given to ``asyncio.run``,
    ``asyncio.create_task`` or ``asyncio.wait_for``.
    """

    __slots__ = ("_coroutine", "_graph")

    def __init__(self, coroutine: Coroutine[Any, Any, G]) -> None:
        self._coroutine = coroutine
        self._graph: G | None = None

    def __await__(self) -> Generator[Any, None, G]:
        return self._coroutine.__await__()

    def send(self, value: Any) -> Any:
        """Part of the coroutine protocol (used by the event loop)."""
        return self._coroutine.send(value)

    def throw(self, *exception: Any) -> Any:
        """Part of the coroutine protocol (used by the event loop)."""
        return self._coroutine.throw(*exception)

    def close(self) -> None:
        """Part of the coroutine protocol: abandon the opening if it has not run."""
        self._coroutine.close()

    async def __aenter__(self) -> G:
        self._graph = await self._coroutine
        return self._graph

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        graph, self._graph = self._graph, None
        if graph is not None:
            await graph.close()


class CapabilityGraph:
    """An open capability graph (async).

    Open it with ``async with CapabilityGraph.open(config) as graph:`` or
    ``graph = await CapabilityGraph.open(config)`` (then ``await graph.close()``).
    """

    def __init__(
        self,
        config: HostConfig,
        snapshot: Snapshot,
        providers: dict[int, Provider],
        executor: Executor | None,
        run_blocking: RunBlocking = on_a_worker_thread,
    ) -> None:
        self._config = config
        self._snapshot = snapshot
        self._providers = providers  # source index -> provider now serving
        self._executor = executor
        self._executor_name = describe_executor(executor) if executor is not None else None
        self._closed = False
        collector.hold()  # its snapshots stay out of the cyclic collector's passes until close
        self._stop = CancelToken()
        self._run_blocking = run_blocking  # how a handler's blocking work runs (a file read)
        # Made by the first reload, on the loop that runs it (a graph is used on one loop).
        self._reload_lock: asyncio.Lock | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def open(cls, config: Any, *, executor: Executor | None = None) -> GraphOpening[Self]:
        """Validate ``config`` (phase ``config``) and load every source (phase ``load``).

        ``config`` is a mapping, a path to a JSON file (relative paths inside it are relative to
        its folder) or a [HostConfig][capability_graph.HostConfig]. ``executor`` is an object
        implementing the [Executor][capability_graph.Executor] protocol; it takes precedence
        over the configuration's ``model`` section. Any failure raises a
        [GraphError][capability_graph.GraphError]; nothing stays open.

        Returns a [GraphOpening][capability_graph.GraphOpening]: ``await`` it, or use it with
        ``async with``, which closes the graph on exit.
        """
        return GraphOpening(cls._opened(config, executor))

    @classmethod
    async def _opened(cls, config: Any, executor: Executor | None) -> Self:
        import asyncio  # on a running loop: asyncio is imported already

        cwd = Path(os.getcwd())
        loaded = await asyncio.to_thread(open_graph, config, executor, cwd, keep_out=True)
        return cls._from_loaded(loaded)

    @classmethod
    def _open_in_place(cls, config: Any) -> Self:
        """Open ``config`` as :meth:`open` does, on the calling thread and without an event loop,
        for one call run with :func:`run_in_place` (a one-shot caller: the CLI). The graph reads
        its documents in place too (there is no loop to keep serving)."""
        loaded = open_graph(config, None, Path(os.getcwd()), keep_out=True)
        return cls(loaded.config, loaded.snapshot, loaded.providers, loaded.executor, in_place)

    @classmethod
    def _from_loaded(cls, loaded: LoadedGraph) -> Self:
        return cls(loaded.config, loaded.snapshot, loaded.providers, loaded.executor)

    async def close(self) -> None:
        """Close the graph: running matches fail with ``CG_GRAPH_CLOSED``. Idempotent."""
        if self._closed:
            return
        self._closed = True
        collector.release()
        self._stop.cancel()
        closer = getattr(self._executor, "aclose", None)
        if closer is not None:
            # Closing never fails the caller; an executor's cleanup error has nowhere safe to go.
            with contextlib.suppress(Exception):
                await closer()

    @property
    def closed(self) -> bool:
        """True once [close][capability_graph.CapabilityGraph.close] was called."""
        return self._closed

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._state()}>"

    def _state(self) -> str:
        """``revision=... providers=[...] closed=...``: what ``describe`` reports, in short."""
        summary = described(self._snapshot, self._config, self._executor_name)
        ids = [repr(provider["providerId"]) for provider in summary["providers"]]
        if len(ids) > _REPR_PROVIDERS:
            ids[_REPR_PROVIDERS:] = [f"<{len(ids) - _REPR_PROVIDERS} more>"]
        return (
            f"revision={summary['revision']!r} providers=[{', '.join(ids)}] closed={self._closed}"
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise GraphError(ErrorCode.CG_GRAPH_CLOSED)

    # -- the one JSON entry point ------------------------------------------------------------

    async def call(
        self, tool: str, arguments: Any, *, cancel: CancelToken | None = None
    ) -> dict[str, Any]:
        """Run a tool by name with JSON ``arguments``; return the JSON result or raise GraphError.

        This is the one entry point every surface uses: ``arguments`` is the exact JSON request
        of the tool (a ``null`` is never "omitted"), as a value (``{"limit": 5}``) or as JSON
        text (``'{"limit": 5}'``, as a model's tool call often carries it), read once. An
        unknown tool name is ``CG_INPUT_INVALID`` in phase ``query``.
        """
        self._check_open()
        if isinstance(tool, str):
            # A request text is parsed, and a request's depth judged, before the tool name is
            # looked up (CG-PREC-12, CG-CONV-15).
            if isinstance(arguments, str):
                arguments = request_of_text(tool, arguments)
            check_request_depth(tool, arguments)
        operation = OPERATIONS.get(tool) if isinstance(tool, str) else None
        if operation is None:
            raise GraphError.of(ErrorCode.CG_INPUT_INVALID, Phase.QUERY, variant="unknownTool")
        request = prepare_request(operation, arguments, self._config)
        context = OperationContext(
            snapshot=self._snapshot,
            config=self._config,
            executor=self._executor,
            executor_name=self._executor_name,
            cancel=cancel,
            stop=self._stop,
            run_blocking=self._run_blocking,
        )
        result = await HANDLERS[operation.tool](context, request)
        self._check_open()
        check_result_size(result, self._config, operation.phase)
        return result

    # -- the SDK operations ------------------------------------------------------------------

    async def describe(self) -> DescribeResult:
        """The graph at a glance: revision, providers in scope, scope, model and budgets."""
        return public.DescribeResult.model_validate(await self.call(TOOL_OF_METHOD["describe"], {}))

    async def list(
        self,
        *,
        providers: Strings | None = None,
        tags: Strings | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ListResult:
        """One page of capability summaries, filtered by ``providers`` and ``tags``.

        ``limit`` is the page size; pass the previous page's ``next_cursor`` as ``cursor`` (with
        the same filters) for the next page.
        """
        arguments = _request(providers=providers, tags=tags, limit=limit, cursor=cursor)
        return public.ListResult.model_validate(await self.call(TOOL_OF_METHOD["list"], arguments))

    async def resolve(
        self, *, ids: Strings, relations: RelationTraversal | Mapping[str, Any] | None = None
    ) -> ResolveResult:
        """The full declarations of ``ids``, with their relations followed as ``relations``
        asks (a [RelationTraversal][capability_graph.RelationTraversal], or its JSON form
        ``{"depth", "kinds"}``); unknown targets are listed in ``unresolved``.

        The result reads like every other result (``result.capabilities[0].provider_id``,
        ``to_json()``), but is a read-only view over the JSON result
        ([ResolveResult][capability_graph.ResolveResult]), built in constant time: a closure
        holds thousands of objects, which models would cost many times the resolve to validate.
        """
        arguments = _request(ids=ids, relations=relations)
        return public.ResolveResult(await self.call(TOOL_OF_METHOD["resolve"], arguments))

    async def match(
        self,
        request: str,
        *,
        context: Mapping[str, Any] | None = None,
        providers: Strings | None = None,
        limit: int | None = None,
        timeout_ms: int | None = None,
        cancel: CancelToken | None = None,
    ) -> MatchResult:
        """Ask the model executor which capabilities fit ``request`` (natural language).

        ``context`` is untrusted caller context, ``providers`` narrows the catalog, ``limit``
        caps the candidates, ``timeout_ms`` overrides ``model.timeoutMs``. ``cancel`` (a
        [CancelToken][capability_graph.CancelToken]) stops the match with
        ``CG_MODEL_CANCELLED``.
        """
        arguments = _request(
            request=request, context=context, providers=providers, limit=limit, timeoutMs=timeout_ms
        )
        return public.MatchResult.model_validate(
            await self.call(TOOL_OF_METHOD["match"], arguments, cancel=cancel)
        )

    async def read_document(self, *, capability_id: str, document_id: str) -> ReadDocumentResult:
        """The body of a capability's local document, if the document policy allows it."""
        arguments = _request(capabilityId=capability_id, documentId=document_id)
        return public.ReadDocumentResult.model_validate(
            await self.call(TOOL_OF_METHOD["read_document"], arguments)
        )

    async def reload(self, *, providers: Strings | None = None) -> ReloadResult:
        """Rebuild from the sources; publish atomically only if every provider validates.

        ``providers`` (trusted host input) limits the reload to those loaded providers; naming
        one that is not loaded is ``CG_CONFIG_INVALID``. A failed candidate is not an exception:
        the result has ``ok: false``, ``error`` = ``CG_RELOAD_FAILED`` and per-provider causes.
        """
        self._check_open()
        import asyncio  # on a running loop: asyncio is imported already

        if self._reload_lock is None:  # no await since the test: no other reload made one
            self._reload_lock = asyncio.Lock()
        async with self._reload_lock:
            self._check_open()
            return public.reload_result(await asyncio.to_thread(self._reload_blocking, providers))

    def _reload_blocking(self, names: Strings | None) -> dict[str, Any]:
        reloaded = reload_sources(self._config, self._providers, self._snapshot, names)
        if reloaded.snapshot is None or reloaded.providers is None:
            return reloaded.result
        self._check_open()
        self._snapshot = reloaded.snapshot  # the atomic publication
        self._providers = reloaded.providers
        return reloaded.result


def runs_in_place(tool: str) -> bool:
    """Whether a call of ``tool`` can run in place (:func:`run_in_place`): it never waits on the
    event loop. Every operation but ``match`` (its deadline, cancellation and executor need the
    loop); an unknown tool too (refused before anything is awaited)."""
    operation = OPERATIONS.get(tool)
    return operation is None or operation.phase is not Phase.MATCH


def run_in_place(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine of a graph opened in place (a ``call`` of a tool that
    :func:`runs_in_place`, ``close``) to its result, on this thread and without an event loop:
    it never suspends, so one step runs it to the end (its error, if it fails)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    coroutine.close()
    raise RuntimeError("a call run in place waited on the event loop")
