"""``capability-graph doctor``: one check per configuration, source, relations, documents,
executor and open, and the seed envelope when the configuration cannot be read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capability_graph import ErrorCode
from capability_graph._generated.taxonomy import REGISTRY
from capability_graph_testing.common import capability, expected, provider
from capability_graph_testing.surfaces import (
    MAINTENANCE_REPORT,
    cli,
    cli_process,
    maintenance_report,
    report_checks,
    scripted,
    write_config,
    write_graph,
)

SEED_MISSING_CONFIG = (
    '{"ok":false,"error":{"code":"CG_CONFIG_INVALID","phase":"config",'
    '"message":"Cannot read a valid bounded JSON configuration file",'
    '"nextAction":"check_config"}}\n'
)


def test_doctor_on_a_healthy_graph_is_ok(tmp_path: Path) -> None:
    assert cli("init", str(tmp_path), "--json").status == 0
    data = maintenance_report(
        cli("doctor", "--json", "--config", str(tmp_path / "capability-graph.json")), "ok", 0
    )
    found = report_checks(data)
    assert [c["id"] for c in data["checks"]] == [
        "config",
        "source.0",
        "relations",
        "documents.0",
        "executor",
        "open",
    ]
    assert all(status == "ok" for status, _ in found.values())
    assert "example" in found["source.0"][1]
    assert data["warnings"] == []


def test_doctor_reports_missing_documents_dangling_relations_and_unapproved_bodies(
    tmp_path: Path,
) -> None:
    config = write_graph(tmp_path, documents={"bodies": ["vault"]})
    data = maintenance_report(cli("doctor", "--json", "--config", str(config)), "failed", 1)
    found = report_checks(data)
    assert found["config"][0] == "ok"
    assert found["source.0"][0] == found["source.1"][0] == "ok"
    assert found["relations"][0] == "ok"
    assert found["documents.0"] == (
        "fail",
        "Provider acme: 1 of 2 local documents cannot be read: acme::a/gone CG_DOCUMENT_NOT_FOUND",
    )
    assert found["documents.1"][0] == "skip"
    assert found["executor"][0] == "skip"
    assert found["open"] == ("skip", "Not checked: an earlier check failed")
    assert any("acme::a related billing::invoice" in w for w in data["warnings"])
    assert any("bodies of provider acme are not approved" in w for w in data["warnings"])
    assert str(tmp_path) not in json.dumps(data)


def test_doctor_invalid_configuration_is_a_failed_report_not_an_envelope(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"providers": [], "budgets": {"maxInputBytes": -1}})
    data = maintenance_report(cli("doctor", "--json", "--config", str(config)), "failed", 1)
    assert report_checks(data)["config"] == (
        "fail",
        "CG_CONFIG_INVALID: /budgets/maxInputBytes must be at least 1",
    )
    assert report_checks(data)["sources"][0] == "skip"


UNREADABLE_ENVELOPE = (
    '{"ok":false,"error":{"code":"CG_CONFIG_INVALID","phase":"config",'
    '"message":"Cannot read a valid bounded JSON configuration file",'
    '"nextAction":"check_config"}}\n'
)


@pytest.mark.parametrize("content", ["", "{", "[1, 2", "\ufffe", '{"a": NaN}', '{"a": 1, "a": 2}'])
@pytest.mark.parametrize("as_json", [False, True])
def test_doctor_unreadable_configuration_keeps_the_seed_envelope_byte_for_byte(
    tmp_path: Path, content: str, as_json: bool
) -> None:
    config = tmp_path / "c.json"
    config.write_text(content, encoding="utf-8")
    run = cli("doctor", "--config", str(config), *(["--json"] if as_json else []))
    assert run.status == 1
    assert run.stderr == UNREADABLE_ENVELOPE
    assert json.loads(run.stderr)["error"] == expected(
        "CG_CONFIG_INVALID", "config", "Cannot read a valid bounded JSON configuration file"
    )


def test_doctor_a_directory_as_configuration_is_the_envelope(tmp_path: Path) -> None:
    run = cli("doctor", "--config", str(tmp_path))
    assert run.status == 1
    assert run.stderr == UNREADABLE_ENVELOPE


def test_doctor_bad_definition_and_missing_source(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"providerId": "Bad"}', encoding="utf-8")
    config = write_config(
        tmp_path,
        {
            "providers": [
                {"path": "bad.json"},
                {"path": "missing.json"},
                {"definition": provider("ok")},
            ]
        },
    )
    found = report_checks(
        maintenance_report(cli("doctor", "--json", "--config", str(config)), "failed", 1)
    )
    assert found["source.0"][0] == "fail"
    assert found["source.0"][1].startswith("CG_DEFINITION_INVALID: ")
    assert found["source.1"] == (
        "fail",
        "CG_CONFIG_INVALID: /providers/1/path is not a readable regular file "
        f"(file {tmp_path / 'missing.json'} does not exist)",
    )
    assert found["source.2"][0] == "ok"
    assert found["relations"][0] == "skip"


def test_doctor_cross_provider_cycle(tmp_path: Path) -> None:
    one = provider("one", capability("a", relations=[{"kind": "requires", "target": "two::b"}]))
    two = provider("two", capability("b", relations=[{"kind": "requires", "target": "one::a"}]))
    config = write_config(tmp_path, {"providers": [{"definition": one}, {"definition": two}]})
    found = report_checks(
        maintenance_report(cli("doctor", "--json", "--config", str(config)), "failed", 1)
    )
    message = REGISTRY[ErrorCode.CG_RELATION_CYCLE].messages["default"]
    assert found["relations"] == ("fail", f"CG_RELATION_CYCLE: {message}")


def test_doctor_scope_naming_an_unloaded_provider_fails_to_open(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"providers": [{"definition": provider("one")}], "scope": {"providers": ["two"]}}
    )
    found = report_checks(
        maintenance_report(cli("doctor", "--json", "--config", str(config)), "failed", 1)
    )
    assert found["open"] == (
        "fail",
        "CG_CONFIG_INVALID: /scope/providers/0 names a provider that is not loaded",
    )


def test_doctor_executor_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"providers": [{"definition": provider("one", capability("a"))}]}

    def executor_check(model: dict[str, Any]) -> tuple[str, str]:
        config = write_config(tmp_path, {**base, "model": model})
        run = cli("doctor", "--json", "--config", str(config))
        data = run.json()
        MAINTENANCE_REPORT.validate(data)
        return report_checks(data)["executor"]

    assert executor_check(scripted()) == ("ok", "The scripted executor is configured")
    assert executor_check({"executor": "lexical"})[0] == "ok"
    config = write_config(tmp_path, {**base, "model": {"executor": "scripted", "steps": "x"}})
    found = report_checks(
        maintenance_report(cli("doctor", "--json", "--config", str(config)), "failed", 1)
    )
    assert found["config"][1].startswith("CG_CONFIG_INVALID: /model")
    openai = {
        "executor": "openai",
        "baseUrl": "http://127.0.0.1:9/v1",
        "model": "m",
        "apiKeyEnv": "CG_TEST_KEY",
    }
    monkeypatch.delenv("CG_TEST_KEY", raising=False)
    assert executor_check(openai) == (
        "warn",
        "The environment variable CG_TEST_KEY (apiKeyEnv) is not set",
    )
    monkeypatch.setenv("CG_TEST_KEY", "sk-SECRET-4f1c")
    assert executor_check(openai)[0] == "ok"
    monkeypatch.setenv("PATH", str(tmp_path))  # no codex CLI on PATH
    assert executor_check({"executor": "codex"})[0] == "fail"


def test_doctor_human_output(tmp_path: Path) -> None:
    config = write_graph(tmp_path)
    run = cli("doctor", "--config", str(config))
    assert run.status == 1
    lines = run.stdout.splitlines()
    assert lines[0] == "capability-graph doctor: failed"
    assert "  [ok  ] config: The configuration is valid (2 sources)" in lines
    assert any(line.startswith("  [FAIL] documents.0: ") for line in lines)
    assert any(line.startswith("  warning: ") for line in lines)


def test_seed_doctor_with_a_missing_config_prints_exactly_the_seed_line(tmp_path: Path) -> None:
    done = cli_process("doctor", "--config", "deliberately-missing-config.json", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, SEED_MISSING_CONFIG)
    # stdout: doctor's report, naming the cause (host-side facts, never in the envelope).
    missing = tmp_path.resolve() / "deliberately-missing-config.json"
    assert done.stdout.splitlines()[:2] == [
        "capability-graph doctor: failed",
        f"  [FAIL] config: Cannot read the configuration: {missing} does not exist",
    ]


def test_doctor_counts_in_the_right_number(tmp_path: Path) -> None:
    assert cli("init", str(tmp_path)).status == 0
    run = cli("doctor", "--config", str(tmp_path / "capability-graph.json"))
    assert run.status == 0, run
    lines = run.stdout.splitlines()
    assert "  [ok  ] config: The configuration is valid (1 source)" in lines
    assert "  [ok  ] source.0: Provider example version 1: 2 capabilities" in lines
    assert "  [ok  ] relations: 2 capabilities and 1 relation are valid" in lines
    assert (
        "  [ok  ] documents.0: Provider example: 1 local document readable, 0 URL references"
        in lines
    )
    assert any(line.endswith(", 1 provider and 2 capabilities in scope") for line in lines), lines
