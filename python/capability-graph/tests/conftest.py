"""Shared fixtures for the capability_graph tests."""

from __future__ import annotations

from typing import Any

import pytest

from capability_graph_testing.common import SPEC, load_json


@pytest.fixture(scope="session")
def taxonomy() -> dict[str, Any]:
    data: dict[str, Any] = load_json(SPEC / "taxonomy.json")
    return data
