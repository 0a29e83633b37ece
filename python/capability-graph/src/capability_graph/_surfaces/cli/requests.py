"""From parsed argv to the tool request of a graph command or of ``call``.

The CLI only turns argv into the request; the core validates it. A JSON text given to the CLI
(``--arguments``, ``--arguments-file``, ``--context KEY:=JSON``) that is not JSON at all is a
usage error; one without one meaning (a duplicate member name, an integer too long to convert)
is the core's ``CG_INPUT_INVALID``.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TextIO

from ..._core.json import MalformedJson, NotPureJson, parse_request_text
from ..._core.operations import invalid_arguments_text, oversized_request
from ..._generated.operations import OPERATION_TABLE, CliArgument, Operation
from .base import Usage

#: A ``--context`` value lies at /context/KEY, depth 2 of the request: its depth counts from
#: there (CG-CONV-11).
_FACT_DEPTH: Final = 2


class JsonText:
    """The JSON text of a ``--context KEY:=JSON`` value, parsed into the request later (by the
    core, which judges what it means)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def context_item(text: str) -> tuple[str, str | JsonText]:
    """``--context KEY=TEXT`` (a string value) or ``KEY:=JSON`` (a typed one)."""
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError("expected KEY=TEXT or KEY:=JSON")
    if key.endswith(":"):
        try:
            parse_request_text(value, depth=_FACT_DEPTH)
        except MalformedJson:
            raise argparse.ArgumentTypeError("the value after := must be JSON") from None
        except NotPureJson:
            pass  # valid JSON without one meaning: the core's CG_INPUT_INVALID, in the request
        return key[:-1], JsonText(value)
    return key, value


def dest(argument: CliArgument) -> str:
    """Where the parsed value of an argument of the operation table lands."""
    return argument.positional or "member_" + argument.member.replace("/", "_")


def _table_request(operation: Operation, args: argparse.Namespace) -> tuple[str, Any]:
    """The request of a graph command: each argument the operation table declares, when given,
    sets its request member (a nested member, e.g. ``relations/depth``, in a nested object)."""
    request: dict[str, Any] = {}
    for argument in operation.cli.arguments:
        value = getattr(args, dest(argument))
        if value is None:
            continue
        if argument.type == "comma-separated":
            value = value.split(",")
        elif argument.type == "integer":
            # The literal as a request text holds it (CG-CLI-18): every digit, judged by the
            # core's rules for request texts (more than 400 digits is CG_INPUT_INVALID).
            value = _parse_request(operation.tool, value, "/" + argument.member)
        elif argument.type == "context-fact":
            value = _context_object(operation.tool, argument.member, value)
        *parents, name = argument.member.split("/")
        target = request
        for parent in parents:
            target = target.setdefault(parent, {})
        target[name] = value
    return operation.tool, request


def _context_object(
    tool: str, member: str, facts: list[tuple[str, str | JsonText]]
) -> dict[str, Any]:
    context: dict[str, Any] = {}
    for key, value in facts:
        if key in context:
            raise Usage("argument --context: a KEY is given twice")
        if isinstance(value, JsonText):
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
        return args.tool, ArgumentsFile(args.arguments_file)
    return args.tool, {}


def _parse_arguments(tool: str, data: bytes, what: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Usage(f"argument {what}: not UTF-8 text") from None
    if text.startswith("\ufeff"):  # CG-CLI-8: a byte order mark is not JSON, as everywhere
        raise Usage(f"argument {what}: a byte order mark is not JSON")
    try:
        _parse_request(tool, text)
    except MalformedJson:
        raise Usage(f"argument {what}: not valid JSON") from None
    # The text itself goes to ``call``, which reads it once (CG-CONV-17): a text holding a JSON
    # string is a request that is not an object, never a second text.
    return text


def _parse_request(tool: str, text: str, pointer: str = "") -> Any:
    """A request (or, under ``pointer``, one value of it) given as JSON text: its value, or the
    core's ``CG_INPUT_INVALID`` when it has no one meaning. :class:`MalformedJson` (not JSON at
    all) is left to the caller: for the CLI it is a usage error."""
    try:
        return parse_request_text(text, pointer, _FACT_DEPTH if pointer else 0)
    except MalformedJson:
        raise
    except NotPureJson as problem:
        raise invalid_arguments_text(tool, problem) from None


class ArgumentsFile:
    """``call --arguments-file``: the request, read with the graph's input budget as a bound.

    Like the configuration, only a regular file is read (a fifo, a device or a directory would
    block or never end), or standard input for ``-``.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def read(self, tool: str, budget: int, stdin: TextIO | None) -> Any:
        from ..._core.config import FileTooLarge, read_bounded_file

        data: bytes | None
        if self.name == "-":
            data = _read_stdin(stdin, budget + 1)
        else:
            try:
                data = read_bounded_file(Path(self.name), budget)
            except FileTooLarge:
                raise oversized_request(tool) from None
            if data is None:
                raise Usage(
                    "argument --arguments-file: not a readable regular file "
                    "(use - for standard input)"
                )
        if len(data) > budget:
            # The file is the serialized request as sent: over the budget, it is too large.
            raise oversized_request(tool)
        return _parse_arguments(tool, data, "--arguments-file")


def _read_stdin(stdin: TextIO | None, limit: int) -> bytes:
    """At most ``limit`` bytes of standard input (``--arguments-file -``): the bytes under a
    text stream that has them (``sys.stdin``), else its text as UTF-8 (``limit`` characters
    are at least ``limit`` bytes, so a text over the limit is still seen as over it)."""
    if stdin is None:  # closed when the command started: it reads as empty input (CG-CLI-7)
        return b""
    try:
        buffer = getattr(stdin, "buffer", None)
        if buffer is not None:
            data: bytes = buffer.read(limit)
            return data
        return stdin.read(limit).encode("utf-8", "surrogatepass")
    except (OSError, ValueError, AttributeError):
        raise Usage("argument --arguments-file: cannot read standard input") from None


#: The request of each graph command (and of ``call``) from its parsed arguments.
REQUESTS: Final[dict[str, Callable[[argparse.Namespace], tuple[str, Any]]]] = {
    **{op.cli.command: functools.partial(_table_request, op) for op in OPERATION_TABLE},
    "call": _call_request,
}
