"""describe, list and resolve: results, precedence and every query error path."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import MISSING

from capability_graph import BlockingCapabilityGraph, CapabilityGraph, GraphError
from capability_graph._core.json import dump_bytes
from capability_graph._core.operations.requests import _surely_larger_than
from capability_graph_testing.common import (
    capability,
    error_of,
    expected,
    inline,
    provider,
    schema_validator,
)


def rel(kind: str, target: str) -> dict[str, str]:
    return {"kind": kind, "target": target}


ACME = provider(
    "acme",
    capability(
        "route.validation",
        whenToUse="A route needs a declared request contract.",
        tags=["http", "validation"],
        relations=[rel("requires", "schema.request"), rel("related", "billing::invoice.create")],
        documents=[
            {
                "id": "guide",
                "title": "Guide",
                "role": "guide",
                "locale": "en",
                "path": "knowledge/guide.md",
            },
            {"id": "upstream", "title": "Upstream", "url": "https://example.com/validation"},
        ],
    ),
    capability("schema.request", tags=["http"], relations=[rel("requires", "schema.core")]),
    capability("schema.core", relations=[rel("requires", "secret::vault")]),
    capability("orphan"),
)
BILLING = provider("billing", capability("invoice.create", tags=["money"]))
SECRET = provider("secret", capability("vault"))


@pytest.fixture
def graph() -> Iterator[BlockingCapabilityGraph]:
    with BlockingCapabilityGraph.open(
        inline(ACME, BILLING, SECRET, scope={"providers": ["acme", "billing"]})
    ) as opened:
        yield opened


def call_error(graph: BlockingCapabilityGraph, tool: str, arguments: Any) -> dict[str, str]:
    with pytest.raises(GraphError) as excinfo:
        graph.call(tool, arguments)
    return error_of(excinfo)


# -- the seed ------------------------------------------------------------------------------


def test_seed_example_resolving_a_missing_capability_gives_the_seeds_error_exactly() -> None:
    async def seed() -> dict[str, str]:
        graph = await CapabilityGraph.open(
            {
                "providers": [
                    {
                        "definition": {
                            "providerId": "acme",
                            "name": "Error example",
                            "version": "1",
                            "capabilities": [],
                        }
                    }
                ]
            }
        )
        try:
            await graph.resolve(ids=["acme::missing"])
        except GraphError as error:
            return error.to_json()
        finally:
            await graph.close()
        raise AssertionError("resolve did not fail")

    assert json.dumps(asyncio.run(seed()), indent=2) == json.dumps(
        {
            "code": "CG_CAPABILITY_NOT_FOUND",
            "phase": "query",
            "message": "Requested capability does not exist",
            "nextAction": "refresh",
        },
        indent=2,
    )


# -- describe ------------------------------------------------------------------------------


def test_describe_lists_only_providers_in_scope(graph: BlockingCapabilityGraph) -> None:
    described = graph.describe().to_json()
    assert [p["providerId"] for p in described["providers"]] == ["acme", "billing"]
    assert described["scope"] == {"providers": ["acme", "billing"]}
    assert described["model"] == {"configured": False}
    assert described["budgets"]["maxInputBytes"] == 65536
    schema_validator("describe-result.schema.json").validate(described)


def test_describe_rejects_any_argument(graph: BlockingCapabilityGraph) -> None:
    assert call_error(graph, "describe_graph", {"verbose": True}) == expected(
        "CG_INPUT_INVALID", "query", "/ has a key that is not allowed (allowed: none)"
    )


# -- list ----------------------------------------------------------------------------------


def test_list_returns_scoped_summaries_in_provider_then_id_order(
    graph: BlockingCapabilityGraph,
) -> None:
    result = graph.list().to_json()
    assert [i["id"] for i in result["items"]] == [
        "acme::orphan", "acme::route.validation", "acme::schema.core", "acme::schema.request",
        "billing::invoice.create",
    ]  # fmt: skip
    assert result["status"] == "ok"
    assert "nextCursor" not in result
    schema_validator("list-result.schema.json").validate(result)


def test_list_pages_with_cursor_until_exhausted(graph: BlockingCapabilityGraph) -> None:
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = graph.list(limit=2, cursor=cursor)
        seen += [i.id for i in page.items]
        if page.next_cursor is MISSING:  # the last page has no cursor
            break
        cursor = page.next_cursor
    assert seen == [i.id for i in graph.list().items]


def test_list_filters_by_every_tag(graph: BlockingCapabilityGraph) -> None:
    assert [i.id for i in graph.list(tags=["http", "validation"]).items] == [
        "acme::route.validation"
    ]


def test_list_filter_matching_nothing_is_ok_not_empty(graph: BlockingCapabilityGraph) -> None:
    assert graph.list(tags=["nothing"]).to_json()["status"] == "ok"


def test_list_of_an_empty_catalog_is_status_empty() -> None:
    with BlockingCapabilityGraph.open(inline(provider("acme"))) as graph:
        assert graph.list().to_json() == {
            "status": "empty",
            "revision": graph.describe().revision,
            "items": [],
        }


def test_list_naming_a_provider_out_of_scope_is_access_denied_even_if_it_exists(
    graph: BlockingCapabilityGraph,
) -> None:
    assert call_error(graph, "list_capabilities", {"providers": ["secret"]}) == expected(
        "CG_ACCESS_DENIED", "query"
    )


def test_list_naming_a_provider_that_does_not_exist_without_scope_is_provider_not_found() -> None:
    with BlockingCapabilityGraph.open(inline(ACME, BILLING, SECRET)) as graph:
        assert call_error(graph, "list_capabilities", {"providers": ["ghost"]}) == expected(
            "CG_PROVIDER_NOT_FOUND", "query"
        )


def test_cursor_with_other_filters_is_input_invalid(graph: BlockingCapabilityGraph) -> None:
    cursor = graph.list(limit=1).next_cursor
    assert call_error(graph, "list_capabilities", {"cursor": cursor, "tags": ["http"]}) == expected(
        "CG_INPUT_INVALID",
        "query",
        "Cursor is malformed, foreign or stale; restart listing without it",
    )


@pytest.mark.parametrize("cursor", ["garbage", "eyJ2IjoxfQ", "A" * 40])
def test_foreign_cursor_is_input_invalid(graph: BlockingCapabilityGraph, cursor: str) -> None:
    assert call_error(graph, "list_capabilities", {"cursor": cursor})["code"] == "CG_INPUT_INVALID"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"limit": 0}, "/limit must be at least 1"),
        ({"limit": 501}, "/limit must be at most 500"),
        ({"limit": "5"}, "/limit must be an integer"),
        ({"limit": True}, "/limit must be an integer"),
        ({"limit": None}, "/limit must not be null (omit the key instead)"),
        ({"providers": "acme"}, "/providers must be an array"),
        (
            {"colour": "red"},
            "/ has a key that is not allowed (allowed: providers, tags, limit, cursor)",
        ),
        ({"cursor": "x" * 32769}, "/cursor must have at most 32768 characters"),
    ],
    ids=[
        "zero-limit",
        "limit-over-range",
        "string-limit",
        "bool-limit",
        "null-limit",
        "string-for-list",
        "unknown-key",
        "long-cursor",
    ],
)
def test_invalid_list_arguments_are_input_invalid(
    graph: BlockingCapabilityGraph, arguments: Any, message: str
) -> None:
    assert call_error(graph, "list_capabilities", arguments) == expected(
        "CG_INPUT_INVALID", "query", message
    )


def test_arguments_that_are_not_an_object_are_input_invalid(graph: BlockingCapabilityGraph) -> None:
    assert call_error(graph, "list_capabilities", ["acme"]) == expected(
        "CG_INPUT_INVALID", "query", "/ must be an object"
    )


def test_unknown_tool_is_input_invalid_in_phase_query(graph: BlockingCapabilityGraph) -> None:
    assert call_error(graph, "drop_tables", {}) == expected(
        "CG_INPUT_INVALID", "query", "Unknown tool"
    )


# -- resolve -------------------------------------------------------------------------------


def test_resolve_depth_one_follows_every_kind_and_reports_edges(
    graph: BlockingCapabilityGraph,
) -> None:
    result = graph.resolve(ids=["acme::route.validation"]).to_json()
    assert [c["id"] for c in result["capabilities"]] == [
        "acme::route.validation", "acme::schema.request", "billing::invoice.create",
    ]  # fmt: skip
    assert result["edges"] == [
        {"from": "acme::route.validation", "kind": "requires", "to": "acme::schema.request"},
        {"from": "acme::route.validation", "kind": "related", "to": "billing::invoice.create"},
    ]
    assert result["status"] == "ok"
    schema_validator("resolve-result.schema.json").validate(result)


def test_resolve_detail_carries_document_metadata_without_paths(
    graph: BlockingCapabilityGraph,
) -> None:
    result = graph.resolve(ids=["acme::route.validation"], relations={"depth": 0}).to_json()
    detail = result["capabilities"][0]
    assert detail["documents"] == [
        {
            "id": "guide",
            "title": "Guide",
            "role": "guide",
            "locale": "en",
            "mediaType": "text/markdown",
            "kind": "file",
        },
        {
            "id": "upstream",
            "title": "Upstream",
            "mediaType": "text/plain",
            "kind": "url",
            "url": "https://example.com/validation",
        },
    ]
    assert detail["relations"] == [
        {"kind": "requires", "target": "acme::schema.request"},
        {"kind": "related", "target": "billing::invoice.create"},
    ]
    assert "knowledge/guide.md" not in json.dumps(detail)


def test_resolve_reaching_a_provider_out_of_scope_is_partial_not_an_error(
    graph: BlockingCapabilityGraph,
) -> None:
    result = graph.resolve(
        ids=["acme::route.validation"], relations={"kinds": ["requires"], "depth": 8}
    ).to_json()
    assert result["status"] == "partial"
    assert result["unresolved"] == [
        {
            "from": "acme::schema.core",
            "kind": "requires",
            "target": "secret::vault",
            "reason": "out_of_scope",
        }
    ]
    assert [c["id"] for c in result["capabilities"]] == [
        "acme::route.validation", "acme::schema.request", "acme::schema.core",
    ]  # fmt: skip


def test_resolve_reaching_a_provider_not_loaded_is_partial() -> None:
    definition = provider("acme", capability("a", relations=[rel("requires", "ghost::x")]))
    with BlockingCapabilityGraph.open(inline(definition)) as graph:
        assert graph.resolve(ids=["acme::a"]).to_json()["unresolved"] == [
            {
                "from": "acme::a",
                "kind": "requires",
                "target": "ghost::x",
                "reason": "provider_not_loaded",
            }
        ]


def test_resolve_reaching_a_missing_capability_of_a_loaded_provider_is_partial() -> None:
    acme = provider("acme", capability("a", relations=[rel("requires", "billing::gone")]))
    with BlockingCapabilityGraph.open(inline(acme, BILLING)) as graph:
        assert graph.resolve(ids=["acme::a"]).unresolved[0].reason == "capability_not_found"


def test_resolve_depth_zero_returns_only_the_roots(graph: BlockingCapabilityGraph) -> None:
    result = graph.resolve(
        ids=["acme::route.validation", "acme::orphan"], relations={"depth": 0}
    ).to_json()
    assert [c["id"] for c in result["capabilities"]] == ["acme::route.validation", "acme::orphan"]
    assert result["edges"] == []


def test_resolve_named_id_out_of_scope_is_access_denied_whether_or_not_it_exists(
    graph: BlockingCapabilityGraph,
) -> None:
    assert call_error(graph, "resolve_capabilities", {"ids": ["secret::vault"]}) == expected(
        "CG_ACCESS_DENIED", "query"
    )
    assert call_error(graph, "resolve_capabilities", {"ids": ["secret::nothing"]}) == expected(
        "CG_ACCESS_DENIED", "query"
    )


def test_resolve_scope_is_checked_before_existence_across_all_ids(
    graph: BlockingCapabilityGraph,
) -> None:
    error = call_error(graph, "resolve_capabilities", {"ids": ["acme::missing", "secret::vault"]})
    assert error["code"] == "CG_ACCESS_DENIED"


def test_resolve_provider_not_found_comes_before_capability_not_found() -> None:
    with BlockingCapabilityGraph.open(inline(ACME)) as graph:
        error = call_error(graph, "resolve_capabilities", {"ids": ["acme::missing", "ghost::x"]})
    assert error == expected("CG_PROVIDER_NOT_FOUND", "query")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"ids": []}, "/ids must have at least 1 items"),
        (
            {"ids": ["acme.route"]},
            "/ids/0 does not have the required format (expected: provider::capability)",
        ),
        (
            {"ids": ["acme::a::b"]},
            "/ids/0 does not have the required format (expected: provider::capability)",
        ),
        ({"ids": ["acme::a"] * 101}, "/ids must have at most 100 items"),
        (
            {"ids": ["acme::orphan"], "relations": {"depth": 9}},
            "/relations/depth must be at most 8",
        ),
        (
            {"ids": ["acme::orphan"], "relations": {"kinds": ["owns"]}},
            '/relations/kinds/0 must be one of: "requires", "parent", "specializes", "related"',
        ),
        (
            {"ids": ["acme::orphan"], "relations": None},
            "/relations must not be null (omit the key instead)",
        ),
        ({}, "/ requires the key ids"),
    ],
    ids=[
        "no-ids",
        "dotted-id",
        "two-separators",
        "too-many-ids",
        "deep",
        "bad-kind",
        "null-relations",
        "missing-ids",
    ],
)
def test_invalid_resolve_arguments_are_input_invalid(
    graph: BlockingCapabilityGraph, arguments: Any, message: str
) -> None:
    assert call_error(graph, "resolve_capabilities", arguments) == expected(
        "CG_INPUT_INVALID", "query", message
    )


def test_input_shape_is_checked_before_scope(graph: BlockingCapabilityGraph) -> None:
    error = call_error(graph, "resolve_capabilities", {"ids": ["secret::vault"], "extra": 1})
    assert error["code"] == "CG_INPUT_INVALID"


# -- budgets -------------------------------------------------------------------------------


def test_request_over_max_input_bytes_is_input_too_large_before_shape() -> None:
    with BlockingCapabilityGraph.open(inline(ACME, budgets={"maxInputBytes": 64})) as graph:
        error = call_error(
            graph, "resolve_capabilities", {"ids": ["acme::orphan"], "junk": "x" * 100}
        )
    assert error == expected("CG_INPUT_TOO_LARGE", "query")


REQUEST_VALUES = st.recursive(
    st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.text(alphabet=st.characters(exclude_categories=["Cs"])),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.characters(exclude_categories=["Cs"])), children, max_size=4
        )
    ),
    max_leaves=20,
)


@given(REQUEST_VALUES)
def test_the_early_size_bound_never_refuses_a_value_of_exactly_the_limit(value: Any) -> None:
    assert not _surely_larger_than(value, len(dump_bytes(value)))


def test_a_request_of_exactly_max_input_bytes_passes_and_one_byte_more_does_not() -> None:
    def request(size: int) -> dict[str, Any]:
        skeleton = {"providers": ["acme"], "tags": [""]}
        return {
            "providers": ["acme"],
            "tags": ["t" * (size - len(json.dumps(skeleton, separators=(",", ":"))))],
        }

    with BlockingCapabilityGraph.open(inline(ACME, budgets={"maxInputBytes": 64})) as graph:
        at_limit = request(64)
        assert len(json.dumps(at_limit, separators=(",", ":"))) == 64
        assert graph.call("list_capabilities", at_limit)["items"] == []
        assert call_error(graph, "list_capabilities", request(65)) == expected(
            "CG_INPUT_TOO_LARGE", "query"
        )


def test_a_lone_surrogate_counts_as_its_six_byte_escape_against_max_input_bytes() -> None:
    # {"providers":["acme"],"tags":[""]} is 34 bytes; each lone surrogate adds six.
    def request(surrogates: int) -> dict[str, Any]:
        return {"providers": ["acme"], "tags": ["\udc00" * surrogates]}

    with BlockingCapabilityGraph.open(inline(ACME, budgets={"maxInputBytes": 64})) as graph:
        assert call_error(graph, "list_capabilities", request(5)) == expected(
            "CG_INPUT_INVALID", "query", "/tags/0 a string has a lone surrogate"
        )
        assert call_error(graph, "list_capabilities", request(6)) == expected(
            "CG_INPUT_TOO_LARGE", "query"
        )


def test_result_over_max_result_bytes_is_result_too_large_never_truncated() -> None:
    with BlockingCapabilityGraph.open(inline(ACME, budgets={"maxResultBytes": 200})) as graph:
        assert call_error(graph, "list_capabilities", {}) == expected(
            "CG_RESULT_TOO_LARGE", "query"
        )


def test_a_resolve_result_of_exactly_max_result_bytes_is_returned_one_byte_more_is_too_large() -> (
    None
):
    # The size check adds up the remembered sizes of the shared details: it must stay exact.
    with BlockingCapabilityGraph.open(inline(ACME)) as graph:
        request = {"ids": ["acme::route.validation"], "relations": {"depth": 2}}
        size = len(json.dumps(graph.call("resolve_capabilities", request), separators=(",", ":")))
    with BlockingCapabilityGraph.open(inline(ACME, budgets={"maxResultBytes": size})) as graph:
        assert graph.call("resolve_capabilities", request)["capabilities"]
    with BlockingCapabilityGraph.open(inline(ACME, budgets={"maxResultBytes": size - 1})) as graph:
        for _ in range(2):  # the second time from the details' remembered sizes
            assert call_error(graph, "resolve_capabilities", request) == expected(
                "CG_RESULT_TOO_LARGE", "query"
            )


# -- lifecycle -----------------------------------------------------------------------------


def test_every_call_after_close_is_graph_closed_without_next_action() -> None:
    graph = BlockingCapabilityGraph.open(inline(ACME))
    graph.close()
    graph.close()  # idempotent
    with pytest.raises(GraphError) as excinfo:
        graph.describe()
    assert error_of(excinfo) == {
        "code": "CG_GRAPH_CLOSED",
        "phase": "lifecycle",
        "message": "Graph is closed",
    }


def test_closed_graph_is_reported_before_input_problems() -> None:
    async def scenario() -> dict[str, str]:
        graph = await CapabilityGraph.open(inline(ACME))
        await graph.close()
        with pytest.raises(GraphError) as excinfo:
            await graph.call("nope", "not even an object")
        return error_of(excinfo)

    assert asyncio.run(scenario())["code"] == "CG_GRAPH_CLOSED"


def test_async_context_manager_closes_the_graph() -> None:
    async def scenario() -> bool:
        async with await CapabilityGraph.open(inline(ACME)) as graph:
            await graph.describe()
        return graph.closed

    assert asyncio.run(scenario()) is True


def test_whole_number_floats_are_integers_as_in_json(graph: BlockingCapabilityGraph) -> None:
    result = graph.call("list_capabilities", {"limit": 2.0})
    assert len(result["items"]) == 2


def test_fractional_limit_is_input_invalid(graph: BlockingCapabilityGraph) -> None:
    assert call_error(graph, "list_capabilities", {"limit": 2.5}) == expected(
        "CG_INPUT_INVALID", "query", "/limit must be an integer"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"SECRET-4f1c": None}, "/ must not be null (omit the key instead)"),
        (
            {"ids": ["acme::orphan"], "relations": {"SECRET-4f1c": None}},
            "/relations must not be null (omit the key instead)",
        ),
        (
            {"ids": ["acme::orphan"], "relations": {"\x01" * 400: None}},
            "/relations must not be null (omit the key instead)",
        ),
        (
            {"ids": ["acme::orphan"], "SECRET-4f1c": 1},
            "/ has a key that is not allowed (allowed: ids, relations)",
        ),
    ],
    ids=["null-under-unknown-key", "nested-unknown-key", "control-character-key", "unknown-key"],
)
def test_messages_name_contract_keys_only_never_the_callers_keys(
    graph: BlockingCapabilityGraph, arguments: Any, message: str
) -> None:
    assert call_error(graph, "resolve_capabilities", arguments) == expected(
        "CG_INPUT_INVALID", "query", message
    )
