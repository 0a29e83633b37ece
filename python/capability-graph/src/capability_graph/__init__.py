"""Capability Graph: declare what a product can do, and let agents discover it.

One core, four surfaces (SDK, Tool Adapter, MCP server, CLI) and one error type, ``GraphError``.
"""

from ._cancel import CancelToken
from ._errors import GraphError
from ._executors import Executor, MatchJob
from ._generated.taxonomy import CONTRACT_VERSION, ErrorCode, NextAction, Phase
from ._graph import BlockingCapabilityGraph, CapabilityGraph
from ._results import (
    DescribeResult,
    DocumentResult,
    ListResult,
    MatchResult,
    ReloadResult,
    ResolveResult,
)
from ._tools import BlockingToolAdapter, ToolAdapter

#: The distribution's version; the single source (the build backend reads it from here).
__version__ = "0.1.0"

__all__ = [
    "CONTRACT_VERSION",
    "BlockingCapabilityGraph",
    "BlockingToolAdapter",
    "CancelToken",
    "CapabilityGraph",
    "DescribeResult",
    "DocumentResult",
    "ErrorCode",
    "Executor",
    "GraphError",
    "ListResult",
    "MatchJob",
    "MatchResult",
    "NextAction",
    "Phase",
    "ReloadResult",
    "ResolveResult",
    "ToolAdapter",
]
