"""The fuzzer's JSON-ish values and structure-aware mutations.

Scalars, keys and nested values (with ``python_values``, also values no JSON document can hold:
bytes, sets, NaN, huge integers, recursive containers), random edits of valid requests and
contexts, and :data:`KNOWN_DEFECTS`, the triggers of defects the battery found, left out of the
fast tests. :class:`~capability_graph_testing.battery.fuzzer.Fuzzer` builds the surfaces' inputs
on these.
"""

from __future__ import annotations

import copy
import json
import math
import random
from typing import Any

from capability_graph_testing.battery.graph import VALID_REQUESTS
from capability_graph_testing.battery.hostile import CONTROLS, PATHS, SECRET

#: Short object keys: a pointer through 33 of them stays a printable line under 300 characters.
SAFE_KEYS = ("a", "b", "x", "id", "ids", "k", "v", "z9", "_", "A")
#: Keys that trigger the pointer-message defect (see test_battery_leakage: the xfail tests).
HOSTILE_KEYS = (
    "\x07",
    "a\nb",
    "k" * 400,
    f"{SECRET} {PATHS[0]}",
    "",
    "/",
    "~1",
    "\udc80",
)
REQUEST_KEYS = (
    "ids",
    "request",
    "limit",
    "cursor",
    "providers",
    "tags",
    "relations",
    "kinds",
    "depth",
    "context",
    "timeoutMs",
    "capabilityId",
    "documentId",
)


class _Opaque:
    def __repr__(self) -> str:
        return f"<opaque {SECRET}>"


