"""``capability-graph init``: scaffold a configuration, an example provider and a document.

It never overwrites: a file that exists with other content is a conflict (exit 3) and nothing
is written; files are created whole or not at all (:func:`create_new`).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from .arguments import AddCommand, add_flags
from .base import DEFAULT_CONFIG, PROG, Usage, write_report

if TYPE_CHECKING:
    from ..._maintenance.report import CheckStatus, Report, ReportStatus

    #: A check of the report: its id, status and message.
    _Check = tuple[str, CheckStatus, str]


def add_command(command: AddCommand) -> None:
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
    add_flags(p, json_flag=True, dry_run_flag=True)
    p.set_defaults(run=run_init)


def run_init(args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO) -> int:
    config: str | None = getattr(args, "config", None)
    report = _init(args.directory, config, dry_run=args.dry_run)
    return write_report("init", report, stdout, as_json=args.json)


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
    the example provider and its document in ``DIR`` (else the configuration's folder).

    One check per file, in the plan's order ([CG-MAINT-17]); ``--dry-run`` is ``planned`` only
    when a file would be written ([CG-MAINT-19])."""
    from ..._maintenance.report import Report  # imported by the command that runs it

    if config is not None and not config:
        raise Usage("argument --config: the path is empty")
    config_path = Path(config) if config else Path(directory or ".") / DEFAULT_CONFIG
    root = Path(directory) if directory is not None else config_path.parent
    provider_path = root / "providers" / "example.json"
    planned: list[tuple[str, Path, str, bytes]] = [
        (
            "configuration",
            config_path,
            config if config else DEFAULT_CONFIG,
            _json_bytes(_init_config(provider_path, config_path.parent)),
        ),
        ("provider", provider_path, "providers/example.json", _json_bytes(_INIT_PROVIDER)),
        (
            "document",
            root / "providers" / "knowledge" / "getting-started.md",
            "providers/knowledge/getting-started.md",
            _INIT_DOCUMENT.encode("utf-8"),
        ),
    ]
    # What each planned path holds now: nothing, this very file, or something else.
    states = [_state(path, data) for _, path, _, data in planned]
    checks: list[_Check] = []
    for (check_id, _, shown, _), state in zip(planned, states, strict=True):
        if state == "same":
            checks.append((check_id, "ok", f"{shown} already exists with this content"))
        elif state == "differs":
            checks.append(
                (check_id, "fail", f"{shown} already exists and differs: not overwritten")
            )
        elif "differs" in states:
            checks.append((check_id, "skip", "Not written: another file conflicts"))
        else:
            checks.append((check_id, "ok", f"Would create {shown}"))
    status: ReportStatus = "conflict" if "differs" in states else "ok"
    if status == "ok" and "absent" in states:
        status = "planned" if dry_run else _write(planned, states, checks)
    report = Report()
    for check in checks:
        report.check(*check)
    report.status = status
    if status == "ok" and "absent" in states:
        report.hint(f"check the new graph: {PROG} doctor --config {config_path}")
    return report


def _state(path: Path, data: bytes) -> str:
    if not os.path.lexists(path):
        return "absent"
    # A link to a file with this content is that file: nothing to write, nothing overwritten.
    same = path.is_file() and _read_small(path) == data
    return "same" if same else "differs"


def _write(
    planned: list[tuple[str, Path, str, bytes]],
    states: list[str],
    checks: list[_Check],
) -> ReportStatus:
    """Create the absent files in order, updating their checks; the report's status. After a
    file that cannot be written, the later ones are not attempted (``skip``)."""
    from ..._core.files import Clobbered, create_new

    for index, ((check_id, path, shown, data), state) in enumerate(
        zip(planned, states, strict=True)
    ):
        if state != "absent":
            continue
        try:
            create_new(path, data)
        except (Clobbered, OSError) as error:
            if isinstance(error, Clobbered):
                checks[index] = (check_id, "fail", f"{shown} appeared meanwhile: not overwritten")
            else:
                reason = error.strerror or "error"
                checks[index] = (check_id, "fail", f"Cannot create {shown}: {reason}")
            for later in range(index + 1, len(planned)):
                if states[later] == "absent":
                    checks[later] = (
                        planned[later][0],
                        "skip",
                        "Not written: an earlier file failed",
                    )
            return "conflict" if isinstance(error, Clobbered) else "failed"
        checks[index] = (check_id, "ok", f"Created {shown}")
    return "ok"


def _init_config(provider_path: Path, config_folder: Path) -> dict[str, Any]:
    """The scaffold's configuration, naming the provider file relative to its own folder."""
    try:
        where = Path(os.path.relpath(provider_path, config_folder)).as_posix()
    except ValueError:  # another drive (Windows): no relative path exists
        where = Path(os.path.abspath(provider_path)).as_posix()
    return {**_INIT_CONFIG, "providers": [{"path": where}]}


def _read_small(path: Path) -> bytes | None:
    """A regular file's bytes (at most 1 MiB; a fifo or a device is never opened to block)."""
    from ..._core.config import FileTooLarge, read_bounded_file

    try:
        return read_bounded_file(path, 1024 * 1024)
    except FileTooLarge:
        return None
