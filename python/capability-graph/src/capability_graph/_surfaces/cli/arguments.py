"""The argument parser the commands declare their arguments on, and the helpers they share.

:class:`Parser` writes to the given streams, never exits the process, and never repeats a
value the caller typed in a usage message (it may be a key or a secret): it names arguments by
their option or role, and suggests only names of the CLI's own commands, options and choices.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn, Protocol, TextIO

from .base import EXIT_USAGE, PROG, Exit, did_you_mean, is_text

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that writes to the given streams, never exits the process, and never
    repeats a value the caller typed in a usage message (it may be a key or a secret)."""

    def __init__(self, *args: Any, out: TextIO, err: TextIO, **kwargs: Any) -> None:
        self.out = out
        self.err = err
        #: The sub-parser of each command (the whole command line's parser only).
        self.commands: Mapping[str, Parser] = {}
        #: True while the command line is declared (see :meth:`_get_formatter`).
        self.declaring = True
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for each argument declared, only to check its metavar, and
        # a formatter asks the terminal its width, importing shutil (a few milliseconds of every
        # command line). While declaring, the width is not asked: no text is formatted then
        # (the plain formatter checks a metavar as ours does: they differ in descriptions only).
        if self.declaring:
            return argparse.HelpFormatter(self.prog, width=_DECLARING_WIDTH)
        return super()._get_formatter()

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
        argv = list(sys.argv[1:] if args is None else args)
        if self.commands:
            # The CLI's own grammar (CG-CLI-15 .. CG-CLI-19) decides; argparse then reads a
            # command line with one reading only (the command, ``--NAME=VALUE`` options, ``--``
            # and the positional arguments) and converts the values.
            argv = self._canonical(argv)
        parsed, extras = self.parse_known_args(argv, namespace)
        if "--" in extras:
            extras.remove("--")  # the separator the canonical command line added
        for name, value in vars(parsed).items():  # a literal "--" positional, given back
            if value == _LITERAL_SEPARATOR:
                setattr(parsed, name, "--")
            elif isinstance(value, list) and _LITERAL_SEPARATOR in value:
                setattr(parsed, name, ["--" if v == _LITERAL_SEPARATOR else v for v in value])
        if extras:
            # Positional arguments too many (an unknown option was refused before, by _read);
            # reported by the command's parser (its usage), naming no value.
            from ..._maintenance.report import counted as count

            parser = self.commands.get(getattr(parsed, "command", None) or "", self)
            parser.fail(count(len(extras), "unrecognized argument"))
        return parsed

    def _canonical(self, argv: list[str]) -> list[str]:
        """The command line in one reading, or :class:`Exit` (help, version, a usage error)."""
        if not all(is_text(arg) for arg in argv):
            self.fail("an argument is not UTF-8 text")  # CG-CLI-19: before anything else
        leading, rest = _split_at_command(argv, self._option_table())
        for arg in leading:  # CG-CLI-17: the first of --help and --version acts
            if arg in _HELP or arg == "--version":
                return [arg]
        options, _ = self._read(leading, self)  # only options (and a ``--``) precede it
        if not rest:
            self.fail("a COMMAND is required")
        command, rest = rest[0], rest[1:]
        sub = self.commands.get(command)
        if sub is None:
            names = list(self.commands)
            self.fail(
                f"unknown command{did_you_mean(command, names)}; the choices are "
                + ", ".join(names)
            )
        args = [*options, *rest]  # ``--config`` before the command is the command's own
        if any(arg in _HELP for arg in _before_separator(args)):
            return [command, "--help"]
        options, positionals = self._read(args, sub)
        # A positional "--" (one after the separator, CG-CLI-15) is an argument like any other;
        # argparse would take it for a separator and drop it, so it is passed as a token no
        # command line can hold (an argument cannot contain NUL) and given back after.
        positionals = [_LITERAL_SEPARATOR if arg == "--" else arg for arg in positionals]
        return [command, *options, *(["--", *positionals] if positionals else [])]

    def _option_table(self) -> dict[str, argparse.Action]:
        return {name: action for action in self._actions for name in action.option_strings}

    @staticmethod
    def _read(args: list[str], parser: Parser) -> tuple[list[str], list[str]]:
        """The options (as ``--NAME=VALUE`` or ``--NAME``) and the positional arguments of
        ``args`` read with ``parser``'s options (CG-CLI-15, CG-CLI-16)."""
        table = parser._option_table()
        options: list[str] = []
        positionals: list[str] = []
        seen: set[str] = set()
        index = 0
        while index < len(args):
            arg = args[index]
            index += 1
            if arg == "--":
                positionals += args[index:]
                break
            if not option_like(arg):
                positionals.append(arg)
                continue
            name, equals, value = arg.partition("=")
            action = table.get(name)
            if action is None:
                names = [o for o in table if o.startswith("--")]
                parser.fail(f"an option is not recognized{did_you_mean(name, names)}")
            if action.nargs == 0:
                if equals:
                    parser.fail(f"argument {name}: takes no value")
                options.append(name)
            else:
                if not equals:
                    if index == len(args) or option_like(args[index]):
                        parser.fail(f"argument {name}: expected one argument")
                    value = args[index]
                    index += 1
                options.append(f"{name}={value}")
            if name in seen and not isinstance(action, argparse._AppendAction):
                parser.fail(f"argument {name}: may be given once")
            seen.add(name)
        return options, positionals


