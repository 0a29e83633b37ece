"""Blocking twins: run a flowcast coroutine to completion from synchronous code."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["in_thread", "maybe_await", "run_blocking"]

P = ParamSpec("P")
T = TypeVar("T")


def run_blocking(
    fn: Callable[P, Coroutine[Any, Any, T]], /, *args: P.args, **kwargs: P.kwargs
) -> T:
    """Run ``fn(*args, **kwargs)`` on a private event loop and return its result.

    Without a running loop in this thread the coroutine runs under ``asyncio.run`` here (so
    Ctrl-C cancels it, and a cancelled spawn kills its process tree before KeyboardInterrupt
    propagates). Called from inside a running loop — a blocking call from async code — it runs
    on a private loop in a worker thread, and this thread blocks until it is done.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(fn(*args, **kwargs))
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="flowcast-sync") as pool:
        return pool.submit(lambda: asyncio.run(fn(*args, **kwargs))).result()


def in_thread(fn: Callable[P, T]) -> Callable[P, Coroutine[Any, Any, T]]:
    """A plain callback given to a blocking twin, made to run in a worker thread: outside the
    twin's private event loop, so it may itself block, call ``asyncio.run`` or other twins."""

    async def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    return call


async def maybe_await(value: Awaitable[T] | T) -> T:
    """Await ``value`` if it is awaitable; callbacks may be plain or async functions."""
    if isinstance(value, Awaitable):
        return await value
    return value
