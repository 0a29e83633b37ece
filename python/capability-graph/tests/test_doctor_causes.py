"""doctor names the cause: one fault per test, with the exact report lines.

An unreadable configuration keeps its error envelope on stderr byte for byte; the report on
stdout (human lines and ``--json`` checks) says which file and why. Configuration, definition and
relation faults name the unknown keys, the provider and the capability and target.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from capability_graph_testing.common import capability, provider, schema_validator
from capability_graph_testing.surfaces import CliRun, cli

ENVELOPE = (
    '{"ok":false,"error":{"code":"CG_CONFIG_INVALID","phase":"config",'
    '"message":"Cannot read a valid bounded JSON configuration file",'
    '"nextAction":"check_config"}}\n'
)


REPORT = schema_validator("maintenance-report.schema.json")


def doctor(config: str) -> tuple[CliRun, CliRun]:
    """doctor's human run and its --json run on ``config`` (a valid MaintenanceReport)."""
    human, as_json = cli("doctor", "--config", config), cli("doctor", "--config", config, "--json")
    REPORT.validate(as_json.json())
    return human, as_json


def assert_unreadable(config: str, cause: str) -> None:
    human, as_json = doctor(config)
    for run in (human, as_json):
        assert run.status == 1
        assert run.stderr == ENVELOPE
    assert human.stdout == (
        "capability-graph doctor: failed\n"
        f"  [FAIL] config: Cannot read the configuration: {cause}\n"
        "  [skip] sources: Not checked: the configuration cannot be read\n"
    )
    assert as_json.json() == {
        "status": "failed",
        "checks": [
            {
                "id": "config",
                "status": "fail",
                "message": f"Cannot read the configuration: {cause}",
            },
            {
                "id": "sources",
                "status": "skip",
                "message": "Not checked: the configuration cannot be read",
            },
        ],
        "warnings": [],
    }


def test_missing_configuration_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "capability-graph.json"
    assert_unreadable(str(config), f"{config} does not exist")


def test_default_configuration_missing_names_the_file_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CAPABILITY_GRAPH_CONFIG", raising=False)
    run = cli("doctor")
    assert run.stderr == ENVELOPE
    assert (
        f"  [FAIL] config: Cannot read the configuration: {tmp_path / 'capability-graph.json'} "
        "does not exist\n"
    ) in run.stdout


def test_directory_as_configuration(tmp_path: Path) -> None:
    assert_unreadable(str(tmp_path), f"{tmp_path} is a directory, not a file")


def test_empty_configuration_path() -> None:
    assert_unreadable("", "the configuration path is empty")


def test_fifo_as_configuration(tmp_path: Path) -> None:
    fifo = tmp_path / "config.fifo"
    os.mkfifo(fifo)
    assert_unreadable(str(fifo), f"{fifo} is not a regular file")


def test_broken_symbolic_link_as_configuration(tmp_path: Path) -> None:
    link = tmp_path / "c.json"
    link.symlink_to(tmp_path / "gone.json")
    assert_unreadable(str(link), f"{link} is a broken symbolic link")


