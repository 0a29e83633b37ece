"""The SDK as a Python user meets it: exports, opening, reprs, module names, docstrings, types."""

from __future__ import annotations

import asyncio
import gc
import inspect
import re
import subprocess
import sys
import traceback
import typing
from pathlib import Path
from typing import Any

import pytest

import capability_graph
from capability_graph import (
    BlockingCapabilityGraph,
    BlockingToolAdapter,
    Budgets,
    Capability,
    CapabilityGraph,
    DocumentPolicy,
    GraphError,
    GraphOpening,
    HostConfig,
    InlineProviderSource,
    LexicalExecutorConfig,
    ProviderDefinition,
    ReadDocumentResult,
    Scope,
)
from capability_graph._generated.models import budgets, config, definition
from capability_graph_testing.common import capability, error_of, expected, inline, provider

CONFIG = inline(provider("acme", capability("a"), capability("b")), provider("billing"))
INVALID = {"providers": 3}
USER_SCRIPT = Path(__file__).with_name("sdk_user_script.py")


def test_public_api_is_pinned() -> None:
    assert capability_graph.__all__ == [
        "CONTRACT_VERSION",
        "BlockingCapabilityGraph",
        "BlockingToolAdapter",
        "Budgets",
        "CancelToken",
        "Capability",
        "CapabilityDetail",
        "CapabilityGraph",
        "CapabilitySummary",
        "Check",
        "CheckStatus",
        "CodexExecutorConfig",
        "DescribeResult",
        "DocumentBodies",
        "DocumentBodiesMode",
        "DocumentDeclaration",
        "DocumentMetadata",
        "DocumentPolicy",
        "Edge",
        "EffectiveBudgets",
        "ErrorCode",
        "ErrorObject",
        "Executor",
        "FileDocumentDeclaration",
        "FileDocumentMetadata",
        "FileProviderSource",
        "GraphError",
        "GraphOpening",
        "HostConfig",
        "InlineProviderSource",
        "LexicalExecutorConfig",
        "ListResult",
        "ListStatus",
        "MatchCandidate",
        "MatchJob",
        "MatchResult",
        "MatchStatus",
        "MediaType",
        "ModelConfig",
        "ModelInfo",
        "NextAction",
        "OpenAIExecutorConfig",
        "Phase",
        "ProviderDefinition",
        "ProviderInfo",
        "ProviderReloadError",
        "ProviderReloadOutcome",
        "ProviderReloaded",
        "ProviderSource",
        "ReadDocumentResult",
        "Relation",
        "RelationDeclaration",
        "RelationKind",
        "RelationTraversal",
        "ReloadFailed",
        "ReloadResult",
        "ReloadSucceeded",
        "Report",
        "ResolveResult",
        "ResolveStatus",
        "Scope",
        "ScriptedExecutorConfig",
        "ScriptedRaise",
        "ScriptedRaiseExceptionStep",
        "ScriptedRaiseStep",
        "ScriptedReturnStep",
        "ScriptedSleepStep",
        "ScriptedStep",
        "ToolAdapter",
        "UnresolvedReason",
        "UnresolvedRelation",
        "UrlDocumentDeclaration",
        "UrlDocumentMetadata",
        "anthropic_tools",
        "diagnose",
        "openai_chat_tools",
        "openai_responses_tools",
        "tool_definitions",
    ]
    for name in capability_graph.__all__:
        assert getattr(capability_graph, name) is not None


# --- open: awaitable and an async context manager -----------------------------------------------


def test_async_with_open_without_await_closes_the_graph_on_exit() -> None:
    async def scenario() -> tuple[bool, bool]:
        async with CapabilityGraph.open(CONFIG) as graph:
            open_inside = not graph.closed
        return open_inside, graph.closed

    assert asyncio.run(scenario()) == (True, True)


