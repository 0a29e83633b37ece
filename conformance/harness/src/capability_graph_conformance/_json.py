"""Small JSON helpers: compact and canonical dumps, RFC 7386 merge patch, bounded previews."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

__all__ = ["NO_ARGUMENTS", "canonical", "dumps", "escape_lone_surrogates", "merge_patch", "preview"]

#: A call vector without ``arguments``: the call carries none (CG-MCP-2).
NO_ARGUMENTS: Any = object()


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any) -> str:
    """Compact JSON text (UTF-8, no ASCII escaping), a lone surrogate written as its ``\\uXXXX``
    escape (UTF-8 cannot carry it; a vector may hold one, e.g. CG-MCP-6)."""
    return escape_lone_surrogates(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def escape_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate written as its ``\\uXXXX`` escape, so that it encodes
    as UTF-8 (inside a JSON string the escape is the same character)."""
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def canonical(value: Any) -> str:
    """Canonical JSON text: sorted keys, compact. Equal values give equal text: JSON has one
    number type, so an integral float is written as the integer it equals (``1.0`` as ``1``, as
    RFC 8785 writes it; CG-BUD-9)."""
    return json.dumps(
        _integral_floats_as_ints(value), ensure_ascii=False, separators=(",", ":"), sort_keys=True
    )


def _integral_floats_as_ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _integral_floats_as_ints(child) for key, child in value.items()}
    if isinstance(value, list | tuple):
        return [_integral_floats_as_ints(child) for child in value]
    return value


def merge_patch(target: Any, patch: Any) -> Any:
    """Apply a JSON Merge Patch (RFC 7386) to ``target``; neither argument is modified."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result: dict[str, Any] = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def preview(value: Any, limit: int = 600) -> str:
    """A one-line preview of ``value`` (bytes are decoded leniently), at most ``limit`` chars."""
    if isinstance(value, bytes):
        text = value.decode("utf-8", errors="backslashreplace")
    elif isinstance(value, str):
        text = value
    else:
        try:
            text = dumps(value)
        except (TypeError, ValueError):
            text = repr(value)
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."
