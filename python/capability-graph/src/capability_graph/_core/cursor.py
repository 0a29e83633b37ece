"""Opaque, tamper-evident list cursors, bound to the configuration, the revision and the filters.

A cursor is ``base64url(mac || payload)`` without padding: ``payload`` is the compact JSON
``{"v", "r", "f", "o"}`` (version, graph revision, filter key, offset) and ``mac`` the first 16
bytes of HMAC-SHA256 over the payload under the graph's cursor key. The key is derived from the
canonical host configuration (:func:`cursor_key`), so a cursor printed by one CLI process is
accepted by the next one with the same configuration, and by no other configuration.

Any cursor the graph did not issue is ``CG_INPUT_INVALID`` (the cursor variant) and the caller
restarts listing: longer than :data:`MAX_CURSOR_CHARS`, not the one base64url text of its bytes
([CG-CUR-6]), a MAC that does not verify, or a verified payload other than the exact bytes the
graph writes for this revision, these filters and a decimal offset ([CG-CUR-7]). The MAC is
verified before the payload is read, and the payload is compared, never parsed as JSON, so a
forged payload (huge offsets, deep nesting, other spellings of a number) never reaches a parser;
the list operation refuses an offset at or past the end of the selection ([CG-CUR-8]). Nothing is
ever silently skipped or repeated.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from typing import Any, Final

from .._generated.taxonomy import ErrorCode, Phase
from .errors import GraphError
from .json import canonical_bytes

__all__ = [
    "MAX_CURSOR_CHARS",
    "cursor_key",
    "decode_cursor",
    "encode_cursor",
    "filter_key",
    "foreign_cursor",
]

_VERSION: Final = 2
_MAC_BYTES: Final = 16
#: A cursor the graph issues is about 120 characters; anything longer is not one of ours and is
#: refused before it is decoded.
MAX_CURSOR_CHARS: Final = 256
_KEY_LABEL: Final = b"capability-graph list cursor key\x00"
_BASE64URL: Final = re.compile(r"[A-Za-z0-9_-]+")
#: An offset as the graph writes it: decimal, no sign, no leading zero, no fraction or exponent.
_OFFSET: Final = re.compile(rb"[1-9][0-9]*")


def cursor_key(configuration: Any) -> bytes:
    """The cursor MAC key of a host configuration, given as its canonical JSON identity."""
    return hashlib.sha256(_KEY_LABEL + canonical_bytes(configuration)).digest()


def filter_key(filters: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(filters)).hexdigest()[:16]


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).digest()[:_MAC_BYTES]


def _payload(revision: str, filters: str, offset: str) -> bytes:
    """The payload text [CG-CUR-5] writes, members in this order, the offset as given."""
    head = json.dumps({"v": _VERSION, "r": revision, "f": filters}, separators=(",", ":"))
    return f'{head[:-1]},"o":{offset}}}'.encode("ascii")


def encode_cursor(key: bytes, revision: str, filters: str, offset: int) -> str:
    payload = _payload(revision, filters, str(offset))
    token = base64.urlsafe_b64encode(_mac(key, payload) + payload)
    return token.decode("ascii").rstrip("=")


def foreign_cursor() -> GraphError:
    """The error of a cursor the graph did not issue ([CG-CUR-2])."""
    return GraphError.of(ErrorCode.CG_INPUT_INVALID, Phase.QUERY, variant="cursor")


def _canonical_bytes(cursor: str) -> bytes | None:
    """The bytes of a cursor text, when it is the one text :func:`encode_cursor` writes for them
    ([CG-CUR-6]): no padding, no other alphabet, no unused trailing bits set."""
    if not _BASE64URL.fullmatch(cursor):
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):  # a length one more than a multiple of 4
        return None
    # The decoder ignores the unused bits of the last character: only the text written without
    # them is the cursor's.
    if base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=") != cursor:
        return None
    return raw


def decode_cursor(key: bytes, cursor: str, revision: str, filters: str) -> int:
    """The offset a cursor continues from, or ``CG_INPUT_INVALID`` (cursor variant). The offset is
    at least 1; whether an item is at that position is the caller's to check ([CG-CUR-8])."""
    if type(cursor) is not str or len(cursor) > MAX_CURSOR_CHARS:
        raise foreign_cursor()
    raw = _canonical_bytes(cursor)
    if raw is None:
        raise foreign_cursor()
    mac, payload = raw[:_MAC_BYTES], raw[_MAC_BYTES:]
    if not payload or not hmac.compare_digest(mac, _mac(key, payload)):
        raise foreign_cursor()
    # Verified, yet untrusted ([CG-CUR-7]): anyone with the configuration can compute the key.
    # Exactly the bytes the graph writes for this revision, these filters and a decimal offset.
    head = _payload(revision, filters, "")[:-1]  # every byte before the offset's digits
    digits = payload[len(head) : -1]
    if not (payload.startswith(head) and payload.endswith(b"}") and _OFFSET.fullmatch(digits)):
        raise foreign_cursor()
    return int(digits)
