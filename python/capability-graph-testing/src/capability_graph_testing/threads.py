"""A call run in a daemon thread, so that a test can bound how long it may take (the battery's
case bound and the document tests' guard against a blocking read share it)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ThreadCall(Generic[T]):
    """``fn()`` started in a daemon thread; :meth:`result` is its value or re-raises its error."""

    def __init__(self, fn: Callable[[], T], *, name: str | None = None) -> None:
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn()
            except BaseException as error:
                box["error"] = error

        self._box = box
        self.thread = threading.Thread(target=target, name=name, daemon=True)
        self.thread.start()

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; whether the call has finished."""
        self.thread.join(timeout)
        return not self.thread.is_alive()

    def result(self) -> T:
        """The call's value (once finished); re-raises what it raised."""
        if "error" in self._box:
            raise self._box["error"]
        value: T = self._box["value"]
        return value
