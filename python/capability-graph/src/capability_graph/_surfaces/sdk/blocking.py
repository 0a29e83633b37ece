"""The machinery of the blocking twin: a private event loop in a daemon thread, opening, closing
and handing calls to the loop.

``BlockingCapabilityGraph`` itself is generated (``_generated/blocking.py``, by
``tools/codegen.py``): it adds to :class:`BlockingGraphRunner` one blocking method per public
coroutine method of ``CapabilityGraph`` -- same name, parameters, annotations and docstring --
that runs the async method here. A twin written by hand would drift from the async class.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import CancelledError, Future
from typing import Any, Self, TypeVar

from ..._core.errors import GraphError
from ..._core.executors import Executor
from ..._core.graph import CapabilityGraph
from ..._generated.taxonomy import ErrorCode

__all__ = ["BlockingGraphRunner"]

T = TypeVar("T")


class BlockingGraphRunner:
    """Runs an async [CapabilityGraph][capability_graph.CapabilityGraph] on a private event loop
    in a daemon thread, so the blocking twin may be used from several threads at once;
    ``close()`` stops running matches and then the loop.

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
