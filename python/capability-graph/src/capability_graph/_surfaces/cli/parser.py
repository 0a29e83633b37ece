"""The parser of the whole command line, assembled from the command families in the order
``--help`` lists them: the graph commands and ``call``, ``mcp``, ``doctor``, ``init``,
``mcp-install``/``mcp-uninstall``, ``explain``.

Each command's sub-parser carries, as its default ``run``, what the command does. The commands
are declared here and listed by ``--help``; a command's sub-parser is made when the command line
needs it (``arguments.Commands``): a command line runs one command.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from . import doctor, explain, graph, init, mcp, mcp_install
from .arguments import Commands, Declaration, Parser
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
    declared: dict[str, Declaration] = {}
    texts: dict[str, tuple[str, str]] = {}  # a command's description and epilog

    def command(name: str, help_text: str, *examples: str) -> Declaration:
        # The command's line in --help now (what add_parser adds for its help=); its sub-parser
        # when the command line needs it (Commands): a command line runs one command.
        commands._choices_actions.append(commands._ChoicesPseudoAction(name, (), help_text))
        texts[name] = (help_text, _examples(*examples))
        declared[name] = Declaration()
        return declared[name]

    def sub_parser(name: str) -> Parser:
        description, epilog = texts[name]
        sub: Parser = commands.add_parser(
            name, description=description, epilog=epilog, parents=[common], **streams
        )
        return sub

    graph.add_commands(command)
    mcp.add_command(command)
    doctor.add_command(command)
    init.add_command(command)
    mcp_install.add_commands(command)
    explain.add_command(command)
    parser.commands = Commands(declared, sub_parser)
    for made in (common, parser):
        made.declaring = False  # from now on a formatter formats text: it asks the width
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
