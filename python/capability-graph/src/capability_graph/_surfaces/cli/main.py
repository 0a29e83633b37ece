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
that is closed or fails (stdout closed, full, or its reader gone; stdin failing while it is
read) is exit status 74, with one line on stderr (none when the reader of stdout went away); a
stdin closed when the command starts reads as empty input. A usage message never repeats what
the caller typed: it names arguments by their option or role, and suggests only names of the
CLI's own commands, options, tools and error codes.

Every command reads argv with one grammar (CG-CLI-15 .. CG-CLI-19, in ``arguments``): long
options in full, ``--NAME=VALUE``, a value never option-like, ``--`` ending the options, an
option given twice a usage error unless repeatable, help first, ``--config`` also before the
command, integers of ASCII digits only, and every argument UTF-8 text.

The package, bottom up: ``base`` (exit statuses, usage errors, the standard streams, the error
and report writers), ``arguments`` (the parser class the commands declare their arguments on),
one module per command family (``graph`` with ``requests`` for the graph commands and
``call``, ``mcp``, ``doctor``, ``init``, ``mcp_install``, ``explain``), ``parser`` (the whole
command line, assembled from them), and here :func:`run` and :func:`main`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO, cast

from .arguments import RunCommand
from .base import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    INTERNAL_ERROR,
    Diagnostics,
    Exit,
    Output,
    StreamUnusable,
    Usage,
    occupy_closed_descriptors,
    point_at_devnull,
    report_unusable,
)
from .parser import build_parser

__all__ = ["main", "run"]


def run(argv: Sequence[str], stdin: TextIO | None, stdout: TextIO, stderr: TextIO) -> int:
    """Run the CLI with ``argv`` (without the program name); return the exit status.

    ``stdin`` is what ``call --arguments-file -`` reads (``None``: standard input is closed, which
    reads as empty input);
    the ``mcp`` command serves this process's own standard streams.
    """
    try:
        return _run(list(argv), stdin, stdout, stderr)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except StreamUnusable as unusable:
        return report_unusable(unusable, stderr)
    except BrokenPipeError:
        raise
    except Exception:  # noqa: BLE001 -- the top-level guard: never a traceback, never its text
        stderr.write(INTERNAL_ERROR)
        return EXIT_INTERNAL


def main() -> NoReturn:
    """The console script: run with ``sys.argv`` and exit with its status."""
    occupy_closed_descriptors()
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(OSError, ValueError):
                reconfigure(encoding="utf-8", errors="backslashreplace")
    stdout = Output(sys.stdout)
    stderr = Diagnostics(sys.stderr)
    try:
        status = run(sys.argv[1:], sys.stdin, cast(TextIO, stdout), cast(TextIO, stderr))
        stdout.flush()
    except StreamUnusable as unusable:
        status = report_unusable(unusable, cast(TextIO, stderr))
    except KeyboardInterrupt:
        status = EXIT_INTERRUPTED
    # What could not be written is dropped: the interpreter's last flush must not fail again.
    for failed, descriptor in ((stdout.failed, 1), (stderr.failed, 2)):
        if failed:
            point_at_devnull(descriptor)
    sys.exit(status)


def _run(argv: list[str], stdin: TextIO | None, stdout: TextIO, stderr: TextIO) -> int:
    parser = build_parser(stdout, stderr)
    try:
        args = parser.parse_args(argv)
    except Exit as done:
        return done.status
    try:
        return _dispatch(args, stdin, stdout, stderr)
    except Usage as usage:
        # A usage error only found after parsing (e.g. --arguments that is not JSON).
        sub = parser.commands[args.command]
        try:
            sub.fail(usage.message)
        except Exit as done:
            return done.status
        raise  # pragma: no cover -- fail() always raises Exit


def _dispatch(
    args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO
) -> int:
    """What the command does, as its sub-parser declared it (:mod:`.parser`)."""
    command: RunCommand = args.run
    return command(args, stdin, stdout, stderr)
