"""The reload storm's graph: two file providers rewritten at numbered versions.

Valid versions carry ``<provider>@v<version>`` in every description, invalid candidates are each
kind a reload must refuse (syntax, unknown key, bad relation, cycle across providers, duplicate
provider, too large, missing file); :func:`check_snapshot_result` checks that a result shows one
published snapshot (the one its revision names), never a mix.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from capability_graph_testing.common import capability, provider


def versioned(provider_id: str, version: int) -> dict[str, Any]:
    """Provider ``provider_id`` at ``version``: 2 + version % 3 capabilities, every description
    carrying the marker ``<provider>@v<version>``."""
    mark = f"{provider_id}@v{version}"
    count = 2 + version % 3
    capabilities = [
        capability(
            "base",
            description=f"{mark} base",
            tags=["t"],
            relations=[{"kind": "requires", "target": "c1"}],
            documents=[{"id": "guide", "title": "Guide", "path": "guide.md"}],
        ),
        *(capability(f"c{i}", description=f"{mark} c{i}", tags=["t"]) for i in range(1, count)),
    ]
    return {**provider(provider_id, *capabilities), "version": str(version)}


INVALID_KINDS = (
    "syntax",
    "unknown-key",
    "relation-invalid",
    "cross-cycle",
    "duplicate-provider",
    "too-large",
    "missing-file",
)


class StormGraph:
    """Two file providers (acme, beta) whose versions the storm rewrites; knows which graph
    revision stands for which pair of versions."""

    PROVIDERS = ("acme", "beta")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "guide.md").write_text("guide\n", encoding="utf-8")
        self.on_disk = {p: 0 for p in self.PROVIDERS}
        self.serving = {p: 0 for p in self.PROVIDERS}
        for p in self.PROVIDERS:
            self.write(p, versioned(p, 0))
        self.config = directory / "capability-graph.json"
        self.config.write_text(
            json.dumps(
                {
                    "providers": [{"path": f"{p}.json"} for p in self.PROVIDERS],
                    "budgets": {"maxDefinitionBytes": 65_536},
                }
            ),
            encoding="utf-8",
        )
        #: graph revision -> {provider: version}
        self.published: dict[str, dict[str, int]] = {}

    def write(self, provider_id: str, value: Any) -> None:
        data = value if isinstance(value, bytes) else json.dumps(value).encode()
        temporary = self.directory / f".{provider_id}.tmp"
        temporary.write_bytes(data)
        os.replace(temporary, self.directory / f"{provider_id}.json")

    def prepare_valid(self, names: Sequence[str], version: int) -> None:
        for name in names:
            self.write(name, versioned(name, version))
            self.on_disk[name] = version

    def publish(self, names: Sequence[str], version: int, revision: str) -> None:
        """A valid reload of ``names`` at ``version`` answered ``revision``: they serve
        ``version`` now, and ``revision`` stands for what is served (the first time it is seen)."""
        for name in names:
            self.serving[name] = version
        self.published.setdefault(revision, dict(self.serving))

    def prepare_invalid(self, names: Sequence[str], kind: str, version: int) -> None:
        first = names[0]
        if kind == "syntax":
            self.write(first, b'{"providerId": "' + first.encode() + b'", "name": ')
        elif kind == "unknown-key":
            self.write(first, {**versioned(first, version), "unknown": 1})
        elif kind == "relation-invalid":
            broken = versioned(first, version)
            broken["capabilities"][0]["relations"] = [{"kind": "requires", "target": "nope"}]
            self.write(first, broken)
        elif kind == "cross-cycle":
            for name in self.PROVIDERS:
                other = "beta" if name == "acme" else "acme"
                cyclic = versioned(name, version)
                cyclic["capabilities"][0]["relations"] = [
                    {"kind": "requires", "target": f"{other}::base"}
                ]
                self.write(name, cyclic)
        elif kind == "duplicate-provider":
            other = "beta" if first == "acme" else "acme"
            self.write(first, {**versioned(other, version)})
        elif kind == "too-large":
            padded = versioned(first, version)
            padded["description"] = "x" * 4000
            padded["capabilities"] = padded["capabilities"] + [
                capability(f"pad{i}", description="p" * 4000) for i in range(20)
            ]
            self.write(first, padded)
        else:  # missing-file
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.directory / f"{first}.json")
        for name in self.PROVIDERS:
            self.on_disk[name] = -1  # unknown until the next valid write


def _versions_of(text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for word in text.split():
        if "@v" in word:
            name, _, number = word.partition("@v")
            found[name] = int(number)
    return found


def check_snapshot_result(
    tool: str, result: Mapping[str, Any], published: Mapping[str, Mapping[str, int]]
) -> list[str]:
    """Problems with ``result`` as a view of the one snapshot its revision names."""
    if tool == "read_document":
        return [] if result.get("text") == "guide\n" else ["read_document: wrong text"]
    revision = result.get("revision")
    if not isinstance(revision, str) or revision not in published:
        return [f"{tool}: revision {revision} was never published"]
    versions = published[revision]
    problems: list[str] = []

    def agree(text: str, where: str) -> None:
        for name, version in _versions_of(text).items():
            if versions.get(name) != version:
                problems.append(f"{tool}: {where} shows {name}@v{version}, snapshot has {versions}")

    if tool == "describe_graph":
        for entry in result["providers"]:
            name = entry["providerId"]
            if entry["version"] != str(versions[name]):
                problems.append(f"describe: {name} version {entry['version']} != {versions}")
            if entry["capabilityCount"] != 2 + versions[name] % 3:
                problems.append(f"describe: {name} count {entry['capabilityCount']} != {versions}")
    elif tool == "list_capabilities":
        for item in result["items"]:
            agree(item["description"], item["id"])
    elif tool == "resolve_capabilities":
        for detail in result["capabilities"]:
            agree(detail["description"], detail["id"])
    elif tool == "match_capabilities":
        for candidate in result["candidates"]:
            agree(candidate.get("reason", ""), candidate["id"])
    return problems
