"""A census of processes and threads: what a graph left running after it was closed.

The living descendants of a process (read from ``/proc``) and the threads started since a point;
waiting for pids to go is :func:`capability_graph_testing.processes.wait_dead`.
"""

from __future__ import annotations

import os
import threading
import time


def descendants(root: int | None = None) -> list[int]:
    """Living descendants of ``root`` (default: this process), from /proc."""
    root = os.getpid() if root is None else root
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] in ("Z", "X"):
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in parents.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def live_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.is_alive()}


def settle_threads(before: set[threading.Thread], timeout_s: float = 5.0) -> list[str]:
    """Wait for threads started since ``before`` to end; the names of those still running."""
    deadline = time.monotonic() + timeout_s
    extra = live_threads() - before
    while extra and time.monotonic() < deadline:
        time.sleep(0.02)
        extra = live_threads() - before
    return sorted(t.name for t in extra)
