"""``capability-graph mcp-install`` / ``mcp-uninstall``: add this graph's MCP server to an MCP
client's configuration, or remove it.

The client's file is edited by :mod:`capability_graph._maintenance.mcp_install` (atomically,
never over a file that changed meanwhile), imported when the command runs; this module declares
the commands (from the client table, ``_maintenance.clients``) and prints the report.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Final, TextIO

from ..._core.schemas import FORMATS
from ..._maintenance.clients import CLIENTS, ENV_NAME
from .arguments import AddCommand, Declaration, add_flags
from .base import PROG, Usage, config_path, is_text, write_report

if TYPE_CHECKING:
    from ..._maintenance.report import Report


def add_commands(command: AddCommand) -> None:
    p = command(
        "mcp-install",
        "Add this graph's MCP server to an MCP client's configuration.",
        "mcp-install --client claude-desktop",
        "mcp-install --client vscode --config-path .vscode/mcp.json --dry-run",
    )
    p.add_argument(
        "--client",
        required=True,
        choices=sorted(CLIENTS),
        metavar="CLIENT",
        help="the MCP client, one of: %(choices)s; e.g. --client cursor",
    )
    p.add_argument(
        "--config-path",
        metavar="FILE",
        help="the client's configuration file; e.g. --config-path .cursor/mcp.json",
    )
    p.add_argument(
        "--name",
        default=PROG,
        type=_server_name,
        metavar="NAME",
        help=f"the server's name in the client (default: {PROG}); e.g. --name docs-graph",
    )
    _add_mcp_install_flags(p)
    add_flags(p, json_flag=True, dry_run_flag=True)
    p.set_defaults(run=run_mcp_client_command)

    p = command(
        "mcp-uninstall", "Remove this graph's MCP server from an MCP client's configuration."
    )
    _add_mcp_uninstall_arguments(p)
    add_flags(p, json_flag=True, dry_run_flag=True)
    p.set_defaults(run=run_mcp_client_command)


def run_mcp_client_command(
    args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO
) -> int:
    if args.command == "mcp-install" and not is_text(config_path(args)):
        raise Usage(
            "the configuration path is not UTF-8 text: it cannot be written into a "
            "client's configuration"
        )
    report = _mcp_client_command(args)
    return write_report(args.command, report, stdout, as_json=args.json)


def _server_name(text: str) -> str:
    if not text or len(text) > 64 or not set(text) <= _SERVER_NAME_CHARS:
        raise argparse.ArgumentTypeError("must be 1..64 letters A-Z or a-z, digits, _ or -")
    return text


_SERVER_NAME_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)


def _env_name(text: str) -> str:
    if not ENV_NAME.fullmatch(text):
        # The configuration's own format text (spec messages.md, EnvVarName): it quotes nothing,
        # so the scrub of caller text in usage errors leaves it whole.
        raise argparse.ArgumentTypeError(f"must be {FORMATS['EnvVarName']}")
    return text


def _add_mcp_install_flags(parser: Declaration) -> None:
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        type=_env_name,
        metavar="NAME",
        help="forward the environment variable NAME to the server, by reference in the "
        "client's own syntax (never its value); repeatable; e.g. --env OPENAI_API_KEY",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an older entry of this server (only one that runs capability-graph), "
        "keeping the previous file as FILE.bak; e.g. --force",
    )


def _add_mcp_uninstall_arguments(parser: Declaration) -> None:
    parser.add_argument(
        "--client",
        required=True,
        choices=sorted(CLIENTS),
        metavar="CLIENT",
        help=f"the MCP client: {', '.join(sorted(CLIENTS))}; e.g. --client cursor",
    )
    parser.add_argument(
        "--config-path",
        metavar="FILE",
        help="the client's configuration file (default: the client's documented location); "
        "e.g. --config-path .cursor/mcp.json",
    )
    parser.add_argument(
        "--name",
        default=PROG,
        type=_server_name,
        metavar="NAME",
        help=f"the server's name in the client (default: {PROG}); e.g. --name docs-graph",
    )


def _mcp_client_command(args: argparse.Namespace) -> Report:
    from ..._maintenance.mcp_install import install, uninstall
    from ..._maintenance.report import Report

    report = Report()
    if args.command == "mcp-uninstall":
        uninstall(
            report,
            args.client,
            client_config=args.config_path,
            name=args.name,
            dry_run=args.dry_run,
        )
    else:
        install(
            report,
            args.client,
            config=config_path(args),
            client_config=args.config_path,
            name=args.name,
            env=tuple(dict.fromkeys(args.env)),
            force=args.force,
            dry_run=args.dry_run,
        )
    return report
