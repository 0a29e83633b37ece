"""Spans of member values inside a JSON text known to be well-formed (it passed a parser): the
text of one value, found without parsing the rest and without recursion (a frame may nest a
million levels), so that what a parser would round or rewrite is kept exactly as written. The MCP
server screens a ``tools/call`` frame's arguments with it (CG-MCP-2).
"""

from __future__ import annotations

import json
import re
from typing import Final

__all__ = ["member_spans", "value_end"]

#: A string literal or a bracket of a JSON text: the tokens that :func:`member_spans` walks.
_TOKEN: Final = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_MEMBER: Final = re.compile(r'\s*("(?:[^"\\]|\\.)*")\s*:\s*')
_SCALAR_END: Final = re.compile(r"[\s,\]}]")


def value_end(text: str, start: int) -> int:
    """The end of the JSON value at ``start`` of a text known to be well-formed, found without
    recursion (a frame may nest a million levels)."""
    first = text[start : start + 1]
    if first == '"':
        match = _TOKEN.match(text, start)
        return match.end() if match else len(text)
    if first not in ("[", "{"):
        match = _SCALAR_END.search(text, start)
        return match.start() if match else len(text)
    depth = 0
    for token in _TOKEN.finditer(text, start):
        mark = token.group()
        if mark in ("[", "{"):
            depth += 1
        elif mark in ("]", "}"):
            depth -= 1
            if depth == 0:
                return token.end()
    return len(text)


def member_spans(text: str, start: int) -> dict[str, tuple[int, int]]:
    """The spans of the member values of the JSON object at ``start`` (the last of repeated
    names), for a well-formed text; empty when no object starts there."""
    spans: dict[str, tuple[int, int]] = {}
    at = start
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    if text[at : at + 1] != "{":
        return spans
    at += 1
    while (member := _MEMBER.match(text, at)) is not None:
        value_start = member.end()
        end = value_end(text, value_start)
        spans[json.loads(member.group(1))] = (value_start, end)
        at = end
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
    return spans
