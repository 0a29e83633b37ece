"""Loading provider sources into an immutable snapshot.

Why one module of this size: a snapshot is built completely in one pass (providers, index,
edges, revisions), and its builders share that pass's partial state.

A :class:`Snapshot` is what every query reads: the providers, an index of capabilities by full
id, the resolved relation edges and the revisions. It is built completely (every provider
validated, relations checked across providers) before anyone can see it, and never changes
afterwards, which is what makes reload atomic: publishing is one reference assignment.

Load order and codes:
1. read the source (missing, unreadable, not a regular file, over maxDefinitionBytes) --
   ``CG_CONFIG_INVALID`` for a file that cannot be read, ``CG_DEFINITION_INVALID`` for size;
2. pure JSON and schema shape -- ``CG_DEFINITION_INVALID`` (``CG_RELATION_INVALID`` when the
   problem is inside a relation);
3. rules a schema cannot express: duplicate capability or document ids, document path rules --
   ``CG_DEFINITION_INVALID``; missing local targets, self references, duplicate edges --
   ``CG_RELATION_INVALID``;
4. across providers: duplicate provider ids (``CG_CONFIG_INVALID``), cycles of
   requires/parent/specializes
   (``CG_RELATION_CYCLE``), the total against maxCapabilities (``CG_CATALOG_TOO_LARGE``).
   A cross-provider target that is missing is not a load error: resolve reports it as
   ``unresolved`` (the other provider may be reloaded independently).
"""

from __future__ import annotations

import copy
import gc
import hashlib
import re
from collections.abc import Collection, Container, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

from .._generated.taxonomy import ErrorCode, Phase
from .collector import freeze_while_held
from .config import Budgets, FileTooLarge, Source, read_bounded_file
from .documents import DocumentRoot, check_document_path
from .errors import GraphError
from .json import (
    MalformedJson,
    NotPureJson,
    canonical_bytes,
    check_pure_value,
    parse_definition_json,
)
from .schemas import pointer_message
from .validation import definition_problem

__all__ = [
    "ACYCLIC_KINDS",
    "Capability",
    "Provider",
    "Snapshot",
    "build_snapshot",
    "load_provider",
    "read_definition_file",
]

ACYCLIC_KINDS: Final = ("requires", "parent", "specializes")
RELATION_KINDS: Final = (*ACYCLIC_KINDS, "related")
_FULL_ID: Final = re.compile(r"^[a-z][a-z0-9._-]{0,63}::[a-z][a-z0-9._-]{0,127}$")


def revision_of(data: bytes) -> str:
    """``r:`` + the first 16 lowercase hex digits of the SHA-256 of ``data`` (canonical bytes)."""
    return "r:" + hashlib.sha256(data).hexdigest()[:16]


def graph_revision(providers: Iterable[Provider], scope: Collection[str] | None) -> str:
    """The revision a caller sees: over the in-scope providers only (all when no scope is
    configured), so a change to a provider outside the scope is not observable through it."""
    revisions = {
        p.provider_id: p.revision for p in providers if scope is None or p.provider_id in scope
    }
    return revision_of(canonical_bytes(revisions))


# The snapshot's records are read-only by convention: plain classes with ``__slots__``, not
# dataclasses, which cost every command line about a millisecond each to make at import.


class Capability:
    """One capability: its declaration as loaded, and its relations with full-id targets."""

    __slots__ = ("declaration", "full_id", "provider_id", "relations")

    def __init__(
        self,
        full_id: str,
        provider_id: str,
        declaration: Mapping[str, Any],
        relations: tuple[tuple[str, str], ...],
    ) -> None:
        self.full_id = full_id
        self.provider_id = provider_id
        self.declaration = declaration
        self.relations = relations  # (kind, full target id)

    def summary(self) -> dict[str, Any]:
        d = self.declaration
        return {
            "id": self.full_id,
            "providerId": self.provider_id,
            "name": d["name"],
            "description": d["description"],
            "tags": list(d.get("tags", ())),
        }


