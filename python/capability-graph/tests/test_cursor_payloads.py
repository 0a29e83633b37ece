"""Which cursor texts and payloads a graph accepts ([CG-CUR-5] .. [CG-CUR-8], [CG-LIST-2]).

Every cursor here is made the way the specification says ([CG-CUR-5]): the key from the
configuration, the MAC over the payload, base64url without padding. So a payload with a valid
MAC can say anything -- anyone with the configuration can make one -- and the graph must still
accept exactly the cursors it could have issued: one text per payload ([CG-CUR-6]), the payload
byte for byte as the graph writes it ([CG-CUR-7]), an offset where a selected item is
([CG-CUR-8]). Everything else is ``CG_INPUT_INVALID`` with the cursor message, never a page and
never an internal error.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, GraphError
from capability_graph_testing.common import capability, expected, provider
from capability_graph_testing.surfaces import cli_process

FOREIGN = expected(
    "CG_INPUT_INVALID", "query", "Cursor is malformed, foreign or stale; restart listing without it"
)
#: A tag beyond the BMP and one high in it: code point order puts the BMP one first, UTF-16 code
#: unit order the other ([CG-CUR-5] sorts the filters by code point).
ASTRAL, BMP_HIGH = "\U0001f600", "\uff21"
BOTH = sorted([ASTRAL, BMP_HIGH])  # Python compares strings by code point
CONFIG: dict[str, Any] = {
    "providers": [
        {
            "definition": provider(
                "acme",
                capability("a", tags=[ASTRAL, BMP_HIGH]),
                capability("b", tags=["http", ASTRAL, BMP_HIGH]),
                capability("c", tags=[BMP_HIGH, ASTRAL]),
                capability("d"),
            )
        }
    ]
}
EMPTY: dict[str, Any] = {"providers": [{"definition": provider("acme")}]}


def _jcs(value: Any) -> bytes:
    """RFC 8785 for what these configurations hold (strings, integers, objects, arrays)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _key(config: dict[str, Any]) -> bytes:
    """[CG-CUR-5]: SHA-256 of the label, a NUL byte and the JCS bytes of the configuration with
    every inline definition replaced by ``true``."""
    sources = [{**s, "definition": True} if "definition" in s else s for s in config["providers"]]
    identity = {**config, "providers": sources}
    return hashlib.sha256(b"capability-graph list cursor key\x00" + _jcs(identity)).digest()


def _filters(providers: list[str] | None = None, tags: list[str] | None = None) -> str:
    listed = {
        "providers": sorted(set(providers)) if providers else None,
        "tags": sorted(set(tags or ())),
    }
    return hashlib.sha256(_jcs(listed)).hexdigest()[:16]


def _cursor(config: dict[str, Any], payload: str) -> str:
    data = payload.encode()
    mac = hmac.new(_key(config), data, hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(mac + data).decode().rstrip("=")


def _payload(revision: str, offset: str, filters: str | None = None) -> str:
    return f'{{"v":2,"r":"{revision}","f":"{filters or _filters()}","o":{offset}}}'


def _open(directory: Path, config: dict[str, Any]) -> BlockingCapabilityGraph:
    path = directory / "capability-graph.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return BlockingCapabilityGraph.open(path)


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BlockingCapabilityGraph]:
    with _open(tmp_path_factory.mktemp("payloads"), CONFIG) as opened:
        yield opened


@pytest.fixture(scope="module")
def revision(graph: BlockingCapabilityGraph) -> str:
    return str(graph.call("list_capabilities", {})["revision"])


def _refused(graph: BlockingCapabilityGraph, **arguments: Any) -> None:
    with pytest.raises(GraphError) as caught:
        graph.call("list_capabilities", arguments)
    assert caught.value.to_json() == FOREIGN


def _ids(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["items"]]


def test_a_cursor_made_as_the_specification_says_is_the_one_the_graph_issues(
    graph: BlockingCapabilityGraph, revision: str
) -> None:
    issued = graph.call("list_capabilities", {"limit": 1})["nextCursor"]
    assert issued == _cursor(CONFIG, _payload(revision, "1"))


# --- one text per payload ([CG-CUR-6]) ------------------------------------------------------------


@pytest.mark.parametrize("padding", ["=", "=="])
def test_an_issued_cursor_with_padding_appended_is_refused(
    graph: BlockingCapabilityGraph, padding: str
) -> None:
    issued = graph.call("list_capabilities", {"limit": 1})["nextCursor"]
    _refused(graph, limit=1, cursor=issued + padding)


