"""The reliability and security battery: shared generators, checks and engines.

The fast tests (``test_battery_*.py``) and the long runs (``tools/stress.py``) use the same code:

* checks of what a surface emits: error objects against ``error.schema.json`` and the registry,
  envelopes against their schemas, bytes against *markers* (secrets, paths, raw texts) that must
  never appear;
* generators: hostile texts and executor faults (leakage), a random *fuzzer* of JSON-ish values,
  requests, contexts, configurations, definitions, CLI argv and MCP frames;
* engines that return figures: the reload storm, the close storm, the MCP frame fuzz and the
  memory probe (a child process that measures its own peak RSS around one rejection).

Everything random takes a ``random.Random``, so a failing case is reproduced from its seed.
``CG_BATTERY_SCALE`` multiplies the number of Hypothesis examples (``tools/stress.py`` raises it).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import errno
import functools
import io
import json
import math
import os
import pickle
import queue
import random
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings

from capability_graph import CapabilityGraph, GraphError
from capability_graph_testing.common import SPEC, capability, load_json, provider, schema_validator

T = TypeVar("T")

# --- scale and settings ---------------------------------------------------------------------------

SCALE = float(os.environ.get("CG_BATTERY_SCALE", "1"))


def examples(n: int) -> int:
    """``n`` Hypothesis examples, times ``CG_BATTERY_SCALE``."""
    return max(1, round(n * SCALE))


def battery_settings(n: int) -> settings:
    """Modest example counts, no per-example deadline (this machine is loaded)."""
    return settings(
        max_examples=examples(n),
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )


#: The time bound of one fuzz case (a hang is a failure). Generous: the machine is loaded.
CASE_BOUND_S = 15.0


# --- the registry, read from spec/ (not from the implementation) ---------------------------------

_TAXONOMY = load_json(SPEC / "taxonomy.json")
REGISTRY: dict[str, dict[str, Any]] = {entry["code"]: entry for entry in _TAXONOMY["codes"]}
ACTIONS: tuple[str, ...] = tuple(action["id"] for action in _TAXONOMY["nextActions"])
PHASES: tuple[str, ...] = tuple(phase["id"] for phase in _TAXONOMY["phases"])
MODEL_CODES = frozenset(code for code in REGISTRY if code.startswith("CG_MODEL_"))
TOOL_PHASES = {
    "describe_graph": "query",
    "list_capabilities": "query",
    "resolve_capabilities": "query",
    "match_capabilities": "match",
    "read_document": "document",
}
TOOLS = tuple(TOOL_PHASES)
RESULT_SCHEMAS = {
    "describe_graph": "describe-result.schema.json",
    "list_capabilities": "list-result.schema.json",
    "resolve_capabilities": "resolve-result.schema.json",
    "match_capabilities": "match-result.schema.json",
    "read_document": "read-document-result.schema.json",
}


_DEFAULT: Any = object()


def expected_error(code: str, phase: str, action: str | None = _DEFAULT) -> dict[str, str]:
    """The exact error object with the registry's default message (and default action)."""
    entry = REGISTRY[code]
    error = {"code": code, "phase": phase, "message": entry["messages"]["default"]}
    resolved = entry.get("defaultAction") if action is _DEFAULT else action
    if resolved is not None:
        error["nextAction"] = resolved
    return error


CLOSED = expected_error("CG_GRAPH_CLOSED", "lifecycle")


# --- checks of emitted objects --------------------------------------------------------------------


def _schema_problems(schema: str, value: Any) -> list[str]:
    return [
        f"{list(e.absolute_path)}: {e.message}" for e in schema_validator(schema).iter_errors(value)
    ]


def check_error(error: Any, *, phase: str | None = None) -> dict[str, str]:
    """``error`` is a contract error object: schema-valid, registered code in a registered phase
    of that code, a nextAction the code may carry, and a registry message unless the code allows
    pointer messages. Returns it."""
    assert isinstance(error, dict), error
    problems = _schema_problems("error.schema.json", error)
    assert not problems, (error, problems)
    entry = REGISTRY[error["code"]]
    assert error["phase"] in entry["phases"], error
    if phase is not None and error["code"] != "CG_GRAPH_CLOSED":
        assert error["phase"] == phase, (error, phase)
    action = error.get("nextAction")
    if entry.get("defaultAction") is None:
        assert action is None, error
    else:
        assert action in {entry.get("defaultAction"), *entry["executorActions"]}, error
    if not entry["pointerMessages"]:
        assert error["message"] in entry["messages"].values(), error
    return error


def check_outcome(outcome: Any, *, tool: str | None = None) -> dict[str, Any]:
    """A Tool Adapter outcome: schema-valid; its error checked; its result schema-valid."""
    problems = _schema_problems("tool-outcome.schema.json", outcome)
    assert not problems, (outcome, problems)
    if outcome["ok"]:
        if tool is not None:
            check_result(tool, outcome["result"])
    else:
        check_error(outcome["error"], phase=TOOL_PHASES.get(tool or ""))
    checked: dict[str, Any] = outcome
    return checked


def check_result(tool: str, result: Any) -> None:
    problems = _schema_problems(RESULT_SCHEMAS[tool], result)
    assert not problems, (tool, problems)


def check_mcp_result(result: Any, *, tool: str | None = None) -> dict[str, Any] | None:
    """A tools/call result on the wire: schema-valid; ``isError`` has exactly one text item whose
    JSON is a checked error object and no structuredContent. Returns the error (or None)."""
    problems = _schema_problems("mcp-tool-result.schema.json", result)
    assert not problems, (result, problems)
    if result.get("isError"):
        assert "structuredContent" not in result, result
        assert len(result["content"]) == 1, result
        return check_error(
            json.loads(result["content"][0]["text"]), phase=TOOL_PHASES.get(tool or "")
        )
    if tool is not None:
        check_result(tool, result["structuredContent"])
    return None


def check_cli_failure(status: int, stdout: str, stderr: str) -> dict[str, str]:
    """A failing graph command: exit 1 (130 for CG_MODEL_CANCELLED), stdout empty, exactly one
    envelope line on stderr."""
    assert status in (1, 130), (status, stdout, stderr)
    assert stdout == "", stdout
    assert stderr.endswith("\n"), stderr
    assert stderr.count("\n") == 1, stderr
    envelope = json.loads(stderr)
    problems = _schema_problems("cli-error.schema.json", envelope)
    assert not problems, (envelope, problems)
    assert (status == 130) == (envelope["error"]["code"] == "CG_MODEL_CANCELLED"), envelope
    return check_error(envelope["error"])


# --- hostile texts and markers --------------------------------------------------------------------

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


# --- executor faults (leakage) --------------------------------------------------------------------


class HostileError(Exception):
    """A foreign exception: any ``code``/``next_action``/``nextAction`` the fault sets."""


class HostileBase(BaseException):
    """Not an Exception: an executor may still raise it from a task."""


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError(SECRET)

    def __repr__(self) -> str:
        raise RuntimeError(SECRET)


class Poisoned(Exception):
    """Reading its ``code`` or action raises (with the secret in the text)."""

    @property
    def code(self) -> str:
        raise RuntimeError(f"{SECRET} {PATHS[0]}")

    @property
    def next_action(self) -> str:
        raise RuntimeError(SECRET)


