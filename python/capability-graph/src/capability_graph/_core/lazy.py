"""The core's lazy imports, named in one place.

Start-up is measured (``nox -s bench``: the CLI's start-up against ``import pydantic``, the MCP
server's against a bare server on the same SDK): the JSON path (``call``, the CLI, the MCP server)
never needs Pydantic nor most of the compiled validators, and importing them with the package
would cost every command line their import time. So these modules are imported on first use --
each by an ``import`` statement written out here (never a module name in a string), so that a
reader, mypy and a structure tool all see the edge. The built-in executors are imported when
one is configured (the CLI's cold start measured without them). The compiled validators and the
operation handlers are imported the same way by their own generated registries
(``_generated/validators``, ``operations/handlers.py``); ``asyncio`` by the coroutines that run
on a loop; optional packages that may not be installed (``openai``, flowcast) at their one point
of use. The rest of the package's lazy imports are the public names of the package
(``capability_graph.__getattr__``) and the CLI's commands: ``docs/contributing.md`` lists them.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

__all__ = ["executor_class", "generated_module"]


def generated_module(name: str) -> ModuleType:
    """The generated module ``_generated/<name>.py`` of the public types (``models.config``,
    ``views``, ...)."""
    module: ModuleType
    match name:
        case "models.budgets":
            from .._generated.models import budgets as module
        case "models.capability_summary":
            from .._generated.models import capability_summary as module
        case "models.config":
            from .._generated.models import config as module
        case "models.definition":
            from .._generated.models import definition as module
        case "models.describe_result":
            from .._generated.models import describe_result as module
        case "models.document_metadata":
            from .._generated.models import document_metadata as module
        case "models.error":
            from .._generated.models import error as module
        case "models.list_result":
            from .._generated.models import list_result as module
        case "models.match_candidate":
            from .._generated.models import match_candidate as module
        case "models.match_result":
            from .._generated.models import match_result as module
        case "models.read_document_result":
            from .._generated.models import read_document_result as module
        case "models.reload_result":
            from .._generated.models import reload_result as module
        case "models.resolve_request":
            from .._generated.models import resolve_request as module
        case "views":
            from .._generated import views as module
        case _:
            raise LookupError(f"no generated module {name!r}")
    return module


def executor_class(name: str) -> Any:
    """The class of the built-in executor ``name`` (``model.executor``): it has
    ``from_config(model, pointer)``."""
    match name:
        case "scripted":
            from .executors.scripted import ScriptedExecutor

            return ScriptedExecutor
        case "lexical":
            from .executors.lexical import LexicalExecutor

            return LexicalExecutor
        case "openai":
            from .executors.openai import OpenAICompatExecutor

            return OpenAICompatExecutor
        case "codex":
            from .executors.codex import CodexExecutor

            return CodexExecutor
    raise LookupError(f"no built-in executor {name!r}")
