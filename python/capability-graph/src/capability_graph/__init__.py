"""Capability Graph: declare what a product can do, and let agents discover it.

One core, four surfaces (SDK, Tool Adapter, MCP server, CLI) and one error type, ``GraphError``.
"""

from ._errors import GraphError
from ._generated.taxonomy import CONTRACT_VERSION, ErrorCode, NextAction, Phase

__all__ = [
    "CONTRACT_VERSION",
    "ErrorCode",
    "GraphError",
    "NextAction",
    "Phase",
]
