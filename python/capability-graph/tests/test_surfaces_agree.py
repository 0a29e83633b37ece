"""One failing request, four surfaces, one error object: byte for byte (CG-SURF-1, CG-ERR-4)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, BlockingToolAdapter, GraphError
from capability_graph._core.json import dumps
from capability_graph_testing.surfaces import (
    SECRET_TEXT,
    McpStdio,
    cli,
    cli_process,
    scripted,
    write_graph,
)

FAILING: list[tuple[str, Any, str]] = [
    ("resolve_capabilities", {"ids": ["acme::missing"]}, "CG_CAPABILITY_NOT_FOUND"),
    ("resolve_capabilities", {"ids": ["vault::secrets"]}, "CG_ACCESS_DENIED"),
    (
        "resolve_capabilities",
        {"ids": ["acme::a"], "relations": {"kinds": ["owns"]}},
        "CG_INPUT_INVALID",
    ),
    ("resolve_capabilities", {"ids": ["nope::x"]}, "CG_ACCESS_DENIED"),
    ("list_capabilities", {"providers": ["nope"]}, "CG_ACCESS_DENIED"),
    ("list_capabilities", {"limit": 0}, "CG_INPUT_INVALID"),
    ("list_capabilities", {"limit": None}, "CG_INPUT_INVALID"),
    ("list_capabilities", {"cursor": "abc"}, "CG_INPUT_INVALID"),
    ("list_capabilities", {"cursor": "A" * 3000}, "CG_INPUT_TOO_LARGE"),
    ("describe_graph", {"x": 1}, "CG_INPUT_INVALID"),
    # (Non-object arguments cannot be sent over MCP: a malformed request, -32602; see test_mcp.)
    ("match_capabilities", {"request": ""}, "CG_INPUT_INVALID"),
    ("match_capabilities", {"request": "x", "context": {"a": [1]}}, "CG_CONTEXT_INVALID"),
    ("match_capabilities", {"request": "x", "providers": ["vault"]}, "CG_ACCESS_DENIED"),
    ("match_capabilities", {"request": "x"}, "CG_MODEL_REFUSED"),
    (
        "read_document",
        {"capabilityId": "acme::a", "documentId": "upstream"},
        "CG_DOCUMENT_REFERENCE_ONLY",
    ),
    ("read_document", {"capabilityId": "acme::a", "documentId": "gone"}, "CG_DOCUMENT_NOT_FOUND"),
    ("read_document", {"capabilityId": "acme::a", "documentId": "nope"}, "CG_DOCUMENT_NOT_FOUND"),
    (
        "read_document",
        {"capabilityId": "acme::zz", "documentId": "guide"},
        "CG_CAPABILITY_NOT_FOUND",
    ),
]
IDS = [f"{tool}-{i}" for i, (tool, _, _) in enumerate(FAILING)]


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = scripted(
        {
            "raise": {
                "code": "CG_MODEL_REFUSED",
                "nextAction": "delete_everything",
                "message": SECRET_TEXT,
            }
        }
    )
    return write_graph(
        tmp_path_factory.mktemp("agree"), model=model, budgets={"maxInputBytes": 2048}
    )


@pytest.fixture(scope="module")
def sdk(config: Path) -> Iterator[BlockingCapabilityGraph]:
    with BlockingCapabilityGraph.open(config) as graph:
        yield graph


@pytest.fixture(scope="module")
def mcp(config: Path) -> Iterator[McpStdio]:
    server = McpStdio(config)
    try:
        yield server
    finally:
        server.close()


def sdk_error(graph: BlockingCapabilityGraph, tool: str, arguments: Any) -> dict[str, str]:
    with pytest.raises(GraphError) as excinfo:
        graph.call(tool, arguments)
    error: dict[str, str] = excinfo.value.to_json()
    return error


@pytest.mark.parametrize(("tool", "arguments", "code"), FAILING, ids=IDS)
def test_every_surface_reports_the_same_error_bytes(
    config: Path, sdk: BlockingCapabilityGraph, mcp: McpStdio, tool: str, arguments: Any, code: str
) -> None:
    error = sdk_error(sdk, tool, arguments)
    assert error["code"] == code
    expected_bytes = dumps(error)

    outcome = BlockingToolAdapter(sdk).call(tool, arguments)
    assert outcome == {"ok": False, "error": error}
    assert dumps(outcome["error"]) == expected_bytes

    result = mcp.call_tool(tool, arguments)
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert len(result["content"]) == 1
    assert result["content"][0]["text"] == expected_bytes

    run = cli("call", tool, "--arguments", json.dumps(arguments), "--config", str(config))
    assert (run.status, run.stdout) == (1, "")
    assert run.stderr == '{"ok":false,"error":' + expected_bytes + "}\n"

    assert SECRET_TEXT not in expected_bytes


def test_unknown_tool_agrees_except_on_mcp_where_it_is_a_protocol_error(
    config: Path, sdk: BlockingCapabilityGraph, mcp: McpStdio
) -> None:
    error = sdk_error(sdk, "nope", {})
    assert error["message"] == "Unknown tool"
    assert BlockingToolAdapter(sdk).call("nope", {}) == {"ok": False, "error": error}
    run = cli("call", "nope", "--config", str(config))
    assert run.stderr == '{"ok":false,"error":' + dumps(error) + "}\n"

    from mcp.shared.exceptions import MCPError

    async def go(session: Any) -> MCPError:
        with pytest.raises(MCPError) as excinfo:
            await session.call_tool("nope", {})
        return excinfo.value

    assert mcp.run(go).code == -32602


def test_cli_subprocess_stderr_is_byte_identical(
    config: Path, sdk: BlockingCapabilityGraph
) -> None:
    for argv, tool, arguments in [
        (["resolve", "acme::missing"], "resolve_capabilities", {"ids": ["acme::missing"]}),
        (["match", "x"], "match_capabilities", {"request": "x"}),
    ]:
        done = cli_process(*argv, "--config", str(config))
        assert (done.returncode, done.stdout) == (1, "")
        assert (
            done.stderr == '{"ok":false,"error":' + dumps(sdk_error(sdk, tool, arguments)) + "}\n"
        )


def test_success_agrees_too(config: Path, sdk: BlockingCapabilityGraph, mcp: McpStdio) -> None:
    for tool, arguments in [
        ("describe_graph", {}),
        ("resolve_capabilities", {"ids": ["acme::a"], "relations": {"depth": 3}}),
        ("read_document", {"capabilityId": "acme::a", "documentId": "guide"}),
    ]:
        result = sdk.call(tool, arguments)
        assert BlockingToolAdapter(sdk).call(tool, arguments) == {"ok": True, "result": result}
        data = mcp.call_tool(tool, arguments)
        assert data["structuredContent"] == result
        assert data["content"][0]["text"] == dumps(result)
        run = cli("call", tool, "--arguments", json.dumps(arguments), "--config", str(config))
        assert run.stdout == dumps(result) + "\n"
