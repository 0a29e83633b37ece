"""A census of processes and threads: what a graph left running after it was closed.

Whether a pid is alive (a zombie is not), waiting for pids to go, the living descendants of a
process (read from ``/proc``), and the threads started since a point.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

# --- process, thread and task census --------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def wait_dead(pids: Sequence[int], timeout_s: float) -> list[int]:
    """Poll until every pid is gone; the ones still alive at the timeout."""
    deadline = time.monotonic() + timeout_s
    alive = [pid for pid in pids if pid_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [pid for pid in alive if pid_alive(pid)]
    return alive


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