class TrickStr(str):
    """A str that claims to equal everything."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


@dataclass(frozen=True)
class Fault:
    """What an executor raises, how, and the error object every surface must show for it."""

    kind: str
    make: Callable[[], BaseException]
    mode: str  # "async" | "async-late" | "sync"
    expected: dict[str, str]
    markers: tuple[str, ...]


def projection(code: object, action: object) -> tuple[str, str | None]:
    """CG-MODEL-5/6, written from the spec: the (code, nextAction) an executor error becomes."""
    code_text = str.__str__(code) if isinstance(code, str) else None
    if code_text not in MODEL_CODES:
        return "CG_MODEL_UNAVAILABLE", "retry"
    entry = REGISTRY[code_text]
    action_text = str.__str__(action) if isinstance(action, str) else None
    allowed = {entry.get("defaultAction"), *entry["executorActions"]} - {None}
    return code_text, action_text if action_text in allowed else entry.get("defaultAction")


def _model_error(code: str, action: str | None) -> dict[str, str]:
    return expected_error(code, "match", action)


def _code_pool(rng: random.Random, hostile: Hostile) -> object:
    return rng.choice(
        [
            rng.choice(sorted(MODEL_CODES)),
            rng.choice(sorted(MODEL_CODES)),
            rng.choice(
                ["CG_GRAPH_CLOSED", "CG_INPUT_INVALID", "CG_CONFIG_INVALID", "CG_RELOAD_FAILED"]
            ),
            hostile.text,
            "cg_model_timeout",
            "CG_MODEL_TIMEOUT ",
            TrickStr(rng.choice(sorted(MODEL_CODES))),
            TrickStr(hostile.text),
            42,
            None,
            b"CG_MODEL_TIMEOUT",
        ]
    )


def _action_pool(rng: random.Random, hostile: Hostile) -> object:
    return rng.choice([*ACTIONS, *ACTIONS, hostile.text, "RETRY", "", None, 7, TrickStr("retry")])


def executor_fault(
    rng: random.Random, hostile: Hostile, *, modes: Sequence[str] = ("async", "async-late")
) -> Fault:
    """A random executor failure carrying ``hostile`` and the error it must become."""
    from capability_graph import GraphError

    text = hostile.text
    unavailable = _model_error("CG_MODEL_UNAVAILABLE", "retry")
    mode = rng.choice(list(modes))
    kinds = [
        "plain",
        "oserror",
        "chained",
        "group",
        "coded",
        "coded",
        "coded",
        "graph-error",
        "graph-error-foreign",
        "unprintable",
        "poisoned",
    ]
    if mode != "sync":  # raised synchronously, these escape (see the xfail test of the battery)
        kinds += ["cancelled", "base"]
    kind = rng.choice(kinds)
    expected = unavailable
    make: Callable[[], BaseException]
    if kind == "plain":
        cls = rng.choice(
            [Exception, ValueError, RuntimeError, KeyError, TypeError, ConnectionError,
             TimeoutError, PermissionError, HostileError, StopIteration, ArithmeticError]
        )  # fmt: skip

        def make() -> BaseException:
            return cls(text)
    elif kind == "oserror":
        path = rng.choice(PATHS)

        def make() -> BaseException:
            return OSError(errno.EACCES, text, path)
    elif kind == "chained":

        def make() -> BaseException:
            outer = RuntimeError("wrapper")
            outer.__cause__ = ValueError(text)
            outer.__context__ = KeyError(rng.choice(PATHS))
            return outer
    elif kind == "group":

        def make() -> BaseException:
            return ExceptionGroup(hostile.markers[0], [ValueError(text), KeyError(PATHS[0])])
    elif kind == "coded":
        code, action = _code_pool(rng, hostile), _action_pool(rng, hostile)
        attribute = rng.choice(["next_action", "nextAction"])
        expected = _model_error(*projection(code, action))

        def make() -> BaseException:
            error = HostileError(text)
            error.code = code  # type: ignore[attr-defined]
            setattr(error, attribute, action)
            return error
    elif kind == "graph-error":
        model_code = rng.choice(sorted(MODEL_CODES))
        entry = REGISTRY[model_code]
        legal = rng.choice([entry.get("defaultAction"), *entry["executorActions"]])
        message = printable_hostile(hostile)
        expected = _model_error(model_code, legal)

        def make() -> BaseException:
            return GraphError(model_code, "match", message, legal)
    elif kind == "graph-error-foreign":
        code = rng.choice(sorted(set(REGISTRY) - MODEL_CODES))
        entry = REGISTRY[code]
        message = printable_hostile(hostile)

        def make() -> BaseException:
            return GraphError(code, entry["phases"][0], message)
    elif kind == "unprintable":

        def make() -> BaseException:
            error = Unprintable()
            error.code = text  # type: ignore[attr-defined]
            return error
    elif kind == "poisoned":

        def make() -> BaseException:
            return Poisoned(text)
    elif kind == "cancelled":

        def make() -> BaseException:
            return asyncio.CancelledError(text)
    else:  # base

        def make() -> BaseException:
            return HostileBase(text)

    return Fault(kind, make, mode, expected, hostile.markers)


class FaultExecutor:
    """A Python-object executor that raises the current fault (set it before each match)."""

    name = "battery"

    def __init__(self) -> None:
        self.fault: Fault | None = None

    def match(self, job: Any) -> Any:
        fault = self.fault
        assert fault is not None
        if fault.mode == "sync":
            raise fault.make()
        return self._raise(fault)

    async def _raise(self, fault: Fault) -> object:
        if fault.mode == "async-late":
            await asyncio.sleep(0)
            await asyncio.sleep(0.001)
        raise fault.make()


def scripted_fault(
    rng: random.Random, hostile: Hostile, free: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """A scripted-executor step that fails with hostile texts, and the error it must become."""
    kind = rng.choice(["raise", "raise", "raiseException", "sleep"])
    if kind == "raiseException":
        return {"raiseException": hostile.text}, _model_error("CG_MODEL_UNAVAILABLE", "retry")
    code = rng.choice(
        [rng.choice(sorted(MODEL_CODES)), hostile.text, "CG_GRAPH_CLOSED", free or "?"]
    )
    action = rng.choice([*ACTIONS, hostile.text, free])
    failure: dict[str, Any] = {"code": code, "message": hostile.text}
    if rng.random() < 0.8:
        failure["nextAction"] = action
    step: dict[str, Any] = {"raise": failure}
    if kind == "sleep":
        step = {"sleepMs": 1, "then": step}
    return step, _model_error(*projection(code, failure.get("nextAction")))


# --- a graph on disk ------------------------------------------------------------------------------

DOCUMENT_TEXT = "# Guide\n\nValidate requests. 中文。\n"


def battery_graph(directory: Path, *, model: dict[str, Any] | None = None, **extra: Any) -> Path:
    """acme (a file, with a document) and beta (inline, with a root); returns the config file."""
    (directory / "providers" / "docs").mkdir(parents=True, exist_ok=True)
    acme = provider(
        "acme",
        capability(
            "a",
            tags=["http"],
            relations=[
                {"kind": "requires", "target": "b"},
                {"kind": "related", "target": "beta::x"},
            ],
            documents=[
                {"id": "guide", "title": "Guide", "path": "docs/guide.md"},
                {"id": "web", "title": "Web", "url": "https://example.com/a"},
            ],
        ),
        capability("b", tags=["http", "schema"]),
    )
    (directory / "providers" / "acme.json").write_text(json.dumps(acme), encoding="utf-8")
    (directory / "providers" / "docs" / "guide.md").write_text(DOCUMENT_TEXT, encoding="utf-8")
    config: dict[str, Any] = {
        "providers": [
            {"path": "providers/acme.json"},
            {"definition": provider("beta", capability("x")), "documentRoot": "providers"},
        ],
        **extra,
    }
    if model is not None:
        config["model"] = model
    path = directory / "capability-graph.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


QUICK_MODEL = {
    "executor": "scripted",
    "steps": [
        {"return": {"status": "matched", "candidates": [{"id": "acme::a", "confidence": 0.5}]}}
    ],
}

VALID_REQUESTS: dict[str, dict[str, Any]] = {
    "describe_graph": {},
    "list_capabilities": {"limit": 1, "tags": ["http"], "providers": ["acme"]},
    "resolve_capabilities": {"ids": ["acme::a"], "relations": {"kinds": ["requires"], "depth": 2}},
    "match_capabilities": {
        "request": "validate the request",
        "context": {"lang": "python", "retries": 3, "beta": True},
        "limit": 3,
        "timeoutMs": 10_000,
    },
    "read_document": {"capabilityId": "acme::a", "documentId": "guide"},
}


# --- bounded runs ---------------------------------------------------------------------------------


def bounded(fn: Callable[[], T], seconds: float = CASE_BOUND_S) -> tuple[T, float]:
    """Run ``fn`` in a daemon thread; fail (it hangs) if it has not finished within ``seconds``.
    Returns its value and the elapsed time; re-raises what it raised."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as error:
            box["error"] = error

    started = time.monotonic()
    worker = threading.Thread(target=target, name="battery-case", daemon=True)
    worker.start()
    worker.join(seconds)
    elapsed = time.monotonic() - started
    assert not worker.is_alive(), f"the case did not finish within {seconds} s (a hang)"
    if "error" in box:
        raise box["error"]
    return box["value"], elapsed