def test_await_open_returns_an_open_graph_that_the_caller_closes() -> None:
    async def scenario() -> tuple[bool, list[str], bool]:
        graph = await CapabilityGraph.open(CONFIG)
        open_after_await = not graph.closed
        ids = [item.id for item in (await graph.list()).items]
        await graph.close()
        return open_after_await, ids, graph.closed

    assert asyncio.run(scenario()) == (True, ["acme::a", "acme::b"], True)


def test_async_with_await_open_still_works() -> None:
    async def scenario() -> bool:
        async with await CapabilityGraph.open(CONFIG) as graph:
            assert isinstance(graph, CapabilityGraph)
        return graph.closed

    assert asyncio.run(scenario()) is True


def test_async_with_open_closes_the_graph_when_the_block_raises() -> None:
    opened: list[CapabilityGraph] = []

    async def scenario() -> None:
        async with CapabilityGraph.open(CONFIG) as graph:
            opened.append(graph)
            raise KeyError("from the block")

    with pytest.raises(KeyError, match="from the block"):
        asyncio.run(scenario())
    assert opened[0].closed is True


def test_blocking_with_open_closes_the_graph_on_exit() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        open_inside = not graph.closed
    assert (open_inside, graph.closed) == (True, True)


def test_blocking_with_open_closes_the_graph_when_the_block_raises() -> None:
    opened: list[BlockingCapabilityGraph] = []

    def scenario() -> None:
        with BlockingCapabilityGraph.open(CONFIG) as graph:
            opened.append(graph)
            raise KeyError("from the block")

    with pytest.raises(KeyError, match="from the block"):
        scenario()
    assert opened[0].closed is True


def test_async_with_open_of_an_invalid_config_raises_before_the_block() -> None:
    entered = []

    async def scenario() -> None:
        async with CapabilityGraph.open(INVALID):
            entered.append(True)

    with pytest.raises(GraphError) as excinfo:
        asyncio.run(scenario())
    assert error_of(excinfo) == expected(
        "CG_CONFIG_INVALID", "config", "/providers must be an array"
    )
    assert entered == []


def test_blocking_open_of_an_invalid_config_raises_the_same_error() -> None:
    with pytest.raises(GraphError) as excinfo:
        BlockingCapabilityGraph.open(INVALID)
    assert error_of(excinfo) == expected(
        "CG_CONFIG_INVALID", "config", "/providers must be an array"
    )


def test_an_opening_is_used_once_like_a_coroutine() -> None:
    async def scenario() -> None:
        opening = CapabilityGraph.open(CONFIG)
        await (await opening).close()
        await opening

    with pytest.raises(RuntimeError, match="cannot reuse already awaited coroutine"):
        asyncio.run(scenario())


def test_an_opening_is_a_coroutine_for_asyncio_run_and_create_task() -> None:
    graph = asyncio.run(CapabilityGraph.open(CONFIG))
    assert isinstance(graph, CapabilityGraph)
    asyncio.run(graph.close())

    async def in_a_task() -> CapabilityGraph:
        return await asyncio.create_task(CapabilityGraph.open(CONFIG))

    task_graph = asyncio.run(in_a_task())
    assert isinstance(task_graph, CapabilityGraph)
    asyncio.run(task_graph.close())


def test_an_opening_never_awaited_warns_like_a_coroutine() -> None:
    def abandon_an_opening() -> None:
        opening = CapabilityGraph.open(CONFIG)
        assert isinstance(opening, GraphOpening)
        del opening
        gc.collect()

    with pytest.warns(RuntimeWarning, match="was never awaited"):
        abandon_an_opening()


# --- str and repr -------------------------------------------------------------------------------


def test_graph_error_str_leads_with_code_and_phase() -> None:
    error = GraphError("CG_CONFIG_INVALID", "config", "/providers must be an array")
    assert str(error) == "CG_CONFIG_INVALID (config): /providers must be an array"


def test_graph_error_to_json_is_unchanged_by_str() -> None:
    error = GraphError("CG_CONFIG_INVALID", "config", "/providers must be an array")
    assert error.to_json() == expected("CG_CONFIG_INVALID", "config", "/providers must be an array")


