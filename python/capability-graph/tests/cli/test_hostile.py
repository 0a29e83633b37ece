"""The CLI in a hostile process environment, always as a real subprocess.

Standard streams closed, broken (the reader went away) or failing (a full device); fifos, devices
and directories for every path argument; argv bytes that are not UTF-8 for every command. Each
case ends with a defined exit status and its defined message, within a bound, and never with a
traceback or the internal-error line (exit 70).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from pathlib import Path
from typing import IO, Any

import pytest

from capability_graph._maintenance.mcp_install import CLIENTS as MCP_CLIENTS
from capability_graph_testing.common import expected, schema_validator
from capability_graph_testing.surfaces import CLI, MATCHED, scripted, write_graph

pytestmark = pytest.mark.slow

REPORT = schema_validator("maintenance-report.schema.json")
CLI_ERROR = schema_validator("cli-error.schema.json")
CLIENTS = ", ".join(sorted(MCP_CLIENTS))  # the MCP clients mcp-install knows
TIMEOUT = 60  # seconds: far beyond a cold start on a loaded machine; a hang is the failure
EXIT_IO = 74
EXIT_USAGE = 2

CLOSED_STDOUT = b"capability-graph: error: standard output is closed: the output is lost\n"
FULL_STDOUT = (
    b"capability-graph: error: cannot write to standard output (No space left on device)\n"
)
EMPTY_ARGUMENTS = b"capability-graph call: error: argument --arguments-file: not valid JSON\n"
MCP_NEEDS_STDOUT = (
    b"capability-graph: error: the mcp command needs standard output (it is closed)\n"
)
UNREADABLE_CONFIG = (
    b'{"ok":false,"error":{"code":"CG_CONFIG_INVALID","phase":"config",'
    b'"message":"Cannot read a valid bounded JSON configuration file",'
    b'"nextAction":"check_config"}}\n'
)
NOT_A_REGULAR_FILE = (
    b"capability-graph call: error: argument --arguments-file: not a readable regular file "
    b"(use - for standard input)\n"
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    write_graph(root, model=scripted({"return": MATCHED}))
    os.mkfifo(root / "fifo")
    (root / "folder").mkdir()
    return root


def run(
    argv: list[str | bytes],
    cwd: Path,
    *,
    shell_redirect: str = "",
    stdin: Any = subprocess.DEVNULL,
    stdout: Any = subprocess.PIPE,
) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI; ``shell_redirect`` (e.g. ``>&-``) is applied by a real shell before exec."""
    command: list[str | bytes] = [*CLI, *argv]
    if shell_redirect:
        command = ["sh", "-c", f'exec "$@" {shell_redirect}', "sh", *command]
    return subprocess.run(
        command,
        cwd=cwd,
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=TIMEOUT,
        check=False,
    )


def no_defect(done: subprocess.CompletedProcess[bytes]) -> None:
    assert done.returncode != 70, done
    assert b"Traceback" not in done.stderr, done.stderr
    assert b"internal error" not in done.stderr, done.stderr


# --- every command that writes on stdout, with stdout closed, broken or failing ------------------


def writing_commands(root: Path) -> dict[str, list[str]]:
    """One invocation of every command (and of help and version) that writes to stdout."""
    config = str(root / "capability-graph.json")
    return {
        "describe": ["describe", "--config", config],
        "list": ["list", "--config", config],
        "resolve": ["resolve", "acme::a", "--config", config],
        "match": ["match", "validate input", "--config", config],
        "read": ["read", "acme::a", "guide", "--config", config],
        "read-raw": ["read", "acme::a", "guide", "--raw", "--config", config],
        "call": ["call", "describe_graph", "--config", config],
        "doctor": ["doctor", "--json", "--config", config],
        "init": ["init", str(root / "new"), "--dry-run"],
        "mcp-install": [
            "mcp-install",
            "--client",
            "cursor",
            "--config-path",
            str(root / "client.json"),
            "--config",
            config,
            "--dry-run",
        ],
        "explain": ["explain", "CG_GRAPH_CLOSED"],
        "help": ["--help"],
        "command-help": ["list", "--help"],
        "version": ["--version"],
    }


