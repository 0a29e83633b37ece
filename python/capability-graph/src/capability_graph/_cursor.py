"""Opaque, tamper-evident list cursors, bound to the configuration, the revision and the filters.

A cursor is ``base64url(mac || payload)`` without padding: ``payload`` is the compact JSON
``{"v", "r", "f", "o"}`` (version, graph revision, filter key, offset) and ``mac`` the first 16
bytes of HMAC-SHA256 over the payload under the graph's cursor key. The key is derived from the
canonical host configuration (:func:`cursor_key`), so a cursor printed by one CLI process is
accepted by the next one with the same configuration, and by no other configuration.

Any cursor the graph did not issue -- longer than :data:`MAX_CURSOR_CHARS`, not base64url, a MAC
that does not verify, or a verified payload of another revision or other filters -- is
``CG_INPUT_INVALID`` (the cursor variant): the caller restarts listing. The MAC is verified
before the payload is parsed, so a forged payload (huge offsets, deep nesting) is never parsed;
nothing is ever silently skipped or repeated.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any, Final

from ._errors import GraphError
from ._generated.taxonomy import ErrorCode, Phase
from ._json import canonical_bytes

__all__ = ["MAX_CURSOR_CHARS", "cursor_key", "decode_cursor", "encode_cursor", "filter_key"]

_VERSION: Final = 2
_MAC_BYTES: Final = 16
#: A cursor the graph issues is about 120 characters; anything longer is not one of ours and is
#: refused before it is decoded.
MAX_CURSOR_CHARS: Final = 256
_KEY_LABEL: Final = b"capability-graph list cursor key\x00"


def cursor_key(configuration: Any) -> bytes:
    """The cursor MAC key of a host configuration, given as its canonical JSON identity."""
    return hashlib.sha256(_KEY_LABEL + canonical_bytes(configuration)).digest()


def filter_key(filters: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_bytes(filters)).hexdigest()[:16]


def _mac(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).digest()[:_MAC_BYTES]


def encode_cursor(key: bytes, revision: str, filters: str, offset: int) -> str:
    payload = json.dumps(
        {"v": _VERSION, "r": revision, "f": filters, "o": offset}, separators=(",", ":")
    ).encode("ascii")
    token = base64.urlsafe_b64encode(_mac(key, payload) + payload)
    return token.decode("ascii").rstrip("=")


def _foreign() -> GraphError:
    return GraphError.of(ErrorCode.CG_INPUT_INVALID, Phase.QUERY, variant="cursor")


def decode_cursor(key: bytes, cursor: str, revision: str, filters: str) -> int:
    """The offset a cursor continues from, or ``CG_INPUT_INVALID`` (cursor variant)."""
    if type(cursor) is not str or len(cursor) > MAX_CURSOR_CHARS:
        raise _foreign()
    body = cursor.rstrip("=")
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):  # not base64url, or not ASCII at all
        raise _foreign() from None
    mac, payload = raw[:_MAC_BYTES], raw[_MAC_BYTES:]
    if not payload or not hmac.compare_digest(mac, _mac(key, payload)):
        raise _foreign()
    # Verified: the payload is one the graph wrote with this key (a compact flat object).
    try:
        fields = json.loads(payload)
    except ValueError:  # pragma: no cover -- only a key collision could get here
        raise _foreign() from None
    if (
        not isinstance(fields, dict)
        or fields.get("v") != _VERSION
        or fields.get("r") != revision
        or fields.get("f") != filters
        or type(fields.get("o")) is not int
        or fields["o"] < 1
    ):
        raise _foreign()
    offset: int = fields["o"]
    return offset
