"""The graph commands and ``call``: a thin projection of :meth:`CapabilityGraph.call`.

The parser and the request of describe, list, resolve, match and read are built from the
generated operation table (source: ``spec/capability-graph/operations.json``); ``call`` takes
a tool's exact JSON request. Success: the result JSON on stdout (one line), exit 0. Failure:
one error envelope line on stderr, exit 1 (130 when Ctrl-C cancelled a match, which then
fails with ``CG_MODEL_CANCELLED``).

A command runs its one call in place, on the main thread without an event loop (the core's
``run_in_place``), unless it is a match: its deadline, cancellation and executor need the loop,
so only ``match`` imports ``asyncio`` (tens of milliseconds of a command's start-up).
"""

from __future__ import annotations

import argparse
import gc
import re
from typing import Any, Final, TextIO

from ..._core.errors import GraphError
from ..._core.graph import CapabilityGraph, run_in_place, runs_in_place
from ..._core.json import dumps
from ..._core.operations import OPERATIONS, TOOL_OF_METHOD
from ..._generated.operations import OPERATION_TABLE, CliArgument
from ..._generated.taxonomy import ErrorCode
from .arguments import AddCommand, Declaration
from .base import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    config_path,
    did_you_mean,
    is_terminal,
    write_error,
)
from .requests import REQUESTS, ArgumentsFile, context_item, dest


def add_commands(command: AddCommand) -> None:
    # The graph commands, from the generated operation table (``spec/``: operations.json).
    for operation in OPERATION_TABLE:
        p = command(operation.cli.command, operation.cli.help, *operation.cli.examples)
        for argument in operation.cli.arguments:
            _add_table_argument(p, argument)
        if operation.sdk_method == "read_document":
            _add_raw_flag(p)
        p.set_defaults(run=run_graph_command)

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
    p.set_defaults(run=run_graph_command)


def _add_table_argument(parser: Declaration, argument: CliArgument) -> None:
    """One argument of a graph command as the operation table declares it; its value lands in
    the parsed arguments under :func:`dest` (or the positional's name)."""
    options: dict[str, Any] = {"metavar": argument.metavar, "help": argument.help}
    if argument.type == "integer":
        options["type"] = _integer_literal
    elif argument.type == "context-fact":
        options["type"] = context_item
    if argument.positional is not None:
        if argument.repeatable:
            options["nargs"] = "+"
        parser.add_argument(argument.positional, **options)
    else:
        assert argument.flag is not None
        if argument.repeatable:
            options["action"] = "append"
        parser.add_argument(argument.flag, dest=dest(argument), **options)


def _integer_literal(text: str) -> str:
    """CG-CLI-18: an optional ``-`` and ASCII digits (nothing else: ``int()`` would also take
    ``+``, spaces, ``_`` and other scripts' digits), as a JSON integer literal without leading
    zeros; the request is built from the literal, so the graph judges every digit."""
    if _INTEGER.fullmatch(text) is None:
        raise argparse.ArgumentTypeError("must be an integer")
    negative = text.startswith("-")
    digits = text.lstrip("-").lstrip("0") or "0"
    return "-" + digits if negative and digits != "0" else digits


_INTEGER: Final = re.compile(r"-?[0-9]+")


def _add_raw_flag(parser: Declaration) -> None:
    """``read --raw``: an output option of the CLI, not a member of the request."""
    parser.add_argument(
        "--raw",
        action="store_true",
        help="print the document's text only, not the result JSON; e.g. --raw > guide.md",
    )


def run_graph_command(
    args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO
) -> int:
    try:
        tool, arguments = REQUESTS[args.command](args)
    except GraphError as error:  # a JSON text given in argv without one meaning
        write_error(stderr, error)
        return EXIT_FAILED
    raw: bool = getattr(args, "raw", False)
    return _graph_command(config_path(args), tool, arguments, stdin, stdout, stderr, raw=raw)


def _graph_command(
    config: str,
    tool: str,
    arguments: Any,
    stdin: TextIO | None,
    stdout: TextIO,
    stderr: TextIO,
    *,
    raw: bool = False,
) -> int:
    try:
        if runs_in_place(tool):
            result = _call_in_place(config, tool, arguments, stdin)
        else:
            import asyncio  # only a match needs the event loop

            result = asyncio.run(_call_graph(config, tool, arguments, stdin))
    except GraphError as error:
        write_error(stderr, error)
        unknown_tool = error.code is ErrorCode.CG_INPUT_INVALID and tool not in OPERATIONS
        if unknown_tool and is_terminal(stderr):
            # For a person only: a program reading stderr gets exactly the one envelope line.
            tools = ", ".join(OPERATIONS)
            stderr.write(f"hint: the tools are {tools}{did_you_mean(tool, list(OPERATIONS))}\n")
        return EXIT_INTERRUPTED if error.code is ErrorCode.CG_MODEL_CANCELLED else EXIT_FAILED
    # ``read --raw``: the document's text exactly, for a pager or a file.
    stdout.write(result["text"] if raw else dumps(result) + "\n")
    return EXIT_OK


def _call_in_place(config: str, tool: str, arguments: Any, stdin: TextIO | None) -> dict[str, Any]:
    """The call of a tool that :func:`runs_in_place`: no event loop, nothing cancellable.

    The cyclic collector stays off for the command: the process makes one call and exits, and
    its first collection after the load would traverse every object of the graph (0.4 s per
    100,000 capabilities) to free nothing.
    """
    gc.disable()
    graph = CapabilityGraph._open_in_place(config)
    try:
        if isinstance(arguments, ArgumentsFile):
            arguments = arguments.read(tool, _input_budget(run_in_place(_described(graph))), stdin)
        return run_in_place(graph.call(tool, arguments))
    finally:
        run_in_place(graph.close())


async def _call_graph(
    config: str, tool: str, arguments: Any, stdin: TextIO | None
) -> dict[str, Any]:
    """A match, on the event loop: Ctrl-C cancels the model executor's work cleanly."""
    from ..._core.cancel import CancelToken

    graph = await CapabilityGraph.open(config)
    try:
        if isinstance(arguments, ArgumentsFile):
            arguments = arguments.read(tool, _input_budget(await _described(graph)), stdin)
        token = CancelToken()
        with _sigint_cancels(token):
            return await graph.call(tool, arguments, cancel=token)
    finally:
        await graph.close()


async def _described(graph: CapabilityGraph) -> dict[str, Any]:
    # The JSON path: a graph command never builds the SDK's typed results (Pydantic).
    return await graph.call(TOOL_OF_METHOD["describe"], {})


def _input_budget(described: dict[str, Any]) -> int:
    budget: int = described["budgets"]["maxInputBytes"]
    return budget


class _sigint_cancels:
    """While active (main thread only), Ctrl-C cancels ``token`` instead of interrupting."""

    def __init__(self, token: Any) -> None:
        import threading  # with asyncio, which a match imports anyway

        self._token = token
        self._previous: Any = None
        self._active = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> None:
        if self._active:
            import signal

            self._previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        self._token.cancel()

    def __exit__(self, *exc_info: object) -> None:
        if self._active:
            import signal

            signal.signal(signal.SIGINT, self._previous)
