"""Battery, leakage: what an executor raises and what the core knows never reaches a caller.

Executor faults carry secrets, absolute paths, control characters, lone surrogates and very long
texts, in messages, ``code``/``nextAction`` attributes, chained causes and exception groups. On
every surface (SDK async and blocking, Tool Adapter async and blocking, MCP in memory and over
stdio, the CLI in-process and as a process) the emitted error is exactly the projection, is
schema-valid, and no byte emitted -- results, envelopes, str/repr/traceback/pickle of the
GraphError, log records, stdout, stderr -- contains a marker of the hostile text.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import given
from hypothesis import strategies as st

from capability_graph import (
    BlockingCapabilityGraph,
    BlockingToolAdapter,
    CapabilityGraph,
    GraphError,
    ToolAdapter,
)
from capability_graph_testing.battery import (
    PATH_MARK,
    PATHS,
    SECRET,
    TOOL_PHASES,
    FaultExecutor,
    HostileBase,
    RawServer,
    assert_clean,
    assert_no_control_bytes,
    battery_graph,
    battery_settings,
    chained,
    check_cli_failure,
    check_error,
    check_mcp_result,
    check_outcome,
    exception_texts,
    executor_fault,
    expected_error,
    hostile_text,
    scripted_fault,
)
from capability_graph_testing.common import capability, inline, provider
from capability_graph_testing.surfaces import cli, wire

MATCH = {"request": "find the capability"}
FREE_TEXT = st.text(max_size=120)
JSON_TEXT = st.text(st.characters(codec="utf-8"), max_size=120)  # no lone surrogates


# --- the rig: one graph per surface, one executor whose fault each example sets ----------------


@dataclass
class Rig:
    executor: FaultExecutor
    portal: BlockingPortal
    graph: CapabilityGraph
    tools: ToolAdapter
    mcp: Any
    blocking: BlockingCapabilityGraph
    blocking_tools: BlockingToolAdapter


async def _sdk_error(graph: CapabilityGraph, tool: str, arguments: Any) -> GraphError:
    try:
        await graph.call(tool, arguments)
    except GraphError as error:
        return error
    raise AssertionError("expected a GraphError")


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    from mcp import Client

    from capability_graph._surfaces.mcp import build_server

    config = battery_graph(tmp_path_factory.mktemp("leak-rig"))
    executor = FaultExecutor()
    with start_blocking_portal(backend="asyncio") as portal:
        graph = portal.call(functools.partial(CapabilityGraph.open, config, executor=executor))
        blocking = BlockingCapabilityGraph.open(config, executor=executor)
        try:
            client = Client(build_server(graph), mode="legacy")
            with portal.wrap_async_context_manager(client) as mcp:
                yield Rig(
                    executor,
                    portal,
                    graph,
                    ToolAdapter(graph),
                    mcp,
                    blocking,
                    BlockingToolAdapter(blocking),
                )
        finally:
            blocking.close()
            portal.call(graph.close)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.texts.append(self.format(record))


@contextlib.contextmanager
def all_logs() -> Iterator[list[str]]:
    """Every log record of every logger (the root at DEBUG), formatted with its traceback."""
    root = logging.getLogger()
    handler, level = _Records(), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler.texts
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def check_sdk_error(error: GraphError, expected: dict[str, str], markers: tuple[str, ...]) -> None:
    assert error.to_json() == expected
    check_error(error.to_json(), phase="match")
    for text in exception_texts(error):
        assert_clean(text, markers, where="GraphError", traceback_ok=True)
    for cause in chained(error):
        for text in exception_texts(cause):
            assert_clean(text, markers, where="GraphError chain", traceback_ok=True)


# --- the properties -------------------------------------------------------------------------------


@battery_settings(100)
@given(seed=st.integers(0, 2**64), free=FREE_TEXT)
def test_property_executor_faults_never_leak_on_sdk_tools_and_mcp(
    rig: Rig, capsys: pytest.CaptureFixture[str], seed: int, free: str
) -> None:
    rng = random.Random(seed)
    hostile = hostile_text(rng, free)
    fault = executor_fault(rng, hostile)
    rig.executor.fault = fault
    expected, markers = fault.expected, fault.markers
    with all_logs() as logs:
        error = rig.portal.call(_sdk_error, rig.graph, "match_capabilities", MATCH)
        check_sdk_error(error, expected, markers)

        with pytest.raises(GraphError) as blocking:
            rig.blocking.match(request=MATCH["request"])
        check_sdk_error(blocking.value, expected, markers)

        for outcome in (
            rig.portal.call(rig.tools.call, "match_capabilities", MATCH),
            rig.blocking_tools.call("match_capabilities", MATCH),
        ):
            assert outcome == {"ok": False, "error": expected}
            check_outcome(outcome, tool="match_capabilities")
            assert_clean(json.dumps(outcome, ensure_ascii=False), markers, where="tool")

        result = wire(rig.portal.call(rig.mcp.call_tool, "match_capabilities", MATCH))
        assert check_mcp_result(result, tool="match_capabilities") == expected
        assert_clean(json.dumps(result, ensure_ascii=False), markers, where="mcp")
    for text in logs:
        assert_clean(text, markers, where="log")
    captured = capsys.readouterr()
    assert_clean(captured.out + captured.err, markers, where="stdout/stderr")


@pytest.fixture(scope="module")
def cli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("leak-cli")


@battery_settings(20)
@given(seed=st.integers(0, 2**64), free=JSON_TEXT)
def test_property_scripted_faults_never_leak_on_the_cli(
    cli_dir: Path, capsys: pytest.CaptureFixture[str], seed: int, free: str
) -> None:
    rng = random.Random(seed)
    hostile = hostile_text(rng, free, json_safe=True)
    step, expected = scripted_fault(rng, hostile, free)
    config = battery_graph(cli_dir, model={"executor": "scripted", "steps": [step]})
    with all_logs() as logs:
        for argv in (
            ("match", "find it", "--config", str(config)),
            (
                "call",
                "match_capabilities",
                "--arguments",
                json.dumps(MATCH),
                "--config",
                str(config),
            ),
        ):
            run = cli(*argv)
            assert check_cli_failure(run.status, run.stdout, run.stderr) == expected
            assert_clean(run.stderr, hostile.markers, where="cli stderr")
        doctor = cli("doctor", "--json", "--config", str(config))
        assert doctor.status == 0, doctor
        assert_clean(doctor.stdout + doctor.stderr, hostile.markers, where="doctor")
    for text in logs:
        assert_clean(text, hostile.markers, where="log")
    captured = capsys.readouterr()
    assert_clean(captured.out + captured.err, hostile.markers, where="stdout/stderr")


# --- real processes: the bytes on the wire ------------------------------------------------------

#: Fixed hostile steps for the process tests (each consumed by one match, in order).
PROCESS_SEED = 20261130


def _process_steps(count: int) -> tuple[list[dict[str, Any]], list[dict[str, str]], set[str]]:
    rng = random.Random(PROCESS_SEED)
    steps: list[dict[str, Any]] = []
    expected: list[dict[str, str]] = []
    markers: set[str] = set()
    for index in range(count):
        hostile = hostile_text(rng, f"raw upstream text number {index} 回溯", json_safe=True)
        step, error = scripted_fault(rng, hostile, "free")
        steps.append(step)
        expected.append(error)
        markers.update(hostile.markers)
    return steps, expected, markers


def test_cli_process_bytes_never_carry_a_hostile_text(tmp_path: Path) -> None:
    steps, expected, markers = _process_steps(3)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("CAPABILITY_GRAPH_CONFIG", None)
    for step, error in zip(steps, expected, strict=True):
        config = battery_graph(tmp_path, model={"executor": "scripted", "steps": [step]})
        done = subprocess.run(
            [sys.executable, "-m", "capability_graph.cli", "match", "x", "--config", str(config)],
            capture_output=True,
            timeout=120,
            env=env,
            check=False,
        )
        stdout, stderr = done.stdout.decode(), done.stderr.decode()
        assert check_cli_failure(done.returncode, stdout, stderr) == error
        assert_clean(done.stdout + done.stderr, sorted(markers), where="cli process")
        assert_no_control_bytes(done.stderr.rstrip(b"\n"), where="cli stderr")


def test_mcp_stdio_bytes_never_carry_a_hostile_text(tmp_path: Path) -> None:
    steps, expected, markers = _process_steps(6)
    config = battery_graph(tmp_path, model={"executor": "scripted", "steps": steps})
    server = RawServer(config)
    lines: list[bytes] = []
    try:
        server.initialize()
        for number, error in enumerate(expected):
            server.send(
                {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": "tools/call",
                    "params": {"name": "match_capabilities", "arguments": MATCH},
                }
            )
            while True:
                line = server.lines.get(timeout=60)
                lines.append(line)
                answer = json.loads(line)
                if answer.get("id") == number:
                    break
            assert check_mcp_result(answer["result"], tool="match_capabilities") == error
    finally:
        status = server.close()
    assert status == 0
    for line in lines:
        assert_clean(line, sorted(markers), where="mcp stdout")
        assert_no_control_bytes(line.rstrip(b"\n"), where="mcp stdout")
    assert_clean(server.stderr, sorted(markers), where="mcp stderr")


# --- what the core knows: trusted locations never leave it --------------------------------------


@pytest.fixture
def secret_tree(tmp_path: Path) -> Path:
    """A graph whose every trusted location lives under a folder named after a secret."""
    root = tmp_path / f"{SECRET}-{PATH_MARK}"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "bad.md").write_bytes(b"\xff\xfe not utf-8")
    (root / "docs" / "big.md").write_bytes(b"x" * 2048)
    outside = tmp_path / f"outside-{SECRET}.md"
    outside.write_text(f"{SECRET} outside the root", encoding="utf-8")
    (root / "docs" / "escape.md").symlink_to(outside)
    os.mkfifo(root / "docs" / "fifo.md")
    documents = [
        {"id": name, "title": name, "path": f"docs/{name}.md"}
        for name in ("bad", "big", "escape", "fifo", "missing")
    ]
    definition = provider("acme", capability("a", documents=documents))
    (root / "acme.json").write_text(json.dumps(definition), encoding="utf-8")
    (root / "config.json").write_text(
        json.dumps({"providers": [{"path": "acme.json"}], "budgets": {"maxDocumentBytes": 1024}}),
        encoding="utf-8",
    )
    return root


@pytest.mark.parametrize(
    ("document", "code"),
    [
        ("bad", "CG_DOCUMENT_UNREADABLE"),
        ("big", "CG_DOCUMENT_TOO_LARGE"),
        ("escape", "CG_DOCUMENT_ACCESS_DENIED"),
        ("fifo", "CG_DOCUMENT_ACCESS_DENIED"),
        ("missing", "CG_DOCUMENT_NOT_FOUND"),
    ],
)
def test_document_errors_never_name_the_root_or_the_file(
    secret_tree: Path, document: str, code: str
) -> None:
    markers = (SECRET, PATH_MARK, str(secret_tree.parent))
    arguments = {"capabilityId": "acme::a", "documentId": document}
    config = str(secret_tree / "config.json")
    with BlockingCapabilityGraph.open(config) as graph:
        outcome = BlockingToolAdapter(graph).call("read_document", arguments)
        with pytest.raises(GraphError) as raised:
            graph.read_document(capability_id="acme::a", document_id=document)
    assert outcome == {"ok": False, "error": expected_error(code, "document")}
    check_outcome(outcome, tool="read_document")
    assert_clean(json.dumps(outcome), markers)
    for text in exception_texts(raised.value):
        assert_clean(text, markers, traceback_ok=True)
    for cause in chained(raised.value):
        for text in exception_texts(cause):
            assert_clean(text, markers, where="chain", traceback_ok=True)
    run = cli("read", "acme::a", document, "--config", config)
    assert check_cli_failure(run.status, run.stdout, run.stderr) == outcome["error"]


@pytest.mark.parametrize(
    "config",
    [
        {"providers": [{"path": f"/nonexistent/{SECRET}/{PATH_MARK}.json"}]},
        {
            "providers": [
                {"definition": provider("acme"), "documentRoot": f"/nonexistent/{PATH_MARK}"}
            ]
        },
        {"providers": [{"path": PATHS[0]}]},
        f"/nonexistent/{SECRET}/{PATH_MARK}/config.json",
    ],
    ids=["definition-file", "document-root", "hostile-path", "config-file"],
)
def test_configuration_errors_never_name_a_trusted_location(config: Any) -> None:
    with pytest.raises(GraphError) as raised:
        BlockingCapabilityGraph.open(config)
    error = raised.value.to_json()
    assert error["code"] == "CG_CONFIG_INVALID"
    check_error(error, phase="config")
    for text in exception_texts(raised.value):
        assert_clean(text, (SECRET, PATH_MARK), traceback_ok=True)


# --- a caller's keys are never echoed -----------------------------------------------------------


@pytest.mark.parametrize("where", ["request", "config", "inline-definition"])
def test_a_key_of_a_request_config_or_definition_is_never_echoed(where: str) -> None:
    """(Found by this battery, fixed in 8aae68f: pointer messages echoed arbitrary keys.)"""
    key = f"{SECRET} {PATHS[0]}"
    base = inline(provider("acme", capability("a")))
    if where == "request":
        with BlockingCapabilityGraph.open(base) as graph:
            outcome = BlockingToolAdapter(graph).call("describe_graph", {key: None})
        assert outcome["ok"] is False
        error = outcome["error"]
    else:
        config = (
            {**base, key: None}
            if where == "config"
            else inline({**provider("acme", capability("a")), key: None})
        )
        with pytest.raises(GraphError) as raised:
            BlockingCapabilityGraph.open(config)
        error = raised.value.to_json()
    check_error(error)
    assert_clean(json.dumps(error), (SECRET, PATH_MARK))


# --- synchronous executors ---------------------------------------------------------------------
# (Found by this battery, fixed in 01a5bb2: a BaseException from a synchronous match escaped with
# its text; a synchronous failure stayed reachable as GraphError.__context__.)


def test_a_synchronous_executor_raising_a_base_exception_is_projected() -> None:
    class Raises:
        name = "sync"

        def match(self, job: Any) -> Any:
            raise HostileBase(f"{SECRET} {PATHS[0]}")

    with BlockingCapabilityGraph.open(
        inline(provider("acme", capability("a"))), executor=Raises()
    ) as graph:
        outcome = BlockingToolAdapter(graph).call("match_capabilities", MATCH)
    assert outcome == {
        "ok": False,
        "error": expected_error("CG_MODEL_UNAVAILABLE", "match", "retry"),
    }


def test_a_synchronous_executor_failure_leaves_no_raw_exception_in_the_graph_error() -> None:
    class Raises:
        name = "sync"

        def match(self, job: Any) -> Any:
            raise RuntimeError(f"{SECRET} {PATHS[0]}")

    with (
        BlockingCapabilityGraph.open(
            inline(provider("acme", capability("a"))), executor=Raises()
        ) as graph,
        pytest.raises(GraphError) as raised,
    ):
        graph.match(request="x")
    assert raised.value.to_json() == expected_error("CG_MODEL_UNAVAILABLE", "match", "retry")
    assert chained(raised.value) == []


def test_the_battery_knows_every_tool() -> None:
    from capability_graph._surfaces.tools import tool_names

    assert set(TOOL_PHASES) == set(tool_names())
