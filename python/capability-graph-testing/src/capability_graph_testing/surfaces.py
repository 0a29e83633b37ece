# One piece: the drivers of every surface share its graph on disk; ~20 test files import them.
"""Helpers shared by the surface tests: a graph on disk, the CLI in-process and as a subprocess,
and MCP clients (in memory, over real stdio with the SDK, and raw JSON-RPC lines)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from capability_graph_testing.common import capability, expected, provider, schema_validator

T = TypeVar("T")

CLI = [sys.executable, "-m", "capability_graph.cli"]

#: A secret that must never appear in any output of any surface.
SECRET_TEXT = "SECRET-4f1c"

ACME = provider(
    "acme",
    capability(
        "a",
        tags=["http"],
        whenToUse="A route needs a declared request contract.",
        relations=[
            {"kind": "requires", "target": "b"},
            {"kind": "related", "target": "billing::invoice"},
        ],
        documents=[
            {"id": "guide", "title": "Guide", "role": "guide", "path": "knowledge/a.md"},
            {"id": "upstream", "title": "Upstream", "url": "https://example.com/a"},
            {"id": "gone", "title": "Gone", "path": "knowledge/gone.md"},
        ],
    ),
    capability("b", tags=["http", "schema"]),
)
VAULT = provider("vault", capability("secrets"))
DOCUMENT_TEXT = "# A\n\nDoes a. 中文说明。\n"

MATCHED = {"status": "matched", "candidates": [{"id": "acme::a", "confidence": 0.9}]}


def scripted(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"executor": "scripted", "steps": list(steps)}


def sleeping(ms: int = 10_000) -> dict[str, Any]:
    """A scripted executor whose every match sleeps ``ms`` before answering ``MATCHED``."""
    return scripted({"sleepMs": ms, "then": {"return": MATCHED}})


def write_graph(directory: Path, *, model: dict[str, Any] | None = None, **extra: Any) -> Path:
    """Write a graph to ``directory``: acme from a file (with documents), vault inline and out
    of scope. Returns the configuration file."""
    (directory / "providers" / "knowledge").mkdir(parents=True, exist_ok=True)
    (directory / "providers" / "acme.json").write_text(json.dumps(ACME), encoding="utf-8")
    (directory / "providers" / "knowledge" / "a.md").write_text(DOCUMENT_TEXT, encoding="utf-8")
    config: dict[str, Any] = {
        "providers": [{"path": "providers/acme.json"}, {"definition": VAULT}],
        "scope": {"providers": ["acme"]},
        **extra,
    }
    if model is not None:
        config["model"] = model
    path = directory / "capability-graph.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


# --- the CLI ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CliRun:
    status: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        assert self.stdout.endswith("\n"), self.stdout
        assert self.stdout.count("\n") == 1, self.stdout
        return json.loads(self.stdout)

    def envelope(self) -> dict[str, Any]:
        """The one error line on stderr (stdout must be empty)."""
        assert self.stdout == ""
        assert self.stderr.endswith("\n"), self.stderr
        assert self.stderr.count("\n") == 1, self.stderr
        value: dict[str, Any] = json.loads(self.stderr)
        assert list(value) == ["ok", "error"]
        assert value["ok"] is False
        return value


def cli(*argv: str, stdin: bytes = b"") -> CliRun:
    """Run the CLI in-process through ``run(argv, stdin, stdout, stderr)``, with ``stdin`` as
    the bytes of its standard input."""
    from capability_graph.cli import run

    given = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    status = run(list(argv), given, out, err)
    return CliRun(status, out.getvalue(), err.getvalue())


def cli_process(
    *argv: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a subprocess (``python -m capability_graph.cli``)."""
    return subprocess.run(
        [*CLI, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        check=False,
    )


def graph_call(config: Path, tool: str, arguments: Any) -> Any:
    """What the SDK answers to ``tool`` with ``arguments`` on the graph of ``config``."""
    from capability_graph import BlockingCapabilityGraph

    with BlockingCapabilityGraph.open(config) as graph:
        return graph.call(tool, arguments)


#: The schema of the CLI's error envelope (one line on stderr).
CLI_ERROR = schema_validator("cli-error.schema.json")


def cli_error(run: CliRun) -> dict[str, str]:
    """The error object of a failed command: exit 1, nothing on stdout, one envelope line on
    stderr, valid against its schema."""
    assert run.status == 1, run
    data = run.envelope()
    CLI_ERROR.validate(data)
    error: dict[str, str] = data["error"]
    return error


def assert_cli_error(run: CliRun, code: str, phase: str, message: str | None = None) -> None:
    """The command failed with exactly the error the contract prescribes for ``code``."""
    assert cli_error(run) == expected(code, phase, message)


def usage_error(run: CliRun, command: str, message: str) -> None:
    """Exit 2, the command's usage, then exactly ``message`` as its error line."""
    assert run.status == 2, run
    assert run.stdout == ""
    prog = "capability-graph" if command == "" else f"capability-graph {command}"
    assert run.stderr.startswith(f"usage: {prog}"), run.stderr
    assert run.stderr.endswith(f"\n{prog}: error: {message}\n"), run.stderr


def mcp_install(client: str, target: Path, config: Path, *extra: str) -> CliRun:
    """``mcp-install`` of the graph ``config`` into ``client``'s file ``target``, reporting JSON."""
    argv = ["--client", client, "--config-path", str(target), "--config", str(config)]
    return cli("mcp-install", *argv, *extra, "--json")


def mcp_uninstall(client: str, target: Path, *extra: str) -> CliRun:
    """``mcp-uninstall`` from ``client``'s file ``target``, reporting JSON."""
    return cli("mcp-uninstall", "--client", client, "--config-path", str(target), *extra, "--json")


#: The schema of a maintenance command's ``--json`` report (doctor, init, mcp-install, ...).
MAINTENANCE_REPORT = schema_validator("maintenance-report.schema.json")


def maintenance_report(run: CliRun, status: str, exit_status: int) -> dict[str, Any]:
    """The ``--json`` report of a maintenance command that ended with ``exit_status`` and
    reports ``status``, valid against its schema, with nothing on stderr."""
    assert run.status == exit_status, run
    assert run.stderr == ""
    data: dict[str, Any] = run.json()
    MAINTENANCE_REPORT.validate(data)
    assert data["status"] == status
    return data


def report_checks(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """A report's checks by id: ``{id: (status, message)}``."""
    return {c["id"]: (c["status"], c["message"]) for c in data["checks"]}


def write_config(directory: Path, config: dict[str, Any]) -> Path:
    """Write ``config`` as ``directory/capability-graph.json`` (creating the folder)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "capability-graph.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


# --- MCP ----------------------------------------------------------------------------------------


def wire(result: Any) -> dict[str, Any]:
    """A CallToolResult as the wire JSON of the contract (without protocol bookkeeping keys)."""
    data: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    data.pop("_meta", None)
    data.pop("resultType", None)
    if data.get("isError") is False:
        del data["isError"]
    return data


class McpStdio:
    """An SDK ``ClientSession`` over real stdio to ``capability-graph mcp --config F``.

    The session lives in a background thread's event loop, so one server process can serve many
    (synchronous) tests; :meth:`run` runs a coroutine function with the session there.
    """

    def __init__(self, config: Path, *, cwd: Path | None = None) -> None:
        self._config = config
        self._cwd = cwd
        self.errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._session: Any = None
        self.initialize_result: Any = None
        self._thread = threading.Thread(target=self._main, name="mcp-stdio-client", daemon=True)
        self._thread.start()
        if not self._ready.wait(60):
            raise TimeoutError("the MCP server did not initialize")
        if self._failure is not None:
            raise self._failure

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            self._failure = exc
            self._ready.set()

    async def _serve(self) -> None:
        from mcp import ClientSession, StdioServerParameters, stdio_client

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-m", "capability_graph.cli", "mcp", "--config", str(self._config)],
            cwd=self._cwd,
        )
        async with (
            stdio_client(parameters, errlog=self.errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            self.initialize_result = await session.initialize()
            self._session = session
            self._ready.set()
            await self._stop.wait()

    def run(self, function: Callable[[Any], Awaitable[T]], timeout: float = 60) -> T:
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(_call(function, self._session), self._loop)
        return future.result(timeout)

    def call_tool(self, name: str, arguments: Any = None) -> dict[str, Any]:
        async def go(session: Any) -> Any:
            return await session.call_tool(name, arguments)

        return wire(self.run(go))

    def stderr(self) -> str:
        self.errlog.seek(0)
        return self.errlog.read()

    def close(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        self.errlog.close()


async def _call(function: Callable[[Any], Awaitable[T]], session: Any) -> T:
    return await function(session)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class RawMcp:
    """The server process spoken to in raw JSON-RPC lines (to send what no SDK client would)."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen(
            [*CLI, "mcp", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def send(self, message: Any) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 30) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self._lines.get(timeout=timeout))
        return value

    def close(self) -> tuple[int, bytes]:
        assert self.process.stdin is not None
        assert self.process.stderr is not None
        self.process.stdin.close()
        status = self.process.wait(30)
        self._reader.join(10)
        stderr = self.process.stderr.read()
        self.process.stdout.close()  # type: ignore[union-attr]
        self.process.stderr.close()
        return status, stderr


def env_without_config() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CAPABILITY_GRAPH_CONFIG", None)
    return env


#: The CLI's commands, as its help lists them (``mcp-uninstall`` aside: it mirrors mcp-install).
CLI_COMMANDS: Final = (
    "describe",
    "list",
    "resolve",
    "match",
    "read",
    "call",
    "mcp",
    "doctor",
    "init",
    "mcp-install",
    "explain",
)

#: The options of the graph commands that take a value (shared by the argv fuzzers).
CLI_GRAPH_OPTIONS: Final = (
    "--provider",
    "--tag",
    "--limit",
    "--cursor",
    "--relations",
    "--depth",
    "--context",
    "--timeout-ms",
    "--arguments",
)

#: Tokens for fuzzing the CLI's argv: commands (but those that serve stdio or write files),
#: options, ids, tool names, numbers, JSON texts, context items, codes, and text that is not a
#: token at all (shared by the argv fuzz tests).
CLI_ARGV_TOKENS: Final = (
    *(command for command in CLI_COMMANDS if command not in ("mcp", "init", "mcp-install")),
    *CLI_GRAPH_OPTIONS,
    "--arguments-file",
    "--raw",
    "--json",
    "--help",
    "-h",
    "--",
    "acme",
    "vault",
    "acme::a",
    "acme::b",
    "vault::secrets",
    "guide",
    "upstream",
    "gone",
    "describe_graph",
    "list_capabilities",
    "resolve_capabilities",
    "match_capabilities",
    "read_document",
    "requires,related",
    "0",
    "1",
    "-1",
    "9",
    "500",
    "1e3",
    "k=v",
    "k:=1",
    "k:={}",
    "k:=",
    "=",
    "{}",
    "[]",
    "null",
    '{"ids":["acme::a"]}',
    '{"request":"x"}',
    "CG_GRAPH_CLOSED",
    "cg_input_invalid",
    "",
    " ",
    "-",
    "\x00",
    "é",
    "SECRET-4f1c",
)
