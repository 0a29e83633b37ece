"""The CLI graph commands: in-process through run(argv, stdin, stdout, stderr), a few as
subprocesses."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capability_graph import BlockingCapabilityGraph
from capability_graph_testing.common import REPO, expected, schema_validator
from capability_graph_testing.surfaces import (
    CLI,
    CLI_ARGV_TOKENS,
    DOCUMENT_TEXT,
    MATCHED,
    CliRun,
    cli,
    cli_process,
    env_without_config,
    scripted,
    sleeping,
    write_graph,
)

SEED_MISSING_CONFIG = (
    '{"ok":false,"error":{"code":"CG_CONFIG_INVALID","phase":"config",'
    '"message":"Cannot read a valid bounded JSON configuration file",'
    '"nextAction":"check_config"}}\n'
)
CLI_ERROR = schema_validator("cli-error.schema.json")


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_graph(tmp_path_factory.mktemp("cli"), model=scripted({"return": MATCHED}))


def graph_call(config: Path, tool: str, arguments: Any) -> Any:
    with BlockingCapabilityGraph.open(config) as graph:
        return graph.call(tool, arguments)


def failed(run: CliRun, code: str, phase: str, message: str | None = None) -> None:
    assert run.status == 1, run
    envelope = run.envelope()
    CLI_ERROR.validate(envelope)
    assert envelope["error"] == expected(code, phase, message)


# --- graph commands map to the exact tool requests ----------------------------------------------


@pytest.mark.parametrize(
    ("argv", "tool", "arguments"),
    [
        (["describe"], "describe_graph", {}),
        (["list"], "list_capabilities", {}),
        (
            ["list", "--tag", "http", "--tag", "schema", "--limit", "1"],
            "list_capabilities",
            {"tags": ["http", "schema"], "limit": 1},
        ),
        (["list", "--provider", "acme"], "list_capabilities", {"providers": ["acme"]}),
        (["resolve", "acme::a"], "resolve_capabilities", {"ids": ["acme::a"]}),
        (
            ["resolve", "acme::a", "acme::b", "--relations", "requires,related", "--depth", "2"],
            "resolve_capabilities",
            {
                "ids": ["acme::a", "acme::b"],
                "relations": {"kinds": ["requires", "related"], "depth": 2},
            },
        ),
        (
            ["resolve", "acme::a", "--depth", "0"],
            "resolve_capabilities",
            {"ids": ["acme::a"], "relations": {"depth": 0}},
        ),
        (["match", "validate input"], "match_capabilities", {"request": "validate input"}),
        (
            [
                "match",
                "x",
                "--context",
                "lang=python",
                "--context",
                "retries:=3",
                "--context",
                "beta:=true",
                "--context",
                "version=3",
                "--provider",
                "acme",
                "--limit",
                "2",
                "--timeout-ms",
                "5000",
            ],
            "match_capabilities",
            {
                "request": "x",
                "context": {"lang": "python", "retries": 3, "beta": True, "version": "3"},
                "providers": ["acme"],
                "limit": 2,
                "timeoutMs": 5000,
            },
        ),
        (
            ["read", "acme::a", "guide"],
            "read_document",
            {"capabilityId": "acme::a", "documentId": "guide"},
        ),
        (["call", "describe_graph"], "describe_graph", {}),
        (
            ["call", "resolve_capabilities", "--arguments", '{"ids":["acme::b"]}'],
            "resolve_capabilities",
            {"ids": ["acme::b"]},
        ),
    ],
)
def test_graph_command_prints_the_result_of_its_tool_request(
    config: Path, argv: list[str], tool: str, arguments: Any
) -> None:
    run = cli(*argv, "--config", str(config))
    assert (run.status, run.stderr) == (0, "")
    assert run.json() == graph_call(config, tool, arguments)


def test_read_prints_utf8_text(config: Path) -> None:
    run = cli("--config", str(config), "read", "acme::a", "guide")
    assert run.json()["text"] == DOCUMENT_TEXT
    assert "中文" in run.stdout  # UTF-8, not \\u escapes


def test_seed_resolve_missing_capability(config: Path) -> None:
    failed(
        cli("resolve", "acme::missing", "--config", str(config)), "CG_CAPABILITY_NOT_FOUND", "query"
    )


@pytest.mark.parametrize(
    ("argv", "code", "phase"),
    [
        (["list", "--limit", "0"], "CG_INPUT_INVALID", "query"),
        (["list", "--limit", "-3"], "CG_INPUT_INVALID", "query"),
        (["list", "--cursor", "!!"], "CG_INPUT_INVALID", "query"),
        (["list", "--provider", "vault"], "CG_ACCESS_DENIED", "query"),
        (["list", "--provider", "nope"], "CG_ACCESS_DENIED", "query"),
        (["resolve", "acme::a", "--relations", "owns"], "CG_INPUT_INVALID", "query"),
        (["resolve", "acme::a", "--relations", ""], "CG_INPUT_INVALID", "query"),
        (["resolve", "acme::a", "--depth", "9"], "CG_INPUT_INVALID", "query"),
        (["resolve", "Acme::A"], "CG_INPUT_INVALID", "query"),
        (["match", ""], "CG_INPUT_INVALID", "match"),
        (["match", "x", "--context", "9bad=1"], "CG_CONTEXT_INVALID", "match"),
        (["match", "x", "--context", "a:={}"], "CG_CONTEXT_INVALID", "match"),
        (["match", "x", "--context", "a:=null"], "CG_CONTEXT_INVALID", "match"),
        (["match", "x", "--context", "a:=NaN"], "CG_CONTEXT_INVALID", "match"),
        (["match", "x", "--timeout-ms", "0"], "CG_INPUT_INVALID", "match"),
        (["read", "acme::a", "upstream"], "CG_DOCUMENT_REFERENCE_ONLY", "document"),
        (["read", "acme::a", "gone"], "CG_DOCUMENT_NOT_FOUND", "document"),
        (["read", "vault::secrets", "x"], "CG_ACCESS_DENIED", "document"),
        (["call", "drop_tables"], "CG_INPUT_INVALID", "query"),
        (["call", "describe_graph", "--arguments", "null"], "CG_INPUT_INVALID", "query"),
        (["call", "describe_graph", "--arguments", "[]"], "CG_INPUT_INVALID", "query"),
        (
            ["call", "list_capabilities", "--arguments", '{"limit":null}'],
            "CG_INPUT_INVALID",
            "query",
        ),
    ],
)
def test_core_errors_are_one_envelope_line_and_exit_1(
    config: Path, argv: list[str], code: str, phase: str
) -> None:
    run = cli(*argv, "--config", str(config))
    assert run.status == 1, run
    error = run.envelope()["error"]
    assert (error["code"], error["phase"]) == (code, phase)
    tool_argv = argv  # the same error as the SDK's for the same request
    assert error == _sdk_error(config, tool_argv)


def _sdk_error(config: Path, argv: list[str]) -> dict[str, str]:
    import io

    from capability_graph import GraphError
    from capability_graph.cli._parser import build_parser
    from capability_graph.cli._requests import REQUESTS

    args = build_parser(io.StringIO(), io.StringIO()).parse_args(argv)
    tool, arguments = REQUESTS[args.command](args)
    with BlockingCapabilityGraph.open(config) as graph, pytest.raises(GraphError) as excinfo:
        graph.call(tool, arguments)
    error: dict[str, str] = excinfo.value.to_json()
    return error


def test_call_arguments_file_reads_the_request_from_a_file(config: Path, tmp_path: Path) -> None:
    arguments = tmp_path / "arguments.json"
    arguments.write_text('\ufeff{"ids": ["acme::a"]}', encoding="utf-8")
    run = cli(
        "--config", str(config), "call", "resolve_capabilities", "--arguments-file", str(arguments)
    )
    assert run.json() == graph_call(config, "resolve_capabilities", {"ids": ["acme::a"]})


def test_call_arguments_file_dash_reads_the_stdin_given_to_run(config: Path) -> None:
    run = cli(
        "--config", str(config), "call", "list_capabilities", "--arguments-file", "-",
        stdin=b'\xef\xbb\xbf{"limit": 1}',
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


def test_a_closed_stdin_given_to_run_is_exit_74_naming_it(config: Path) -> None:
    from capability_graph.cli import run

    out, err = io.StringIO(), io.StringIO()
    argv = ["--config", str(config), "call", "list_capabilities", "--arguments-file", "-"]
    assert run(argv, None, out, err) == 74
    assert (out.getvalue(), err.getvalue()) == (
        "",
        "capability-graph: error: standard input is closed\n",
    )


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        ([], "the following arguments are required: COMMAND"),
        (["frobnicate"], "argument COMMAND: unknown command; the choices are describe, list,"),
        (["describe", "--bogus"], "capability-graph describe: error: 1 unrecognized argument\n"),
        (["list", "--limit", "many"], "argument --limit: must be an integer"),
        (
            ["list", "--lim", "5"],
            "2 unrecognized arguments (did you mean --limit?)",
        ),  # no abbreviations
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
    for command in (
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
    ):
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
    failed(
        cli("describe"),
        "CG_CONFIG_INVALID",
        "config",
        "Cannot read a valid bounded JSON configuration file",
    )


def test_invalid_config_is_an_envelope(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"providers": [], "budgets": {"maxCapabilities": 0}}', encoding="utf-8")
    run = cli("describe", "--config", str(path))
    assert run.status == 1
    assert run.envelope()["error"]["code"] == "CG_CONFIG_INVALID"
    assert str(tmp_path) not in run.stderr


def test_match_paths(tmp_path: Path) -> None:
    config = write_graph(
        tmp_path / "a", model=scripted({"return": {"status": "no_match", "candidates": []}})
    )
    assert cli("match", "bake bread", "--config", str(config)).json()["status"] == "no_match"
    config = write_graph(
        tmp_path / "b",
        model=scripted({"raise": {"code": "CG_MODEL_REFUSED", "message": "SECRET-4f1c"}}),
    )
    run = cli("match", "x", "--config", str(config))
    failed(run, "CG_MODEL_REFUSED", "match")
    assert "SECRET" not in run.stderr
    config = write_graph(tmp_path / "c")
    failed(cli("match", "x", "--config", str(config)), "CG_MODEL_NOT_CONFIGURED", "match")
    config = write_graph(tmp_path / "d", model=sleeping(5000))
    failed(
        cli("match", "x", "--timeout-ms", "20", "--config", str(config)),
        "CG_MODEL_TIMEOUT",
        "match",
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


# --- as a subprocess ----------------------------------------------------------------------------


def test_seed_doctor_with_a_missing_config_prints_exactly_the_seed_line(tmp_path: Path) -> None:
    done = cli_process("doctor", "--config", "deliberately-missing-config.json", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, SEED_MISSING_CONFIG)
    # stdout: doctor's report, naming the cause (host-side facts, never in the envelope).
    missing = tmp_path.resolve() / "deliberately-missing-config.json"
    assert done.stdout.splitlines()[:2] == [
        "capability-graph doctor: failed",
        f"  [FAIL] config: Cannot read the configuration: {missing} does not exist",
    ]


def test_subprocess_success_is_one_json_line(config: Path) -> None:
    done = cli_process("resolve", "acme::a", cwd=config.parent, env=env_without_config())
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.count("\n") == 1
    assert json.loads(done.stdout) == graph_call(
        config, "resolve_capabilities", {"ids": ["acme::a"]}
    )


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery to a child is POSIX here")
def test_ctrl_c_during_match_is_model_cancelled_and_exit_130(tmp_path: Path) -> None:
    config = write_graph(tmp_path, model=sleeping(30_000))
    # Ctrl-C before the match is running (interpreter start, open) is a plain interrupt: exit 130
    # without an envelope. Nothing observable says "the match runs now", so wait, and wait longer
    # if the machine was too slow for the first attempt.
    for wait in (1.0, 3.0, 8.0):
        process = subprocess.Popen(
            [*CLI, "match", "anything", "--config", str(config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(wait)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
        if stderr.startswith('{"ok":false'):
            break
    assert process.returncode == 130, stderr
    assert stdout == ""
    assert time.monotonic() - started < 5
    assert json.loads(stderr) == {"ok": False, "error": expected("CG_MODEL_CANCELLED", "match")}


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


# --- argv fuzzing -------------------------------------------------------------------------------

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
