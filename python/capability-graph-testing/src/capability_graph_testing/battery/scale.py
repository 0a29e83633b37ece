"""How many cases the battery runs and how long one may take.

``CG_BATTERY_SCALE`` multiplies the number of Hypothesis examples (``scripts/stress.py`` raises
it); :func:`bounded` runs one case in a thread and fails it as a hang past its time bound.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

from hypothesis import HealthCheck, settings

from capability_graph_testing.threads import ThreadCall

T = TypeVar("T")

# --- scale and settings ---------------------------------------------------------------------------

SCALE = float(os.environ.get("CG_BATTERY_SCALE", "1"))


def examples(n: int) -> int:
    """``n`` Hypothesis examples, times ``CG_BATTERY_SCALE``."""
    return max(1, round(n * SCALE))


def battery_settings(n: int) -> settings:
    """Modest example counts, no per-example deadline (this machine is loaded)."""
    return settings(
        max_examples=examples(n),
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )


#: The time bound of one fuzz case (a hang is a failure). Generous: the machine is loaded.
CASE_BOUND_S = 15.0


# --- bounded runs ---------------------------------------------------------------------------------


def bounded(fn: Callable[[], T], seconds: float = CASE_BOUND_S) -> tuple[T, float]:
    """Run ``fn`` in a daemon thread; fail (it hangs) if it has not finished within ``seconds``.
    Returns its value and the elapsed time; re-raises what it raised."""
    started = time.monotonic()
    call = ThreadCall(fn, name="battery-case")
    finished = call.join(seconds)
    elapsed = time.monotonic() - started
    assert finished, f"the case did not finish within {seconds} s (a hang)"
    return call.result(), elapsed
