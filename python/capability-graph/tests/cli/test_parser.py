"""The command line's parser (``_surfaces.cli.parser`` and ``arguments``): help and
examples on every command and option, suggestions of our own names, and usage messages that never
repeat what the caller typed."""

from __future__ import annotations

import argparse
import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capability_graph._maintenance.mcp_install import CLIENTS as MCP_CLIENTS
from capability_graph._surfaces.cli.parser import build_parser
from capability_graph_testing.surfaces import (
    CLI_ARGV_TOKENS,
    CLI_COMMANDS,
    CLI_ERROR,
    cli,
    usage_error,
)

SECRET = "sk-SECRET-4f1c"


CLIENTS = ", ".join(sorted(MCP_CLIENTS))  # the MCP clients mcp-install knows


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser(io.StringIO(), io.StringIO())
    return dict(parser.commands)


def test_the_top_level_help_lists_every_command_with_examples() -> None:
    run = cli("--help")
    assert (run.status, run.stderr) == (0, "")
    for command in CLI_COMMANDS:
        assert f"\n    {command} " in run.stdout
    assert "\nexamples:\n  capability-graph init\n" in run.stdout


@pytest.mark.parametrize("command", CLI_COMMANDS)
def test_every_command_help_has_a_description_and_examples_of_itself(command: str) -> None:
    run = cli(command, "--help")
    assert (run.status, run.stderr) == (0, "")
    description, _, examples = run.stdout.partition("\nexamples:\n")
    assert _subparsers()[command].description in description
    lines = examples.splitlines()
    assert lines
    assert all(f"capability-graph {command}" in line for line in lines), lines


@pytest.mark.parametrize("command", CLI_COMMANDS)
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


@pytest.mark.parametrize(
    ("argv", "command", "message"),
    [
        (
            ["lst"],
            "",
            "unknown command (did you mean list?); the choices are describe, "
            "list, resolve, match, read, call, mcp, doctor, init, mcp-install, mcp-uninstall, "
            "explain",
        ),
        (
            ["RESOLVE"],
            "",
            "unknown command (did you mean resolve?); the choices are "
            "describe, list, resolve, match, read, call, mcp, doctor, init, mcp-install, "
            "mcp-uninstall, explain",
        ),
        (
            ["list", "--provder", "acme"],
            "list",
            "an option is not recognized (did you mean --provider?)",
        ),
        (
            ["match", "x", "--timeout=5"],
            "match",
            "an option is not recognized (did you mean --timeout-ms?)",
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