class Provider:
    """One loaded provider: what ``describe`` shows of it, its capabilities, its document root."""

    __slots__ = (
        "capabilities",
        "document_root",
        "name",
        "provider_id",
        "revision",
        "source_index",
        "version",
    )

    def __init__(
        self,
        provider_id: str,
        name: str,
        version: str,
        revision: str,
        source_index: int,
        capabilities: Mapping[str, Capability],
        document_root: DocumentRoot | None,
    ) -> None:
        self.provider_id = provider_id
        self.name = name
        self.version = version
        self.revision = revision
        self.source_index = source_index
        self.capabilities = capabilities  # local id -> capability, sorted by local id
        self.document_root = document_root

    def describe(self) -> dict[str, Any]:
        return {
            "providerId": self.provider_id,
            "name": self.name,
            "version": self.version,
            "revision": self.revision,
            "capabilityCount": len(self.capabilities),
        }


class Snapshot:
    """The published graph: every provider and capability, never changed once built."""

    __slots__ = ("capabilities", "catalogs", "details", "providers", "revision", "selections")

    def __init__(
        self,
        revision: str,
        providers: Mapping[str, Provider],
        capabilities: Mapping[str, Capability],
    ) -> None:
        self.revision = revision
        self.providers = providers  # sorted by provider id
        self.capabilities = capabilities
        # Capability details (frozen JSON), built on first use and shared by every result that
        # holds them: the snapshot never changes, so neither does a detail.
        self.details: dict[str, Any] = {}
        # Match catalogs (tuples of frozen summaries) by provider selection, built on first use.
        self.catalogs: dict[Any, tuple[Any, ...]] = {}
        # Filtered listings by filter, for the pages after the first (a few, oldest dropped
        # first; see ``selection_of`` in operations/common.py).
        self.selections: dict[Any, tuple[Capability, ...]] = {}


def _invalid(code: ErrorCode, message: str | None = None) -> GraphError:
    return GraphError(code, Phase.LOAD, message)


@contextmanager
def no_gc(*, keep_out: bool = False) -> Iterator[None]:
    """Large loads allocate millions of containers that all live on; collecting in between is
    pure overhead (it dominates load time), so the cyclic collector pauses for the load.

    ``keep_out``: when the load succeeded, what it made leaves the collector's generations
    before the collector runs again (see ``collector``), so that no pass ever traverses it; the
    graph that keeps it then holds the freeze (``collector.hold``) until it closes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if keep_out:
            freeze_while_held()
    finally:
        if enabled:
            gc.enable()


def read_definition_file(source: Source, budgets: Budgets) -> bytes:
    """The bytes of a file source's definition (read once), or the error ``open`` gives."""
    assert source.path is not None
    try:
        data = read_bounded_file(source.path, budgets.max_definition_bytes)
    except FileTooLarge:
        raise _invalid(
            ErrorCode.CG_DEFINITION_INVALID, "/ exceeds budgets.maxDefinitionBytes"
        ) from None
    if data is None:
        raise GraphError(
            ErrorCode.CG_CONFIG_INVALID,
            Phase.CONFIG,
            f"/providers/{source.index}/path is not a readable regular file",
        )
    return data


def _read_source(source: Source, budgets: Budgets, data: bytes | None) -> Any:
    if source.path is None:  # inline: whatever the host passed, even None, is the definition
        if not isinstance(source.definition, Mapping):
            # A root that is not an object comes before its other faults (CG-MSG-19).
            raise _invalid(ErrorCode.CG_DEFINITION_INVALID, _NOT_AN_OBJECT)
        try:
            check_pure_value(source.definition, "")
        except NotPureJson as problem:
            raise _invalid(
                ErrorCode.CG_DEFINITION_INVALID, pointer_message(problem.pointer, problem.reason)
            ) from None
        # The pure-JSON rules come before the count, as for a file (CG-OPEN-1 step 4).
        _count_within_budget(source.definition, budgets)
        # A private copy: the caller's object may change after open without changing the graph.
        return copy.deepcopy(source.definition)
    if data is None:
        data = read_definition_file(source, budgets)
    try:
        # The pure-JSON rules come before the count and the schema (CG-OPEN-1 step 4).
        value = parse_definition_json(data)
    except NotPureJson as problem:
        if not isinstance(problem, MalformedJson) and not _root_is_an_object(data):
            # A JSON text whose root is not an object: that first (CG-MSG-19, CG-MSG-20).
            raise _invalid(ErrorCode.CG_DEFINITION_INVALID, _NOT_AN_OBJECT) from None
        raise _invalid(
            ErrorCode.CG_DEFINITION_INVALID, pointer_message(problem.pointer, problem.reason)
        ) from None
    _count_within_budget(value, budgets)
    return value


