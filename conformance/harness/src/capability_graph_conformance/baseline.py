"""Expected-failure lists (``spec/conformance/expected-failures.schema.json``), strictly applied.

A listed case that failed or errored is an *expected failure* (it does not fail the run). A listed
case that passed is an *unexpected pass*, and an entry that matches no case of the suite (a
vector that does not exist, a case that is not applicable) or whose ``outcome`` differs is
*unmatched*: both fail the run, so the list can only shrink as the implementation improves.
Entries for cases that did not run are ignored, whatever kept them from running: a vector outside
the ``-k`` selection, a surface outside ``-s``, a surface without a command in the manifest, a
step the driver does not support, ``--exit-first``. The report's verdict says what did not run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import SUITE_VERSION
from .cases import CaseResult
from .schemas import InvalidDocument, SchemaSet

__all__ = ["Baseline", "BaselineError", "apply_baseline", "baseline_document"]


class BaselineError(Exception):
    """The expected-failures list cannot be read or is not valid."""


@dataclass
class Baseline:
    path: Path | None = None
    entries: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path, schemas: SchemaSet) -> Baseline:
        try:
            data = schemas.load(path, "conformance/expected-failures.schema.json")
        except InvalidDocument as error:
            raise BaselineError(str(error)) from None
        return cls(path, list(data["entries"]))


@dataclass
class BaselineOutcome:
    unexpected_passes: list[tuple[str, str]] = field(default_factory=list)
    unmatched: list[tuple[str, str]] = field(default_factory=list)


def apply_baseline(
    cases: list[CaseResult], baseline: Baseline, known_vectors: set[str], selected: set[str]
) -> BaselineOutcome:
    """Mark expected failures on ``cases``; return the unexpected passes and unmatched entries."""
    result = BaselineOutcome()
    by_key = {case.key: case for case in cases}
    for entry in baseline.entries:
        key = (entry["vector"], entry["surface"])
        if entry["vector"] in known_vectors and entry["vector"] not in selected:
            continue  # not part of this run
        case = by_key.get(key)
        if case is None or case.outcome == "not-applicable":
            result.unmatched.append(key)
            continue
        if case.outcome == "skipped":
            continue  # not run here: neither confirmed nor contradicted
        wanted = entry.get("outcome")
        if case.outcome == "passed":
            result.unexpected_passes.append(key)
        elif case.outcome in ("failed", "errored") and wanted in (None, case.outcome):
            case.expected_failure = True
        else:
            result.unmatched.append(key)
    return result


def baseline_document(implementation: str, cases: list[CaseResult]) -> dict[str, Any]:
    """An expected-failures list holding every failed or errored case of a run."""
    entries = []
    for case in cases:
        if case.outcome in ("failed", "errored"):
            entries.append(
                {
                    "vector": case.vector.id,
                    "surface": case.surface,
                    "reason": (case.reason or case.outcome)[:300],
                    "outcome": case.outcome,
                }
            )
    return {
        "$schema": "https://schemas.capability-graph.dev/v1/conformance/expected-failures.schema.json",
        "implementation": implementation,
        "suite": SUITE_VERSION,
        "entries": entries,
    }