# --- the fuzzer -----------------------------------------------------------------------------------

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
#: avoid them so that everything else stays checked; ``tools/stress.py --hostile`` includes them
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


class Fuzzer:
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

    # -- CLI argv ------------------------------------------------------------------------------

    COMMANDS = ("describe", "list", "resolve", "match", "read", "call", "doctor", "explain")
    FLAGS = (
        "--provider",
        "--tag",
        "--limit",
        "--cursor",
        "--relations",
        "--depth",
        "--context",
        "--timeout-ms",
        "--arguments",
        "--json",
        "--help",
        "-h",
        "--version",
        "--config",
        "--bogus",
        "-x",
        "--",
        "--dry-run",
    )

    def argv(self, config: str, *, others: Sequence[str] = ()) -> list[str]:
        rng = self.rng
        tokens = [
            "acme",
            "acme::a",
            "acme::b",
            "beta::x",
            "guide",
            "5",
            "-1",
            "0",
            "99999999999999999999",
            "1e3",
            "١٢",
            "k=v",
            "k:=3",
            "k:=true",
            "k:=[1]",
            "k:=",
            "=v",
            "k:=nan",
            "requires,related",
            "requires,,",
            '{"ids":["acme::a"]}',
            '{"request":"validate"}',
            "{",
            "[]",
            "null",
            '{"a":' * 40 + "1" + "}" * 40,
            "describe_graph",
            "match_capabilities",
            "read_document",
            "no_such_tool",
            "CG_GRAPH_CLOSED",
            "cg_model_timeout",
            SECRET,
            "\x07",
            "",
            " ",
            "é",
            "中文",
            "\udcff",
            "a" * 5000,
            *others,
        ]
        if self.hostile_keys:
            tokens += ['{"abcdefghijk":' * 40 + "1" + "}" * 40, '{"\\u0007":null}']
        if "cli-context-recursion" not in self.avoid:
            tokens.append("k:=" + "[" * 5000)
        if "deep-context" not in self.avoid:
            tokens.append("k:=" + "[" * 900 + "]" * 900)
        argv: list[str] = []
        if rng.random() < 0.9:
            argv.append(rng.choice(self.COMMANDS))
        for _ in range(rng.randint(0, 6)):
            argv.append(rng.choice(self.FLAGS) if rng.random() < 0.4 else rng.choice(tokens))
        if rng.random() < 0.85:
            argv += ["--config", config]
        elif rng.random() < 0.5:
            argv += ["--config", rng.choice(["/nonexistent/x.json", "/dev/null", "/", *others])]
        return argv

    # -- MCP frames ----------------------------------------------------------------------------

    def frame(self) -> bytes:
        """One garbage line for the MCP server (without the newline)."""
        rng = self.rng
        json_fuzz = Fuzzer(rng, python_values=False, avoid=self.avoid)
        call: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": rng.randint(1, 10**6),
            "method": "tools/call",
            "params": {"name": rng.choice(TOOLS), "arguments": VALID_REQUESTS[rng.choice(TOOLS)]},
        }
        kind = rng.randrange(16)
        if kind == 0:
            return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200)))
        if kind == 1:
            text = json.dumps(call).encode()
            return text[: rng.randrange(1, len(text))]
        if kind == 2:
            return b"x" * rng.choice([1 << 16, 1 << 20, 4 << 20])
        if kind == 3:
            big = dict(
                call,
                params={"name": "match_capabilities", "arguments": {"request": "x" * (2 << 20)}},
            )
            return json.dumps(big).encode()
        if kind == 4:
            field_name = rng.choice(["jsonrpc", "id", "method", "params"])
            broken = dict(call)
            broken[field_name] = json_fuzz.value()
            return dumps_or(broken, b"[" * 5000)
        if kind == 5:
            wrong = {**call, "params": {**call["params"], "name": json_fuzz.value()}}
            return dumps_or(wrong, b"{" * 5000)
        if kind == 6:
            tool = rng.choice(TOOLS)
            arguments = json_fuzz.request(tool)
            return dumps_or(dict(call, params={"name": tool, "arguments": arguments}), b"]")
        if kind == 7:
            method = rng.choice(["no/such", "resources/list", "prompts/get", "", "tools/", SECRET])
            return json.dumps(
                {"jsonrpc": "2.0", "id": rng.randint(1, 99), "method": method}
            ).encode()
        if kind == 8:
            method = rng.choice(
                ["notifications/cancelled", "notifications/progress", "notifications/x"]
            )
            note = {"jsonrpc": "2.0", "method": method, "params": json_fuzz.value()}
            return dumps_or(note, b"}")
        if kind == 9:
            return rng.choice([b"[" * 100_000, b"{" * 50_000, b'{"a":' * 20_000])
        if kind == 10:
            return rng.choice(
                [
                    b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":NaN}}',
                    b'{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}',
                    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_capabilities","arguments":{"cursor":"\\ud800"}}}',
                    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":4,"method":"tools/list"}',
                    json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).encode(
                        "utf-16"
                    ),
                    b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_capabilities","arguments":{"limit":1e400}}}',
                ]
            )
        if kind == 11:
            return json.dumps([call, call]).encode()
        if kind == 12:
            return rng.choice([b"", b" ", b"\t", b"\r", b"null", b"0", b'"str"', b"{}"])
        if kind == 13:
            response = {"jsonrpc": "2.0", "id": rng.randint(1, 99), "result": json_fuzz.value()}
            return dumps_or(response, b"{]")
        if kind == 14:
            arguments = json_fuzz.value()
            described = dict(call, params={"name": "describe_graph", "arguments": arguments})
            return dumps_or(described, b"[]]")
        initialize = {"jsonrpc": "2.0", "id": rng.randint(1, 99), "method": "initialize"}
        return dumps_or(dict(initialize, params=json_fuzz.value()), b"{{")

    # -- configurations and definitions ------------------------------------------------------

    def definition(self, provider_id: str = "acme") -> Any:
        base = provider(
            provider_id,
            capability(
                "a",
                tags=["http"],
                whenToUse="when",
                relations=[
                    {"kind": "requires", "target": "b"},
                    {"kind": "related", "target": "z::q"},
                ],
                documents=[{"id": "d", "title": "D", "path": "docs/d.md", "role": "guide"}],
            ),
            capability("b", relations=[{"kind": "parent", "target": "a"}]),
        )
        definition = self.value() if self.rng.random() < 0.1 else self.mutate(base)
        if "null-definition" in self.avoid and definition is None:
            return {}
        return definition

    def definition_bytes(self) -> bytes:
        rng = self.rng
        kind = rng.randrange(6)
        valid = dumps_or(Fuzzer(rng, python_values=False).definition(), b"[" * 5000)
        if kind == 0:
            return valid
        if kind == 1:
            return valid[: rng.randrange(0, len(valid) + 1)]
        if kind == 2:
            return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300)))
        if kind == 3:
            return rng.choice(
                [
                    b'{"providerId":"acme","providerId":"acme","name":"A","version":"1","capabilities":[]}',
                    b'{"providerId":"acme","name":"A","version":"1","capabilities":[],"x":NaN}',
                    b'{"providerId":"acme","name":"\\ud800","version":"1","capabilities":[]}',
                    b'\xef\xbb\xbf{"providerId":"acme","name":"A","version":"1","capabilities":[]}',
                    b'{"providerId":"acme","name":"A","version":1e999,"capabilities":[]}',
                    b"[" * 100_000,
                ]
            )
        if kind == 4:
            return valid.decode().encode("utf-16")
        return dumps_or(Fuzzer(rng, python_values=False).value(), b"{")

    def config(self, directory: Path) -> Any:
        """A mutated configuration whose valid form points at files in ``directory``."""
        base = {
            "providers": [
                {"path": "providers/acme.json"},
                {"definition": provider("beta", capability("x")), "documentRoot": "providers"},
            ],
            "scope": {"providers": ["acme", "beta"]},
            "documents": {"bodies": ["acme"]},
            "budgets": {"maxCapabilities": 100, "maxInputBytes": 4096},
            "model": {
                "executor": "scripted",
                "timeoutMs": 1000,
                "steps": [{"return": {"status": "unknown", "candidates": []}}],
            },
        }
        config = self.value() if self.rng.random() < 0.1 else self.mutate(base)
        if "null-definition" in self.avoid and type(config) is dict:
            for source in (
                config.get("providers", ()) if type(config.get("providers")) is list else ()
            ):
                if type(source) is dict and "definition" in source and source["definition"] is None:
                    source["definition"] = {}
        return config


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


