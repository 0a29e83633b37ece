"""Shared fixtures for the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from capability_graph_testing.surfaces import MATCHED, scripted, write_graph


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A graph on disk whose model executor matches (one per test module)."""
    return write_graph(tmp_path_factory.mktemp("cli"), model=scripted({"return": MATCHED}))
