"""The flowcast error contract: one hierarchy, machine-readable codes, JSON projections.

Nobody parses messages: branch on the class and on ``code``. The hierarchy::

    Exception
    ├── FlowcastError                  code: any (STEP_REENTRY from Checkpoint.step)
    │   ├── TimeoutError               TIMEOUT             timed_out = True
    │   │   (also a builtins.TimeoutError, so ``except TimeoutError`` catches it)
    │   ├── SpawnError                 SPAWN_ERROR         spawn_error, exit_code, output
    │   ├── GateError                  GATE_FAIL           gate, exit_code, output
    │   ├── SchemaError                SCHEMA_ERROR        schema_error
    │   ├── ConfigError                CONFIG_ERROR        config_error = True
    │   ├── PathError                  PATH_ERROR
    │   ├── GuardError                 GUARD_FAIL | ROLLBACK_FAIL (original error as __cause__)
    │   ├── GitError                   GIT_FAIL            stderr
    │   ├── VerifyError                VERIFY_FAIL         voter_errors: [VoterError(lens, error)]
    │   ├── ParallelError              PARALLEL_FAIL       failures: [ParallelFailure(index, error)]
    │   └── LockError                  LOCK_BUSY | LOCK_RETRY_EXHAUSTED | LOCK_OWNER_PENDING
    └── PauseSignal                    (flow control, not a FlowcastError)
                                       pause_reason, pause_context

Every error has ``to_dict()``: its language-neutral JSON form (camelCase keys), described by
``spec/flowcast/schemas/error.schema.json`` and, for codes, ``spec/flowcast/taxonomy.json``.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

__all__ = [
    "ConfigError",
    "FlowcastError",
    "GateError",
    "GitError",
    "GuardError",
    "LockError",
    "ParallelError",
    "ParallelFailure",
    "PathError",
    "PauseSignal",
    "SchemaError",
    "SpawnError",
    "TimeoutError",
    "VerifyError",
    "VoterError",
    "error_to_dict",
]

GUARD_FAIL: Final = "GUARD_FAIL"
ROLLBACK_FAIL: Final = "ROLLBACK_FAIL"
LOCK_BUSY: Final = "LOCK_BUSY"
LOCK_RETRY_EXHAUSTED: Final = "LOCK_RETRY_EXHAUSTED"
LOCK_OWNER_PENDING: Final = "LOCK_OWNER_PENDING"
STEP_REENTRY: Final = "STEP_REENTRY"


def _restore(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    """Rebuild an error from pickle without calling its keyword-only ``__init__``."""
    obj = cls.__new__(cls, *args)
    BaseException.__init__(obj, *args)
    obj.__dict__.update(state)
    return obj


def _jsonable(value: Any) -> Any:
    """A JSON-data copy of ``value``: non-JSON leaves become their ``str()``."""
    try:
        return json.loads(json.dumps(value, default=str, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return str(value)


def error_to_dict(error: BaseException) -> dict[str, Any]:
    """The JSON form of any exception.

    A flowcast error (or PauseSignal) gives its own ``to_dict()``; any other exception gives
    ``{"name": <class name>, "message": str(error)}``.
    """
    if isinstance(error, FlowcastError | PauseSignal):
        return error.to_dict()
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - a broken __str__ must not hide the error itself
        message = f"<unprintable {type(error).__name__}>"
    return {"name": type(error).__name__, "message": message}


class FlowcastError(Exception):
    """Base class of every error flowcast raises. ``code`` is the machine-readable code."""

    default_code: ClassVar[str] = "FLOWCAST_ERROR"
    code: str

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code if code is not None else self.default_code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (type(self), self.args, dict(self.__dict__)))

    def _fields(self) -> dict[str, Any]:
        """The class-specific members of ``to_dict()`` (camelCase keys)."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"name", "code", "message", ...fields}``."""
        return {"name": type(self).__name__, "code": self.code, "message": self.message} | (
            self._fields()
        )


class TimeoutError(FlowcastError, builtins.TimeoutError):
    """A spawned process (or a gate, or an agent run) ran past its timeout; its tree was killed."""

    default_code = "TIMEOUT"
    timed_out: bool

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.timed_out = True

    def _fields(self) -> dict[str, Any]:
        return {"timedOut": True}


class SpawnError(FlowcastError):
    """A process could not start (``spawn_error`` set, e.g. ``"ENOENT"``) or exited non-zero
    (``spawn_error`` None, ``exit_code`` set, ``output`` holds what it printed)."""

    default_code = "SPAWN_ERROR"

    def __init__(
        self,
        message: str,
        *,
        spawn_error: str | None = None,
        exit_code: int | None = None,
        output: str = "",
    ) -> None:
        super().__init__(message)
        self.spawn_error = spawn_error
        self.exit_code = exit_code
        self.output = output

    def _fields(self) -> dict[str, Any]:
        return {"spawnError": self.spawn_error, "exitCode": self.exit_code, "output": self.output}


