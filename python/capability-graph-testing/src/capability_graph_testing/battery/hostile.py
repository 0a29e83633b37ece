"""Hostile texts and the markers that must never appear in anything emitted.

A hostile text mixes a secret token, an absolute path, control characters and a free text
(sometimes very long, sometimes with a lone surrogate); :func:`assert_clean` checks output for its
markers (raw or JSON-escaped) and for tracebacks, :func:`exception_texts` lists everything a
caller can print from an exception.
"""

from __future__ import annotations

import contextlib
import json
import pickle
import random
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass

SECRET = "SECRET-4f1c"
#: Every hostile path carries this component, so one search finds any path that leaked.
PATH_MARK = "u-9d2e"
PATHS = (
    f"/home/{PATH_MARK}/.ssh/id_ed25519",
    f"/etc/{PATH_MARK}/api.key",
    f"/var/run/secrets/{PATH_MARK}/token",
    f"C:\\Users\\{PATH_MARK}\\AppData\\token.txt",
    f"file:///srv/{PATH_MARK}/db.sqlite",
)
CONTROLS = (
    "\x00",
    "\x07",
    "\x1b[2J",
    "\x1b]0;owned\x07",
    "\r",
    "\n",
    "\t",
    "\x7f",
    "\x85",
    "\u2028",
    "\u202e",
    "\ufeff",
)
LENGTHS = (0, 64, 4096, 100_000)


@dataclass(frozen=True)
class Hostile:
    """A hostile text and the markers of it that must never appear in anything emitted."""

    text: str
    markers: tuple[str, ...]


def distinctive(free: str) -> bool:
    """Whether a free text is distinctive enough to search for in output."""
    stripped = free.strip()
    return len(stripped) >= 16 and len(set(stripped)) >= 6


def hostile_text(rng: random.Random, free: str = "", *, json_safe: bool = False) -> Hostile:
    """A secret token, an absolute path, control characters, the free text; sometimes very long,
    sometimes with a lone surrogate (only where Python strings may carry one)."""
    token = f"{SECRET}-{rng.getrandbits(40):010x}"
    parts = [token, rng.choice(PATHS), free]
    rng.shuffle(parts)
    for _ in range(rng.randint(0, 4)):
        parts.insert(rng.randint(0, len(parts)), rng.choice(CONTROLS))
    if not json_safe and rng.random() < 0.15:
        parts.append("\udc80")
    text = " ".join(parts)
    length = rng.choice(LENGTHS)
    if len(text) < length:
        text = " ".join([text] * (length // (len(text) + 1) + 1))
    markers = [token, PATH_MARK]
    if distinctive(free):
        markers.append(free.strip())
    return Hostile(text, tuple(markers))


def printable_hostile(hostile: Hostile) -> str:
    """A printable one-line version (a GraphError message must be one)."""
    return "".join(c for c in hostile.text if c.isprintable())[:300] or hostile.markers[0]


_CONTROL_BYTES = {*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F}


def assert_clean(
    blob: bytes | str, markers: Sequence[str], *, where: str = "", traceback_ok: bool = False
) -> None:
    """No marker (raw or JSON-escaped) in ``blob``, and no traceback unless ``traceback_ok``
    (the formatted traceback of an exception is one of the texts checked)."""
    text = blob.decode("utf-8", "backslashreplace") if isinstance(blob, bytes) else blob
    for marker in markers:
        for form in {
            marker,
            json.dumps(marker)[1:-1],
            json.dumps(marker, ensure_ascii=False)[1:-1],
        }:
            assert form not in text, f"{where}: leaked {form[:80]!r}"
    assert traceback_ok or "Traceback" not in text, f"{where}: a traceback"


def assert_no_control_bytes(blob: bytes, *, where: str = "") -> None:
    """Emitted JSON lines carry no raw control character (tab and newlines aside)."""
    bad = sorted({b for b in blob if b in _CONTROL_BYTES})
    assert not bad, f"{where}: raw control bytes {bad}"


def exception_texts(error: BaseException) -> list[str]:
    """Everything an in-process caller can print or serialize from an exception: str, repr,
    args, the formatted traceback (with its chain), pickle, and the chain's own texts."""
    makers: list[Callable[[], str]] = [
        lambda: str(error),
        lambda: repr(error),
        lambda: repr(error.args),
        lambda: "".join(traceback.format_exception(error)),
        lambda: repr(pickle.loads(pickle.dumps(error))),
    ]
    texts = []
    for make in makers:
        with contextlib.suppress(Exception):  # a foreign exception may refuse to print
            texts.append(make())
    return texts


def chained(error: BaseException) -> list[BaseException]:
    """The exceptions reachable through ``__cause__`` and ``__context__``."""
    found: list[BaseException] = []
    stack = [error.__cause__, error.__context__]
    while stack:
        item = stack.pop()
        if item is None or any(item is seen for seen in found):
            continue
        found.append(item)
        stack += [item.__cause__, item.__context__]
    return found