# --- outcome checks the fuzz tests and the stress runs share ---------------------------------

OPEN_CODES = {
    "CG_CONFIG_INVALID",
    "CG_DEFINITION_INVALID",
    "CG_RELATION_INVALID",
    "CG_RELATION_CYCLE",
    "CG_CATALOG_TOO_LARGE",
}


def open_outcome(config: Any) -> dict[str, Any] | None:
    """The error object ``open`` rejected ``config`` with; or None, once every tool has answered
    a plain request with a valid result or a defined error."""

    async def main() -> dict[str, Any] | None:
        try:
            graph = await CapabilityGraph.open(config)
        except GraphError as error:
            return error.to_json()
        try:
            for tool in TOOLS:
                try:
                    result = await graph.call(tool, OPENED_REQUESTS[tool])
                except GraphError as error:
                    check_error(error.to_json(), phase=TOOL_PHASES[tool])
                else:
                    check_result(tool, result)
        finally:
            await graph.close()
        return None

    return asyncio.run(main())


OPENED_REQUESTS: dict[str, Any] = {
    **VALID_REQUESTS,
    "match_capabilities": {"request": "validate", "timeoutMs": 2000},
}


def check_open_error(error: dict[str, Any] | None) -> None:
    if error is None:
        return
    check_error(error)
    assert error["code"] in OPEN_CODES, error
    assert error["phase"] in ("config", "load"), error


def with_base(config: Any, base: Path) -> Any:
    """Relative paths of a mapping resolve against the working directory: write it as a file
    next to the providers instead, when it is JSON at all."""
    if not json_safe(config):
        return config
    path = base / "fuzzed-config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    from capability_graph.cli import run

    out, err = io.StringIO(), io.StringIO()
    status = run(argv, io.StringIO(), out, err)
    return status, out.getvalue(), err.getvalue()


def _identify(result: dict[str, Any]) -> str | None:
    if "candidates" in result:
        return "match_capabilities"
    if "capabilities" in result and "edges" in result:
        return "resolve_capabilities"
    if "items" in result:
        return "list_capabilities"
    if "budgets" in result:
        return "describe_graph"
    if "sha256" in result:
        return "read_document"
    return None


def check_cli_run(argv: list[str], status: int, stdout: str, stderr: str) -> None:
    """Exit 0 (a result, a report, help or an explanation), 1/130 (an error envelope, or a
    failed doctor report), 2 (usage on stderr); never 70, never a traceback."""
    assert "Traceback" not in stdout + stderr, (argv, stderr[-500:])
    assert status in (0, 1, 2, 130), (argv, status, stderr[-500:])
    if status == 2:
        assert stdout == "", (argv, stdout)
        assert "usage:" in stderr, (argv, stderr)
        assert SECRET not in stderr, (argv, stderr)  # a usage message never repeats argv
        return
    if status == 0:
        if stdout.startswith("{") and stdout.count("\n") == 1:
            value = json.loads(stdout)
            tool = _identify(value)
            if tool is not None:
                check_result(tool, value)
            elif "checks" in value:
                schema_validator("maintenance-report.schema.json").validate(value)
        return
    if stdout:  # a doctor report that failed
        assert "doctor" in argv, (argv, stdout)
        return
    check_cli_failure(status, stdout, stderr)


# --- process, thread and task census --------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def wait_dead(pids: Sequence[int], timeout_s: float) -> list[int]:
    """Poll until every pid is gone; the ones still alive at the timeout."""
    deadline = time.monotonic() + timeout_s
    alive = [pid for pid in pids if pid_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [pid for pid in alive if pid_alive(pid)]
    return alive


def descendants(root: int | None = None) -> list[int]:
    """Living descendants of ``root`` (default: this process), from /proc."""
    root = os.getpid() if root is None else root
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] in ("Z", "X"):
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in parents.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def live_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.is_alive()}


