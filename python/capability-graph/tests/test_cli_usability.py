"""The CLI for a person: help and examples, suggestions, messages that never repeat what the
caller typed, request JSON with one meaning, init's file names, hints, plurals and read --raw."""

from __future__ import annotations

import argparse
import io
import json
import os
import pty
import select
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capability_graph._mcp_install import CLIENTS as MCP_CLIENTS
from capability_graph.cli._parser import build_parser
from capability_graph_testing.common import expected, schema_validator
from capability_graph_testing.surfaces import (
    CLI,
    CLI_ARGV_TOKENS,
    DOCUMENT_TEXT,
    MATCHED,
    CliRun,
    cli,
    cli_process,
    scripted,
    write_graph,
)

CLI_ERROR = schema_validator("cli-error.schema.json")
REPORT = schema_validator("maintenance-report.schema.json")
TOOLS = "describe_graph, list_capabilities, resolve_capabilities, match_capabilities, read_document"
COMMANDS = [
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
]
SECRET = "sk-SECRET-4f1c"
CLIENTS = ", ".join(sorted(MCP_CLIENTS))  # the MCP clients mcp-install knows


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("usability"), model=scripted({"return": MATCHED}))


def usage_error(run: CliRun, command: str, message: str) -> None:
    """Exit 2, the command's usage, then exactly ``message`` as its error line."""
    assert run.status == 2, run
    assert run.stdout == ""
    prog = "capability-graph" if command == "" else f"capability-graph {command}"
    assert run.stderr.startswith(f"usage: {prog}"), run.stderr
    assert run.stderr.endswith(f"\n{prog}: error: {message}\n"), run.stderr


def envelope(run: CliRun) -> dict[str, str]:
    assert run.status == 1, run
    data = run.envelope()
    CLI_ERROR.validate(data)
    error: dict[str, str] = data["error"]
    return error


# --- help: text and an example on every command and option --------------------------------------


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser(io.StringIO(), io.StringIO())
    return dict(parser.commands)


def test_the_top_level_help_lists_every_command_with_examples() -> None:
    run = cli("--help")
    assert (run.status, run.stderr) == (0, "")
    for command in COMMANDS:
        assert f"\n    {command} " in run.stdout
    assert "\nexamples:\n  capability-graph init\n" in run.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_a_description_and_examples_of_itself(command: str) -> None:
    run = cli(command, "--help")
    assert (run.status, run.stderr) == (0, "")
    description, _, examples = run.stdout.partition("\nexamples:\n")
    assert _subparsers()[command].description in description
    lines = examples.splitlines()
    assert lines
    assert all(f"capability-graph {command}" in line for line in lines), lines


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_and_argument_has_help_with_an_example(command: str) -> None:
    parser = _subparsers()[command]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, action
        assert "e.g. " in action.help, action.help
        assert action.help.split("e.g. ")[0].strip(), action.help  # a text before the example


def test_client_choices_are_listed_in_help() -> None:
    run = cli("mcp-install", "--help")
    assert f"one of: {CLIENTS}" in " ".join(run.stdout.split())


def test_call_help_lists_the_tools() -> None:
    run = cli("call", "--help")
    assert f"one of: {TOOLS}" in " ".join(run.stdout.split())


# --- suggestions, and never an echo of the caller's text ---------------------------------------


@pytest.mark.parametrize(
    ("argv", "command", "message"),
    [
        (
            ["lst"],
            "",
            "argument COMMAND: unknown command (did you mean list?); the choices are describe, "
            "list, resolve, match, read, call, mcp, doctor, init, mcp-install, mcp-uninstall, "
            "explain",
        ),
        (
            ["RESOLVE"],
            "",
            "argument COMMAND: unknown command (did you mean resolve?); the choices are "
            "describe, list, resolve, match, read, call, mcp, doctor, init, mcp-install, "
            "mcp-uninstall, explain",
        ),
        (
            ["list", "--provder", "acme"],
            "list",
            "2 unrecognized arguments (did you mean --provider?)",
        ),
        (
            ["match", "x", "--timeout=5"],
            "match",
            "1 unrecognized argument (did you mean --timeout-ms?)",
        ),
        (
            ["mcp-install", "--client", "curser"],
            "mcp-install",
            f"argument --client: unknown choice (did you mean cursor?); the choices are {CLIENTS}",
        ),
        (
            ["explain", "CG_CONFIG_INVALD"],
            "explain",
            "unknown error code (did you mean CG_CONFIG_INVALID?); "
            "run 'capability-graph explain' to list them",
        ),
        (
            ["explain", "input_invalid"],
            "explain",
            "unknown error code (did you mean CG_INPUT_INVALID?); "
            "run 'capability-graph explain' to list them",
        ),
    ],
)
def test_a_near_miss_suggests_our_own_name(argv: list[str], command: str, message: str) -> None:
    usage_error(cli(*argv), command, message)


def test_explain_ignores_case() -> None:
    run = cli("explain", "cg_config_invalid", "--json")
    assert run.status == 0
    assert run.json()["code"] == "CG_CONFIG_INVALID"


