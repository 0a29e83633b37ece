"""The report of a maintenance command (doctor, init, mcp-install, mcp-uninstall).

``{"status", "checks", "warnings"}`` on stdout with ``--json`` (the ``maintenance-report`` schema),
otherwise text; ``hints`` are next steps for a person and appear in the text only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

__all__ = ["CheckStatus", "Report", "ReportStatus", "safe_text"]

CheckStatus = Literal["ok", "warn", "fail", "skip"]
ReportStatus = Literal["planned", "ok", "conflict", "failed"]

_MAX_TEXT: Final = 1024


def safe_text(text: str) -> str:
    """One line of printable text, 1..1024 characters (the report's ReportText)."""
    cleaned = "".join(c if c.isprintable() else "?" for c in text) or "-"
    return cleaned if len(cleaned) <= _MAX_TEXT else cleaned[: _MAX_TEXT - 3] + "..."


@dataclass
class Report:
    status: ReportStatus = "ok"
    checks: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Next steps for a person (``hint:`` lines of the text report; not part of ``--json``).
    hints: list[str] = field(default_factory=list)

    def check(self, check_id: str, status: CheckStatus, message: str) -> None:
        self.checks.append({"id": check_id, "status": status, "message": safe_text(message)})

    def warn(self, message: str) -> None:
        self.warnings.append(safe_text(message))

    def hint(self, message: str) -> None:
        self.hints.append(safe_text(message))

    def failed(self) -> bool:
        return any(c["status"] == "fail" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "checks": self.checks, "warnings": self.warnings}
