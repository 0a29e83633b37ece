"""``describe``: the graph at a glance -- revision, providers in scope, scope, model, budgets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config import HostConfig
from ..snapshot import Snapshot
from .common import OperationContext, scoped_providers

__all__ = ["described", "handle"]


async def handle(context: OperationContext, request: Mapping[str, Any]) -> dict[str, Any]:
    return described(context.snapshot, context.config, context.executor_name)


def described(snapshot: Snapshot, config: HostConfig, executor: str | None) -> dict[str, Any]:
    """The describe result of ``snapshot`` (also what a graph's ``repr`` and doctor show)."""
    providers = scoped_providers(snapshot, config)
    model: dict[str, Any] = {"configured": executor is not None}
    if executor is not None:
        model["executor"] = executor
    return {
        "revision": snapshot.revision,
        "providers": [snapshot.providers[p].describe() for p in providers],
        "scope": {"providers": list(config.scope) if config.scope is not None else providers},
        "model": model,
        "budgets": config.budgets.to_json(),
    }
