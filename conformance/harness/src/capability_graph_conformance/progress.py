"""A plain-text progress bar on stderr (no dependencies).

On a terminal the bar is redrawn in place; otherwise one line is written at every tenth of the
run, so CI logs stay short.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from .cases import CaseResult

__all__ = ["ProgressBar"]

_WIDTH = 30


class ProgressBar:
    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = max(total, 1)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self.counts = {"passed": 0, "failed": 0, "errored": 0, "skipped": 0, "not-applicable": 0}
        self.started = time.monotonic()
        self._last_tenth = -1
        self._lock = threading.Lock()

    def __call__(self, case: CaseResult) -> None:
        with self._lock:
            self.done += 1
            self.counts[case.outcome] = self.counts.get(case.outcome, 0) + 1
            if not self.enabled:
                return
            if self.tty:
                self.stream.write("\r" + self.line())
                self.stream.flush()
            else:
                tenth = self.done * 10 // self.total
                if tenth != self._last_tenth:
                    self._last_tenth = tenth
                    self.stream.write(self.line() + "\n")
                    self.stream.flush()

    def line(self) -> str:
        filled = self.done * _WIDTH // self.total
        bar = "#" * filled + "." * (_WIDTH - filled)
        c = self.counts
        return (
            f"[{bar}] {self.done}/{self.total} "
            f"pass {c['passed']} fail {c['failed']} error {c['errored']} "
            f"skip {c['skipped']} n/a {c['not-applicable']} "
            f"{time.monotonic() - self.started:.0f}s"
        )

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