_NOT_AN_OBJECT: Final = "/ must be an object"


def _root_is_an_object(data: bytes) -> bool:
    """Whether a definition file's text opens an object (its bytes are UTF-8 without a byte order
    mark: those faults are the text's, reported first, CG-MSG-20)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return True  # "not valid UTF-8" is reported as it is
    if text.startswith("\ufeff"):
        return True  # so is the byte order mark
    return text.lstrip(" \t\r\n")[:1] == "{"


def _count_within_budget(value: Any, budgets: Budgets) -> None:
    """A definition with more capabilities than the whole graph may hold is refused before any
    per-capability work (copy, validation, hashing) is spent on it."""
    if isinstance(value, Mapping):
        capabilities = value.get("capabilities")
        if isinstance(capabilities, list) and len(capabilities) > budgets.max_capabilities:
            raise _invalid(ErrorCode.CG_CATALOG_TOO_LARGE)


def load_provider(
    source: Source, budgets: Budgets, data: bytes | None = None
) -> tuple[Provider, Mapping[str, Any]]:
    """Read and validate one source on its own (everything but the cross-provider rules).

    ``data`` is a file source's bytes when the caller has read them already
    (:func:`read_definition_file`); otherwise the file is read here.
    """
    value = _read_source(source, budgets, data)
    problem = definition_problem(value) if isinstance(value, dict) else "/ must be an object"
    if problem is not None:
        code = (
            ErrorCode.CG_RELATION_INVALID
            if "/relations/" in problem or problem.split(" ", 1)[0].endswith("/relations")
            else ErrorCode.CG_DEFINITION_INVALID
        )
        raise _invalid(code, None if code is ErrorCode.CG_RELATION_INVALID else problem)
    provider_id = value["providerId"]
    declarations: dict[str, Mapping[str, Any]] = {}  # by local id, in declaration order
    for index, declaration in enumerate(value["capabilities"]):
        local_id = declaration["id"]
        if local_id in declarations:
            raise _invalid(
                ErrorCode.CG_DEFINITION_INVALID, f"/capabilities/{index}/id repeats a capability id"
            )
        _check_documents(declaration, index)
        declarations[local_id] = declaration
    capabilities = {
        local_id: Capability(
            f"{provider_id}::{local_id}",
            provider_id,
            declaration,
            _relations_of(declaration, provider_id, declarations),
        )
        for local_id, declaration in declarations.items()
    }
    # Sorted once here: listing pages through this order without sorting per request.
    capabilities = dict(sorted(capabilities.items()))
    return (
        Provider(
            provider_id=provider_id,
            name=value["name"],
            version=value["version"],
            # validated: the definition schema admits no numbers
            revision=revision_of(canonical_bytes(value, numbers=False)),
            source_index=source.index,
            capabilities=capabilities,
            document_root=_document_root(source),
        ),
        value,
    )


def _check_documents(declaration: Mapping[str, Any], index: int) -> None:
    documents = declaration.get("documents")
    if not documents:
        return
    seen: set[str] = set()
    for position, document in enumerate(documents):
        if document["id"] in seen:
            raise _document_invalid(index, position, "/id repeats a document id")
        seen.add(document["id"])
        has_path, has_url = "path" in document, "url" in document
        if has_path == has_url:
            raise _document_invalid(index, position, " must have exactly one of path or url")
        if has_path:
            reason = check_document_path(document["path"])
            if reason is not None:
                raise _document_invalid(index, position, f"/path {reason}")


def _document_invalid(index: int, position: int, fault: str) -> GraphError:
    # The pointer is built only for the fault: a large definition has 100,000s of documents.
    return _invalid(
        ErrorCode.CG_DEFINITION_INVALID, f"/capabilities/{index}/documents/{position}{fault}"
    )


def _relations_of(
    declaration: Mapping[str, Any], provider_id: str, siblings: Mapping[str, Any]
) -> tuple[tuple[str, str], ...]:
    """A capability's relations as (kind, full target id), or CG_RELATION_INVALID; ``siblings``
    are the provider's capabilities by local id."""
    declared = declaration.get("relations", ())
    if not declared:
        return ()
    local_id = declaration["id"]
    relations: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for relation in declared:
        kind, target = relation["kind"], relation["target"]
        full = target if "::" in target else f"{provider_id}::{target}"
        if kind in RELATION_KINDS and target in siblings and target != local_id:
            # The common case, checked inline: a valid kind and another capability of the
            # provider named by its local id.
            if (kind, full) in seen:
                raise _invalid(ErrorCode.CG_RELATION_INVALID)
            seen.add((kind, full))
        elif relation_problem(provider_id, local_id, kind, target, siblings, seen) is not None:
            raise _invalid(ErrorCode.CG_RELATION_INVALID)
        relations.append((kind, full))
    return tuple(relations)


