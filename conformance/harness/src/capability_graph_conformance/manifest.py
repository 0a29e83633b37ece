"""Implementation manifests (``spec/conformance/manifest.schema.json``).

A manifest names an implementation and the commands that reach its surfaces. Placeholders:
``{here}`` (the manifest's folder), ``{python}`` (the interpreter running the harness) and, in the
MCP command, ``{config}`` (the configuration file of a case). A first item without ``/`` is looked
up on PATH, the harness interpreter's scripts folder first (a virtual environment need not be
activated).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .schemas import InvalidDocument, SchemaSet

__all__ = ["Command", "Manifest", "ManifestError"]


class ManifestError(Exception):
    """The manifest cannot be used (unreadable, not valid against its schema)."""


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    cwd: str | None = None


@dataclass(frozen=True)
class Manifest:
    path: Path
    name: str
    language: str
    version: str
    driver: Command | None
    cli: Command | None
    mcp: Command | None
    env: dict[str, str] = field(default_factory=dict)
    expected_failures: Path | None = None

    @classmethod
    def load(cls, path: Path, schemas: SchemaSet) -> Manifest:
        path = path.resolve()
        try:
            data = schemas.load(path, "conformance/manifest.schema.json")
        except InvalidDocument as error:
            raise ManifestError(str(error)) from None

        def command(key: str) -> Command | None:
            value: Any = data.get(key)
            if value is None:
                return None
            return Command(tuple(value["argv"]), value.get("cwd"))

        failures = data.get("expectedFailures")
        return cls(
            path=path,
            name=data["name"],
            language=data["language"],
            version=data["version"],
            driver=command("driver"),
            cli=command("cli"),
            mcp=command("mcp"),
            env=dict(data.get("env", {})),
            expected_failures=(path.parent / failures).resolve() if failures else None,
        )

    def expand(self, command: Command, *, config: str | None = None) -> list[str]:
        """The argument vector of ``command`` with placeholders replaced and argv[0] resolved."""
        argv = [self._fill(item, config) for item in command.argv]
        if "/" not in argv[0]:
            scripts = str(Path(sys.executable).parent)
            found = shutil.which(argv[0], path=scripts + os.pathsep + os.environ.get("PATH", ""))
            if found is not None:
                argv[0] = found
        return argv

    def cwd(self, command: Command) -> str | None:
        return self._fill(command.cwd, None) if command.cwd else None

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of every command: the harness's, without CAPABILITY_GRAPH_CONFIG (a
        user's setting must not change what a vector means), plus the manifest's and ``extra``."""
        env = {k: v for k, v in os.environ.items() if k != "CAPABILITY_GRAPH_CONFIG"}
        env.update(self.env)
        env.update(extra or {})
        return env

    def _fill(self, item: str, config: str | None) -> str:
        item = item.replace("{here}", str(self.path.parent)).replace("{python}", sys.executable)
        if config is not None:
            item = item.replace("{config}", config)
        return item
