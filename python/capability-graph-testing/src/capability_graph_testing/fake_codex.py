"""A fake ``codex`` program for the codex executor tests.

:func:`install_fake_codex` writes an executable ``codex`` (a Python script) into a folder that the
test puts first on PATH. Its behaviour comes from ``behavior.json`` next to it; every call is
logged to ``calls.jsonl`` (argv, cwd, the cwd's entries, stdin, the output schema it was given)
and the pids of an ``exec`` run (itself and a child it spawns) go to ``pids.json``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCRIPT = """#!{python}
import json, os, signal, subprocess, sys, time

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "behavior.json")) as f:
    behavior = json.load(f)
args = sys.argv[1:]
record = {{"argv": args, "cwd": os.getcwd(), "cwd_entries": sorted(os.listdir(os.getcwd()))}}
if args[:1] == ["exec"]:
    record["stdin"] = sys.stdin.read()
    if "--output-schema" in args:
        with open(args[args.index("--output-schema") + 1]) as f:
            record["schema"] = json.load(f)
with open(os.path.join(here, "calls.jsonl"), "a") as f:
    f.write(json.dumps(record) + "\\n")

if args == ["--version"]:
    sys.stdout.write(behavior.get("version", "codex-cli 0.50.0") + "\\n")
    sys.exit(behavior.get("version_exit", 0))
if args[:1] == ["sandbox"]:
    sys.stdout.write(behavior.get("sandbox_output", ""))
    sys.exit(behavior.get("sandbox_exit", 0))
if args[:1] != ["exec"]:
    sys.exit(2)

run = behavior.get("exec", {{}})
if run.get("ignore_term"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
pids = [os.getpid()]
if run.get("child"):
    code = "import signal, time; "
    if {ignore}:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    # The child inherits stdout (it holds the pipe open) unless "child_stdout" is "devnull".
    out = subprocess.DEVNULL if run.get("child_stdout") == "devnull" else None
    child = subprocess.Popen([sys.executable, "-c", code + "time.sleep(60)"], stdout=out)
    pids.append(child.pid)
with open(os.path.join(here, "pids.json"), "w") as f:
    json.dump(pids, f)
time.sleep(run.get("sleep", 0))
sys.stdout.write(run.get("output", ""))
sys.stdout.flush()
answer_path = args[args.index("--output-last-message") + 1]
if "last_message_link" in run:  # a symbolic link planted where the answer goes
    os.symlink(run["last_message_link"], answer_path)
elif run.get("last_message_fifo"):  # a fifo nobody writes: reading it would block
    os.mkfifo(answer_path)
elif "last_message" in run:
    with open(answer_path, "w") as f:
        f.write(run["last_message"])
sys.exit(run.get("exit", 0))
"""


@dataclass
class FakeCodex:
    folder: Path

    def behave(self, **behavior: Any) -> None:
        (self.folder / "behavior.json").write_text(json.dumps(behavior), encoding="utf-8")

    def answer(self, output: Any, **run: Any) -> None:
        text = output if isinstance(output, str) else json.dumps(output)
        self.behave(exec={"last_message": text, **run})

    def calls(self) -> list[dict[str, Any]]:
        log = self.folder / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]

    def pids(self) -> list[int]:
        pids: list[int] = json.loads((self.folder / "pids.json").read_text(encoding="utf-8"))
        return pids

    def touch(self) -> None:
        """Change the binary's identity (mtime and size), as an upgrade would."""
        binary = self.folder / "codex"
        binary.write_text(binary.read_text(encoding="utf-8") + "\n# upgraded\n", encoding="utf-8")


def install_fake_codex(folder: Path, *, ignore_term_in_child: bool = False) -> FakeCodex:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "codex"
    script.write_text(
        SCRIPT.format(python=sys.executable, ignore=str(ignore_term_in_child)), encoding="utf-8"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    fake = FakeCodex(folder)
    fake.behave()
    return fake


def path_with(folder: Path) -> str:
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
