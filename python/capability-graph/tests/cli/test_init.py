"""``capability-graph init``: a working graph scaffolded, never a file overwritten, the file names
it is given honoured, and its next step as a hint."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from capability_graph_testing.surfaces import (
    MAINTENANCE_REPORT,
    cli,
    maintenance_report,
    report_checks,
    usage_error,
)

INIT_FILES = [
    "capability-graph.json",
    "providers/example.json",
    "providers/knowledge/getting-started.md",
]


def tree(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_init_scaffolds_a_working_graph(tmp_path: Path) -> None:
    target = tmp_path / "new" / "project"
    data = maintenance_report(cli("init", str(target), "--json"), "ok", 0)
    assert sorted(tree(target)) == sorted(INIT_FILES)
    assert all(c["status"] == "ok" for c in data["checks"])
    config = str(target / "capability-graph.json")
    assert cli("describe", "--config", config).json()["providers"][0]["providerId"] == "example"
    run = cli("read", "example::getting-started", "guide", "--config", config)
    assert run.json()["text"].startswith("# Getting started")
    run = cli("match", "find items by keyword", "--config", config)
    assert run.status == 0
    assert run.json()["candidates"][0]["id"] == "example::search"
    modes = {stat.S_IMODE((target / f).stat().st_mode) for f in INIT_FILES}
    assert all(mode & 0o044 == 0o044 or mode & 0o077 == 0 for mode in modes)


def test_init_into_the_working_directory_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli("init")
    assert run.status == 0
    assert run.stdout.startswith("capability-graph init: ok\n")
    assert sorted(tree(tmp_path)) == sorted(INIT_FILES)


def test_init_again_is_ok_and_changes_nothing(tmp_path: Path) -> None:
    cli("init", str(tmp_path))
    before = tree(tmp_path)
    data = maintenance_report(cli("init", str(tmp_path), "--json"), "ok", 0)
    assert all("already exists with this content" in c["message"] for c in data["checks"])
    assert tree(tmp_path) == before


def test_init_never_overwrites_a_different_file(tmp_path: Path) -> None:
    (tmp_path / "capability-graph.json").write_text("{mine}", encoding="utf-8")
    data = maintenance_report(cli("init", str(tmp_path), "--json"), "conflict", 3)
    found = report_checks(data)
    assert found["configuration"][0] == "fail"
    assert found["provider"][0] == "skip"
    assert tree(tmp_path) == {"capability-graph.json": b"{mine}"}  # nothing else written either


def test_init_dry_run_plans_and_writes_nothing(tmp_path: Path) -> None:
    data = maintenance_report(cli("init", str(tmp_path / "x"), "--dry-run", "--json"), "planned", 0)
    assert [c["message"] for c in data["checks"]] == [f"Would create {f}" for f in INIT_FILES]
    assert not (tmp_path / "x").exists()
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "capability-graph.json").write_text("{}", encoding="utf-8")
    maintenance_report(cli("init", str(tmp_path / "y"), "--dry-run", "--json"), "conflict", 3)


def test_init_into_a_file_fails(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    data = maintenance_report(cli("init", str(tmp_path / "f"), "--json"), "failed", 1)
    # [CG-MAINT-17]: the first file cannot be written; the later ones are not attempted.
    assert [(c["id"], c["status"]) for c in data["checks"]] == [
        ("configuration", "fail"),
        ("provider", "skip"),
        ("document", "skip"),
    ]


def test_init_dry_run_with_every_file_in_place_is_ok(tmp_path: Path) -> None:
    # [CG-MAINT-19]: nothing would be written, so the status is the real run's.
    cli("init", str(tmp_path))
    before = tree(tmp_path)
    maintenance_report(cli("init", str(tmp_path), "--dry-run", "--json"), "ok", 0)
    assert tree(tmp_path) == before


def test_init_lists_its_checks_in_the_plans_order_whatever_conflicts(tmp_path: Path) -> None:
    (tmp_path / "providers").mkdir()
    (tmp_path / "providers" / "example.json").write_text("{}", encoding="utf-8")
    data = maintenance_report(cli("init", str(tmp_path), "--json"), "conflict", 3)
    assert [(c["id"], c["status"]) for c in data["checks"]] == [
        ("configuration", "skip"),
        ("provider", "fail"),
        ("document", "skip"),
    ]


def test_init_leaves_no_temporary_files(tmp_path: Path) -> None:
    cli("init", str(tmp_path))
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".capability-graph-")]


def test_init_writes_the_configuration_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli("init", "--config", "my.json")
    assert run.status == 0, run
    assert (tmp_path / "my.json").is_file()
    assert not (tmp_path / "capability-graph.json").exists()
    assert cli("describe", "--config", "my.json").json()["providers"][0]["providerId"] == "example"


def test_init_with_a_folder_and_a_configuration_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli("init", "graph", "--config", "conf/graph.json", "--json")
    assert run.status == 0, run
    data = run.json()
    MAINTENANCE_REPORT.validate(data)
    assert [c["id"] for c in data["checks"]] == ["configuration", "provider", "document"]
    written = json.loads((tmp_path / "conf" / "graph.json").read_text(encoding="utf-8"))
    assert written["providers"] == [{"path": "../graph/providers/example.json"}]
    assert (tmp_path / "graph" / "providers" / "knowledge" / "getting-started.md").is_file()
    run = cli("read", "example::getting-started", "guide", "--config", "conf/graph.json")
    assert run.json()["text"].startswith("# Getting started")


def test_init_with_an_empty_configuration_path_is_a_usage_error(tmp_path: Path) -> None:
    usage_error(
        cli("init", str(tmp_path), "--config", ""), "init", "argument --config: the path is empty"
    )
    assert list(tmp_path.iterdir()) == []


def test_init_prints_its_next_step_as_a_hint_not_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli("init", "--config", "my.json")
    assert (
        run.stdout.splitlines()[-1]
        == "  hint: check the new graph: capability-graph doctor --config my.json"
    )
    assert "warning:" not in run.stdout
    data = cli("init", "again", "--json").json()
    assert data["warnings"] == []
