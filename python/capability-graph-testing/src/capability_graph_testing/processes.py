"""Processes seen from ``/proc``: whether one is alive (a zombie is not), and waiting for some to
go (the codex executor tests and the battery's census share these)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence


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


def wait_dead(pids: Sequence[int], timeout_s: float = 3.0) -> list[int]:
    """Poll until every pid is gone; return the ones still alive at the timeout."""
    deadline = time.monotonic() + timeout_s
    alive = [pid for pid in pids if pid_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [pid for pid in alive if pid_alive(pid)]
    return alive
