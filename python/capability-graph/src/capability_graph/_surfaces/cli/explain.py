"""``capability-graph explain [CODE]``: what an error code means and what to do about it (all
codes without CODE); the same generated content as the error reference pages
(``docs/errors/CODE.md``)."""

from __future__ import annotations

import argparse
import os
from typing import TextIO

from ..._core.json import dumps
from ..._generated.taxonomy import ErrorCode
from .arguments import AddCommand, add_flags
from .base import EXIT_OK, PROG, Usage, did_you_mean


def add_command(command: AddCommand) -> None:
    p = command(
        "explain",
        "Explain an error code (all codes without CODE).",
        "explain",
        "explain cg_config_invalid --json",
    )
    p.add_argument(
        "code", nargs="?", metavar="CODE", help="an error code, any case; e.g. CG_INPUT_INVALID"
    )
    add_flags(p, json_flag=True, dry_run_flag=False)
    p.set_defaults(run=run_explain)


def run_explain(
    args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO
) -> int:
    from ..._maintenance.explain import (
        docs_site,
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
    # CG-CLI-13: only ASCII letters are folded (a non-ASCII text is no code: "ı".upper() is
    # "I"), and nothing is trimmed.
    given: str = args.code
    try:
        code = lookup(given.upper() if given.isascii() and given.strip() == given else "")
    except ValueError:
        codes = [known.value for known in ErrorCode]
        raise Usage(
            f"unknown error code{did_you_mean(args.code.strip(), codes)}; "
            f"run '{PROG} explain' to list them"
        ) from None
    if args.json:
        stdout.write(dumps(explain_json(code)) + "\n")
    else:
        stdout.write(explain_text(code, site=docs_site(os.environ)))
    return EXIT_OK
