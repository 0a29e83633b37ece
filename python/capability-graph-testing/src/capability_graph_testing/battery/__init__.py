"""The reliability and security battery: shared generators, checks and engines.

The fast tests (``test_battery_*.py``) and the long runs (``scripts/stress.py``) use the same code:

* checks of what a surface emits: error objects against ``error.schema.json`` and the registry,
  envelopes against their schemas, bytes against *markers* (secrets, paths, raw texts) that must
  never appear;
* generators: hostile texts and executor faults (leakage), a random *fuzzer* of JSON-ish values,
  requests, contexts, configurations, definitions, CLI argv and MCP frames;
* engines that return figures: the reload storm, the close storm, the MCP frame fuzz and the
  memory probe (a child process that measures its own peak RSS around one rejection).

Everything random takes a ``random.Random``, so a failing case is reproduced from its seed.
``CG_BATTERY_SCALE`` multiplies the number of Hypothesis examples (``scripts/stress.py`` raises it).

One module a family, in reading order: ``scale`` (example counts, the case bound), ``registry``
(the spec's error registry), ``checks`` (emitted objects), ``hostile`` (hostile texts, markers),
``faults`` (executor faults), ``graph`` (the graph on disk, valid requests), ``values`` and
``fuzzer`` (the fuzzer), ``outcomes`` (outcome checks of the fuzz runs), ``census`` (processes and
threads), ``sh_codex`` (a fake codex), ``storm_graph`` and ``reload_storm`` (the reload storm),
``close_storm``, ``frames`` (the MCP frame fuzz) and ``memory`` (the memory probe). This package
re-exports what the tests and ``scripts/stress.py`` import from it; the rest is in its module.
"""

from __future__ import annotations

from capability_graph_testing.battery.census import (
    descendants,
    live_threads,
    settle_threads,
)
from capability_graph_testing.battery.checks import (
    check_cli_failure,
    check_error,
    check_mcp_result,
    check_outcome,
)
from capability_graph_testing.battery.close_storm import Sleeper, Stubborn, close_storm_async
from capability_graph_testing.battery.faults import (
    Fault,
    FaultExecutor,
    HostileBase,
    executor_fault,
    scripted_fault,
)
from capability_graph_testing.battery.frames import RawServer, fuzz_frames
from capability_graph_testing.battery.fuzzer import Fuzzer
from capability_graph_testing.battery.graph import QUICK_MODEL, VALID_REQUESTS, battery_graph
from capability_graph_testing.battery.hostile import (
    PATH_MARK,
    PATHS,
    SECRET,
    assert_clean,
    assert_no_control_bytes,
    chained,
    exception_texts,
    hostile_text,
)
from capability_graph_testing.battery.memory import MB, SCENARIOS, memory_probe
from capability_graph_testing.battery.outcomes import (
    check_cli_run,
    check_open_error,
    open_outcome,
    run_cli,
    with_base,
)
from capability_graph_testing.battery.registry import (
    CLOSED,
    RESULT_SCHEMAS,
    TOOL_PHASES,
    TOOLS,
    expected_error,
)
from capability_graph_testing.battery.reload_storm import reload_storm_async, reload_storm_threads
from capability_graph_testing.battery.scale import CASE_BOUND_S, battery_settings, bounded
from capability_graph_testing.battery.sh_codex import ShCodex
from capability_graph_testing.battery.storm_graph import check_snapshot_result
from capability_graph_testing.battery.values import KNOWN_DEFECTS, dumps_or
from capability_graph_testing.processes import wait_dead

__all__ = [
    "CASE_BOUND_S",
    "CLOSED",
    "KNOWN_DEFECTS",
    "MB",
    "PATHS",
    "PATH_MARK",
    "QUICK_MODEL",
    "RESULT_SCHEMAS",
    "SCENARIOS",
    "SECRET",
    "TOOLS",
    "TOOL_PHASES",
    "VALID_REQUESTS",
    "Fault",
    "FaultExecutor",
    "Fuzzer",
    "HostileBase",
    "RawServer",
    "ShCodex",
    "Sleeper",
    "Stubborn",
    "assert_clean",
    "assert_no_control_bytes",
    "battery_graph",
    "battery_settings",
    "bounded",
    "chained",
    "check_cli_failure",
    "check_cli_run",
    "check_error",
    "check_mcp_result",
    "check_open_error",
    "check_outcome",
    "check_snapshot_result",
    "close_storm_async",
    "descendants",
    "dumps_or",
    "exception_texts",
    "executor_fault",
    "expected_error",
    "fuzz_frames",
    "hostile_text",
    "live_threads",
    "memory_probe",
    "open_outcome",
    "reload_storm_async",
    "reload_storm_threads",
    "run_cli",
    "scripted_fault",
    "settle_threads",
    "wait_dead",
    "with_base",
]