def _deep(kind: str, depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


#: Inputs that trip a defect this battery found (each has a strict xfail test). The fast tests
#: avoid them so that everything else stays checked; ``scripts/stress.py --hostile`` includes them
#: and counts the hits. Remove an entry once its defect is fixed (its xfail test then XPASSes).
KNOWN_DEFECTS: frozenset[str] = frozenset()
#: Fixed since (their tests now pin the fixes): "pointer-keys" (8aae68f); "deep-context",
#: "cli-context-recursion", "null-definition" (01a5bb2).


def tame(value: Any, limit: int = 100) -> Any:
    """A copy of ``value`` with containers deeper than ``limit`` and cycles replaced by 1."""
    on_path: set[int] = set()

    def walk(item: Any, depth: int) -> Any:
        if type(item) not in (dict, list):
            return item
        if depth >= limit or id(item) in on_path:
            return 1
        on_path.add(id(item))
        try:
            if type(item) is dict:
                return {key: walk(child, depth + 1) for key, child in item.items()}
            return [walk(child, depth + 1) for child in item]
        finally:
            on_path.discard(id(item))

    return walk(value, 0)


class ValueFuzzer:
    """Random JSON-ish values and structure-aware mutations.

    ``python_values`` adds values no JSON document can hold (bytes, sets, tuples, objects, NaN,
    huge integers, recursive containers) for the SDK surfaces. ``avoid`` names the known defects
    whose triggers are left out (default: all of :data:`KNOWN_DEFECTS`).
    """

    def __init__(
        self,
        rng: random.Random,
        *,
        python_values: bool = True,
        avoid: frozenset[str] = KNOWN_DEFECTS,
    ) -> None:
        self.rng = rng
        self.python_values = python_values
        self.avoid = avoid
        self.hostile_keys = "pointer-keys" not in avoid

    def key(self) -> Any:
        rng = self.rng
        pool: list[Any] = list(SAFE_KEYS) + list(REQUEST_KEYS[:4])
        if self.hostile_keys:
            pool += list(HOSTILE_KEYS)
        if self.python_values and rng.random() < 0.03:
            return rng.choice([1, None, (1, 2), 1.5, b"k"])
        return rng.choice(pool)

    def scalar(self) -> Any:
        rng = self.rng
        pool: list[Any] = [
            None,
            True,
            False,
            0,
            -1,
            1,
            5,
            101,
            2**53,
            2**53 + 1,
            -(2**63),
            1.5,
            -0.0,
            1e308,
            "",
            "x",
            "acme",
            "acme::a",
            "acme::",
            "::a",
            "acme::a::b",
            "ACME::A",
            "beta::x",
            "vault::secrets",
            "guide",
            "../../etc/passwd",
            "/etc/passwd",
            "docs/guide.md",
            "中文",
            "ａｃｍｅ::ａ",
            "requires",
            "related",
            "matched",
            "e30",
            "eyJyIjoxfQ",
            SECRET,
            "x" * rng.choice([64, 4097, 70_000]),
            "".join(rng.choice(CONTROLS) for _ in range(3)),
        ]
        if self.python_values:
            pool += [
                math.nan,
                math.inf,
                10**400,
                "\udc80",
                b"bytes",
                {1, 2},
                (1, 2),
                _Opaque(),
                bytearray(b"x"),
                1 + 2j,
            ]
        return rng.choice(pool)

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        roll = rng.random()
        if depth > 4 or roll < 0.45:
            return self.scalar()
        if roll < 0.6:
            return [self.value(depth + 1) for _ in range(rng.randint(0, 4))]
        if roll < 0.95:
            return {self.key(): self.value(depth + 1) for _ in range(rng.randint(0, 4))}
        if roll < 0.98:
            return _deep(rng.choice(["list", "dict"]), rng.choice([31, 33, 200, 5000]))
        if self.python_values:
            looped: dict[str, Any] = {"a": 1}
            looped["self"] = looped
            return looped
        return []

    def mutate(self, value: Any, rounds: int | None = None) -> Any:
        """A copy of ``value`` with 1-3 random edits at random places."""
        value = copy.deepcopy(value)
        for _ in range(rounds or self.rng.randint(1, 3)):
            value = self._edit(value, 0)
        return value

    def _edit(self, value: Any, depth: int) -> Any:
        rng = self.rng
        if isinstance(value, dict) and value and rng.random() < 0.7 and depth < 12:
            key = rng.choice(list(value))
            choice = rng.random()
            if choice < 0.55:
                value[key] = self._edit(value[key], depth + 1)
            elif choice < 0.7:
                del value[key]
            elif choice < 0.85:
                value[self.key() if rng.random() < 0.5 else rng.choice(REQUEST_KEYS)] = self.value()
            else:
                value[key] = None
            return value
        if isinstance(value, list) and value and rng.random() < 0.7 and depth < 12:
            index = rng.randrange(len(value))
            choice = rng.random()
            if choice < 0.6:
                value[index] = self._edit(value[index], depth + 1)
            elif choice < 0.75:
                value.append(value[index])  # shared: a deep copy may recurse too deep
            elif choice < 0.9:
                del value[index]
            else:
                value.extend(value * rng.choice([1, 200]))
            return value
        choice = rng.random()
        if choice < 0.5:
            return self.value()
        if choice < 0.65 and isinstance(value, str):
            return value * rng.choice([2, 100, 5000])
        if choice < 0.75:
            return [value]
        if choice < 0.85:
            return {"a": value}
        return self.scalar()

    def request(self, tool: str) -> Any:
        request = self.value() if self.rng.random() < 0.2 else self.mutate(VALID_REQUESTS[tool])
        if "deep-context" in self.avoid and type(request) is dict and "context" in request:
            request["context"] = tame(request["context"])
        return request

    def context(self) -> Any:
        rng = self.rng
        if rng.random() < 0.25:
            context = self.value()
        else:
            base: dict[Any, Any] = {"lang": "python", "retries": 3, "beta": True, "ratio": 0.5}
            if rng.random() < 0.3:
                base.update({f"k{i}": i for i in range(rng.choice([60, 64, 65, 200]))})
            context = self.mutate(base)
        return tame(context) if "deep-context" in self.avoid else context


def dumps_or(value: Any, fallback: bytes) -> bytes:
    """``value`` as JSON bytes, or ``fallback`` when it cannot be serialized (too deep)."""
    try:
        return json.dumps(value).encode()
    except (TypeError, ValueError, RecursionError):
        return fallback


def json_safe(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True