def test_graph_error_repr_shows_code_phase_message_and_next_action() -> None:
    assert repr(GraphError.of("CG_CAPABILITY_NOT_FOUND", "query")) == (
        "GraphError(code='CG_CAPABILITY_NOT_FOUND', phase='query', "
        "message='Requested capability does not exist', next_action='refresh')"
    )


def test_traceback_names_the_error_by_its_public_module() -> None:
    error = GraphError("CG_CONFIG_INVALID", "config", "/providers must be an array")
    assert traceback.format_exception_only(error) == [
        "capability_graph.GraphError: CG_CONFIG_INVALID (config): /providers must be an array\n"
    ]


def test_graph_repr_shows_revision_providers_in_scope_and_closed() -> None:
    async def scenario() -> tuple[str, str, str]:
        graph = await CapabilityGraph.open({**CONFIG, "scope": {"providers": ["acme"]}})
        revision = (await graph.describe()).revision
        before = repr(graph)
        await graph.close()
        return revision, before, repr(graph)

    revision, before, after = asyncio.run(scenario())
    assert before == f"<CapabilityGraph revision={revision!r} providers=['acme'] closed=False>"
    assert after == f"<CapabilityGraph revision={revision!r} providers=['acme'] closed=True>"


def test_blocking_graph_repr_is_the_twin_of_the_async_repr() -> None:
    graph = BlockingCapabilityGraph.open(CONFIG)
    revision = graph.describe().revision
    assert repr(graph) == (
        f"<BlockingCapabilityGraph revision={revision!r} providers=['acme', 'billing'] "
        "closed=False>"
    )
    graph.close()
    assert repr(graph).endswith("closed=True>")


def test_graph_repr_says_how_many_provider_ids_it_leaves_out() -> None:
    many = inline(*(provider(f"p{index:02}") for index in range(13)))
    with BlockingCapabilityGraph.open(many) as graph:
        shown = ", ".join(f"'p{index:02}'" for index in range(10))
        assert f"providers=[{shown}, <3 more>]" in repr(graph)


def test_tool_adapter_repr_shows_its_graph() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        assert repr(BlockingToolAdapter(graph)) == f"BlockingToolAdapter({graph!r})"


def test_result_repr_counts_lists_instead_of_printing_them() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        page = graph.list(limit=1)
    assert repr(page) == (
        f"ListResult(status='ok', revision={page.revision!r}, items=[1 item], "
        f"next_cursor={page.next_cursor!r})"
    )


def test_result_repr_leaves_out_what_the_result_omits() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        page = graph.list()
    assert repr(page) == f"ListResult(status='ok', revision={page.revision!r}, items=[2 items])"


def test_document_result_repr_shows_the_body_by_its_length() -> None:
    document = ReadDocumentResult(
        capability_id="acme::a",
        document_id="guide",
        media_type="text/markdown",
        bytes=500,
        sha256="0" * 64,
        text="x" * 500,
    )
    assert repr(document) == (
        "ReadDocumentResult(capability_id='acme::a', document_id='guide', "
        f"media_type='text/markdown', bytes=500, sha256={'0' * 64!r}, text=<500 characters>)"
    )


# --- module names, type hints, docstrings -------------------------------------------------------

HAND_WRITTEN = [
    value
    for name in capability_graph.__all__
    if isinstance(value := getattr(capability_graph, name), type)
    and not value.__module__.startswith("capability_graph._generated")
]


def test_public_classes_report_the_package_as_their_module() -> None:
    assert {cls.__name__ for cls in HAND_WRITTEN} >= {
        "GraphError",
        "CapabilityGraph",
        "BlockingCapabilityGraph",
        "GraphOpening",
        "ToolAdapter",
        "BlockingToolAdapter",
        "CancelToken",
        "ErrorCode",
    }
    assert {cls.__name__: cls.__module__ for cls in HAND_WRITTEN} == {
        cls.__name__: "capability_graph" for cls in HAND_WRITTEN
    }


