"""The SDK's public result types, and the request parts it accepts: the models generated from
``spec/capability-graph/schemas`` (see ``_model.ContractModel``), re-exported here.

They are imported on first use (``_results.ListResult``), not with this module: importing them
imports Pydantic, which the JSON path (``call``, used by the CLI and the MCP server) never needs.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from ._generated.models.describe_result import DescribeResult
    from ._generated.models.list_result import ListResult
    from ._generated.models.match_result import MatchResult
    from ._generated.models.read_document_result import ReadDocumentResult
    from ._generated.models.reload_result import ReloadResult
    from ._generated.models.resolve_request import RelationTraversal
    from ._generated.models.resolve_result import ResolveResult

__all__ = [
    "DescribeResult",
    "ListResult",
    "MatchResult",
    "ReadDocumentResult",
    "RelationTraversal",
    "ReloadResult",
    "ResolveResult",
    "reload_result",
]

#: Each name's module under ``_generated.models``.
_MODULES = {
    "DescribeResult": "describe_result",
    "ListResult": "list_result",
    "MatchResult": "match_result",
    "ReadDocumentResult": "read_document_result",
    "RelationTraversal": "resolve_request",
    "ReloadResult": "reload_result",
    "ResolveResult": "resolve_result",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__package__}._generated.models.{module}"), name)
    globals()[name] = value
    return value


@cache
def _reload_adapter() -> TypeAdapter[ReloadResult]:
    from pydantic import TypeAdapter

    adapter: TypeAdapter[ReloadResult] = TypeAdapter(__getattr__("ReloadResult"))
    return adapter


def reload_result(data: dict[str, Any]) -> ReloadResult:
    """The reload outcome (``ReloadSucceeded`` or ``ReloadFailed``, told apart by ``ok``)."""
    return _reload_adapter().validate_python(data)
