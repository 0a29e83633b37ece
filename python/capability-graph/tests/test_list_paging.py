"""Paging through a selection ([CG-LIST-1], [CG-CUR-8]): every page after the first is a slice of
the selection its filters make, whichever other selections were paged in between.

The graph keeps a few selections for the pages after the first (so that paging through
everything costs each page its own items; ``bench_scale`` measures that it grows linearly):
these tests pin that what it keeps never changes a page.
"""

from __future__ import annotations

from typing import Any

from capability_graph import BlockingCapabilityGraph

TAGS = ("red", "green", "blue")


def _definition(provider_id: str, count: int) -> dict[str, Any]:
    return {
        "providerId": provider_id,
        "name": provider_id,
        "version": "1",
        "capabilities": [
            {
                "id": f"cap.{index:03d}",
                "name": f"Capability {index}",
                "description": "A capability.",
                "tags": [tag for position, tag in enumerate(TAGS) if index % (position + 2) == 0],
            }
            for index in range(count)
        ],
    }


CONFIG = {
    "providers": [{"definition": _definition("alpha", 40)}, {"definition": _definition("beta", 25)}]
}

#: Seven filters: more than the graph keeps, so paging through them in turn drops kept ones.
FILTERS: list[dict[str, Any]] = [
    {},
    {"tags": ["red"]},
    {"tags": ["green"]},
    {"tags": ["blue", "red"]},
    {"providers": ["beta"]},
    {"providers": ["alpha"], "tags": ["green"]},
    {"providers": ["beta", "alpha"], "tags": ["red"]},
]


def _expected(graph: BlockingCapabilityGraph, filters: dict[str, Any]) -> list[str]:
    return [item.id for item in graph.list(limit=500, **filters).items]


def test_paging_selections_in_turn_gives_each_its_whole_selection_in_order() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        wanted = [_expected(graph, filters) for filters in FILTERS]
        seen: list[list[str]] = [[] for _ in FILTERS]
        cursors: list[str | None] = [None] * len(FILTERS)
        done = [False] * len(FILTERS)
        while not all(done):
            for index, filters in enumerate(FILTERS):  # one page of each selection in turn
                if done[index]:
                    continue
                page = graph.list(limit=3, cursor=cursors[index], **filters)
                seen[index] += [item.id for item in page.items]
                cursors[index] = page.next_cursor if isinstance(page.next_cursor, str) else None
                done[index] = cursors[index] is None
        assert seen == wanted
        assert all(wanted)  # every filter selects something: the test pages through each
