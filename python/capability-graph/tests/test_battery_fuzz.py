"""Battery, bad input: fuzzed requests, contexts, host configs, definitions, CLI argv and MCP
frames produce only defined GraphErrors (or protocol errors), within a time bound per case.

"Defined" is checked strictly: the error object is schema-valid, its code is registered for its
phase, its nextAction is one the code may carry, and its phase is the operation's; a result is
valid against the tool's result schema. A traceback, a crash (an exception other than
GraphError, CLI exit 70, MCP -32603), or a case running past ``CASE_BOUND_S`` fails the test.

Defects this battery finds are first pinned by strict xfail tests and their triggers listed in
``KNOWN_DEFECTS`` (``capability_graph_testing.battery``), which the generators then leave out so
that everything else stays checked (``scripts/stress.py --hostile`` puts them back). Every defect
found so far is fixed; its test below now pins the fix.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capability_graph import (
    BlockingCapabilityGraph,
    BlockingToolAdapter,
)
from capability_graph_testing.battery import (
    CASE_BOUND_S,
    QUICK_MODEL,
    RESULT_SCHEMAS,
    TOOL_PHASES,
    TOOLS,
    Fuzzer,
    RawServer,
    assert_clean,
    battery_graph,
    battery_settings,
    bounded,
    check_cli_run,
    check_open_error,
    check_outcome,
    dumps_or,
    fuzz_frames,
    open_outcome,
    run_cli,
    with_base,
)
from capability_graph_testing.common import capability, inline, provider

SEEDS = st.integers(0, 2**64)


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fuzz")
    battery_graph(directory, model=QUICK_MODEL)
    return directory


@pytest.fixture(scope="module")
def tools(graph_dir: Path) -> Iterator[BlockingToolAdapter]:
    config = graph_dir / "capability-graph.json"
    with BlockingCapabilityGraph.open(config) as graph:
        yield BlockingToolAdapter(graph)


# --- requests and contexts --------------------------------------------------------------------


@battery_settings(150)
@given(seed=SEEDS, tool=st.sampled_from(TOOLS))
def test_fuzzed_requests_get_a_result_or_a_defined_error(
    tools: BlockingToolAdapter, seed: int, tool: str
) -> None:
    arguments = Fuzzer(random.Random(seed)).request(tool)
    outcome, _ = bounded(lambda: tools.call(tool, arguments))
    check_outcome(outcome, tool=tool)


@battery_settings(80)
@given(seed=SEEDS)
def test_fuzzed_contexts_are_accepted_or_context_invalid(
    tools: BlockingToolAdapter, seed: int
) -> None:
    context = Fuzzer(random.Random(seed)).context()
    outcome, _ = bounded(
        lambda: tools.call("match_capabilities", {"request": "x", "context": context})
    )
    check_outcome(outcome, tool="match_capabilities")
    if not outcome["ok"]:
        assert outcome["error"]["code"] in {
            "CG_CONTEXT_INVALID",
            "CG_INPUT_INVALID",  # a context of null
            "CG_INPUT_TOO_LARGE",
        }, outcome


def test_the_unknown_tool_and_non_string_names_are_input_invalid(
    tools: BlockingToolAdapter,
) -> None:
    for name in [
        "drop_tables",
        "",
        "DESCRIBE_GRAPH",
        "describe_graph ",
        5,
        None,
        ["describe_graph"],
    ]:
        outcome, _ = bounded(lambda name=name: tools.call(name, {}))  # type: ignore[misc]
        check_outcome(outcome)
        assert outcome["error"]["code"] == "CG_INPUT_INVALID"


# --- host configurations and provider definitions -----------------------------------------------


@battery_settings(60)
@given(seed=SEEDS)
def test_fuzzed_host_configs_open_or_fail_with_a_config_or_load_error(
    graph_dir: Path, seed: int
) -> None:
    config = Fuzzer(random.Random(seed)).config(graph_dir)
    error, _ = bounded(lambda: open_outcome(with_base(config, graph_dir)))
    check_open_error(error)


@battery_settings(40)
@given(seed=SEEDS)
def test_fuzzed_config_files_open_or_fail_with_a_config_or_load_error(
    graph_dir: Path, seed: int
) -> None:
    rng = random.Random(seed)
    fuzz = Fuzzer(rng, python_values=False)
    if rng.random() < 0.3:
        data = fuzz.definition_bytes()
    else:
        data = dumps_or(fuzz.config(graph_dir), b"[" * 5000)
    path = graph_dir / "fuzzed-config.json"
    path.write_bytes(data)
    error, _ = bounded(lambda: open_outcome(str(path)))
    check_open_error(error)


@battery_settings(60)
@given(seed=SEEDS)
def test_fuzzed_inline_definitions_load_or_fail_with_a_load_error(seed: int) -> None:
    definition = Fuzzer(random.Random(seed)).definition()
    config = {
        "providers": [{"definition": definition}, {"definition": provider("z", capability("q"))}]
    }
    error, _ = bounded(lambda: open_outcome(config))
    check_open_error(error)


@battery_settings(60)
@given(seed=SEEDS)
def test_fuzzed_definition_files_load_or_fail_with_a_load_error(graph_dir: Path, seed: int) -> None:
    data = Fuzzer(random.Random(seed)).definition_bytes()
    (graph_dir / "fuzzed-definition.json").write_bytes(data)
    config = {"providers": [{"path": "fuzzed-definition.json"}, {"definition": provider("z")}]}
    (graph_dir / "fuzzed-definition-config.json").write_text(json.dumps(config), encoding="utf-8")
    error, _ = bounded(lambda: open_outcome(str(graph_dir / "fuzzed-definition-config.json")))
    check_open_error(error)


# --- the CLI ------------------------------------------------------------------------------------


@battery_settings(80)
@given(seed=SEEDS)
def test_fuzzed_cli_argv_ends_in_a_defined_way(
    graph_dir: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.chdir(graph_dir / "providers")
    monkeypatch.delenv("CAPABILITY_GRAPH_CONFIG", raising=False)
    config = str(graph_dir / "capability-graph.json")
    argv = Fuzzer(random.Random(seed)).argv(config, others=[str(graph_dir)])
    (status, stdout, stderr), _ = bounded(lambda: run_cli(argv))
    check_cli_run(argv, status, stdout, stderr)


# --- MCP frames ---------------------------------------------------------------------------------

#: Frames no generator is needed for.
CRAFTED = [
    b"",
    b"not json",
    b"{",
    b"}",
    b"[]",
    b"null",
    b'{"jsonrpc": "2.0"}',
    b'{"jsonrpc": "2.0", "id": 1}',
    b'{"jsonrpc":"2.0","id":"x","method":5}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"describe_graph","arguments":null}}',
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"describe_graph","arguments":[1]}}',
    b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}',
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"describe_graph"}',
    b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"drop_tables","arguments":{}}}',
    b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"match_capabilities","arguments":{"request":""}}}',
    b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_capabilities","arguments":{"cursor":"AAAA"}}}',
    b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read_document","arguments":{"capabilityId":"acme::a","documentId":"../../etc/passwd"}}}',
    b'{"jsonrpc":"2.0","id":10,"method":"notifications/cancelled","params":{"requestId":10}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"probe-99999"}}',
    b'{"jsonrpc":"2.0","id":11,"method":"initialize","params":{}}',
    b'{"jsonrpc":"2.0","id":12,"result":{}}',
    b'{"jsonrpc":"2.0","id":13,"error":{"code":1,"message":"x"}}',
    b"\xff\xfe\x00 binary \x00",
    b"\x1b[2J\x07",
    b'{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"cursor":'
    + b"[" * 3000
    + b"]" * 3000
    + b"}}",
    b'{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"describe_graph","arguments":'
    + b'{"a":' * 500
    + b"1"
    + b"}" * 500
    + b"}}",
    b"x" * (1 << 20),
]


@pytest.fixture(scope="module")
def mcp_server(graph_dir: Path) -> Iterator[RawServer]:
    server = RawServer(graph_dir / "capability-graph.json")
    try:
        answer = server.initialize()
        assert answer["result"]["serverInfo"]["name"] == "capability-graph"
        yield server
    finally:
        server.close()


def test_crafted_mcp_frames_are_survived_and_answered_after(mcp_server: RawServer) -> None:
    stats = fuzz_frames(mcp_server, iter(CRAFTED))
    assert stats.violations == []
    assert stats.probes_answered == len(CRAFTED)
    assert stats.slowest_probe_s < CASE_BOUND_S


@battery_settings(60)
@given(seed=SEEDS)
def test_fuzzed_mcp_frames_are_survived_and_answered_after(
    mcp_server: RawServer, seed: int
) -> None:
    rng = random.Random(seed)
    frames = [Fuzzer(rng, python_values=False).frame() for _ in range(rng.randint(1, 3))]
    stats = fuzz_frames(mcp_server, iter(frames))
    assert stats.violations == []
    assert stats.probes_answered == len(frames)


def test_the_mcp_server_ends_cleanly_after_the_fuzz(graph_dir: Path) -> None:
    server = RawServer(graph_dir / "capability-graph.json")
    server.initialize()
    stats = fuzz_frames(
        server, (Fuzzer(random.Random(seed), python_values=False).frame() for seed in range(40))
    )
    status = server.close()
    assert stats.violations == []
    assert status == 0
    assert b"Traceback" not in server.stderr
    assert_clean(server.stderr, ["Traceback"])


# --- any key gets a defined error that never echoes it --------------------------------------------
# (Found by this battery, fixed in 8aae68f: a pointer message built from a caller's keys that was
# not one printable line of <= 300 characters made GraphError() raise ValueError -- the Tool
# Adapter raised, the CLI exited 70, MCP answered -32603.)

DEEP_KEYS: Any = 1
for _ in range(40):
    DEEP_KEYS = {"abcdefghij": DEEP_KEYS}

HOSTILE_KEY_ARGUMENTS = [
    {"\x07": None},
    {"k" * 400: None},
    {"x": DEEP_KEYS},
    {"a\nb": float("nan")},
    {"\udc80": None},
]


@pytest.mark.parametrize(
    "arguments",
    HOSTILE_KEY_ARGUMENTS,
    ids=["control-key", "long-key", "deep-ordinary-keys", "newline-key", "surrogate-key"],
)
def test_any_request_key_gets_a_defined_error(tools: BlockingToolAdapter, arguments: Any) -> None:
    outcome, _ = bounded(lambda: tools.call("describe_graph", arguments))
    check_outcome(outcome, tool="describe_graph")
    assert "abcdefghij" not in outcome["error"]["message"]
    assert "kkkk" not in outcome["error"]["message"]


def test_a_deep_arguments_document_is_an_error_envelope_on_the_cli(graph_dir: Path) -> None:
    config = str(graph_dir / "capability-graph.json")
    arguments = json.dumps({"x": DEEP_KEYS})
    argv = ["call", "describe_graph", "--arguments", arguments, "--config", config]
    status, stdout, stderr = run_cli(argv)
    check_cli_run(argv, status, stdout, stderr)
    assert status == 1


def test_a_config_key_with_a_control_character_is_config_invalid() -> None:
    error = open_outcome({**inline(provider("acme")), "\x07": None})
    check_open_error(error)
    assert error is not None


# --- deep and cyclic contexts, a None definition -------------------------------------------------
# (Found by this battery, fixed in 01a5bb2: a cyclic or ~1,000-deep context raised RecursionError
# (Tool Adapter raised, CLI exit 70); --context KEY:=<5,000-deep JSON> exited 70; an inline
# definition of None raised AssertionError from open().)


def test_a_too_deep_context_json_value_is_a_usage_error(graph_dir: Path) -> None:
    config = str(graph_dir / "capability-graph.json")
    argv = ["match", "x", "--context", "k:=" + "[" * 5000, "--config", config]
    status, stdout, stderr = run_cli(argv)
    check_cli_run(argv, status, stdout, stderr)
    assert status == 2


def _context(kind: str) -> Any:
    if kind == "cyclic":
        looped: dict[str, Any] = {"a": 1}
        looped["b"] = looped
        return looped
    deep: Any = 1
    for _ in range(3000):
        deep = [deep]
    return deep if kind == "deep" else {"k": deep}


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        # containers inside the context count from the request's root (CG-CONV-11)
        ("deep", "CG_INPUT_INVALID"),
        ("deep-value", "CG_INPUT_INVALID"),
        # a cycle nests without end: the depth rule, judged before the input size (CG-CONV-15)
        ("cyclic", "CG_INPUT_INVALID"),
    ],
)
def test_a_deep_or_cyclic_context_is_a_defined_error(
    tools: BlockingToolAdapter, kind: str, code: str
) -> None:
    arguments = {"request": "x", "context": _context(kind)}
    outcome, _ = bounded(lambda: tools.call("match_capabilities", arguments))
    check_outcome(outcome, tool="match_capabilities")
    assert outcome["error"]["code"] == code


def test_a_deep_json_context_value_on_the_cli_is_input_invalid(graph_dir: Path) -> None:
    # a --context value starts at depth 2 of the request, whose depth rule counts it (CG-CONV-11)
    config = str(graph_dir / "capability-graph.json")
    argv = ["match", "x", "--context", "k:=" + "[" * 900 + "]" * 900, "--config", config]
    status, stdout, stderr = run_cli(argv)
    check_cli_run(argv, status, stdout, stderr)
    assert json.loads(stderr)["error"]["code"] == "CG_INPUT_INVALID"


def test_an_inline_definition_of_none_is_a_defined_error() -> None:
    error, _ = bounded(lambda: open_outcome({"providers": [{"definition": None}]}))
    check_open_error(error)
    assert error is not None


def test_tool_phases_are_the_operation_phases() -> None:
    assert TOOL_PHASES == {
        "describe_graph": "query",
        "list_capabilities": "query",
        "resolve_capabilities": "query",
        "match_capabilities": "match",
        "read_document": "document",
    }
    assert set(RESULT_SCHEMAS) == set(TOOLS)
