"""The battery's graph on disk and the valid request of every tool.

acme (a file provider with a document) and beta (inline, with a document root), an optional
model, and the requests every check starts from (the fuzzer mutates them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capability_graph_testing.common import capability, provider

DOCUMENT_TEXT = "# Guide\n\nValidate requests. 中文。\n"


def battery_graph(directory: Path, *, model: dict[str, Any] | None = None, **extra: Any) -> Path:
    """acme (a file, with a document) and beta (inline, with a root); returns the config file."""
    (directory / "providers" / "docs").mkdir(parents=True, exist_ok=True)
    acme = provider(
        "acme",
        capability(
            "a",
            tags=["http"],
            relations=[
                {"kind": "requires", "target": "b"},
                {"kind": "related", "target": "beta::x"},
            ],
            documents=[
                {"id": "guide", "title": "Guide", "path": "docs/guide.md"},
                {"id": "web", "title": "Web", "url": "https://example.com/a"},
            ],
        ),
        capability("b", tags=["http", "schema"]),
    )
    (directory / "providers" / "acme.json").write_text(json.dumps(acme), encoding="utf-8")
    (directory / "providers" / "docs" / "guide.md").write_text(DOCUMENT_TEXT, encoding="utf-8")
    config: dict[str, Any] = {
        "providers": [
            {"path": "providers/acme.json"},
            {"definition": provider("beta", capability("x")), "documentRoot": "providers"},
        ],
        **extra,
    }
    if model is not None:
        config["model"] = model
    path = directory / "capability-graph.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


QUICK_MODEL = {
    "executor": "scripted",
    "steps": [
        {"return": {"status": "matched", "candidates": [{"id": "acme::a", "confidence": 0.5}]}}
    ],
}

VALID_REQUESTS: dict[str, dict[str, Any]] = {
    "describe_graph": {},
    "list_capabilities": {"limit": 1, "tags": ["http"], "providers": ["acme"]},
    "resolve_capabilities": {"ids": ["acme::a"], "relations": {"kinds": ["requires"], "depth": 2}},
    "match_capabilities": {
        "request": "validate the request",
        "context": {"lang": "python", "retries": 3, "beta": True},
        "limit": 3,
        "timeoutMs": 10_000,
    },
    "read_document": {"capabilityId": "acme::a", "documentId": "guide"},
}
