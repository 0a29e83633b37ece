"""The spec and the vectors exist once: no tracked file is a byte-identical copy of another,
except the groups of ``ALLOWED``, each with the reason it must be duplicated."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Groups of identical files that must stay identical: (patterns every member matches, reason).
ALLOWED: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("LICENSE", "python/*/LICENSE", "conformance/harness/LICENSE", "typescript/LICENSE"),
        "each distribution's license file must lie in its own project folder (PEP 639 "
        "license-files; npm packs the LICENSE of the package folder); test_packaging proves "
        "each equals the root LICENSE",
    ),
    (
        ("*/py.typed",),
        "the empty PEP 561 marker, one in each typed package",
    ),
    (
        ("python/capability-graph/hatch_build.py", "conformance/harness/hatch_build.py"),
        "each sdist carries the build hook that packages its repository files (hatchling loads "
        "it from the project folder); what it packages is each pyproject.toml's configuration",
    ),
    (
        (
            "conformance/fixtures/edges/array-config.json",
            "spec/capability-graph/examples/describe-request/invalid/array.json",
        ),
        "two independent values that happen to be the same two bytes: a configuration that is "
        "an array (a conformance fixture) and a request that is an array (a schema example)",
    ),
    (
        (
            "conformance/fixtures/minimal/capability-graph.json",
            "spec/capability-graph/examples/config/valid/seed-error-mjs.json",
        ),
        "the smallest useful configuration, once as the conformance fixture the vectors open "
        "and once as a labelled example of config.schema.json; changing either changes what it "
        "tests",
    ),
    (
        ("spec/capability-graph/examples/*",),
        "an example is a value labelled for one schema (its folder); the same value is an "
        "example of several schemas, valid for one and invalid for another",
    ),
)


def copies(files: Mapping[str, bytes]) -> list[list[str]]:
    """The groups of byte-identical files that no ``ALLOWED`` entry covers as a whole."""
    groups: dict[str, list[str]] = {}
    for path, content in sorted(files.items()):
        groups.setdefault(hashlib.sha256(content).hexdigest(), []).append(path)
    return [
        group
        for group in groups.values()
        if len(group) > 1
        and not any(
            all(any(fnmatchcase(path, pattern) for pattern in patterns) for path in group)
            for patterns, _ in ALLOWED
        )
    ]


def tracked_files() -> dict[str, bytes]:
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode("utf-8")
    paths = [name for name in listing.split("\0") if name]
    return {name: (ROOT / name).read_bytes() for name in paths if (ROOT / name).is_file()}


def test_no_tracked_file_is_a_copy_of_another() -> None:
    found = copies(tracked_files())
    assert not found, "byte-identical tracked files:\n" + "\n".join(map(" = ".join, found))


def test_a_copy_is_found() -> None:
    files = {"spec/a.schema.json": b"{}", "python/pkg/data/a.schema.json": b"{}", "b": b"x"}
    assert copies(files) == [["python/pkg/data/a.schema.json", "spec/a.schema.json"]]


def test_an_allowed_group_passes_only_as_a_whole() -> None:
    licence = b"Apache License"
    assert copies({"LICENSE": licence, "python/flowcast/LICENSE": licence}) == []
    # A copy outside the allowed places makes the whole group a finding.
    assert copies({"LICENSE": licence, "docs/LICENSE": licence}) == [["LICENSE", "docs/LICENSE"]]


def test_every_allowed_entry_still_matches_a_group() -> None:
    """An entry that no longer covers any duplicate is stale: remove it."""
    groups: dict[str, list[str]] = {}
    for path, content in tracked_files().items():
        groups.setdefault(hashlib.sha256(content).hexdigest(), []).append(path)
    duplicated = [group for group in groups.values() if len(group) > 1]
    for patterns, reason in ALLOWED:
        assert any(
            all(any(fnmatchcase(p, pattern) for pattern in patterns) for p in group)
            for group in duplicated
        ), reason
