"""The async graph and its blocking twin: same method names, same results, same errors."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, CapabilityGraph, GraphError
from capability_graph_testing.common import capability, error_of, expected, inline, provider

MATCHED = {"status": "matched", "candidates": [{"id": "acme::a", "confidence": 0.5}]}
CONFIG = inline(
    provider("acme", capability("a", tags=["x"]), capability("b")),
    model={"executor": "scripted", "steps": [{"return": MATCHED}]},
)


def public_methods(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}


def test_both_twins_have_the_same_public_names() -> None:
    assert public_methods(CapabilityGraph) == public_methods(BlockingCapabilityGraph)


class AsyncDriver:
    """Runs the async graph on its own loop so a test can call it like the blocking twin."""

    def __init__(self, config: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.graph = self.loop.run_until_complete(CapabilityGraph.open(config))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.graph, name)
        return lambda *args, **kwargs: self.loop.run_until_complete(method(*args, **kwargs))

    def finish(self) -> None:
        self.loop.run_until_complete(self.graph.close())
        self.loop.close()


@pytest.fixture(params=["async", "blocking"])
def graph(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "blocking":
        with BlockingCapabilityGraph.open(CONFIG) as blocking:
            yield blocking
    else:
        driver = AsyncDriver(CONFIG)
        yield driver
        driver.finish()


def test_describe(graph: Any) -> None:
    assert [p.provider_id for p in graph.describe().providers] == ["acme"]


def test_list(graph: Any) -> None:
    assert [i.id for i in graph.list(tags=["x"]).items] == ["acme::a"]


def test_resolve(graph: Any) -> None:
    assert graph.resolve(ids=["acme::b"]).status == "ok"


def test_match(graph: Any) -> None:
    assert graph.match(request="anything").to_json()["candidates"] == MATCHED["candidates"]


def test_reload(graph: Any) -> None:
    assert graph.reload().ok is True


def test_call(graph: Any) -> None:
    assert graph.call("list_capabilities", {"limit": 1})["nextCursor"]


def test_errors_are_the_same_graph_error(graph: Any) -> None:
    with pytest.raises(GraphError) as excinfo:
        graph.resolve(ids=["acme::missing"])
    assert error_of(excinfo) == expected("CG_CAPABILITY_NOT_FOUND", "query")


def test_read_document_of_a_missing_document(graph: Any) -> None:
    with pytest.raises(GraphError) as excinfo:
        graph.read_document(capability_id="acme::a", document_id="nope")
    assert error_of(excinfo) == expected("CG_DOCUMENT_NOT_FOUND", "document")
