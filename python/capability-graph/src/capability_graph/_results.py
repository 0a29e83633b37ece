"""The SDK's public types -- its results with every object in them, the request parts it
accepts, the host configuration and provider definitions: the models generated from
``spec/capability-graph/schemas`` (see ``_model.ContractModel``), re-exported here and, under the
same names, by the package.

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

#: The public generated models and the module of each under ``_generated.models``: the
#: configuration, definitions, results and request parts, exported by the package under their
#: schema names.
_LAZY_MODELS = {
    "Budgets": "budgets",
    "Capability": "definition",
    "CapabilityDetail": "capability_detail",
    "CapabilitySummary": "capability_summary",
    "CodexExecutorConfig": "config",
    "DocumentBodies": "config",
    "DocumentBodiesMode": "config",
    "DescribeResult": "describe_result",
    "DocumentDeclaration": "definition",
    "DocumentMetadata": "document_metadata",
    "DocumentPolicy": "config",
    "Edge": "resolve_result",
    "EffectiveBudgets": "budgets",
    "ErrorObject": "error",
    "FileDocumentDeclaration": "definition",
    "FileDocumentMetadata": "document_metadata",
    "FileProviderSource": "config",
    "HostConfig": "config",
    "InlineProviderSource": "config",
    "LexicalExecutorConfig": "config",
    "ListResult": "list_result",
    "ListStatus": "list_result",
    "MatchCandidate": "match_candidate",
    "MatchResult": "match_result",
    "MatchStatus": "match_result",
    "MediaType": "document_metadata",
    "ModelConfig": "config",
    "ModelInfo": "describe_result",
    "OpenAIExecutorConfig": "config",
    "ProviderDefinition": "definition",
    "ProviderInfo": "describe_result",
    "ProviderReloadError": "reload_result",
    "ProviderReloadOutcome": "reload_result",
    "ProviderReloaded": "reload_result",
    "ProviderSource": "config",
    "ReadDocumentResult": "read_document_result",
    "Relation": "capability_detail",
    "RelationDeclaration": "definition",
    "RelationKind": "definition",
    "RelationTraversal": "resolve_request",
    "ReloadFailed": "reload_result",
    "ReloadResult": "reload_result",
    "ReloadSucceeded": "reload_result",
    "ResolveResult": "resolve_result",
    "ResolveStatus": "resolve_result",
    "Scope": "config",
    "ScriptedExecutorConfig": "config",
    "ScriptedRaise": "config",
    "ScriptedRaiseExceptionStep": "config",
    "ScriptedRaiseStep": "config",
    "ScriptedReturnStep": "config",
    "ScriptedSleepStep": "config",
    "ScriptedStep": "config",
    "UnresolvedReason": "resolve_result",
    "UnresolvedRelation": "resolve_result",
    "UrlDocumentDeclaration": "definition",
    "UrlDocumentMetadata": "document_metadata",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_MODELS.get(name)
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
