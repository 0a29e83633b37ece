"""``diagnose``: check a graph's configuration the way ``open`` does, collecting every problem.

It runs the steps of ``open`` (``_loader``: configuration -> sources -> snapshot -> executor) one
at a time and records each outcome as a check of a :class:`Report` instead of stopping at the
first failure; it also reads every local document and checks the executor's prerequisites.
Every file is read once: the configuration, each provider definition (the causes ``_doctor``
names are judged from the bytes already read, or by ``stat`` when a file cannot be read).
``capability-graph doctor`` prints this report.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._core.config import HostConfig, load_config
from .._core.documents import read_document_file
from .._core.errors import GraphError
from .._core.executors import Executor
from .._core.load import check_scope, configured_executor
from .._core.operations.describe import described
from .._core.snapshot import Provider, Snapshot, build_snapshot, load_provider, read_definition_file
from .._generated.taxonomy import ErrorCode
from .causes import Unreadable, definition_facts, read_configuration, unknown_config_keys
from .report import Report, counted

__all__ = ["diagnose"]


def diagnose(config: Any) -> Report:
    """Check ``config`` as [CapabilityGraph.open][capability_graph.CapabilityGraph.open] would,
    and report every problem instead of raising the first.

    ``config`` is what ``open`` accepts: a path to a JSON file, a mapping or a
    [HostConfig][capability_graph.HostConfig]. The report's checks, in order: ``config``, one
    ``source.N`` per provider source, ``relations``, one ``documents.N`` per source (every
    local document is read; ``skip`` when the source failed to load), ``executor`` (the
    ``model`` section and what it needs: a package, a program on ``PATH``, an environment
    variable) and ``open``. A configuration file that
    cannot be read at all gives a failed report whose ``error`` is the GraphError ``open``
    raises. Nothing is left open; it blocks while it reads (run it in a thread from async code).
    """
    report = Report()
    host = _configuration(config, report)
    if host is None:
        report.status = "failed"
        return report
    # [CG-MAINT-15]: every check is listed, in one order; one that cannot run is `skip`.
    loaded = _sources(host, report)
    snapshot = None
    if len(loaded) == len(host.sources):
        snapshot = _relations(host, list(loaded.values()), report)
    else:
        report.check("relations", "skip", "Not checked: a source failed to load")
    _documents(host, loaded, report)
    _executor(host, report)
    if snapshot is not None and not report.failed():
        _opens(host, snapshot, report)
    else:  # [CG-MAINT-4]: a check that cannot run is reported as skipped
        report.check("open", "skip", "Not checked: an earlier check failed")
    report.status = "failed" if report.failed() else "ok"
    return report


def _error_text(error: GraphError) -> str:
    return f"{error.code.value}: {error.message}"


def _configuration(config: Any, report: Report) -> HostConfig | None:
    raw, base = config, Path.cwd()
    if isinstance(config, (str, os.PathLike)):
        try:
            raw, base = read_configuration(os.fspath(config))
        except Unreadable as unreadable:
            report.error = unreadable.error
            report.check("config", "fail", f"Cannot read the configuration: {unreadable.cause}")
            report.check("sources", "skip", "Not checked: the configuration cannot be read")
            return None
    try:
        host = load_config(raw, cwd=base)
    except GraphError as error:
        unknown = unknown_config_keys(raw) if isinstance(raw, Mapping) else []
        named = f"; unknown keys: {', '.join(unknown)}" if unknown else ""
        report.check("config", "fail", f"{_error_text(error)}{named}")
        report.check("sources", "skip", "Not checked: the configuration is invalid")
        return None
    report.check(
        "config", "ok", f"The configuration is valid ({counted(len(host.sources), 'source')})"
    )
    return host


def _sources(host: HostConfig, report: Report) -> dict[int, Provider]:
    """Each source loaded on its own: the providers that loaded, by source index."""
    providers: dict[int, Provider] = {}
    for source in host.sources:
        data = None
        try:
            if source.path is not None:
                data = read_definition_file(source, host.budgets)
            provider, _ = load_provider(source, host.budgets, data)
        except GraphError as error:
            facts = definition_facts(source, data, host.budgets.max_definition_bytes)
            report.check(f"source.{source.index}", "fail", f"{_error_text(error)} ({facts})")
            continue
        providers[source.index] = provider
        report.check(
            f"source.{source.index}",
            "ok",
            f"Provider {provider.provider_id} version {provider.version}: "
            f"{counted(len(provider.capabilities), 'capability', 'capabilities')}",
        )
    return providers


def _relations(host: HostConfig, providers: list[Provider], report: Report) -> Snapshot | None:
    try:
        snapshot = build_snapshot(providers, host.budgets, host.scope)
    except GraphError as error:
        report.check("relations", "fail", _error_text(error))
        return None
    edges = 0
    dangling: list[str] = []
    for capability in snapshot.capabilities.values():
        for kind, target in capability.relations:
            edges += 1
            if target not in snapshot.capabilities:
                dangling.append(f"{capability.full_id} {kind} {target}")
    report.check(
        "relations",
        "ok",
        f"{counted(len(snapshot.capabilities), 'capability', 'capabilities')} and "
        f"{counted(edges, 'relation')} are valid",
    )
    if dangling:
        shown = "; ".join(dangling[:5]) + ("; ..." if len(dangling) > 5 else "")
        report.warn(
            f"{counted(len(dangling), 'relation')} {'reaches' if len(dangling) == 1 else 'reach'} "
            "a provider that is not loaded "
            f"(queries report them as partial): {shown}"
        )
    return snapshot


def _documents(host: HostConfig, loaded: dict[int, Provider], report: Report) -> None:
    """One ``documents.N`` per source ([CG-MAINT-15]); every ``path`` document read as
    ``read_document`` reads it ([CG-MAINT-16])."""
    bodies = host.bodies
    for source in host.sources:
        check_id = f"documents.{source.index}"
        provider = loaded.get(source.index)
        if provider is None:
            report.check(check_id, "skip", "Not checked: the source failed to load")
            continue
        files = urls = 0
        failures: list[str] = []
        for capability in provider.capabilities.values():
            for document in capability.declaration.get("documents", ()):
                if "url" in document:
                    urls += 1
                    continue
                files += 1
                where = f"{capability.full_id}/{document['id']}"
                if provider.document_root is None:
                    failures.append(f"{where} {ErrorCode.CG_DOCUMENT_ROOT_REQUIRED.value}")
                    continue
                try:
                    read_document_file(
                        provider.document_root,
                        document["path"],
                        max_bytes=host.budgets.max_document_bytes,
                    )
                except GraphError as error:
                    failures.append(f"{where} {error.code.value}")
        if not files and not urls:
            report.check(check_id, "skip", f"Provider {provider.provider_id} declares no documents")
            continue
        if failures:
            shown = "; ".join(failures[:5]) + ("; ..." if len(failures) > 5 else "")
            report.check(
                check_id,
                "fail",
                f"Provider {provider.provider_id}: {len(failures)} of "
                f"{counted(files, 'local document')} cannot be read: {shown}",
            )
        else:
            report.check(
                check_id,
                "ok",
                f"Provider {provider.provider_id}: {counted(files, 'local document')} readable, "
                f"{counted(urls, 'URL reference')}",
            )
        approved = bodies == "all" or (
            not isinstance(bodies, str) and provider.provider_id in bodies
        )
        if files and not approved:
            report.warn(
                f"Document bodies of provider {provider.provider_id} are not approved "
                "(documents.bodies): read_document answers CG_ACCESS_DENIED"
            )


def _executor(host: HostConfig, report: Report) -> None:
    model = host.model
    if model is None:
        report.check(
            "executor",
            "skip",
            "No model executor is configured: match answers CG_MODEL_NOT_CONFIGURED "
            "(static queries work)",
        )
        return
    name = model.get("executor")
    try:
        executor = configured_executor(host, None)
    except GraphError as error:
        report.check("executor", "fail", _error_text(error))
        return
    except Exception:  # noqa: BLE001 -- an executor that cannot even be built
        report.check("executor", "fail", f"The {name} executor cannot be loaded")
        return
    _close(executor)
    if name == "openai":
        if importlib.util.find_spec("openai") is None:
            report.check(
                "executor",
                "fail",
                "The openai executor needs the optional openai package: "
                "pip install 'capability-graph[openai]'",
            )
            return
        variable = model.get("apiKeyEnv")
        if isinstance(variable, str) and not os.environ.get(variable):
            report.check(
                "executor", "warn", f"The environment variable {variable} (apiKeyEnv) is not set"
            )
            return
    elif name == "codex" and shutil.which("codex") is None:
        report.check("executor", "fail", "The codex executor needs the codex CLI on PATH")
        return
    report.check("executor", "ok", f"The {name} executor is configured")


def _close(executor: Executor | None) -> None:
    """Close an executor built only to check it, on a loop of its own (the caller may be
    running one); its cleanup error has nowhere safe to go."""
    closer = getattr(executor, "aclose", None)
    if closer is None:
        return

    def run() -> None:
        with contextlib.suppress(Exception):
            asyncio.run(closer())

    thread = threading.Thread(target=run, name="capability-graph-diagnose")
    thread.start()
    thread.join()


def _opens(host: HostConfig, snapshot: Snapshot, report: Report) -> None:
    """The last step of ``open``, on the snapshot already built: the scope names only loaded
    providers; then what the graph would serve."""
    try:
        check_scope(host, snapshot)
    except GraphError as error:
        report.check("open", "fail", _error_text(error))
        return
    providers = described(snapshot, host, None)["providers"]
    count = sum(p["capabilityCount"] for p in providers)
    report.check(
        "open",
        "ok",
        f"The graph opens: revision {snapshot.revision}, "
        f"{counted(len(providers), 'provider')} and "
        f"{counted(count, 'capability', 'capabilities')} in scope",
    )
