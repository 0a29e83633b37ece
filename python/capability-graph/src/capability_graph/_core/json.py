"""Pure JSON: parsing untrusted bytes and checking language values against the contract's rules.

A definition, a configuration or a request must be JSON *data*: string keys, no duplicate keys,
no NaN or Infinity, integers within +/-2**53, nesting at most 32 deep, valid UTF-8 without lone
surrogates. Violations raise :class:`NotPureJson` with a short reason (never the offending value);
callers turn it into the GraphError of their phase.

Parsing uses the stdlib C decoder with an ``object_pairs_hook`` (duplicate keys) and
``parse_constant`` (``NaN`` and ``Infinity`` make a text that is not JSON, CG-CONV-16). Depth
and integer range are checked in one walk; the walk is skipped for definition files, whose
schema admits no numbers, by ``check_values=False``; their depth is checked by
:func:`check_depth`, which visits only containers.

No text is parsed deeper than the depth rule looks (CG-CONV-15): a container at the depth where
the rule finds a fault is skipped to its closing bracket and stands as a :class:`TooDeep` marker,
so an outcome never depends on how deep a runtime's parser can go.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

import orjson
import rfc8785

__all__ = [
    "DUPLICATE_KEY",
    "MAX_DEPTH",
    "MAX_INTEGER_DIGITS",
    "MAX_SAFE_INTEGER",
    "MalformedJson",
    "NotPureJson",
    "canonical_bytes",
    "check_depth",
    "check_pure_value",
    "dump_bytes",
    "dumps",
    "duplicated_names",
    "lone_surrogate_count",
    "parse_definition_json",
    "parse_pure_json",
    "parse_request_text",
    "scan_json_text",
    "whole_numbers_as_integers",
]

MAX_DEPTH: Final = 32
MAX_SAFE_INTEGER: Final = 2**53
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")
# A surrogate code point in a language string: in a parsed text only a \uD8xx-style escape makes
# one, and a Python str holds even a high-low pair as two lone surrogates.
_LONE_SURROGATE_CHARACTER: Final = re.compile("[\ud800-\udfff]")
#: The reason given for a duplicate member name (every parser of this module rejects them).
DUPLICATE_KEY: Final = "an object has a duplicate key"


class NotPureJson(ValueError):
    """The input is not pure JSON data; ``reason`` says why without echoing the value."""

    def __init__(self, reason: str, pointer: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.pointer = pointer


def _reject_constant(_name: str) -> Any:
    # NaN and Infinity are not RFC 8259 JSON: a text holding one is not JSON (CG-CONV-16).
    raise MalformedJson(_NOT_JSON)


_NOT_JSON: Final = "not well-formed JSON"
_TOO_DEEP: Final = f"nesting deeper than {MAX_DEPTH}"
#: A configuration holds inline definitions at /providers/N/definition, depth 3: a container at
#: depth 33 of one of them is at depth 36 of the configuration's text (CG-CONV-11).
CONFIG_SKIP_DEPTH: Final = 3 + MAX_DEPTH + 1


class TooDeep:
    """A container at the depth where the depth rule finds a fault, skipped while parsing: its
    content is never read (CG-CONV-15). The value rules report it as nesting deeper than 32."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TooDeep()"


# What a depth scan must see: a string (a bracket inside one does not count; an unterminated one
# runs to the end of the text) or a bracket.
_STRING_OR_BRACKET: Final = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


def _deep_spans(text: str, skip_depth: int) -> list[tuple[int, int]] | None:
    """The spans of the containers at ``skip_depth`` (the root is at depth 0), in text order, each
    from its opening bracket to the bracket that closes it, counting brackets outside strings;
    None when one of them never closes (the text is not JSON)."""
    spans: list[tuple[int, int]] = []
    depth = -1
    start = 0
    for token in _STRING_OR_BRACKET.finditer(text):
        char = token.group()[0]
        if char == '"':
            continue
        if char in "[{":
            depth += 1
            if depth == skip_depth:
                start = token.start()
        else:
            if depth == skip_depth:
                spans.append((start, token.end()))
            depth -= 1
            if depth < -1:
                return spans  # a bracket that closes nothing: the parse refuses the text
    return None if depth >= skip_depth else spans


