"""Shared fixtures: real git repositories, fake agent CLIs on PATH, twinned calls."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import FakeBin, Twin, git


@pytest.fixture(autouse=True)
def _isolated_git(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """git with a fixed identity and no user or system configuration."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Flowcast Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "flowcast@example.invalid")
    monkeypatch.delenv("FLOWCAST_DRY_RUN", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit (README.md) on branch main."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def empty_repo(tmp_path: Path) -> Path:
    """A git repository without any commit."""
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeBin:
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', os.defpath)}")
    return FakeBin(folder)


@pytest.fixture(params=["async", "sync"])
def twin(request: pytest.FixtureRequest) -> Twin:
    """Call ``flowcast.NAME`` under asyncio.run, or its blocking twin ``flowcast.NAME_sync``."""

    def call(name: str, *args: Any, **kwargs: Any) -> Any:
        if request.param == "async":
            return asyncio.run(getattr(flowcast, name)(*args, **kwargs))
        return getattr(flowcast, f"{name}_sync")(*args, **kwargs)

    return call
