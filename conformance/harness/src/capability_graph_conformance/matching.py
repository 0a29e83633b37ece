"""JSON patterns of the vectors (``vector.schema.json#/$defs/Pattern``).

An object pattern matches when each of its members matches (extra observed members are fine); an
array matches element-wise with the same length; a scalar by JSON equality (``1 == 1.0``, but
``true`` is not ``1``). An object whose only member starts with ``$`` is a matcher:

``$absent``   the member must be missing (only as a member value)
``$pattern``  a string matching an ECMA-262 regular expression
``$type``     string, number, integer, boolean, array, object or null
``$exact``    the pattern, with no extra members in any object (matchers still apply inside)
``$length``   an array or string of that length
``$contains`` an array with at least one element matching the pattern
``$capture``  anything; remembered under a name for later steps
``$same``     equal to a value captured earlier; ``$differs``: not equal to it

In step arguments, ``{"$captured": NAME}`` is replaced by the captured value (:func:`substitute`);
with one edit member beside it, by an edited copy of a captured string: ``"$append": TEXT`` adds
TEXT at its end, ``"$setUnusedBits": true`` sets the unused low bits of the last character of a
base64url text (the bits its decoding ignores), so that a vector can hand an issued cursor back
in another spelling of the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._json import preview
from .schemas import ecma_search

__all__ = ["CAPTURED_EDITS", "MATCHERS", "json_equal", "match", "substitute"]

MATCHERS: Final = frozenset(
    (
        "$absent",
        "$pattern",
        "$type",
        "$exact",
        "$length",
        "$contains",
        "$capture",
        "$same",
        "$differs",
    )
)


def _matcher(pattern: Any) -> tuple[str, Any] | None:
    if isinstance(pattern, dict) and len(pattern) == 1:
        ((key, value),) = pattern.items()
        if key in MATCHERS:
            return key, value
    return None


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers compare by value, booleans are not numbers, objects by members."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


_TYPES: Final = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def match(
    pattern: Any, value: Any, captures: dict[str, Any] | None = None, path: str = "$"
) -> list[str]:
    """The mismatches of ``value`` against ``pattern`` (empty when it matches)."""
    captures = {} if captures is None else captures
    problems: list[str] = []
    _match(pattern, value, captures, path, problems, False)
    return problems


def _match(
    pattern: Any, value: Any, captures: dict[str, Any], path: str, out: list[str], strict: bool
) -> None:
    matcher = _matcher(pattern)
    if matcher is not None:
        _apply(matcher[0], matcher[1], value, captures, path, out, strict)
        return
    if isinstance(pattern, dict):
        if not isinstance(value, dict):
            out.append(f"{path}: expected an object, got {preview(value, 120)}")
            return
        if strict:
            extra = sorted(set(value) - set(pattern))
            if extra:
                out.append(f"{path}: unexpected member(s) {', '.join(extra)}")
        for key, sub in pattern.items():
            sub_path = f"{path}.{key}"
            absent = _matcher(sub)
            if absent is not None and absent[0] == "$absent":
                if absent[1] and key in value:
                    out.append(f"{sub_path}: must be absent, got {preview(value[key], 120)}")
                elif not absent[1] and key not in value:
                    out.append(f"{sub_path}: missing")
                continue
            if key not in value:
                out.append(f"{sub_path}: missing")
                continue
            _match(sub, value[key], captures, sub_path, out, strict)
        return
    if isinstance(pattern, list):
        if not isinstance(value, list):
            out.append(f"{path}: expected an array, got {preview(value, 120)}")
            return
        if len(pattern) != len(value):
            out.append(
                f"{path}: expected {len(pattern)} items, got {len(value)}: {preview(value, 200)}"
            )
            return
        for index, (sub, item) in enumerate(zip(pattern, value, strict=True)):
            _match(sub, item, captures, f"{path}[{index}]", out, strict)
        return
    if not json_equal(pattern, value):
        out.append(f"{path}: expected {preview(pattern, 120)}, got {preview(value, 120)}")


def _apply(
    name: str,
    arg: Any,
    value: Any,
    captures: dict[str, Any],
    path: str,
    out: list[str],
    strict: bool,
) -> None:
    if name == "$absent":
        out.append(f"{path}: $absent is only meaningful for an object member")
    elif name == "$pattern":
        if not isinstance(value, str) or not ecma_search(str(arg), value):
            out.append(f"{path}: expected a string matching {arg!r}, got {preview(value, 120)}")
    elif name == "$type":
        check = _TYPES.get(str(arg))
        if check is None or not check(value):
            out.append(f"{path}: expected type {arg}, got {preview(value, 120)}")
    elif name == "$exact":
        _match(arg, value, captures, path, out, True)
    elif name == "$length":
        if not isinstance(value, list | str) or len(value) != arg:
            out.append(f"{path}: expected length {arg}, got {preview(value, 120)}")
    elif name == "$contains":
        if not isinstance(value, list) or not any(
            not _probe(arg, item, captures, strict) for item in value
        ):
            out.append(f"{path}: no item matches {preview(arg, 120)} in {preview(value, 200)}")
    elif name == "$capture":
        captures[str(arg)] = value
    elif name in ("$same", "$differs"):
        if str(arg) not in captures:
            out.append(f"{path}: nothing was captured as {arg!r}")
        elif json_equal(captures[str(arg)], value) != (name == "$same"):
            relation = "equal to" if name == "$same" else "different from"
            out.append(f"{path}: expected a value {relation} {arg!r}, got {preview(value, 120)}")


def _probe(pattern: Any, value: Any, captures: dict[str, Any], strict: bool) -> list[str]:
    problems: list[str] = []
    _match(pattern, value, dict(captures), "$", problems, strict)
    return problems


def substitute(value: Any, captures: Mapping[str, Any]) -> Any:
    """``value`` with every ``{"$captured": NAME}`` replaced by the captured value (edited when
    the object has an edit member). KeyError: nothing was captured under NAME; ValueError: the
    edit does not apply to the captured value."""
    if isinstance(value, dict):
        if "$captured" in value and set(value) - {"$captured"} <= CAPTURED_EDITS:
            name = value["$captured"]
            if name not in captures:
                raise KeyError(f"nothing was captured as {name!r}")
            return _edited(captures[name], value)
        return {k: substitute(v, captures) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, captures) for v in value]
    return value


#: The members that may stand beside ``$captured`` (at most one of them).
CAPTURED_EDITS: Final = frozenset(("$append", "$setUnusedBits"))
_BASE64URL: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
#: The unused low bits of the last character of an unpadded base64 text, by its length mod 4.
_UNUSED_BITS: Final = {2: 0b1111, 3: 0b11}


def _edited(captured: Any, reference: Mapping[str, Any]) -> Any:
    edits = set(reference) & CAPTURED_EDITS
    if not edits:
        return captured
    if len(edits) > 1 or not isinstance(captured, str):
        raise ValueError(f"cannot edit {preview(captured, 60)} with {sorted(edits)}")
    if "$append" in reference:
        return captured + str(reference["$append"])
    # $setUnusedBits: the same bytes for a lenient decoder, another text for a strict one.
    unused = _UNUSED_BITS.get(len(captured) % 4)
    if unused is None or not captured or captured[-1] not in _BASE64URL:
        raise ValueError(f"{preview(captured, 60)} has no unused bits to set")
    last = _BASE64URL[_BASE64URL.index(captured[-1]) | unused]
    return captured[:-1] + last
