"""``is_retryable``: the only test for "fall back to the next provider / CLI"."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["RETRYABLE_API_STATUSES", "is_retryable"]

RETRYABLE_API_STATUSES: Final = frozenset({429, 529})

# The message fallback, with JavaScript semantics so that every implementation agrees:
# ASCII-only case folding and word boundaries (re.ASCII), and a "." that, like JavaScript's,
# matches no line terminator.
_NOT_LINE_TERMINATOR: Final = r"[^\n\r\u2028\u2029]"
_RETRYABLE_MESSAGE: Final = re.compile(
    rf"rate{_NOT_LINE_TERMINATOR}?limit|session limit|too many requests|quota|overloaded"
    r"|\b(?:429|529)\b",
    re.IGNORECASE | re.ASCII,
)

_MISSING: Final = object()


def _field(err: Any, attribute: str, key: str) -> Any:
    """Read a structured field from an exception/object (snake_case attribute) or from its JSON
    form, a mapping (camelCase key). Anything that fails to read counts as absent."""
    try:
        if isinstance(err, Mapping):
            return err.get(key, _MISSING)
        return getattr(err, attribute, _MISSING)
    except Exception:  # noqa: BLE001 - a hostile __getattr__ must not make is_retryable crash
        return _MISSING


def _message(err: Any) -> str:
    message = _field(err, "message", "message")
    if isinstance(message, str):
        return message
    if isinstance(err, BaseException):
        try:
            return str(err)
        except Exception:  # noqa: BLE001 - an unprintable error has no message to match
            return ""
    return ""


def _status_value(status: object) -> int | None:
    """The HTTP status as a plain int: ints (HTTPStatus included) and integral floats (JSON
    does not tell 429 from 429.0); never bools."""
    try:
        if isinstance(status, bool):
            return None
        if isinstance(status, int):
            return int.__index__(status)
        if isinstance(status, float) and status.is_integer():
            return int(status)
    except Exception:  # noqa: BLE001 - a hostile int subclass is no status
        return None
    return None


def is_retryable(err: object) -> bool:
    """True when ``err`` says the provider is rate-limited, overloaded or timed out.

    In order: a falsy ``err`` is not retryable; ``timed_out is True`` is; an ``api_status``
    of exactly 429 or 529 (an int such as ``HTTPStatus``, or 429.0; not a bool) is, and any other
    ``api_status`` is not: a structured field has spoken, so the message is not consulted.
    Only without an ``api_status`` does the message decide, case-insensitively: ``rate limit``
    (with one character or none between the words), ``session limit``, ``too many
    requests``, ``quota``, ``overloaded``, or a whole-word ``429`` / ``529``. Other 5xx
    statuses and network errors are not retryable.

    Exceptions and objects are read by attribute (``timed_out``, ``api_status``, ``message``
    or ``str(err)``); a mapping is read as the JSON form (``timedOut``, ``apiStatus``,
    ``message``). Never raises.
    """
    try:
        falsy = not err
    except Exception:  # noqa: BLE001 - a hostile __bool__ or __len__: treat as present
        falsy = False
    if falsy:
        return False
    if _field(err, "timed_out", "timedOut") is True:
        return True
    status = _field(err, "api_status", "apiStatus")
    if status is not _MISSING and status is not None:
        return _status_value(status) in RETRYABLE_API_STATUSES
    return _RETRYABLE_MESSAGE.search(_message(err)) is not None