def _loads_skipping(text: str, skip_depth: int, hooks: dict[str, Any]) -> Any:
    """``json.loads`` of ``text`` with every container at ``skip_depth`` replaced by a
    :class:`TooDeep` marker, or :class:`MalformedJson`.

    Each skipped span becomes the token ``NaN``, which the parse turns into the marker; a ``NaN``
    or ``Infinity`` of the text itself (more ``NaN`` than spans, or any ``Infinity``) makes the
    text not JSON, as everywhere (CG-CONV-16). The parse never goes deeper than ``skip_depth``.
    """
    spans = _deep_spans(text, skip_depth)
    if spans is None:
        raise MalformedJson(_NOT_JSON)
    pieces = []
    end = 0
    for start, stop in spans:
        pieces.append(text[end:start])
        pieces.append("NaN")
        end = stop
    pieces.append(text[end:])
    markers = 0

    def marker(name: str) -> TooDeep:
        nonlocal markers
        markers += 1
        if name != "NaN" or markers > len(spans):
            raise MalformedJson(_NOT_JSON)
        return TooDeep()

    try:
        value = json.loads("".join(pieces), parse_constant=marker, **hooks)
    except (NotPureJson, _NullFound):
        raise
    except (ValueError, RecursionError):
        raise MalformedJson(_NOT_JSON) from None
    if markers != len(spans):
        raise MalformedJson(_NOT_JSON)
    return value


def _holds_container_at(children: Iterable[Any], depth: int, target: int) -> bool:
    """Whether a container among ``children`` (each at ``depth``) or inside them is at
    ``target``."""
    for child in children:
        kind = type(child)
        if kind is dict or kind is list:
            if depth >= target:
                return True
            if _holds_container_at(child.values() if kind is dict else child, depth + 1, target):
                return True
    return False


def _loads_within(text: str, skip_depth: int, **hooks: Any) -> Any:
    """``json.loads`` of a text with every container at ``skip_depth`` skipped (see
    :func:`_loads_skipping`), or :class:`MalformedJson`. The C decoder is tried first: nearly
    every text is shallow, and a shallow one is the same either way. A fault found by the first
    parse may lie inside a container that is not to be read: the text is then parsed again,
    skipping, when it has brackets enough to hold one."""
    try:
        value = json.loads(text, parse_constant=_reject_constant, **hooks)
    except (NotPureJson, _NullFound, ValueError, RecursionError) as fault:
        if text.count("[") + text.count("{") <= skip_depth:
            if isinstance(fault, NotPureJson | _NullFound):
                raise
            raise MalformedJson(_NOT_JSON) from None
        return _loads_skipping(text, skip_depth, hooks)
    if _holds_container_at((value,), 0, skip_depth):
        return _loads_skipping(text, skip_depth, hooks)
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise NotPureJson(DUPLICATE_KEY)
    if None in obj.values():
        raise _NullFound
    return obj


class _NullFound(Exception):
    """A null member: rare, so the parse is redone with a walk that can name its pointer."""


