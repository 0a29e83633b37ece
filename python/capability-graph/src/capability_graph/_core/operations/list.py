"""``list``: one page of capability summaries, filtered by providers and tags.

Pages are cut by offset in the snapshot's fixed order; the cursor to the next page is opaque and
tamper-evident (see ``_cursor``): it binds the revision and the filters. A cursor names a position
where a selected item is ([CG-CUR-8]), so one past the end is refused, never an empty page.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice
from typing import Any

from ..._generated.defaults import LIST_LIMIT
from ..._generated.taxonomy import Phase
from ..cursor import decode_cursor, encode_cursor, filter_key, foreign_cursor
from .common import (
    OperationContext,
    capabilities_of,
    check_named_providers,
    scoped_providers,
    selected_providers,
    selection_of,
)

__all__ = ["handle"]


async def handle(context: OperationContext, request: Mapping[str, Any]) -> dict[str, Any]:
    snapshot, config = context.snapshot, context.config
    named = request.get("providers")
    if named is not None:
        check_named_providers(snapshot, config, named, Phase.QUERY)
    providers = selected_providers(snapshot, config, named)
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
    # [CG-CUR-8]: a cursor names a position where a selected item is. The in-scope catalog
    # bounds the selection, so an offset of any size is refused before the items are walked.
    if offset and offset >= authorized:
        raise foreign_cursor()
    if authorized == 0:
        return {"status": "empty", "revision": snapshot.revision, "items": []}
    if offset:
        # A later page: a slice of the selection, kept for the pages after it.
        page = list(selection_of(snapshot, providers, tags)[offset : offset + limit + 1])
        if not page:  # the filters select no more than `offset` items
            raise foreign_cursor()
    else:  # the first page walks no further than itself
        page = list(islice(capabilities_of(snapshot, providers, tags), limit + 1))
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
