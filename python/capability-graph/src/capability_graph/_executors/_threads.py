"""Run blocking work off the event loop without anyone ever waiting for it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["in_daemon_thread"]

T = TypeVar("T")


async def in_daemon_thread(fn: Callable[[], T], name: str = "cg-executor") -> T:
    """Run ``fn`` on a fresh daemon thread and await its result.

    Unlike ``asyncio.to_thread`` (the loop's default executor, which ``asyncio.run`` joins at
    exit), nothing ever waits for the thread: when the awaiting match is cancelled (deadline,
    cancel, close) it returns at once and the thread's late result is dropped. Use it for
    CPU-bound or import-heavy work that must not block the loop (so the deadline fires on time).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]  # T when error is None

    def work() -> None:
        try:
            result, error = fn(), None
        except BaseException as exc:  # noqa: BLE001 -- handed to the awaiting coroutine
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: the match was abandoned
            loop.call_soon_threadsafe(deliver, result, error)

    threading.Thread(target=work, name=name, daemon=True).start()
    return await future
