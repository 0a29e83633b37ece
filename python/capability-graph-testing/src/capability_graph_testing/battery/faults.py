"""Executor faults for the leakage checks: what an executor raises, and what it must become.

Random failures (foreign exceptions, chains, groups, coded errors with hostile or look-alike codes
and actions, GraphErrors, exceptions that refuse to print) raised synchronously or from a task,
each with the one error object every surface must show for it: the projection of CG-MODEL-5/6
(:func:`projection`), written from the spec.
"""

from __future__ import annotations

import asyncio
import errno
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from capability_graph_testing.battery.hostile import PATHS, SECRET, Hostile, printable_hostile
from capability_graph_testing.battery.registry import ACTIONS, MODEL_CODES, REGISTRY, expected_error


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
