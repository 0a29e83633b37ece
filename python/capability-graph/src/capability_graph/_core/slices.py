"""CPU-bound work on the event loop, cut into time slices so the loop keeps serving.

Work is written as a generator (:data:`Steps`) that ``yield``s when :meth:`Slicer.due` says its
slice is used up and *returns* its result. :func:`run_in_slices` drives it on the event loop with
``await asyncio.sleep(0)`` between slices, so every other task (another request, a deadline, a
close) waits at most one slice; a cancelled caller stops the work at its next slice.

A worker thread would not serve the loop better: under the GIL only one of them runs Python at
a time, and on a loaded machine the loop waits tens of milliseconds for the GIL to come back.

:class:`SharedSteps` lets several callers share one piece of work (concurrent first matches on
one catalog): whoever waits for it advances it, and work whose callers all left keeps its
progress for the next one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from typing import Final, Generic, TypeVar

__all__ = ["SLICE_S", "SharedSteps", "Slicer", "Steps", "run_in_slices", "run_to_end"]

T = TypeVar("T")

#: Steps of work: ``yield`` pauses at the end of a slice, ``return`` gives the result.
Steps = Generator[None, None, T]

#: The longest stretch of work between two turns of the event loop (give or take one unit of
#: work: a text of the schema's maximum length tokenizes in about 2 ms).
SLICE_S: Final = 0.002


class Slicer:
    """Says when the current time slice is used up (and starts the next one)."""

    __slots__ = ("_end",)

    def __init__(self) -> None:
        self._end = time.monotonic() + SLICE_S

    def due(self) -> bool:
        now = time.monotonic()
        if now < self._end:
            return False
        self._end = now + SLICE_S
        return True


async def run_in_slices(steps: Steps[T]) -> T:
    """Drive ``steps`` to its result on the running loop, letting the loop run between slices."""
    import asyncio  # on a running loop: asyncio is imported already

    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result
        await asyncio.sleep(0)


def run_to_end(steps: Steps[T]) -> T:
    """Drive ``steps`` to its result without pausing (synchronous callers)."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: T = done.value
            return result


class SharedSteps(Generic[T]):
    """One piece of work advanced a slice at a time by whichever caller needs its result."""

    def __init__(self, steps: Steps[T]) -> None:
        self._steps = steps
        self._lock = threading.Lock()  # one slice at a time, whatever thread drives it
        self._done = False
        self._result: T | None = None
        self._error: BaseException | None = None

    def advance(self) -> bool:
        """Run one slice; True once the work is complete (see :meth:`result`)."""
        with self._lock:
            if not self._done:
                try:
                    next(self._steps)
                except StopIteration as done:
                    self._result, self._done = done.value, True
                except Exception as error:  # noqa: BLE001 -- handed to every caller
                    self._error, self._done = error, True
            return self._done

    def result(self) -> T:
        if self._error is not None:
            raise self._error
        assert self._done
        return self._result  # type: ignore[return-value]  # set together with _done

    def wait(self) -> Steps[T]:
        """Steps that advance this shared work until it is complete, then return its result."""
        while not self.advance():
            yield
        return self.result()
