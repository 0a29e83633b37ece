"""The browser check of the docs session never installs a browser: without one it names the
command to run and fails."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import check_site
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK_SITE = ROOT / "tools" / "check_site.py"


def built_site(folder: Path) -> Path:
    """The smallest site the check accepts: a home page and a search index with the code."""
    (folder / "search").mkdir(parents=True)
    (folder / "index.html").write_text("<!doctype html><title>t</title>", encoding="utf-8")
    docs = [{"location": "errors/CG_MODEL_REFUSED/", "title": "CG_MODEL_REFUSED", "text": ""}]
    (folder / "search" / "search_index.json").write_text(json.dumps({"docs": docs}), "utf-8")
    return folder


def program(folder: Path, name: str) -> None:
    """A fake program on PATH that records that it ran (it must not run)."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f'#!/bin/sh\necho ran >> "{folder}/{name}.ran"\nexit 0\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run_check(site: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK_SITE), "--site", str(site)],
        env={**os.environ, "PATH": str(path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_without_a_browser_it_prints_the_apt_command_and_fails_installing_nothing(
    tmp_path: Path,
) -> None:
    tools = tmp_path / "bin"
    program(tools, "apt-get")
    done = run_check(built_site(tmp_path / "site"), tools)
    sudo = "" if os.geteuid() == 0 else "sudo "
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "check_site: FAILED: no Chromium on PATH (chromium, chromium-browser, google-chrome,"
        " google-chrome-stable); this check installs nothing itself. Install one, then run it"
        " again:",
        f"  {sudo}apt-get update && {sudo}apt-get install -y chromium",
    ]
    assert not (tools / "apt-get.ran").exists()


def test_without_a_browser_or_a_package_manager_it_says_what_to_install(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = run_check(built_site(tmp_path / "site"), empty)
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1] == (
        "  install Chromium or Google Chrome so that `chromium` is on PATH"
    )


@pytest.mark.parametrize("name", ["chromium", "google-chrome"])
def test_a_browser_on_path_is_used(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    program(tools, name)
    monkeypatch.setenv("PATH", str(tools))
    assert check_site.find_chromium() == str(tools / name)
