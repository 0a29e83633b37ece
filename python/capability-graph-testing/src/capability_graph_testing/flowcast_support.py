"""Helpers for the flowcast tests: process probes, git, fake CLIs (imported by the tests and by
conftest)."""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[4]
SPEC_DIR = REPO_ROOT / "spec" / "flowcast"
VECTORS_DIR = REPO_ROOT / "conformance" / "vectors" / "flowcast"


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie is not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat_line = f.read()
    except OSError:
        return False
    return stat_line[stat_line.rfind(b")") + 2 :].split()[0] != b"Z"


def _first_lines(path: Path, count: int) -> list[str] | None:
    """The first ``count`` lines of ``path``, or None while it does not have them."""
    if path.exists():
        lines = path.read_text().split()
        if len(lines) >= count:
            return lines[:count]
    return None


def wait_for_lines(path: Path, count: int, timeout: float = 5.0) -> list[str]:
    """The first ``count`` lines of ``path`` once it has them (polling; a process writes it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = _first_lines(path, count)
        if lines is not None:
            return lines
        time.sleep(0.01)
    raise AssertionError(f"{path} never got {count} lines")


async def wait_for_lines_async(path: Path, count: int, timeout: float = 5.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = _first_lines(path, count)
        if lines is not None:
            return lines
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never got {count} lines")


TREE_SCRIPT = "echo $$ > {pids}; sleep 30 & echo $! >> {pids}; sleep 30 & echo $! >> {pids}; wait"
"""A shell with two children, recording the three pids; it would run for 30 s."""


def tree_script(pids: Path) -> str:
    return TREE_SCRIPT.format(pids=pids)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


class FakeBin:
    """A folder of fake CLIs, first on PATH."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, name: str, body: str) -> Path:
        """A POSIX shell script ``name`` with ``body``."""
        script = self.path / name
        script.write_text("#!/bin/sh\n" + body)
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return script

    def add_python(self, name: str, body: str) -> Path:
        script = self.path / name
        script.write_text(f"#!{sys.executable}\n" + body)
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return script


Twin = Callable[..., Any]
