"""The operation table (``spec/capability-graph/operations.json``) and every surface agree: the
generated Python table, the core's handlers, the SDK methods, the Tool Adapter, the MCP server's
tools/list and the CLI's graph commands and flags. Only generated code names a tool."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from capability_graph import (
    BlockingCapabilityGraph,
    BlockingToolAdapter,
    CapabilityGraph,
)
from capability_graph._core import operations as _operations
from capability_graph._core.operations import HANDLERS, OPERATIONS, OperationContext
from capability_graph._generated.operations import OPERATION_TABLE
from capability_graph._surfaces.cli.requests import REQUESTS
from capability_graph._surfaces.mcp import build_server
from capability_graph_testing.common import SPEC, capability, inline, load_json, provider
from capability_graph_testing.surfaces import MATCHED, cli, scripted

TABLE = load_json(SPEC / "operations.json")["operations"]
CONFIG = inline(provider("acme", capability("a")), model=scripted({"return": MATCHED}))
SOURCES = Path(__file__).resolve().parents[2]  # python/


def _tool_view(tool: dict[str, Any]) -> dict[str, Any]:
    return {k: tool[k] for k in ("name", "title", "description", "annotations")}


TABLE_TOOLS = [
    {
        "name": op["tool"],
        "title": op["title"],
        "description": op["description"],
        "annotations": op["annotations"],
    }
    for op in TABLE
]


def test_generated_table_is_the_authored_table() -> None:
    generated = [
        {
            "tool": op.tool,
            "phase": op.phase.value,
            "request": op.request_schema,
            "result": op.result_schema,
            "sdk": op.sdk_method,
            "command": op.cli.command,
            "arguments": [
                (a.flag, a.positional, a.member, a.type, a.repeatable, a.metavar, a.help)
                for a in op.cli.arguments
            ],
        }
        for op in OPERATION_TABLE
    ]
    authored = [
        {
            "tool": op["tool"],
            "phase": op["phase"],
            "request": op["request"],
            "result": op["result"],
            "sdk": op["sdk"]["method"],
            "command": op["cli"]["command"],
            "arguments": [
                (
                    a.get("flag"),
                    a.get("positional"),
                    a["member"],
                    a["type"],
                    a.get("repeatable", False),
                    a["metavar"],
                    a["help"],
                )
                for a in op["cli"]["arguments"]
            ],
        }
        for op in TABLE
    ]
    assert generated == authored


def test_core_dispatches_every_operation_of_the_table_and_no_other() -> None:
    assert list(OPERATIONS) == [op["tool"] for op in TABLE]
    assert list(HANDLERS) == [op["tool"] for op in TABLE]


def test_every_handler_module_has_a_table_entry_and_every_entry_a_handler_module() -> None:
    # The package's other modules: what comes before and after a handler, the context, and the
    # generated registry.
    shared = {"common", "requests", "handlers"}
    modules = sorted(
        info.name for info in pkgutil.iter_modules(_operations.__path__) if info.name not in shared
    )
    assert modules == sorted(op["sdk"]["method"] for op in TABLE)


@pytest.mark.parametrize("operation", OPERATION_TABLE, ids=[op.tool for op in OPERATION_TABLE])
def test_each_handler_is_the_handle_of_its_module_with_the_one_signature(operation: Any) -> None:
    module = f"{_operations.__name__}.{operation.sdk_method}"
    handle = importlib.import_module(module).handle
    assert HANDLERS[operation.tool] is handle
    assert inspect.iscoroutinefunction(handle)
    assert list(inspect.signature(handle).parameters) == ["context", "request"]
    assert typing.get_type_hints(handle) == {
        "context": OperationContext,
        "request": Mapping[str, Any],
        "return": dict[str, Any],
    }


@pytest.mark.parametrize("graph_class", [CapabilityGraph, BlockingCapabilityGraph])
def test_sdk_has_the_method_of_every_operation(graph_class: type) -> None:
    missing = [op["sdk"]["method"] for op in TABLE if not hasattr(graph_class, op["sdk"]["method"])]
    assert missing == []


def test_tool_adapter_lists_the_tools_of_the_table() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        listed = BlockingToolAdapter(graph).tools
    assert [_tool_view(tool) for tool in listed] == TABLE_TOOLS


def test_mcp_tools_list_is_the_tools_of_the_table() -> None:
    async def main() -> Any:
        async with (
            await CapabilityGraph.open(CONFIG) as graph,
            Client(build_server(graph)) as client,
        ):
            return await client.list_tools()

    listed = asyncio.run(asyncio.wait_for(main(), 60))
    tools = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]
    assert [_tool_view(tool) for tool in tools] == TABLE_TOOLS


def test_cli_has_a_graph_command_for_every_operation() -> None:
    assert sorted(REQUESTS) == sorted([op["cli"]["command"] for op in TABLE] + ["call"])


@pytest.mark.parametrize("op", TABLE, ids=[op["tool"] for op in TABLE])
def test_cli_help_shows_the_flags_help_and_examples_of_the_table(op: dict[str, Any]) -> None:
    run = cli(op["cli"]["command"], "--help")
    assert run.status == 0
    # argparse wraps help lines: compare with the whitespace folded.
    text = " ".join(run.stdout.split())
    assert " ".join(op["cli"]["help"].split()) in text
    for example in op["cli"]["examples"]:
        assert f"capability-graph {example}" in text
    for argument in op["cli"]["arguments"]:
        assert (argument.get("flag") or argument["metavar"]) in text
        assert " ".join(argument["help"].split()) in text


def test_only_generated_code_names_the_list_tool() -> None:
    """The tool names live in the table: no hand-written source of a shipped package spells one
    out (the list tool is the one whose name no SDK method or CLI command shares); generated
    modules (``_generated/``, and the handler registry, by their do-not-edit header) may. The
    test-support distribution (``capability-graph-testing``) is test code and may."""
    naming = sorted(
        path.relative_to(SOURCES).as_posix()
        for path in SOURCES.glob("*/src/**/*.py")
        if "_generated" not in path.parts
        and path.parts[len(SOURCES.parts)] != "capability-graph-testing"
        and "DO NOT EDIT" not in (text := path.read_text(encoding="utf-8")).partition("\n")[0]
        and re.search(r"[\"']list_capabilities[\"']", text)
    )
    assert naming == []
