"""Build hook: put the repository files this package reads at run time into the package.

The repository keeps the spec and the conformance vectors once; a package that needs some of
them gets them when it is built, never from a committed copy. ``[tool.hatch.build.hooks.custom]``
in ``pyproject.toml`` says which files (``files``: ``[folder, glob]`` pairs relative to the
repository root ``repository``), which folder they are taken relative to (``base``) and where
they go in the package (``target``, laid out like ``base``).

- Building from the checkout (``pip install .``, ``python -m build``): the files are added to the
  wheel under ``target`` and to the sdist under ``src/<target>``.
- Building a wheel from that sdist: the repository is not there, the files already are (under
  ``src/<target>``), and the wheel picks them up with the package.
- An editable install adds nothing: the package runs from the checkout and reads the repository
  files where they are.

A build that finds the files in neither place fails: a package without its data never ships.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class RepositoryFilesHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "editable":
            return
        project = Path(self.root)
        repository = (project / self.config["repository"]).resolve()
        base = repository / self.config.get("base", "")
        target = self.config["target"]
        files = [
            path
            for folder, pattern in self.config["files"]
            for path in sorted((repository / folder).glob(pattern))
            if path.is_file() and "__pycache__" not in path.parts
        ]
        if files:
            prefix = "src/" if self.target_name == "sdist" else ""
            for path in files:
                destination = f"{prefix}{target}/{path.relative_to(base).as_posix()}"
                build_data["force_include"][str(path)] = destination
        elif not (project / "src" / target).is_dir():
            raise RuntimeError(
                f"neither the repository ({repository}) nor the sdist (src/{target}) holds the "
                "files this package ships; build from a checkout or from its sdist"
            )