WRITING = list(writing_commands(Path()))


@pytest.mark.parametrize("name", WRITING)
def test_closed_stdout_is_exit_74_with_one_line(workspace: Path, name: str) -> None:
    done = run(writing_commands(workspace)[name], workspace, shell_redirect=">&-")
    no_defect(done)
    assert (done.returncode, done.stderr) == (EXIT_IO, CLOSED_STDOUT)


@pytest.mark.parametrize("name", WRITING)
def test_stdout_whose_reader_went_away_is_exit_74_quietly(workspace: Path, name: str) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = run(writing_commands(workspace)[name], workspace, stdout=write_end)
    finally:
        os.close(write_end)
    no_defect(done)
    assert (done.returncode, done.stderr) == (EXIT_IO, b"")


@pytest.mark.parametrize("name", WRITING)
def test_full_stdout_is_exit_74_naming_the_cause(workspace: Path, name: str) -> None:
    with open("/dev/full", "wb") as full:
        done = run(writing_commands(workspace)[name], workspace, stdout=full)
    no_defect(done)
    assert (done.returncode, done.stderr) == (EXIT_IO, FULL_STDOUT)


def test_closed_stdout_does_not_change_the_exit_of_a_failure(workspace: Path) -> None:
    done = run(["resolve", "acme::missing"], workspace, shell_redirect=">&-")
    no_defect(done)
    assert done.returncode == 1
    assert json.loads(done.stderr)["error"] == expected("CG_CAPABILITY_NOT_FOUND", "query")
    done = run(["list", "--bogus"], workspace, shell_redirect=">&-")
    assert done.returncode == 2
    assert done.stderr.startswith(b"usage: capability-graph list")


# --- stderr closed, broken or failing: the exit status still tells ------------------------------


FAILING = {
    "graph error": (["resolve", "acme::missing"], 1),
    "usage error": (["list", "--bogus"], 2),
    "config error": (["describe", "--config", "missing.json"], 1),
    "success": (["describe"], 0),
}


@pytest.mark.parametrize("case", list(FAILING))
@pytest.mark.parametrize("stderr", ["closed", "broken", "full"])
def test_unusable_stderr_keeps_the_exit_status(workspace: Path, case: str, stderr: str) -> None:
    argv, status = FAILING[case]
    if stderr == "closed":
        done = run(list(argv), workspace, shell_redirect="2>&-")
    else:
        done = _with_stderr(list(argv), workspace, stderr)
    assert done.returncode == status, done
    assert done.stdout.count(b"\n") == (1 if status == 0 else 0), done.stdout


def _with_stderr(argv: list[str], cwd: Path, kind: str) -> subprocess.CompletedProcess[bytes]:
    if kind == "full":
        with open("/dev/full", "wb") as full:
            return _run_with_stderr(argv, cwd, full)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return _run_with_stderr(argv, cwd, write_end)
    finally:
        os.close(write_end)


def _run_with_stderr(
    argv: list[str], cwd: Path, stderr: IO[bytes] | int
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*CLI, *argv],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        timeout=TIMEOUT,
        check=False,
    )


# --- stdin closed ------------------------------------------------------------------------------


def test_arguments_from_a_stdin_closed_at_start_read_as_empty_input(workspace: Path) -> None:
    done = run(
        ["call", "list_capabilities", "--arguments-file", "-"],
        workspace,
        stdin=None,
        shell_redirect="<&-",
    )
    no_defect(done)
    assert (done.returncode, done.stdout) == (EXIT_USAGE, b"")
    assert done.stderr.endswith(EMPTY_ARGUMENTS)


