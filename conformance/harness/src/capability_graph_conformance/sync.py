"""``cg-conformance sync``: copy the suite from the repository into the package data.

The harness carries the spec schemas, the registry, the vectors, the fixtures and the reference
implementation's manifest and driver of its own version (``data/``, laid out like the
repository), so that one ``pip install`` pins the whole suite. ``sync --check`` (run by the
tests) fails when the copy has drifted from the repository: a changed, missing or extra file.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SOURCES", "Drift", "data_dir", "diff", "sync"]

#: What the package carries: (folder relative to the repository root, glob).
SOURCES: tuple[tuple[str, str], ...] = (
    ("spec/conformance", "*.schema.json"),
    ("spec/capability-graph", "taxonomy.json"),
    ("spec/capability-graph", "tools.json"),
    ("spec/capability-graph", "operations.json"),
    ("spec/capability-graph/spec", "*.md"),
    ("spec/capability-graph/schemas", "*.schema.json"),
    ("conformance/vectors/capability-graph", "**/*.json"),
    ("conformance/fixtures", "**/*"),
    ("conformance/implementations", "*.json"),
    ("conformance/implementations", "*.py"),
)


def data_dir(repo: Path) -> Path:
    return repo / "conformance" / "harness" / "src" / "capability_graph_conformance" / "data"


def _source_files(repo: Path) -> Iterator[str]:
    for folder, pattern in SOURCES:
        base = repo / folder
        for path in sorted(base.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                yield path.relative_to(repo).as_posix()


def _data_files(target: Path) -> Iterator[str]:
    if target.is_dir():
        for path in sorted(target.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                yield path.relative_to(target).as_posix()


@dataclass
class Drift:
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.changed or self.missing or self.extra)

    def text(self) -> str:
        lines = []
        for title, names in (
            ("changed", self.changed),
            ("missing", self.missing),
            ("extra", self.extra),
        ):
            lines += [f"{title}: {name}" for name in names]
        return "\n".join(lines)


def diff(repo: Path) -> Drift:
    target = data_dir(repo)
    wanted = set(_source_files(repo))
    present = set(_data_files(target))
    drift = Drift(missing=sorted(wanted - present), extra=sorted(present - wanted))
    for name in sorted(wanted & present):
        if (repo / name).read_bytes() != (target / name).read_bytes():
            drift.changed.append(name)
    return drift


def sync(repo: Path) -> Drift:
    """Make the package data equal to the repository's sources; return what was changed."""
    drift = diff(repo)
    target = data_dir(repo)
    for name in drift.changed + drift.missing:
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo / name, destination)
    for name in drift.extra:
        (target / name).unlink()
    for folder in sorted((p for p in target.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return drift
