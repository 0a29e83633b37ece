"""The parser of the whole command line, assembled from the command families in the order
``--help`` lists them: the graph commands and ``call``, ``mcp``, ``doctor``, ``init``,
``mcp-install``/``mcp-uninstall``, ``explain``.

Each command's sub-parser carries, as its default ``run``, what the command does.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from . import doctor, explain, graph, init, mcp, mcp_install
from .arguments import Parser
from .base import CONFIG_ENV, DEFAULT_CONFIG, PROG


def build_parser(out: TextIO, err: TextIO) -> Parser:
    streams: dict[str, Any] = {"out": out, "err": err}
    common = Parser(add_help=False, **streams)
    common.add_argument(
        "--config",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help=f"the host configuration (default: ${CONFIG_ENV}, else ./{DEFAULT_CONFIG}); "
        "e.g. --config graph/capability-graph.json",
    )
    parser = Parser(
        prog=PROG,
        description="Discover provider capabilities: query a capability graph, serve it over "
        "MCP, and maintain its configuration.",
        epilog=_examples(
            "init",
            "doctor",
            'match "validate a request body" --limit 3',
            "explain CG_CONFIG_INVALID",
        )
        + f"\nRun '{PROG} COMMAND --help' for a command's options and examples.",
        parents=[common],
        **streams,
    )
    parser.add_argument(
        "--version", action=_VersionAction, nargs=0, help="print the version and exit"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help_text: str, *examples: str) -> Parser:
        sub: Parser = commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=_examples(*examples),
            parents=[common],
            **streams,
        )
        parser.commands[name] = sub
        return sub

    graph.add_commands(command)
    mcp.add_command(command)
    doctor.add_command(command)
    init.add_command(command)
    mcp_install.add_commands(command)
    explain.add_command(command)
    for declared in (common, parser, *parser.commands.values()):
        declared.declaring = False  # from now on a formatter formats text: it asks the width
    return parser


def _examples(*examples: str) -> str:
    return "examples:\n" + "\n".join(
        f"  {example}" if example.startswith(("echo ", PROG)) else f"  {PROG} {example}"
        for example in examples
    )


class _VersionAction(argparse.Action):
    """``--version``, reading the installed version only when asked (it costs an import)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        parser._print_message(f"{PROG} {_version()}\n", sys.stdout)
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PROG)
    except PackageNotFoundError:  # pragma: no cover -- running from a source tree
        return "0"
