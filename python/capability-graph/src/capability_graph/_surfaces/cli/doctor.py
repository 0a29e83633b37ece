"""``capability-graph doctor``: check everything ``open`` checks, plus documents and the
executor's prerequisites, and report each check (``--json``: the report as JSON).

A configuration that cannot be read at all is an error envelope on stderr (exit 1), and the
report on stdout names the cause.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from .arguments import AddCommand, add_flags
from .base import config_path, write_error, write_report

if TYPE_CHECKING:
    from ..._maintenance.report import Report


def add_command(command: AddCommand) -> None:
    p = command(
        "doctor",
        "Check the configuration, sources, relations, documents, executor.",
        "doctor",
        "doctor --config graph.json --json",
    )
    add_flags(p, json_flag=True, dry_run_flag=False)
    p.set_defaults(run=run_doctor)


def run_doctor(
    args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO
) -> int:
    report = _doctor(config_path(args))
    if report.error is not None:
        # An unreadable configuration keeps its envelope; the report on stdout names the cause.
        write_error(stderr, report.error)
    return write_report("doctor", report, stdout, as_json=args.json)


def _doctor(config: str) -> Report:
    """The core's diagnostics of ``config`` (``capability_graph.diagnose``)."""
    from ..._maintenance.diagnose import diagnose

    return diagnose(config)