def settle_threads(before: set[threading.Thread], timeout_s: float = 5.0) -> list[str]:
    """Wait for threads started since ``before`` to end; the names of those still running."""
    deadline = time.monotonic() + timeout_s
    extra = live_threads() - before
    while extra and time.monotonic() < deadline:
        time.sleep(0.02)
        extra = live_threads() - before
    return sorted(t.name for t in extra)


# --- a fake codex (sh: cheap to start, many at once) ------------------------------------------

FAKE_CODEX = r"""#!/bin/sh
here=$(dirname "$0")
case "$1" in
  --version) echo "codex-cli 0.50.0"; exit 0 ;;
  sandbox) exit 0 ;;
  exec) ;;
  *) exit 2 ;;
esac
[ -f "$here/ignore-term" ] && trap '' TERM
cat > /dev/null
sleep 120 &
echo "$$ $!" > "$here/pids/$$"
sleep "$(cat "$here/sleep")"
last=""
previous=""
for argument in "$@"; do
  [ "$previous" = "--output-last-message" ] && last="$argument"
  previous="$argument"
done
printf '%s' '{"status":"unknown","candidates":[]}' > "$last"
: > "$here/done/$$"
"""


@dataclass
class ShCodex:
    """A fake ``codex`` on PATH: ``exec`` spawns a child, records both pids, then sleeps."""

    folder: Path

    @classmethod
    def install(cls, folder: Path, *, sleep_s: float = 60, ignore_term: bool = False) -> ShCodex:
        for sub in ("pids", "done"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        script = folder / "codex"
        script.write_text(FAKE_CODEX, encoding="utf-8")
        script.chmod(0o755)
        (folder / "sleep").write_text(f"{sleep_s}", encoding="utf-8")
        if ignore_term:
            (folder / "ignore-term").write_text("", encoding="utf-8")
        return cls(folder)

    def path_env(self) -> str:
        return f"{self.folder}{os.pathsep}{os.environ.get('PATH', '')}"

    def pids(self) -> list[int]:
        found: list[int] = []
        for entry in (self.folder / "pids").iterdir():
            with contextlib.suppress(ValueError, OSError):
                found += [int(p) for p in entry.read_text(encoding="ascii").split()]
        return found

    def started(self) -> int:
        return len(list((self.folder / "pids").iterdir()))

    def finished(self) -> int:
        return len(list((self.folder / "done").iterdir()))


# --- the reload storm -----------------------------------------------------------------------------


def versioned(provider_id: str, version: int) -> dict[str, Any]:
    """Provider ``provider_id`` at ``version``: 2 + version % 3 capabilities, every description
    carrying the marker ``<provider>@v<version>``."""
    mark = f"{provider_id}@v{version}"
    count = 2 + version % 3
    capabilities = [
        capability(
            "base",
            description=f"{mark} base",
            tags=["t"],
            relations=[{"kind": "requires", "target": "c1"}],
            documents=[{"id": "guide", "title": "Guide", "path": "guide.md"}],
        ),
        *(capability(f"c{i}", description=f"{mark} c{i}", tags=["t"]) for i in range(1, count)),
    ]
    return {**provider(provider_id, *capabilities), "version": str(version)}


INVALID_KINDS = (
    "syntax",
    "unknown-key",
    "relation-invalid",
    "cross-cycle",
    "duplicate-provider",
    "too-large",
    "missing-file",
)


@dataclass
class StormStats:
    reloads_ok: int = 0
    reloads_failed: int = 0
    queries: Counter[str] = field(default_factory=Counter)
    stale_cursors: int = 0
    revisions_seen: set[str] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    #: (tool, result) pairs, checked once the storm is over (a query may see a new snapshot
    #: before the reloader has recorded what it holds).
    results: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def check_results(self, published: Mapping[str, Mapping[str, int]]) -> None:
        for tool, result in self.results:
            self.violations += check_snapshot_result(tool, result, published)
            self.revisions_seen.add(result.get("revision", "-"))
        self.results.clear()

    def figures(self) -> dict[str, Any]:
        total = sum(self.queries.values())
        return {
            "reloads_ok": self.reloads_ok,
            "reloads_failed": self.reloads_failed,
            "queries": total,
            "queries_by_tool": dict(sorted(self.queries.items())),
            "queries_per_s": round(total / self.elapsed_s, 1) if self.elapsed_s else 0,
            "stale_cursor_rejections": self.stale_cursors,
            "distinct_revisions_seen": len(self.revisions_seen),
            "violations": len(self.violations),
        }


class StormGraph:
    """Two file providers (acme, beta) whose versions the storm rewrites; knows which graph
    revision stands for which pair of versions."""

    PROVIDERS = ("acme", "beta")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "guide.md").write_text("guide\n", encoding="utf-8")
        self.on_disk = {p: 0 for p in self.PROVIDERS}
        self.serving = {p: 0 for p in self.PROVIDERS}
        for p in self.PROVIDERS:
            self.write(p, versioned(p, 0))
        self.config = directory / "capability-graph.json"
        self.config.write_text(
            json.dumps(
                {
                    "providers": [{"path": f"{p}.json"} for p in self.PROVIDERS],
                    "budgets": {"maxDefinitionBytes": 65_536},
                }
            ),
            encoding="utf-8",
        )
        #: graph revision -> {provider: version}
        self.published: dict[str, dict[str, int]] = {}

    def write(self, provider_id: str, value: Any) -> None:
        data = value if isinstance(value, bytes) else json.dumps(value).encode()
        temporary = self.directory / f".{provider_id}.tmp"
        temporary.write_bytes(data)
        os.replace(temporary, self.directory / f"{provider_id}.json")

    def prepare_valid(self, names: Sequence[str], version: int) -> None:
        for name in names:
            self.write(name, versioned(name, version))
            self.on_disk[name] = version

    def prepare_invalid(self, names: Sequence[str], kind: str, version: int) -> None:
        first = names[0]
        if kind == "syntax":
            self.write(first, b'{"providerId": "' + first.encode() + b'", "name": ')
        elif kind == "unknown-key":
            self.write(first, {**versioned(first, version), "unknown": 1})
        elif kind == "relation-invalid":
            broken = versioned(first, version)
            broken["capabilities"][0]["relations"] = [{"kind": "requires", "target": "nope"}]
            self.write(first, broken)
        elif kind == "cross-cycle":
            for name in self.PROVIDERS:
                other = "beta" if name == "acme" else "acme"
                cyclic = versioned(name, version)
                cyclic["capabilities"][0]["relations"] = [
                    {"kind": "requires", "target": f"{other}::base"}
                ]
                self.write(name, cyclic)
        elif kind == "duplicate-provider":
            other = "beta" if first == "acme" else "acme"
            self.write(first, {**versioned(other, version)})
        elif kind == "too-large":
            padded = versioned(first, version)
            padded["description"] = "x" * 4000
            padded["capabilities"] = padded["capabilities"] + [
                capability(f"pad{i}", description="p" * 4000) for i in range(20)
            ]
            self.write(first, padded)
        else:  # missing-file
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.directory / f"{first}.json")
        for name in self.PROVIDERS:
            self.on_disk[name] = -1  # unknown until the next valid write


