"""The bottom of the CLI package: what every command needs, and nothing else.

Exit statuses, the two ways a command ends early (:class:`Exit` with a status, :class:`Usage`
with a message), the standard streams as :func:`run` sees them (a write that cannot happen is
exit 74), the error envelope writer and the maintenance report writer.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, TextIO

from ..._core.errors import GraphError
from ..._core.json import dumps

if TYPE_CHECKING:
    from ..._maintenance.report import Report

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

INTERNAL_ERROR: Final = f"{PROG}: internal error (a defect of {PROG}; please report it)\n"


class Exit(Exception):
    """The command is done (``--help``, a usage error already printed): exit with ``status``."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class Usage(Exception):
    """A usage error only found after parsing; ``message`` names no value the caller typed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --- the standard streams -----------------------------------------------------------------------


class StreamUnusable(Exception):
    """A standard stream the command needs is closed or failed (exit 74).

    ``reason`` is printed on stderr, unless ``quiet`` (the reader of stdout went away on purpose,
    as ``| head`` does).
    """

    def __init__(self, reason: str, *, quiet: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.quiet = quiet


def report_unusable(unusable: StreamUnusable, stderr: TextIO) -> int:
    if not unusable.quiet:
        stderr.write(f"{PROG}: error: {unusable.reason}\n")
    return EXIT_IO


class Output:
    """The process's stdout for :func:`run`: a write that cannot happen (the stream is closed,
    the device is full, the reader went away) is :class:`StreamUnusable`, exit 74."""

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
            raise StreamUnusable("standard output is closed: the output is lost")
        try:
            operation(self._stream)
        except BrokenPipeError:
            self.failed = True
            raise StreamUnusable("the reader of standard output went away", quiet=True) from None
        except (OSError, ValueError) as error:
            self.failed = True
            reason = getattr(error, "strerror", None) or "closed"
            raise StreamUnusable(f"cannot write to standard output ({reason})") from None


class Diagnostics:
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
        return self._stream is not None and not self.failed and is_terminal(self._stream)


def occupy_closed_descriptors() -> None:
    """Put the null device on standard descriptors the process started without.

    Otherwise the next file opened (a configuration, a document) would get descriptor 0, 1 or 2,
    and a child process or a stray write could use it as a standard stream. ``sys.stdin`` and
    ``sys.stdout`` stay ``None``: the commands still see those streams as closed.
    """
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            point_at_devnull(descriptor)


def point_at_devnull(descriptor: int) -> None:
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_RDWR)
        if devnull != descriptor:
            os.dup2(devnull, descriptor)
            os.close(devnull)
        os.set_inheritable(descriptor, True)


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


# --- what the commands write --------------------------------------------------------------------


def write_error(stderr: TextIO, error: GraphError) -> None:
    stderr.write(dumps({"ok": False, "error": error.to_json()}) + "\n")


_REPORT_EXIT: Final = {
    "ok": EXIT_OK,
    "planned": EXIT_OK,
    "failed": EXIT_FAILED,
    "conflict": EXIT_CONFLICT,
}

_MARKS: Final = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "skip": "skip"}


def write_report(command: str, report: Report, stdout: TextIO, *, as_json: bool) -> int:
    """A maintenance command's report (``--json``: its JSON), and the exit status it means."""
    if as_json:
        stdout.write(dumps(report.to_json()) + "\n")
    else:
        lines = [f"{PROG} {command}: {report.status}"]
        lines += [f"  [{_MARKS[c.status]}] {c.id}: {c.message}" for c in report.checks]
        lines += [f"  warning: {w}" for w in report.warnings]
        lines += [f"  hint: {h}" for h in report.hints]
        stdout.write("\n".join(lines) + "\n")
    return _REPORT_EXIT[report.status]


def did_you_mean(value: str, names: Sequence[str]) -> str:
    """`` (did you mean NAME?)`` for the closest of our own ``names``, or ``""`` (CG-CLI-20).

    Only a name of ours is printed, never ``value`` (the caller's text).
    """
    import difflib

    folded = {name.casefold(): name for name in names}
    close = difflib.get_close_matches(str(value).casefold(), list(folded), n=1, cutoff=0.6)
    return f" (did you mean {folded[close[0]]}?)" if close else ""


# --- what the commands read ---------------------------------------------------------------------


def config_path(args: argparse.Namespace) -> str:
    """``--config FILE``, else ``$CAPABILITY_GRAPH_CONFIG``, else ``./capability-graph.json``."""
    given: str | None = getattr(args, "config", None)
    if given is not None:
        return given
    return os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG


def is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text (argv and environment bytes that are not UTF-8 arrive
    as lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
