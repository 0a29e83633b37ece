"""The ``capability-graph`` command line (CG-CLI-1 .. CG-CLI-6, CG-MAINT-1 .. CG-MAINT-8).

Graph commands (a thin projection of :meth:`CapabilityGraph.call`; the parser and the request of
describe, list, resolve, match and read are built from the generated operation table, whose
source is ``spec/capability-graph/operations.json``)::

    capability-graph describe
    capability-graph list [--provider P]... [--tag T]... [--limit N] [--cursor C]
    capability-graph resolve ID... [--relations KIND,KIND] [--depth N]
    capability-graph match TEXT [--context KEY=TEXT | KEY:=JSON]... [--provider P]...
                               [--limit N] [--timeout-ms N]
    capability-graph read CAPABILITY_ID DOCUMENT_ID [--raw]
    capability-graph call TOOL [--arguments JSON | --arguments-file FILE]
    capability-graph mcp

Success: the result JSON on stdout (one line), exit 0. Failure: nothing on stdout, one line
``{"ok":false,"error":{...}}`` on stderr, exit 1 (130 when Ctrl-C cancelled a match, which then
fails with ``CG_MODEL_CANCELLED``). Usage errors: usage text on stderr, exit 2. The core
validates every request; the CLI only turns argv into the tool request. ``--context KEY=TEXT``
gives a string value; ``KEY:=JSON`` gives a typed one (``--context retries:=3``,
``--context beta:=true``). A JSON text given to the CLI (``--arguments``, ``--arguments-file``,
``KEY:=JSON``) with a duplicate member name is ``CG_INPUT_INVALID``. ``read --raw`` prints the
document's text only.

Maintenance commands report ``{"status", "checks", "warnings"}`` (``--json``: that JSON on
stdout; otherwise text) and exit 0 (ok, planned), 1 (failed), 3 (conflict)::

    capability-graph doctor
    capability-graph init [DIR] [--config FILE] [--dry-run]
    capability-graph mcp-install --client CLIENT [--config-path FILE] [--name NAME]
                                 [--env NAME]... [--force] [--dry-run]
    capability-graph mcp-uninstall --client CLIENT [--config-path FILE] [--name NAME] [--dry-run]
    capability-graph explain [CODE]

The configuration is ``--config FILE``, else ``$CAPABILITY_GRAPH_CONFIG``, else
``./capability-graph.json``. A configuration that cannot be read at all is an error envelope
(exit 1) for every command that needs it, ``doctor`` included (which also prints its report,
naming the cause, on stdout). The CLI never prints a traceback:
a defect is reported as one fixed line and exit status 70. A standard stream the command needs
that is closed or fails (stdout closed, full, or its reader gone; stdin closed for
``--arguments-file -`` or ``mcp``) is exit status 74, with one line on stderr (none when the
reader of stdout went away). A usage message never repeats what the caller typed: it names
arguments by their option or role, and suggests only names of the CLI's own commands, options,
tools and error codes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn, TextIO, cast

from ._errors import GraphError
from ._files import Clobbered, create_new
from ._generated.operations import OPERATION_TABLE, CliArgument, Operation
from ._generated.taxonomy import ErrorCode, Phase
from ._json import MalformedJson, NotPureJson, dumps, parse_request_text
from ._mcp_install import CLIENTS as _CLIENTS
from ._mcp_install import ENV_NAME as _ENV_NAME
from ._operations import OPERATIONS, TOOL_OF_METHOD, invalid_arguments_text, oversized_request
from ._report import Report
from ._schemas import FORMATS

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = ["main", "run"]

PROG: Final = "capability-graph"
DEFAULT_CONFIG: Final = "capability-graph.json"
CONFIG_ENV: Final = "CAPABILITY_GRAPH_CONFIG"

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_CONFLICT: Final = 3
EXIT_INTERNAL: Final = 70  # EX_SOFTWARE: a defect, never a contract outcome
EXIT_IO: Final = 74  # EX_IOERR: a standard stream the command needs is closed or failed
EXIT_INTERRUPTED: Final = 130

_INTERNAL_ERROR: Final = f"{PROG}: internal error (a defect of {PROG}; please report it)\n"


# --- argument parsing ---------------------------------------------------------------------------


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Usage(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _StreamUnusable(Exception):
    """A standard stream the command needs is closed or failed (exit 74).

    ``reason`` is printed on stderr, unless ``quiet`` (the reader of stdout went away on purpose,
    as ``| head`` does).
    """

    def __init__(self, reason: str, *, quiet: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.quiet = quiet


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that writes to the given streams, never exits the process, and never
    repeats a value the caller typed in a usage message (it may be a key or a secret)."""

    def __init__(self, *args: Any, out: TextIO, err: TextIO, **kwargs: Any) -> None:
        self.out = out
        self.err = err
        self.commands: dict[str, _Parser] = {}
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if message:
            (self.out if file is None or file is sys.stdout else self.err).write(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self.err.write(message)
        raise _Exit(status)

    def error(self, message: str) -> NoReturn:
        """argparse's own messages quote what the caller typed: keep only our own names."""
        self.fail(_QUOTED.sub(self._quoted_name_or_placeholder, message))

    def fail(self, message: str) -> NoReturn:
        """A usage error with a message of ours (it names no caller value)."""
        self.print_usage(self.err)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def _quoted_name_or_placeholder(self, quoted: re.Match[str]) -> str:
        text = quoted.group(0)
        return text if text[1:-1] in self._own_names() else "(value not shown)"

    def _own_names(self) -> set[str]:
        names = {self.prog, PROG}
        for parser in (self, *self.commands.values()):
            for action in parser._actions:
                names.update(action.option_strings)
                names.update(str(choice) for choice in action.choices or ())
                if isinstance(action.metavar, str):
                    names.add(action.metavar)
        return names

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is not None and value not in action.choices:
            names = [str(choice) for choice in action.choices]
            what = "command" if isinstance(action, argparse._SubParsersAction) else "choice"
            raise argparse.ArgumentError(
                action,
                f"unknown {what}{_did_you_mean(value, names)}; the choices are " + ", ".join(names),
            )

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            # Reported by the command's parser (its usage), naming no unrecognized value.
            parser = self.commands.get(getattr(parsed, "command", None) or "", self)
            options = [o for a in parser._actions for o in a.option_strings]
            hint = next(
                (
                    suggestion
                    for extra in extras
                    if extra.startswith("--")
                    and (suggestion := _did_you_mean(extra.partition("=")[0], options))
                ),
                "",
            )
            parser.fail(f"{_count(len(extras), 'unrecognized argument')}{hint}")
        return parsed


#: A quoted value in an argparse message (``'text'`` or ``"text"``, as ``repr`` writes them).
_QUOTED: Final = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def _did_you_mean(value: str, names: Sequence[str]) -> str:
    """`` (did you mean NAME?)`` for the closest of our own ``names``, or ``""``.

    Only a name of ours is printed, never ``value`` (the caller's text).
    """
    import difflib

    folded = {name.casefold(): name for name in names}
    close = difflib.get_close_matches(str(value).casefold(), list(folded), n=1, cutoff=0.6)
    return f" (did you mean {folded[close[0]]}?)" if close else ""


def _count(number: int, singular: str, plural: str | None = None) -> str:
    """``1 source``, ``2 sources``: a number and its noun, in the right number."""
    return f"{number} {singular if number == 1 else plural or singular + 's'}"


def _non_negative_int(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError("must be an integer") from None


def _server_name(text: str) -> str:
    if not text or len(text) > 64 or not set(text) <= _SERVER_NAME_CHARS:
        raise argparse.ArgumentTypeError("must be 1..64 letters A-Z or a-z, digits, _ or -")
    return text


@dataclass(frozen=True)
class _JsonText:
    """The JSON text of a ``--context KEY:=JSON`` value, parsed into the request later (by the
    core, which judges what it means)."""

    text: str


def _context_item(text: str) -> tuple[str, str | _JsonText]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError("expected KEY=TEXT or KEY:=JSON")
    if key.endswith(":"):
        try:
            parse_request_text(value)
        except MalformedJson:
            raise argparse.ArgumentTypeError("the value after := must be JSON") from None
        except NotPureJson:
            pass  # valid JSON without one meaning: the core's CG_INPUT_INVALID, in the request
        return key[:-1], _JsonText(value)
    return key, value


def _build_parser(out: TextIO, err: TextIO) -> _Parser:
    streams: dict[str, Any] = {"out": out, "err": err}
    common = _Parser(add_help=False, **streams)
    common.add_argument(
        "--config",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help=f"the host configuration (default: ${CONFIG_ENV}, else ./{DEFAULT_CONFIG}); "
        "e.g. --config graph/capability-graph.json",
    )
    parser = _Parser(
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

    def command(name: str, help_text: str, *examples: str) -> _Parser:
        sub: _Parser = commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=_examples(*examples),
            parents=[common],
            **streams,
        )
        parser.commands[name] = sub
        return sub

    # The graph commands, from the generated operation table (``spec/``: operations.json).
    for operation in OPERATION_TABLE:
        p = command(operation.cli.command, operation.cli.help, *operation.cli.examples)
        for argument in operation.cli.arguments:
            _add_table_argument(p, argument)
        if operation.sdk_method == "read_document":
            _add_raw_flag(p)

    tools = ", ".join(OPERATIONS)
    p = command(
        "call",
        "Call a tool with its exact JSON request (for scripts).",
        "call describe_graph",
        """call resolve_capabilities --arguments '{"ids": ["acme::route.validation"]}'""",
        "call match_capabilities --arguments-file request.json",
        "echo '{\"limit\": 5}' | capability-graph call list_capabilities --arguments-file -",
    )
    p.add_argument(
        "tool", metavar="TOOL", help=f"the tool to call, one of: {tools}; e.g. describe_graph"
    )
    given = p.add_mutually_exclusive_group()
    given.add_argument(
        "--arguments",
        metavar="JSON",
        help="""the tool's request as JSON (default: {}); e.g. --arguments '{"limit": 5}'""",
    )
    given.add_argument(
        "--arguments-file",
        metavar="FILE",
        help="read the request from a regular FILE, or - for stdin; "
        "e.g. --arguments-file request.json",
    )

    command("mcp", "Serve the graph over MCP on stdin/stdout.", "mcp --config graph.json")

    p = command(
        "doctor",
        "Check the configuration, sources, relations, documents, executor.",
        "doctor",
        "doctor --config graph.json --json",
    )
    _add_flags(p, json_flag=True, dry_run_flag=False)

    p = command(
        "init",
        "Scaffold a configuration, an example provider and a document.",
        "init",
        "init my-graph --dry-run",
        "init --config my.json",
    )
    p.add_argument(
        "directory",
        nargs="?",
        metavar="DIR",
        help="where to write the provider and its document (default: the configuration's "
        "folder, else the working directory); e.g. my-graph",
    )
    _add_flags(p, json_flag=True, dry_run_flag=True)

    p = command(
        "mcp-install",
        "Add this graph's MCP server to an MCP client's configuration.",
        "mcp-install --client claude-desktop",
        "mcp-install --client vscode --config-path .vscode/mcp.json --dry-run",
    )
    p.add_argument(
        "--client",
        required=True,
        choices=sorted(_CLIENTS),
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
    _add_flags(p, json_flag=True, dry_run_flag=True)

    p = command(
        "mcp-uninstall", "Remove this graph's MCP server from an MCP client's configuration."
    )
    _add_mcp_uninstall_arguments(p)
    _add_flags(p, json_flag=True, dry_run_flag=True)

    p = command(
        "explain",
        "Explain an error code (all codes without CODE).",
        "explain",
        "explain cg_config_invalid --json",
    )
    p.add_argument(
        "code", nargs="?", metavar="CODE", help="an error code, any case; e.g. CG_INPUT_INVALID"
    )
    _add_flags(p, json_flag=True, dry_run_flag=False)
    return parser


def _add_table_argument(parser: argparse.ArgumentParser, argument: CliArgument) -> None:
    """One argument of a graph command as the operation table declares it; its value lands in
    the parsed arguments under :func:`_dest` (or the positional's name)."""
    options: dict[str, Any] = {"metavar": argument.metavar, "help": argument.help}
    if argument.type == "integer":
        options["type"] = _non_negative_int
    elif argument.type == "context-fact":
        options["type"] = _context_item
    if argument.positional is not None:
        if argument.repeatable:
            options["nargs"] = "+"
        parser.add_argument(argument.positional, **options)
    else:
        assert argument.flag is not None
        if argument.repeatable:
            options["action"] = "append"
        parser.add_argument(argument.flag, dest=_dest(argument), **options)


def _dest(argument: CliArgument) -> str:
    return argument.positional or "member_" + argument.member.replace("/", "_")


def _add_raw_flag(parser: argparse.ArgumentParser) -> None:
    """``read --raw``: an output option of the CLI, not a member of the request."""
    parser.add_argument(
        "--raw",
        action="store_true",
        help="print the document's text only, not the result JSON; e.g. --raw > guide.md",
    )


def _examples(*examples: str) -> str:
    return "examples:\n" + "\n".join(
        f"  {example}" if example.startswith(("echo ", PROG)) else f"  {PROG} {example}"
        for example in examples
    )


def _add_flags(parser: argparse.ArgumentParser, *, json_flag: bool, dry_run_flag: bool) -> None:
    if json_flag:
        parser.add_argument(
            "--json", action="store_true", help="print the report as JSON; e.g. --json | jq"
        )
    if dry_run_flag:
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="report what would be written; write nothing; e.g. --dry-run --json",
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


# --- the entry points ---------------------------------------------------------------------------


def run(argv: Sequence[str], stdout: TextIO, stderr: TextIO) -> int:
    """Run the CLI with ``argv`` (without the program name); return the exit status."""
    try:
        return _run(list(argv), stdout, stderr)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except _StreamUnusable as unusable:
        if not unusable.quiet:
            stderr.write(f"{PROG}: error: {unusable.reason}\n")
        return EXIT_IO
    except BrokenPipeError:
        raise
    except Exception:  # noqa: BLE001 -- the top-level guard: never a traceback, never its text
        stderr.write(_INTERNAL_ERROR)
        return EXIT_INTERNAL


def main() -> NoReturn:
    """The console script: run with ``sys.argv`` and exit with its status."""
    _occupy_closed_descriptors()
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(OSError, ValueError):
                reconfigure(encoding="utf-8", errors="backslashreplace")
    stdout = _Output(sys.stdout)
    stderr = _Diagnostics(sys.stderr)
    try:
        status = run(sys.argv[1:], cast(TextIO, stdout), cast(TextIO, stderr))
        stdout.flush()
    except _StreamUnusable as unusable:
        if not unusable.quiet:
            stderr.write(f"{PROG}: error: {unusable.reason}\n")
        status = EXIT_IO
    except KeyboardInterrupt:
        status = EXIT_INTERRUPTED
    # What could not be written is dropped: the interpreter's last flush must not fail again.
    for failed, descriptor in ((stdout.failed, 1), (stderr.failed, 2)):
        if failed:
            _point_at_devnull(descriptor)
    sys.exit(status)


def _occupy_closed_descriptors() -> None:
    """Put the null device on standard descriptors the process started without.

    Otherwise the next file opened (a configuration, a document) would get descriptor 0, 1 or 2,
    and a child process or a stray write could use it as a standard stream. ``sys.stdin`` and
    ``sys.stdout`` stay ``None``: the commands still see those streams as closed.
    """
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            _point_at_devnull(descriptor)


def _point_at_devnull(descriptor: int) -> None:
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_RDWR)
        if devnull != descriptor:
            os.dup2(devnull, descriptor)
            os.close(devnull)
        os.set_inheritable(descriptor, True)


class _Output:
    """The process's stdout for :func:`run`: a write that cannot happen (the stream is closed,
    the device is full, the reader went away) is :class:`_StreamUnusable`, exit 74."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self.failed = False

    def write(self, text: str) -> int:
        self._guarded(lambda stream: stream.write(text))
        return len(text)

    def flush(self) -> None:
        if self._stream is not None:  # closed: nothing was written, nothing to flush
            self._guarded(lambda stream: stream.flush())

    def _guarded(self, operation: Callable[[TextIO], object]) -> None:
        if self._stream is None:
            raise _StreamUnusable("standard output is closed: the output is lost")
        try:
            operation(self._stream)
        except BrokenPipeError:
            self.failed = True
            raise _StreamUnusable("the reader of standard output went away", quiet=True) from None
        except (OSError, ValueError) as error:
            self.failed = True
            reason = getattr(error, "strerror", None) or "closed"
            raise _StreamUnusable(f"cannot write to standard output ({reason})") from None


class _Diagnostics:
    """The process's stderr for :func:`run`: what cannot be written there is dropped (the exit
    status still says what happened)."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self.failed = False

    def write(self, text: str) -> int:
        if self._stream is not None and not self.failed:
            try:
                self._stream.write(text)
                self._stream.flush()
            except (OSError, ValueError):
                self.failed = True
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return self._stream is not None and not self.failed and _is_terminal(self._stream)


def _run(argv: list[str], stdout: TextIO, stderr: TextIO) -> int:
    parser = _build_parser(stdout, stderr)
    try:
        args = parser.parse_args(argv)
    except _Exit as done:
        return done.status
    try:
        return _dispatch(args, stdout, stderr)
    except _Usage as usage:
        # A usage error only found after parsing (e.g. --arguments that is not JSON).
        sub = parser.commands[args.command]
        try:
            sub.fail(usage.message)
        except _Exit as done:
            return done.status
        raise  # pragma: no cover -- fail() always raises _Exit


def _dispatch(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    command: str = args.command
    if command in _GRAPH_COMMANDS:
        try:
            tool, arguments = _GRAPH_COMMANDS[command](args)
        except GraphError as error:  # a JSON text given in argv without one meaning
            _write_error(stderr, error)
            return EXIT_FAILED
        raw: bool = getattr(args, "raw", False)
        return _graph_command(_config_path(args), tool, arguments, stdout, stderr, raw=raw)
    if command == "mcp":
        return _mcp_command(_config_path(args), stderr)
    if command == "explain":
        return _explain(args, stdout)
    if command == "doctor":
        try:
            report = _doctor(_config_path(args))
        except GraphError as error:
            # The envelope stays exactly as it is; the report on stdout names the cause.
            _write_error(stderr, error)
            _write_report(
                command, _doctor_unreadable(_config_path(args)), stdout, as_json=args.json
            )
            return EXIT_FAILED
    elif command == "init":
        config: str | None = getattr(args, "config", None)
        report = _init(args.directory, config, dry_run=args.dry_run)
    else:
        if command == "mcp-install" and not _is_text(_config_path(args)):
            raise _Usage(
                "the configuration path is not UTF-8 text: it cannot be written into a "
                "client's configuration"
            )
        report = _mcp_client_command(args)
    return _write_report(command, report, stdout, as_json=args.json)


def _config_path(args: argparse.Namespace) -> str:
    given: str | None = getattr(args, "config", None)
    if given is not None:
        return given
    return os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def _is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text (argv and environment bytes that are not UTF-8 arrive
    as lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _write_error(stderr: TextIO, error: GraphError) -> None:
    stderr.write(dumps({"ok": False, "error": error.to_json()}) + "\n")


# --- graph commands -----------------------------------------------------------------------------


def _table_request(operation: Operation, args: argparse.Namespace) -> tuple[str, Any]:
    """The request of a graph command: each argument the operation table declares, when given,
    sets its request member (a nested member, e.g. ``relations/depth``, in a nested object)."""
    request: dict[str, Any] = {}
    for argument in operation.cli.arguments:
        value = getattr(args, _dest(argument))
        if value is None:
            continue
        if argument.type == "comma-separated":
            value = value.split(",")
        elif argument.type == "context-fact":
            value = _context_object(operation.tool, argument.member, value)
        *parents, name = argument.member.split("/")
        target = request
        for parent in parents:
            target = target.setdefault(parent, {})
        target[name] = value
    return operation.tool, request


def _context_object(
    tool: str, member: str, facts: list[tuple[str, str | _JsonText]]
) -> dict[str, Any]:
    context: dict[str, Any] = {}
    for key, value in facts:
        if key in context:
            raise _Usage("argument --context: a KEY is given twice")
        if isinstance(value, _JsonText):
            value = _parse_request(tool, value.text, f"/{member}/{key}")
        context[key] = value
    return context


def _call_request(args: argparse.Namespace) -> tuple[str, Any]:
    if args.arguments is not None:
        # argv bytes that are not UTF-8 arrive as lone surrogates; kept as such, the bytes are
        # not UTF-8 either (a usage error, like a file of such bytes).
        data = args.arguments.encode("utf-8", "surrogatepass")
        return args.tool, _parse_arguments(args.tool, data, "--arguments")
    if args.arguments_file is not None:
        # Read once the graph is open, so that no more than maxInputBytes is ever read.
        return args.tool, _ArgumentsFile(args.arguments_file)
    return args.tool, {}


def _parse_arguments(tool: str, data: bytes, what: str) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _Usage(f"argument {what}: not UTF-8 text") from None
    try:
        return _parse_request(tool, text)
    except MalformedJson:
        raise _Usage(f"argument {what}: not valid JSON") from None


def _parse_request(tool: str, text: str, pointer: str = "") -> Any:
    """A request (or, under ``pointer``, one value of it) given as JSON text: its value, or the
    core's ``CG_INPUT_INVALID`` when it has no one meaning. :class:`MalformedJson` (not JSON at
    all) is left to the caller: for the CLI it is a usage error."""
    try:
        return parse_request_text(text, pointer)
    except MalformedJson:
        raise
    except NotPureJson as problem:
        raise invalid_arguments_text(tool, problem) from None


class _ArgumentsFile:
    """``call --arguments-file``: the request, read with the graph's input budget as a bound.

    Like the configuration, only a regular file is read (a fifo, a device or a directory would
    block or never end), or standard input for ``-``.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def read(self, tool: str, budget: int) -> Any:
        from ._config import FileTooLarge, read_bounded_file

        data: bytes | None
        if self.name == "-":
            data = _read_stdin(budget + 1)
        else:
            try:
                data = read_bounded_file(Path(self.name), budget)
            except FileTooLarge:
                raise oversized_request(tool) from None
            if data is None:
                raise _Usage(
                    "argument --arguments-file: not a readable regular file "
                    "(use - for standard input)"
                )
        if len(data) > budget:
            # The file is the serialized request as sent: over the budget, it is too large.
            raise oversized_request(tool)
        return _parse_arguments(tool, data, "--arguments-file")


def _read_stdin(limit: int) -> bytes:
    """At most ``limit`` bytes of standard input (``--arguments-file -``)."""
    if sys.stdin is None:
        raise _StreamUnusable("standard input is closed")
    try:
        return sys.stdin.buffer.read(limit)
    except (OSError, ValueError, AttributeError):
        raise _Usage("argument --arguments-file: cannot read standard input") from None


_GRAPH_COMMANDS: Final[dict[str, Callable[[argparse.Namespace], tuple[str, Any]]]] = {
    **{op.cli.command: functools.partial(_table_request, op) for op in OPERATION_TABLE},
    "call": _call_request,
}


def _graph_command(
    config: str, tool: str, arguments: Any, stdout: TextIO, stderr: TextIO, *, raw: bool = False
) -> int:
    try:
        result = asyncio.run(_call_graph(config, tool, arguments))
    except GraphError as error:
        _write_error(stderr, error)
        unknown_tool = error.code is ErrorCode.CG_INPUT_INVALID and tool not in OPERATIONS
        if unknown_tool and _is_terminal(stderr):
            # For a person only: a program reading stderr gets exactly the one envelope line.
            tools = ", ".join(OPERATIONS)
            stderr.write(f"hint: the tools are {tools}{_did_you_mean(tool, list(OPERATIONS))}\n")
        return EXIT_INTERRUPTED if error.code is ErrorCode.CG_MODEL_CANCELLED else EXIT_FAILED
    # ``read --raw``: the document's text exactly, for a pager or a file.
    stdout.write(result["text"] if raw else dumps(result) + "\n")
    return EXIT_OK


async def _call_graph(config: str, tool: str, arguments: Any) -> dict[str, Any]:
    from ._cancel import CancelToken
    from ._graph import CapabilityGraph

    graph = await CapabilityGraph.open(config)
    try:
        if isinstance(arguments, _ArgumentsFile):
            # The JSON path: a graph command never builds the SDK's typed results (Pydantic).
            described = await graph.call(TOOL_OF_METHOD["describe"], {})
            budget = described["budgets"]["maxInputBytes"]
            arguments = arguments.read(tool, budget)
        operation = OPERATIONS.get(tool)
        if operation is None or operation.phase is not Phase.MATCH:
            # Only the model executor's work is cancellable: Ctrl-C cancels it cleanly.
            return await graph.call(tool, arguments)
        token = CancelToken()
        with _sigint_cancels(token):
            return await graph.call(tool, arguments, cancel=token)
    finally:
        await graph.close()


class _sigint_cancels:
    """While active (main thread only), Ctrl-C cancels ``token`` instead of interrupting."""

    def __init__(self, token: Any) -> None:
        self._token = token
        self._previous: Any = None
        self._active = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> None:
        if self._active:
            self._previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        self._token.cancel()

    def __exit__(self, *exc_info: object) -> None:
        if self._active:
            signal.signal(signal.SIGINT, self._previous)


def _mcp_command(config: str, stderr: TextIO) -> int:
    # The graph opens first: a configuration error is reported without paying for the MCP SDK
    # import (most of a second), and the server starts only on a graph that opened.
    async def serve() -> int:
        from ._graph import CapabilityGraph

        if sys.stdin is None or sys.stdout is None:
            raise _StreamUnusable("the mcp command needs standard input and output (one is closed)")

        graph = await CapabilityGraph.open(config)
        try:
            try:
                from . import _mcp
            except ImportError:
                _write_error(
                    stderr,
                    GraphError(
                        ErrorCode.CG_CONFIG_INVALID,
                        Phase.CONFIG,
                        "The mcp command needs the optional mcp package: "
                        "pip install 'capability-graph[mcp]'",
                    ),
                )
                return EXIT_FAILED
            await _mcp.serve_stdio(graph)
        finally:
            await graph.close()
        return EXIT_OK

    try:
        return asyncio.run(serve())
    except GraphError as error:
        _write_error(stderr, error)
        return EXIT_FAILED
    except BaseExceptionGroup as group:
        # The SDK's stdio tasks fail together when the client stops reading our stdout.
        _, others = group.split(BrokenPipeError)
        if others is not None:
            raise
        raise _StreamUnusable("the MCP client stopped reading", quiet=True) from None


# --- maintenance reports ------------------------------------------------------------------------

_REPORT_EXIT: Final = {
    "ok": EXIT_OK,
    "planned": EXIT_OK,
    "failed": EXIT_FAILED,
    "conflict": EXIT_CONFLICT,
}

_MARKS: Final = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "skip": "skip"}


def _write_report(command: str, report: Report, stdout: TextIO, *, as_json: bool) -> int:
    if as_json:
        stdout.write(dumps(report.to_json()) + "\n")
    else:
        lines = [f"{PROG} {command}: {report.status}"]
        lines += [f"  [{_MARKS[c['status']]}] {c['id']}: {c['message']}" for c in report.checks]
        lines += [f"  warning: {w}" for w in report.warnings]
        lines += [f"  hint: {h}" for h in report.hints]
        stdout.write("\n".join(lines) + "\n")
    return _REPORT_EXIT[report.status]


def _error_text(error: GraphError) -> str:
    return f"{error.code.value}: {error.message}"


# --- doctor -------------------------------------------------------------------------------------


def _doctor(config: str) -> Report:
    """Check everything ``open`` checks, plus documents and the executor's prerequisites.

    A configuration file that cannot be read at all raises its GraphError (an error envelope,
    not a report).
    """
    from ._config import _config_from_file, load_config

    raw, base = _config_from_file(Path(config))
    report = Report()
    try:
        host = load_config(raw, cwd=base)
    except GraphError as error:
        from ._doctor import unknown_config_keys

        unknown = unknown_config_keys(raw)
        named = f"; unknown keys: {', '.join(unknown)}" if unknown else ""
        report.check("config", "fail", f"{_error_text(error)}{named}")
        report.check("sources", "skip", "Not checked: the configuration is invalid")
        report.status = "failed"
        return report
    report.check(
        "config", "ok", f"The configuration is valid ({_count(len(host.sources), 'source')})"
    )
    providers = _doctor_sources(host, report)
    if providers is not None:
        _doctor_relations(host, providers, report)
        _doctor_documents(host, providers, report)
    _doctor_executor(host, report)
    if not report.failed():
        _doctor_open(config, report)
    report.status = "failed" if report.failed() else "ok"
    return report


def _doctor_unreadable(config: str) -> Report:
    """doctor's report when the configuration cannot be read at all: the cause, by name."""
    from ._doctor import config_cause

    report = Report(status="failed")
    cause = config_cause(config) or f"{os.path.abspath(config)} cannot be read"
    report.check("config", "fail", f"Cannot read the configuration: {cause}")
    report.check("sources", "skip", "Not checked: the configuration cannot be read")
    return report


def _doctor_sources(host: Any, report: Report) -> list[Any] | None:
    from ._snapshot import load_provider

    providers = []
    for source in host.sources:
        try:
            provider, _ = load_provider(source, host.budgets)
        except GraphError as error:
            from ._doctor import definition_facts

            facts = definition_facts(source, host.budgets.max_definition_bytes)
            report.check(f"source.{source.index}", "fail", f"{_error_text(error)} ({facts})")
            continue
        providers.append(provider)
        report.check(
            f"source.{source.index}",
            "ok",
            f"Provider {provider.provider_id} version {provider.version}: "
            f"{_count(len(provider.capabilities), 'capability', 'capabilities')}",
        )
    if len(providers) != len(host.sources):
        report.check("relations", "skip", "Not checked: a source failed to load")
        return None
    return providers


def _doctor_relations(host: Any, providers: list[Any], report: Report) -> None:
    from ._snapshot import build_snapshot

    try:
        snapshot = build_snapshot(providers, host.budgets, host.scope)
    except GraphError as error:
        report.check("relations", "fail", _error_text(error))
        return
    edges = 0
    dangling: list[str] = []
    for capability in snapshot.capabilities.values():
        for kind, target in capability.relations:
            edges += 1
            if target not in snapshot.capabilities:
                dangling.append(f"{capability.full_id} {kind} {target}")
    report.check(
        "relations",
        "ok",
        f"{_count(len(snapshot.capabilities), 'capability', 'capabilities')} and "
        f"{_count(edges, 'relation')} are valid",
    )
    if dangling:
        shown = "; ".join(dangling[:5]) + ("; ..." if len(dangling) > 5 else "")
        report.warn(
            f"{_count(len(dangling), 'relation')} {'reaches' if len(dangling) == 1 else 'reach'} "
            "a provider that is not loaded "
            f"(queries report them as partial): {shown}"
        )


def _doctor_documents(host: Any, providers: list[Any], report: Report) -> None:
    from ._documents import read_document_file

    bodies = host.bodies
    for provider in providers:
        check_id = f"documents.{provider.source_index}"
        files = urls = 0
        failures: list[str] = []
        for capability in provider.capabilities.values():
            for document in capability.declaration.get("documents", ()):
                if "url" in document:
                    urls += 1
                    continue
                files += 1
                where = f"{capability.full_id}/{document['id']}"
                if provider.document_root is None:
                    failures.append(f"{where} {ErrorCode.CG_DOCUMENT_ROOT_REQUIRED.value}")
                    continue
                try:
                    read_document_file(
                        provider.document_root,
                        document["path"],
                        max_bytes=host.budgets.max_document_bytes,
                    )
                except GraphError as error:
                    failures.append(f"{where} {error.code.value}")
        if not files and not urls:
            report.check(check_id, "skip", f"Provider {provider.provider_id} declares no documents")
            continue
        if failures:
            shown = "; ".join(failures[:5]) + ("; ..." if len(failures) > 5 else "")
            report.check(
                check_id,
                "fail",
                f"Provider {provider.provider_id}: {len(failures)} of "
                f"{_count(files, 'local document')} cannot be read: {shown}",
            )
        else:
            report.check(
                check_id,
                "ok",
                f"Provider {provider.provider_id}: {_count(files, 'local document')} readable, "
                f"{_count(urls, 'URL reference')}",
            )
        approved = bodies == "all" or (
            not isinstance(bodies, str) and provider.provider_id in bodies
        )
        if files and not approved:
            report.warn(
                f"Document bodies of provider {provider.provider_id} are not approved "
                "(documents.bodies): read_document answers CG_ACCESS_DENIED"
            )


def _doctor_executor(host: Any, report: Report) -> None:
    import importlib.util
    import shutil

    from ._executors import build_executor

    model = host.model
    if model is None:
        report.check(
            "executor",
            "skip",
            "No model executor is configured: match answers CG_MODEL_NOT_CONFIGURED "
            "(static queries work)",
        )
        return
    name = model.get("executor")
    try:
        executor = build_executor(model)
    except GraphError as error:
        report.check("executor", "fail", _error_text(error))
        return
    except Exception:  # noqa: BLE001 -- an executor that cannot even be built
        report.check("executor", "fail", f"The {name} executor cannot be loaded")
        return
    closer = getattr(executor, "aclose", None)
    if closer is not None:
        asyncio.run(closer())
    if name == "openai":
        if importlib.util.find_spec("openai") is None:
            report.check(
                "executor",
                "fail",
                "The openai executor needs the optional openai package: "
                "pip install 'capability-graph[openai]'",
            )
            return
        variable = model.get("apiKeyEnv")
        if isinstance(variable, str) and not os.environ.get(variable):
            report.check(
                "executor", "warn", f"The environment variable {variable} (apiKeyEnv) is not set"
            )
            return
    elif name == "codex" and shutil.which("codex") is None:
        report.check("executor", "fail", "The codex executor needs the codex CLI on PATH")
        return
    report.check("executor", "ok", f"The {name} executor is configured")


def _doctor_open(config: str, report: Report) -> None:
    from ._graph import BlockingCapabilityGraph

    try:
        graph = BlockingCapabilityGraph.open(config)
    except GraphError as error:
        report.check("open", "fail", _error_text(error))
        return
    with graph:
        described = graph.describe()
    count = sum(p.capability_count for p in described.providers)
    report.check(
        "open",
        "ok",
        f"The graph opens: revision {described.revision}, "
        f"{_count(len(described.providers), 'provider')} and "
        f"{_count(count, 'capability', 'capabilities')} in scope",
    )


# --- init ---------------------------------------------------------------------------------------

_INIT_CONFIG: Final = {
    "providers": [{"path": "providers/example.json"}],
    "model": {"executor": "lexical"},
}

_INIT_PROVIDER: Final = {
    "providerId": "example",
    "name": "Example product",
    "version": "1",
    "description": "A sample provider: replace it with what your product can do.",
    "capabilities": [
        {
            "id": "getting-started",
            "name": "Getting started",
            "description": "Install the example product and make a first call.",
            "whenToUse": "Someone is new to the example product and needs a first working setup.",
            "tags": ["example", "setup"],
            "documents": [
                {
                    "id": "guide",
                    "title": "Getting started guide",
                    "role": "guide",
                    "locale": "en",
                    "path": "knowledge/getting-started.md",
                }
            ],
        },
        {
            "id": "search",
            "name": "Search",
            "description": "Search the example catalog by keyword and filters.",
            "whenToUse": "A user wants to find items by text.",
            "tags": ["example", "search"],
            "relations": [{"kind": "requires", "target": "getting-started"}],
        },
    ],
}

_INIT_DOCUMENT: Final = """\
# Getting started

This is a knowledge document of the example provider. Capability Graph serves it through
`read_document` (CLI: `capability-graph read example::getting-started guide`).

1. Describe your product's capabilities in `providers/example.json`.
2. Run `capability-graph doctor` to check the configuration, relations and documents.
3. Try `capability-graph match "find items by keyword"`.
"""


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _init(directory: str | None, config: str | None, *, dry_run: bool) -> Report:
    """Scaffold a graph: the configuration at ``--config`` (else ``DIR/capability-graph.json``),
    the example provider and its document in ``DIR`` (else the configuration's folder)."""
    if config is not None and not config:
        raise _Usage("argument --config: the path is empty")
    config_path = Path(config) if config else Path(directory or ".") / DEFAULT_CONFIG
    root = Path(directory) if directory is not None else config_path.parent
    provider_path = root / "providers" / "example.json"
    planned: list[tuple[str, Path, str, bytes]] = [
        (
            _file_check_id(config_path.name),
            config_path,
            config if config else DEFAULT_CONFIG,
            _json_bytes(_init_config(provider_path, config_path.parent)),
        ),
    ]
    for relative, data in (
        ("providers/example.json", _json_bytes(_INIT_PROVIDER)),
        ("providers/knowledge/getting-started.md", _INIT_DOCUMENT.encode("utf-8")),
    ):
        planned.append((_file_check_id(relative), root / relative, relative, data))
    report = Report()
    for folder in dict.fromkeys((root, config_path.parent)):
        if folder.exists() and not folder.is_dir():
            report.check("directory", "fail", f"{folder} exists and is not a directory")
            report.status = "failed"
            return report
    to_write: list[tuple[str, Path, str, bytes]] = []
    conflicts = 0
    for check_id, path, shown, data in planned:
        if os.path.lexists(path):
            if path.is_file() and not path.is_symlink() and _read_small(path) == data:
                report.check(check_id, "ok", f"{shown} already exists with this content")
            else:
                conflicts += 1
                report.check(
                    check_id, "fail", f"{shown} already exists and differs: not overwritten"
                )
            continue
        to_write.append((check_id, path, shown, data))
    if conflicts:
        for check_id, _, _, _ in to_write:
            report.check(check_id, "skip", "Not written: another file conflicts")
        report.status = "conflict"
        return report
    if dry_run:
        for check_id, _, shown, _ in to_write:
            report.check(check_id, "ok", f"Would create {shown}")
        report.status = "planned"
        return report
    for check_id, path, shown, data in to_write:
        try:
            create_new(path, data)
        except Clobbered:
            report.check(check_id, "fail", f"{shown} appeared meanwhile: not overwritten")
            report.status = "conflict"
            return report
        except OSError as error:
            report.check(check_id, "fail", f"Cannot create {shown}: {error.strerror or 'error'}")
            report.status = "failed"
            return report
        report.check(check_id, "ok", f"Created {shown}")
    if to_write:
        report.hint(f"check the new graph: {PROG} doctor --config {config_path}")
    report.status = "ok"
    return report


def _init_config(provider_path: Path, config_folder: Path) -> dict[str, Any]:
    """The scaffold's configuration, naming the provider file relative to its own folder."""
    try:
        where = Path(os.path.relpath(provider_path, config_folder)).as_posix()
    except ValueError:  # another drive (Windows): no relative path exists
        where = Path(os.path.abspath(provider_path)).as_posix()
    return {**_INIT_CONFIG, "providers": [{"path": where}]}


def _file_check_id(relative: str) -> str:
    """``file.`` and the file's name as a check id (lower case, ``[a-z0-9._-]`` only)."""
    name = re.sub(r"[^a-z0-9._-]", "-", relative.replace("/", ".").lower())
    return f"file.{name}"[:128]


def _read_small(path: Path) -> bytes | None:
    """A regular file's bytes (at most 1 MiB; a fifo or a device is never opened to block)."""
    from ._config import FileTooLarge, read_bounded_file

    try:
        return read_bounded_file(path, 1024 * 1024)
    except FileTooLarge:
        return None


# --- mcp-install --------------------------------------------------------------------------------


_SERVER_NAME_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)


def _env_name(text: str) -> str:
    if not _ENV_NAME.fullmatch(text):
        # The configuration's own format text (spec messages.md, EnvVarName): it quotes nothing,
        # so the scrub of caller text in usage errors leaves it whole.
        raise argparse.ArgumentTypeError(f"must be {FORMATS['EnvVarName']}")
    return text


def _add_mcp_install_flags(parser: argparse.ArgumentParser) -> None:
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


def _add_mcp_uninstall_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--client",
        required=True,
        choices=sorted(_CLIENTS),
        metavar="CLIENT",
        help=f"the MCP client: {', '.join(sorted(_CLIENTS))}; e.g. --client cursor",
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
    from ._mcp_install import install, uninstall

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
            config=_config_path(args),
            client_config=args.config_path,
            name=args.name,
            env=tuple(dict.fromkeys(args.env)),
            force=args.force,
            dry_run=args.dry_run,
        )
    return report


# --- explain ------------------------------------------------------------------------------------


def _explain(args: argparse.Namespace, stdout: TextIO) -> int:
    # The same generated content as the error reference pages (docs/errors/CODE.md).
    from ._explain import (
        explain_index_json,
        explain_index_text,
        explain_json,
        explain_text,
        lookup,
    )

    if args.code is None:
        if args.json:
            stdout.write(dumps(explain_index_json()) + "\n")
        else:
            stdout.write(explain_index_text())
        return EXIT_OK
    try:
        code = lookup(args.code)
    except ValueError:
        codes = [known.value for known in ErrorCode]
        raise _Usage(
            f"unknown error code{_did_you_mean(args.code.strip(), codes)}; "
            f"run '{PROG} explain' to list them"
        ) from None
    if args.json:
        stdout.write(dumps(explain_json(code)) + "\n")
    else:
        stdout.write(explain_text(code))
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover -- ``python -m capability_graph.cli``
    main()