def _versions_of(text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for word in text.split():
        if "@v" in word:
            name, _, number = word.partition("@v")
            found[name] = int(number)
    return found


def check_snapshot_result(
    tool: str, result: Mapping[str, Any], published: Mapping[str, Mapping[str, int]]
) -> list[str]:
    """Problems with ``result`` as a view of the one snapshot its revision names."""
    if tool == "read_document":
        return [] if result.get("text") == "guide\n" else ["read_document: wrong text"]
    revision = result.get("revision")
    if not isinstance(revision, str) or revision not in published:
        return [f"{tool}: revision {revision} was never published"]
    versions = published[revision]
    problems: list[str] = []

    def agree(text: str, where: str) -> None:
        for name, version in _versions_of(text).items():
            if versions.get(name) != version:
                problems.append(f"{tool}: {where} shows {name}@v{version}, snapshot has {versions}")

    if tool == "describe_graph":
        for entry in result["providers"]:
            name = entry["providerId"]
            if entry["version"] != str(versions[name]):
                problems.append(f"describe: {name} version {entry['version']} != {versions}")
            if entry["capabilityCount"] != 2 + versions[name] % 3:
                problems.append(f"describe: {name} count {entry['capabilityCount']} != {versions}")
    elif tool == "list_capabilities":
        for item in result["items"]:
            agree(item["description"], item["id"])
    elif tool == "resolve_capabilities":
        for detail in result["capabilities"]:
            agree(detail["description"], detail["id"])
    elif tool == "match_capabilities":
        for candidate in result["candidates"]:
            agree(candidate.get("reason", ""), candidate["id"])
    return problems


class CatalogEcho:
    """An executor that answers with the first catalog entry, its description as the reason (so
    the result shows which snapshot's catalog the executor saw), after a short random pause."""

    name = "echo"

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)
        self.calls = 0

    async def match(self, job: Any) -> object:
        self.calls += 1
        await asyncio.sleep(self._rng.choice([0, 0, 0.001, 0.003]))
        entry = job.catalog[0]
        candidate = {"id": entry["id"], "confidence": 0.5, "reason": entry["description"]}
        return {"status": "matched", "candidates": [candidate]}


STORM_REQUESTS: dict[str, dict[str, Any]] = {
    "describe_graph": {},
    "list_capabilities": {"limit": 3},
    "resolve_capabilities": {"ids": ["acme::base", "beta::base"], "relations": {"depth": 2}},
    "match_capabilities": {"request": "find the base capability"},
    "read_document": {"capabilityId": "acme::base", "documentId": "guide"},
}