_HELP: Final = ("-h", "--help")
#: The width of a formatter made while declaring (it formats no text).
_DECLARING_WIDTH: Final = 80
_LITERAL_SEPARATOR: Final = "\x00--"


def option_like(arg: str) -> bool:
    """CG-CLI-15: begins with ``-``, is not ``-`` alone, and no ASCII digit follows the ``-``."""
    return arg.startswith("-") and arg != "-" and arg[1] not in "0123456789"


def _split_at_command(
    argv: list[str], table: dict[str, argparse.Action]
) -> tuple[list[str], list[str]]:
    """The arguments before the command (its options, up to and with a ``--``) and the rest, the
    command first: the first argument that is neither option-like nor an option's value."""
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            return argv[: index + 1], argv[index + 1 :]
        if not option_like(arg):
            break
        action = table.get(arg)
        takes_value = action is not None and action.nargs != 0
        if takes_value and index + 1 < len(argv) and not option_like(argv[index + 1]):
            index += 1
        index += 1
    return argv[:index], argv[index:]


def _before_separator(args: list[str]) -> list[str]:
    return args[: args.index("--")] if "--" in args else args


#: A quoted value in an argparse message (``'text'`` or ``"text"``, as ``repr`` writes them).
_QUOTED: Final = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


class Declaration:
    """A command's arguments, declared: what its family adds (arguments, a mutually exclusive
    group, defaults) is kept, in order, and added to the command's sub-parser when the command
    line needs it (:class:`Commands`). A command line runs one command: making the sub-parsers
    of every command, each with argparse's gettext lookups, cost each command line's start-up.
    """

    def __init__(self) -> None:
        #: (what, group index or None, args, kwargs), in the order they were declared.
        self._steps: list[tuple[str, int | None, tuple[Any, ...], dict[str, Any]]] = []
        self._groups = 0

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        self._steps.append(("argument", None, args, kwargs))

    def add_mutually_exclusive_group(self, **kwargs: Any) -> _GroupDeclaration:
        self._steps.append(("group", self._groups, (), kwargs))
        self._groups += 1
        return _GroupDeclaration(self._steps, self._groups - 1)

    def set_defaults(self, **kwargs: Any) -> None:
        self._steps.append(("defaults", None, (), kwargs))

    def declare_on(self, parser: Parser) -> None:
        """Add what was declared to ``parser``, in the order it was declared."""
        groups: list[Any] = []
        for what, group, args, kwargs in self._steps:
            if what == "group":
                groups.append(parser.add_mutually_exclusive_group(**kwargs))
            elif what == "defaults":
                parser.set_defaults(**kwargs)
            else:
                (parser if group is None else groups[group]).add_argument(*args, **kwargs)


class _GroupDeclaration:
    """A mutually exclusive group of a :class:`Declaration`."""

    def __init__(
        self, steps: list[tuple[str, int | None, tuple[Any, ...], dict[str, Any]]], index: int
    ) -> None:
        self._steps = steps
        self._index = index

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        self._steps.append(("argument", self._index, args, kwargs))


class Commands(Mapping[str, Parser]):
    """The sub-parser of each command, by name in the order the commands were declared; each
    is made (``make``) and given its declared arguments when first asked for."""

    def __init__(self, declared: dict[str, Declaration], make: Callable[[str], Parser]) -> None:
        self._declared = declared
        self._make = make
        self._made: dict[str, Parser] = {}

    def __getitem__(self, name: str) -> Parser:
        parser = self._made.get(name)
        if parser is None:
            declaration = self._declared[name]
            parser = self._made[name] = self._make(name)
            declaration.declare_on(parser)
            parser.declaring = False  # see Parser._get_formatter
        return parser

    def __iter__(self) -> Iterator[str]:
        return iter(self._declared)

    def __len__(self) -> int:
        return len(self._declared)


class AddCommand(Protocol):
    """Declares one command (its help text, then its examples): its arguments are declared on
    what it returns."""

    def __call__(self, name: str, help_text: str, *examples: str) -> Declaration: ...


class RunCommand(Protocol):
    """What a command does with its parsed arguments: the exit status."""

    def __call__(
        self, args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO
    ) -> int: ...


def add_flags(parser: Declaration, *, json_flag: bool, dry_run_flag: bool) -> None:
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
