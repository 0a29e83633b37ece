"""``read_document``: the body of a capability's local document, if the document policy allows.

The checks come in the contract's order: scope and existence of the capability, the document,
a reference-only document, the body policy (``documents.bodies``), the document root; the file
is then read under ``maxDocumentBytes`` (see ``_documents``), off the event loop
(``context.run_blocking``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._generated.taxonomy import ErrorCode, Phase
from ..documents import media_type_for, read_document_file
from ..errors import GraphError
from .common import OperationContext, find_capabilities

__all__ = ["handle"]


async def handle(context: OperationContext, request: Mapping[str, Any]) -> dict[str, Any]:
    snapshot, config = context.snapshot, context.config
    phase = Phase.DOCUMENT
    capability_id, document_id = request["capabilityId"], request["documentId"]
    (capability,) = find_capabilities(snapshot, config, [capability_id], phase)
    document = next(
        (d for d in capability.declaration.get("documents", ()) if d["id"] == document_id),
        None,
    )
    if document is None:
        raise GraphError.of(ErrorCode.CG_DOCUMENT_NOT_FOUND)
    if "url" in document:
        raise GraphError.of(ErrorCode.CG_DOCUMENT_REFERENCE_ONLY)
    bodies = config.bodies
    if bodies == "none" or (not isinstance(bodies, str) and capability.provider_id not in bodies):
        raise GraphError.of(ErrorCode.CG_ACCESS_DENIED, phase, variant="body")
    provider = snapshot.providers[capability.provider_id]
    if provider.document_root is None:
        raise GraphError.of(ErrorCode.CG_DOCUMENT_ROOT_REQUIRED)
    body = await context.run_blocking(
        read_document_file,
        provider.document_root,
        document["path"],
        max_bytes=config.budgets.max_document_bytes,
    )
    return {
        "capabilityId": capability_id,
        "documentId": document_id,
        "mediaType": media_type_for(document["path"]),
        "bytes": body.bytes,
        "sha256": body.sha256,
        "text": body.text,
    }
