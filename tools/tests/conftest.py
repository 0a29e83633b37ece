"""Shared fixtures of the tools tests (the tools import by name: tools/ is pytest's pythonpath)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import _spec
import pytest
from generate.base import Repo


@pytest.fixture(scope="session")
def schemas() -> dict[str, dict[str, Any]]:
    return _spec.load_schemas()


@pytest.fixture(scope="session")
def registry(schemas: dict[str, dict[str, Any]]) -> Any:
    return _spec.registry(schemas)


@pytest.fixture
def spec_tree(tmp_path: Path) -> Repo:
    """A copy of spec/capability-graph and of the generated package, for tools/codegen.py to
    check or rewrite without touching the checkout."""
    real = Repo()
    shutil.copytree(real.spec, tmp_path / "spec")
    shutil.copytree(
        real.generated, tmp_path / "generated", ignore=shutil.ignore_patterns("__pycache__")
    )
    return Repo(root=tmp_path, spec=tmp_path / "spec", generated=tmp_path / "generated")
