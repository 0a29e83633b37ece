"""Opening a graph in explicit steps: configuration -> sources -> snapshot -> executor.

1. configuration: read (a path), check against the configuration schema, resolve
   (:func:`capability_graph._config.load_config`) -- ``CG_CONFIG_INVALID``, phase ``config``;
2. sources: load and validate each provider on its own (``load_provider``) -- phase ``load``;
3. snapshot: the rules across providers (``build_snapshot``), then the scope names only loaded
   providers (:func:`check_scope`);
4. executor: the one given by the host, else the one the ``model`` section configures.

:func:`open_graph` runs the steps for ``CapabilityGraph.open`` and fails fast: the first failure
raises. It builds the executor right after the configuration, before any source is read: the
``model`` section is configuration, and its errors (phase ``config``) come before the load's.
``capability_graph.diagnose`` runs the same steps one at a time and collects every problem.
:func:`reload_sources` repeats steps 2 and 3 for a reload's candidate snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .._generated.taxonomy import ErrorCode, Phase
from .config import HostConfig, load_config
from .errors import GraphError
from .executors import Executor, build_executor
from .snapshot import Provider, Snapshot, build_snapshot, load_provider, no_gc

__all__ = [
    "LoadedGraph",
    "Reloaded",
    "check_scope",
    "configured_executor",
    "open_graph",
    "reload_sources",
]


class LoadedGraph:
    """What the steps produce: everything an open graph starts from (a plain class, like the
    records of ``config`` and ``snapshot``)."""

    __slots__ = ("config", "executor", "providers", "snapshot")

    def __init__(
        self,
        config: HostConfig,
        snapshot: Snapshot,
        providers: dict[int, Provider],
        executor: Executor | None,
    ) -> None:
        self.config = config
        self.snapshot = snapshot
        #: The provider each source serves, by source index (a reload replaces some of them).
        self.providers = providers
        self.executor = executor


def open_graph(
    config: Any, executor: Executor | None, cwd: Path, *, keep_out: bool = False
) -> LoadedGraph:
    """Run every step, failing fast (blocking: the caller runs it off the event loop).

    ``cwd`` is the folder relative paths of a configuration given as a mapping are relative to.
    ``keep_out``: the loaded objects leave the cyclic collector's generations (a graph that
    serves them holds the freeze, ``collector.hold``).
    """
    host = load_config(config, cwd=cwd)
    model_executor = configured_executor(host, executor)
    with no_gc(keep_out=keep_out):
        providers = {s.index: load_provider(s, host.budgets)[0] for s in host.sources}
        snapshot = build_snapshot(providers.values(), host.budgets, host.scope)
    check_scope(host, snapshot)
    return LoadedGraph(host, snapshot, providers, model_executor)


def configured_executor(host: HostConfig, given: Executor | None) -> Executor | None:
    """The executor the host passed, else the one its ``model`` section configures (None when
    there is none)."""
    if given is not None:
        return given
    return build_executor(host.model) if host.model is not None else None


def check_scope(host: HostConfig, snapshot: Snapshot) -> None:
    """Every provider the scope names is loaded."""
    for position, provider_id in enumerate(host.scope or ()):
        if provider_id not in snapshot.providers:
            raise GraphError(
                ErrorCode.CG_CONFIG_INVALID,
                Phase.CONFIG,
                f"/scope/providers/{position} names a provider that is not loaded",
            )


# -- reload ------------------------------------------------------------------------------------


class Reloaded:
    """A reload's outcome: its JSON result and, when every provider validated, the candidate
    to publish (``snapshot`` and ``providers`` are None when the reload failed)."""

    __slots__ = ("providers", "result", "snapshot")

    def __init__(
        self,
        result: dict[str, Any],
        snapshot: Snapshot | None,
        providers: dict[int, Provider] | None,
    ) -> None:
        self.result = result
        self.snapshot = snapshot
        self.providers = providers


def reload_sources(
    host: HostConfig, current: Mapping[int, Provider], serving: Snapshot, names: Any
) -> Reloaded:
    """Reload the sources of the providers ``names`` (None: every one) into a candidate.

    ``current`` is the provider each source serves and ``serving`` the published snapshot; a
    failed candidate reports per-provider causes and keeps them. ``names`` is trusted host input,
    but still checked: naming a provider that is not loaded is ``CG_CONFIG_INVALID``.
    """
    wanted = _wanted(current.values(), names)
    candidate: dict[int, Provider] = {}
    entries: dict[int, dict[str, Any]] = {}
    failed = False
    # The candidate leaves the collector's generations like the snapshot it may replace (a graph
    # reloading holds the freeze); a failed one is freed by reference counting.
    with no_gc(keep_out=True):
        for source in host.sources:
            old = current[source.index]
            if old.provider_id not in wanted:
                candidate[source.index] = old
                continue
            try:
                new, _ = load_provider(source, host.budgets)
            except GraphError as error:
                failed = True
                entries[source.index] = _failed_entry(old, error)
                continue
            candidate[source.index] = new
            entries[source.index] = {
                "providerId": new.provider_id,
                "ok": True,
                "revision": new.revision,
                "changed": new.revision != old.revision or new.provider_id != old.provider_id,
            }
        if not failed:
            try:
                snapshot = build_snapshot(candidate.values(), host.budgets, host.scope)
            except GraphError as error:
                failed = True
                entries = {index: _failed_entry(current[index], error) for index in entries}
    if failed:
        result = {
            "ok": False,
            "error": GraphError(ErrorCode.CG_RELOAD_FAILED).to_json(),
            "revision": serving.revision,
            "providers": list(entries.values()),
        }
        return Reloaded(result, None, None)
    result = {"ok": True, "revision": snapshot.revision, "providers": list(entries.values())}
    return Reloaded(result, snapshot, candidate)


def _wanted(serving: Iterable[Provider], names: Any) -> set[str]:
    loaded = {p.provider_id for p in serving}
    if names is None:
        return loaded
    if not isinstance(names, list) or not names:
        raise GraphError(
            ErrorCode.CG_CONFIG_INVALID, Phase.CONFIG, "/providers must be a non-empty array"
        )
    for position, name in enumerate(names):
        if not isinstance(name, str) or name not in loaded:
            raise GraphError(
                ErrorCode.CG_CONFIG_INVALID,
                Phase.CONFIG,
                f"/providers/{position} names a provider that is not loaded",
            )
    return set(names)


def _failed_entry(serving: Provider, error: GraphError) -> dict[str, Any]:
    return {
        "providerId": serving.provider_id,
        "ok": False,
        "revision": serving.revision,
        "error": error.to_json(),
    }
