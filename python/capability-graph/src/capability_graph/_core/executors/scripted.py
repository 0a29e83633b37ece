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

import copy
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from ..._generated.taxonomy import ErrorCode, Phase
from ..errors import GraphError

if TYPE_CHECKING:
    from .job import MatchJob

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
        steps_where = f"{where}/steps"
        return cls([_step(step, f"{steps_where}/{i}", 0) for i, step in enumerate(model["steps"])])

    def _take(self) -> _Step | None:
        with self._lock:
            if not self._steps:
                return None
            step = self._steps[min(self._next, len(self._steps) - 1)]
            self._next += 1
            return step

    async def match(self, job: MatchJob) -> object:
        import asyncio  # on a running loop: asyncio is imported already

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


def _step(value: Mapping[str, Any], where: str, depth: int) -> _Step:
    """One step of a script the configuration's schema accepted (one kind per step)."""
    # The one rule of the model section that no JSON Schema can say: how deep ``then`` nests
    # (a recursive reference has no depth bound), with its message ([CG-MSG-18]).
    if depth > MAX_NESTING:
        raise GraphError(
            ErrorCode.CG_CONFIG_INVALID,
            Phase.CONFIG,
            f"{where} nests sleepMs steps more than {MAX_NESTING} deep",
        )
    if "return" in value:
        return _Step("return", copy.deepcopy(value["return"]))
    if "raise" in value:
        fields = value["raise"]
        message = fields.get("message", _DEFAULT_RAISE_MESSAGE)
        return _Step("raise", (fields["code"], fields.get("nextAction"), message))
    if "raiseException" in value:
        return _Step("raiseException", value["raiseException"])
    return _Step(
        "sleep", sleep_ms=value["sleepMs"], then=_step(value["then"], f"{where}/then", depth + 1)
    )
