"""The ``scripted`` executor: deterministic, so conformance vectors can drive every model path.

``{"executor": "scripted", "steps": [...]}`` — each match consumes the next step and the last step
repeats. A step is one of:

* ``{"return": VALUE}`` — return ``VALUE`` as the raw executor output (any JSON value, so invalid
  outputs can be scripted too);
* ``{"raise": {"code": S, "nextAction"?: S, "message"?: S}}`` — raise an executor error whose code
  and nextAction may be *any* string (the projection, CG-MODEL-5, decides what survives; the message
  never does);
* ``{"raiseException": S}`` — raise a plain exception with text ``S``;
* ``{"sleepMs": N, "then": STEP}`` — wait ``N`` ms (0..600000), then perform ``STEP``.

``"steps": []`` always answers ``{"status": "unknown", "candidates": []}``: with no script the
executor has nothing to decide with, which is exactly what ``unknown`` means (it is not a failure,
and it is never ``no_match``, which would claim that a decision was made).
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..._generated.defaults import MAX_SLEEP_MS
from . import MatchJob, read_common
from .config import ConfigReader, check_json_data, config_error, pointer

__all__ = ["ScriptedExecutor", "ScriptedExecutorError"]

MAX_NESTING: Final = 16
_EMPTY_SCRIPT_OUTPUT: Final = {"status": "unknown", "candidates": []}
_DEFAULT_RAISE_MESSAGE: Final = "scripted executor error"


class ScriptedExecutorError(Exception):
    """An executor error as a foreign executor would raise it: ``code`` and ``next_action`` are
    arbitrary strings (or ``next_action`` None), the message is raw text."""

    def __init__(self, code: str, next_action: str | None, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.next_action = next_action


@dataclass(frozen=True, slots=True)
class _Step:
    kind: Literal["return", "raise", "raiseException", "sleep"]
    value: Any = None  # return: the output; raise: (code, action, message); raiseException: text
    sleep_ms: int = 0
    then: _Step | None = None


class ScriptedExecutor:
    """Plays its script; thread-safe (the blocking SDK may run matches from several threads)."""

    name: Final = "scripted"

    def __init__(self, steps: list[_Step]) -> None:
        self._steps = steps
        self._next = 0
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, model: Mapping[str, Any], where: str) -> ScriptedExecutor:
        reader = ConfigReader(model, where, ("executor", "steps", "timeoutMs"))
        read_common(reader)
        raw_steps = reader.required("steps")
        steps_where = pointer(where, "steps")
        if not isinstance(raw_steps, list):
            raise config_error(f"{steps_where} must be an array of steps")
        return cls(
            [_parse_step(step, pointer(steps_where, i), 0) for i, step in enumerate(raw_steps)]
        )

    def _take(self) -> _Step | None:
        with self._lock:
            if not self._steps:
                return None
            step = self._steps[min(self._next, len(self._steps) - 1)]
            self._next += 1
            return step

    async def match(self, job: MatchJob) -> object:
        step = self._take()
        if step is None:
            return copy.deepcopy(_EMPTY_SCRIPT_OUTPUT)
        while step.kind == "sleep":
            await asyncio.sleep(step.sleep_ms / 1000)
            assert step.then is not None
            step = step.then
        if step.kind == "return":
            return copy.deepcopy(step.value)
        if step.kind == "raise":
            code, action, message = step.value
            raise ScriptedExecutorError(code, action, message)
        raise RuntimeError(step.value)


# A step of no kind: the message the configuration schema gives it ([CG-MSG-7], [CG-MSG-14]).
_NO_KIND: Final = "does not match any allowed shape"


def _parse_step(value: object, where: str, depth: int) -> _Step:
    if depth > MAX_NESTING:  # the one message of the model section not the schema's, CG-MSG-18
        raise config_error(f"{where} nests sleepMs steps more than {MAX_NESTING} deep")
    if not isinstance(value, Mapping):
        raise config_error(f"{where} {_NO_KIND}")
    keys = set(value)
    if keys == {"return"}:
        if value["return"] is None:  # null is never "no value" in the contract
            raise config_error(f"{pointer(where, 'return')} must not be null")
        check_json_data(value["return"], pointer(where, "return"))
        return _Step("return", copy.deepcopy(value["return"]))
    if keys == {"raise"}:
        raise_where = pointer(where, "raise")
        reader = ConfigReader(value["raise"], raise_where, ("code", "nextAction", "message"))
        reader.required("code")
        # Any string at all: the projection, not the config, decides what survives.
        fields = {key: _any_string(reader, key) for key in ("code", "nextAction", "message")}
        if not fields["code"]:
            reader.fail("code", "a non-empty string")
        message = _DEFAULT_RAISE_MESSAGE if fields["message"] is None else fields["message"]
        return _Step("raise", (fields["code"], fields["nextAction"], message))
    if keys == {"raiseException"}:
        reader = ConfigReader(value, where, ("raiseException",))
        return _Step("raiseException", _any_string(reader, "raiseException"))
    if keys == {"sleepMs", "then"}:
        reader = ConfigReader(value, where, ("sleepMs", "then"))
        sleep_ms = reader.integer("sleepMs", minimum=0, maximum=MAX_SLEEP_MS, required=True)
        then = _parse_step(value["then"], pointer(where, "then"), depth + 1)
        return _Step("sleep", sleep_ms=sleep_ms or 0, then=then)
    if keys == {"sleepMs"}:
        raise config_error(f"{pointer(where, 'then')} is required")
    raise config_error(f"{where} {_NO_KIND}")


def _any_string(reader: ConfigReader, key: str) -> str | None:
    if not reader.has(key):
        return None
    text = reader.value[key]
    if not isinstance(text, str):
        reader.fail(key, "a string")
    check_json_data(text, pointer(reader.where, key))
    return str(text)
