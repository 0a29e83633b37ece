"""reload: atomic, all-or-nothing publication; the old snapshot keeps serving on failure."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, CapabilityGraph, GraphError
from capability_graph_testing.common import (
    capability,
    error_of,
    expected,
    provider,
    schema_validator,
)


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    write(tmp_path / "acme.json", provider("acme", capability("a")))
    write(tmp_path / "billing.json", provider("billing", capability("b")))
    return write(
        tmp_path / "config.json", {"providers": [{"path": "acme.json"}, {"path": "billing.json"}]}
    )


def test_reload_without_changes_reports_every_provider_unchanged(sources: Path) -> None:
    with BlockingCapabilityGraph.open(sources) as graph:
        before = graph.describe().revision
        result = graph.reload().to_json()
    assert result["ok"] is True
    assert result["revision"] == before
    assert [(p["providerId"], p["changed"]) for p in result["providers"]] == [
        ("acme", False),
        ("billing", False),
    ]
    schema_validator("reload-result.schema.json").validate(result)


def test_reload_publishes_a_changed_provider(sources: Path) -> None:
    with BlockingCapabilityGraph.open(sources) as graph:
        write(sources.parent / "acme.json", provider("acme", capability("a"), capability("c")))
        result = graph.reload()
        assert result.ok is True
        assert [p.changed for p in result.providers] == [True, False]
        assert [i.id for i in graph.list().items] == ["acme::a", "acme::c", "billing::b"]
        assert graph.describe().revision == result.revision


def test_failed_reload_is_ok_false_with_the_real_cause_and_keeps_serving(sources: Path) -> None:
    with BlockingCapabilityGraph.open(sources) as graph:
        before = graph.describe().revision
        (sources.parent / "acme.json").write_text("{", encoding="utf-8")
        result = graph.reload().to_json()
        assert result["ok"] is False
        assert result["error"] == expected("CG_RELOAD_FAILED", "load")
        assert result["revision"] == before
        assert result["providers"][0]["error"] == expected(
            "CG_DEFINITION_INVALID", "load", "/ not well-formed JSON"
        )
        assert result["providers"][1]["ok"] is True
        assert graph.describe().revision == before
        assert [i.id for i in graph.list().items] == ["acme::a", "billing::b"]
        schema_validator("reload-result.schema.json").validate(result)


def test_reload_failing_a_cross_provider_rule_publishes_nothing(sources: Path) -> None:
    with BlockingCapabilityGraph.open(sources) as graph:
        write(
            sources.parent / "acme.json",
            provider(
                "acme", capability("a", relations=[{"kind": "requires", "target": "billing::b"}])
            ),
        )
        write(
            sources.parent / "billing.json",
            provider(
                "billing", capability("b", relations=[{"kind": "requires", "target": "acme::a"}])
            ),
        )
        result = graph.reload()
        assert result.ok is False
        assert {p.error.code for p in result.providers} == {"CG_RELATION_CYCLE"}
        assert graph.resolve(ids=["acme::a"]).capabilities[0].relations == []


def test_reload_of_named_providers_rereads_only_them(sources: Path) -> None:
    with BlockingCapabilityGraph.open(sources) as graph:
        write(sources.parent / "acme.json", provider("acme", capability("z")))
        write(sources.parent / "billing.json", provider("billing", capability("y")))
        result = graph.reload(providers=["billing"])
        assert [p.provider_id for p in result.providers] == ["billing"]
        assert [i.id for i in graph.list().items] == ["acme::a", "billing::y"]


def test_reload_naming_a_provider_that_is_not_loaded_is_config_invalid(sources: Path) -> None:
    with BlockingCapabilityGraph.open(sources) as graph, pytest.raises(GraphError) as excinfo:
        graph.reload(providers=["ghost"])
    assert error_of(excinfo) == expected(
        "CG_CONFIG_INVALID", "config", "/providers/0 names a provider that is not loaded"
    )


def test_reload_after_close_is_graph_closed(sources: Path) -> None:
    graph = BlockingCapabilityGraph.open(sources)
    graph.close()
    with pytest.raises(GraphError) as excinfo:
        graph.reload()
    assert error_of(excinfo)["code"] == "CG_GRAPH_CLOSED"


def test_queries_during_alternating_reloads_see_only_whole_published_snapshots(
    sources: Path,
) -> None:
    good_a = provider("acme", capability("a"), capability("a2"))
    good_b = provider("acme", capability("a"))
    with BlockingCapabilityGraph.open(sources) as graph:
        published = {graph.describe().revision}
        lock = threading.Lock()
        stop = threading.Event()
        seen: list[tuple[str, tuple[str, ...]]] = []

        def query() -> None:
            while not stop.is_set():
                page = graph.list()
                seen.append((page.revision, tuple(i.id for i in page.items)))

        readers = [threading.Thread(target=query) for _ in range(3)]
        for reader in readers:
            reader.start()
        for round_ in range(12):
            if round_ % 3 == 2:
                (sources.parent / "acme.json").write_text("{", encoding="utf-8")
            else:
                write(sources.parent / "acme.json", good_a if round_ % 2 else good_b)
            result = graph.reload()
            with lock:
                published.add(result.revision)
            assert result.ok is (round_ % 3 != 2)
        stop.set()
        for reader in readers:
            reader.join()
    by_revision: dict[str, set[tuple[str, ...]]] = {}
    for revision, ids in seen:
        assert revision in published
        by_revision.setdefault(revision, set()).add(ids)
    assert all(len(contents) == 1 for contents in by_revision.values())


def test_async_reloads_are_serialized(sources: Path) -> None:
    async def scenario() -> list[bool]:
        graph = await CapabilityGraph.open(sources)
        try:
            results = await asyncio.gather(*(graph.reload() for _ in range(5)))
        finally:
            await graph.close()
        return [r.ok for r in results]

    assert asyncio.run(scenario()) == [True] * 5


def test_a_source_that_renames_its_provider_has_one_entry_with_the_new_id(sources: Path) -> None:
    """[CG-LIFE-11]: one entry per reloaded source; the old id is gone after the reload."""
    with BlockingCapabilityGraph.open(sources) as graph:
        write(sources.parent / "acme.json", provider("acme2", capability("a")))
        result = graph.reload().to_json()
        assert result["ok"] is True
        assert [(p["providerId"], p["changed"]) for p in result["providers"]] == [
            ("acme2", True),
            ("billing", False),
        ]
        assert [i.id for i in graph.list().items] == ["acme2::a", "billing::b"]
        with pytest.raises(GraphError) as excinfo:
            graph.list(providers=["acme"])
        assert error_of(excinfo)["code"] == "CG_PROVIDER_NOT_FOUND"


def test_a_failed_reload_reports_a_renamed_source_by_its_new_id_and_keeps_the_old(
    sources: Path,
) -> None:
    """[CG-LIFE-11]: a failing entry carries the id that keeps serving."""
    with BlockingCapabilityGraph.open(sources) as graph:
        write(sources.parent / "acme.json", provider("acme2", capability("a")))
        (sources.parent / "billing.json").write_text('{"providerId": "billing2"}')
        result = graph.reload().to_json()
        assert result["ok"] is False
        assert [(p["providerId"], p["ok"]) for p in result["providers"]] == [
            ("acme2", True),
            ("billing", False),
        ]
        assert [i.id for i in graph.list().items] == ["acme::a", "billing::b"]
