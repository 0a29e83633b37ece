"""``cg-conformance compare OLD.json NEW.json``: what changed between two reports.

A *regression* is a case that passed (or was not a failure) before and now fails or errors; a
*fix* is the reverse. Cases present in only one report are listed as added or removed. The
comparison ignores expected-failure marks: it is about behaviour.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Comparison", "compare_reports", "load_report"]

_BAD = frozenset(("failed", "errored"))


@dataclass
class Comparison:
    regressions: list[tuple[str, str, str, str]] = field(
        default_factory=list
    )  # id, surface, old, new
    fixes: list[tuple[str, str, str, str]] = field(default_factory=list)
    added: list[tuple[str, str, str]] = field(default_factory=list)  # id, surface, outcome
    removed: list[tuple[str, str, str]] = field(default_factory=list)

    def text(self) -> str:
        lines = [
            f"{len(self.regressions)} regression(s), {len(self.fixes)} fix(es), "
            f"{len(self.added)} added, {len(self.removed)} removed"
        ]
        for title, rows in (("regressions", self.regressions), ("fixes", self.fixes)):
            if rows:
                lines.append(f"{title}:")
                lines += [f"  {v} [{s}]: {old} -> {new}" for v, s, old, new in rows]
        for title, items in (("added", self.added), ("removed", self.removed)):
            if items:
                lines.append(f"{title}:")
                lines += [f"  {v} [{s}]: {o}" for v, s, o in items]
        return "\n".join(lines)


def load_report(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != "cg-conformance-report/1":
        raise ValueError(f"{path}: not a cg-conformance JSON report")
    return data


def compare_reports(old: dict[str, Any], new: dict[str, Any]) -> Comparison:
    before = {(c["vector"], c["surface"]): c["outcome"] for c in old.get("cases", ())}
    after = {(c["vector"], c["surface"]): c["outcome"] for c in new.get("cases", ())}
    result = Comparison()
    for key in sorted(before.keys() | after.keys()):
        if key not in after:
            result.removed.append((*key, before[key]))
        elif key not in before:
            result.added.append((*key, after[key]))
        elif before[key] not in _BAD and after[key] in _BAD:
            result.regressions.append((*key, before[key], after[key]))
        elif before[key] in _BAD and after[key] == "passed":
            result.fixes.append((*key, before[key], after[key]))
    return result
