"""The graph commands and ``call`` (``capability_graph.cli.graph`` and the requests it builds):
each command is its exact tool request, its result on stdout, its error as the one envelope line."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph
from capability_graph._core.json import dump_bytes
from capability_graph._surfaces.cli.parser import build_parser
from capability_graph_testing.common import expected
from capability_graph_testing.surfaces import (
    CLI,
    DOCUMENT_TEXT,
    assert_cli_error,
    cli,
    cli_error,
    cli_process,
    env_without_config,
    graph_call,
    scripted,
    sleeping,
    usage_error,
    write_graph,
)

TOOLS = "describe_graph, list_capabilities, resolve_capabilities, match_capabilities, read_document"


SECRET = "sk-SECRET-4f1c"


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
    assert_cli_error(
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

    from capability_graph import GraphError
    from capability_graph._surfaces.cli.requests import REQUESTS

    args = build_parser(io.StringIO(), io.StringIO()).parse_args(argv)
    tool, arguments = REQUESTS[args.command](args)
    with BlockingCapabilityGraph.open(config) as graph, pytest.raises(GraphError) as excinfo:
        graph.call(tool, arguments)
    error: dict[str, str] = excinfo.value.to_json()
    return error


def test_call_arguments_file_reads_the_request_from_a_file(config: Path, tmp_path: Path) -> None:
    arguments = tmp_path / "arguments.json"
    arguments.write_text('{"ids": ["acme::a"]}', encoding="utf-8")
    run = cli(
        "--config", str(config), "call", "resolve_capabilities", "--arguments-file", str(arguments)
    )
    assert run.json() == graph_call(config, "resolve_capabilities", {"ids": ["acme::a"]})


def test_an_arguments_file_beginning_with_a_byte_order_mark_is_a_usage_error(
    config: Path, tmp_path: Path
) -> None:
    # CG-CLI-8: a byte order mark is not JSON, in a file as in every request text (CG-CONV-7).
    arguments = tmp_path / "arguments.json"
    arguments.write_text('\ufeff{"ids": ["acme::a"]}', encoding="utf-8")
    run = cli(
        "--config", str(config), "call", "resolve_capabilities", "--arguments-file", str(arguments)
    )
    assert (run.status, run.stdout) == (2, "")
    assert "a byte order mark is not JSON" in run.stderr


def test_inline_arguments_beginning_with_a_byte_order_mark_are_a_usage_error(
    config: Path,
) -> None:
    run = cli("--config", str(config), "call", "describe_graph", "--arguments", "\ufeff{}")
    assert (run.status, run.stdout) == (2, "")
    assert "a byte order mark is not JSON" in run.stderr


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
    assert_cli_error(run, "CG_MODEL_REFUSED", "match")
    assert "SECRET" not in run.stderr
    config = write_graph(tmp_path / "c")
    assert_cli_error(cli("match", "x", "--config", str(config)), "CG_MODEL_NOT_CONFIGURED", "match")
    config = write_graph(tmp_path / "d", model=sleeping(5000))
    assert_cli_error(
        cli("match", "x", "--timeout-ms", "20", "--config", str(config)),
        "CG_MODEL_TIMEOUT",
        "match",
    )


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


def test_call_help_lists_the_tools() -> None:
    run = cli("call", "--help")
    assert f"one of: {TOOLS}" in " ".join(run.stdout.split())


def test_a_context_key_given_twice_is_not_repeated_in_the_message() -> None:
    done = cli_process(
        "match", "x", "--context", f"{SECRET}=1", "--context", f"{SECRET}=2", timeout=60
    )
    assert done.returncode == 2
    assert SECRET not in done.stderr
    assert done.stderr.endswith(
        "\ncapability-graph match: error: argument --context: a KEY is given twice\n"
    )


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
            "/ nesting deeper than 32",  # at /a/a/...: cut before the caller's key
        ),
    ],
    ids=["nested", "match", "document", "unknown tool", "long integer", "deep"],
)
def test_request_text_without_one_meaning_is_input_invalid_in_the_tools_phase(
    config: Path, tool: str, text: str, phase: str, message: str, tmp_path: Path
) -> None:
    inline = cli("call", tool, "--arguments", text, "--config", str(config))
    assert cli_error(inline) == expected("CG_INPUT_INVALID", phase, message)
    path = tmp_path / "request.json"
    path.write_text(text, encoding="utf-8")
    from_file = cli("call", tool, "--arguments-file", str(path), "--config", str(config))
    assert cli_error(from_file) == expected("CG_INPUT_INVALID", phase, message)


def test_duplicate_names_in_a_context_value_are_input_invalid(config: Path) -> None:
    run = cli("match", "x", "--context", 'k:={"a": 1, "a": 2}', "--config", str(config))
    assert cli_error(run) == expected(
        "CG_INPUT_INVALID", "match", "/context an object has a duplicate key"
    )


def test_a_text_that_is_not_json_stays_a_usage_error(config: Path) -> None:
    run = cli(
        "call", "describe_graph", "--arguments", '[{"a": 1, "a": 2}, ', "--config", str(config)
    )
    usage_error(run, "call", "argument --arguments: not valid JSON")


@pytest.mark.parametrize("text", ['{"limit": NaN}', '{"limit": Infinity}', '{"limit": -Infinity}'])
def test_nan_and_infinity_in_a_request_text_are_not_json(config: Path, text: str) -> None:
    # CG-CONV-16: not RFC 8259 JSON, so a usage error, never CG_INPUT_INVALID.
    run = cli("call", "list_capabilities", "--arguments", text, "--config", str(config))
    usage_error(run, "call", "argument --arguments: not valid JSON")


def test_nan_in_a_context_value_is_not_json(config: Path) -> None:
    run = cli("match", "x", "--context", "a:=NaN", "--config", str(config))
    usage_error(run, "match", "argument --context: the value after := must be JSON")


@pytest.mark.parametrize("depth", [33, 1000, 100_000])
def test_a_too_deep_inline_text_wins_over_an_unreadable_configuration_at_any_depth(
    tmp_path: Path, depth: int
) -> None:
    # CG-CONV-15, CG-CLI-8: judged when parsed, before the graph opens; never a runtime limit.
    text = '{"tags": ' + "[" * depth + "]" * depth + "}"
    run = cli("call", "no_such_tool", "--arguments", text, "--config", str(tmp_path / "none"))
    assert cli_error(run) == expected(
        "CG_INPUT_INVALID", "query", "/tags" + "/0" * 32 + " nesting deeper than 32"
    )


@pytest.mark.parametrize("depth", [33, 1000, 100_000])
def test_a_deep_text_whose_brackets_do_not_close_is_a_usage_error_at_any_depth(
    tmp_path: Path, depth: int
) -> None:
    text = '{"tags": ' + "[" * depth + "]" * (depth - 1) + "}"
    run = cli("call", "no_such_tool", "--arguments", text, "--config", str(tmp_path / "none"))
    usage_error(run, "call", "argument --arguments: not valid JSON")


def test_the_result_line_is_the_compact_serialization(config: Path) -> None:
    # CG-CLI-14: byte for byte what every implementation writes (no whitespace, UTF-8).
    done = subprocess.run(
        [*CLI, "describe", "--config", str(config)], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0
    assert done.stdout == dump_bytes(json.loads(done.stdout)) + b"\n"


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
    assert cli_error(run) == expected("CG_DOCUMENT_NOT_FOUND", "document")
