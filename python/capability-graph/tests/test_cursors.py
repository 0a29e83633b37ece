"""List cursors are opaque and tamper-evident on every surface.

Forged cursors of every kind -- random text, random bytes in base64url, payloads without a MAC,
huge and nested values, a MAC over another payload, real cursors replayed with other filters, on
another revision or under another configuration -- are ``CG_INPUT_INVALID`` in phase ``query``
on the SDK, the Tool Adapter, MCP over stdio and the CLI: never a crash, never a page.
A cursor printed by one CLI process is accepted by the next one with the same configuration.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capability_graph import BlockingCapabilityGraph, BlockingToolAdapter, GraphError
from capability_graph._core.cursor import filter_key
from capability_graph_testing.battery import battery_settings
from capability_graph_testing.common import expected
from capability_graph_testing.surfaces import (
    INITIALIZE,
    INITIALIZED,
    RawMcp,
    cli,
    cli_process,
    env_without_config,
    write_graph,
)

#: Exactly what a cursor the graph did not issue gets (the registry's cursor message).
FOREIGN = expected(
    "CG_INPUT_INVALID", "query", "Cursor is malformed, foreign or stale; restart listing without it"
)
#: The spec bounds a cursor the graph issues (about 120 characters) at 256 characters.
MAX_CURSOR_CHARS = 256
#: The key of the default filters (no providers, no tags).
NO_FILTERS = filter_key({"providers": None, "tags": []})


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def payload(revision: str, offset: Any, key: str = NO_FILTERS, version: Any = 1) -> bytes:
    return json.dumps({"v": version, "r": revision, "f": key, "o": offset}).encode()


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("cursors"))


@pytest.fixture(scope="module")
def graph(config: Path) -> Iterator[BlockingCapabilityGraph]:
    with BlockingCapabilityGraph.open(config) as opened:
        yield opened


@pytest.fixture(scope="module")
def mcp(config: Path) -> Iterator[RawMcp]:
    server = RawMcp(config)
    server.send(INITIALIZE)
    server.receive(timeout=60)
    server.send(INITIALIZED)
    yield server
    server.close()


def first_page(graph: BlockingCapabilityGraph, **filters: Any) -> dict[str, Any]:
    return graph.call("list_capabilities", {"limit": 1, **filters})


# --- the defects, one by one ----------------------------------------------------------------------


@pytest.mark.parametrize("offset", [sys.maxsize, sys.maxsize - 1, 2**63, 10**30])
def test_a_forged_cursor_with_a_huge_offset_is_input_invalid(
    graph: BlockingCapabilityGraph, offset: int
) -> None:
    cursor = b64(payload(first_page(graph)["revision"], offset))
    with pytest.raises(GraphError) as caught:
        graph.list(cursor=cursor)
    assert caught.value.to_json() == FOREIGN


def test_a_cursor_decoding_to_deep_nesting_is_input_invalid(
    graph: BlockingCapabilityGraph,
) -> None:
    with pytest.raises(GraphError) as caught:
        graph.list(cursor=b64(b"[" * 20_000))
    assert caught.value.to_json() == FOREIGN


def test_a_hand_made_cursor_with_a_valid_payload_and_no_mac_skips_nothing(
    graph: BlockingCapabilityGraph,
) -> None:
    cursor = b64(payload(first_page(graph)["revision"], 1))
    with pytest.raises(GraphError) as caught:
        graph.list(cursor=cursor)
    assert caught.value.to_json() == FOREIGN


def test_a_real_cursor_with_one_flipped_bit_is_input_invalid(
    graph: BlockingCapabilityGraph,
) -> None:
    raw = bytearray(base64.urlsafe_b64decode(first_page(graph)["nextCursor"] + "=="))
    raw[-3] ^= 0x01  # inside the payload: the MAC no longer verifies
    with pytest.raises(GraphError) as caught:
        graph.list(cursor=b64(bytes(raw)))
    assert caught.value.to_json() == FOREIGN


def test_a_cursor_longer_than_any_the_graph_issues_is_refused_before_decoding(
    graph: BlockingCapabilityGraph,
) -> None:
    real = first_page(graph)["nextCursor"]
    assert len(real) < MAX_CURSOR_CHARS
    with pytest.raises(GraphError) as caught:
        graph.list(cursor=real + "A" * (MAX_CURSOR_CHARS - len(real) + 4))
    assert caught.value.to_json() == FOREIGN


def test_a_real_cursor_continues_after_the_first_page(graph: BlockingCapabilityGraph) -> None:
    first = first_page(graph)
    second = graph.call("list_capabilities", {"limit": 1, "cursor": first["nextCursor"]})
    assert [i["id"] for i in first["items"] + second["items"]] == ["acme::a", "acme::b"]
    assert "nextCursor" not in second


def test_a_cursor_with_padding_is_not_the_same_cursor(graph: BlockingCapabilityGraph) -> None:
    # [CG-CUR-6]: one text per cursor; the graph writes none with padding.
    cursor = first_page(graph)["nextCursor"]
    padded = cursor + "=" * (-len(cursor) % 4 or 4)
    with pytest.raises(GraphError) as caught:
        graph.list(cursor=padded)
    assert caught.value.to_json() == FOREIGN


def test_a_cursor_of_another_configuration_is_input_invalid(
    config: Path, graph: BlockingCapabilityGraph, tmp_path: Path
) -> None:
    # The same providers and scope (same revision, same filters) under other budgets.
    other = write_graph(tmp_path, budgets={"maxResultBytes": 500_000})
    cursor = first_page(graph)["nextCursor"]
    with BlockingCapabilityGraph.open(other) as elsewhere:
        assert first_page(elsewhere)["revision"] == first_page(graph)["revision"]
        with pytest.raises(GraphError) as caught:
            elsewhere.list(limit=1, cursor=cursor)
    assert caught.value.to_json() == FOREIGN


def test_a_cursor_of_other_filters_is_input_invalid(graph: BlockingCapabilityGraph) -> None:
    cursor = first_page(graph)["nextCursor"]
    with pytest.raises(GraphError) as caught:
        graph.list(limit=1, tags=["http"], cursor=cursor)
    assert caught.value.to_json() == FOREIGN


def test_a_cursor_of_another_revision_is_input_invalid(tmp_path: Path) -> None:
    path = write_graph(tmp_path)
    with BlockingCapabilityGraph.open(path) as graph:
        cursor = first_page(graph)["nextCursor"]
        definition = tmp_path / "providers" / "acme.json"
        data = json.loads(definition.read_text(encoding="utf-8"))
        data["version"] = "2"
        definition.write_text(json.dumps(data), encoding="utf-8")
        assert graph.reload().ok
        with pytest.raises(GraphError) as caught:
            graph.list(limit=1, cursor=cursor)
    assert caught.value.to_json() == FOREIGN


def test_pagination_continues_across_cli_processes_with_the_same_configuration(
    config: Path,
) -> None:
    env = env_without_config()
    first = cli_process("list", "--limit", "1", "--config", str(config), env=env)
    assert first.returncode == 0, first.stderr
    page = json.loads(first.stdout)
    second = cli_process(
        "list", "--limit", "1", f"--cursor={page['nextCursor']}", "--config", str(config), env=env
    )
    assert second.returncode == 0, second.stderr
    assert [i["id"] for i in page["items"] + json.loads(second.stdout)["items"]] == [
        "acme::a",
        "acme::b",
    ]


# --- fuzzing on every surface ---------------------------------------------------------------------

_BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


@st.composite
def forged_cursors(draw: st.DrawFn, revision: str, real: str) -> str:
    """Any cursor the graph did not issue (``revision`` and ``real`` make the forgeries close)."""
    offsets = st.one_of(
        st.integers(),
        st.sampled_from([0, 1, -1, sys.maxsize, -sys.maxsize - 1, 2**64, 10**400]),
        st.floats(allow_nan=False),
        st.text(max_size=5),
        st.none(),
        st.recursive(st.integers(), lambda inner: st.lists(inner, max_size=3), max_leaves=50),
    )
    kind = draw(st.sampled_from(["text", "bytes", "payload", "macless", "nested", "tampered"]))
    if kind == "text":
        return draw(st.text(min_size=1, max_size=MAX_CURSOR_CHARS + 50))
    if kind == "bytes":
        return b64(draw(st.binary(min_size=1, max_size=400)))
    if kind in ("payload", "macless"):
        body = payload(
            draw(st.sampled_from([revision, "r:0000000000000000"])),
            draw(offsets),
            draw(st.sampled_from([NO_FILTERS, "0" * 16])),
            draw(st.sampled_from([2, 1, 3, "2"])),
        )
        mac = draw(st.binary(min_size=16, max_size=16)) if kind == "payload" else b""
        return b64(mac + body)
    if kind == "nested":
        depth = draw(st.integers(1, 40_000))  # the request stays under maxInputBytes
        return b64(draw(st.binary(max_size=16)) + b"[" * depth)
    raw = bytearray(base64.urlsafe_b64decode(real + "=="))
    position = draw(st.integers(0, len(raw) - 1))
    raw[position] ^= draw(st.integers(1, 255))
    return b64(bytes(raw))


def _surface_outcomes(
    cursor: str, graph: BlockingCapabilityGraph, mcp: RawMcp, config: Path
) -> dict[str, Any]:
    arguments = {"limit": 1, "cursor": cursor}
    outcomes: dict[str, Any] = {}
    try:
        outcomes["sdk"] = graph.list(limit=1, cursor=cursor)
    except GraphError as error:
        outcomes["sdk"] = error.to_json()
    tool = BlockingToolAdapter(graph).call("list_capabilities", arguments)
    outcomes["tool"] = tool["error"] if not tool["ok"] else tool
    mcp.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "list_capabilities", "arguments": arguments},
        }
    )
    answer = mcp.receive(timeout=60)["result"]
    outcomes["mcp"] = json.loads(answer["content"][0]["text"]) if answer.get("isError") else answer
    run = cli("list", "--limit", "1", f"--cursor={cursor}", "--config", str(config))
    outcomes["cli"] = json.loads(run.stderr)["error"] if run.status == 1 else run
    return outcomes


@given(data=st.data())
@battery_settings(60)
def test_no_forged_cursor_is_ever_accepted_on_any_surface(
    data: st.DataObject, graph: BlockingCapabilityGraph, mcp: RawMcp, config: Path
) -> None:
    first = first_page(graph)
    cursor = data.draw(forged_cursors(first["revision"], first["nextCursor"]))
    if cursor == first["nextCursor"]:
        return  # a tampering that undid itself is the real cursor
    outcomes = _surface_outcomes(cursor, graph, mcp, config)
    for surface, outcome in outcomes.items():
        assert isinstance(outcome, dict), (surface, outcome)
        # A malformed string may fail the schema first (a pointer message); anything shaped
        # like a cursor gets exactly the registry's cursor message.
        assert (outcome["code"], outcome["phase"], outcome["nextAction"]) == (
            "CG_INPUT_INVALID",
            "query",
            "fix_input",
        ), (surface, outcome)
    assert len({json.dumps(o, sort_keys=True) for o in outcomes.values()}) == 1, outcomes


@given(filters=st.sampled_from([{"tags": ["http"]}, {"providers": ["acme"]}, {"tags": ["schema"]}]))
@battery_settings(10)
def test_a_real_cursor_replayed_with_other_filters_is_refused(
    filters: dict[str, Any], graph: BlockingCapabilityGraph
) -> None:
    cursor = first_page(graph)["nextCursor"]
    with pytest.raises(GraphError) as caught:
        graph.list(limit=1, cursor=cursor, **filters)
    assert caught.value.to_json() == FOREIGN
