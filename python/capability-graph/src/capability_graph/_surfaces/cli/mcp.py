"""``capability-graph mcp``: serve the graph over MCP on this process's stdin and stdout.

Hosts that ``mcp-install`` configured run it as ``python -m capability_graph.cli mcp --config
FILE``. The graph opens first: a configuration error is an error envelope on stderr (exit 1)
without paying for the MCP SDK import (most of a second), and the server starts only on a
graph that opened.
"""

from __future__ import annotations

import argparse
import gc
import sys
from typing import TextIO

from ..._core.errors import GraphError
from ..._generated.taxonomy import ErrorCode, Phase
from .arguments import AddCommand
from .base import EXIT_FAILED, EXIT_OK, StreamUnusable, config_path, write_error


def add_command(command: AddCommand) -> None:
    p = command("mcp", "Serve the graph over MCP on stdin/stdout.", "mcp --config graph.json")
    p.set_defaults(run=run_mcp)


def run_mcp(args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO) -> int:
    return _mcp_command(config_path(args), stderr)


def _mcp_command(config: str, stderr: TextIO) -> int:
    async def serve() -> int:
        from ..._core.graph import CapabilityGraph

        if sys.stdout is None:
            raise StreamUnusable("the mcp command needs standard output (it is closed)")

        graph = await CapabilityGraph.open(config)
        try:
            if sys.stdin is None:
                # A stdin closed when the command started reads as empty input: the client's
                # orderly end of the session, before it began (CG-CLI-7).
                return EXIT_OK
            try:
                from .. import mcp as _mcp
            except ImportError:
                write_error(
                    stderr,
                    GraphError(
                        ErrorCode.CG_CONFIG_INVALID,
                        Phase.CONFIG,
                        "The mcp command needs the optional mcp package: "
                        "pip install 'capability-graph[mcp]'",
                    ),
                )
                return EXIT_FAILED
            # The graph's objects are out of the collector's passes while it is open (see
            # _core/collector.py); the SDK's, imported since, leave them too.
            gc.freeze()
            await _mcp.serve_stdio(graph)
        finally:
            await graph.close()
        return EXIT_OK

    import asyncio  # when the command runs: the other commands never start the event loop

    try:
        return asyncio.run(serve())
    except GraphError as error:
        write_error(stderr, error)
        return EXIT_FAILED
    except BaseExceptionGroup as group:
        # The SDK's stdio tasks fail together when the client stops reading our stdout.
        _, others = group.split(BrokenPipeError)
        if others is not None:
            raise
        raise StreamUnusable("the MCP client stopped reading", quiet=True) from None
