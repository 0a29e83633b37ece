"""``CapabilityGraph`` (async) and ``BlockingCapabilityGraph`` (its blocking twin).

Both expose the same method names. Every public operation funnels through one JSON entry point,
``CapabilityGraph.call`` (tool name + JSON arguments -> JSON result), so the SDK, the Tool
Adapter, the MCP server and the CLI share one validation path, one precedence order and one
error projection. SDK methods only translate keyword arguments into the JSON request and the
JSON result into a typed result.

``CapabilityGraph.open`` returns a ``GraphOpening``: a coroutine that is also an async context
manager, so both ``graph = await CapabilityGraph.open(...)`` and
``async with CapabilityGraph.open(...) as graph:`` work (and ``async with await ...`` as before).

State: the published ``Snapshot`` is immutable and replaced by one reference assignment, so
a query reads one snapshot from start to end; reloads are serialized by a lock and built off the
event loop; ``close()`` stops every running match with ``CG_GRAPH_CLOSED``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Mapping
from concurrent.futures import CancelledError, Future
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Generic, Self, TypeVar

from . import _results as public
from ._cancel import CancelToken
from ._config import HostConfig, load_config
from ._context import validate_context
from ._documents import media_type_for, read_document_file
from ._errors import GraphError
from ._executors import Executor, MatchJob, build_executor, configured_timeout_ms, describe_executor
from ._generated.taxonomy import ErrorCode, Phase
from ._match import run_match
from ._operations import (
    OPERATIONS,
    TOOL_OF_METHOD,
    catalog_size,
    check_named_providers,
    check_result_size,
    describe,
    find_capabilities,
    list_page,
    match_catalog_steps,
    prepare_request,
    resolve,
)
from ._snapshot import Provider, Snapshot, build_snapshot, load_provider, no_gc, open_snapshot

if TYPE_CHECKING:
    from ._results import (
        DescribeResult,
        ListResult,
        MatchResult,
        ReadDocumentResult,
        RelationTraversal,
        ReloadResult,
        ResolveResult,
    )

__all__ = ["BlockingCapabilityGraph", "CapabilityGraph", "GraphOpening"]

T = TypeVar("T")
G = TypeVar("G", bound="CapabilityGraph")
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
    ) -> None:
        self._config = config
        self._snapshot = snapshot
        self._providers = providers  # source index -> provider now serving
        self._executor = executor
        self._executor_name = describe_executor(executor) if executor is not None else None
        self._closed = False
        self._stop = CancelToken()
        self._reload_lock = asyncio.Lock()

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
        cwd = Path(os.getcwd())
        return await asyncio.to_thread(cls._open_blocking, config, executor, cwd)

    @classmethod
    def _open_blocking(cls, config: Any, executor: Executor | None, cwd: Path) -> Self:
        host = load_config(config, cwd=cwd)
        model_executor = executor
        if model_executor is None and host.model is not None:
            model_executor = build_executor(host.model)
        snapshot, providers = open_snapshot(host)
        if host.scope is not None:
            for position, provider_id in enumerate(host.scope):
                if provider_id not in snapshot.providers:
                    raise GraphError(
                        ErrorCode.CG_CONFIG_INVALID,
                        Phase.CONFIG,
                        f"/scope/providers/{position} names a provider that is not loaded",
                    )
        return cls(host, snapshot, providers, model_executor)

    async def close(self) -> None:
        """Close the graph: running matches fail with ``CG_GRAPH_CLOSED``. Idempotent."""
        if self._closed:
            return
        self._closed = True
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
        described = describe(self._snapshot, self._config, self._executor_name)
        ids = [repr(provider["providerId"]) for provider in described["providers"]]
        if len(ids) > _REPR_PROVIDERS:
            ids[_REPR_PROVIDERS:] = [f"<{len(ids) - _REPR_PROVIDERS} more>"]
        return (
            f"revision={described['revision']!r} providers=[{', '.join(ids)}] closed={self._closed}"
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
        of the tool (a ``null`` is never "omitted"). An unknown tool name is
        ``CG_INPUT_INVALID`` in phase ``query``.
        """
        self._check_open()
        operation = OPERATIONS.get(tool) if isinstance(tool, str) else None
        if operation is None:
            raise GraphError.of(ErrorCode.CG_INPUT_INVALID, Phase.QUERY, variant="unknownTool")
        request = prepare_request(operation, arguments, self._config)
        handler = HANDLERS[operation.sdk_method]
        result = await handler(self, self._snapshot, request, cancel)
        self._check_open()
        check_result_size(result, self._config, operation.phase)
        return result

    # -- the handlers of the operations (one signature: see HANDLERS) --------------------------

    async def _describe(
        self, snapshot: Snapshot, request: Mapping[str, Any], cancel: CancelToken | None
    ) -> dict[str, Any]:
        return describe(snapshot, self._config, self._executor_name)

    async def _list(
        self, snapshot: Snapshot, request: Mapping[str, Any], cancel: CancelToken | None
    ) -> dict[str, Any]:
        return list_page(snapshot, self._config, request)

    async def _resolve(
        self, snapshot: Snapshot, request: Mapping[str, Any], cancel: CancelToken | None
    ) -> dict[str, Any]:
        return resolve(snapshot, self._config, request)

    async def _match(
        self, snapshot: Snapshot, request: Mapping[str, Any], cancel: CancelToken | None
    ) -> dict[str, Any]:
        phase = Phase.MATCH
        context = validate_context(request["context"]) if "context" in request else {}
        named = request.get("providers")
        if named is not None:
            check_named_providers(snapshot, self._config, named, phase)
        if self._executor is None:
            raise GraphError.of(ErrorCode.CG_MODEL_NOT_CONFIGURED)
        timeout_ms = request.get("timeoutMs", configured_timeout_ms(self._config.model))
        deadline = time.monotonic() + timeout_ms / 1000
        if catalog_size(snapshot, self._config, named) > self._config.budgets.max_catalog_entries:
            raise GraphError.of(ErrorCode.CG_CATALOG_TOO_LARGE, phase)
        entries = await self._catalog(snapshot, named, deadline, cancel)
        job = MatchJob(
            request=request["request"],
            context=context,
            catalog=entries,
            limit=request.get("limit", 5),
            deadline=deadline,
        )
        outcome = await run_match(
            self._executor,
            job,
            cancel=cancel,
            max_output_bytes=self._config.budgets.max_model_output_bytes,
            stop=self._stop,
        )
        return {
            "status": outcome.status,
            "revision": snapshot.revision,
            "executor": self._executor_name,
            "candidates": outcome.candidates,
        }

    async def _catalog(
        self,
        snapshot: Snapshot,
        named: Strings | None,
        deadline: float,
        cancel: CancelToken | None,
    ) -> tuple[Any, ...]:
        """The match catalog of ``snapshot``: built once per snapshot and selection, in time
        slices on the loop (summarizing 100,000 capabilities takes seconds, which no other
        request must wait for), no longer than the match's deadline -- past it the match is
        ``CG_MODEL_TIMEOUT`` and the build keeps its progress for the next match."""
        steps = match_catalog_steps(snapshot, self._config, named)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                catalog: tuple[Any, ...] = done.value
                return catalog
            await asyncio.sleep(0)
            self._check_open()
            if cancel is not None and cancel.cancelled:
                raise GraphError.of(ErrorCode.CG_MODEL_CANCELLED)
            if time.monotonic() >= deadline:
                raise GraphError.of(ErrorCode.CG_MODEL_TIMEOUT)

    async def _read_document(
        self, snapshot: Snapshot, request: Mapping[str, Any], cancel: CancelToken | None
    ) -> dict[str, Any]:
        phase = Phase.DOCUMENT
        capability_id, document_id = request["capabilityId"], request["documentId"]
        (capability,) = find_capabilities(snapshot, self._config, [capability_id], phase)
        document = next(
            (d for d in capability.declaration.get("documents", ()) if d["id"] == document_id),
            None,
        )
        if document is None:
            raise GraphError.of(ErrorCode.CG_DOCUMENT_NOT_FOUND)
        if "url" in document:
            raise GraphError.of(ErrorCode.CG_DOCUMENT_REFERENCE_ONLY)
        bodies = self._config.bodies
        if bodies == "none" or (
            not isinstance(bodies, str) and capability.provider_id not in bodies
        ):
            raise GraphError.of(ErrorCode.CG_ACCESS_DENIED, phase, variant="body")
        provider = snapshot.providers[capability.provider_id]
        if provider.document_root is None:
            raise GraphError.of(ErrorCode.CG_DOCUMENT_ROOT_REQUIRED)
        body = await asyncio.to_thread(
            read_document_file,
            provider.document_root,
            document["path"],
            max_bytes=self._config.budgets.max_document_bytes,
        )
        return {
            "capabilityId": capability_id,
            "documentId": document_id,
            "mediaType": media_type_for(document["path"]),
            "bytes": body.bytes,
            "sha256": body.sha256,
            "text": body.text,
        }

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
        ``{"depth", "kinds"}``); unknown targets are listed in ``unresolved``."""
        arguments = _request(ids=ids, relations=relations)
        return public.ResolveResult.model_validate(
            await self.call(TOOL_OF_METHOD["resolve"], arguments)
        )

    async def match(
        self,
        *,
        request: str,
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
        async with self._reload_lock:
            self._check_open()
            return public.reload_result(await asyncio.to_thread(self._reload_blocking, providers))

    def _reload_blocking(self, names: Strings | None) -> dict[str, Any]:
        current = self._providers
        serving = {p.provider_id: p for p in current.values()}
        if names is not None:
            if not isinstance(names, list) or not names:  # trusted, but still checked
                raise GraphError(
                    ErrorCode.CG_CONFIG_INVALID,
                    Phase.CONFIG,
                    "/providers must be a non-empty array",
                )
            for position, name in enumerate(names):
                if not isinstance(name, str) or name not in serving:
                    raise GraphError(
                        ErrorCode.CG_CONFIG_INVALID,
                        Phase.CONFIG,
                        f"/providers/{position} names a provider that is not loaded",
                    )
        wanted = set(names) if names is not None else set(serving)
        candidate: dict[int, Provider] = {}
        entries: dict[int, dict[str, Any]] = {}
        failed = False
        with no_gc():
            for source in self._config.sources:
                old = current[source.index]
                if old.provider_id not in wanted:
                    candidate[source.index] = old
                    continue
                try:
                    new, _ = load_provider(source, self._config.budgets)
                except GraphError as error:
                    failed = True
                    entries[source.index] = {
                        "providerId": old.provider_id,
                        "ok": False,
                        "revision": old.revision,
                        "error": error.to_json(),
                    }
                    continue
                candidate[source.index] = new
                entries[source.index] = {
                    "providerId": new.provider_id,
                    "ok": True,
                    "revision": new.revision,
                    "changed": new.revision != old.revision or new.provider_id != old.provider_id,
                }
            if not failed:
                try:
                    snapshot = build_snapshot(
                        candidate.values(), self._config.budgets, self._config.scope
                    )
                except GraphError as error:
                    failed = True
                    for index in entries:
                        entries[index] = {
                            "providerId": current[index].provider_id,
                            "ok": False,
                            "revision": current[index].revision,
                            "error": error.to_json(),
                        }
        if failed:
            return {
                "ok": False,
                "error": GraphError(ErrorCode.CG_RELOAD_FAILED).to_json(),
                "revision": self._snapshot.revision,
                "providers": list(entries.values()),
            }
        if self._closed:
            raise GraphError(ErrorCode.CG_GRAPH_CLOSED)
        self._snapshot = snapshot  # the atomic publication
        self._providers = candidate
        return {"ok": True, "revision": snapshot.revision, "providers": list(entries.values())}


#: The handler of each operation, by the operation's SDK method name in the generated table
#: (``call`` looks the tool's operation up, then its handler here; a test pins that the keys are
#: exactly the SDK methods of the table).
HANDLERS: Final[
    dict[
        str,
        Callable[
            [CapabilityGraph, Snapshot, Mapping[str, Any], CancelToken | None],
            Coroutine[Any, Any, dict[str, Any]],
        ],
    ]
] = {
    "describe": CapabilityGraph._describe,
    "list": CapabilityGraph._list,
    "resolve": CapabilityGraph._resolve,
    "match": CapabilityGraph._match,
    "read_document": CapabilityGraph._read_document,
}


class BlockingCapabilityGraph:
    """The blocking twin of [CapabilityGraph][capability_graph.CapabilityGraph]: the same methods,
    without ``await``. Open it with ``with BlockingCapabilityGraph.open(config) as graph:``.

    It runs the async graph on a private event loop in a daemon thread, so it may be used from
    several threads at once; ``close()`` stops running matches and then the loop.

    Calls and ``close()`` may race from any number of threads. One lock orders them: a call is
    handed to the loop only while the graph is open, and ``close()`` marks the graph closing
    under the same lock before it stops anything, so every call handed over becomes a task
    before the loop's final drain, which settles it. A call the drain cancelled (a reload in
    flight, a read) answers ``CG_GRAPH_CLOSED``; the first ``close()`` does the work and every
    other waits for it; nothing is left running when any of them returns.
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, thread: threading.Thread, graph: CapabilityGraph
    ) -> None:
        self._loop = loop
        self._thread = thread
        self._graph = graph
        self._state = threading.Lock()  # orders hand-overs to the loop and the start of close
        self._closing = False
        self._closer = threading.Lock()  # held by the close that does the work
        self._stopped = threading.Event()

    @classmethod
    def open(cls, config: Any, *, executor: Executor | None = None) -> Self:
        """Open the graph, as [CapabilityGraph.open][capability_graph.CapabilityGraph.open]
        does, and return it (it is a context manager that closes it on exit)."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="capability-graph", daemon=True)
        thread.start()
        try:
            graph = asyncio.run_coroutine_threadsafe(
                CapabilityGraph._opened(config, executor), loop
            ).result()
        except BaseException:
            _stop_loop(loop, thread)
            raise
        return cls(loop, thread, graph)

    def _run(self, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
        with self._state:
            if self._closing or self._graph.closed:
                raise GraphError(ErrorCode.CG_GRAPH_CLOSED)
            future: Future[T] = asyncio.run_coroutine_threadsafe(factory(), self._loop)
        try:
            return future.result()
        except CancelledError:  # the final drain of close() cancelled it
            raise GraphError(ErrorCode.CG_GRAPH_CLOSED) from None

    def call(
        self, tool: str, arguments: Any, *, cancel: CancelToken | None = None
    ) -> dict[str, Any]:
        """See [CapabilityGraph.call][capability_graph.CapabilityGraph.call]."""
        return self._run(lambda: self._graph.call(tool, arguments, cancel=cancel))

    def describe(self) -> DescribeResult:
        """See [CapabilityGraph.describe][capability_graph.CapabilityGraph.describe]."""
        return self._run(self._graph.describe)

    def list(
        self,
        *,
        providers: Strings | None = None,
        tags: Strings | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ListResult:
        """See [CapabilityGraph.list][capability_graph.CapabilityGraph.list]."""
        return self._run(
            lambda: self._graph.list(providers=providers, tags=tags, limit=limit, cursor=cursor)
        )

    def resolve(
        self, *, ids: Strings, relations: RelationTraversal | Mapping[str, Any] | None = None
    ) -> ResolveResult:
        """See [CapabilityGraph.resolve][capability_graph.CapabilityGraph.resolve]."""
        return self._run(lambda: self._graph.resolve(ids=ids, relations=relations))

    def match(
        self,
        *,
        request: str,
        context: Mapping[str, Any] | None = None,
        providers: Strings | None = None,
        limit: int | None = None,
        timeout_ms: int | None = None,
        cancel: CancelToken | None = None,
    ) -> MatchResult:
        """See [CapabilityGraph.match][capability_graph.CapabilityGraph.match]; ``cancel`` may be
        cancelled from any thread."""
        return self._run(
            lambda: self._graph.match(
                request=request,
                context=context,
                providers=providers,
                limit=limit,
                timeout_ms=timeout_ms,
                cancel=cancel,
            )
        )

    def read_document(self, *, capability_id: str, document_id: str) -> ReadDocumentResult:
        """See [CapabilityGraph.read_document][capability_graph.CapabilityGraph.read_document]."""
        return self._run(
            lambda: self._graph.read_document(capability_id=capability_id, document_id=document_id)
        )

    def reload(self, *, providers: Strings | None = None) -> ReloadResult:
        """See [CapabilityGraph.reload][capability_graph.CapabilityGraph.reload]."""
        return self._run(lambda: self._graph.reload(providers=providers))

    def close(self) -> None:
        """Close the graph (running matches fail with ``CG_GRAPH_CLOSED``). Idempotent and safe
        from any number of threads at once: each returns once the loop has stopped."""
        with self._state:
            self._closing = True
        with self._closer:
            if self._stopped.is_set():
                return
            try:
                if self._thread.is_alive():
                    asyncio.run_coroutine_threadsafe(self._graph.close(), self._loop).result()
            finally:
                _stop_loop(self._loop, self._thread)
                self._stopped.set()

    @property
    def closed(self) -> bool:
        """True once [close][capability_graph.BlockingCapabilityGraph.close] was called."""
        return self._graph.closed

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._graph._state()}>"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _stop_loop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    async def _drain() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await loop.shutdown_asyncgens()
        await loop.shutdown_default_executor()

    if thread.is_alive():
        asyncio.run_coroutine_threadsafe(_drain(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
    loop.close()
