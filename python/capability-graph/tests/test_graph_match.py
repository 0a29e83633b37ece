"""match through the graph: precedence, executor paths, deadlines, cancellation and close."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from capability_graph import (
    BlockingCapabilityGraph,
    CancelToken,
    CapabilityGraph,
    GraphError,
    MatchJob,
)
from capability_graph_testing.common import (
    capability,
    error_of,
    expected,
    inline,
    provider,
    schema_validator,
)

ACME = provider("acme", capability("a", tags=["x"]), capability("b"))
SECRET = provider("secret", capability("vault"))
MATCHED = {
    "status": "matched",
    "candidates": [{"id": "acme::a", "confidence": 0.9, "reason": "fits"}],
}


def scripted(*steps: dict[str, Any], **config: Any) -> dict[str, Any]:
    return inline(
        ACME,
        SECRET,
        model={"executor": "scripted", "steps": list(steps)},
        scope={"providers": ["acme"]},
        **config,
    )


def match_error(config: dict[str, Any], **arguments: Any) -> dict[str, str]:
    with BlockingCapabilityGraph.open(config) as graph, pytest.raises(GraphError) as excinfo:
        graph.call("match_capabilities", {"request": "validate input", **arguments})
    return error_of(excinfo)


def test_matched_result_carries_revision_and_executor() -> None:
    with BlockingCapabilityGraph.open(scripted({"return": MATCHED})) as graph:
        result = graph.match(request="validate input").to_json()
        assert result == {
            "status": "matched",
            "revision": graph.describe().revision,
            "executor": "scripted",
            "candidates": MATCHED["candidates"],
        }
    schema_validator("match-result.schema.json").validate(result)


def test_no_match_is_an_outcome_not_an_error() -> None:
    with BlockingCapabilityGraph.open(
        scripted({"return": {"status": "no_match", "candidates": []}})
    ) as graph:
        assert graph.match(request="bake bread").status == "no_match"


def test_match_without_executor_is_model_not_configured_while_static_queries_work() -> None:
    with BlockingCapabilityGraph.open(inline(ACME)) as graph:
        with pytest.raises(GraphError) as excinfo:
            graph.match(request="anything")
        assert error_of(excinfo) == expected("CG_MODEL_NOT_CONFIGURED", "match")
        assert graph.list().status == "ok"
        assert graph.describe().model.to_json() == {"configured": False}


def test_fabricated_id_outside_the_authorized_catalog_is_invalid_selection() -> None:
    out_of_scope = {"status": "matched", "candidates": [{"id": "secret::vault", "confidence": 0.5}]}
    assert match_error(scripted({"return": out_of_scope})) == expected(
        "CG_MODEL_INVALID_SELECTION", "match"
    )


def test_refusal_raised_by_the_executor_keeps_its_code_and_loses_its_text() -> None:
    step = {
        "raise": {
            "code": "CG_MODEL_REFUSED",
            "nextAction": "retry",
            "message": "SECRET-4f1c /etc/shadow",
        }
    }
    assert match_error(scripted(step)) == expected("CG_MODEL_REFUSED", "match")


def test_plain_exception_becomes_model_unavailable_retry() -> None:
    assert match_error(scripted({"raiseException": "SECRET-4f1c"})) == expected(
        "CG_MODEL_UNAVAILABLE", "match"
    )


def test_input_shape_comes_before_context() -> None:
    error = match_error(scripted({"return": MATCHED}), context={"a": []}, limit=0)
    assert error["code"] == "CG_INPUT_INVALID"


def test_context_comes_before_scope() -> None:
    error = match_error(scripted({"return": MATCHED}), context={"a": []}, providers=["secret"])
    assert error["code"] == "CG_CONTEXT_INVALID"


def test_named_provider_out_of_scope_is_access_denied_in_phase_match() -> None:
    assert match_error(scripted({"return": MATCHED}), providers=["secret"]) == expected(
        "CG_ACCESS_DENIED", "match"
    )


def test_context_null_is_input_invalid() -> None:
    assert match_error(scripted({"return": MATCHED}), context=None) == expected(
        "CG_INPUT_INVALID", "match", "/context must not be null (omit the key instead)"
    )


def test_authorized_catalog_over_max_catalog_entries_is_catalog_too_large() -> None:
    config = scripted({"return": MATCHED}, budgets={"maxCatalogEntries": 1})
    assert match_error(config) == expected("CG_CATALOG_TOO_LARGE", "match")


def test_executor_sees_only_the_authorized_catalog_and_the_context() -> None:
    seen: list[MatchJob] = []

    class Recorder:
        name = "recorder"

        async def match(self, job: MatchJob) -> object:
            seen.append(job)
            return {"status": "unknown", "candidates": []}

    with BlockingCapabilityGraph.open(
        inline(ACME, SECRET, scope={"providers": ["acme"]}), executor=Recorder()
    ) as graph:
        assert graph.match(request="x", context={"role": "admin", "n": 1}).executor == "recorder"
    assert [entry["id"] for entry in seen[0].catalog] == ["acme::a", "acme::b"]
    assert dict(seen[0].context) == {"role": "admin", "n": 1}


def test_deadline_is_model_timeout() -> None:
    config = scripted({"sleepMs": 5000, "then": {"return": MATCHED}})
    started = time.monotonic()
    assert match_error(config, timeoutMs=100) == expected("CG_MODEL_TIMEOUT", "match")
    assert time.monotonic() - started < 2


def test_cancel_token_is_model_cancelled() -> None:
    async def scenario() -> dict[str, str]:
        graph = await CapabilityGraph.open(scripted({"sleepMs": 5000, "then": {"return": MATCHED}}))
        token = CancelToken()
        asyncio.get_running_loop().call_later(0.05, token.cancel)
        try:
            with pytest.raises(GraphError) as excinfo:
                await graph.match(request="x", cancel=token)
        finally:
            await graph.close()
        return error_of(excinfo)

    assert asyncio.run(scenario()) == expected("CG_MODEL_CANCELLED", "match")


def test_close_during_many_matches_rejects_them_all_with_graph_closed() -> None:
    async def scenario() -> list[Any]:
        graph = await CapabilityGraph.open(scripted({"sleepMs": 5000, "then": {"return": MATCHED}}))
        tasks = [asyncio.ensure_future(graph.match(request=f"r{i}")) for i in range(20)]
        await asyncio.sleep(0.1)
        started = time.monotonic()
        await graph.close()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert time.monotonic() - started < 1
        return results

    results = asyncio.run(scenario())
    assert all(
        isinstance(r, GraphError)
        and r.to_json()
        == {"code": "CG_GRAPH_CLOSED", "phase": "lifecycle", "message": "Graph is closed"}
        for r in results
    )


def test_blocking_twin_close_from_another_thread_stops_a_running_match() -> None:
    import threading

    graph = BlockingCapabilityGraph.open(scripted({"sleepMs": 5000, "then": {"return": MATCHED}}))
    threading.Timer(0.1, graph.close).start()
    with pytest.raises(GraphError) as excinfo:
        graph.match(request="x")
    assert error_of(excinfo)["code"] == "CG_GRAPH_CLOSED"


def test_no_executor_is_reported_before_the_catalog_budget() -> None:
    """[CG-PREC-11]: CG_MODEL_NOT_CONFIGURED even when the catalog is over maxCatalogEntries."""
    config = inline(ACME, budgets={"maxCatalogEntries": 1})
    assert len(ACME["capabilities"]) > 1
    with BlockingCapabilityGraph.open(config) as graph:
        with pytest.raises(GraphError) as excinfo:
            graph.match(request="anything")
        assert error_of(excinfo) == expected("CG_MODEL_NOT_CONFIGURED", "match")