def relation_problem(
    provider_id: str,
    local_id: str,
    kind: str,
    target: str,
    local_ids: Container[Any],
    seen: set[tuple[str, str]],
) -> str | None:
    """Why a relation of ``provider_id::local_id`` is CG_RELATION_INVALID, or None when it is
    valid (then it is added to ``seen``, the relations of that capability so far).

    The reason is a host-side fact for ``doctor``; the error itself carries the registry's
    message only.
    """
    if kind not in RELATION_KINDS:
        return "the kind is not a relation kind"
    if "::" in target:
        if not _FULL_ID.match(target):
            return "the target is not a capability id"
        provider, _, local = target.partition("::")
        if provider == provider_id and local not in local_ids:
            return "the target is not a capability of this provider"
        full = target
    else:
        if target not in local_ids:
            return "the target is not a capability of this provider"
        full = f"{provider_id}::{target}"
    if full == f"{provider_id}::{local_id}":
        return "a capability cannot relate to itself"
    if (kind, full) in seen:
        return "the same relation is declared twice"
    seen.add((kind, full))
    return None


def _document_root(source: Source) -> DocumentRoot | None:
    if source.document_root is not None:
        # The message names the provider's field (spec/capability-graph/spec/03, CG-CFG-5).
        return DocumentRoot.fix(
            source.document_root, pointer=f"/providers/{source.index}/documentRoot"
        )
    if source.path is not None:
        return DocumentRoot.fix(source.path.parent)
    return None


def build_snapshot(
    providers: Iterable[Provider], budgets: Budgets, scope: Collection[str] | None
) -> Snapshot:
    """Check the cross-provider rules and index a complete snapshot (its revision over
    ``scope``, the host's scope: None when none is configured)."""
    by_id: dict[str, Provider] = {}
    for provider in providers:
        if provider.provider_id in by_id:
            raise GraphError(
                ErrorCode.CG_CONFIG_INVALID,
                Phase.CONFIG,
                f"/providers/{provider.source_index} repeats a providerId",
            )
        by_id[provider.provider_id] = provider
    total = sum(len(p.capabilities) for p in by_id.values())
    if total > budgets.max_capabilities:
        raise _invalid(ErrorCode.CG_CATALOG_TOO_LARGE)
    ordered = dict(sorted(by_id.items()))
    capabilities = {
        capability.full_id: capability
        for provider in ordered.values()
        for capability in provider.capabilities.values()
    }
    _check_acyclic(capabilities)
    return Snapshot(
        revision=graph_revision(ordered.values(), scope),
        providers=ordered,
        capabilities=capabilities,
    )


def _check_acyclic(capabilities: Mapping[str, Capability]) -> None:
    """Iterative three-colour DFS per acyclic kind, across every loaded provider."""
    by_kind: dict[str, dict[str, list[str]]] = {kind: {} for kind in ACYCLIC_KINDS}
    for capability in capabilities.values():  # one pass collects the edges of every kind
        for kind, target in capability.relations:
            edges = by_kind.get(kind)
            if edges is not None and target in capabilities:
                edges.setdefault(capability.full_id, []).append(target)
    for successors in by_kind.values():
        state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
        for start in successors:
            if start in state:
                continue
            state[start] = 1
            stack: list[tuple[str, Iterator[str]]] = [(start, iter(successors[start]))]
            while stack:
                node, children = stack[-1]
                child = next(children, None)
                if child is None:
                    state[node] = 2
                    stack.pop()
                    continue
                seen = state.get(child)
                if seen == 1:
                    raise _invalid(ErrorCode.CG_RELATION_CYCLE)
                if seen is None:
                    state[child] = 1
                    stack.append((child, iter(successors.get(child, ()))))
