"""``capability-graph doctor``: check everything ``open`` checks, plus documents and the
executor's prerequisites, and report each check (``--json``: the report as JSON).

A configuration that cannot be read at all is an error envelope on stderr (exit 1), and the
report on stdout names the cause.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any, TextIO

from .._errors import GraphError
from .._generated.taxonomy import ErrorCode
from .._report import Report
from ._arguments import AddCommand, add_flags
from ._base import EXIT_FAILED, config_path, write_error, write_report
from ._base import count as _count
from ._base import error_text as _error_text


def add_command(command: AddCommand) -> None:
    p = command(
        "doctor",
        "Check the configuration, sources, relations, documents, executor.",
        "doctor",
        "doctor --config graph.json --json",
    )
    add_flags(p, json_flag=True, dry_run_flag=False)
    p.set_defaults(run=run_doctor)


def run_doctor(
    args: argparse.Namespace, stdin: TextIO | None, stdout: TextIO, stderr: TextIO
) -> int:
    try:
        report = _doctor(config_path(args))
    except GraphError as error:
        # The envelope stays exactly as it is; the report on stdout names the cause.
        write_error(stderr, error)
        write_report("doctor", _doctor_unreadable(config_path(args)), stdout, as_json=args.json)
        return EXIT_FAILED
    return write_report("doctor", report, stdout, as_json=args.json)


def _doctor(config: str) -> Report:
    """Check everything ``open`` checks, plus documents and the executor's prerequisites.

    A configuration file that cannot be read at all raises its GraphError (an error envelope,
    not a report).
    """
    from .._config import _config_from_file, load_config

    raw, base = _config_from_file(Path(config))
    report = Report()
    try:
        host = load_config(raw, cwd=base)
    except GraphError as error:
        from .._doctor import unknown_config_keys

        unknown = unknown_config_keys(raw)
        named = f"; unknown keys: {', '.join(unknown)}" if unknown else ""
        report.check("config", "fail", f"{_error_text(error)}{named}")
        report.check("sources", "skip", "Not checked: the configuration is invalid")
        report.status = "failed"
        return report
    report.check(
        "config", "ok", f"The configuration is valid ({_count(len(host.sources), 'source')})"
    )
    providers = _doctor_sources(host, report)
    if providers is not None:
        _doctor_relations(host, providers, report)
        _doctor_documents(host, providers, report)
    _doctor_executor(host, report)
    if not report.failed():
        _doctor_open(config, report)
    report.status = "failed" if report.failed() else "ok"
    return report


def _doctor_unreadable(config: str) -> Report:
    """doctor's report when the configuration cannot be read at all: the cause, by name."""
    from .._doctor import config_cause

    report = Report(status="failed")
    cause = config_cause(config) or f"{os.path.abspath(config)} cannot be read"
    report.check("config", "fail", f"Cannot read the configuration: {cause}")
    report.check("sources", "skip", "Not checked: the configuration cannot be read")
    return report


def _doctor_sources(host: Any, report: Report) -> list[Any] | None:
    from .._snapshot import load_provider

    providers = []
    for source in host.sources:
        try:
            provider, _ = load_provider(source, host.budgets)
        except GraphError as error:
            from .._doctor import definition_facts

            facts = definition_facts(source, host.budgets.max_definition_bytes)
            report.check(f"source.{source.index}", "fail", f"{_error_text(error)} ({facts})")
            continue
        providers.append(provider)
        report.check(
            f"source.{source.index}",
            "ok",
            f"Provider {provider.provider_id} version {provider.version}: "
            f"{_count(len(provider.capabilities), 'capability', 'capabilities')}",
        )
    if len(providers) != len(host.sources):
        report.check("relations", "skip", "Not checked: a source failed to load")
        return None
    return providers


def _doctor_relations(host: Any, providers: list[Any], report: Report) -> None:
    from .._snapshot import build_snapshot

    try:
        snapshot = build_snapshot(providers, host.budgets, host.scope)
    except GraphError as error:
        report.check("relations", "fail", _error_text(error))
        return
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
        f"{_count(len(snapshot.capabilities), 'capability', 'capabilities')} and "
        f"{_count(edges, 'relation')} are valid",
    )
    if dangling:
        shown = "; ".join(dangling[:5]) + ("; ..." if len(dangling) > 5 else "")
        report.warn(
            f"{_count(len(dangling), 'relation')} {'reaches' if len(dangling) == 1 else 'reach'} "
            "a provider that is not loaded "
            f"(queries report them as partial): {shown}"
        )


def _doctor_documents(host: Any, providers: list[Any], report: Report) -> None:
    from .._documents import read_document_file

    bodies = host.bodies
    for provider in providers:
        check_id = f"documents.{provider.source_index}"
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
                f"{_count(files, 'local document')} cannot be read: {shown}",
            )
        else:
            report.check(
                check_id,
                "ok",
                f"Provider {provider.provider_id}: {_count(files, 'local document')} readable, "
                f"{_count(urls, 'URL reference')}",
            )
        approved = bodies == "all" or (
            not isinstance(bodies, str) and provider.provider_id in bodies
        )
        if files and not approved:
            report.warn(
                f"Document bodies of provider {provider.provider_id} are not approved "
                "(documents.bodies): read_document answers CG_ACCESS_DENIED"
            )


def _doctor_executor(host: Any, report: Report) -> None:
    import importlib.util
    import shutil

    from .._executors import build_executor

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
        executor = build_executor(model)
    except GraphError as error:
        report.check("executor", "fail", _error_text(error))
        return
    except Exception:  # noqa: BLE001 -- an executor that cannot even be built
        report.check("executor", "fail", f"The {name} executor cannot be loaded")
        return
    closer = getattr(executor, "aclose", None)
    if closer is not None:
        asyncio.run(closer())
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


def _doctor_open(config: str, report: Report) -> None:
    from .._graph import BlockingCapabilityGraph

    try:
        graph = BlockingCapabilityGraph.open(config)
    except GraphError as error:
        report.check("open", "fail", _error_text(error))
        return
    with graph:
        described = graph.describe()
    count = sum(p["capabilityCount"] for p in described.providers)
    report.check(
        "open",
        "ok",
        f"The graph opens: revision {described.revision}, "
        f"{_count(len(described.providers), 'provider')} and "
        f"{_count(count, 'capability', 'capabilities')} in scope",
    )
