"""The report of a maintenance command (doctor, init, mcp-install, mcp-uninstall) and of
``capability_graph.diagnose``.

``{"status", "checks", "warnings"}`` on stdout with ``--json`` (the ``maintenance-report`` schema),
otherwise text; ``hints`` are next steps for a person and appear in the text only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .._core.errors import GraphError

__all__ = ["Check", "CheckStatus", "Report", "ReportStatus", "counted", "safe_text"]

CheckStatus = Literal["ok", "warn", "fail", "skip"]
ReportStatus = Literal["planned", "ok", "conflict", "failed"]

_MAX_TEXT: Final = 1024


def safe_text(text: str) -> str:
    """One line of printable text, 1..1024 characters (the report's ReportText)."""
    cleaned = "".join(c if c.isprintable() else "?" for c in text) or "-"
    return cleaned if len(cleaned) <= _MAX_TEXT else cleaned[: _MAX_TEXT - 3] + "..."


def counted(number: int, singular: str, plural: str | None = None) -> str:
    """``1 source``, ``2 sources``: a number and its noun, in the right number."""
    return f"{number} {singular if number == 1 else plural or singular + 's'}"


@dataclass(frozen=True)
class Check:
    """One check of a [Report][capability_graph.Report]: its id (``config``, ``source.0``, ...),
    its status and a message (one line of printable text)."""

    id: str
    status: CheckStatus
    message: str

    def to_json(self) -> dict[str, str]:
        """The check's JSON form in the ``maintenance-report``: ``{"id", "status", "message"}``."""
        return {"id": self.id, "status": self.status, "message": self.message}


@dataclass
class Report:
    """A list of [checks][capability_graph.Check] (``ok``, ``warn``, ``fail`` or ``skip``, each
    with a message), warnings and an overall ``status``; ``to_json()`` is its
    ``maintenance-report`` form."""

    status: ReportStatus = "ok"
    checks: list[Check] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Next steps for a person (``hint:`` lines of the text report; not part of ``--json``).
    hints: list[str] = field(default_factory=list)
    #: The GraphError ``open`` raises for this configuration when it cannot be read at all
    #: (set by ``diagnose``; a surface that answers with error envelopes shows it too). Not part
    #: of ``to_json()``.
    error: GraphError | None = None

    def check(self, check_id: str, status: CheckStatus, message: str) -> None:
        """Record a check: its id, its status and a message (one line of printable text)."""
        self.checks.append(Check(check_id, status, safe_text(message)))

    def warn(self, message: str) -> None:
        """Record a warning (one line of printable text)."""
        self.warnings.append(safe_text(message))

    def hint(self, message: str) -> None:
        """Record a next step for a person (shown in the text report only)."""
        self.hints.append(safe_text(message))

    def failed(self) -> bool:
        """True when a check failed."""
        return any(check.status == "fail" for check in self.checks)

    def to_json(self) -> dict[str, Any]:
        """The ``maintenance-report`` JSON: ``{"status", "checks", "warnings"}``."""
        checks = [check.to_json() for check in self.checks]
        return {"status": self.status, "checks": checks, "warnings": list(self.warnings)}
