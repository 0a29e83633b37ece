"""Run an executor's one-time blocking work (an SDK import) off the event loop, once."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

__all__ = ["Preparation"]

T = TypeVar("T")


class Preparation(Generic[T]):
    """Work an executor does once (importing its SDK, making a TLS context), on one daemon
    thread however many matches start at once, and awaited by each of them from its own loop.

    A match that is cancelled while waiting leaves the work running for the others (it is
    never cancelled: an import cannot be interrupted); :meth:`join` lets the executor's
    ``aclose`` wait for it, so that nothing of the executor outlives the graph.
    """

    def __init__(self, fn: Callable[[], T], name: str) -> None:
        self._fn = fn
        self._name = name
        self._lock = threading.Lock()
        self._future: concurrent.futures.Future[T] | None = None
        self._thread: threading.Thread | None = None

    def _start(self) -> concurrent.futures.Future[T]:
        # Imported by the first match that needs the work (with asyncio, which a match runs
        # on): building the executor, which every opening of the graph does, imports neither.
        import concurrent.futures

        with self._lock:
            if self._future is None:
                future: concurrent.futures.Future[T] = concurrent.futures.Future()
                future.set_running_or_notify_cancel()  # shared: nobody may cancel it

                def work() -> None:
                    try:
                        future.set_result(self._fn())
                    except BaseException as exc:  # noqa: BLE001 -- handed to every waiter
                        future.set_exception(exc)

                self._thread = threading.Thread(target=work, name=self._name, daemon=True)
                self._thread.start()
                self._future = future
            return self._future

    async def get(self) -> T:
        """The work's result (or its exception), started on first use."""
        future = self._start()
        if not future.done():
            import asyncio  # on a running loop: asyncio is imported already

            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[None] = loop.create_future()

            def settle() -> None:
                if not waiter.done():
                    waiter.set_result(None)

            def wake(_: object) -> None:
                with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                    loop.call_soon_threadsafe(settle)

            future.add_done_callback(wake)
            await waiter
        return future.result()

    async def join(self, limit_s: float) -> None:
        """Wait (at most ``limit_s``) until the thread doing the work has ended."""
        thread = self._thread
        if thread is None:
            return  # never started: a graph that closes without having matched
        import asyncio  # on a running loop: asyncio is imported already

        limit = time.monotonic() + limit_s
        while thread.is_alive() and time.monotonic() < limit:
            await asyncio.sleep(0.005)