def test_a_context_key_given_twice_is_not_repeated_in_the_message() -> None:
    done = cli_process(
        "match", "x", "--context", f"{SECRET}=1", "--context", f"{SECRET}=2", timeout=60
    )
    assert done.returncode == 2
    assert SECRET not in done.stderr
    assert done.stderr.endswith(
        "\ncapability-graph match: error: argument --context: a KEY is given twice\n"
    )


#: Usage errors where argparse would quote what the caller typed.
ECHO_CASES = [
    [SECRET],
    [f"--{SECRET}"],
    ["list", SECRET],
    ["list", f"--{SECRET}"],
    ["list", f"--tag={SECRET}", SECRET],
    ["doctor", f"--json={SECRET}"],
    ["list", "--limit", SECRET],
    ["resolve", "a::b", "--depth", SECRET],
    ["match", "x", "--context", SECRET],
    ["match", "x", "--context", f"{SECRET}:={{"],
    ["match", "x", "--timeout-ms", SECRET],
    ["mcp-install", "--client", SECRET],
    ["mcp-install", "--client", "cursor", "--name", f"{SECRET}!"],
    ["explain", SECRET],
    ["call", "describe_graph", "--arguments", SECRET],
    ["call", "describe_graph", "--arguments", f'{{"{SECRET}": "x"'],
    ["call", "describe_graph", "--arguments-file", f"/nonexistent/{SECRET}"],
    ["call", "describe_graph", "--arguments", "{}", "--arguments-file", SECRET],
]


@pytest.mark.parametrize("argv", ECHO_CASES, ids=lambda argv: " ".join(argv)[:40])
def test_usage_errors_never_repeat_the_callers_text(argv: list[str], config: Path) -> None:
    run = cli(*argv, "--config", str(config))
    assert run.status == 2, run
    assert "SECRET" not in run.stderr, run.stderr


_SECRET_TOKENS = st.sampled_from(
    [SECRET, f"--{SECRET}", f"-{SECRET}", f"{SECRET}=1", f"{SECRET}:=1", f"--json={SECRET}"]
)
_TOKENS = st.sampled_from(CLI_ARGV_TOKENS)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    argv=st.lists(
        _TOKENS | _SECRET_TOKENS | st.binary(max_size=8).map(os.fsdecode), min_size=1, max_size=7
    )
)
def test_fuzzed_argv_bytes_never_echo_and_never_fail_as_a_defect(
    argv: list[str], config: Path
) -> None:
    """argv as the interpreter decodes it (undecodable bytes become lone surrogates)."""
    run = cli("--config", str(config), *argv)
    assert run.status in (0, 1, 2), run
    assert "Traceback" not in run.stderr
    assert "SECRET" not in run.stderr, run.stderr
    if run.status == 1 and run.stderr:  # (doctor's failed report is on stdout)
        CLI_ERROR.validate(json.loads(run.stderr))


# --- the unknown tool ---------------------------------------------------------------------------


def test_an_unknown_tool_for_a_program_is_exactly_the_envelope(config: Path) -> None:
    done = cli_process("call", "list_capabilitys", "--config", str(config))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        '{"ok":false,"error":{"code":"CG_INPUT_INVALID","phase":"query",'
        '"message":"Unknown tool","nextAction":"fix_input"}}\n'
    )


