"""What the conformance pages state by hand agrees with the harness, so it cannot go stale.

The suite's version is the harness's (``capability_graph_conformance.SUITE_VERSION``), and so is
the driver protocol's (``DRIVER_PROTOCOL``): every page of ``spec/`` and ``docs/``, the driver
skeleton and the reference drivers that state the current version (a ``start`` message of the
protocol, "Suite version **X**", chapter 14's "its own version (**X**)", the newest entry of the
versions list of ``docs/conformance.md``) must state the harness's, and none may name a suite
newer than it. The figures of the harness that the pages quote (the ``-j`` default, how many MCP
batch failures are confirmed, the bounds of the evidence, the range of the ``CG-CONF`` ids) are
read from the harness and the specification too. The verdicts of a real run are not written by
hand at all: ``tools/site_conformance.py`` generates them in the docs build.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from capability_graph_conformance import DRIVER_PROTOCOL, SUITE_VERSION
from capability_graph_conformance._json import preview
from capability_graph_conformance.cli import JOBS_HELP
from capability_graph_conformance.requirements import spec_requirements
from capability_graph_conformance.run_driver import EVIDENCE_STEPS
from capability_graph_conformance.session import MAX_CONFIRMATIONS

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
DOCS = ROOT / "docs"
CONFORMANCE_PAGE = DOCS / "conformance.md"
IMPLEMENTERS_PAGE = DOCS / "implementers.md"
CONFORMANCE_README = SPEC / "conformance" / "README.md"
CHAPTER_14 = SPEC / "capability-graph" / "spec" / "14-conformance.md"

#: Statements of the current suite version, each with the group ``v``.
SUITE_NOW = {
    "a start message": re.compile(r'"suite"\s*:\s*"(?P<v>[^"]*)"'),
    "Suite version **X**": re.compile(r"[Ss]uite version \*\*(?P<v>[^*]+)\*\*"),
    "its own version (**X**)": re.compile(r"has its own version \(\*\*(?P<v>[^*]+)\*\*\)"),
}
#: Statements of the current driver protocol version.
PROTOCOL_NOW = {
    "a start or started message": re.compile(r'"protocol"\s*:\s*"(?P<v>[^"]*)"'),
    "protocol **X**": re.compile(r"protocol \(?\*\*(?P<v>[0-9.]+)\*\*"),
    "protocol, version X": re.compile(r"protocol, version (?P<v>[0-9.]+)"),
    "PROTOCOL = X": re.compile(r'^PROTOCOL = "(?P<v>[^"]*)"', re.MULTILINE),
}
#: Any suite version named, current or past.
SUITE_ANY = re.compile(r"\b[Ss]uite (?P<v>[0-9]+\.[0-9]+\.[0-9]+)\b")


def _texts() -> Iterator[tuple[str, str]]:
    """(path, text) of the pages, schemas and drivers that may state a version."""
    paths = [
        *SPEC.rglob("*.md"),
        *SPEC.rglob("*.json"),
        *DOCS.rglob("*.md"),
        *(ROOT / "conformance" / "implementations").glob("*.py"),
        ROOT / "conformance" / "harness" / "README.md",
    ]
    for path in sorted(paths):
        if "examples" in path.relative_to(ROOT).parts:
            continue
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_every_statement_of_the_current_suite_version_is_the_harnesss() -> None:
    found = {what: 0 for what in SUITE_NOW}
    stale = []
    for path, text in _texts():
        for what, pattern in SUITE_NOW.items():
            for match in pattern.finditer(text):
                found[what] += 1
                if match["v"] != SUITE_VERSION:
                    stale.append(f"{path}: {what}: {match['v']}")
    assert stale == [], f"the harness's suite version is {SUITE_VERSION}"
    assert all(found.values()), found  # each kind of statement is still recognised


def test_no_page_names_a_suite_newer_than_the_harness_and_the_newest_is_described() -> None:
    newer = [
        f"{path}: {match[0]}"
        for path, text in _texts()
        for match in SUITE_ANY.finditer(text)
        if _version(match["v"]) > _version(SUITE_VERSION)
    ]
    assert newer == []
    # the changes of the harness's suite are described where the versions are listed
    chapter = " ".join(CHAPTER_14.read_text(encoding="utf-8").split())
    assert f"Suite {SUITE_VERSION} (contract " in chapter  # CG-CONF-4
    versions = CONFORMANCE_PAGE.read_text(encoding="utf-8").split("\n## Versions\n", 1)[1]
    newest = re.search(r"\*\*suite (?P<v>[0-9.]+)\*\*", versions)
    assert newest is not None
    assert newest["v"] == SUITE_VERSION


def test_every_statement_of_the_driver_protocol_version_is_the_harnesss() -> None:
    found = {what: 0 for what in PROTOCOL_NOW}
    stale = []
    for path, text in _texts():
        for what, pattern in PROTOCOL_NOW.items():
            for match in pattern.finditer(text):
                found[what] += 1
                if match["v"] != DRIVER_PROTOCOL:
                    stale.append(f"{path}: {what}: {match['v']}")
    assert stale == [], f"the harness's driver protocol is {DRIVER_PROTOCOL}"
    assert all(found.values()), found


def _parenthesised_default(help_text: str) -> str:
    match = re.search(r"\(default: (?P<d>[^)]+)\)", help_text)
    assert match is not None
    return match["d"]


def test_the_figures_of_the_harness_that_the_pages_quote_are_the_harnesss() -> None:
    page = " ".join(CONFORMANCE_PAGE.read_text(encoding="utf-8").split())
    readme = " ".join(CONFORMANCE_README.read_text(encoding="utf-8").split())
    # cg-conformance run -j: the help, the page and RunSession say one default
    assert f"time (default: {_parenthesised_default(JOBS_HELP)})." in page
    assert f"At most {MAX_CONFIRMATIONS} failing cases of one batch are confirmed" in page
    limit = inspect.signature(preview).parameters["limit"].default
    assert f"a one-line preview of at most {limit} characters" in readme
    assert f"a preview of at most {limit} characters" in page
    assert f"across surfaces; at most {EVIDENCE_STEPS})" in readme
    assert f"at most {EVIDENCE_STEPS}) and its stderr" in page


@pytest.mark.parametrize("page", [CONFORMANCE_PAGE, IMPLEMENTERS_PAGE], ids=lambda p: p.name)
def test_a_range_of_the_conformance_requirements_ends_at_the_last_one(page: Path) -> None:
    defined = spec_requirements(SPEC / "capability-graph" / "spec")
    last = max(int(i.rsplit("-", 1)[1]) for i in defined if i.startswith("CG-CONF-"))
    ranges = re.findall(r"`CG-CONF-1` … `CG-CONF-([0-9]+)`", page.read_text(encoding="utf-8"))
    assert ranges
    assert {int(n) for n in ranges} == {last}
