"""Validation of the ``context`` of a match request (CG-CTX-1, CG-CTX-2, CG-CTX-3).

``context`` is a flat object of scalar facts: at most 64 keys matching
``^[A-Za-z][A-Za-z0-9_.-]{0,63}$``; each value a string of at most 1024 characters, a finite number
or a boolean. Anything else is ``CG_CONTEXT_INVALID`` (phase ``match``, nextAction ``fix_input``)
with a pointer message that names *where* and *what type was expected*, never the offending value.
A key is named in the pointer only once it is known to match the key pattern (so a key can never
smuggle text into a message). Checks run in this order and the first failure wins: the value is an
object; it has at most 64 keys; then each entry in insertion (document) order — key, then value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

from .._generated.defaults import MAX_CONTEXT_KEYS, MAX_CONTEXT_STRING
from .._generated.taxonomy import ErrorCode, Phase
from .errors import GraphError
from .json import integral_beyond_range

__all__ = ["MAX_CONTEXT_KEYS", "MAX_CONTEXT_STRING", "ContextValue", "validate_context"]

ContextValue = str | int | float | bool

# JSON integers beyond ±2^53 are not portable between implementations (CG-CTX-1).
_MAX_SAFE_INT: Final = 2**53
_KEY: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")


def _invalid(message: str) -> GraphError:
    return GraphError(ErrorCode.CG_CONTEXT_INVALID, Phase.MATCH, message)


def validate_context(value: object) -> dict[str, ContextValue]:
    """Return a plain-``dict`` copy of a valid context, or raise ``CG_CONTEXT_INVALID``.

    ``None`` is not "no context": callers that accept an omitted context pass ``{}`` (an explicit
    JSON ``null`` is a request-shape error that the request validation reports first).
    """
    if not isinstance(value, Mapping):
        raise _invalid("/context must be an object")
    if len(value) > MAX_CONTEXT_KEYS:
        raise _invalid(f"/context must have at most {MAX_CONTEXT_KEYS} keys")
    result: dict[str, ContextValue] = {}
    for key, item in value.items():
        if not isinstance(key, str) or _KEY.fullmatch(key) is None:
            raise _invalid("/context keys must match ^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
        # Keys are the caller's words: a message names the value's role, never the key.
        where = "/context values"
        if isinstance(item, bool):
            result[key] = bool(item)
        elif isinstance(item, str):
            if len(item) > MAX_CONTEXT_STRING:
                limit = MAX_CONTEXT_STRING
                raise _invalid(f"{where} must be strings of at most {limit} characters")
            if _has_lone_surrogate(item):
                raise _invalid(f"{where} must be strings of valid Unicode text")
            result[key] = str(item)
        elif isinstance(item, int):
            if not -_MAX_SAFE_INT <= item <= _MAX_SAFE_INT:
                raise _invalid(f"{where} must be integers between -2^53 and 2^53")
            result[key] = int(item)
        elif isinstance(item, float) and math.isfinite(item):
            if integral_beyond_range(item):
                raise _invalid(f"{where} must be integers between -2^53 and 2^53")
            result[key] = float(item)
        else:
            raise _invalid(f"{where} must be strings, finite numbers or booleans")
    return result


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
