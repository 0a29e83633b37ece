"""The one error type of Capability Graph.

Every failure on every surface is a ``GraphError``::

    Exception
     └── GraphError        code, phase, message, next_action; to_json()

``code``, ``phase`` and ``next_action`` come from the registry
(``spec/capability-graph/taxonomy.json``, generated into ``_generated.taxonomy``); anything outside
it is a programming error and raises ``ValueError`` at construction. ``message`` is a fixed, safe
sentence: the registry's reference text unless a caller passes a pointer message for the codes
that allow one. A GraphError never carries a raw cause in its public state; the core raises it
``from None``.
"""

from __future__ import annotations

from typing import Any, Final

from .._generated.taxonomy import REGISTRY, CodeEntry, ErrorCode, NextAction, Phase

__all__ = ["GraphError"]


class _Default:
    """Sentinel: "use the code's default nextAction"."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Final = _Default()

# A message is shown verbatim on every surface, so it must stay a single printable line.
_MAX_MESSAGE = 300


def _entry(code: ErrorCode | str) -> CodeEntry:
    try:
        return REGISTRY[ErrorCode(code)]
    except ValueError:
        raise ValueError(f"unknown error code {code!r}") from None


class GraphError(Exception):
    """A contract error: `code`, `phase`, `message` and optional `next_action`.

    Branch on `code`, `phase` and `next_action`, never on `message`. `to_json()` is the contract's
    error object; `str(error)` is a line for people and logs, `"<code> (<phase>): <message>"`.
    """

    code: ErrorCode
    phase: Phase
    message: str
    next_action: NextAction | None

    def __init__(
        self,
        code: ErrorCode | str,
        phase: Phase | str | None = None,
        message: str | None = None,
        next_action: NextAction | str | _Default | None = DEFAULT,
    ) -> None:
        entry = _entry(code)
        if phase is None:
            if len(entry.phases) != 1:
                raise ValueError(f"{entry.code} needs an explicit phase, one of {entry.phases}")
            phase = entry.phases[0]
        try:
            resolved_phase = Phase(phase)
        except ValueError:
            raise ValueError(f"unknown phase {phase!r}") from None
        if resolved_phase not in entry.phases:
            raise ValueError(f"{entry.code} is not raised in phase {resolved_phase}")
        if isinstance(next_action, _Default):
            action = entry.default_action
        elif next_action is None:
            action = None
        else:
            try:
                action = NextAction(next_action)
            except ValueError:
                raise ValueError(f"unknown nextAction {next_action!r}") from None
        if action != entry.default_action and action not in entry.executor_actions:
            raise ValueError(f"{entry.code} cannot carry nextAction {action}")
        if message is None:
            message = entry.messages["default"]
        if not message or len(message) > _MAX_MESSAGE or not message.isprintable():
            raise ValueError("a GraphError message is one printable line of 1..300 characters")
        super().__init__(message)
        self.code = entry.code
        self.phase = resolved_phase
        self.message = message
        self.next_action = action

    @classmethod
    def of(
        cls, code: ErrorCode | str, phase: Phase | str | None = None, *, variant: str = "default"
    ) -> GraphError:
        """The error with the registry's reference message `variant` and the default action."""
        entry = _entry(code)
        try:
            message = entry.messages[variant]
        except KeyError:
            raise ValueError(f"{entry.code} has no message variant {variant!r}") from None
        return cls(entry.code, phase, message)

    def __str__(self) -> str:
        # Only registry values and the fixed safe message: nothing a caller passed in is echoed.
        return f"{self.code.value} ({self.phase.value}): {self.message}"

    def to_json(self) -> dict[str, str]:
        """The error object of the contract: `{code, phase, message[, nextAction]}`."""
        error = {"code": self.code.value, "phase": self.phase.value, "message": self.message}
        if self.next_action is not None:
            error["nextAction"] = self.next_action.value
        return error

    def __repr__(self) -> str:
        action = f", next_action={self.next_action.value!r}" if self.next_action else ""
        return (
            f"GraphError(code={self.code.value!r}, phase={self.phase.value!r}, "
            f"message={self.message!r}{action})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.code, self.phase, self.message, self.next_action))
