"""The event loop keeps serving while each executor works.

A ticker task runs on the graph's event loop while a match keeps its executor busy past the
deadline (a cold lexical index of 999 capabilities with texts at the schema's maximum length, an
OpenAI-compatible loopback server holding its answer, a fake ``codex`` sleeping, a scripted
sleep). Asserted here: the deadline ends the match (``CG_MODEL_TIMEOUT``) and the ticker ran
again and again *during* the match. Latencies (the longest stall, the lateness past the
deadline) depend on the machine's load; ``bench/bench_responsiveness.py`` reports them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from capability_graph import CapabilityGraph, GraphError
from capability_graph_testing.common import expected
from capability_graph_testing.reliability import (
    hanging_match,
    long_catalog_definition,
    tick_through_matches,
)

TIMEOUT = expected("CG_MODEL_TIMEOUT", "match")
#: Ticks the loop must have served during a 300 ms match: a blocked loop serves none (on an
#: idle machine it serves about 60; a loaded one still serves dozens).
MIN_TICKS = 3


@pytest.mark.parametrize("kind", ["scripted", "lexical-1k", "openai", "codex"])
def test_the_loop_keeps_serving_while_the_executor_works_and_the_deadline_ends_it(
    kind: str, tmp_path: Path
) -> None:
    with hanging_match(kind, tmp_path) as config:
        # Two matches: the first includes each executor's one-time preparation (the SDK import,
        # codex's prerequisite probes, the catalog summaries), the second is steady state.
        runs = asyncio.run(tick_through_matches(config, timeout_ms=300, matches=2))
    for number, ticks in enumerate(runs):
        # The cold lexical index is one build shared by the matches: the first match's deadline
        # ends it, the second may find it built in time on an idle machine and answer.
        if kind == "lexical-1k" and number > 0 and "status" in ticks.outcome:
            assert ticks.outcome["status"] == "matched", (kind, ticks.outcome)
        else:
            assert ticks.outcome == TIMEOUT, (kind, number, ticks.outcome)
        assert ticks.ticks >= MIN_TICKS, (kind, ticks.figures())


def test_a_cold_lexical_index_is_built_across_matches_until_one_answers() -> None:
    config = {
        "providers": [{"definition": long_catalog_definition(999, text_chars=2000)}],
        "model": {"executor": "lexical"},
    }

    async def scenario() -> tuple[list[object], object]:
        graph = await CapabilityGraph.open(config)
        try:
            short = {"request": "validate the request body", "timeoutMs": 30}
            timeouts = []
            for _ in range(3):  # each short deadline advances the one shared build
                with pytest.raises(GraphError) as caught:
                    await graph.call("match_capabilities", short)
                timeouts.append(caught.value.to_json())
            patient = await graph.call("match_capabilities", {**short, "timeoutMs": 120_000})
            return timeouts, patient["status"]
        finally:
            await graph.close()

    timeouts, status = asyncio.run(scenario())
    assert timeouts == [TIMEOUT] * 3
    assert status == "matched"
