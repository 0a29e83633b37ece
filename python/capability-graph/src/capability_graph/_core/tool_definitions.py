"""The tool table: the tools of ``spec/capability-graph/tools.json``, generated from the operation
table (``tools/codegen.py``, step ``tools``), as every surface lists them (CG-TOOL-1, CG-MCP-1).

The Tool Adapter and the MCP server both read it here, so neither surface imports the other.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import cache
from typing import Any

from .schemas import load_schema

__all__ = ["tool_definitions", "tool_documents", "tool_names"]


@cache
def tool_documents() -> tuple[Mapping[str, Any], ...]:
    """The tools of the contract, read once and shared: never modify them (copy what you hand
    out)."""
    document = load_schema("tools.json")
    return tuple(document["tools"])


def tool_definitions() -> list[dict[str, Any]]:
    """The tools of the contract (`tools.json`): `name`, `title`, `description`, `inputSchema`,
    `outputSchema`, `annotations` (a fresh deep copy: callers may modify it)."""
    return [copy.deepcopy(dict(tool)) for tool in tool_documents()]


def tool_names() -> tuple[str, ...]:
    """The names of the tools, in the contract's order."""
    return tuple(tool["name"] for tool in tool_documents())
