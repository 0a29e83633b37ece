"""An open graph's objects and CPython's cyclic garbage collector.

A loaded graph is millions of long-lived containers (100,000 capabilities: about 630,000), and
every full pass of the cyclic collector traverses all of them: 0.4 s per 100,000 capabilities,
4 s at a million, during which the event loop serves nothing and a match's deadline cannot fire
(measured by ``bench_scale``). Nothing in a snapshot needs the cyclic collector: it holds no
reference cycles, and what a reload replaces is freed by reference counting.

So while a graph is open, the objects alive when it opened or reloaded are moved out of the
collector's generations (``gc.freeze``), and when the last open graph closes they are given back
(``gc.unfreeze``). The freeze is process-wide: the host's objects alive at that moment are left
out too, until the last graph closes (a cycle among them that becomes garbage meanwhile is
collected after that).
"""

from __future__ import annotations

import _thread
import gc

__all__ = ["freeze_while_held", "hold", "release"]

_lock = _thread.allocate_lock()  # threading itself is not imported on a command's path
_holders = 0  # open graphs


def hold() -> None:
    """A graph opened: keep what is alive now out of the collector's passes until it closes."""
    global _holders
    with _lock:
        _holders += 1
        gc.freeze()


def release() -> None:
    """A graph closed: when it was the last, the collector's passes cover everything again."""
    global _holders
    with _lock:
        _holders -= 1
        if _holders == 0:
            gc.unfreeze()


def freeze_while_held() -> None:
    """Freeze what is alive now when a graph is open (a reload's new snapshot), or when the caller
    is about to hold (an open, before the collector runs again over what it loaded)."""
    gc.freeze()
