"""The error taxonomy registry and what derives from it.

Source: ``spec/capability-graph/taxonomy.json`` (validated by ``taxonomy.schema.json`` and
cross-checked here). Steps:

- ``enums``: ``spec/capability-graph/schemas/enums.schema.json`` -- the ErrorCode, Phase and
  NextAction enums that every other schema references (so it runs before every step that reads
  the schemas);
- ``taxonomy``: ``capability_graph/_generated/taxonomy.py`` -- the Python enums and the registry
  entries as frozen data (errors, ``capability-graph explain``, the docs pages).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from .base import Repo, Step, generated_by, record_class

SCHEMA_ID_BASE = "https://schemas.capability-graph.dev/v1/"
HEADER = generated_by("spec/capability-graph/taxonomy.json")


class RegistryError(Exception):
    """The registry is not internally consistent."""


def load_registry(repo: Repo) -> dict[str, Any]:
    """The registry, validated by its schema and cross-checked."""
    registry: dict[str, Any] = repo.json(repo.taxonomy)
    schema = repo.json(repo.spec / "taxonomy.schema.json")
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(registry), key=lambda e: e.json_path
    )
    if errors:
        raise RegistryError("; ".join(f"{e.json_path}: {e.message}" for e in errors))
    check_consistency(registry)
    return registry


def check_consistency(registry: dict[str, Any]) -> None:
    """Cross-reference checks a JSON Schema cannot express."""
    phases = [p["id"] for p in registry["phases"]]
    actions = [a["id"] for a in registry["nextActions"]]
    codes = [c["code"] for c in registry["codes"]]
    problems: list[str] = []
    for kind, ids in (("phase", phases), ("nextAction", actions), ("code", codes)):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            problems.append(f"duplicate {kind} ids: {', '.join(dupes)}")
    for entry in registry["codes"]:
        code = entry["code"]
        problems += [f"{code}: unknown phase {p}" for p in entry["phases"] if p not in phases]
        default = entry.get("defaultAction")
        if default is not None and default not in actions:
            problems.append(f"{code}: unknown defaultAction {default}")
        for action in entry["executorActions"]:
            if action not in actions:
                problems.append(f"{code}: unknown executorAction {action}")
            if action == default:
                problems.append(f"{code}: executorAction {action} repeats the default")
        if entry["executorActions"] and default is None:
            problems.append(f"{code}: executorActions without a defaultAction")
    if problems:
        raise RegistryError("; ".join(problems))


def render_enums_schema(registry: dict[str, Any]) -> str:
    def enum(title: str, description: str, values: list[str]) -> dict[str, Any]:
        return {"title": title, "description": description, "type": "string", "enum": values}

    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID_BASE + "enums.schema.json",
        "$comment": HEADER,
        "title": "Enums",
        "description": "Error codes, phases and next actions of the Capability Graph contract.",
        "$defs": {
            "ErrorCode": enum(
                "ErrorCode",
                "A machine-readable error code; never reused or removed.",
                [c["code"] for c in registry["codes"]],
            ),
            "Phase": enum(
                "Phase",
                "Where in the lifecycle the error happened.",
                [p["id"] for p in registry["phases"]],
            ),
            "NextAction": enum(
                "NextAction",
                "What the caller should do next.",
                [a["id"] for a in registry["nextActions"]],
            ),
        },
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def _enum_class(name: str, doc: str, values: list[str]) -> list[str]:
    lines = [f"class {name}(StrEnum):", f'    """{doc}"""', ""]
    lines += [f"    {value.upper()} = {value!r}" for value in values]
    return [*lines, "", ""]


def render_python(registry: dict[str, Any]) -> str:
    codes = [c["code"] for c in registry["codes"]]
    phases = [p["id"] for p in registry["phases"]]
    actions = [a["id"] for a in registry["nextActions"]]
    out = [
        f'"""{HEADER}',
        "",
        "The error taxonomy of Capability Graph as Python data. Regenerate with",
        "``python tools/codegen.py``.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from enum import StrEnum",
        "from types import MappingProxyType",
        "from typing import Final",
        "",
        f"CONTRACT_VERSION: Final = {registry['version']!r}",
        "",
        "",
    ]
    out += _enum_class("ErrorCode", "A machine-readable error code.", codes)
    out += _enum_class("Phase", "Where in the lifecycle an error happened.", phases)
    out += _enum_class("NextAction", "What the caller should do next.", actions)
    out += record_class(
        "Prose",
        '"""Summary, trigger and handling text in one language."""',
        [("summary", "str"), ("trigger", "str"), ("handling", "str")],
    )
    out += ["", ""]
    out += record_class(
        "CodeEntry",
        '"""One registry entry."""',
        [
            ("code", "ErrorCode"),
            ("phases", "tuple[Phase, ...]"),
            ("default_action", "NextAction | None"),
            ("executor_actions", "tuple[NextAction, ...]"),
            ("messages", "MappingProxyType[str, str]"),
            ("pointer_messages", "bool"),
            ("en", "Prose"),
            ("zh", "Prose"),
            ("since", "str"),
            ("retired_in", "str | None"),
        ],
    )
    out += [
        "",
        "",
        "PHASE_TEXT: Final = MappingProxyType({",
    ]
    out += [f"    Phase.{p['id'].upper()}: ({p['en']!r}, {p['zh']!r})," for p in registry["phases"]]
    out += ["})", "", "NEXT_ACTION_TEXT: Final = MappingProxyType({"]
    out += [
        f"    NextAction.{a['id'].upper()}: ({a['en']!r}, {a['zh']!r}),"
        for a in registry["nextActions"]
    ]
    out += [
        "})",
        "",
        "REGISTRY: Final[MappingProxyType[ErrorCode, CodeEntry]] = MappingProxyType({",
    ]
    for entry in registry["codes"]:
        name = entry["code"]
        default = entry.get("defaultAction")
        retired = entry.get("retiredIn")
        out += [
            f"    ErrorCode.{name}: CodeEntry(",
            f"        code=ErrorCode.{name},",
            "        phases=(" + "".join(f"Phase.{p.upper()}, " for p in entry["phases"]) + "),",
            "        default_action="
            + (f"NextAction.{default.upper()}" if default else "None")
            + ",",
            "        executor_actions=("
            + "".join(f"NextAction.{a.upper()}, " for a in entry["executorActions"])
            + "),",
            f"        messages=MappingProxyType({dict(entry['messages'])!r}),",
            f"        pointer_messages={entry['pointerMessages']!r},",
        ]
        for lang in ("en", "zh"):
            prose = entry[lang]
            out += [
                f"        {lang}=Prose(",
                f"            summary={prose['summary']!r},",
                f"            trigger={prose['trigger']!r},",
                f"            handling={prose['handling']!r},",
                "        ),",
            ]
        out += [f"        since={entry['since']!r},", f"        retired_in={retired!r},", "    ),"]
    out += ["})", ""]
    return "\n".join(out)


def enums_files(repo: Repo) -> dict[Path, str]:
    return {repo.enums_schema: render_enums_schema(load_registry(repo))}


def taxonomy_files(repo: Repo) -> dict[Path, str]:
    return {
        repo.generated / "taxonomy.py": render_python(load_registry(repo)),
        repo.generated / "__init__.py": f'"""{generated_by("spec/")}"""\n',
    }


ENUMS = Step("enums", enums_files)
TAXONOMY = Step("taxonomy", taxonomy_files)
