"""The package carries the suite of its version: no drift from the repository."""

from __future__ import annotations

from pathlib import Path

from capability_graph_conformance.suite import Suite
from capability_graph_conformance.sync import diff


def test_package_data_matches_the_repository(repo: Path) -> None:
    drift = diff(repo)
    assert not drift, "run `cg-conformance sync` (from the repository root):\n" + drift.text()


def test_the_packaged_suite_has_the_repository_vectors(suite: Suite) -> None:
    packaged = Suite.packaged()
    assert [v.id for v in packaged.vectors] == [v.id for v in suite.vectors]
    assert packaged.reference_manifest.exists()
    assert packaged.taxonomy == suite.taxonomy


def test_sync_check_command(harness: object, repo: Path) -> None:
    status, out, _ = harness("sync", "--check", "--repo", str(repo))  # type: ignore[operator]
    assert (status, out.strip()) == (0, "the package data matches the repository")
