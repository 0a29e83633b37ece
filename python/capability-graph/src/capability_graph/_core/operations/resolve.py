"""``resolve``: the full declarations of capabilities, with their relations followed.

Details come from the snapshot's cache of frozen details, which also remember their serialized
size: a resolve costs the traversal, and its size check serializes only the edges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._generated.defaults import RESOLVE_DEPTH
from ..._generated.taxonomy import Phase
from ..config import HostConfig
from ..documents import media_type_for
from ..frozen import freeze
from ..snapshot import RELATION_KINDS, Capability, Snapshot
from .common import OperationContext, find_capabilities, in_scope

__all__ = ["detail", "handle"]


async def handle(context: OperationContext, request: Mapping[str, Any]) -> dict[str, Any]:
    """The roots, the capabilities reached through the requested relations, and the edges."""
    snapshot, config = context.snapshot, context.config
    ids = list(dict.fromkeys(request["ids"]))
    roots = find_capabilities(snapshot, config, ids, Phase.QUERY)
    traversal = request.get("relations", {})
    kinds = set(traversal.get("kinds", RELATION_KINDS))
    depth = traversal.get("depth", RESOLVE_DEPTH)
    order = [c.full_id for c in roots]
    visited = set(order)
    edges: list[dict[str, str]] = []
    unresolved: list[dict[str, str]] = []
    # Every relation of every capability reached passes here; a target that exists and is in
    # scope (the common case) costs one lookup.
    scope, known = config.scope, snapshot.capabilities
    frontier = roots
    for _level in range(depth):
        reached: list[Capability] = []
        for capability in frontier:
            source = capability.full_id
            for kind, target in capability.relations:
                if kind not in kinds:
                    continue
                found = known.get(target)
                if found is not None and (scope is None or found.provider_id in scope):
                    edges.append({"from": source, "kind": kind, "to": target})
                    if target not in visited:
                        visited.add(target)
                        order.append(target)
                        reached.append(found)
                    continue
                unresolved.append(
                    {
                        "from": source,
                        "kind": kind,
                        "target": target,
                        "reason": _reason(snapshot, config, target),
                    }
                )
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


def _reason(snapshot: Snapshot, config: HostConfig, target: str) -> str:
    """Why a relation target cannot be returned, in the order the reasons are checked."""
    provider_id = target.partition("::")[0]
    if not in_scope(config, provider_id):
        return "out_of_scope"
    if provider_id not in snapshot.providers:
        return "provider_not_loaded"
    return "capability_not_found"


def detail(capability: Capability) -> dict[str, Any]:
    """A capability as ``resolve`` shows it: its summary, relations and document metadata."""
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
        metadata["mediaType"] = media_type_for(_url_path(document["url"]))
        metadata["kind"] = "url"
        metadata["url"] = document["url"]
    return metadata


def _url_path(url: str) -> str:
    """The path of an ``HttpUrl`` as written (CG-DEF-7): after the authority, before any query
    or fragment, percent-escapes not decoded; ``""`` for a URL without a path, whose host name
    never gives a suffix. (No URL parser: the pattern admits hosts a parser would refuse.)"""
    rest = url.split("://", 1)[1]
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    slash = rest.find("/")
    return rest[slash:] if slash >= 0 else ""
