"""A thread-safe cancellation token for ``match``.

The async SDK and its blocking twin share one token type: the blocking twin runs the async core
on an event loop in another thread, while the caller may call ``CancelToken.cancel`` from any
thread (a GUI thread, a signal handler's helper, another coroutine). Async code waits on it with
``await token.wait()``; the waiter is woken on its own loop, thread-safely.

The graph core also uses a token as its *stop* signal (``close()`` during a match), because
``close()`` of the blocking twin may run on a different thread than the match.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

__all__ = ["CancelToken"]


class CancelToken:
    """Set once, observed from any thread; async waiters can await it."""

    __slots__ = ("_callbacks", "_cancelled", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        """True once [cancel][capability_graph.CancelToken.cancel] was called."""
        return self._cancelled

    def cancel(self) -> None:
        """Request cancellation. Idempotent, thread-safe, never raises."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` once on cancellation (now, if already cancelled).

        The callback runs on the thread that calls ``cancel``; it must be quick and must not
        raise. Returns a function that removes the callback (a no-op after it ran).
        """
        with self._lock:
            if not self._cancelled:
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback()
        return lambda: None

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._callbacks.remove(callback)

    async def wait(self) -> None:
        """Return once the token is cancelled (immediately if it already is)."""
        if self._cancelled:
            return
        import asyncio  # awaited on a running loop: asyncio is imported already

        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            # A closed loop raises RuntimeError: then nobody is waiting any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, future)

        remove = self.add_callback(wake)
        try:
            await future
        finally:
            remove()

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self._cancelled})"


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