def parse_pure_json(
    data: bytes,
    *,
    check_values: bool = True,
    allow_null: bool = False,
    skip_depth: int = MAX_DEPTH + 1,
) -> Any:
    """Parse ``data`` as pure JSON or raise :class:`NotPureJson`.

    ``allow_null`` keeps nulls for the caller to judge (a configuration file holds inline
    definitions, whose nulls are definition errors, not configuration errors). Containers at
    ``skip_depth`` are not read but stand as :class:`TooDeep` markers (CG-CONV-15; a
    configuration file passes :data:`CONFIG_SKIP_DEPTH`).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotPureJson("not valid UTF-8") from None
    if text.startswith("\ufeff"):
        raise NotPureJson("a byte order mark is not JSON")
    integers = _FileIntegers()
    if allow_null:
        value = _loads(text, _unique_pairs_with_nulls, integers, skip_depth)
        if _SURROGATE_ESCAPE.search(data):
            _check_strings(value)
        return value  # the configuration's own check judges its integers (CG-CONV-13)
    try:
        value = _loads(text, _unique_pairs, integers, skip_depth)
    except _NullFound:
        value = _loads(text, _unique_pairs_with_nulls, integers, skip_depth)
        check_pure_value(value)  # names the pointer of the first null (or other problem)
    if check_values or integers.out_of_range:
        check_pure_value(value)  # names the pointer of the first integer out of range
    elif _SURROGATE_ESCAPE.search(data):
        _check_strings(value)
    return value


# The escapes a count of quote bytes must know: an escaped quote is not a string's end, and an
# escaped backslash before a quote does not escape it. Read left to right, each escape once.
_QUOTE_OR_BACKSLASH_ESCAPE: Final = re.compile(rb'\\["\\]')


def parse_definition_json(data: bytes) -> Any:
    """A definition file's bytes -> its value, under every pure-JSON rule (depth included), or
    :class:`NotPureJson`: exactly what ``parse_pure_json(data, check_values=False)`` followed by
    :func:`check_depth` gives (a property test holds the two to it).

    A definition's leaves are strings (and booleans, which its schema refuses), so a large one
    is parsed by orjson, three times faster than the stdlib with the duplicate-key hook, and
    accepted when a walk finds only strings and booleans at most ``MAX_DEPTH`` deep and the
    text has exactly one string per key and string found: a duplicate key, which orjson
    silently drops, leaves a string of the text unaccounted for. Anything else (a number, a
    null, a surrogate escape, a text orjson refuses) takes the exact path, which names the
    problem.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        strings = _strings_of(value)
        if (
            strings is not None
            and 2 * strings == _unescaped_quotes(data)
            and not _SURROGATE_ESCAPE.search(data)
        ):
            return value
    value = parse_pure_json(data, check_values=False)
    check_depth(value)
    return value


def _unescaped_quotes(data: bytes) -> int:
    quotes = data.count(b'"')
    if b"\\" in data:
        quotes -= _QUOTE_OR_BACKSLASH_ESCAPE.findall(data).count(b'\\"')
    return quotes


def _strings_of(value: Any) -> int | None:
    """The keys and string values of ``value``, or None when it holds something other than
    strings and booleans, or a container deeper than ``MAX_DEPTH``."""
    return _count_strings((value,), 0)


def _count_strings(children: Iterable[Any], depth: int) -> int | None:
    count = 0
    for child in children:
        kind = type(child)
        if kind is str:
            count += 1
        elif kind is dict or kind is list:
            if depth > MAX_DEPTH:
                return None
            inner = _count_strings(child.values() if kind is dict else child, depth + 1)
            if inner is None:
                return None
            count += inner + (len(child) if kind is dict else 0)
        elif kind is not bool:
            return None
    return count


