"""The pure-JSON rules over a language value (CG-CONV-2, CG-CONV-6, CG-CONV-7, CG-CONV-9,
CG-CONV-11, CG-CONV-15): string keys, no NaN or Infinity, integers within +/-2**53, nesting at
most 32 deep, no lone surrogates. Violations raise :class:`NotPureJson` with a short reason
(never the offending value); callers turn it into the GraphError of their phase.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

MAX_DEPTH: Final = 32


MAX_SAFE_INTEGER: Final = 2**53


# A surrogate code point in a language string: in a parsed text only a \uD8xx-style escape makes
# one, and a Python str holds even a high-low pair as two lone surrogates.
LONE_SURROGATE_CHARACTER: Final = re.compile("[\ud800-\udfff]")


class NotPureJson(ValueError):
    """The input is not pure JSON data; ``reason`` says why without echoing the value."""

    def __init__(self, reason: str, pointer: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.pointer = pointer


TOO_DEEP: Final = f"nesting deeper than {MAX_DEPTH}"


class TooDeep:
    """A container at the depth where the depth rule finds a fault, skipped while parsing: its
    content is never read (CG-CONV-15). The value rules report it as nesting deeper than 32."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TooDeep()"


def check_string(text: str, pointer: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotPureJson("a string has a lone surrogate", pointer) from None


def whole_numbers_as_integers(value: Any) -> Any:
    """A copy of ``value`` where every float with an integral value is an int.

    JSON has one number type: ``5.0`` *is* ``5``, and the schemas' ``integer`` accepts it. The
    generated models are stricter, so requests and configurations pass through this first.
    """
    kind = type(value)
    if kind is float and value.is_integer():
        return int(value)
    if kind is dict:
        return {k: whole_numbers_as_integers(v) for k, v in value.items()}
    if kind is list:
        return [whole_numbers_as_integers(v) for v in value]
    return value


def escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


#: From this magnitude on, ECMAScript (so RFC 8785) writes a number with an exponent (``1e+21``).
_EXPONENT_FROM: Final = 1e21


def integral_beyond_range(number: float) -> bool:
    """Whether a float is an integer out of range (CG-CONV-6): integral, beyond 2^53, and written
    by RFC 8785 as an integer literal (below 10^21; from there on, a number that meets the
    schema's bounds)."""
    return number.is_integer() and MAX_SAFE_INTEGER < abs(number) < _EXPONENT_FROM


def check_pure_value(value: Any, pointer: str = "", depth: int = 0) -> None:
    """Check a language value (or a parsed document) against the pure-JSON rules.

    Accepts dict (str keys), list, str, int, float and bool. ``null`` is never valid: no field of
    the contract is nullable, and null is never an omission. Raises :class:`NotPureJson` naming
    the JSON pointer of the problem. ``depth`` is the depth of ``value`` in the value checked.

    The walk is depth first in document order and holds one iterator per open container, never
    a list of every child: a 100 MB value is judged with memory in its depth, not its size.
    """
    stack: list[tuple[str, int, Iterator[tuple[Any, Any]]]] = []
    children = _judge_pure(value, pointer, depth)
    if children is not None:
        stack.append((pointer, depth + 1, children))
    while stack:
        where, child_depth, pending = stack[-1]
        step = next(pending, None)
        if step is None:
            stack.pop()
            continue
        name, child = step
        child_where = f"{where}/{name}"
        grandchildren = _judge_pure(child, child_where, child_depth)
        if grandchildren is not None:
            stack.append((child_where, child_depth + 1, grandchildren))


def _judge_pure(item: Any, where: str, depth: int) -> Iterator[tuple[Any, Any]] | None:
    """Judge one value by the pure-JSON rules; for a container, its children still to judge
    (an object's member names are judged here, before any of its values)."""
    kind = type(item)
    # Only containers count: a scalar held by a container at depth 32 is fine (CG-CONV-11).
    if (depth > MAX_DEPTH and (kind is dict or kind is list)) or kind is TooDeep:
        raise NotPureJson(TOO_DEEP, where)
    if kind is str:
        check_string(item, where)
    elif kind is bool:
        return None
    elif item is None:
        raise NotPureJson("must not be null (omit the key instead)", where)
    elif kind is int:
        if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
            raise NotPureJson("integers must stay within +/-2^53", where)
    elif kind is float:
        if not math.isfinite(item):
            raise NotPureJson("NaN and Infinity are not JSON", where)
        if integral_beyond_range(item):
            raise NotPureJson("integers must stay within +/-2^53", where)
    elif kind is dict:
        for key in item:
            if type(key) is not str:
                raise NotPureJson("object keys must be strings", where)
            check_string(key, where)
        return ((escape_token(key), item[key]) for key in item)
    elif kind is list:
        return enumerate(item)
    else:
        raise NotPureJson("only JSON values are allowed (no bytes, sets, tuples, objects)", where)
    return None


def check_depth(value: Any, pointer: str = "", depth: int = 0) -> None:
    """Reject a container deeper than ``MAX_DEPTH`` (the root is at depth 0), naming the first
    in document order (spec/capability-graph/spec/01-conventions.md, CG-CONV-11).

    The one pure-JSON rule a definition file's parse (``check_values=False``) does not already
    enforce: the C decoder follows far deeper nesting. Only containers are visited, first without
    building pointers (a large definition has hundreds of thousands of containers); the walk that
    names the first one too deep runs only when there is one.
    """
    if holds_too_deep((value,), depth):
        _raise_first_too_deep(value, pointer, depth)


def _deeper_than_max(value: Any) -> bool:
    return holds_too_deep((value,), 0)


def holds_too_deep(children: Iterable[Any], depth: int) -> bool:
    """Whether a container among ``children`` (each at ``depth``) or inside them is deeper than
    ``MAX_DEPTH``. Recursive (at most ``MAX_DEPTH + 2`` frames): four times faster than a stack
    of tuples on a large definition."""
    for child in children:
        kind = type(child)
        if kind is dict or kind is list:
            if depth > MAX_DEPTH:
                return True
            if holds_too_deep(child.values() if kind is dict else child, depth + 1):
                return True
        elif kind is TooDeep:
            return True
    return False


def _raise_first_too_deep(value: Any, pointer: str, depth: int = 0) -> None:
    stack: list[tuple[Any, str, int]] = [(value, pointer, depth)]
    while stack:
        item, where, depth = stack.pop()
        if depth > MAX_DEPTH or type(item) is TooDeep:
            raise NotPureJson(TOO_DEEP, where)
        if type(item) is dict:
            if any(type(key) is not str for key in item):
                # Language values only: the pure-value check's fault, found on the way (CG-CONV-9).
                raise NotPureJson("object keys must be strings", where)
            children = [(f"{where}/{escape_token(key)}", child) for key, child in item.items()]
        elif type(item) is list:
            children = [(f"{where}/{i}", child) for i, child in enumerate(item)]
        else:
            continue
        # Reversed, so that the stack pops the first child first: document order.
        stack.extend(
            (child, place, depth + 1)
            for place, child in reversed(children)
            if type(child) is dict or type(child) is list or type(child) is TooDeep
        )
