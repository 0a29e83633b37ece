"""Opaque list cursors: base64url JSON bound to the graph revision and the filters.

A cursor from another revision, with other filters, or not produced by us is ``CG_INPUT_INVALID``
(the caller restarts listing); it never silently skips or repeats items.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any, Final

from ._errors import GraphError
from ._generated.taxonomy import ErrorCode, Phase
from ._json import canonical_bytes

__all__ = ["decode_cursor", "encode_cursor", "filter_key"]

_VERSION: Final = 1


def filter_key(filters: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(filters)).hexdigest()[:16]


def encode_cursor(revision: str, key: str, offset: int) -> str:
    payload = json.dumps(
        {"v": _VERSION, "r": revision, "f": key, "o": offset}, separators=(",", ":")
    )
    return base64.urlsafe_b64encode(payload.encode("ascii")).decode("ascii").rstrip("=")


def _foreign() -> GraphError:
    return GraphError.of(ErrorCode.CG_INPUT_INVALID, Phase.QUERY, variant="cursor")


def decode_cursor(cursor: str, revision: str, key: str) -> int:
    """The offset a cursor continues from, or ``CG_INPUT_INVALID`` (cursor variant)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = json.loads(raw)
    except (binascii.Error, ValueError):
        raise _foreign() from None
    if (
        not isinstance(payload, dict)
        or set(payload) != {"v", "r", "f", "o"}
        or payload["v"] != _VERSION
        or payload["r"] != revision
        or payload["f"] != key
        or type(payload["o"]) is not int
        or payload["o"] < 1
    ):
        raise _foreign()
    offset: int = payload["o"]
    return offset
