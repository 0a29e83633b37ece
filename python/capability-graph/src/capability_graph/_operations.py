"""The operations of the contract as pure functions over a snapshot.

Each operation takes the JSON request (already checked by :func:`prepare_request`) and returns
the JSON result, raising GraphError in the precedence order of the contract (CG-PREC-1..10):
closed graph (the caller) -> input size -> input shape -> context -> scope of explicitly named
providers and capabilities -> existence -> budgets on the work -> execution -> result size.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from typing import Any, Final

from ._config import HostConfig
from ._cursor import decode_cursor, encode_cursor, filter_key
from ._documents import media_type_for
from ._errors import GraphError
from ._frozen import freeze
from ._generated.defaults import LIST_LIMIT, RESOLVE_DEPTH
from ._generated.operations import OPERATION_TABLE, Operation
from ._generated.taxonomy import ErrorCode, Phase
from ._json import (
    NotPureJson,
    check_pure_value,
    dump_bytes,
    lone_surrogate_count,
    parse_request_text,
    whole_numbers_as_integers,
)
from ._schemas import check_shape, pointer_message
from ._slices import SharedSteps, Slicer, Steps, run_to_end
from ._snapshot import RELATION_KINDS, Capability, Snapshot

__all__ = [
    "OPERATIONS",
    "TOOL_OF_METHOD",
    "Operation",
    "catalog_size",
    "check_result_size",
    "describe",
    "invalid_arguments_text",
    "list_page",
    "match_catalog",
    "match_catalog_steps",
    "oversized_request",
    "parse_arguments_text",
    "prepare_request",
    "resolve",
]


#: The operations by tool name, from the generated operation table (``spec/``: operations.json).
OPERATIONS: Final = {op.tool: op for op in OPERATION_TABLE}
#: The tool each SDK method calls, by method name.
TOOL_OF_METHOD: Final = {op.sdk_method: op.tool for op in OPERATION_TABLE}


def _input_invalid(phase: Phase, message: str | None = None) -> GraphError:
    return GraphError(ErrorCode.CG_INPUT_INVALID, phase, message)


def oversized_request(tool: str) -> GraphError:
    """The error for a request whose serialized form is known to exceed maxInputBytes."""
    operation = OPERATIONS.get(tool)
    if operation is None:
        return GraphError.of(ErrorCode.CG_INPUT_INVALID, Phase.QUERY, variant="unknownTool")
    return GraphError.of(ErrorCode.CG_INPUT_TOO_LARGE, operation.phase)


def parse_arguments_text(
    tool: str, data: str | bytes, *, max_input_bytes: int | None = None
) -> Any:
    """A tool's arguments given as JSON text -> the value :meth:`CapabilityGraph.call` takes.

    Every surface that receives arguments as text (the CLI's ``--arguments``, ``--arguments-file``
    and ``--context`` values, MCP ``tools/call`` frames, an SDK caller's JSON text) reads them
    here: more than ``max_input_bytes`` bytes is ``CG_INPUT_TOO_LARGE``; a text that is not
    well-formed, has a duplicate member name in any object, or holds an integer literal of more
    than ``MAX_INTEGER_DIGITS`` (400) digits is ``CG_INPUT_INVALID`` in the tool's phase, with a
    pointer message (see :func:`capability_graph._json.parse_request_text`).
    """
    if max_input_bytes is not None:
        operation = OPERATIONS.get(tool)
        phase = operation.phase if operation is not None else Phase.QUERY
        size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
        if size > max_input_bytes:
            raise GraphError.of(ErrorCode.CG_INPUT_TOO_LARGE, phase)
    try:
        return parse_request_text(data)
    except NotPureJson as problem:
        raise invalid_arguments_text(tool, problem) from None


def invalid_arguments_text(tool: str, problem: NotPureJson) -> GraphError:
    """The error for a tool's arguments text that the request-text rules reject."""
    operation = OPERATIONS.get(tool)
    phase = operation.phase if operation is not None else Phase.QUERY
    return _input_invalid(phase, pointer_message(problem.pointer, problem.reason))


def _surely_larger_than(value: Any, limit: int) -> bool:
    """Whether ``value`` serializes to more than ``limit`` bytes, judged from a lower bound.

    Walks without copying and stops as soon as the bound passes ``limit``, so a 100 MB request
    is refused before a 100 MB serialization of it is made. The bound never exceeds the compact
    serialization (a property test holds it to that), so a request of exactly ``limit`` bytes is
    never refused here: a string is at least its characters and two quotes (a lone surrogate
    six, its ``\\uXXXX`` escape), a key also its colon, a container its brackets and one
    separator between items, any other value one byte.
    """
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
            if total <= limit:  # scanned only when it still fits: the scan stays bounded
                total += 5 * lone_surrogate_count(item)
        elif isinstance(item, dict):
            total += 2 + max(len(item) - 1, 0)
            for key, child in item.items():
                total += (len(key) if isinstance(key, str) else 1) + 3
                stack.append(child)
        elif isinstance(item, (list, tuple)):
            total += 2 + max(len(item) - 1, 0)
            stack.extend(item)
        else:
            total += 1
        if total > limit:
            return True
    return False


def prepare_request(operation: Operation, arguments: Any, config: HostConfig) -> dict[str, Any]:
    """Input size, then shape. ``context`` (match) is left to the context check that follows."""
    phase = operation.phase
    limit = config.budgets.max_input_bytes
    if _surely_larger_than(arguments, limit):
        raise GraphError.of(ErrorCode.CG_INPUT_TOO_LARGE, phase)
    try:
        size = len(dump_bytes(arguments))  # bounded: the walk above capped it near the budget
    except (TypeError, ValueError):
        size = None  # not JSON at all: a shape problem, reported below
    if size is not None and size > limit:
        raise GraphError.of(ErrorCode.CG_INPUT_TOO_LARGE, phase)
    if not isinstance(arguments, dict):
        raise _input_invalid(phase, "/ must be an object")
    rest = {k: v for k, v in arguments.items() if k != "context"}
    try:
        check_pure_value(rest)
    except NotPureJson as problem:
        raise _input_invalid(phase, pointer_message(problem.pointer, problem.reason)) from None
    # ``context`` is checked by its own rules next (CG_CONTEXT_INVALID); it is never walked here.
    shaped = whole_numbers_as_integers(rest)
    if "context" in arguments:
        shaped["context"] = arguments["context"]
    arguments = shaped
    shaped = dict(arguments)
    # Only the match request has a context (the one operation of the match phase).
    context_present = "context" in shaped and operation.phase is Phase.MATCH
    if context_present:
        if shaped["context"] is None:
            raise _input_invalid(phase, "/context must not be null (omit the key instead)")
        shaped["context"] = {}
    check_shape(
        operation.request_schema,
        shaped,
        code=ErrorCode.CG_INPUT_INVALID,
        phase=phase,
        compiled=operation.compiled,
    )
    if context_present:
        shaped["context"] = arguments["context"]
    return shaped


# -- scope and existence -----------------------------------------------------------------------


def in_scope(config: HostConfig, provider_id: str) -> bool:
    return config.scope is None or provider_id in config.scope


def scoped_providers(snapshot: Snapshot, config: HostConfig) -> list[str]:
    return [p for p in snapshot.providers if in_scope(config, p)]


def check_named_providers(
    snapshot: Snapshot, config: HostConfig, provider_ids: Iterable[str], phase: Phase
) -> None:
    """Scope first for every name (denied whether or not it exists), then existence."""
    names = list(provider_ids)
    for provider_id in names:
        if not in_scope(config, provider_id):
            raise GraphError.of(ErrorCode.CG_ACCESS_DENIED, phase)
    for provider_id in names:
        if provider_id not in snapshot.providers:
            raise GraphError.of(ErrorCode.CG_PROVIDER_NOT_FOUND, phase)


def find_capabilities(
    snapshot: Snapshot, config: HostConfig, full_ids: Sequence[str], phase: Phase
) -> list[Capability]:
    check_named_providers(snapshot, config, (i.partition("::")[0] for i in full_ids), phase)
    found = []
    for full_id in full_ids:
        capability = snapshot.capabilities.get(full_id)
        if capability is None:
            raise GraphError.of(ErrorCode.CG_CAPABILITY_NOT_FOUND, phase)
        found.append(capability)
    return found


def check_result_size(result: Mapping[str, Any], config: HostConfig, phase: Phase) -> bytes:
    """The serialized result, or ``CG_RESULT_TOO_LARGE`` (nothing is ever truncated)."""
    data = dump_bytes(result)
    if len(data) > config.budgets.max_result_bytes:
        raise GraphError.of(ErrorCode.CG_RESULT_TOO_LARGE, phase)
    return data


# -- describe ----------------------------------------------------------------------------------


def describe(snapshot: Snapshot, config: HostConfig, executor: str | None) -> dict[str, Any]:
    providers = scoped_providers(snapshot, config)
    model: dict[str, Any] = {"configured": executor is not None}
    if executor is not None:
        model["executor"] = executor
    return {
        "revision": snapshot.revision,
        "providers": [snapshot.providers[p].describe() for p in providers],
        "scope": {"providers": list(config.scope) if config.scope is not None else providers},
        "model": model,
        "budgets": config.budgets.to_json(),
    }


# -- list --------------------------------------------------------------------------------------


def list_page(snapshot: Snapshot, config: HostConfig, request: Mapping[str, Any]) -> dict[str, Any]:
    phase = Phase.QUERY
    named = request.get("providers")
    if named is not None:
        check_named_providers(snapshot, config, named, phase)
        providers = [p for p in snapshot.providers if p in set(named)]
    else:
        providers = scoped_providers(snapshot, config)
    tags = request.get("tags")
    limit = request.get("limit", LIST_LIMIT)
    key = filter_key(
        {"providers": sorted(set(named)) if named else None, "tags": sorted(set(tags or ()))}
    )
    offset = 0
    if "cursor" in request:
        offset = decode_cursor(config.cursor_key, request["cursor"], snapshot.revision, key)
    authorized = sum(
        len(snapshot.providers[p].capabilities) for p in scoped_providers(snapshot, config)
    )
    if authorized == 0:
        return {"status": "empty", "revision": snapshot.revision, "items": []}
    candidates = _catalog(snapshot, providers, tags)
    page = list(islice(candidates, offset, offset + limit + 1))
    result: dict[str, Any] = {
        "status": "ok",
        "revision": snapshot.revision,
        "items": [c.summary() for c in page[:limit]],
    }
    if len(page) > limit:
        result["nextCursor"] = encode_cursor(
            config.cursor_key, snapshot.revision, key, offset + limit
        )
    return result


def _catalog(
    snapshot: Snapshot, providers: Sequence[str], tags: Sequence[str] | None
) -> Iterable[Capability]:
    wanted = set(tags) if tags else None
    for provider_id in providers:
        for capability in snapshot.providers[provider_id].capabilities.values():
            if wanted is None or wanted.issubset(capability.declaration.get("tags", ())):
                yield capability


def _catalog_key(named: Sequence[str] | None) -> tuple[str, ...] | None:
    return tuple(sorted(set(named))) if named else None


def catalog_size(snapshot: Snapshot, config: HostConfig, named: Sequence[str] | None) -> int:
    """How many entries the match catalog of this selection has (without building it)."""
    providers = (
        [p for p in snapshot.providers if p in set(named)]
        if named
        else scoped_providers(snapshot, config)
    )
    return sum(len(snapshot.providers[p].capabilities) for p in providers)


def match_catalog(
    snapshot: Snapshot, config: HostConfig, named: Sequence[str] | None
) -> tuple[Any, ...]:
    """The authorized catalog a match hands its executor: frozen summaries (+ ``whenToUse``).

    Built once per snapshot and provider selection and shared by every match on it, so an
    executor that indexes the catalog (lexical) can key its cache on the very same object.
    """
    return run_to_end(match_catalog_steps(snapshot, config, named))


#: Catalog builds in progress, by (snapshot, selection); each holds its snapshot. Bounded: a
#: build dropped here (its snapshot long replaced) is simply started again if ever needed.
_CATALOG_BUILDS: Final[OrderedDict[tuple[int, Any], tuple[Snapshot, SharedSteps[Any]]]] = (
    OrderedDict()
)
_CATALOG_BUILDS_LOCK: Final = threading.Lock()
_CATALOG_BUILDS_MAX: Final = 8


def match_catalog_steps(
    snapshot: Snapshot, config: HostConfig, named: Sequence[str] | None
) -> Steps[tuple[Any, ...]]:
    """:func:`match_catalog` in time slices (summarizing 100,000 capabilities takes seconds),
    one build shared by every match that waits for it."""
    key = _catalog_key(named)
    cached = snapshot.catalogs.get(key)
    if cached is not None:
        return cached
    with _CATALOG_BUILDS_LOCK:
        building = _CATALOG_BUILDS.get((id(snapshot), key))
        if building is None or building[0] is not snapshot:
            work = SharedSteps(_build_match_catalog(snapshot, config, named, key))
            building = _CATALOG_BUILDS[(id(snapshot), key)] = (snapshot, work)
            while len(_CATALOG_BUILDS) > _CATALOG_BUILDS_MAX:
                _CATALOG_BUILDS.popitem(last=False)
    catalog: tuple[Any, ...] = yield from building[1].wait()
    with _CATALOG_BUILDS_LOCK:
        if _CATALOG_BUILDS.get((id(snapshot), key)) is building:
            del _CATALOG_BUILDS[(id(snapshot), key)]
    return catalog


def _build_match_catalog(
    snapshot: Snapshot, config: HostConfig, named: Sequence[str] | None, key: Any
) -> Steps[tuple[Any, ...]]:
    slicer = Slicer()
    entries = []
    for capability in authorized_catalog(snapshot, config, named):
        entry = capability.summary()
        if "whenToUse" in capability.declaration:
            entry["whenToUse"] = capability.declaration["whenToUse"]
        entries.append(freeze(entry))
        if slicer.due():
            yield
    catalog = snapshot.catalogs[key] = tuple(entries)
    return catalog


def authorized_catalog(
    snapshot: Snapshot, config: HostConfig, named: Sequence[str] | None
) -> list[Capability]:
    providers = (
        [p for p in snapshot.providers if p in set(named)]
        if named
        else scoped_providers(snapshot, config)
    )
    return list(_catalog(snapshot, providers, None))


# -- resolve -----------------------------------------------------------------------------------


def detail(capability: Capability) -> dict[str, Any]:
    declaration = capability.declaration
    result = capability.summary()
    if "whenToUse" in declaration:
        result["whenToUse"] = declaration["whenToUse"]
    result["relations"] = [{"kind": k, "target": t} for k, t in capability.relations]
    result["documents"] = [_document_metadata(d) for d in declaration.get("documents", ())]
    return result


def _document_metadata(document: Mapping[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"id": document["id"], "title": document["title"]}
    for key in ("role", "locale"):
        if key in document:
            metadata[key] = document[key]
    if "path" in document:
        metadata["mediaType"] = media_type_for(document["path"])
        metadata["kind"] = "file"
    else:
        metadata["mediaType"] = media_type_for(document["url"].split("?")[0].split("#")[0])
        metadata["kind"] = "url"
        metadata["url"] = document["url"]
    return metadata


def resolve(snapshot: Snapshot, config: HostConfig, request: Mapping[str, Any]) -> dict[str, Any]:
    """The roots, the capabilities reached through the requested relations, and the edges.

    Details come from the snapshot's cache of frozen details, so a resolve costs the traversal;
    its size check then serializes the result once.
    """
    ids = list(dict.fromkeys(request["ids"]))
    roots = find_capabilities(snapshot, config, ids, Phase.QUERY)
    traversal = request.get("relations", {})
    kinds = set(traversal.get("kinds", RELATION_KINDS))
    depth = traversal.get("depth", RESOLVE_DEPTH)
    order = [c.full_id for c in roots]
    visited = set(order)
    edges: list[dict[str, str]] = []
    unresolved: list[dict[str, str]] = []
    frontier = roots
    for _level in range(depth):
        reached: list[Capability] = []
        for capability in frontier:
            for kind, target in capability.relations:
                if kind not in kinds:
                    continue
                provider_id = target.partition("::")[0]
                reason = None
                if not in_scope(config, provider_id):
                    reason = "out_of_scope"
                elif provider_id not in snapshot.providers:
                    reason = "provider_not_loaded"
                elif target not in snapshot.capabilities:
                    reason = "capability_not_found"
                if reason is not None:
                    edge = {
                        "from": capability.full_id,
                        "kind": kind,
                        "target": target,
                        "reason": reason,
                    }
                    unresolved.append(edge)
                    continue
                edges.append({"from": capability.full_id, "kind": kind, "to": target})
                if target not in visited:
                    visited.add(target)
                    order.append(target)
                    reached.append(snapshot.capabilities[target])
        if not reached:
            break
        frontier = reached
    details = snapshot.details
    capabilities = []
    for full_id in order:
        frozen = details.get(full_id)
        if frozen is None:
            frozen = details[full_id] = freeze(detail(snapshot.capabilities[full_id]))
        capabilities.append(frozen)
    return {
        "status": "partial" if unresolved else "ok",
        "revision": snapshot.revision,
        "capabilities": capabilities,
        "edges": edges,
        "unresolved": unresolved,
    }
