"""Shrinking: the smallest input that still shows the same difference.

A greedy delta-debugging pass over the parts of a case that carry the input (the tool arguments,
the argument vector, the MCP frame, the configuration and the generated files): each candidate is
one step smaller (a member or item removed, a text halved, a number brought toward 0, a
container replaced by its content); a candidate that keeps the difference's signature is taken
and the search restarts from it, until no candidate does or the attempt budget is spent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from .model import GenCase

__all__ = ["shrink", "smaller"]


def smaller(value: Any) -> Iterator[Any]:
    """Values one step smaller than ``value``, the most promising first."""
    if isinstance(value, bool):
        if value:
            yield False
    elif isinstance(value, int):
        for candidate in (0, 1, value // 2):
            if abs(candidate) < abs(value):
                yield candidate
        if value < 0:
            yield -value
    elif isinstance(value, float):
        yield 0
        if value == value and abs(value) != float("inf") and value != int(value):
            yield int(value)
    elif isinstance(value, str):
        if value:
            yield ""
        size = len(value)
        chunk = size // 2
        while chunk >= 1:
            for start in range(0, size, chunk):
                yield value[:start] + value[start + chunk :]
            chunk //= 2
    elif isinstance(value, list):
        if value:
            yield []
        half = len(value) // 2
        if half:
            yield value[:half]
            yield value[half:]
        for index in range(len(value)):
            yield value[:index] + value[index + 1 :]
        for index, item in enumerate(value):
            if isinstance(item, (dict, list)):
                yield item
            for candidate in smaller(item):
                yield [*value[:index], candidate, *value[index + 1 :]]
    elif isinstance(value, dict):
        for key in value:
            yield {k: v for k, v in value.items() if k != key}
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                yield item
            for candidate in smaller(item):
                yield {**value, key: candidate}
    elif value is not None:
        yield None


def _argv_smaller(argv: list[str]) -> Iterator[list[str]]:
    """A shorter argument vector, or one argument smaller (the command itself kept)."""
    for index in range(1, len(argv)):
        yield argv[:index] + argv[index + 1 :]
    for index in range(1, len(argv)):
        if argv[index] == "{config}":
            continue
        text = argv[index]
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, (dict, list)):
            for candidate in smaller(parsed):
                yield [*argv[:index], json.dumps(candidate, ensure_ascii=False), *argv[index + 1 :]]
        for piece in smaller(text):
            yield [*argv[:index], piece, *argv[index + 1 :]]


def _text_smaller(text: str) -> Iterator[str]:
    """A smaller text: as JSON when it is JSON (kept as its serialization), else as a string."""
    try:
        parsed = json.loads(text)
    except ValueError:
        yield from smaller(text)
        return
    for candidate in smaller(parsed):
        yield json.dumps(candidate, ensure_ascii=False)


def candidates(case: GenCase) -> Iterator[GenCase]:
    """Cases one step smaller than ``case``."""
    action = case.action
    if "call" in action:
        call = action["call"]
        for arguments in smaller(call["arguments"]):
            yield case.with_action({"call": {**call, "arguments": arguments}})
    if "argv" in action:
        for argv in _argv_smaller(action["argv"]):
            yield case.with_action({"argv": argv})
    if "frame" in action:
        for frame in _text_smaller(action["frame"]):
            yield case.with_action({"frame": frame})
    if isinstance(case.config, dict):
        for config in smaller(case.config):
            if isinstance(config, dict):
                shrunk = case.with_action(action)
                shrunk.config = config
                yield shrunk
    if case.config_text is not None:
        for text in _text_smaller(case.config_text):
            shrunk = case.with_action(action)
            shrunk.config_text = text
            yield shrunk
    for name, text in case.files.items():
        for smaller_text in _text_smaller(text):
            shrunk = case.with_action(action)
            shrunk.files = {**case.files, name: smaller_text}
            yield shrunk


async def shrink(
    case: GenCase,
    keeps: Callable[[GenCase], Awaitable[bool]],
    attempts: int,
    deadline: float = float("inf"),
) -> tuple[GenCase, int]:
    """The smallest case found that ``keeps`` the difference, and the attempts spent (at most
    ``attempts``, none started after ``deadline``, a ``time.monotonic()`` value)."""
    spent = 0
    current = case
    progress = True
    while progress and spent < attempts:
        progress = False
        for candidate in candidates(current):
            if spent >= attempts or time.monotonic() >= deadline:
                return current, spent
            spent += 1
            if await keeps(candidate):
                current = candidate
                progress = True
                break
    return current, spent
