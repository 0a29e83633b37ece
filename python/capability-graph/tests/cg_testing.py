"""Small helpers shared by the capability_graph tests (importable: tests/ is on pythonpath)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
SPEC = REPO / "spec" / "capability-graph"
SCHEMAS = SPEC / "schemas"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def schema_validator(name: str) -> Any:
    """A Draft 2020-12 validator for ``schemas/<name>`` that resolves every sibling ``$ref``."""
    import jsonschema
    from referencing import Registry, Resource

    resources = [load_json(p) for p in sorted(SCHEMAS.glob("*.schema.json"))]
    registry = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in resources
    )
    return jsonschema.Draft202012Validator(load_json(SCHEMAS / name), registry=registry)