def test_an_issued_cursor_with_its_unused_bits_set_is_refused(
    graph: BlockingCapabilityGraph,
) -> None:
    issued = graph.call("list_capabilities", {"limit": 1})["nextCursor"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    unused = {2: 0b1111, 3: 0b11}[len(issued) % 4]  # this payload's length leaves unused bits
    altered = issued[:-1] + alphabet[alphabet.index(issued[-1]) | unused]
    assert base64.urlsafe_b64decode(altered + "==") == base64.urlsafe_b64decode(issued + "==")
    _refused(graph, limit=1, cursor=altered)


# --- the payload, byte for byte ([CG-CUR-7]) ------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        '{"v":2,"r":"REV","f":"FILTERS","o":1.0}',
        '{"v":2,"r":"REV","f":"FILTERS","o":01}',
        '{"v":2,"r":"REV","f":"FILTERS","o":1e0}',
        '{"v":2,"r":"REV","f":"FILTERS","o":"1"}',
        '{"v":2,"r":"REV","f":"FILTERS","o":+1}',
        '{"v":2,"r":"REV","f":"FILTERS","o":0}',
        '{"v":2,"r":"REV","f":"FILTERS","o":-1}',
        '{"o":1,"v":2,"r":"REV","f":"FILTERS"}',
        '{"v":2, "r":"REV","f":"FILTERS","o":1}',
        '{"v":2,"r":"REV","f":"FILTERS","o":1,"x":0}',
        '{"v":2,"r":"REV","f":"FILTERS","o":3,"o":1}',
        '{"v":2,"r":"r:0000000000000000","f":"FILTERS","o":1}',
        '{"v":2,"r":"REV","f":"0000000000000000","o":1}',
        '{"v":1,"r":"REV","f":"FILTERS","o":1}',
    ],
)
def test_a_payload_with_a_valid_mac_is_refused_unless_written_as_the_graph_writes_it(
    graph: BlockingCapabilityGraph, revision: str, payload: str
) -> None:
    forged = payload.replace("REV", revision).replace("FILTERS", _filters())
    _refused(graph, limit=1, cursor=_cursor(CONFIG, forged))


# --- the position ([CG-CUR-8]) --------------------------------------------------------------------


def test_a_cursor_at_the_last_item_answers_that_item(
    graph: BlockingCapabilityGraph, revision: str
) -> None:
    page = graph.call("list_capabilities", {"cursor": _cursor(CONFIG, _payload(revision, "3"))})
    assert _ids(page) == ["acme::d"]
    assert "nextCursor" not in page


@pytest.mark.parametrize("offset", [4, 5, sys.maxsize, sys.maxsize + 1, 2**64, 10**100])
def test_a_cursor_at_or_past_the_end_is_refused(
    graph: BlockingCapabilityGraph, revision: str, offset: int
) -> None:
    _refused(graph, cursor=_cursor(CONFIG, _payload(revision, str(offset))))


def test_the_end_is_the_end_of_the_selection_not_of_the_catalog(
    graph: BlockingCapabilityGraph, revision: str
) -> None:
    # tags ["http"] select one item of four: offset 1 is past the end of that selection.
    cursor = _cursor(CONFIG, _payload(revision, "1", _filters(tags=["http"])))
    _refused(graph, tags=["http"], cursor=cursor)


def test_a_cursor_on_an_empty_catalog_is_refused_not_empty(tmp_path: Path) -> None:
    with _open(tmp_path, EMPTY) as graph:
        page = graph.call("list_capabilities", {})
        assert page["status"] == "empty"
        _refused(graph, cursor=_cursor(EMPTY, _payload(page["revision"], "1")))


# --- the filters are sets, sorted by code point ([CG-LIST-2], [CG-CUR-5]) -----------------------


def test_a_cursor_continues_with_the_same_tags_in_another_order(
    graph: BlockingCapabilityGraph,
) -> None:
    first = graph.call("list_capabilities", {"limit": 1, "tags": [BMP_HIGH, ASTRAL]})
    second = graph.call(
        "list_capabilities", {"limit": 1, "tags": [ASTRAL, BMP_HIGH], "cursor": first["nextCursor"]}
    )
    assert _ids(first) + _ids(second) == ["acme::a", "acme::b"]


def test_the_tags_of_a_cursor_are_sorted_by_code_point(
    graph: BlockingCapabilityGraph, revision: str
) -> None:
    assert BOTH == [BMP_HIGH, ASTRAL]  # UTF-16 code units would put the astral one first
    cursor = _cursor(CONFIG, _payload(revision, "2", _filters(tags=BOTH)))
    page = graph.call("list_capabilities", {"tags": [ASTRAL, BMP_HIGH], "cursor": cursor})
    assert _ids(page) == ["acme::c"]


@pytest.mark.parametrize("offset", [sys.maxsize + 1, 10**100])
def test_a_cursor_past_sys_maxsize_with_a_valid_mac_is_input_invalid_on_the_cli(
    tmp_path: Path, offset: int
) -> None:
    # [CG-CUR-8] through a CLI process: such an offset once ended the CLI with exit 70.
    path = tmp_path / "capability-graph.json"
    path.write_text(json.dumps(CONFIG), encoding="utf-8")
    with BlockingCapabilityGraph.open(path) as opened:
        revision = opened.call("list_capabilities", {})["revision"]
    cursor = _cursor(CONFIG, _payload(revision, str(offset)))
    run = cli_process("list", "--config", str(path), "--cursor", cursor)
    assert (run.returncode, run.stdout) == (1, "")
    assert json.loads(run.stderr) == {"ok": False, "error": FOREIGN}