def test_mcp_with_stdout_closed_is_exit_74_before_its_configuration(workspace: Path) -> None:
    done = run(
        ["mcp", "--config", "missing.json"],
        workspace,
        stdin=subprocess.DEVNULL,
        shell_redirect=">&-",
    )
    no_defect(done)
    assert (done.returncode, done.stderr) == (EXIT_IO, MCP_NEEDS_STDOUT)


def test_mcp_with_stdin_closed_at_start_ends_its_session_at_once(workspace: Path) -> None:
    done = run(["mcp"], workspace, stdin=None, shell_redirect="<&-")
    no_defect(done)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_mcp_with_stdin_closed_still_reports_a_configuration_error(workspace: Path) -> None:
    done = run(["mcp", "--config", "missing.json"], workspace, stdin=None, shell_redirect="<&-")
    no_defect(done)
    assert done.returncode == 1
    assert json.loads(done.stderr)["error"]["code"] == "CG_CONFIG_INVALID"


def test_a_command_that_does_not_read_stdin_runs_with_it_closed(workspace: Path) -> None:
    done = run(["describe"], workspace, stdin=None, shell_redirect="<&-")
    assert (done.returncode, done.stderr) == (0, b"")
    assert json.loads(done.stdout)["revision"].startswith("r:")


def test_mcp_whose_client_stops_reading_is_exit_74_quietly(workspace: Path) -> None:
    process = subprocess.Popen(
        [*CLI, "mcp"],
        cwd=workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "1"},
        },
    }
    try:
        process.stdin.write(json.dumps(initialize).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        process.stdout.close()  # the client stops reading, but keeps its end of stdin open
        for message in (
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ):
            process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()
        # The SDK's reader waits for the next line before the server can stop: keep talking.
        for number in range(3, 3 + 10 * TIMEOUT):
            if process.poll() is not None:
                break
            ping = {"jsonrpc": "2.0", "id": number, "method": "ping"}
            try:
                process.stdin.write(json.dumps(ping).encode() + b"\n")
                process.stdin.flush()
            except BrokenPipeError:
                break
            time.sleep(0.1)
        status = process.wait(timeout=TIMEOUT)
        stderr = process.stderr.read() if process.stderr else b""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
        process.stdout.close()
        if process.stderr:
            process.stderr.close()
    assert (status, stderr) == (EXIT_IO, b"")


# --- fifos, devices and directories for every path argument -------------------------------------

HOSTILE_PATHS = ["fifo", "/dev/zero", "/dev/null", "folder"]


def _path(root: Path, name: str) -> str:
    return name if name.startswith("/") else str(root / name)


@pytest.mark.parametrize("path", HOSTILE_PATHS)
@pytest.mark.parametrize(
    "argv",
    [
        ["describe"],
        ["list"],
        ["resolve", "acme::a"],
        ["match", "x"],
        ["read", "acme::a", "guide"],
        ["call", "describe_graph"],
        ["doctor"],
        ["mcp"],
    ],
    ids=lambda argv: argv[0],
)
def test_config_that_is_not_a_regular_file_is_the_unreadable_config_error(
    workspace: Path, path: str, argv: list[str]
) -> None:
    done = run([*argv, "--config", _path(workspace, path)], workspace)
    no_defect(done)
    assert (done.returncode, done.stderr) == (1, UNREADABLE_CONFIG)
    # doctor also reports the cause on stdout; every other command prints nothing there.
    if argv[0] == "doctor":
        assert done.stdout.startswith(b"capability-graph doctor: failed\n  [FAIL] config: ")
    else:
        assert done.stdout == b""


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_arguments_file_that_is_not_a_regular_file_is_a_usage_error(
    workspace: Path, path: str
) -> None:
    done = run(["call", "list_capabilities", "--arguments-file", _path(workspace, path)], workspace)
    no_defect(done)
    assert done.returncode == 2
    assert done.stderr.endswith(NOT_A_REGULAR_FILE)


@pytest.mark.parametrize("path", ["fifo", "/dev/null"])
def test_init_into_a_directory_that_is_not_one_fails(workspace: Path, path: str) -> None:
    done = run(["init", _path(workspace, path), "--json"], workspace)
    no_defect(done)
    assert done.returncode == 1
    data = json.loads(done.stdout)
    REPORT.validate(data)
    # [CG-MAINT-17]: the configuration cannot be written there; the later files are not tried.
    assert [(c["id"], c["status"]) for c in data["checks"]] == [
        ("configuration", "fail"),
        ("provider", "skip"),
        ("document", "skip"),
    ]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_init_config_that_is_not_a_regular_file_is_a_conflict(
    workspace: Path, path: str, tmp_path: Path
) -> None:
    done = run(["init", str(tmp_path), "--config", _path(workspace, path), "--json"], workspace)
    no_defect(done)
    assert done.returncode == 3
    data = json.loads(done.stdout)
    REPORT.validate(data)
    assert data["status"] == "conflict"
    assert data["checks"][0]["message"].endswith("already exists and differs: not overwritten")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_mcp_install_client_config_that_is_not_a_regular_file_is_left_alone(
    workspace: Path, path: str
) -> None:
    done = run(
        ["mcp-install", "--client", "cursor", "--config-path", _path(workspace, path), "--json"],
        workspace,
    )
    no_defect(done)
    assert done.returncode == 1
    data = json.loads(done.stdout)
    REPORT.validate(data)
    assert data["status"] == "failed"


# --- argv bytes that are not UTF-8, for every command ------------------------------------------

X = b"\xff"


#: Every command and option, given one argument whose bytes are not UTF-8 (CG-CLI-19).
UNDECODABLE: list[tuple[str, list[bytes]]] = [
    ("describe --config", [b"describe", b"--config", X]),
    ("list --provider", [b"list", b"--provider", X]),
    ("list --tag", [b"list", b"--tag", X]),
    ("list --cursor", [b"list", b"--cursor", X]),
    ("list --limit", [b"list", b"--limit", X]),
    ("resolve ID", [b"resolve", X]),
    ("resolve --relations", [b"resolve", b"acme::a", b"--relations", X]),
    ("match TEXT", [b"match", X]),
    ("match --context key", [b"match", b"x", b"--context", X + b"=1"]),
    ("match --context value", [b"match", b"x", b"--context", b"a=" + X]),
    ("read DOCUMENT_ID", [b"read", b"acme::a", X, b"--raw"]),
    ("call TOOL", [b"call", X]),
    ("call --arguments", [b"call", b"list_capabilities", b"--arguments", b'["' + X + b'"]']),
    ("call --arguments-file", [b"call", b"list_capabilities", b"--arguments-file", X]),
    ("doctor --config", [b"doctor", b"--config", X]),
    ("mcp --config", [b"mcp", b"--config", X]),
    ("init DIR", [b"init", X, b"--json"]),
    ("init --config", [b"init", b"--config", X + b".json", b"--json"]),
    ("mcp-install --client", [b"mcp-install", b"--client", X]),
    ("mcp-install --name", [b"mcp-install", b"--client", b"cursor", b"--name", X]),
    ("mcp-install --config", [b"mcp-install", b"--client", b"cursor", b"--config", X]),
    ("explain CODE", [b"explain", X]),
    ("COMMAND", [X]),
    ("option", [b"list", b"--" + X]),
    ("after --", [b"resolve", b"--", X]),
    ("with --help", [b"list", b"--help", X]),
]


@pytest.mark.parametrize(
    "argv", [case[1] for case in UNDECODABLE], ids=[case[0] for case in UNDECODABLE]
)
def test_undecodable_argv_is_a_usage_error(tmp_path: Path, argv: list[bytes]) -> None:
    """CG-CLI-19: wherever it stands, before anything else (help included); nothing written."""
    done = run(list(argv), tmp_path)
    no_defect(done)
    assert done.returncode == 2, done
    assert done.stdout == b""
    assert done.stderr.endswith(b"capability-graph: error: an argument is not UTF-8 text\n")
    assert X not in done.stderr
    assert os.listdir(tmp_path) == []
