"""The ``capability-graph`` command line (CG-CLI-1 .. CG-CLI-6, CG-MAINT-1 .. CG-MAINT-8).

Graph commands (a thin projection of :meth:`CapabilityGraph.call`)::

    capability-graph describe
    capability-graph list [--provider P]... [--tag T]... [--limit N] [--cursor C]
    capability-graph resolve ID... [--relations KIND,KIND] [--depth N]
    capability-graph match TEXT [--context KEY=TEXT | KEY:=JSON]... [--provider P]...
                               [--limit N] [--timeout-ms N]
    capability-graph read CAPABILITY_ID DOCUMENT_ID
    capability-graph call TOOL [--arguments JSON | --arguments-file FILE]
    capability-graph mcp

Success: the result JSON on stdout (one line), exit 0. Failure: nothing on stdout, one line
``{"ok":false,"error":{...}}`` on stderr, exit 1 (130 when Ctrl-C cancelled a match, which then
fails with ``CG_MODEL_CANCELLED``). Usage errors: usage text on stderr, exit 2. The core
validates every request; the CLI only turns argv into the tool request. ``--context KEY=TEXT``
gives a string value; ``KEY:=JSON`` gives a typed one (``--context retries:=3``,
``--context beta:=true``).

Maintenance commands report ``{"status", "checks", "warnings"}`` (``--json``: that JSON on
stdout; otherwise text) and exit 0 (ok, planned), 1 (failed), 3 (conflict)::

    capability-graph doctor
    capability-graph init [DIR] [--dry-run]
    capability-graph mcp-install --client CLIENT [--config-path FILE] [--name NAME]
                                 [--env NAME]... [--force] [--dry-run]
    capability-graph mcp-uninstall --client CLIENT [--config-path FILE] [--name NAME] [--dry-run]
    capability-graph explain [CODE]

The configuration is ``--config FILE``, else ``$CAPABILITY_GRAPH_CONFIG``, else
``./capability-graph.json``. A configuration that cannot be read at all is an error envelope
(exit 1) for every command that needs it, ``doctor`` included (which also prints its report,
naming the cause, on stdout). The CLI never prints a traceback:
a defect is reported as one fixed line and exit status 70.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn, TextIO

from ._errors import GraphError
from ._generated.taxonomy import ErrorCode, Phase
from ._json import dumps
from ._mcp_install import CLIENTS as _CLIENTS
from ._mcp_install import ENV_NAME as _ENV_NAME
from ._operations import oversized_request

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


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that writes to the given streams and never exits the process."""

    def __init__(self, *args: Any, out: TextIO, err: TextIO, **kwargs: Any) -> None:
        self.out = out
        self.err = err
        self.commands: dict[str, _Parser] = {}
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if message:
            (self.out if file is None or file is sys.stdout else self.err).write(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self.err.write(message)
        raise _Exit(status)

    def error(self, message: str) -> NoReturn:
        self.print_usage(self.err)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _non_negative_int(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError("must be an integer") from None


_CONTEXT_HELP: Final = (
    "a fact for the model executor: KEY=TEXT (a string) or KEY:=JSON (a number, boolean or "
    "string as JSON); repeatable"
)


def _server_name(text: str) -> str:
    if not text or len(text) > 64 or not set(text) <= _SERVER_NAME_CHARS:
        raise argparse.ArgumentTypeError("must be 1..64 of A-Z, a-z, 0-9, '_', '-'")
    return text


def _context_item(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError("expected KEY=TEXT or KEY:=JSON")
    if key.endswith(":"):
        try:
            return key[:-1], json.loads(value)
        except (ValueError, RecursionError):
            raise argparse.ArgumentTypeError("the value after ':=' must be JSON") from None
    return key, value


def _build_parser(out: TextIO, err: TextIO) -> _Parser:
    streams: dict[str, Any] = {"out": out, "err": err}
    common = _Parser(add_help=False, **streams)
    common.add_argument(
        "--config",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help=f"the host configuration (default: ${CONFIG_ENV}, else ./{DEFAULT_CONFIG})",
    )
    parser = _Parser(
        prog=PROG,
        description="Discover provider capabilities: query a capability graph, serve it over "
        "MCP, and maintain its configuration.",
        parents=[common],
        **streams,
    )
    parser.add_argument(
        "--version", action=_VersionAction, nargs=0, help="print the version and exit"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help_text: str) -> _Parser:
        sub: _Parser = commands.add_parser(
            name, help=help_text, description=help_text, parents=[common], **streams
        )
        parser.commands[name] = sub
        return sub

    command("describe", "Describe the graph: providers, revision, model, budgets.")

    p = command("list", "List the capabilities in scope, one page at a time.")
    p.add_argument("--provider", action="append", metavar="P", dest="providers")
    p.add_argument("--tag", action="append", metavar="T", dest="tags")
    p.add_argument("--limit", type=_non_negative_int, metavar="N")
    p.add_argument("--cursor", metavar="C")

    p = command("resolve", "Resolve capabilities by full id, following their relations.")
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--relations", metavar="KIND,KIND", help="relation kinds to follow")
    p.add_argument("--depth", type=_non_negative_int, metavar="N")

    p = command("match", "Ask the model executor which capabilities fit a request.")
    p.add_argument("request", metavar="TEXT")
    p.add_argument(
        "--context", action="append", type=_context_item, metavar="KEY=TEXT", help=_CONTEXT_HELP
    )
    p.add_argument("--provider", action="append", metavar="P", dest="providers")
    p.add_argument("--limit", type=_non_negative_int, metavar="N")
    p.add_argument("--timeout-ms", type=_non_negative_int, metavar="N")

    p = command("read", "Read the text of a capability's local document.")
    p.add_argument("capability_id", metavar="CAPABILITY_ID")
    p.add_argument("document_id", metavar="DOCUMENT_ID")

    p = command("call", "Call a tool with its exact JSON request (for scripts).")
    p.add_argument("tool", metavar="TOOL")
    given = p.add_mutually_exclusive_group()
    given.add_argument("--arguments", metavar="JSON", help="the tool's arguments (default: {})")
    given.add_argument(
        "--arguments-file", metavar="FILE", help="read the arguments from FILE ('-': stdin)"
    )

    command("mcp", "Serve the graph over MCP on stdin/stdout.")

    p = command("doctor", "Check the configuration, sources, relations, documents, executor.")
    _add_flags(p, json_flag=True, dry_run_flag=False)

    p = command("init", "Scaffold a configuration, an example provider and a document.")
    p.add_argument("directory", nargs="?", default=".", metavar="DIR")
    _add_flags(p, json_flag=True, dry_run_flag=True)

    p = command("mcp-install", "Add this graph's MCP server to an MCP client's configuration.")
    p.add_argument("--client", required=True, choices=sorted(_CLIENTS), metavar="CLIENT")
    p.add_argument("--config-path", metavar="FILE", help="the client's configuration file")
    p.add_argument(
        "--name",
        default=PROG,
        type=_server_name,
        metavar="NAME",
        help=f"the server's name in the client (default: {PROG})",
    )
    _add_mcp_install_flags(p)
    _add_flags(p, json_flag=True, dry_run_flag=True)

    p = command(
        "mcp-uninstall", "Remove this graph's MCP server from an MCP client's configuration."
    )
    _add_mcp_uninstall_arguments(p)
    _add_flags(p, json_flag=True, dry_run_flag=True)

    p = command("explain", "Explain an error code (all codes without CODE).")
    p.add_argument("code", nargs="?", metavar="CODE")
    _add_flags(p, json_flag=True, dry_run_flag=False)
    return parser


def _add_flags(parser: argparse.ArgumentParser, *, json_flag: bool, dry_run_flag: bool) -> None:
    if json_flag:
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
    if dry_run_flag:
        parser.add_argument(
            "--dry-run", action="store_true", help="report what would be written; write nothing"
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
    except BrokenPipeError:
        raise
    except Exception:  # noqa: BLE001 -- the top-level guard: never a traceback, never its text
        stderr.write(_INTERNAL_ERROR)
        return EXIT_INTERNAL


def main() -> NoReturn:
    """The console script: run with ``sys.argv`` and exit with its status."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(OSError, ValueError):
                reconfigure(encoding="utf-8", errors="backslashreplace")
    try:
        status = run(sys.argv[1:], sys.stdout, sys.stderr)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, without a second error at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = EXIT_FAILED
    except KeyboardInterrupt:
        status = EXIT_INTERRUPTED
    sys.exit(status)


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
            sub.error(usage.message)
        except _Exit as done:
            return done.status
        raise  # pragma: no cover -- error() always raises _Exit


def _dispatch(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    command: str = args.command
    if command in _GRAPH_COMMANDS:
        tool, arguments = _GRAPH_COMMANDS[command](args)
        return _graph_command(_config_path(args), tool, arguments, stdout, stderr)
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
        report = _init(Path(args.directory), dry_run=args.dry_run)
    else:
        report = _mcp_client_command(args)
    return _write_report(command, report, stdout, as_json=args.json)


def _config_path(args: argparse.Namespace) -> str:
    given: str | None = getattr(args, "config", None)
    if given is not None:
        return given
    return os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG


def _write_error(stderr: TextIO, error: GraphError) -> None:
    stderr.write(dumps({"ok": False, "error": error.to_json()}) + "\n")


# --- graph commands -----------------------------------------------------------------------------


def _describe_request(args: argparse.Namespace) -> tuple[str, Any]:
    return "describe_graph", {}


def _list_request(args: argparse.Namespace) -> tuple[str, Any]:
    request: dict[str, Any] = {}
    if args.providers is not None:
        request["providers"] = args.providers
    if args.tags is not None:
        request["tags"] = args.tags
    if args.limit is not None:
        request["limit"] = args.limit
    if args.cursor is not None:
        request["cursor"] = args.cursor
    return "list_capabilities", request


def _resolve_request(args: argparse.Namespace) -> tuple[str, Any]:
    request: dict[str, Any] = {"ids": args.ids}
    relations: dict[str, Any] = {}
    if args.relations is not None:
        relations["kinds"] = args.relations.split(",")
    if args.depth is not None:
        relations["depth"] = args.depth
    if relations:
        request["relations"] = relations
    return "resolve_capabilities", request


def _match_request(args: argparse.Namespace) -> tuple[str, Any]:
    request: dict[str, Any] = {"request": args.request}
    if args.context is not None:
        context: dict[str, Any] = {}
        for key, value in args.context:
            if key in context:
                raise _Usage(f"argument --context: {key!r} given twice")
            context[key] = value
        request["context"] = context
    if args.providers is not None:
        request["providers"] = args.providers
    if args.limit is not None:
        request["limit"] = args.limit
    if args.timeout_ms is not None:
        request["timeoutMs"] = args.timeout_ms
    return "match_capabilities", request


def _read_request(args: argparse.Namespace) -> tuple[str, Any]:
    return "read_document", {"capabilityId": args.capability_id, "documentId": args.document_id}


def _call_request(args: argparse.Namespace) -> tuple[str, Any]:
    if args.arguments is not None:
        return args.tool, _parse_arguments(args.arguments.encode("utf-8"), "--arguments")
    if args.arguments_file is not None:
        # Read once the graph is open, so that no more than maxInputBytes is ever read.
        return args.tool, _ArgumentsFile(args.arguments_file)
    return args.tool, {}


def _parse_arguments(data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise _Usage(f"argument {what}: not UTF-8 text") from None
    except (ValueError, RecursionError):
        raise _Usage(f"argument {what}: not valid JSON") from None


class _ArgumentsFile:
    """``call --arguments-file``: the request, read with the graph's input budget as a bound."""

    def __init__(self, name: str) -> None:
        self.name = name

    def read(self, tool: str, budget: int) -> Any:
        try:
            if self.name == "-":
                data = sys.stdin.buffer.read(budget + 1)
            else:
                with open(self.name, "rb") as file:
                    data = file.read(budget + 1)
        except (OSError, ValueError, AttributeError):
            raise _Usage("argument --arguments-file: cannot read it") from None
        if len(data) > budget:
            # The file is the serialized request as sent: over the budget, it is too large.
            raise oversized_request(tool)
        return _parse_arguments(data, "--arguments-file")


_GRAPH_COMMANDS: Final[dict[str, Callable[[argparse.Namespace], tuple[str, Any]]]] = {
    "describe": _describe_request,
    "list": _list_request,
    "resolve": _resolve_request,
    "match": _match_request,
    "read": _read_request,
    "call": _call_request,
}


def _graph_command(config: str, tool: str, arguments: Any, stdout: TextIO, stderr: TextIO) -> int:
    try:
        result = asyncio.run(_call_graph(config, tool, arguments))
    except GraphError as error:
        _write_error(stderr, error)
        return EXIT_INTERRUPTED if error.code is ErrorCode.CG_MODEL_CANCELLED else EXIT_FAILED
    stdout.write(dumps(result) + "\n")
    return EXIT_OK


async def _call_graph(config: str, tool: str, arguments: Any) -> dict[str, Any]:
    from ._cancel import CancelToken
    from ._graph import CapabilityGraph

    graph = await CapabilityGraph.open(config)
    try:
        if isinstance(arguments, _ArgumentsFile):
            budget = (await graph.describe()).budgets["maxInputBytes"]
            arguments = arguments.read(tool, budget)
        if tool != "match_capabilities":
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


# --- maintenance reports ------------------------------------------------------------------------

CheckStatus = Literal["ok", "warn", "fail", "skip"]
ReportStatus = Literal["planned", "ok", "conflict", "failed"]

_REPORT_EXIT: Final = {
    "ok": EXIT_OK,
    "planned": EXIT_OK,
    "failed": EXIT_FAILED,
    "conflict": EXIT_CONFLICT,
}
_MAX_TEXT: Final = 1024


def _safe_text(text: str) -> str:
    """One line of printable text, 1..1024 characters (the report's ReportText)."""
    cleaned = "".join(c if c.isprintable() else "?" for c in text) or "-"
    return cleaned if len(cleaned) <= _MAX_TEXT else cleaned[: _MAX_TEXT - 3] + "..."


@dataclass
class Report:
    status: ReportStatus = "ok"
    checks: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def check(self, check_id: str, status: CheckStatus, message: str) -> None:
        self.checks.append({"id": check_id, "status": status, "message": _safe_text(message)})

    def warn(self, message: str) -> None:
        self.warnings.append(_safe_text(message))

    def failed(self) -> bool:
        return any(c["status"] == "fail" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "checks": self.checks, "warnings": self.warnings}


_MARKS: Final = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "skip": "skip"}


def _write_report(command: str, report: Report, stdout: TextIO, *, as_json: bool) -> int:
    if as_json:
        stdout.write(dumps(report.to_json()) + "\n")
    else:
        lines = [f"{PROG} {command}: {report.status}"]
        lines += [f"  [{_MARKS[c['status']]}] {c['id']}: {c['message']}" for c in report.checks]
        lines += [f"  warning: {w}" for w in report.warnings]
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
        named = f" (unknown keys: {', '.join(unknown)})" if unknown else ""
        report.check("config", "fail", f"{_error_text(error)}{named}")
        report.check("sources", "skip", "Not checked: the configuration is invalid")
        report.status = "failed"
        return report
    report.check("config", "ok", f"The configuration is valid ({len(host.sources)} sources)")
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
            f"{len(provider.capabilities)} capabilities",
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
        f"{len(snapshot.capabilities)} capabilities and {edges} relations are valid",
    )
    if dangling:
        shown = "; ".join(dangling[:5]) + ("; ..." if len(dangling) > 5 else "")
        report.warn(
            f"{len(dangling)} relations reach a provider that is not loaded "
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
                f"Provider {provider.provider_id}: {len(failures)} of {files} local documents "
                f"cannot be read: {shown}",
            )
        else:
            report.check(
                check_id,
                "ok",
                f"Provider {provider.provider_id}: {files} local documents readable, "
                f"{urls} URL references",
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
    count = sum(p["capabilityCount"] for p in described.providers)
    report.check(
        "open",
        "ok",
        f"The graph opens: revision {described.revision}, {len(described.providers)} providers "
        f"and {count} capabilities in scope",
    )


# --- writing files (init, mcp-install) ----------------------------------------------------------


class _Clobbered(Exception):
    """The target appeared (or changed) while we were writing: nothing was overwritten."""


def _file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _temporary(directory: Path, data: bytes, mode: int) -> str:
    import tempfile

    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".capability-graph-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
    except BaseException:
        os.unlink(temporary)
        raise
    return temporary


def _create_new(path: Path, data: bytes) -> None:
    """Create ``path`` atomically with ``data``; never replace an existing file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _temporary(path.parent, data, _file_mode())
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise _Clobbered from None
    except OSError:  # no hard links here: exclusive create (complete, but not atomic to readers)
        try:
            fd = os.open(
                path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
            )
        except FileExistsError:
            raise _Clobbered from None
        with os.fdopen(fd, "wb") as file:
            file.write(data)
    finally:
        os.unlink(temporary)


def _replace_existing(path: Path, data: bytes, identity: tuple[int, ...]) -> None:
    """Replace ``path`` atomically, keeping its mode, if it is still the file we read."""
    info = os.stat(path)
    temporary = _temporary(path.parent, data, info.st_mode & 0o7777)
    try:
        if _identity(info) != identity:
            raise _Clobbered
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


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


def _init(directory: Path, *, dry_run: bool) -> Report:
    report = Report()
    planned = {
        DEFAULT_CONFIG: _json_bytes(_INIT_CONFIG),
        "providers/example.json": _json_bytes(_INIT_PROVIDER),
        "providers/knowledge/getting-started.md": _INIT_DOCUMENT.encode("utf-8"),
    }
    if directory.exists() and not directory.is_dir():
        report.check("directory", "fail", f"{directory} exists and is not a directory")
        report.status = "failed"
        return report
    to_write: list[tuple[str, Path, bytes]] = []
    conflicts = 0
    for relative, data in planned.items():
        path = directory / relative
        check_id = "file." + relative.replace("/", ".").lower()
        if os.path.lexists(path):
            if path.is_file() and not path.is_symlink() and _read_small(path) == data:
                report.check(check_id, "ok", f"{relative} already exists with this content")
            else:
                conflicts += 1
                report.check(
                    check_id, "fail", f"{relative} already exists and differs: not overwritten"
                )
            continue
        to_write.append((check_id, path, data))
    if conflicts:
        for check_id, _, _ in to_write:
            report.check(check_id, "skip", "Not written: another file conflicts")
        report.status = "conflict"
        return report
    if dry_run:
        for check_id, path, _ in to_write:
            report.check(check_id, "ok", f"Would create {_relative(path, directory)}")
        report.status = "planned"
        return report
    for check_id, path, data in to_write:
        try:
            _create_new(path, data)
        except _Clobbered:
            report.check(
                check_id,
                "fail",
                f"{_relative(path, directory)} appeared meanwhile: not overwritten",
            )
            report.status = "conflict"
            return report
        except OSError as error:
            report.check(
                check_id,
                "fail",
                f"Cannot create {_relative(path, directory)}: {error.strerror or 'error'}",
            )
            report.status = "failed"
            return report
        report.check(check_id, "ok", f"Created {_relative(path, directory)}")
    if to_write:
        report.warn(f"Next: {PROG} doctor --config {directory / DEFAULT_CONFIG}")
    report.status = "ok"
    return report


def _relative(path: Path, directory: Path) -> str:
    return path.relative_to(directory).as_posix()


def _read_small(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as file:
            return file.read(1024 * 1024)
    except OSError:
        return None


# --- mcp-install --------------------------------------------------------------------------------


_SERVER_NAME_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)


def _env_name(text: str) -> str:
    if not _ENV_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            "must be a variable name: a letter or '_', then letters, digits, '_'"
        )
    return text


def _add_mcp_install_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        type=_env_name,
        metavar="NAME",
        help="forward the environment variable NAME to the server, by reference in the "
        "client's own syntax (never its value); repeatable. Example: --env OPENAI_API_KEY",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an older entry of this server (only one that runs capability-graph), "
        "keeping the previous file as FILE.bak",
    )


def _add_mcp_uninstall_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--client",
        required=True,
        choices=sorted(_CLIENTS),
        metavar="CLIENT",
        help=f"the MCP client: {', '.join(sorted(_CLIENTS))}",
    )
    parser.add_argument("--config-path", metavar="FILE", help="the client's configuration file")
    parser.add_argument(
        "--name",
        default=PROG,
        type=_server_name,
        metavar="NAME",
        help=f"the server's name in the client (default: {PROG})",
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
        raise _Usage(f"unknown error code (run '{PROG} explain' to list them)") from None
    if args.json:
        stdout.write(dumps(explain_json(code)) + "\n")
    else:
        stdout.write(explain_text(code))
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover -- ``python -m capability_graph.cli``
    main()
