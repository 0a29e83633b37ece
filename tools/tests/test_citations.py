"""Nothing in the repository cites a document outside it, and every cited requirement exists.

``spec/`` is the contract: code, tests, docs, schemas and vectors cite its requirement ids
(``CG-AREA-N``), never the design brief that preceded it, its section signs, the user's original
files or issue numbers. A citation of a requirement id that the specification does not define is
as broken as an external one.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from capability_graph_conformance.requirements import REQUIREMENT_ID, spec_requirements

ROOT = Path(__file__).resolve().parents[2]
SPEC_TEXT = ROOT / "spec" / "capability-graph" / "spec"

#: What an external citation looks like: the design brief by name or section sign, the user's
#: original files (named by a sequence number and a 16-digit hex digest), an issue number.
EXTERNAL_CITATION = re.compile(
    r"DESIGN|\N{SECTION SIGN}|seed file|\b[0-9]{3}_[0-9a-f]{16}\b|issue #?[0-9]+"
)

#: Files that must name undefined ids or the citation patterns themselves, to test the checks.
SELF_TESTS = frozenset(
    {
        "tools/tests/test_citations.py",
        "conformance/harness/tests/test_requirements.py",
        "conformance/harness/tests/test_check.py",
    }
)


def _tracked_texts() -> list[tuple[str, str]]:
    """(path, text) of every tracked UTF-8 text file of the repository."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode("utf-8")
    texts = []
    for name in sorted(filter(None, listed.split("\0"))):
        path = ROOT / name
        if name in SELF_TESTS or not path.is_file() or path.is_symlink():
            continue
        try:
            texts.append((name, path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue  # binary (images, fixtures that are deliberately not UTF-8)
    return texts


def external_citations(text: str) -> list[str]:
    """The external citations in ``text``, each with a little context."""
    return [
        text[max(0, m.start() - 30) : m.end() + 30].replace("\n", " ")
        for m in EXTERNAL_CITATION.finditer(text)
    ]


@pytest.fixture(scope="module")
def tracked() -> list[tuple[str, str]]:
    try:
        return _tracked_texts()
    except (OSError, subprocess.CalledProcessError):  # pragma: no cover -- not a git checkout
        pytest.fail("the repository's files are listed with git; run the tests in a checkout")


@pytest.mark.parametrize(
    "text",
    [
        "see DESIGN section 4",
        "the rule of \N{SECTION SIGN}4.4",
        "from the seed file",
        "000_0123456789abcdef.txt error.mjs",
        "001_fedcba9876543210.txt",
        "fixed in issue 13",
        "see issue #9",
    ],
)
def test_the_detector_finds_each_kind_of_external_citation(text: str) -> None:
    assert external_citations(text) != []


def test_the_detector_accepts_requirement_ids() -> None:
    assert external_citations("the precedence of CG-PREC-3 (spec section 5)") == []


def test_no_file_cites_a_document_outside_the_repository(tracked: list[tuple[str, str]]) -> None:
    found = {name: hits for name, text in tracked if (hits := external_citations(text))}
    assert found == {}


def test_every_cited_requirement_id_is_defined_by_the_specification(
    tracked: list[tuple[str, str]],
) -> None:
    defined = set(spec_requirements(SPEC_TEXT))
    undefined = {
        name: sorted(cited)
        for name, text in tracked
        if (cited := set(REQUIREMENT_ID.findall(text)) - defined)
    }
    assert undefined == {}