class GateError(FlowcastError):
    """A quality gate stayed red. ``gate`` is its name, ``output`` the check's output."""

    default_code = "GATE_FAIL"

    def __init__(self, message: str, *, gate: str, exit_code: int | None, output: str) -> None:
        super().__init__(message)
        self.gate = gate
        self.exit_code = exit_code
        self.output = output

    def _fields(self) -> dict[str, Any]:
        return {"gate": self.gate, "exitCode": self.exit_code, "output": self.output}


class SchemaError(FlowcastError):
    """Structured output did not satisfy its JSON Schema; ``schema_error`` says how."""

    default_code = "SCHEMA_ERROR"

    def __init__(self, message: str, *, schema_error: str) -> None:
        super().__init__(message)
        self.schema_error = schema_error

    def _fields(self) -> dict[str, Any]:
        return {"schemaError": self.schema_error}


class ConfigError(FlowcastError):
    """A gate, agent, provider or executor is configured wrongly; raised before anything runs."""

    default_code = "CONFIG_ERROR"
    config_error: bool

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.config_error = True

    def _fields(self) -> dict[str, Any]:
        return {"configError": True}


class PathError(FlowcastError):
    """An identifier used to build a path is not safe (see ``assert_safe_ident``)."""

    default_code = "PATH_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)


class GuardError(FlowcastError):
    """The self-modification guard failed: ``GUARD_FAIL`` (a precondition) or ``ROLLBACK_FAIL``
    (the rollback itself failed; the error that triggered it is ``__cause__``)."""

    default_code = GUARD_FAIL

    def __init__(self, message: str, *, code: str = GUARD_FAIL) -> None:
        if code not in (GUARD_FAIL, ROLLBACK_FAIL):
            raise ValueError(f"GuardError code must be {GUARD_FAIL} or {ROLLBACK_FAIL}")
        super().__init__(message, code=code)

    def _fields(self) -> dict[str, Any]:
        if self.__cause__ is None:
            return {}
        return {"cause": error_to_dict(self.__cause__)}


class GitError(FlowcastError):
    """A git command failed; ``stderr`` is git's own error output."""

    default_code = "GIT_FAIL"

    def __init__(self, message: str, *, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr = stderr

    def _fields(self) -> dict[str, Any]:
        return {"stderr": self.stderr}


@dataclass(frozen=True, slots=True)
class VoterError:
    """One voter of ``verify_adversarial`` that could not vote."""

    lens: str
    error: str


class VerifyError(FlowcastError):
    """Every voter of ``verify_adversarial`` failed; nothing was verified."""

    default_code = "VERIFY_FAIL"

    def __init__(self, message: str, *, voter_errors: Sequence[VoterError]) -> None:
        super().__init__(message)
        self.voter_errors = list(voter_errors)

    def _fields(self) -> dict[str, Any]:
        return {"voterErrors": [{"lens": v.lens, "error": v.error} for v in self.voter_errors]}


@dataclass(frozen=True, slots=True)
class ParallelFailure:
    """One failed task of ``parallel``: its index in the input and the original error."""

    index: int
    error: BaseException


class ParallelError(FlowcastError):
    """Some tasks of ``parallel(strict=True)`` failed; raised after every task has finished."""

    default_code = "PARALLEL_FAIL"

    def __init__(self, message: str, *, failures: Sequence[ParallelFailure]) -> None:
        super().__init__(message)
        self.failures = list(failures)

    def _fields(self) -> dict[str, Any]:
        return {
            "failures": [{"index": f.index, "error": error_to_dict(f.error)} for f in self.failures]
        }


class LockError(FlowcastError):
    """The resume lock of a run could not be taken: ``LOCK_BUSY`` (a live owner holds it),
    ``LOCK_OWNER_PENDING`` (a fresh lock without owner.json) or ``LOCK_RETRY_EXHAUSTED``."""

    default_code = LOCK_BUSY

    def __init__(self, message: str, *, code: str) -> None:
        if code not in (LOCK_BUSY, LOCK_RETRY_EXHAUSTED, LOCK_OWNER_PENDING):
            raise ValueError(f"unknown LockError code {code!r}")
        super().__init__(message, code=code)


class PauseSignal(Exception):
    """Raised by ``Checkpoint.pause``: the flow's entry point decides what a pause means.

    Deliberately *not* a FlowcastError: ``except FlowcastError`` does not swallow a pause.
    """

    def __init__(self, reason: str, context: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"paused: {reason}")
        self.pause_reason = reason
        self.pause_context: dict[str, Any] = dict(context or {})

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (type(self), self.args, dict(self.__dict__)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": "PauseSignal",
            "message": str(self),
            "pauseReason": self.pause_reason,
            "pauseContext": _jsonable(self.pause_context),
        }
