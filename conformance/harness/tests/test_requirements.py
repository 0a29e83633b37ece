"""Parsing the specification's requirements and computing their coverage by vectors."""

from __future__ import annotations

from pathlib import Path

import pytest
from capability_graph_conformance.requirements import (
    RequirementError,
    coverage_of,
    parse_requirements,
    spec_requirements,
)
from capability_graph_conformance.suite import Vector

SECTION = """\
# 5. Example

Some prose that is not a requirement, even with MUST in it.

**[CG-EX-1]** A paragraph requirement MUST hold,
even across lines.

- **[CG-EX-2]** A list item SHOULD hold.
- **[CG-EX-3]** An implementation MAY do this.
- not a requirement

**[CG-EX-4]** A thing MUST be done. (untestable: nothing observes it (not even a log))

**[CG-EX-5]** An old rule MUST hold. (deprecated in 1.1.0: replaced by CG-EX-1)

| **[CG-EX-6]** in a table | is not a requirement MUST |
"""


def _by_id(text: str) -> dict[str, object]:
    return {r.id: r for r in parse_requirements(text, "05-example.md")}


def test_requirements_start_a_paragraph_or_a_list_item() -> None:
    assert list(_by_id(SECTION)) == ["CG-EX-1", "CG-EX-2", "CG-EX-3", "CG-EX-4", "CG-EX-5"]


def test_a_paragraph_requirement_spans_its_lines() -> None:
    (first, *_) = parse_requirements(SECTION, "05-example.md")
    assert first.text == "A paragraph requirement MUST hold, even across lines."


def test_strength_is_the_strongest_keyword_in_capitals() -> None:
    parsed = parse_requirements(SECTION, "05-example.md")
    assert [r.strength for r in parsed] == ["MUST", "SHOULD", "MAY", "MUST", "MUST"]


def test_untestable_and_deprecated_requirements_need_no_vector() -> None:
    parsed = {r.id: r for r in parse_requirements(SECTION, "05-example.md")}
    assert parsed["CG-EX-4"].untestable == "nothing observes it (not even a log)"
    assert parsed["CG-EX-5"].deprecated
    assert [i for i, r in parsed.items() if r.needs_vector] == ["CG-EX-1"]


def test_a_requirement_without_a_keyword_is_a_specification_error() -> None:
    with pytest.raises(RequirementError, match="CG-EX-9 has no RFC 2119 keyword"):
        parse_requirements("**[CG-EX-9]** This says nothing normative.\n", "x.md")


def test_an_id_defined_twice_is_a_specification_error(tmp_path: Path) -> None:
    (tmp_path / "01-a.md").write_text("**[CG-EX-1]** It MUST hold.\n", encoding="utf-8")
    (tmp_path / "02-b.md").write_text("**[CG-EX-1]** It MUST too.\n", encoding="utf-8")
    with pytest.raises(RequirementError, match=r"CG-EX-1 is defined twice \(01-a.md and 02-b.md\)"):
        spec_requirements(tmp_path)


def _vector(vector_id: str, requirements: list[str], level: str = "required") -> Vector:
    data = {
        "id": vector_id,
        "requirements": requirements,
        "level": level,
        "surfaces": ["cli", "sdk"],
    }
    return Vector(Path(f"{vector_id}.json"), "query", data)


def test_coverage_counts_required_vectors_and_their_surfaces() -> None:
    requirements = {r.id: r for r in parse_requirements(SECTION, "05-example.md")}
    coverage = coverage_of(
        requirements,
        [
            _vector("cg.query.b", ["CG-EX-1"]),
            _vector("cg.query.a", ["CG-EX-1", "CG-EX-2"]),
            _vector("cg.query.optional", ["CG-EX-3"], level="optional"),
            _vector("cg.query.stray", ["CG-EX-77"]),
        ],
    )
    assert coverage.vectors == {"CG-EX-1": ["cg.query.a", "cg.query.b"], "CG-EX-2": ["cg.query.a"]}
    assert coverage.surfaces["CG-EX-1"] == ["sdk", "cli"]
    assert coverage.unknown == [("cg.query.stray", "CG-EX-77")]
    assert coverage.uncovered() == []
    assert coverage.counts()["testable MUST covered"] == 1


def test_an_optional_vector_does_not_cover_a_must() -> None:
    requirements = {r.id: r for r in parse_requirements(SECTION, "05-example.md")}
    coverage = coverage_of(requirements, [_vector("cg.query.o", ["CG-EX-1"], level="optional")])
    assert [r.id for r in coverage.uncovered()] == ["CG-EX-1"]
