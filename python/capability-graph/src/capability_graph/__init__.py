"""Capability Graph: declare what a product can do, and let agents discover it.

One core, four surfaces (SDK, Tool Adapter, MCP server, CLI) and one error type, ``GraphError``.
The SDK's types are the models generated from ``spec/capability-graph/schemas``, exported here
under their schema names: the host configuration that ``CapabilityGraph.open`` accepts
(``HostConfig`` and its parts), provider definitions, the results of the operations with every
object they hold, and the request parts the operations accept (``RelationTraversal``).
"""

import inspect
from typing import TYPE_CHECKING, Any

from ._core import results as _results
from ._core.cancel import CancelToken
from ._core.errors import GraphError
from ._core.executors import Executor, MatchJob
from ._core.graph import CapabilityGraph, GraphOpening
from ._core.results import _LAZY_MODELS
from ._generated.taxonomy import CONTRACT_VERSION, ErrorCode, NextAction, Phase
from ._maintenance.diagnose import diagnose
from ._maintenance.report import Check, CheckStatus, Report
from ._surfaces.sdk.blocking_graph import BlockingCapabilityGraph
from ._surfaces.tools import (
    BlockingToolAdapter,
    ToolAdapter,
    anthropic_tools,
    openai_chat_tools,
    openai_responses_tools,
    tool_definitions,
)

if TYPE_CHECKING:
    from ._generated.models.budgets import Budgets, EffectiveBudgets
    from ._generated.models.capability_summary import CapabilitySummary
    from ._generated.models.config import (
        CodexExecutorConfig,
        DocumentBodies,
        DocumentBodiesMode,
        DocumentPolicy,
        FileProviderSource,
        HostConfig,
        InlineProviderSource,
        LexicalExecutorConfig,
        ModelConfig,
        OpenAIExecutorConfig,
        ProviderSource,
        Scope,
        ScriptedExecutorConfig,
        ScriptedRaise,
        ScriptedRaiseExceptionStep,
        ScriptedRaiseStep,
        ScriptedReturnStep,
        ScriptedSleepStep,
        ScriptedStep,
    )
    from ._generated.models.definition import (
        Capability,
        DocumentDeclaration,
        FileDocumentDeclaration,
        ProviderDefinition,
        RelationDeclaration,
        RelationKind,
        UrlDocumentDeclaration,
    )
    from ._generated.models.describe_result import DescribeResult, ModelInfo, ProviderInfo
    from ._generated.models.document_metadata import MediaType
    from ._generated.models.error import ErrorObject
    from ._generated.models.list_result import ListResult, ListStatus
    from ._generated.models.match_candidate import MatchCandidate
    from ._generated.models.match_result import MatchResult, MatchStatus
    from ._generated.models.read_document_result import ReadDocumentResult
    from ._generated.models.reload_result import (
        ProviderReloaded,
        ProviderReloadError,
        ProviderReloadOutcome,
        ReloadFailed,
        ReloadResult,
        ReloadSucceeded,
    )
    from ._generated.models.resolve_request import RelationTraversal
    from ._generated.views import (
        CapabilityDetail,
        DocumentMetadata,
        Edge,
        FileDocumentMetadata,
        Relation,
        ResolveResult,
        ResolveStatus,
        UnresolvedReason,
        UnresolvedRelation,
        UrlDocumentMetadata,
    )


def __getattr__(name: str) -> Any:
    # The generated models are imported on first use (see _results): importing them imports
    # Pydantic, which the CLI's start-up and the JSON path never need.
    if name not in _LAZY_MODELS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_results, name)
    globals()[name] = value
    return value


#: The distribution's version; the single source (the build backend reads it from here).
__version__ = "0.1.0"

__all__ = [
    "CONTRACT_VERSION",
    "BlockingCapabilityGraph",
    "BlockingToolAdapter",
    "Budgets",
    "CancelToken",
    "Capability",
    "CapabilityDetail",
    "CapabilityGraph",
    "CapabilitySummary",
    "Check",
    "CheckStatus",
    "CodexExecutorConfig",
    "DescribeResult",
    "DocumentBodies",
    "DocumentBodiesMode",
    "DocumentDeclaration",
    "DocumentMetadata",
    "DocumentPolicy",
    "Edge",
    "EffectiveBudgets",
    "ErrorCode",
    "ErrorObject",
    "Executor",
    "FileDocumentDeclaration",
    "FileDocumentMetadata",
    "FileProviderSource",
    "GraphError",
    "GraphOpening",
    "HostConfig",
    "InlineProviderSource",
    "LexicalExecutorConfig",
    "ListResult",
    "ListStatus",
    "MatchCandidate",
    "MatchJob",
    "MatchResult",
    "MatchStatus",
    "MediaType",
    "ModelConfig",
    "ModelInfo",
    "NextAction",
    "OpenAIExecutorConfig",
    "Phase",
    "ProviderDefinition",
    "ProviderInfo",
    "ProviderReloadError",
    "ProviderReloadOutcome",
    "ProviderReloaded",
    "ProviderSource",
    "ReadDocumentResult",
    "Relation",
    "RelationDeclaration",
    "RelationKind",
    "RelationTraversal",
    "ReloadFailed",
    "ReloadResult",
    "ReloadSucceeded",
    "Report",
    "ResolveResult",
    "ResolveStatus",
    "Scope",
    "ScriptedExecutorConfig",
    "ScriptedRaise",
    "ScriptedRaiseExceptionStep",
    "ScriptedRaiseStep",
    "ScriptedReturnStep",
    "ScriptedSleepStep",
    "ScriptedStep",
    "ToolAdapter",
    "UnresolvedReason",
    "UnresolvedRelation",
    "UrlDocumentDeclaration",
    "UrlDocumentMetadata",
    "anthropic_tools",
    "diagnose",
    "openai_chat_tools",
    "openai_responses_tools",
    "tool_definitions",
]


def _show_under_the_package_name() -> None:
    """Tracebacks, reprs and ``help()`` name the classes as users import them
    (``capability_graph.GraphError``, not ``capability_graph._errors.GraphError``).

    The generated schema models keep the module they are generated into. A class's string
    annotations are evaluated first, in the module that defines them, so that
    ``typing.get_type_hints`` still resolves them once the class names the package.
    """
    for name in __all__:
        if name in _LAZY_MODELS:
            continue  # generated models keep their module
        value = globals()[name]
        module = getattr(value, "__module__", "")
        if (
            isinstance(value, type)
            and module.startswith(f"{__name__}._")
            and not module.startswith(f"{__name__}._generated.models.")
        ):
            value.__annotations__ = inspect.get_annotations(value, eval_str=True)
            value.__module__ = __name__


_show_under_the_package_name()
