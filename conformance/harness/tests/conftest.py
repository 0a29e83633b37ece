"""Shared fixtures of the harness tests (no helper modules: the tests folder need not be on the
import path)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from capability_graph_conformance import cli
from capability_graph_conformance.schemas import SchemaSet
from capability_graph_conformance.suite import Suite

REPO = Path(__file__).resolve().parents[3]
FAKES = Path(__file__).resolve().parent / "fakes"
#: The fixture suite of the fake implementation's teeth tests: its vectors and fixtures.
FIXTURE_SUITE = Path(__file__).resolve().parent / "fixtures" / "suite"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def fakes() -> Path:
    return FAKES


@pytest.fixture(scope="session")
def suite() -> Suite:
    return Suite.from_repository(REPO)


@pytest.fixture(scope="session")
def fixture_suite_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A suite root of the fixture suite: the repository's spec (the contract the vectors are
    checked against) with the fixture suite's vectors and fixtures, not the whole suite's."""
    root = tmp_path_factory.mktemp("fixture-suite")
    shutil.copytree(REPO / "spec", root / "spec")
    shutil.copytree(FIXTURE_SUITE / "conformance", root / "conformance")
    return root


@pytest.fixture(scope="session")
def fixture_suite(fixture_suite_root: Path) -> Suite:
    return Suite.from_repository(fixture_suite_root)


@pytest.fixture(scope="session")
def schemas(suite: Suite) -> SchemaSet:
    return SchemaSet(suite)


Harness = Callable[..., tuple[int, str, str]]


@pytest.fixture
def harness(capsys: pytest.CaptureFixture[str]) -> Harness:
    """Run ``cg-conformance ARGS`` in this process; return (exit status, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            status = cli.run(list(args))
        except SystemExit as done:  # argparse usage errors
            status = int(done.code or 0)
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


Runner = Callable[..., tuple[int, dict[str, Any]]]


def _runner(harness: Harness, tmp_path: Path, root: Path) -> Runner:
    def run(*args: str) -> tuple[int, dict[str, Any]]:
        reports = tmp_path / f"report-{len(list(tmp_path.iterdir()))}"
        status, _out, _err = harness(
            "run", "--suite-root", str(root), "--no-progress", "--report-dir", str(reports), *args
        )
        return status, json.loads((reports / "report.json").read_text(encoding="utf-8"))

    return run


@pytest.fixture
def run_report(harness: Harness, tmp_path: Path) -> Runner:
    """``cg-conformance run --suite-root REPO ARGS`` -> (exit status, JSON report)."""
    return _runner(harness, tmp_path, REPO)


@pytest.fixture
def run_fake(harness: Harness, tmp_path: Path, fakes: Path, fixture_suite_root: Path) -> Runner:
    """``cg-conformance run`` of the fixture suite against the fake with one mutation:
    ``run_fake(MUTATION, ARGS...)`` -> (exit status, JSON report)."""
    runner = _runner(harness, tmp_path, fixture_suite_root)

    def run(mutation: str, *args: str) -> tuple[int, dict[str, Any]]:
        return runner("-i", str(fakes / f"{mutation}.json"), *args)

    return run


def failing(report: dict[str, Any]) -> set[tuple[str, str]]:
    """(vector, surface) of every failed or errored case."""
    return {
        (c["vector"], c["surface"])
        for c in report["cases"]
        if c["outcome"] in ("failed", "errored")
    }


@pytest.fixture
def failing_cases() -> Callable[[dict[str, Any]], set[tuple[str, str]]]:
    return failing
