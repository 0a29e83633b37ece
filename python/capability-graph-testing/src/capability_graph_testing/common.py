"""Small helpers shared by the capability_graph tests: graph inputs, the spec's schemas, errors."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[4]
SPEC = REPO / "spec" / "capability-graph"
SCHEMAS = SPEC / "schemas"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@functools.cache
def schema_validator(name: str) -> Any:
    """A Draft 2020-12 validator for ``schemas/<name>`` that resolves every sibling ``$ref``."""
    import jsonschema
    from referencing import Registry, Resource

    resources = [load_json(p) for p in sorted(SCHEMAS.glob("*.schema.json"))]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in resources)
    return jsonschema.Draft202012Validator(load_json(SCHEMAS / name), registry=registry)


def capability(local_id: str, **extra: Any) -> dict[str, Any]:
    """A minimal valid capability declaration."""
    return {"id": local_id, "name": local_id.title(), "description": f"Does {local_id}.", **extra}


def provider(provider_id: str, *capabilities: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A minimal valid provider definition."""
    return {
        "providerId": provider_id,
        "name": provider_id.title(),
        "version": "1",
        "capabilities": list(capabilities),
        **extra,
    }


def inline(*definitions: dict[str, Any], **config: Any) -> dict[str, Any]:
    """A host configuration with inline sources."""
    return {"providers": [{"definition": d} for d in definitions], **config}


def error_of(excinfo: Any) -> dict[str, str]:
    """The error object of a raised GraphError (pytest ExceptionInfo)."""
    result: dict[str, str] = excinfo.value.to_json()
    return result


def expected(code: str, phase: str, message: str | None = None) -> dict[str, str]:
    """The exact error object the contract prescribes for ``code`` in ``phase``."""
    from capability_graph import ErrorCode
    from capability_graph._testing import REGISTRY

    entry = REGISTRY[ErrorCode(code)]
    error = {"code": code, "phase": phase, "message": message or entry.messages["default"]}
    if entry.default_action is not None:
        error["nextAction"] = entry.default_action.value
    return error


def read_whole(value: Any) -> Any:
    """Every attribute of a generated view (``ResolveResult`` and what it holds), read as a user
    reads it, back in its JSON form: what the views give, compared with what they wrap."""
    from pydantic import MISSING

    from capability_graph._testing import ContractView

    if isinstance(value, list):
        return [read_whole(item) for item in value]
    if not isinstance(value, ContractView):
        return value
    names, keys = type(value)._members
    read = {key: read_whole(getattr(value, name)) for name, key in zip(names, keys, strict=True)}
    return {key: member for key, member in read.items() if member is not MISSING}
