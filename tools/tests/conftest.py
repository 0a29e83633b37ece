"""Shared fixtures of the tools tests (the tools import by name: tools/ is pytest's pythonpath)."""

from __future__ import annotations

from typing import Any

import _spec
import pytest


@pytest.fixture(scope="session")
def schemas() -> dict[str, dict[str, Any]]:
    return _spec.load_schemas()


@pytest.fixture(scope="session")
def registry(schemas: dict[str, dict[str, Any]]) -> Any:
    return _spec.registry(schemas)
