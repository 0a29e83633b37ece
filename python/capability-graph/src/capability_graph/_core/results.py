"""The SDK's public types -- its results with every object in them, the request parts it
accepts, the host configuration and provider definitions -- all generated from
``spec/capability-graph/schemas``, re-exported here and, under the same names, by the package:

- the Pydantic models of ``_generated/models`` (see ``model.ContractModel``): snake_case
  attributes, the JSON form from ``to_json()``;
- the read-only views of ``_generated/views.py`` (see ``model.ContractView``) for the resolve
  result and every object in it: the same attributes and ``to_json()``, built over the JSON
  result in constant time, because validating its thousands of objects into models would cost
  many times the resolve itself.

They are imported on first use (``results.ListResult``, through :mod:`.lazy`), not with this
module: importing the models imports Pydantic, which the JSON path (``call``, used by the CLI
and the MCP server) never needs.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from .lazy import generated_module

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from .._generated.models.describe_result import DescribeResult
    from .._generated.models.list_result import ListResult
    from .._generated.models.match_result import MatchResult
    from .._generated.models.read_document_result import ReadDocumentResult
    from .._generated.models.reload_result import ReloadResult
    from .._generated.models.resolve_request import RelationTraversal
    from .._generated.views import ResolveResult

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

#: The public generated types and the module of each under ``_generated``: the configuration,
#: definitions, results and request parts, exported by the package under their schema names.
_LAZY_MODELS = {
    "Budgets": "models.budgets",
    "Capability": "models.definition",
    "CapabilityDetail": "views",
    "CapabilitySummary": "models.capability_summary",
    "CodexExecutorConfig": "models.config",
    "DocumentBodies": "models.config",
    "DocumentBodiesMode": "models.config",
    "DescribeResult": "models.describe_result",
    "DocumentDeclaration": "models.definition",
    "DocumentMetadata": "views",
    "DocumentPolicy": "models.config",
    "Edge": "views",
    "EffectiveBudgets": "models.budgets",
    "ErrorObject": "models.error",
    "FileDocumentDeclaration": "models.definition",
    "FileDocumentMetadata": "views",
    "FileProviderSource": "models.config",
    "HostConfig": "models.config",
    "InlineProviderSource": "models.config",
    "LexicalExecutorConfig": "models.config",
    "ListResult": "models.list_result",
    "ListStatus": "models.list_result",
    "MatchCandidate": "models.match_candidate",
    "MatchResult": "models.match_result",
    "MatchStatus": "models.match_result",
    "MediaType": "models.document_metadata",
    "ModelConfig": "models.config",
    "ModelInfo": "models.describe_result",
    "OpenAIExecutorConfig": "models.config",
    "ProviderDefinition": "models.definition",
    "ProviderInfo": "models.describe_result",
    "ProviderReloadError": "models.reload_result",
    "ProviderReloadOutcome": "models.reload_result",
    "ProviderReloaded": "models.reload_result",
    "ProviderSource": "models.config",
    "ReadDocumentResult": "models.read_document_result",
    "Relation": "views",
    "RelationDeclaration": "models.definition",
    "RelationKind": "models.definition",
    "RelationTraversal": "models.resolve_request",
    "ReloadFailed": "models.reload_result",
    "ReloadResult": "models.reload_result",
    "ReloadSucceeded": "models.reload_result",
    "ResolveResult": "views",
    "ResolveStatus": "views",
    "Scope": "models.config",
    "ScriptedExecutorConfig": "models.config",
    "ScriptedRaise": "models.config",
    "ScriptedRaiseExceptionStep": "models.config",
    "ScriptedRaiseStep": "models.config",
    "ScriptedReturnStep": "models.config",
    "ScriptedSleepStep": "models.config",
    "ScriptedStep": "models.config",
    "UnresolvedReason": "views",
    "UnresolvedRelation": "views",
    "UrlDocumentDeclaration": "models.definition",
    "UrlDocumentMetadata": "views",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_MODELS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(generated_module(module), name)
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
