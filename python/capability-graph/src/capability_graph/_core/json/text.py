"""Parsing untrusted JSON texts: definitions, configurations and request texts (CG-CONV-4,
CG-CONV-5, CG-CONV-15, CG-CONV-16).

Why one module of this size: the file parsers and the request parser share the skip-depth
loader and its markers; apart, each would need the other's internals.

The rules a parsed value must then meet are :mod:`.pure`'s; this module applies them as it parses.

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
from collections.abc import Iterable
from typing import Any, Final

import orjson

from .pure import (
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    TOO_DEEP,
    NotPureJson,
    TooDeep,
    check_depth,
    check_pure_value,
    check_string,
    escape_token,
    holds_too_deep,
    integral_beyond_range,
)

_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")


#: The reason given for a duplicate member name (every parser of this module rejects them).
DUPLICATE_KEY: Final = "an object has a duplicate key"


def _reject_constant(_name: str) -> Any:
    # NaN and Infinity are not RFC 8259 JSON: a text holding one is not JSON (CG-CONV-16).
    raise MalformedJson(_NOT_JSON)


_NOT_JSON: Final = "not well-formed JSON"


#: A configuration holds inline definitions at /providers/N/definition, depth 3: a container at
#: depth 33 of one of them is at depth 36 of the configuration's text (CG-CONV-11).
CONFIG_SKIP_DEPTH: Final = 3 + MAX_DEPTH + 1


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
            check_string(item, where)
        elif isinstance(item, dict):
            for key in item:
                check_string(key, where)
            stack.extend((item[key], f"{where}/{escape_token(key)}") for key in reversed(item))
        elif isinstance(item, list):
            stack.extend((item[i], f"{where}/{i}") for i in range(len(item) - 1, -1, -1))


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
    return holds_too_deep((value,), MAX_DEPTH + 1 - skip_depth)


def _first_problem(value: Any, pointer: str) -> NotPureJson | None:
    """The first marker left by :func:`scan_json_text`, in document order, with its pointer."""
    stack: list[tuple[Any, str]] = [(value, pointer)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, _Unconvertible):
            return NotPureJson(_INTEGER_RANGE, where)
        if isinstance(item, TooDeep):
            return NotPureJson(TOO_DEEP, where)
        if isinstance(item, _Duplicated):
            return NotPureJson(DUPLICATE_KEY, where)
        if isinstance(item, dict):
            children = [(child, f"{where}/{escape_token(key)}") for key, child in item.items()]
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