def _unique_pairs_with_nulls(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise NotPureJson(DUPLICATE_KEY)
    return obj


class _FileIntegers:
    """The integer literals of a configuration or definition file (CG-CONV-13): one of more than
    MAX_INTEGER_DIGITS digits is never converted (whatever the runtime could) but stands for a
    value just outside +/-2^53, so that the range rule reports it at its pointer, as any other
    integer out of range; ``out_of_range`` says whether a walk is needed to find it."""

    def __init__(self) -> None:
        self.out_of_range = False

    def __call__(self, literal: str) -> int:
        negative = literal.startswith("-")
        if len(literal) - negative > MAX_INTEGER_DIGITS:
            self.out_of_range = True
            return -(MAX_SAFE_INTEGER + 1) if negative else MAX_SAFE_INTEGER + 1
        value = int(literal)
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            self.out_of_range = True
        return value

    def number(self, literal: str) -> float:
        """A literal with a fraction or exponent: out of range too when its value is an integer
        RFC 8785 writes as an integer literal beyond 2^53 (``1e20``), and a fault to find too when
        no double holds it (``1e400`` is infinite: CG-CONV-18)."""
        value = float(literal)
        if integral_beyond_range(value) or not math.isfinite(value):
            self.out_of_range = True
        return value


def _loads(text: str, hook: Any, integers: _FileIntegers, skip_depth: int) -> Any:
    return _loads_within(
        text, skip_depth, object_pairs_hook=hook, parse_int=integers, parse_float=integers.number
    )


def _check_strings(value: Any) -> None:
    """Reject lone surrogates (only ``\\uD8xx``-style escapes can produce them), at the pointer of
    the first in document order: an object's member names before its values (CG-MSG-19)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            _check_string(item, where)
        elif isinstance(item, dict):
            for key in item:
                _check_string(key, where)
            stack.extend((item[key], f"{where}/{_escape(key)}") for key in reversed(item))
        elif isinstance(item, list):
            stack.extend((item[i], f"{where}/{i}") for i in range(len(item) - 1, -1, -1))


def _check_string(text: str, pointer: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotPureJson("a string has a lone surrogate", pointer) from None


# -- request JSON texts ------------------------------------------------------------------------
#
# A request that arrives as JSON text (CLI --arguments, --arguments-file and --context values,
# MCP tools/call frames, a JSON text handed to the SDK) is read by one parser with two rules
# the stdlib and the MCP SDK's parser do not apply: a duplicate member name in any object is an
# error (never "last wins"), and an integer literal with more than 400 digits (MAX_INTEGER_DIGITS)
# is an error (never an exception, never silence). The parse is lenient first -- duplicates and
# oversized literals leave markers -- so that the first problem can be located by a walk.

#: The reason given for an integer literal too long to convert; it is outside +/-2^53 too.
_INTEGER_RANGE: Final = "integers must stay within +/-2^53"


class MalformedJson(NotPureJson):
    """The text is not JSON at all (not UTF-8, not well-formed, brackets that never close).

    A CLI reports it as its own usage error; every other surface as the request's
    ``CG_INPUT_INVALID``, like the other :class:`NotPureJson` problems.
    """


class _Duplicated(dict[str, Any]):
    """An object that had a duplicate member name (the last value of each name is kept)."""

    def __init__(self, items: list[tuple[str, Any]]) -> None:
        super().__init__(items)
        seen: set[str] = set()
        self.duplicated: set[str] = set()
        for name, _ in items:
            if name in seen:
                self.duplicated.add(name)
            seen.add(name)


class _Unconvertible:
    """An integer literal longer than MAX_INTEGER_DIGITS."""

    __slots__ = ()


def duplicated_names(value: Any) -> frozenset[str]:
    """The member names that occurred more than once in an object from :func:`scan_json_text`."""
    return frozenset(value.duplicated) if isinstance(value, _Duplicated) else frozenset()


#: The longest integer literal a request text may hold (CG-CONV-6): far beyond +/-2^53 (16
#: digits), far below any runtime's conversion limit (Python's is 4,300 by default), and the same
#: for every implementation.
MAX_INTEGER_DIGITS: Final = 400


def scan_json_text(
    data: str | bytes, pointer: str = "", depth: int = 0
) -> tuple[Any, NotPureJson | None]:
    """Parse a JSON text leniently: the value and the first problem of the request rules.

    The value keeps the last of duplicated members and a marker in place of an unconvertible
    integer or of a container at depth 33 of the request (CG-CONV-15: never read); the problem
    (duplicate member name, such an integer, such a container) names its JSON pointer (under
    ``pointer``, when the text is one value of a larger request, whose root lies at ``depth`` of
    the request; a negative ``depth`` when the request lies inside the text). A text that is not
    JSON at all -- NaN and Infinity included (CG-CONV-16) -- raises :class:`MalformedJson`.
    """
    flagged = False
    limit = MAX_INTEGER_DIGITS

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal flagged
        obj = dict(items)
        if len(obj) == len(items):
            return obj
        flagged = True
        return _Duplicated(items)

    def integer(literal: str) -> Any:
        nonlocal flagged
        if len(literal) - literal.startswith("-") > limit:
            flagged = True
            return _Unconvertible()
        return int(literal)

    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        raise MalformedJson("not valid UTF-8") from None
    skip_depth = MAX_DEPTH + 1 - depth
    value = _loads_within(text, skip_depth, object_pairs_hook=pairs, parse_int=integer)
    if not flagged and not _holds_marker(value, text, skip_depth):
        return value, None
    return value, _first_problem(value, pointer)


def _holds_marker(value: Any, text: str, skip_depth: int) -> bool:
    """Whether ``value``, parsed from ``text``, holds a :class:`TooDeep` marker: only a text with
    brackets enough can, and then a walk of its containers down to ``skip_depth`` says."""
    if text.count("[") + text.count("{") <= skip_depth:
        return False
    return _holds_too_deep((value,), MAX_DEPTH + 1 - skip_depth)


def _first_problem(value: Any, pointer: str) -> NotPureJson | None:
    """The first marker left by :func:`scan_json_text`, in document order, with its pointer."""
    stack: list[tuple[Any, str]] = [(value, pointer)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, _Unconvertible):
            return NotPureJson(_INTEGER_RANGE, where)
        if isinstance(item, TooDeep):
            return NotPureJson(_TOO_DEEP, where)
        if isinstance(item, _Duplicated):
            return NotPureJson(DUPLICATE_KEY, where)
        if isinstance(item, dict):
            children = [(child, f"{where}/{_escape(key)}") for key, child in item.items()]
        elif isinstance(item, list):
            children = [(child, f"{where}/{i}") for i, child in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))
    return None


def parse_request_text(data: str | bytes, pointer: str = "", depth: int = 0) -> Any:
    """THE parser of a request given as JSON text, on every surface.

    Raises :class:`NotPureJson` (with the pointer of the problem) for a text that is not
    well-formed JSON, has a duplicate member name in any object, holds an integer literal with
    more than 400 digits (MAX_INTEGER_DIGITS), or a container at depth 33 of the request (the
    text not being JSON at all, NaN and Infinity included, is :class:`MalformedJson`). The other
    pure-JSON rules (nulls, the integer range) are the request check's, which follows.
    """
    value, problem = scan_json_text(data, pointer, depth)
    if problem is not None:
        raise problem
    return value


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


def _escape(token: str) -> str:
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
        raise NotPureJson(_TOO_DEEP, where)
    if kind is str:
        _check_string(item, where)
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
            _check_string(key, where)
        return ((_escape(key), item[key]) for key in item)
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
    if _holds_too_deep((value,), depth):
        _raise_first_too_deep(value, pointer, depth)


def _deeper_than_max(value: Any) -> bool:
    return _holds_too_deep((value,), 0)


def _holds_too_deep(children: Iterable[Any], depth: int) -> bool:
    """Whether a container among ``children`` (each at ``depth``) or inside them is deeper than
    ``MAX_DEPTH``. Recursive (at most ``MAX_DEPTH + 2`` frames): four times faster than a stack
    of tuples on a large definition."""
    for child in children:
        kind = type(child)
        if kind is dict or kind is list:
            if depth > MAX_DEPTH:
                return True
            if _holds_too_deep(child.values() if kind is dict else child, depth + 1):
                return True
        elif kind is TooDeep:
            return True
    return False


def _raise_first_too_deep(value: Any, pointer: str, depth: int = 0) -> None:
    stack: list[tuple[Any, str, int]] = [(value, pointer, depth)]
    while stack:
        item, where, depth = stack.pop()
        if depth > MAX_DEPTH or type(item) is TooDeep:
            raise NotPureJson(_TOO_DEEP, where)
        if type(item) is dict:
            if any(type(key) is not str for key in item):
                # Language values only: the pure-value check's fault, found on the way (CG-CONV-9).
                raise NotPureJson("object keys must be strings", where)
            children = [(f"{where}/{_escape(key)}", child) for key, child in item.items()]
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


# Serialization uses orjson, 5-6x faster than the stdlib, which matters for the revision hash of
# large definitions (which hold no numbers) and for every result's size check. orjson writes a
# float as Python does (``1.0``, ``1e-6``); the compact serialization writes numbers as RFC 8785
# does, in the ECMAScript form (``1``, ``0.000001``; CG-BUD-9), so a value holding a float is
# written again with each float as an ``orjson.Fragment`` of that form.


def dump_bytes(value: Any) -> bytes:
    """The compact serialization (spec/capability-graph/spec/01-conventions.md): UTF-8, no
    whitespace, members in the order the value holds them, RFC 8785 escapes and numbers.

    A lone surrogate, which orjson refuses, is written as its six-byte ``\\uXXXX`` escape with
    lowercase hex: only the size check of a request meets one (CG-BUD-1), before the pure-JSON
    rules refuse it.
    """
    if type(value) is float:
        return _ecmascript_number(value).encode("ascii")
    try:
        data = orjson.dumps(value)
    except orjson.JSONEncodeError:
        if not _holds_lone_surrogate(value):
            raise
        return _dump_with_lone_surrogates(value)
    if _FLOAT_TOKEN.search(data) is not None and _holds_float(value):
        return orjson.dumps(_numbers_as_fragments(value))
    return data


def _dump_with_lone_surrogates(value: Any) -> bytes:
    """The compact serialization of a value orjson refuses for its lone surrogates, written part
    by part: a string by the stdlib encoder, which keeps the surrogate as a character that
    ``backslashreplace`` then writes as ``\\udxxx``, inside its string."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is _Text:
            out.append(item)
        elif kind is str:
            out.append(json.dumps(item, ensure_ascii=False))
        elif kind is float:
            out.append(_ecmascript_number(item))
        elif kind is dict:
            parts: list[Any] = []
            for key, child in item.items():
                parts += [
                    _Text("," if parts else ""),
                    _Text(json.dumps(key, ensure_ascii=False)),
                    _Text(":"),
                    child,
                ]
            stack += [_Text("}"), *reversed(parts), _Text("{")]
        elif kind is list or kind is tuple:
            parts = []
            for child in item:
                parts += [_Text(",") if parts else _Text(""), child]
            stack += [_Text("]"), *reversed(parts), _Text("[")]
        else:
            out.append(json.dumps(item, allow_nan=False))
    return "".join(out).encode("utf-8", "backslashreplace")


class _Text(str):
    """Serialized text of :func:`_dump_with_lone_surrogates`, written as it is."""


def _numbers_as_fragments(value: Any) -> Any:
    kind = type(value)
    if kind is float:
        return orjson.Fragment(_ecmascript_number(value).encode("ascii"))
    if kind is dict:
        return {key: _numbers_as_fragments(child) for key, child in value.items()}
    if kind is list or kind is tuple:
        return [_numbers_as_fragments(child) for child in value]
    return value


def _ecmascript_number(number: float) -> str:
    """ECMAScript's Number::toString of a finite float, the number form of RFC 8785: the
    shortest digits that round-trip (Python's ``repr`` finds them), then plain notation for
    decimal exponents from -6 to 20 and ``d.ddde+n`` beyond; ``-0`` is ``0``."""
    if number == 0:
        return "0"
    if number < 0:
        return "-" + _ecmascript_number(-number)
    mantissa, _, exponent = repr(number).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # The value is 0.DIGITS x 10^point.
    if whole != "0":
        point = len(whole) + int(exponent or 0)
    else:
        point = int(exponent or 0) - (len(fraction) - len(fraction.lstrip("0")))
    digits = digits.rstrip("0")
    count = len(digits)
    if count <= point <= 21:
        return digits + "0" * (point - count)
    if 0 < point <= 21:
        return digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    power = point - 1
    sign = "+" if power >= 0 else "-"
    head = digits if count == 1 else digits[0] + "." + digits[1:]
    return f"{head}e{sign}{abs(power)}"


def lone_surrogate_count(text: str) -> int:
    """How many lone surrogates ``text`` holds (each is six bytes in the compact serialization)."""
    return len(_LONE_SURROGATE_CHARACTER.findall(text))


def _holds_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE_CHARACTER.search(item):
                return True
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and _LONE_SURROGATE_CHARACTER.search(key):
                    return True
                stack.append(child)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def dumps(value: Any) -> str:
    """:func:`dump_bytes` as text: what every surface writes (CG-CLI-14)."""
    return dump_bytes(value).decode("utf-8")


# Canonical bytes are RFC 8785 (JCS), so any language reproduces a revision. ``rfc8785`` is the
# authority but pure Python (about 3x ``json.loads`` on a large definition); orjson with sorted
# keys is ~50x faster and byte-identical except in two places (a hypothesis property pins it):
# non-integer numbers (JCS writes ECMAScript number strings: ``5`` not ``5.0``, ``0.000001`` not
# ``1e-6``) and the order of keys holding characters outside the Basic Multilingual Plane (JCS
# sorts UTF-16 code units, orjson code points). Both are found in orjson's output: a non-BMP
# character by its UTF-8 lead byte (memchr speed), then whether its string is a key (followed by
# a colon); a float by a regular expression over number tokens (~30 ns a byte, so a caller whose
# value cannot hold numbers skips it), confirmed by a walk (a string can look like a number).
_FLOAT_TOKEN: Final = re.compile(rb"[:,\[]-?[0-9]+(?:\.[0-9]+(?:e[-+]?[0-9]+)?|e[-+]?[0-9]+)[,}\]]")
# Lead bytes of the UTF-8 encodings of the characters outside the BMP.
_FOUR_BYTE_LEADS: Final = tuple(bytes([lead]) for lead in range(0xF0, 0xF5))


def canonical_bytes(value: Any, *, numbers: bool = True) -> bytes:
    """The RFC 8785 (JSON Canonicalization Scheme) UTF-8 bytes of a pure JSON value: the input
    of every revision hash.

    ``numbers=False`` says ``value`` holds no numbers (a validated provider definition: its
    schema admits none, which a test keeps true), so the scan for number tokens is skipped.
    """
    if not isinstance(value, dict | list):
        return _rfc8785_bytes(value)  # a scalar: too small for the fast path to matter
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    if _has_non_bmp_key(data) or (
        numbers and _FLOAT_TOKEN.search(data) is not None and _holds_float(value)
    ):
        return _rfc8785_bytes(value)
    return data


def _has_non_bmp_key(data: bytes) -> bool:
    """Whether an object key of ``data`` (orjson's compact output) has a non-BMP character."""
    if data.isascii():
        return False
    for lead in _FOUR_BYTE_LEADS:
        position = data.find(lead)
        while position >= 0:
            end = _closing_quote(data, position)
            if data[end + 1 : end + 2] == b":":
                return True
            position = data.find(lead, end)
    return False


def _closing_quote(data: bytes, position: int) -> int:
    """The index of the quote that closes the string holding ``data[position]``."""
    quote = data.find(b'"', position)
    while _is_escaped(data, quote):
        quote = data.find(b'"', quote + 1)
    return quote


def _is_escaped(data: bytes, quote: int) -> bool:
    backslashes = 0
    while data[quote - 1 - backslashes] == 0x5C:
        backslashes += 1
    return backslashes % 2 == 1


def _rfc8785_bytes(value: Any) -> bytes:
    try:
        return rfc8785.dumps(value)
    except rfc8785.IntegerDomainError:
        # ``rfc8785`` refuses +/-2**53 although pure JSON admits it: it is an exact double,
        # whose RFC 8785 form is its plain digits.
        return rfc8785.dumps(_edge_integers_as_floats(value))


def _edge_integers_as_floats(value: Any) -> Any:
    if type(value) is int and abs(value) == MAX_SAFE_INTEGER:
        return float(value)
    if isinstance(value, dict):
        return {key: _edge_integers_as_floats(child) for key, child in value.items()}
    if isinstance(value, list):
        return [_edge_integers_as_floats(child) for child in value]
    return value


def _holds_float(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is float:
            return True
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return False
