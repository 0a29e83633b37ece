"""The argument parser the commands declare their arguments on, and the helpers they share.

:class:`Parser` writes to the given streams, never exits the process, and never repeats a
value the caller typed in a usage message (it may be a key or a secret): it names arguments by
their option or role, and suggests only names of the CLI's own commands, options and choices.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn, Protocol, TextIO

from .._report import counted as count
from ._base import EXIT_USAGE, PROG, Exit, did_you_mean

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that writes to the given streams, never exits the process, and never
    repeats a value the caller typed in a usage message (it may be a key or a secret)."""

    def __init__(self, *args: Any, out: TextIO, err: TextIO, **kwargs: Any) -> None:
        self.out = out
        self.err = err
        self.commands: dict[str, Parser] = {}
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if message:
            (self.out if file is None or file is sys.stdout else self.err).write(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self.err.write(message)
        raise Exit(status)

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
                f"unknown {what}{did_you_mean(value, names)}; the choices are " + ", ".join(names),
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
                    and (suggestion := did_you_mean(extra.partition("=")[0], options))
                ),
                "",
            )
            parser.fail(f"{count(len(extras), 'unrecognized argument')}{hint}")
        return parsed


#: A quoted value in an argparse message (``'text'`` or ``"text"``, as ``repr`` writes them).
_QUOTED: Final = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


class AddCommand(Protocol):
    """Adds the sub-parser of one command (its help text, then its examples) and returns it."""

    def __call__(self, name: str, help_text: str, *examples: str) -> Parser: ...


class RunCommand(Protocol):
    """What a command does with its parsed arguments: the exit status."""

    def __call__(
        self, args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO
    ) -> int: ...


def add_flags(parser: argparse.ArgumentParser, *, json_flag: bool, dry_run_flag: bool) -> None:
    """A maintenance command's output options: ``--json`` and ``--dry-run``."""
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