def test_configuration_that_is_not_utf8(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_bytes(b'{"providers": "\xff"}')
    assert_unreadable(str(config), f"{config} is not UTF-8 text (invalid byte at offset 15)")


def test_configuration_with_a_json_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text('{\n  "providers": [\n    {"path": "a.json"},\n  ]\n}\n', encoding="utf-8")
    assert_unreadable(
        str(config), f"{config} has a JSON syntax error at line 4, column 3: Expecting value"
    )


def test_truncated_configuration(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"providers": [', encoding="utf-8")
    assert_unreadable(
        str(config), f"{config} has a JSON syntax error at line 1, column 16: Expecting value"
    )


def test_empty_configuration_file(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_bytes(b"")
    assert_unreadable(str(config), f"{config} is empty")


def test_configuration_over_the_size_limit(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_bytes(b" " * (1024 * 1024) + b"{}")
    assert_unreadable(str(config), f"{config} is larger than the limit of 1048576 bytes")


@pytest.mark.parametrize(
    ("content", "cause"),
    [
        ('{"a": NaN}', "is not JSON: NaN and Infinity are not JSON values"),
        ('{"a": 1, "a": 2}', "is not JSON data: an object has a duplicate key"),
        ('\ufeff{"providers": []}', "starts with a byte order mark (not allowed in JSON)"),
    ],
)
def test_configuration_that_is_not_json_data(tmp_path: Path, content: str, cause: str) -> None:
    config = tmp_path / "c.json"
    config.write_text(content, encoding="utf-8")
    assert_unreadable(str(config), f"{config} {cause}")


def write_config(directory: Path, config: dict[str, Any]) -> Path:
    path = directory / "capability-graph.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_unknown_configuration_keys_are_named(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "providers": [{"definition": provider("one"), "documentsRoot": "x"}],
            "budget": {},
            "budgets": {"maxCapabilites": 3},
            "model": {"executor": "lexical", "topK": 3},
        },
    )
    human, as_json = doctor(str(config))
    assert (human.status, human.stderr) == (1, "")
    message = (
        "CG_CONFIG_INVALID: / has a key that is not allowed (allowed: providers, scope, "
        "documents, budgets, model); unknown keys: /budget, "
        "/budgets/maxCapabilites, /model/topK, /providers/0/documentsRoot"
    )
    assert human.stdout.splitlines()[1] == f"  [FAIL] config: {message}"
    assert as_json.json()["checks"][0] == {"id": "config", "status": "fail", "message": message}


def test_unknown_keys_of_a_model_are_judged_by_its_own_executor_variant(tmp_path: Path) -> None:
    # Not by the other executors' variants, whose "executor" constant the model does not have:
    # "steps" is a scripted model's key, not an unknown one.
    config = write_config(
        tmp_path,
        {
            "providers": [{"definition": provider("one")}],
            "model": {"executor": "scripted", "steps": [], "stepz": 1},
        },
    )
    human, _ = doctor(str(config))
    assert human.stdout.splitlines()[1].endswith("; unknown keys: /model/stepz")


def test_bad_relation_names_the_capability_and_the_target(tmp_path: Path) -> None:
    definition = provider(
        "shop",
        capability("cart"),
        capability("checkout", relations=[{"kind": "requires", "target": "payment"}]),
    )
    (tmp_path / "shop.json").write_text(json.dumps(definition), encoding="utf-8")
    config = write_config(tmp_path, {"providers": [{"path": "shop.json"}]})
    human, as_json = doctor(str(config))
    message = (
        "CG_RELATION_INVALID: Provider definition declares an invalid relation "
        f"(file {tmp_path / 'shop.json'}; provider shop; capability shop::checkout: relation "
        "requires -> payment: the target is not a capability of this provider)"
    )
    assert human.status == 1
    assert f"  [FAIL] source.0: {message}" in human.stdout.splitlines()
    assert {"id": "source.0", "status": "fail", "message": message} in as_json.json()["checks"]


@pytest.mark.parametrize(
    ("relation", "why"),
    [
        ({"kind": "requires", "target": "shop::a"}, "a capability cannot relate to itself"),
        (
            {"kind": "requires", "target": "shop::zz"},
            "the target is not a capability of this provider",
        ),
    ],
)
def test_each_kind_of_bad_relation_is_explained(
    tmp_path: Path, relation: dict[str, str], why: str
) -> None:
    config = write_config(
        tmp_path,
        {"providers": [{"definition": provider("shop", capability("a", relations=[relation]))}]},
    )
    human, _ = doctor(str(config))
    line = next(x for x in human.stdout.splitlines() if x.startswith("  [FAIL] source.0: "))
    assert line.endswith(
        f"(inline definition; provider shop; capability shop::a: relation requires -> "
        f"{relation['target']}: {why})"
    )


def test_bad_definition_names_its_provider_and_file(tmp_path: Path) -> None:
    definition = provider("billing", capability("invoice"))
    del definition["version"]
    (tmp_path / "billing.json").write_text(json.dumps(definition), encoding="utf-8")
    config = write_config(tmp_path, {"providers": [{"path": "billing.json"}]})
    human, as_json = doctor(str(config))
    line = next(x for x in human.stdout.splitlines() if x.startswith("  [FAIL] source.0: "))
    assert line.startswith("  [FAIL] source.0: CG_DEFINITION_INVALID: ")
    assert line.endswith(f"(file {tmp_path / 'billing.json'}; provider billing)")
    check = next(c for c in as_json.json()["checks"] if c["id"] == "source.0")
    assert check["message"] == line.removeprefix("  [FAIL] source.0: ")


def test_definition_file_with_a_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text('{"providerId": "p",\n}', encoding="utf-8")
    config = write_config(tmp_path, {"providers": [{"path": "p.json"}]})
    human, _ = doctor(str(config))
    line = next(x for x in human.stdout.splitlines() if x.startswith("  [FAIL] source.0: "))
    assert line.endswith(
        f"(file {tmp_path / 'p.json'} has a JSON syntax error at line 2, column 1: "
        "Expecting property name enclosed in double quotes)"
    )


def test_missing_definition_file_is_named(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"providers": [{"path": "gone.json"}]})
    human, _ = doctor(str(config))
    assert (
        "  [FAIL] source.0: CG_CONFIG_INVALID: /providers/0/path is not a readable regular file "
        f"(file {tmp_path / 'gone.json'} does not exist)"
    ) in human.stdout.splitlines()


def test_the_graph_error_itself_never_carries_the_host_facts(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "providers": [
                {
                    "definition": provider(
                        "shop", capability("a", relations=[{"kind": "requires", "target": "zz"}])
                    )
                }
            ]
        },
    )
    run = cli("describe", "--config", str(config))
    assert run.status == 1
    error = run.envelope()["error"]
    assert error["code"] == "CG_RELATION_INVALID"
    assert "zz" not in error["message"]
    assert "shop" not in error["message"]
