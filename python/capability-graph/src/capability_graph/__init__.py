"""Capability Graph: declare what a product can do, and let agents discover it.

One core, four surfaces (SDK, Tool Adapter, MCP server, CLI) and one error type, ``GraphError``.
The SDK's types are the models generated from ``spec/capability-graph/schemas``, exported here
under their schema names: the host configuration that ``CapabilityGraph.open`` accepts
(``HostConfig`` and its parts), provider definitions, the results of the operations with every
object they hold, and the request parts the operations accept (``RelationTraversal``).
"""

import sys
from typing import TYPE_CHECKING, Any

from ._core import results as _results
from ._core.errors import GraphError
from ._core.results import _LAZY_MODELS
from ._generated.taxonomy import CONTRACT_VERSION, ErrorCode, NextAction, Phase

if TYPE_CHECKING:
    from ._core.cancel import CancelToken
    from ._core.executors import Executor
    from ._core.executors.job import MatchJob
    from ._core.graph import CapabilityGraph, GraphOpening
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


def __getattr__(name: str) -> Any:
    # The public names are imported on first use, so that importing the package (which every
    # submodule does, ``capability_graph.cli`` included) costs only the error type and the
    # taxonomy: a CLI command imports what it runs, and the JSON path never imports Pydantic.
    # The generated models come from their modules (see _results); the hand-written names
    # with the rest of their group (:func:`_group`).
    if name in _LAZY_MODELS:
        value = getattr(_results, name)
        globals()[name] = value
        return value
    group = _group(name)
    if group is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for member, value in group.items():
        _show_under_the_package_name(value)
        globals()[member] = value
    return group[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _group(name: str) -> dict[str, Any] | None:
    """The hand-written public names that come with ``name``, imported: those of its module,
    and the types its API hands out (a graph's opening), so that they are all named under the
    package once one of them is used."""
    match name:
        case "CapabilityGraph" | "GraphOpening" | "CancelToken" | "Executor" | "MatchJob":
            from ._core.cancel import CancelToken
            from ._core.executors import Executor
            from ._core.executors.job import MatchJob
            from ._core.graph import CapabilityGraph, GraphOpening

            return {
                "CapabilityGraph": CapabilityGraph,
                "GraphOpening": GraphOpening,
                "CancelToken": CancelToken,
                "Executor": Executor,
                "MatchJob": MatchJob,
            }
        case "BlockingCapabilityGraph":
            from ._surfaces.sdk.blocking_graph import BlockingCapabilityGraph

            return {"BlockingCapabilityGraph": BlockingCapabilityGraph}
        case (
            "ToolAdapter"
            | "BlockingToolAdapter"
            | "anthropic_tools"
            | "openai_chat_tools"
            | "openai_responses_tools"
            | "tool_definitions"
        ):
            from ._surfaces.tools import (
                BlockingToolAdapter,
                ToolAdapter,
                anthropic_tools,
                openai_chat_tools,
                openai_responses_tools,
                tool_definitions,
            )

            return {
                "ToolAdapter": ToolAdapter,
                "BlockingToolAdapter": BlockingToolAdapter,
                "anthropic_tools": anthropic_tools,
                "openai_chat_tools": openai_chat_tools,
                "openai_responses_tools": openai_responses_tools,
                "tool_definitions": tool_definitions,
            }
        case "diagnose" | "Check" | "CheckStatus" | "Report":
            from ._maintenance.diagnose import diagnose
            from ._maintenance.report import Check, CheckStatus, Report

            return {
                "diagnose": diagnose,
                "Check": Check,
                "CheckStatus": CheckStatus,
                "Report": Report,
            }
    return None


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


def _show_under_the_package_name(value: object) -> None:
    """Tracebacks, reprs and ``help()`` name the classes as users import them
    (``capability_graph.GraphError``, not ``capability_graph._core.errors.GraphError``).

    The generated schema models keep the module they are generated into. A class's string
    annotations are evaluated first, in the module that defines them (as
    ``inspect.get_annotations(eval_str=True)`` does), so that ``typing.get_type_hints`` still
    resolves them once the class names the package.
    """
    module = getattr(value, "__module__", "")
    if (
        isinstance(value, type)
        and module.startswith(f"{__name__}._")
        and not module.startswith(f"{__name__}._generated.models.")
    ):
        scope, local = vars(sys.modules[module]), dict(vars(value))
        value.__annotations__ = {
            key: eval(hint, scope, local) if isinstance(hint, str) else hint  # noqa: S307
            # Its own annotations only, as inspect reads them (inspect is not imported for this).
            for key, hint in value.__dict__.get("__annotations__", {}).items()  # noqa: RUF063
        }
        value.__module__ = __name__


# The error type and the taxonomy come with the package (every command needs them).
for _value in (GraphError, ErrorCode, NextAction, Phase):
    _show_under_the_package_name(_value)
del _value
