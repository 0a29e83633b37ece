"""``capability_graph.diagnose``: the steps of ``open``, every problem collected in one report."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, Check, GraphError, Report, diagnose
from capability_graph_testing.common import capability, inline, provider

GOOD = provider("acme", capability("a"))
CYCLE = provider(
    "acme",
    capability("a", relations=[{"kind": "requires", "target": "b"}]),
    capability("b", relations=[{"kind": "requires", "target": "a"}]),
)


def failed(report: Report) -> list[tuple[str, str]]:
    return [(c.id, c.message) for c in report.checks if c.status == "fail"]


def test_a_missing_source_and_a_bad_inline_source_are_both_reported(tmp_path: Path) -> None:
    config = {
        "providers": [{"path": str(tmp_path / "missing.json")}, {"definition": {"name": 3}}],
    }
    report = diagnose(config)
    assert report.status == "failed"
    assert [check_id for check_id, _ in failed(report)] == ["source.0", "source.1"]


def listed(report: Report) -> list[tuple[str, str]]:
    return [(c.id, c.status) for c in report.checks]


def test_every_check_is_listed_in_one_order_after_a_source_fails(tmp_path: Path) -> None:
    # [CG-MAINT-15]: 2N + 4 checks; documents.0 is skip because source 0 did not load.
    notes = provider(
        "notes", capability("a", documents=[{"id": "d", "title": "D", "path": "d.md"}])
    )
    report = diagnose(
        {"providers": [{"path": str(tmp_path / "missing.json")}, {"definition": notes}]}
    )
    assert listed(report) == [
        ("config", "ok"),
        ("source.0", "fail"),
        ("source.1", "ok"),
        ("relations", "skip"),
        ("documents.0", "skip"),
        ("documents.1", "fail"),
        ("executor", "skip"),
        ("open", "skip"),
    ]
    # [CG-MAINT-16]: an inline source without documentRoot cannot serve a path document.
    assert "notes::a/d CG_DOCUMENT_ROOT_REQUIRED" in report.checks[5].message


def test_an_invalid_configuration_lists_only_config_and_sources() -> None:
    assert listed(diagnose({"providers": 3})) == [("config", "fail"), ("sources", "skip")]


BROKEN = {
    "config shape": {"providers": 3},
    "definition": inline({"providerId": "acme"}),
    "duplicate provider": inline(GOOD, GOOD),
    "relation cycle": inline(CYCLE),
    "scope names an unloaded provider": inline(GOOD, scope={"providers": ["acme", "zz"]}),
}


@pytest.mark.parametrize("config", BROKEN.values(), ids=BROKEN.keys())
def test_the_first_failed_check_is_the_error_open_raises(config: dict[str, Any]) -> None:
    with pytest.raises(GraphError) as raised:
        BlockingCapabilityGraph.open(config).close()
    _, message = failed(diagnose(config))[0]
    assert message.startswith(f"{raised.value.code.value}: {raised.value.message}")


def test_an_unreadable_configuration_file_carries_the_error_open_raises(tmp_path: Path) -> None:
    config = tmp_path / "missing.json"
    with pytest.raises(GraphError) as raised:
        BlockingCapabilityGraph.open(config).close()
    report = diagnose(config)
    assert report.error is not None
    assert report.error.to_json() == raised.value.to_json()
    assert report.to_json() == {
        "status": "failed",
        "checks": [
            {
                "id": "config",
                "status": "fail",
                "message": f"Cannot read the configuration: {config} does not exist",
            },
            {
                "id": "sources",
                "status": "skip",
                "message": "Not checked: the configuration cannot be read",
            },
        ],
        "warnings": [],
    }


def test_a_readable_configuration_has_no_error() -> None:
    report = diagnose(inline(provider("acme", capability("a"))))
    assert report.status == "ok"
    assert report.error is None


def test_it_can_be_called_while_an_event_loop_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The openai executor has an ``aclose``: the executor built for the check is closed on a
    loop of its own, not on the caller's running one."""
    monkeypatch.setenv("CG_TEST_KEY", "sk-test")
    model = {
        "executor": "openai",
        "baseUrl": "http://127.0.0.1:9/v1",
        "model": "m",
        "apiKeyEnv": "CG_TEST_KEY",
    }

    async def main() -> Report:
        return diagnose(inline(GOOD, model=model))

    report = asyncio.run(main())
    assert report.status == "ok"
    assert Check("executor", "ok", "The openai executor is configured") in report.checks
