"""``capability-graph explain``: every error code, in text and JSON, any case."""

from __future__ import annotations

import pytest

from capability_graph import ErrorCode
from capability_graph._generated.taxonomy import REGISTRY
from capability_graph._maintenance.explain import explain_json, explain_text
from capability_graph_testing.surfaces import (
    cli,
)


@pytest.mark.parametrize("code", list(ErrorCode))
def test_explain_every_code_in_both_languages(code: ErrorCode) -> None:
    entry = REGISTRY[code]
    run = cli("explain", code.value)
    assert (run.status, run.stderr) == (0, "")
    for text in (
        entry.en.summary,
        entry.en.trigger,
        entry.en.handling,
        entry.zh.summary,
        entry.zh.trigger,
        entry.zh.handling,
    ):
        assert text in run.stdout
    # Byte for byte the generated content of the error reference page (docs/errors/CODE.md).
    assert run.stdout == explain_text(code)
    data = cli("explain", code.value.lower(), "--json").json()
    assert data == explain_json(code)
    assert data["code"] == code.value
    assert data["phases"] == list(entry.phases)
    assert data["defaultAction"] == entry.default_action
    assert data["executorActions"] == list(entry.executor_actions)
    assert data["messages"] == dict(entry.messages)
    assert data["zh"]["handling"] == entry.zh.handling


def test_explain_without_a_code_lists_every_code() -> None:
    run = cli("explain")
    assert [line.split()[0] for line in run.stdout.splitlines()] == [c.value for c in ErrorCode]
    assert [e["code"] for e in cli("explain", "--json").json()] == [c.value for c in ErrorCode]


def test_explain_ignores_case() -> None:
    run = cli("explain", "cg_config_invalid", "--json")
    assert run.status == 0
    assert run.json()["code"] == "CG_CONFIG_INVALID"


def test_explain_text_ends_with_the_full_url_of_the_code_page() -> None:
    run = cli("explain", "CG_GRAPH_CLOSED")
    assert run.stdout.endswith("\n  docs: https://capability-graph.dev/errors/CG_GRAPH_CLOSED/\n")


@pytest.mark.parametrize(
    ("given", "site"),
    [
        ("http://localhost:8000", "http://localhost:8000/"),
        ("https://mirror.example/cg/", "https://mirror.example/cg/"),
        ("ftp://mirror.example/", "https://capability-graph.dev/"),
        ("https://mirror example/", "https://capability-graph.dev/"),
        ("", "https://capability-graph.dev/"),
    ],
)
def test_capability_graph_docs_url_replaces_the_site_when_it_is_an_http_url(
    monkeypatch: pytest.MonkeyPatch, given: str, site: str
) -> None:
    monkeypatch.setenv("CAPABILITY_GRAPH_DOCS_URL", given)
    run = cli("explain", "CG_GRAPH_CLOSED")
    assert run.stdout.endswith(f"\n  docs: {site}errors/CG_GRAPH_CLOSED/\n")
