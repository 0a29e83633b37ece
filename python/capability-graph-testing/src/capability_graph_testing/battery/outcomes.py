"""Outcome checks the fuzz tests and the stress runs share.

``open`` either rejects a configuration with a config- or load-phase error or serves every tool
with a valid result or a defined error; a CLI run exits 0, 1/130 (an error envelope or a failed
doctor report) or 2 (usage), never 70 and never with a traceback.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

from capability_graph import CapabilityGraph, GraphError
from capability_graph_testing.battery.checks import check_cli_failure, check_error, check_result
from capability_graph_testing.battery.graph import VALID_REQUESTS
from capability_graph_testing.battery.hostile import SECRET
from capability_graph_testing.battery.registry import TOOL_PHASES, TOOLS
from capability_graph_testing.battery.values import json_safe
from capability_graph_testing.common import schema_validator

OPEN_CODES = {
    "CG_CONFIG_INVALID",
    "CG_DEFINITION_INVALID",
    "CG_RELATION_INVALID",
    "CG_RELATION_CYCLE",
    "CG_CATALOG_TOO_LARGE",
}


def open_outcome(config: Any) -> dict[str, Any] | None:
    """The error object ``open`` rejected ``config`` with; or None, once every tool has answered
    a plain request with a valid result or a defined error."""

    async def main() -> dict[str, Any] | None:
        try:
            graph = await CapabilityGraph.open(config)
        except GraphError as error:
            return error.to_json()
        try:
            for tool in TOOLS:
                try:
                    result = await graph.call(tool, OPENED_REQUESTS[tool])
                except GraphError as error:
                    check_error(error.to_json(), phase=TOOL_PHASES[tool])
                else:
                    check_result(tool, result)
        finally:
            await graph.close()
        return None

    return asyncio.run(main())


OPENED_REQUESTS: dict[str, Any] = {
    **VALID_REQUESTS,
    "match_capabilities": {"request": "validate", "timeoutMs": 2000},
}


def check_open_error(error: dict[str, Any] | None) -> None:
    if error is None:
        return
    check_error(error)
    assert error["code"] in OPEN_CODES, error
    assert error["phase"] in ("config", "load"), error


def with_base(config: Any, base: Path) -> Any:
    """Relative paths of a mapping resolve against the working directory: write it as a file
    next to the providers instead, when it is JSON at all."""
    if not json_safe(config):
        return config
    path = base / "fuzzed-config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    from capability_graph.cli import run

    out, err = io.StringIO(), io.StringIO()
    status = run(argv, io.StringIO(), out, err)
    return status, out.getvalue(), err.getvalue()


def _identify(result: dict[str, Any]) -> str | None:
    if "candidates" in result:
        return "match_capabilities"
    if "capabilities" in result and "edges" in result:
        return "resolve_capabilities"
    if "items" in result:
        return "list_capabilities"
    if "budgets" in result:
        return "describe_graph"
    if "sha256" in result:
        return "read_document"
    return None


def check_cli_run(argv: list[str], status: int, stdout: str, stderr: str) -> None:
    """Exit 0 (a result, a report, help or an explanation), 1/130 (an error envelope, or a
    failed doctor report), 2 (usage on stderr); never 70, never a traceback."""
    assert "Traceback" not in stdout + stderr, (argv, stderr[-500:])
    assert status in (0, 1, 2, 130), (argv, status, stderr[-500:])
    if status == 2:
        assert stdout == "", (argv, stdout)
        assert "usage:" in stderr, (argv, stderr)
        assert SECRET not in stderr, (argv, stderr)  # a usage message never repeats argv
        return
    if status == 0:
        if stdout.startswith("{") and stdout.count("\n") == 1:
            value = json.loads(stdout)
            tool = _identify(value)
            if tool is not None:
                check_result(tool, value)
            elif "checks" in value:
                schema_validator("maintenance-report.schema.json").validate(value)
        return
    if stdout:  # a doctor report that failed
        assert "doctor" in argv, (argv, stdout)
        return
    check_cli_failure(status, stdout, stderr)
