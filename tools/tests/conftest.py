"""Shared fixtures of the tools tests: the spec helpers (``tools/_spec.py``) are importable."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

TOOLS = Path(__file__).resolve().parent.parent
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import _spec  # noqa: E402


@pytest.fixture(scope="session")
def schemas() -> dict[str, dict[str, Any]]:
    return _spec.load_schemas()


@pytest.fixture(scope="session")
def registry(schemas: dict[str, dict[str, Any]]) -> Any:
    return _spec.registry(schemas)
