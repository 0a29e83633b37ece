"""Capability Graph: declare what a product can do, and let agents discover it.

One core, four surfaces (SDK, Tool Adapter, MCP server, CLI) and one error type, ``GraphError``.
The host configuration that ``CapabilityGraph.open`` accepts can be written as the models
generated from ``spec/capability-graph/schemas/config.schema.json`` (``HostConfig`` and its
parts), exported here under their schema names.
"""

import importlib
import inspect
from typing import TYPE_CHECKING, Any

from ._cancel import CancelToken
from ._diagnose import diagnose
from ._errors import GraphError
from ._executors import Executor, MatchJob
from ._generated.blocking import BlockingCapabilityGraph
from ._generated.taxonomy import CONTRACT_VERSION, ErrorCode, NextAction, Phase
from ._graph import CapabilityGraph, GraphOpening
from ._report import Report
from ._results import (
    DescribeResult,
    DocumentResult,
    ListResult,
    MatchResult,
    ReloadResult,
    ResolveResult,
)
from ._tools import BlockingToolAdapter, ToolAdapter

if TYPE_CHECKING:
    from ._generated.models.budgets import Budgets
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
        UrlDocumentDeclaration,
    )

#: The generated configuration and definition models, imported on first use: importing them
#: imports Pydantic, which the CLI's start-up (and a host that passes plain JSON) never needs.
_LAZY_MODELS = {
    "Budgets": "budgets",
    "Capability": "definition",
    "CodexExecutorConfig": "config",
    "DocumentBodies": "config",
    "DocumentBodiesMode": "config",
    "DocumentDeclaration": "definition",
    "DocumentPolicy": "config",
    "FileDocumentDeclaration": "definition",
    "FileProviderSource": "config",
    "HostConfig": "config",
    "InlineProviderSource": "config",
    "LexicalExecutorConfig": "config",
    "ModelConfig": "config",
    "OpenAIExecutorConfig": "config",
    "ProviderDefinition": "definition",
    "ProviderSource": "config",
    "RelationDeclaration": "definition",
    "Scope": "config",
    "ScriptedExecutorConfig": "config",
    "ScriptedRaise": "config",
    "ScriptedRaiseExceptionStep": "config",
    "ScriptedRaiseStep": "config",
    "ScriptedReturnStep": "config",
    "ScriptedSleepStep": "config",
    "ScriptedStep": "config",
    "UrlDocumentDeclaration": "definition",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_MODELS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}._generated.models.{module}"), name)
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
    "CapabilityGraph",
    "CodexExecutorConfig",
    "DescribeResult",
    "DocumentBodies",
    "DocumentBodiesMode",
    "DocumentDeclaration",
    "DocumentPolicy",
    "DocumentResult",
    "ErrorCode",
    "Executor",
    "FileDocumentDeclaration",
    "FileProviderSource",
    "GraphError",
    "GraphOpening",
    "HostConfig",
    "InlineProviderSource",
    "LexicalExecutorConfig",
    "ListResult",
    "MatchJob",
    "MatchResult",
    "ModelConfig",
    "NextAction",
    "OpenAIExecutorConfig",
    "Phase",
    "ProviderDefinition",
    "ProviderSource",
    "RelationDeclaration",
    "ReloadResult",
    "Report",
    "ResolveResult",
    "Scope",
    "ScriptedExecutorConfig",
    "ScriptedRaise",
    "ScriptedRaiseExceptionStep",
    "ScriptedRaiseStep",
    "ScriptedReturnStep",
    "ScriptedSleepStep",
    "ScriptedStep",
    "ToolAdapter",
    "UrlDocumentDeclaration",
    "diagnose",
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
