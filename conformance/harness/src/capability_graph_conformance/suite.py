"""The suite: vectors, fixtures, schemas and the registry, read from one folder tree.

A suite root is laid out like the repository::

    spec/capability-graph/taxonomy.json, tools.json, schemas/*.schema.json
    spec/capability-graph/spec/*.md                (the specification: requirement ids)
    spec/conformance/*.schema.json
    conformance/vectors/capability-graph/<area>/<name>.json
    conformance/fixtures/<name>/...
    conformance/implementations/<manifest>.json

A built package carries such a tree in ``data/`` (copied from the repository when the package
is built, never committed twice; see the harness's ``hatch_build.py``), so an installed harness
runs the suite of its own version; an editable install runs from the checkout and reads the
repository itself. ``--suite-root`` points at another repository checkout. flowcast's vectors
(``conformance/vectors/flowcast``) test a library API, not the four surfaces: flowcast's own test
runner runs them, and this suite ignores them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final, Literal

__all__ = [
    "PACKAGE_DATA",
    "SURFACES",
    "Suite",
    "SuiteError",
    "Vector",
    "find_repository_root",
]

PACKAGE_DATA: Final = Path(__file__).resolve().parent / "data"
#: The repository an editable install runs from (src/capability_graph_conformance -> root).
_CHECKOUT: Final = Path(__file__).resolve().parents[4]
SURFACES: Final = ("sdk", "tool", "mcp", "cli")
Surface = Literal["sdk", "tool", "mcp", "cli"]
ActionKind = Literal["call", "open", "argv", "steps"]


class SuiteError(Exception):
    """The suite itself is broken (a vector that is not JSON, a missing folder)."""


@dataclass(frozen=True)
class Vector:
    """One vector file, as loaded (``data`` is the JSON object)."""

    path: Path
    area: str
    data: dict[str, Any] = field(repr=False)

    @property
    def id(self) -> str:
        return str(self.data.get("id", f"<{self.path.name}>"))

    @property
    def title(self) -> str:
        return str(self.data.get("title", ""))

    @property
    def level(self) -> Literal["required", "optional"]:
        return "optional" if self.data.get("level") == "optional" else "required"

    @property
    def surfaces(self) -> tuple[str, ...]:
        return tuple(self.data.get("surfaces", ()))

    @property
    def fixture(self) -> str:
        return str(self.data.get("fixture", ""))

    @property
    def kind(self) -> ActionKind:
        for kind in ("call", "open", "argv", "steps"):
            if kind in self.data:
                return kind
        return "call"

    @property
    def expect(self) -> dict[str, Any]:
        value = self.data.get("expect", {})
        return value if isinstance(value, dict) else {}

    @property
    def forbid(self) -> tuple[str, ...]:
        return tuple(self.data.get("forbid", ()))

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(self.data.get("tags", ()))

    def expect_for(self, surface: str) -> dict[str, Any]:
        """The expectation on ``surface`` (``surfaceExpect`` replaces ``expect`` there)."""
        override = self.data.get("surfaceExpect", {}).get(surface)
        return override if isinstance(override, dict) else self.expect


class Suite:
    """A suite root (see the module docstring)."""

    def __init__(self, root: Path, source: str) -> None:
        self.root = root
        self.source = source  # "package" or the repository root it was read from

    @classmethod
    def packaged(cls) -> Suite:
        """The suite of this harness's version: its package data, or the checkout it runs from
        when it is installed editable."""
        if (PACKAGE_DATA / "spec").is_dir():
            return cls(PACKAGE_DATA, "package")
        if (_CHECKOUT / "spec" / "conformance").is_dir():
            return cls(_CHECKOUT, "package")
        raise SuiteError(f"the package data is missing ({PACKAGE_DATA}); reinstall the harness")

    @classmethod
    def from_repository(cls, root: Path) -> Suite:
        root = root.resolve()
        if not (root / "spec" / "conformance").is_dir():
            raise SuiteError(f"{root} is not a Capability Graph repository (no spec/conformance)")
        return cls(root, str(root))

    # -- locations ------------------------------------------------------------------------------

    @property
    def spec_dir(self) -> Path:
        return self.root / "spec"

    @property
    def requirements_dir(self) -> Path:
        """The normative specification, whose requirements the vectors name."""
        return self.spec_dir / "capability-graph" / "spec"

    @property
    def vectors_dir(self) -> Path:
        return self.root / "conformance" / "vectors" / "capability-graph"

    @property
    def fixtures_dir(self) -> Path:
        return self.root / "conformance" / "fixtures"

    @property
    def implementations_dir(self) -> Path:
        return self.root / "conformance" / "implementations"

    @property
    def reference_manifest(self) -> Path:
        return self.implementations_dir / "python-reference.json"

    # -- contents -------------------------------------------------------------------------------

    @cached_property
    def taxonomy(self) -> dict[str, Any]:
        return _load(self.spec_dir / "capability-graph" / "taxonomy.json")

    @cached_property
    def tools(self) -> dict[str, Any]:
        return _load(self.spec_dir / "capability-graph" / "tools.json")

    @cached_property
    def operations(self) -> dict[str, Any]:
        return _load(self.spec_dir / "capability-graph" / "operations.json")

    @cached_property
    def cli_tools(self) -> dict[str, str]:
        """The tool each CLI graph command calls, by command (from the operation table)."""
        return {op["cli"]["command"]: op["tool"] for op in self.operations.get("operations", ())}

    @property
    def contract(self) -> str:
        return str(self.taxonomy.get("contract", "capability-graph"))

    @property
    def contract_version(self) -> str:
        return str(self.taxonomy.get("version", "?"))

    @cached_property
    def codes(self) -> dict[str, dict[str, Any]]:
        """The registry's codes by name."""
        return {entry["code"]: entry for entry in self.taxonomy.get("codes", ())}

    def vector_files(self) -> Iterator[tuple[str, Path]]:
        """(area, path) of every vector file, sorted."""
        if not self.vectors_dir.is_dir():
            raise SuiteError(f"no vectors folder at {self.vectors_dir}")
        for area_dir in sorted(p for p in self.vectors_dir.iterdir() if p.is_dir()):
            for path in sorted(area_dir.glob("*.json")):
                yield area_dir.name, path

    @cached_property
    def vectors(self) -> list[Vector]:
        """Every vector, sorted by id. Raises SuiteError when a file is not a JSON object."""
        vectors = []
        for area, path in self.vector_files():
            data = _load(path)
            vectors.append(Vector(path, area, data))
        return sorted(vectors, key=lambda v: v.id)

    def fixture_dir(self, name: str) -> Path:
        return self.fixtures_dir / name


def _load(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SuiteError(f"{path}: {error}") from None
    if not isinstance(value, dict):
        raise SuiteError(f"{path}: not a JSON object")
    return value


def find_repository_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds spec/conformance and conformance/."""
    for folder in (start.resolve(), *start.resolve().parents):
        if (folder / "spec" / "conformance").is_dir() and (folder / "conformance").is_dir():
            return folder
    return None
