"""Run the README's "Use it" steps as written, on a fresh copy of the repository.

The block between the README's ``[start:use-python]`` and ``[end:use-python]`` markers (the
Quick start page includes the same block) holds shell commands and one Python program. Each
command runs with ``sh -c`` in a copy of the tracked files (so a local ``.venv`` or build output
cannot help), a command that is not the install must print one JSON result, and the program,
saved under the name its block gives, must print the quickstart graph's capabilities. Exit 1
with the failing step named. The ``package`` nox session runs it.

    python tools/check_readme.py
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- --8<-- [start:use-python] -->", "<!-- --8<-- [end:use-python] -->"
STEP_TIMEOUT_S = 600
BLOCK = re.compile(r'^```(\w+)(?: title="([^"]+)")?\n(.*?)^```$', re.MULTILINE | re.DOTALL)


class Failure(Exception):
    """A step of the README that did not do what it says."""


def use_it_blocks(readme: str) -> list[tuple[str, str, str]]:
    """(language, title, text) of each fenced block between the markers."""
    if START not in readme or END not in readme:
        raise Failure("the README has no use-python block between its markers")
    section = readme[readme.index(START) : readme.index(END)]
    return [(m.group(1), m.group(2) or "", m.group(3)) for m in BLOCK.finditer(section)]


def tracked_copy(target: Path) -> None:
    """The working tree's tracked files (as they are now) under ``target``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    ).stdout
    for name in listed.decode("utf-8").split("\0"):
        source = ROOT / name
        if name and source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def run(step: str, argv: list[str], cwd: Path) -> str:
    done = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        raise Failure(f"{step}: exit {done.returncode}\n{done.stdout}{done.stderr}")
    return done.stdout


def check(work: Path) -> int:
    blocks = use_it_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    commands = [
        line
        for language, _, text in blocks
        if language == "sh"
        for line in text.splitlines()
        if line.strip() and not line.startswith("#")
    ]
    programs = [(title, text) for language, title, text in blocks if language == "python"]
    if not commands or len(programs) != 1 or not programs[0][0]:
        raise Failure("the use-python block needs shell commands and one titled Python program")
    for command in commands:
        output = run(command, ["sh", "-c", command], work)
        if "pip install" not in command:
            json.loads(output)  # one JSON result on stdout
    title, program = programs[0]
    (work / title).write_text(program, encoding="utf-8")
    printed = run(title, [str(work / ".venv" / "bin" / "python"), title], work)
    if "acme::route.validation" not in printed:
        raise Failure(f"{title} printed {printed!r}")
    return len(commands)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="cg-readme-") as folder:
        work = Path(folder)
        tracked_copy(work)
        try:
            count = check(work)
        except (Failure, ValueError, subprocess.TimeoutExpired) as problem:
            print(f"check_readme: {problem}", file=sys.stderr)
            return 1
    print(f"check_readme: ok ({count} commands and the Python program of the README's Use it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
