"""The one declared testing seam: the internals that the project's own tools (codegen, the
distribution checks), its test-support package (``capability_graph_testing``) and the harness's
fakes may use besides the public API.

Not public API: no stability promise, no documentation beyond this list. Anything else of the
package's private modules stays private to it; a tool that needs more adds it here, where a
reviewer sees it.
"""

from __future__ import annotations

from ._core.documents import DocumentRoot, read_document_file
from ._core.executors.job import MatchJob
from ._core.executors.lexical import tokenize
from ._core.model import ContractView
from ._core.results import _LAZY_MODELS as LAZY_MODELS
from ._core.schemas import contract_files, load_schema
from ._generated.taxonomy import NEXT_ACTION_TEXT, PHASE_TEXT, REGISTRY
from ._maintenance.explain import (
    explain_index_json,
    explain_index_text,
    explain_json,
    explain_markdown,
    explain_text,
    lookup,
)

__all__ = [
    "LAZY_MODELS",
    "NEXT_ACTION_TEXT",
    "PHASE_TEXT",
    "REGISTRY",
    "ContractView",
    "DocumentRoot",
    "MatchJob",
    "contract_files",
    "explain_index_json",
    "explain_index_text",
    "explain_json",
    "explain_markdown",
    "explain_text",
    "load_schema",
    "lookup",
    "read_document_file",
    "tokenize",
]
