"""``cg-conformance compare OLD.json NEW.json``: what changed between two reports.

A *regression* is a case that passed (or was not a failure) before and now fails or errors; a
*fix* is the reverse; any other change of outcome (``passed`` to ``skipped``, ``failed`` to
``errored``...) is a *change*. Cases present in only one report are listed as added or removed. A
case failed or errored in both reports is compared by its evidence too (what the surface emitted:
the observed error object or result), so two implementations failing the same case differently
are told apart. The comparison ignores expected-failure marks: it is about behaviour.

A passed case holds no evidence: it matched the vector, whose error expectations pin ``code``,
``phase``, ``message`` and ``nextAction`` exactly; so the same outcome on both sides is the same
error object. ``--strict`` (``Comparison.identical``) fails on any difference at all, which is
how two implementations of the contract are compared.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Comparison", "compare_reports", "load_report"]

_BAD = frozenset(("failed", "errored"))
_ABSENT = object()


@dataclass
class Comparison:
    regressions: list[tuple[str, str, str, str]] = field(
        default_factory=list
    )  # id, surface, old, new
    fixes: list[tuple[str, str, str, str]] = field(default_factory=list)
    changes: list[tuple[str, str, str, str]] = field(default_factory=list)
    added: list[tuple[str, str, str]] = field(default_factory=list)  # id, surface, outcome
    removed: list[tuple[str, str, str]] = field(default_factory=list)
    #: id, surface, old evidence, new evidence (compact JSON; "(none)" when a side has none)
    evidence: list[tuple[str, str, str, str]] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """The two reports show the same outcome, and the same evidence, for every case."""
        return not (
            self.regressions
            or self.fixes
            or self.changes
            or self.added
            or self.removed
            or self.evidence
        )

    def text(self) -> str:
        lines = [
            f"{len(self.regressions)} regression(s), {len(self.fixes)} fix(es), "
            f"{len(self.changes)} other change(s), {len(self.added)} added, "
            f"{len(self.removed)} removed, {len(self.evidence)} different evidence"
        ]
        for title, rows in (
            ("regressions", self.regressions),
            ("fixes", self.fixes),
            ("other changes", self.changes),
        ):
            if rows:
                lines.append(f"{title}:")
                lines += [f"  {v} [{s}]: {old} -> {new}" for v, s, old, new in rows]
        for title, items in (("added", self.added), ("removed", self.removed)):
            if items:
                lines.append(f"{title}:")
                lines += [f"  {v} [{s}]: {o}" for v, s, o in items]
        if self.evidence:
            lines.append("different evidence:")
            for v, s, old, new in self.evidence:
                lines += [f"  {v} [{s}]:", f"    old: {old}", f"    new: {new}"]
        return "\n".join(lines)


def load_report(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != "cg-conformance-report/1":
        raise ValueError(f"{path}: not a cg-conformance JSON report")
    return data


def _evidence_text(evidence: Any) -> str:
    # Compact, key order kept: the bytes a surface emitted are what is compared, so a member
    # order that differs is a difference too.
    if evidence is _ABSENT:
        return "(none)"
    return json.dumps(evidence, ensure_ascii=False, separators=(",", ":"))


def compare_reports(old: dict[str, Any], new: dict[str, Any]) -> Comparison:
    before = {(c["vector"], c["surface"]): c for c in old.get("cases", ())}
    after = {(c["vector"], c["surface"]): c for c in new.get("cases", ())}
    result = Comparison()
    for key in sorted(before.keys() | after.keys()):
        if key not in after:
            result.removed.append((*key, before[key]["outcome"]))
            continue
        if key not in before:
            result.added.append((*key, after[key]["outcome"]))
            continue
        was, now = before[key]["outcome"], after[key]["outcome"]
        if was not in _BAD and now in _BAD:
            result.regressions.append((*key, was, now))
        elif was in _BAD and now == "passed":
            result.fixes.append((*key, was, now))
        elif was != now:
            result.changes.append((*key, was, now))
        old_evidence = _evidence_text(before[key].get("evidence", _ABSENT))
        new_evidence = _evidence_text(after[key].get("evidence", _ABSENT))
        if was in _BAD and now in _BAD and old_evidence != new_evidence:
            result.evidence.append((*key, old_evidence, new_evidence))
    return result
