#!/usr/bin/env python3
"""Fake implementations for the harness's teeth tests: the Python reference with ONE mutation.

    python fake_impl.py MUTATION driver          the reference driver, mutated
    python fake_impl.py MUTATION cli ARGS...     the reference CLI (and so its mcp command)

Mutations (each breaks one rule of the contract; the tests assert the exact failing cases):

cli-next-action        the CLI (not its mcp command) reports CG_CAPABILITY_NOT_FOUND with
                       nextAction "retry" instead of "refresh"
mcp-structured-content a failed MCP tools/call also carries structuredContent (the error object)
leak-raw-message       the executor projection keeps the raw executor message (every surface)
refusal-no-match       a CG_MODEL_REFUSED match is reported as status no_match (every surface)
crashing-driver        the driver process dies when asked to call read_document
bad-protocol-driver    the driver answers a call of list_capabilities with a message outside the
                       protocol
tool-extra-member      the Tool Adapter's envelope carries an extra member "debug"
sigint-not-cancelling  the CLI does not turn Ctrl-C during a match into a cancellation (the
                       interpreter's default: exit 130 with nothing on stderr)
init-overwrites        init replaces a differing configuration instead of reporting a conflict
silent-text-report     init prints nothing without --json (its report is only ever JSON)
stale-tool-definitions the Tool Adapter's definition of match_capabilities has another description
mcp-no-annotations     the MCP server lists its tools without their annotations
none                   no mutation at all (the reference through this launcher)
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[4]
DRIVER = REPO / "conformance" / "implementations" / "python_reference_driver.py"


def _mutate(mutation: str, role: str, argv: list[str]) -> None:
    if mutation == "cli-next-action" and role == "cli" and argv[:1] != ["mcp"]:
        from capability_graph.cli import graph

        original = graph.write_error

        def write_error(stderr: Any, error: Any) -> None:
            if error.code.value == "CG_CAPABILITY_NOT_FOUND":
                envelope = {"ok": False, "error": {**error.to_json(), "nextAction": "retry"}}
                stderr.write(json.dumps(envelope, separators=(",", ":")) + "\n")
                return
            original(stderr, error)

        graph.write_error = write_error
    elif mutation == "sigint-not-cancelling" and role == "cli":
        from capability_graph.cli import graph

        graph._sigint_cancels = lambda token: contextlib.nullcontext()
    elif mutation == "init-overwrites" and role == "cli":
        from capability_graph.cli import init

        original_init = init._init

        def overwriting_init(directory: str | None, config: str | None, *, dry_run: bool) -> Any:
            if not dry_run:
                folder = Path(directory or ".")
                target = Path(config) if config else folder / "capability-graph.json"
                target.unlink(missing_ok=True)
            return original_init(directory, config, dry_run=dry_run)

        init._init = overwriting_init
    elif mutation == "silent-text-report" and role == "cli":
        import io

        from capability_graph.cli import init

        report_of = init.write_report

        def silent(command: str, report: Any, stdout: Any, *, as_json: bool) -> int:
            status: int = report_of(
                command, report, stdout if as_json else io.StringIO(), as_json=as_json
            )
            return status

        init.write_report = silent
    elif mutation == "stale-tool-definitions":
        from capability_graph._surfaces import tools as _tools

        definitions = _tools.tool_definitions

        def stale() -> list[dict[str, Any]]:
            tools: list[dict[str, Any]] = definitions()
            for tool in tools:
                if tool["name"] == "match_capabilities":
                    tool["description"] = "Match capabilities."
            return tools

        _tools.tool_definitions = stale
    elif mutation == "mcp-no-annotations":
        from capability_graph._surfaces import mcp as _mcp

        listed = _mcp.tool_definitions

        def without_annotations() -> list[dict[str, Any]]:
            return [{k: v for k, v in t.items() if k != "annotations"} for t in listed()]

        _mcp.tool_definitions = without_annotations
    elif mutation == "mcp-structured-content":
        from mcp import types

        from capability_graph import _json, _mcp

        def failure(error: Any) -> Any:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=_json.dumps(error.to_json()))],
                structured_content=error.to_json(),
                is_error=True,
            )

        _mcp.failure = failure
    elif mutation == "leak-raw-message":
        from capability_graph import GraphError, _match

        project = _match.project_executor_failure

        def leaky(exc: BaseException) -> GraphError:
            safe = project(exc)
            raw = " ".join(str(exc).split())[:300] or safe.message
            return GraphError(safe.code, safe.phase, raw, safe.next_action)

        _match.project_executor_failure = leaky
    elif mutation == "refusal-no-match":
        from capability_graph import GraphError
        from capability_graph._core.operations import HANDLERS, TOOL_OF_METHOD

        tool = TOOL_OF_METHOD["match"]
        original_match = HANDLERS[tool]

        async def match(context: Any, request: Any) -> dict[str, Any]:
            try:
                return await original_match(context, request)
            except GraphError as error:
                if error.code.value != "CG_MODEL_REFUSED":
                    raise
                return {
                    "status": "no_match",
                    "revision": context.snapshot.revision,
                    "executor": context.executor_name,
                    "candidates": [],
                }

        HANDLERS[tool] = match  # call() dispatches through the handler table


def _load_driver() -> Any:
    spec = importlib.util.spec_from_file_location("python_reference_driver", DRIVER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    mutation, role, *argv = sys.argv[1:]
    _mutate(mutation, role, argv)
    if role == "driver":
        driver = _load_driver()
        if mutation in ("crashing-driver", "bad-protocol-driver", "tool-extra-member"):
            run = driver.Driver.run

            async def mutated(self: Any, surface: str, step: dict[str, Any]) -> dict[str, Any]:
                if mutation == "crashing-driver" and step.get("tool") == "read_document":
                    os._exit(3)
                if mutation == "bad-protocol-driver" and step.get("tool") == "list_capabilities":
                    return {"outcome": "maybe"}
                result: dict[str, Any] = await run(self, surface, step)
                value = result.get("value")
                if (
                    mutation == "tool-extra-member"
                    and surface == "tool"
                    and isinstance(value, dict)
                ):
                    result = {**result, "value": {**value, "debug": True}}
                return result

            driver.Driver.run = mutated
        driver.main()
        return
    from capability_graph.cli import main as cli_main

    sys.argv = ["capability-graph", *argv]
    cli_main()


if __name__ == "__main__":
    main()
