"""The codegen pipeline: everything in the repository that is generated from ``spec/``, in one
run with one dependency order.

``python tools/codegen.py`` writes every step's outputs (and removes the ones whose source is
gone); ``python tools/codegen.py --check`` writes nothing and exits 1 on any drift -- a changed
file, a missing one (a new source) or an unexpected one (a removed source) -- showing the diff.
``--step NAME`` (repeatable) runs some steps only (each still reads what the steps before it
generate).

The steps, in ``STEPS`` order (each reads only sources and the outputs of steps before it):

1. ``enums``       taxonomy.json -> spec/capability-graph/schemas/enums.schema.json
2. ``models``      schemas -> capability_graph/_generated/models/ (datamodel-code-generator:
                   Pydantic models)
3. ``typeddicts``  schemas -> capability_graph/_generated/typeddicts/ (datamodel-code-generator:
                   TypedDicts, for the results the SDK returns as JSON)
4. ``tools``       operations.json + schemas -> spec/capability-graph/tools.json
5. ``taxonomy``    taxonomy.json -> capability_graph/_generated/taxonomy.py
6. ``operations``  operations.json + schemas -> capability_graph/_generated/operations.py
7. ``handlers``    operations.json -> capability_graph/_core/operations/handlers.py (the
                   handler registry of the core's dispatch)
8. ``blocking``    capability_graph/_core/graph.py (the async class, read as source)
                   -> capability_graph/_surfaces/sdk/blocking_graph.py (BlockingCapabilityGraph)
9. ``validators``  schemas + operations.json -> capability_graph/_generated/validators/
10. ``defaults``    schemas -> capability_graph/_generated/defaults.py (defaults and limits)
11. ``lexical-unicode`` the Unicode 15.0.0 character database (Python 3.12 only)
                   -> spec/capability-graph/lexical-unicode.json; on another Python it checks
                   the committed file's structure only (``tools/generate/lexical_unicode.py``)
12. ``docs``       all of the above + spec/*.md + the suite -> docs/ pages, mkdocs.yml nav

Adding a step is one module in ``tools/generate/`` that exposes a ``Step`` and one entry in
``STEPS``. The spec and the conformance vectors are not copied anywhere: the packages that ship
them take them at build time (``hatch_build.py`` of each package).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import importlib
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from generate.base import GenerationError, Repo, Step
from generate.blocking import BLOCKING
from generate.defaults import DEFAULTS
from generate.lexical_unicode import LEXICAL_UNICODE
from generate.models import MODELS
from generate.operations import HANDLERS, OPERATIONS, TOOLS
from generate.registry import ENUMS, TAXONOMY
from generate.validators import VALIDATORS
from generate.views import VIEWS


def _docs(repo: Repo) -> dict[Path, str]:
    # Imported when the step runs: the docs import the generated taxonomy, which the steps
    # before it may just have rewritten, and need the installed packages, which the steps
    # before it do not (the nox ``spec`` session runs the enums step with the codegen tools only).
    return importlib.import_module("generate.docs").docs_files(repo)  # type: ignore[no-any-return]


def _docs_owned(repo: Repo) -> list[Path]:
    return list(importlib.import_module("generate.docs").owned(repo))


#: The steps in dependency order (see the module docstring).
STEPS: tuple[Step, ...] = (
    ENUMS,
    MODELS,
    VIEWS,
    TOOLS,
    TAXONOMY,
    OPERATIONS,
    HANDLERS,
    BLOCKING,
    VALIDATORS,
    DEFAULTS,
    LEXICAL_UNICODE,
    Step("docs", _docs, _docs_owned),
)


def _diff(old: str, new: str, label: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"{label} (committed)",
        tofile=f"{label} (generated)",
    )
    return "".join(lines)


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def run(repo: Repo, *, check: bool, steps: Sequence[str] = ()) -> int:
    """Run the pipeline (or the named ``steps``) over ``repo``; 0 when everything is (now) in
    sync, 1 on drift under ``check`` or when a source is invalid."""
    unknown = sorted(set(steps) - {step.name for step in STEPS})
    if unknown:
        print(f"codegen: no step {', '.join(unknown)}", file=sys.stderr)
        return 1
    repo = dataclasses.replace(repo, pending={})
    problems: list[str] = []
    diffs: list[str] = []
    for step in STEPS:
        if steps and step.name not in steps:
            continue
        try:
            expected = step.render(repo)
        except GenerationError as error:
            print(f"codegen: {step.name}: {error}", file=sys.stderr)
            return 1
        repo.pending.update(expected)  # what the later steps read
        changed = 0
        for path in sorted(set(step.owned(repo)) - set(expected)):
            changed += 1
            problems.append(f"unexpected: {repo.relative(path)} (its source is gone)")
            if not check:
                path.unlink()
                shutil.rmtree(path.parent / "__pycache__", ignore_errors=True)
                print(f"removed {repo.relative(path)}")
        for path, text in expected.items():
            current = _read(path)
            if current == text:
                continue
            changed += 1
            label = repo.relative(path)
            if current is None:
                problems.append(f"missing: {label} (a new source)")
            else:
                problems.append(f"changed: {label} (differs from its sources)")
                diffs.append(_diff(current, text, label))
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                print(f"wrote {label}")
        print(f"codegen: {step.name}: {len(expected)} files, {changed} out of date")
    if check and problems:
        print("".join(diffs), file=sys.stderr)
        print("\n".join(problems), file=sys.stderr)
        print(
            f"codegen: {len(problems)} generated file(s) out of date; "
            "run `python tools/codegen.py`",
            file=sys.stderr,
        )
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on drift, write nothing")
    parser.add_argument(
        "--step",
        action="append",
        default=[],
        choices=[step.name for step in STEPS],
        help="run this step only (repeatable); default: every step",
    )
    args = parser.parse_args(argv)
    return run(Repo(), check=args.check, steps=args.step)


if __name__ == "__main__":
    sys.exit(main())