def test_an_unknown_tool_on_a_terminal_gets_a_hint_listing_the_tools(config: Path) -> None:
    primary, secondary = pty.openpty()
    try:
        done = subprocess.run(
            [*CLI, "call", "list_capabilitys", "--config", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=secondary,
            timeout=60,
            check=False,
        )
        os.close(secondary)
        seen = b""
        while select.select([primary], [], [], 5)[0]:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(primary)
    assert (done.returncode, done.stdout) == (1, b"")
    lines = seen.decode().replace("\r\n", "\n").splitlines()
    assert json.loads(lines[0])["error"]["message"] == "Unknown tool"
    assert lines[1:] == [f"hint: the tools are {TOOLS} (did you mean list_capabilities?)"]


# --- request JSON texts have one meaning --------------------------------------------------------


def test_duplicate_names_in_arguments_are_input_invalid(config: Path) -> None:
    done = cli_process(
        "call",
        "list_capabilities",
        "--arguments",
        '{"limit": 1, "limit": 2}',
        "--config",
        str(config),
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert json.loads(done.stderr)["error"] == expected(
        "CG_INPUT_INVALID", "query", "/ an object has a duplicate key"
    )


@pytest.mark.parametrize(
    ("tool", "text", "phase", "message"),
    [
        (
            "resolve_capabilities",
            '{"ids": ["acme::a"], "relations": {"depth": 1, "depth": 2}}',
            "query",
            "/relations an object has a duplicate key",
        ),
        (
            "match_capabilities",
            '{"request": "x", "request": "y"}',
            "match",
            "/ an object has a duplicate key",
        ),
        (
            "read_document",
            '{"capabilityId": "acme::a", "documentId": "guide", "documentId": "gone"}',
            "document",
            "/ an object has a duplicate key",
        ),
        (
            "no_such_tool",
            '{"a": 1, "a": 1}',
            "query",
            "/ an object has a duplicate key",
        ),
        (
            "list_capabilities",
            '{"limit": 1' + "0" * 5000 + "}",
            "query",
            "/limit integers must stay within +/-2^53",
        ),
        (
            "describe_graph",
            '{"a": ' * 5000 + "1" + "}" * 5000,
            "query",
            "/ nesting deeper than 32",
        ),
    ],
    ids=["nested", "match", "document", "unknown tool", "long integer", "deep"],
)
def test_request_text_without_one_meaning_is_input_invalid_in_the_tools_phase(
    config: Path, tool: str, text: str, phase: str, message: str, tmp_path: Path
) -> None:
    inline = cli("call", tool, "--arguments", text, "--config", str(config))
    assert envelope(inline) == expected("CG_INPUT_INVALID", phase, message)
    path = tmp_path / "request.json"
    path.write_text(text, encoding="utf-8")
    from_file = cli("call", tool, "--arguments-file", str(path), "--config", str(config))
    assert envelope(from_file) == expected("CG_INPUT_INVALID", phase, message)


def test_duplicate_names_in_a_context_value_are_input_invalid(config: Path) -> None:
    run = cli("match", "x", "--context", 'k:={"a": 1, "a": 2}', "--config", str(config))
    assert envelope(run) == expected(
        "CG_INPUT_INVALID", "match", "/context an object has a duplicate key"
    )


def test_an_env_name_that_is_not_a_variable_name_names_the_format_whole(config: Path) -> None:
    run = cli("mcp-install", "--client", "cursor", "--env", "1BAD", "--config", str(config))
    usage_error(
        run,
        "mcp-install",
        "argument --env: must be an environment variable name: "
        "A-Z a-z _, then up to 127 of A-Z a-z 0-9 _",
    )


def test_a_text_that_is_not_json_stays_a_usage_error(config: Path) -> None:
    run = cli(
        "call", "describe_graph", "--arguments", '[{"a": 1, "a": 2}, ', "--config", str(config)
    )
    usage_error(run, "call", "argument --arguments: not valid JSON")


# --- init honours the file name it is given ----------------------------------------------------


def test_init_writes_the_configuration_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli("init", "--config", "my.json")
    assert run.status == 0, run
    assert (tmp_path / "my.json").is_file()
    assert not (tmp_path / "capability-graph.json").exists()
    assert cli("describe", "--config", "my.json").json()["providers"][0]["providerId"] == "example"


def test_init_with_a_folder_and_a_configuration_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli("init", "graph", "--config", "conf/graph.json", "--json")
    assert run.status == 0, run
    data = run.json()
    REPORT.validate(data)
    assert [c["id"] for c in data["checks"]] == [
        "file.graph.json",
        "file.providers.example.json",
        "file.providers.knowledge.getting-started.md",
    ]
    written = json.loads((tmp_path / "conf" / "graph.json").read_text(encoding="utf-8"))
    assert written["providers"] == [{"path": "../graph/providers/example.json"}]
    assert (tmp_path / "graph" / "providers" / "knowledge" / "getting-started.md").is_file()
    run = cli("read", "example::getting-started", "guide", "--config", "conf/graph.json")
    assert run.json()["text"].startswith("# Getting started")


def test_init_with_an_empty_configuration_path_is_a_usage_error(tmp_path: Path) -> None:
    usage_error(
        cli("init", str(tmp_path), "--config", ""), "init", "argument --config: the path is empty"
    )
    assert list(tmp_path.iterdir()) == []


# --- next steps are hints, counts have their plural -------------------------------------------


def test_init_prints_its_next_step_as_a_hint_not_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli("init", "--config", "my.json")
    assert (
        run.stdout.splitlines()[-1]
        == "  hint: check the new graph: capability-graph doctor --config my.json"
    )
    assert "warning:" not in run.stdout
    data = cli("init", "again", "--json").json()
    assert data["warnings"] == []


def test_doctor_counts_in_the_right_number(tmp_path: Path) -> None:
    assert cli("init", str(tmp_path)).status == 0
    run = cli("doctor", "--config", str(tmp_path / "capability-graph.json"))
    assert run.status == 0, run
    lines = run.stdout.splitlines()
    assert "  [ok  ] config: The configuration is valid (1 source)" in lines
    assert "  [ok  ] source.0: Provider example version 1: 2 capabilities" in lines
    assert "  [ok  ] relations: 2 capabilities and 1 relation are valid" in lines
    assert (
        "  [ok  ] documents.0: Provider example: 1 local document readable, 0 URL references"
        in lines
    )
    assert any(line.endswith(", 1 provider and 2 capabilities in scope") for line in lines), lines


# --- read --raw ---------------------------------------------------------------------------------


def test_read_raw_prints_the_document_text_only(config: Path) -> None:
    done = subprocess.run(
        [*CLI, "read", "acme::a", "guide", "--raw", "--config", str(config)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == DOCUMENT_TEXT.encode("utf-8")


def test_read_raw_failure_is_still_the_envelope(config: Path) -> None:
    run = cli("read", "acme::a", "gone", "--raw", "--config", str(config))
    assert envelope(run) == expected("CG_DOCUMENT_NOT_FOUND", "document")
