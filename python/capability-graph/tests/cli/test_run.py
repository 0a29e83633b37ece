"""The CLI as a program: ``run(argv, stdin, stdout, stderr)``, the ``capability-graph``
console script and ``python -m capability_graph.cli``; exit statuses, usage errors, the
configuration's precedence, start-up imports, and argv fuzzing."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capability_graph_testing.common import REPO
from capability_graph_testing.surfaces import (
    CLI_ARGV_TOKENS,
    CLI_COMMANDS,
    CLI_ERROR,
    MATCHED,
    assert_cli_error,
    cli,
    cli_process,
    graph_call,
    scripted,
    write_graph,
)


def test_call_arguments_file_dash_reads_the_stdin_given_to_run(config: Path) -> None:
    run = cli(
        "--config", str(config), "call", "list_capabilities", "--arguments-file", "-",
        stdin=b'{"limit": 1}',
    )  # fmt: skip
    assert run.json() == graph_call(config, "list_capabilities", {"limit": 1})


def test_a_stdin_of_text_only_is_read_as_utf8(config: Path) -> None:
    from capability_graph.cli import run

    out, err = io.StringIO(), io.StringIO()
    argv = ["--config", str(config), "call", "resolve_capabilities", "--arguments-file", "-"]
    status = run(argv, io.StringIO('{"ids": ["acme::a"]}'), out, err)
    assert (status, err.getvalue()) == (0, "")
    assert json.loads(out.getvalue()) == graph_call(
        config, "resolve_capabilities", {"ids": ["acme::a"]}
    )


def test_a_stdin_over_the_input_budget_is_input_too_large(tmp_path: Path) -> None:
    config = write_graph(tmp_path, budgets={"maxInputBytes": 1024})
    request = json.dumps({"request": "x" * 2000}).encode("utf-8")
    run = cli(
        "--config", str(config), "call", "match_capabilities", "--arguments-file", "-",
        stdin=request,
    )  # fmt: skip
    assert run.status == 1, run
    assert run.envelope()["error"]["code"] == "CG_INPUT_TOO_LARGE"


def test_a_closed_stdin_given_to_run_reads_as_empty_input(config: Path) -> None:
    from capability_graph.cli import run

    out, err = io.StringIO(), io.StringIO()
    argv = ["--config", str(config), "call", "list_capabilities", "--arguments-file", "-"]
    assert run(argv, None, out, err) == 2
    assert out.getvalue() == ""
    assert err.getvalue().endswith(
        "capability-graph call: error: argument --arguments-file: not valid JSON\n"
    )


def test_python_dash_m_runs_the_cli_as_hosts_installed_by_mcp_install_start_it(
    config: Path,
) -> None:
    """``python -m capability_graph.cli``, the command ``mcp-install`` writes into a client's
    configuration, prints what ``run`` prints."""
    argv = ["describe", "--config", str(config)]
    done = cli_process(*argv)
    in_process = cli(*argv)
    assert (done.returncode, done.stdout, done.stderr) == (0, in_process.stdout, "")
    done = cli_process("frobnicate")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", cli("frobnicate").stderr)


def test_the_console_script_is_main_of_the_cli_package() -> None:
    from importlib.metadata import entry_points

    from capability_graph.cli import main

    (script,) = entry_points(group="console_scripts", name="capability-graph")
    assert script.value == "capability_graph.cli:main"
    assert script.load() is main


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        ([], "a COMMAND is required"),
        (["frobnicate"], "unknown command; the choices are describe, list,"),
        (
            ["describe", "--bogus"],
            "capability-graph describe: error: an option is not recognized\n",
        ),
        (["list", "--limit", "many"], "argument --limit: must be an integer"),
        (
            ["list", "--lim", "5"],
            "an option is not recognized (did you mean --limit?)",
        ),  # no abbreviations (CG-CLI-15)
        (["resolve"], "the following arguments are required: ID"),
        (["match", "x", "--context", "novalue"], "expected KEY=TEXT or KEY:=JSON"),
        (["match", "x", "--context", "a:={"], "the value after := must be JSON"),
        (["match", "x", "--context", "a=1", "--context", "a=2"], "a KEY is given twice"),
        (["read", "acme::a"], "the following arguments are required: DOCUMENT_ID"),
        (["call", "describe_graph", "--arguments", "{bad"], "argument --arguments: not valid JSON"),
        (
            ["call", "describe_graph", "--arguments", "{}", "--arguments-file", "x"],
            "not allowed with",
        ),
        (
            [
                "--config",
                str(REPO / "examples" / "quickstart" / "capability-graph.json"),
                "call",
                "describe_graph",
                "--arguments-file",
                "/nonexistent/args.json",
            ],
            "argument --arguments-file: not a readable regular file (use - for standard input)",
        ),
        (["explain", "CG_NOPE"], "unknown error code"),
    ],
)
def test_usage_errors_exit_2_with_usage_on_stderr(argv: list[str], fragment: str) -> None:
    run = cli(*argv)
    assert run.status == 2, run
    assert run.stdout == ""
    assert run.stderr.startswith("usage: capability-graph")
    assert fragment in run.stderr


def test_help_and_version_exit_0_on_stdout() -> None:
    run = cli("--help")
    assert (run.status, run.stderr) == (0, "")
    for command in CLI_COMMANDS:
        assert command in run.stdout
    run = cli("match", "--help")
    assert run.status == 0
    assert "KEY:=JSON" in run.stdout
    run = cli("--version")
    assert run.status == 0
    assert run.stdout.startswith("capability-graph ")


def test_config_precedence_flag_then_environment_then_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = write_graph(tmp_path / "here")
    elsewhere = write_graph(tmp_path / "elsewhere", scope={"providers": ["acme", "vault"]})
    monkeypatch.chdir(tmp_path / "here")
    monkeypatch.delenv("CAPABILITY_GRAPH_CONFIG", raising=False)
    assert cli("describe").json()["scope"] == {"providers": ["acme"]}
    monkeypatch.setenv("CAPABILITY_GRAPH_CONFIG", str(elsewhere))
    assert cli("describe").json()["scope"] == {"providers": ["acme", "vault"]}
    assert cli("describe", "--config", str(here)).json()["scope"] == {"providers": ["acme"]}
    assert cli("--config", str(here), "describe").json()["scope"] == {"providers": ["acme"]}
    monkeypatch.setenv("CAPABILITY_GRAPH_CONFIG", "")  # empty: unset
    assert cli("describe").json()["scope"] == {"providers": ["acme"]}
    monkeypatch.chdir(tmp_path)
    assert_cli_error(
        cli("describe"),
        "CG_CONFIG_INVALID",
        "config",
        "Cannot read a valid bounded JSON configuration file",
    )


def test_a_defect_is_one_fixed_line_and_exit_70(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capability_graph import CapabilityGraph

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("SECRET-4f1c in /home/user")

    monkeypatch.setattr(CapabilityGraph, "call", broken)
    run = cli("describe", "--config", str(config))
    assert run.status == 70
    assert run.stdout == ""
    assert (
        run.stderr
        == "capability-graph: internal error (a defect of capability-graph; please report it)\n"
    )


def test_graph_commands_never_import_pydantic_jsonschema_the_mcp_sdk_or_tomlkit(
    config: Path,
) -> None:
    code = (
        "import io, sys\n"
        "from capability_graph.cli import run\n"
        "out = io.StringIO()\n"
        f"assert run(['describe', '--config', {str(config)!r}], None, out, sys.stderr) == 0\n"
        "assert run(['explain', 'CG_GRAPH_CLOSED'], None, out, sys.stderr) == 0\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        "heavy = {'mcp', 'mcp_types', 'tomlkit', 'openai', 'pydantic', 'jsonschema'}\n"
        "print(sorted(loaded & heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")


_FUZZ_DIR = Path(tempfile.mkdtemp(prefix="cg-cli-fuzz-"))


_FUZZ_CONFIG = write_graph(_FUZZ_DIR, model=scripted({"return": MATCHED}))


_TOKENS = st.sampled_from(CLI_ARGV_TOKENS)


_ARGV = st.lists(_TOKENS | st.text(max_size=12), max_size=8)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argv=_ARGV)
def test_fuzzed_argv_never_tracebacks(argv: list[str]) -> None:
    if {"mcp", "init", "mcp-install"} & set(argv):
        return  # these serve stdio or write files; they are tested on their own
    run = cli("--config", str(_FUZZ_CONFIG), *argv)
    assert run.status in (0, 1, 2, 3), run
    assert "Traceback" not in run.stderr
    if run.status == 1 and run.stderr:
        assert run.stderr.count("\n") == 1
        CLI_ERROR.validate(json.loads(run.stderr))
        assert run.stdout == ""
    elif run.status == 2:
        assert run.stderr.startswith("usage: ")
    assert "SECRET-4f1c" not in run.stderr  # not even in a usage message
