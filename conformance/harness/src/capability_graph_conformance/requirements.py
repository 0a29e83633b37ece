"""The requirements of the specification, and which vectors test them.

The specification (``spec/capability-graph/spec/*.md``) writes every requirement as a paragraph
or list item that starts with ``**[CG-AREA-N]**``; its strength is the strongest RFC 2119 keyword
it contains (MUST > SHOULD > MAY); it ends with ``(untestable: reason)`` when no vector can test
it and with ``(deprecated in X.Y.Z: ...)`` once deprecated. Vectors name the ids they test in
their ``requirements`` array. This module parses both and computes the coverage that
``cg-conformance check`` enforces and the documentation site publishes: requirement -> required
vectors -> surfaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from .suite import SURFACES, Suite, Vector

__all__ = [
    "REQUIREMENT_ID",
    "Coverage",
    "Requirement",
    "RequirementError",
    "coverage_of",
    "parse_requirements",
    "spec_requirements",
    "suite_coverage",
]

#: A requirement id anywhere in a text (a citation).
REQUIREMENT_ID: Final = re.compile(r"\bCG-[A-Z]+-[0-9]+\b")

# A requirement starts a paragraph or a list item: "**[CG-PREC-3]** ..." or "- **[CG-PREC-3]** ...".
_START: Final = re.compile(r"^(?:[-*+] |\d+\. )?\*\*\[(CG-[A-Z]+-[0-9]+)\]\*\*")
_UNTESTABLE: Final = re.compile(r"\(untestable: ([^()]*(?:\([^()]*\)[^()]*)*)\)\s*$")
# A MUST that binds only an implementation offering an optional feature (an executor the spec
# lets an implementation leave out): its vectors are optional ones, and they cover it.
_OPTIONAL_FEATURE: Final = re.compile(r"\(optional feature: ([^()]*)\)\s*$")
_DEPRECATED: Final = re.compile(r"\(deprecated in [0-9]+\.[0-9]+\.[0-9]+: [^)]*\)\s*$")
_MUST: Final = re.compile(r"\b(?:MUST|SHALL|REQUIRED)\b")
_SHOULD: Final = re.compile(r"\b(?:SHOULD|RECOMMENDED)\b")
_MAY: Final = re.compile(r"\b(?:MAY|OPTIONAL)\b")

Strength = Literal["MUST", "SHOULD", "MAY"]


class RequirementError(Exception):
    """The specification breaks its own syntax (a duplicate id, a requirement without keyword)."""


@dataclass(frozen=True)
class Requirement:
    id: str
    strength: Strength
    text: str
    source: str  # file name inside the spec folder
    untestable: str | None = None  # the reason
    deprecated: bool = False
    feature: str | None = None  # the optional feature it binds (covered by optional vectors)

    @property
    def area(self) -> str:
        return self.id.split("-")[1]

    @property
    def needs_vector(self) -> bool:
        """A MUST that a vector can test and that is in force."""
        return self.strength == "MUST" and self.untestable is None and not self.deprecated


def _blocks(text: str) -> Iterator[str]:
    """Paragraphs and list items (a list item ends at the next item, a blank line or a heading)."""
    block: list[str] = []
    for line in text.splitlines():
        starts_item = bool(re.match(r"^(?:[-*+] |\d+\. )", line))
        if not line.strip() or line.startswith("#") or line.startswith("|") or starts_item:
            if block:
                yield " ".join(block)
            block = []
            if starts_item:
                block = [line.strip()]
            continue
        block.append(line.strip())
    if block:
        yield " ".join(block)


def parse_requirements(text: str, source: str) -> list[Requirement]:
    """The requirements of one specification file."""
    found = []
    for block in _blocks(text):
        match = _START.match(block)
        if match is None:
            continue
        ident = match.group(1)
        body = block[match.end() :].strip()
        untestable = _UNTESTABLE.search(body)
        feature = _OPTIONAL_FEATURE.search(body)
        marker = untestable or feature
        normative = body[: marker.start()] if marker else body
        strength: Strength
        if _MUST.search(normative):
            strength = "MUST"
        elif _SHOULD.search(normative):
            strength = "SHOULD"
        elif _MAY.search(normative):
            strength = "MAY"
        else:
            raise RequirementError(f"{source}: {ident} has no RFC 2119 keyword in capitals")
        found.append(
            Requirement(
                id=ident,
                strength=strength,
                text=body,
                source=source,
                untestable=untestable.group(1).strip() if untestable else None,
                deprecated=_DEPRECATED.search(body) is not None,
                feature=feature.group(1).strip() if feature else None,
            )
        )
    return found


def spec_requirements(spec_dir: Path) -> dict[str, Requirement]:
    """Every requirement of the specification folder, by id (each id defined exactly once)."""
    requirements: dict[str, Requirement] = {}
    for path in sorted(spec_dir.glob("*.md")):
        for requirement in parse_requirements(path.read_text(encoding="utf-8"), path.name):
            if requirement.id in requirements:
                first = requirements[requirement.id].source
                raise RequirementError(
                    f"{requirement.id} is defined twice ({first} and {requirement.source})"
                )
            requirements[requirement.id] = requirement
    return requirements


@dataclass
class Coverage:
    """Requirement -> the required vectors that name it (for a requirement of an optional
    feature, the optional ones too), and the surfaces those vectors run on."""

    requirements: dict[str, Requirement]
    vectors: dict[str, list[str]] = field(default_factory=dict)  # id -> vector ids
    surfaces: dict[str, list[str]] = field(default_factory=dict)  # id -> surfaces
    unknown: list[tuple[str, str]] = field(default_factory=list)  # (vector id, cited id)

    def ordered(self) -> list[Requirement]:
        """In the order the specification defines them (its files in order, top to bottom)."""
        return list(self.requirements.values())

    def uncovered(self) -> list[Requirement]:
        """MUST requirements in force that no required vector tests (and that are testable)."""
        return [r for r in self.ordered() if r.needs_vector and not self.vectors.get(r.id)]

    def counts(self) -> dict[str, int]:
        values = list(self.requirements.values())
        return {
            "requirements": len(values),
            "MUST": sum(r.strength == "MUST" for r in values),
            "SHOULD": sum(r.strength == "SHOULD" for r in values),
            "MAY": sum(r.strength == "MAY" for r in values),
            "untestable": sum(r.untestable is not None for r in values),
            "deprecated": sum(r.deprecated for r in values),
            "testable MUST": sum(r.needs_vector for r in values),
            "testable MUST covered": sum(
                r.needs_vector and bool(self.vectors.get(r.id)) for r in values
            ),
        }


def coverage_of(requirements: dict[str, Requirement], vectors: Iterable[Vector]) -> Coverage:
    coverage = Coverage(requirements)
    by_requirement: dict[str, list[str]] = {}
    surfaces: dict[str, set[str]] = {}
    for vector in vectors:
        named = vector.data.get("requirements", ())
        for ident in named if isinstance(named, list) else ():
            if ident not in requirements:
                coverage.unknown.append((vector.id, str(ident)))
                continue
            if vector.level != "required" and requirements[ident].feature is None:
                continue
            by_requirement.setdefault(ident, []).append(vector.id)
            surfaces.setdefault(ident, set()).update(vector.surfaces)
    coverage.vectors = {i: sorted(v) for i, v in by_requirement.items()}
    coverage.surfaces = {i: [s for s in SURFACES if s in v] for i, v in surfaces.items()}
    return coverage


def suite_coverage(suite: Suite) -> Coverage:
    """The coverage of ``suite``: its specification folder against its vectors."""
    return coverage_of(spec_requirements(suite.requirements_dir), suite.vectors)