async def reload_storm_async(
    directory: Path, *, reloads: int, queriers: int, seed: int = 0, duration_s: float | None = None
) -> StormStats:
    """Queries of every operation from ``queriers`` tasks while one task reloads ``reloads``
    times (or for ``duration_s``), alternating valid and invalid candidates."""
    from capability_graph import CapabilityGraph, GraphError

    rng = random.Random(seed)
    storm = StormGraph(directory)
    stats = StormStats()
    graph = await CapabilityGraph.open(storm.config, executor=CatalogEcho(seed))
    first = await graph.call("describe_graph", {})
    storm.published[first["revision"]] = dict(storm.serving)
    current = first["revision"]
    done = asyncio.Event()

    async def querier(index: int) -> None:
        local = random.Random(seed * 1000 + index)
        while not done.is_set():
            tool = local.choice(TOOLS)
            try:
                result = await graph.call(tool, STORM_REQUESTS[tool])
                stats.results.append((tool, result))
                if tool == "list_capabilities" and "nextCursor" in result:
                    follow = {"limit": 3, "cursor": result["nextCursor"]}
                    page = await graph.call("list_capabilities", follow)
                    if page["revision"] != result["revision"]:
                        stats.violations.append("a cursor crossed revisions")
                    stats.results.append((tool, page))
            except GraphError as error:
                if error.code.value == "CG_INPUT_INVALID" and tool == "list_capabilities":
                    stats.stale_cursors += 1  # the page's revision was replaced: restart
                else:
                    stats.violations.append(f"{tool}: unexpected {error.to_json()}")
            except Exception as error:
                stats.violations.append(f"{tool}: {type(error).__name__}")
            stats.queries[tool] += 1
            await asyncio.sleep(0)

    async def reloader() -> None:
        nonlocal current
        started = time.monotonic()
        step = 0
        while (duration_s is None and step < reloads) or (
            duration_s is not None and time.monotonic() - started < duration_s
        ):
            step += 1
            names = rng.choice([["acme"], ["beta"], ["acme", "beta"]])
            subset = None if len(names) == 2 and rng.random() < 0.5 else names
            if step % 2:
                storm.prepare_valid(names, step)
                result = (await graph.reload(providers=subset)).to_json()
                if not result["ok"]:
                    stats.violations.append(f"a valid reload failed: {result}")
                    continue
                for name in names:
                    storm.serving[name] = step
                storm.published.setdefault(result["revision"], dict(storm.serving))
                current = result["revision"]
                stats.reloads_ok += 1
            else:
                kind = INVALID_KINDS[(step // 2) % len(INVALID_KINDS)]
                if kind == "cross-cycle":
                    names, subset = ["acme", "beta"], None
                storm.prepare_invalid(names, kind, step)
                result = (await graph.reload(providers=subset)).to_json()
                stats.reloads_failed += 1
                problems = _schema_problems("reload-result.schema.json", result)
                if result["ok"] or problems:
                    stats.violations.append(f"an invalid reload ({kind}) published: {result}")
                    continue
                if result["revision"] != current or result["error"]["code"] != "CG_RELOAD_FAILED":
                    stats.violations.append(f"a failed reload ({kind}) moved: {result}")
                now = await graph.call("describe_graph", {})
                if now["revision"] != current:
                    stats.violations.append(f"a failed reload ({kind}) is serving")
                for entry in result["providers"]:
                    if not entry["ok"]:
                        check_error(entry["error"])
                # put valid files back for the next step (the serving snapshot is unchanged)
                storm.prepare_valid(list(StormGraph.PROVIDERS), step)
                for name in StormGraph.PROVIDERS:
                    storm.on_disk[name] = step
            await asyncio.sleep(rng.choice([0, 0.001, 0.005]))
        done.set()

    started = time.monotonic()
    try:
        await asyncio.gather(reloader(), *(querier(i) for i in range(queriers)))
    finally:
        stats.elapsed_s = time.monotonic() - started
        await graph.close()
    stats.check_results(storm.published)
    return stats


def reload_storm_threads(
    directory: Path, *, reloads: int, threads: int, seed: int = 0
) -> StormStats:
    """The same storm over the blocking twin: querier threads and a reloading thread."""
    from capability_graph import BlockingCapabilityGraph, GraphError

    rng = random.Random(seed)
    storm = StormGraph(directory)
    stats = StormStats()
    lock = threading.Lock()
    graph = BlockingCapabilityGraph.open(storm.config, executor=CatalogEcho(seed))
    first = graph.call("describe_graph", {})
    storm.published[first["revision"]] = dict(storm.serving)
    done = threading.Event()

    def querier(index: int) -> None:
        local = random.Random(seed * 1000 + index)
        while not done.is_set():
            tool = local.choice(TOOLS)
            try:
                result = graph.call(tool, STORM_REQUESTS[tool])
                with lock:
                    stats.results.append((tool, result))
            except GraphError as error:
                with lock:
                    stats.violations.append(f"{tool}: unexpected {error.to_json()}")
            except Exception as error:
                with lock:
                    stats.violations.append(f"{tool}: {type(error).__name__}")
            with lock:
                stats.queries[tool] += 1

    workers = [threading.Thread(target=querier, args=(i,), daemon=True) for i in range(threads)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    try:
        current = first["revision"]
        for step in range(1, reloads + 1):
            names = rng.choice([["acme"], ["beta"], ["acme", "beta"]])
            if step % 2:
                storm.prepare_valid(names, step)
                result = graph.reload(providers=names).to_json()
                if not result["ok"]:
                    stats.violations.append(f"a valid reload failed: {result}")
                    continue
                with lock:
                    for name in names:
                        storm.serving[name] = step
                    storm.published.setdefault(result["revision"], dict(storm.serving))
                current = result["revision"]
                stats.reloads_ok += 1
            else:
                kind = INVALID_KINDS[(step // 2) % len(INVALID_KINDS)]
                if kind == "cross-cycle":
                    names = ["acme", "beta"]
                storm.prepare_invalid(names, kind, step)
                result = graph.reload(providers=names).to_json()
                stats.reloads_failed += 1
                if result["ok"] or result["revision"] != current:
                    stats.violations.append(f"an invalid reload ({kind}) published: {result}")
                storm.prepare_valid(list(StormGraph.PROVIDERS), step)
            time.sleep(rng.choice([0, 0.001, 0.005]))
    finally:
        done.set()
        for worker in workers:
            worker.join(30)
        stats.elapsed_s = time.monotonic() - started
        graph.close()
    stats.check_results(storm.published)
    return stats


# --- the close storm ------------------------------------------------------------------------------


class Stubborn:
    """An executor that ignores the first cancellation, then answers a *valid* result late."""

    name = "stubborn"

    def __init__(self) -> None:
        self.entered = 0
        self.late_answers = 0

    async def match(self, job: Any) -> object:
        self.entered += 1
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.2)
            self.late_answers += 1
        entry = job.catalog[0]
        return {"status": "matched", "candidates": [{"id": entry["id"], "confidence": 1}]}


class Sleeper:
    """An executor that sleeps (cancellably) and would answer a valid result afterwards."""

    name = "sleeper"

    def __init__(self, seconds: float = 30) -> None:
        self.seconds = seconds
        self.entered = 0
        self.finished = 0

    async def match(self, job: Any) -> object:
        self.entered += 1
        await asyncio.sleep(self.seconds)
        self.finished += 1
        return {"status": "matched", "candidates": [{"id": job.catalog[0]["id"], "confidence": 1}]}


@dataclass
class CloseStats:
    matches: int = 0
    closed: int = 0
    other: Counter[str] = field(default_factory=Counter)
    close_to_last_rejection_s: float = 0.0
    leftover_tasks: int = 0
    late_results: int = 0

    def figures(self) -> dict[str, Any]:
        return {
            "matches": self.matches,
            "rejected_graph_closed": self.closed,
            "other_outcomes": dict(self.other),
            "close_to_last_rejection_s": round(self.close_to_last_rejection_s, 3),
            "leftover_tasks": self.leftover_tasks,
            "late_results": self.late_results,
        }


async def close_storm_async(
    config: Any, executor: Any, *, matches: int, entered: Callable[[], int], timeout_s: float = 30
) -> CloseStats:
    """``matches`` concurrent matches, close() once every one is inside the executor; how each
    ended and how long after close() the last one did."""
    from capability_graph import CapabilityGraph, GraphError

    stats = CloseStats(matches=matches)
    graph = await CapabilityGraph.open(config, executor=executor)
    ended: list[float] = []

    async def one() -> Any:
        try:
            return await graph.call("match_capabilities", {"request": "x", "timeoutMs": 600_000})
        finally:
            ended.append(time.monotonic())

    tasks = [asyncio.ensure_future(one()) for _ in range(matches)]
    deadline = time.monotonic() + timeout_s
    while entered() < matches and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    ended.clear()
    closing = time.monotonic()
    await graph.close()
    outcomes = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout_s)
    stats.close_to_last_rejection_s = max(ended, default=closing) - closing
    for outcome in outcomes:
        if isinstance(outcome, GraphError) and outcome.to_json() == CLOSED:
            stats.closed += 1
        elif isinstance(outcome, dict):
            stats.late_results += 1
        else:
            stats.other[repr(outcome)[:80]] += 1
    await asyncio.sleep(0)
    stats.leftover_tasks = len(asyncio.all_tasks()) - 1
    return stats


# --- the MCP frame fuzz ---------------------------------------------------------------------------

JSONRPC_CODES = {-32700, -32600, -32601, -32602}


@dataclass
class FrameStats:
    frames: int = 0
    probes_answered: int = 0
    protocol_errors: Counter[int] = field(default_factory=Counter)
    tool_errors: Counter[str] = field(default_factory=Counter)
    unanswered_frames: int = 0
    slowest_probe_s: float = 0.0
    violations: list[str] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        return {
            "garbage_frames": self.frames,
            "probes_answered": self.probes_answered,
            "protocol_errors": dict(sorted(self.protocol_errors.items())),
            "isError_results": dict(sorted(self.tool_errors.items())),
            "slowest_probe_s": round(self.slowest_probe_s, 3),
            "violations": len(self.violations),
        }


class RawServer:
    """``capability-graph mcp`` spoken to in raw lines; every line it writes is kept."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "capability_graph.cli", "mcp", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._errors = threading.Thread(target=self._read_errors, daemon=True)
        self._errors.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def _read_errors(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    def send(self, data: bytes | Mapping[str, Any]) -> None:
        assert self.process.stdin is not None
        raw = data if isinstance(data, bytes) else json.dumps(data).encode()
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def initialize(self) -> dict[str, Any]:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "battery", "version": "1"},
                },
            }
        )
        answer = json.loads(self.lines.get(timeout=60))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer  # type: ignore[no-any-return]

    def close(self) -> int:
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            status = self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait(30)
        self._reader.join(10)
        self._errors.join(10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return status


def _check_line(line: bytes, stats: FrameStats, probe_id: str) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        stats.violations.append(f"a line that is not JSON: {line[:120]!r}")
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        stats.violations.append(f"not JSON-RPC: {line[:120]!r}")
        return None
    if message.get("id") == probe_id:
        return message
    if "error" in message:
        code = message["error"].get("code")
        stats.protocol_errors[code] += 1
        if code not in JSONRPC_CODES:
            stats.violations.append(f"error code {code} (a defect): {line[:200]!r}")
    elif isinstance(message.get("result"), dict) and "content" in message["result"]:
        try:
            error = check_mcp_result(message["result"])
        except AssertionError as problem:
            stats.violations.append(f"bad tool result: {problem}"[:300])
        else:
            if error is not None:
                stats.tool_errors[error["code"]] += 1
    return None


def fuzz_frames(
    server: RawServer, frames: Iterator[bytes], *, bound_s: float = CASE_BOUND_S
) -> FrameStats:
    """Send every frame followed by a valid probe; the probe must be answered within ``bound_s``."""
    stats = FrameStats()
    for number, frame in enumerate(frames):
        stats.frames += 1
        probe_id = f"probe-{number}"
        tool = ("describe_graph", "list_capabilities")[number % 2]
        server.send(frame)
        server.send(
            {
                "jsonrpc": "2.0",
                "id": probe_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": {}},
            }
        )
        started = time.monotonic()
        while True:
            remaining = bound_s - (time.monotonic() - started)
            try:
                line = server.lines.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                stats.violations.append(f"no answer within {bound_s} s after frame {frame[:120]!r}")
                return stats
            answer = _check_line(line, stats, probe_id)
            if answer is not None:
                result = answer.get("result", {})
                if result.get("isError") or "structuredContent" not in result:
                    stats.violations.append(f"the probe failed after {frame[:120]!r}: {answer}")
                stats.probes_answered += 1
                break
        stats.slowest_probe_s = max(stats.slowest_probe_s, time.monotonic() - started)
    return stats


# --- the memory probe (a child process measuring its own peak RSS) -------------------------------

MB = 1 << 20


def write_big_file(
    path: Path, size: int, *, prefix: bytes = b'{"request": "', suffix: bytes = b'"}'
) -> Path:
    """A ``size``-byte file of real content (not sparse): JSON text around a long string."""
    chunk = b"x" * MB
    with open(path, "wb") as handle:
        handle.write(prefix)
        remaining = size - len(prefix) - len(suffix)
        while remaining > 0:
            handle.write(chunk[: min(remaining, MB)])
            remaining -= MB
        handle.write(suffix)
    return path


SCENARIOS = (
    "definition-file",
    "config-file",
    "document",
    "sdk-request",
    "cli-arguments-file",
    "inline-long-string",
    "inline-over-max-capabilities",
)


def memory_probe(
    workdir: Path, scenarios: Sequence[str], size_mb: int, *, timeout_s: float = 600
) -> dict[str, dict[str, Any]]:
    """Run the scenarios in one child process; per scenario: the outcome, the input size, the
    peak RSS growth during the call (``/proc/self/clear_refs`` + ``VmHWM``) and the time."""
    probe = "import sys, capability_graph_testing.battery as b; b._probe_main(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", probe, str(workdir), str(size_mb), *scenarios],
        capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results: dict[str, dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    return results


def _status_bytes(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise LookupError(key)


def _measure(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    import gc

    gc.collect()
    with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
        refs.write("5")  # reset the peak RSS (VmHWM) to the current RSS
    before = _status_bytes("VmRSS")
    started = time.monotonic()
    outcome = fn()
    elapsed = time.monotonic() - started
    return outcome, (_status_bytes("VmHWM") - before) / MB, elapsed


class _Probe:
    """The scenarios of the memory probe. Each ``prepare_*`` builds what the *caller* holds
    (allocated before the measurement); each ``run_*`` is the measured call."""

    def __init__(self, workdir: Path, size_mb: int) -> None:
        import io

        self.io = io
        self.workdir = workdir
        self.size_mb = size_mb
        self.size = size_mb * MB
        self.small = {
            "providers": [{"definition": provider("acme", capability("a"))}],
            "model": {"executor": "scripted", "steps": []},
        }
        self.small_file = workdir / "small.json"
        self.small_file.write_text(json.dumps(self.small), encoding="utf-8")
        self.big_file = workdir / f"big-{size_mb}.json"
        if not self.big_file.exists() or self.big_file.stat().st_size != self.size:
            write_big_file(self.big_file, self.size)

    @staticmethod
    def outcome(coroutine: Any) -> str:
        from capability_graph import GraphError

        try:
            asyncio.run(coroutine)
        except GraphError as error:
            return error.code.value
        return "ok"

    @staticmethod
    async def call(config: Any, tool: str, arguments: Any) -> None:
        from capability_graph import CapabilityGraph

        graph = await CapabilityGraph.open(config)
        try:
            await graph.call(tool, arguments)
        finally:
            await graph.close()

    @staticmethod
    async def open(config: Any) -> None:
        from capability_graph import CapabilityGraph

        await (await CapabilityGraph.open(config)).close()

    def cli(self, *argv: str) -> str:
        from capability_graph.cli import run

        out, err = self.io.StringIO(), self.io.StringIO()
        status = run(list(argv), self.io.StringIO(), out, err)
        lines = err.getvalue().strip().splitlines()
        last = lines[-1] if lines else ""
        code = json.loads(last)["error"]["code"] if last.startswith("{") else "usage"
        return f"exit {status} {code}"

    def warm_up(self) -> None:
        self.outcome(self.call(self.small, "match_capabilities", {"request": "warm"}))
        self.outcome(self.call(self.small, "match_capabilities", {"request": 5}))
        self.outcome(self.open({"providers": [{"path": str(self.small_file)}]}))
        self.cli("describe", "--config", str(self.small_file))

    def prepare(self, scenario: str) -> tuple[Any, int]:
        """The caller's in-memory input (or None) and the input's size in bytes."""
        if scenario == "sdk-request":
            return {"request": "x" * self.size}, self.size
        if scenario == "inline-long-string":
            definition = provider("acme", capability("a", description="x" * self.size))
            return {"providers": [{"definition": definition}]}, self.size
        if scenario == "inline-over-max-capabilities":
            capabilities = [
                capability(f"c{i}", description=f"Capability number {i} of a large provider.")
                for i in range(max(1, self.size // 100))
            ]
            config = {
                "providers": [{"definition": provider("acme", *capabilities)}],
                "budgets": {"maxCapabilities": 1000},
            }
            return config, len(json.dumps(config))
        return None, self.size

    def run(self, scenario: str, held: Any) -> str:
        big = str(self.big_file)
        if scenario == "definition-file":  # (budgets of 1 MiB: any --size-mb >= 2 is over)
            budgets = {"maxDefinitionBytes": MB}
            return self.outcome(self.open({"providers": [{"path": big}], "budgets": budgets}))
        if scenario == "config-file":
            return self.outcome(self.open(big))
        if scenario == "document":
            documents = [{"id": "big", "title": "Big", "path": self.big_file.name}]
            config = {
                "providers": [
                    {
                        "definition": provider("acme", capability("a", documents=documents)),
                        "documentRoot": str(self.workdir),
                    }
                ]
            }
            read = {"capabilityId": "acme::a", "documentId": "big"}
            return self.outcome(self.call(config, "read_document", read))
        if scenario == "sdk-request":
            return self.outcome(self.call(self.small, "match_capabilities", held))
        if scenario == "cli-arguments-file":
            small = str(self.small_file)
            return self.cli(
                "call", "match_capabilities", "--arguments-file", big, "--config", small
            )
        if scenario in ("inline-long-string", "inline-over-max-capabilities"):
            return self.outcome(self.open(held))
        raise ValueError(scenario)


def _probe_main(argv: list[str]) -> None:
    probe = _Probe(Path(argv[0]), int(argv[1]))
    probe.warm_up()
    results: dict[str, dict[str, Any]] = {}
    for scenario in argv[2:]:
        held, size = probe.prepare(scenario)
        work = functools.partial(probe.run, scenario, held)
        value, growth, elapsed = _measure(work)
        del held, work
        results[scenario] = {
            "outcome": value,
            "input_mb": round(size / MB, 1),
            "peak_growth_mb": round(growth, 1),
            "ratio": round(growth / (size / MB), 3),
            "seconds": round(elapsed, 3),
        }
    print(json.dumps(results))
