"""Working folders: a fixture copied to a fresh folder with the vector's configuration.

``capability-graph.json`` in the working folder is the configuration of a case: the fixture's own
file byte for byte when the vector has no ``config``, else the fixture's configuration (or ``{}``)
with the vector's JSON Merge Patch applied. ``fixture.json`` of a fixture (not copied) may ask for
symbolic links, which a wheel cannot carry. Cases that do not change their folder share one per
distinct (fixture, configuration); scenarios get a private one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._json import canonical, merge_patch
from .endpoint import Endpoint
from .suite import Suite, Vector

__all__ = ["CONFIG_NAME", "Workdir", "Workspace", "endpoint_key", "remove_file", "write_file"]

CONFIG_NAME = "capability-graph.json"
_NOT_COPIED = frozenset(("fixture.json", "README.md"))


@dataclass(frozen=True)
class Workdir:
    path: Path
    config: Any | None  # the effective configuration (None: copied verbatim or absent)

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_NAME


class Workspace:
    """Working folders under ``root`` (a fresh temporary folder of one run)."""

    def __init__(self, suite: Suite, root: Path, endpoint: Endpoint | None = None) -> None:
        self.suite = suite
        self.root = root
        self.endpoint = endpoint
        self._shared: dict[str, Workdir] = {}
        self._count = 0

    def effective_config(self, vector: Vector, surface: str = "") -> Any | None:
        """The configuration of ``vector`` as JSON, or None when the fixture's file is used as
        it is (or there is none). With an endpoint, each surface gets a base URL of its own, so
        the endpoint counts each case's requests."""
        patch = vector.data.get("config")
        if patch is None:
            return None
        base: Any = {}
        fixture_config = self.suite.fixture_dir(vector.fixture) / CONFIG_NAME
        if fixture_config.exists():
            base = json.loads(fixture_config.read_text(encoding="utf-8"))
        config = merge_patch(base, patch)
        script = vector.data.get("endpoint")
        if script is not None and self.endpoint is not None:
            base_url = self.endpoint.register(endpoint_key(vector, surface), script, config)
            config = _replace_text(config, "{endpoint}", base_url)
        return config

    def for_vector(self, vector: Vector, *, surface: str = "", private: bool = False) -> Workdir:
        return self.make(vector.fixture, self.effective_config(vector, surface), private=private)

    def make(self, fixture: str, config: Any | None, *, private: bool = False) -> Workdir:
        key = fixture + "\0" + (canonical(config) if config is not None else "")
        if not private and key in self._shared:
            return self._shared[key]
        self._count += 1
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
        path = self.root / f"{self._count:04d}-{fixture}-{digest}"
        self._copy_fixture(fixture, path)
        if config is not None:
            (path / CONFIG_NAME).write_text(
                json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        workdir = Workdir(path, config)
        if not private:
            self._shared[key] = workdir
        return workdir

    def _copy_fixture(self, fixture: str, dest: Path) -> None:
        source = self.suite.fixture_dir(fixture)
        shutil.copytree(
            source,
            dest,
            symlinks=True,
            ignore=lambda _d, names: [n for n in names if n in _NOT_COPIED],
        )
        meta = source / "fixture.json"
        if meta.exists():
            described = json.loads(meta.read_text(encoding="utf-8"))
            for link, target in described.get("symlinks", {}).items():
                where = dest / link
                where.parent.mkdir(parents=True, exist_ok=True)
                if where.is_symlink() or where.exists():
                    where.unlink()
                os.symlink(target, where)
            # A hard link names a file of the fixture (relative to the fixture's folder).
            for link, existing in described.get("hardlinks", {}).items():
                where = dest / link
                where.parent.mkdir(parents=True, exist_ok=True)
                if where.is_symlink() or where.exists():
                    where.unlink()
                os.link(dest / existing, where)


def endpoint_key(vector: Vector, surface: str) -> str:
    """The name under which the endpoint serves one surface's case of a vector."""
    return f"{vector.id}@{surface}" if surface else vector.id


def _replace_text(value: Any, text: str, replacement: str) -> Any:
    """``value`` with ``text`` replaced in every string it holds (member names too)."""
    if isinstance(value, str):
        return value.replace(text, replacement)
    if isinstance(value, list):
        return [_replace_text(item, text, replacement) for item in value]
    if isinstance(value, dict):
        return {
            _replace_text(k, text, replacement): _replace_text(v, text, replacement)
            for k, v in value.items()
        }
    return value


def write_file(workdir: Workdir, relative: str, data: bytes) -> None:
    """A harness step: write ``data`` to ``relative`` inside the working folder (atomically)."""
    target = workdir.path / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp-cg")
    temporary.write_bytes(data)
    os.replace(temporary, target)


def remove_file(workdir: Workdir, relative: str) -> None:
    (workdir.path / relative).unlink(missing_ok=True)
