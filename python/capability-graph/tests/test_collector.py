"""An open graph's objects are left out of the cyclic collector's passes, and given back when the
last graph closes (CPython: ``gc.freeze``; see ``_core/collector.py`` for why).

Each case runs in a fresh interpreter: the freeze is process-wide, and another test's graph left
open would hold it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PROGRAM = """
import gc, json, sys
from capability_graph import BlockingCapabilityGraph

definition = {"providerId": "big", "name": "Big", "version": "1", "capabilities": [
    {"id": f"cap.{i}", "name": f"Capability {i}", "description": "A capability.",
     "tags": ["t", f"g{i % 7}"], "relations": [{"kind": "requires", "target": f"cap.{i - 1}"}] if i
     else []}
    for i in range(3000)]}
config = {"providers": [{"definition": definition}]}
"""


def run(body: str) -> dict[str, int]:
    code = PROGRAM + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    figures: dict[str, int] = json.loads(done.stdout)
    return figures


def test_an_open_graph_is_out_of_the_collector_and_closing_it_gives_everything_back() -> None:
    figures = run(
        """
        before = gc.get_freeze_count()
        graph = BlockingCapabilityGraph.open(config)
        while_open = gc.get_freeze_count()
        graph.close()
        print(json.dumps({"before": before, "open": while_open, "after": gc.get_freeze_count()}))
        """
    )
    assert figures["before"] == 0
    assert figures["open"] > 3000 * 3  # the capabilities, their declarations and their lists
    assert figures["after"] == 0


def test_the_freeze_stays_until_the_last_open_graph_closes() -> None:
    figures = run(
        """
        first = BlockingCapabilityGraph.open(config)
        second = BlockingCapabilityGraph.open(config)
        first.close()
        one_open = gc.get_freeze_count()
        second.close()
        print(json.dumps({"one_open": one_open, "none_open": gc.get_freeze_count()}))
        """
    )
    assert figures["one_open"] > 3000 * 3
    assert figures["none_open"] == 0


def test_a_replaced_snapshot_is_freed_not_kept_frozen() -> None:
    # A snapshot holds no reference cycle: what a reload replaces is freed by reference counting,
    # so reloading does not grow what stays frozen.
    figures = run(
        """
        graph = BlockingCapabilityGraph.open(config)
        opened = gc.get_freeze_count()
        for _ in range(5):
            assert graph.reload().ok
        reloaded = gc.get_freeze_count()
        graph.close()
        print(json.dumps({"opened": opened, "reloaded": reloaded}))
        """
    )
    assert figures["reloaded"] < figures["opened"] * 1.2