@pytest.mark.parametrize("cls", HAND_WRITTEN, ids=lambda cls: cls.__name__)
def test_public_classes_keep_resolvable_type_hints(cls: type) -> None:
    typing.get_type_hints(cls)


def public_members(cls: type) -> dict[str, Any]:
    """The public functions and properties a class defines or inherits from a private base."""
    members: dict[str, Any] = {}
    for owner in reversed(cls.__mro__):
        if owner.__module__ == "builtins" or owner.__name__ in {"Generic", "Protocol"}:
            continue
        if owner.__module__.startswith(("collections.", "enum", "typing")):
            continue
        for name, value in vars(owner).items():
            if not name.startswith("_") and (
                inspect.isfunction(value) or isinstance(value, (property, classmethod))
            ):
                members[name] = value
    return members


@pytest.mark.parametrize("cls", HAND_WRITTEN, ids=lambda cls: cls.__name__)
def test_every_public_class_and_method_has_a_docstring(cls: type) -> None:
    assert inspect.getdoc(cls)
    undocumented = [
        name
        for name, member in public_members(cls).items()
        if not (member.__func__ if isinstance(member, classmethod) else member).__doc__
    ]
    assert undocumented == []


REST_ROLE = re.compile(r":(?:class|meth|func|attr|mod|data|exc|obj):`")


@pytest.mark.parametrize("cls", HAND_WRITTEN, ids=lambda cls: cls.__name__)
def test_public_docstrings_have_no_rest_roles_for_the_api_reference(cls: type) -> None:
    # The API reference renders docstrings as Markdown (mkdocstrings): a reST role would show raw.
    texts = [cls.__doc__ or ""]
    for member in public_members(cls).values():
        texts.append((member.__func__ if isinstance(member, classmethod) else member).__doc__ or "")
    assert [text for text in texts if REST_ROLE.search(text)] == []


# --- the host configuration models --------------------------------------------------------------


def test_open_accepts_a_host_config_built_from_the_exported_models() -> None:
    host = HostConfig(
        providers=[
            InlineProviderSource(
                definition=ProviderDefinition(
                    providerId="acme",
                    name="Acme",
                    version="1",
                    capabilities=[Capability(id="a", name="A", description="Does a.")],
                )
            )
        ],
        scope=Scope(providers=["acme"]),
        documents=DocumentPolicy(bodies="none"),
        budgets=Budgets(maxCapabilities=10),
        model=LexicalExecutorConfig(executor="lexical"),
    )
    with BlockingCapabilityGraph.open(host) as graph:
        described = graph.describe()
    assert described.scope == Scope(providers=["acme"])
    assert described.budgets.max_capabilities == 10
    assert described.model.to_json() == {"configured": True, "executor": "lexical"}


def test_every_model_a_host_config_is_made_of_is_exported() -> None:
    generated = {
        name: value
        for module in (config, budgets, definition)
        for name, value in vars(module).items()
        if isinstance(value, type) and value.__module__ == module.__name__
    }
    parts = set(HostConfig.model_json_schema()["$defs"]) | {"HostConfig"}
    models = sorted(name for name in parts if name in generated)
    assert "ScriptedSleepStep" in models
    assert {name: getattr(capability_graph, name, None) for name in models} == {
        name: generated[name] for name in models
    }
    assert set(models) <= set(capability_graph.__all__)


# --- a user's program ---------------------------------------------------------------------------


def test_the_user_script_runs_on_the_public_api(tmp_path: Path) -> None:
    # The typing session also runs mypy --strict over this script.
    done = subprocess.run(
        [sys.executable, str(USER_SCRIPT)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.stderr == ""
    assert done.stdout.splitlines() == [
        "ok ['acme::route.validation']",
        "['describe_graph', 'list_capabilities', 'resolve_capabilities', 'match_capabilities', "
        "'read_document']",
        "CG_CAPABILITY_NOT_FOUND (query): Requested capability does not exist",
        "closed True",
        "blocking ok acme",
    ]
