"""The CLI maintenance commands: doctor, init, mcp-install, explain."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from capability_graph import ErrorCode
from capability_graph._explain import explain_json, explain_text
from capability_graph._generated.taxonomy import REGISTRY
from capability_graph_testing.common import capability, expected, provider, schema_validator
from capability_graph_testing.surfaces import CliRun, cli, scripted, write_graph

REPORT = schema_validator("maintenance-report.schema.json")


def report(run: CliRun, status: str, exit_status: int) -> dict[str, Any]:
    assert run.status == exit_status, run
    assert run.stderr == ""
    data: dict[str, Any] = run.json()
    REPORT.validate(data)
    assert data["status"] == status
    return data


def checks(data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["id"]: (c["status"], c["message"]) for c in data["checks"]}


def write_config(directory: Path, config: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "capability-graph.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


# --- doctor -------------------------------------------------------------------------------------


def test_doctor_on_a_healthy_graph_is_ok(tmp_path: Path) -> None:
    assert cli("init", str(tmp_path), "--json").status == 0
    data = report(
        cli("doctor", "--json", "--config", str(tmp_path / "capability-graph.json")), "ok", 0
    )
    found = checks(data)
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
    data = report(cli("doctor", "--json", "--config", str(config)), "failed", 1)
    found = checks(data)
    assert found["config"][0] == "ok"
    assert found["source.0"][0] == found["source.1"][0] == "ok"
    assert found["relations"][0] == "ok"
    assert found["documents.0"] == (
        "fail",
        "Provider acme: 1 of 2 local documents cannot be read: acme::a/gone CG_DOCUMENT_NOT_FOUND",
    )
    assert found["documents.1"][0] == "skip"
    assert found["executor"][0] == "skip"
    assert "open" not in found  # not attempted once something failed
    assert any("acme::a related billing::invoice" in w for w in data["warnings"])
    assert any("bodies of provider acme are not approved" in w for w in data["warnings"])
    assert str(tmp_path) not in json.dumps(data)


def test_doctor_invalid_configuration_is_a_failed_report_not_an_envelope(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"providers": [], "budgets": {"maxInputBytes": -1}})
    data = report(cli("doctor", "--json", "--config", str(config)), "failed", 1)
    assert checks(data)["config"] == (
        "fail",
        "CG_CONFIG_INVALID: /budgets/maxInputBytes must be at least 1",
    )
    assert checks(data)["sources"][0] == "skip"


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
    found = checks(report(cli("doctor", "--json", "--config", str(config)), "failed", 1))
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
    found = checks(report(cli("doctor", "--json", "--config", str(config)), "failed", 1))
    message = REGISTRY[ErrorCode.CG_RELATION_CYCLE].messages["default"]
    assert found["relations"] == ("fail", f"CG_RELATION_CYCLE: {message}")


def test_doctor_scope_naming_an_unloaded_provider_fails_to_open(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"providers": [{"definition": provider("one")}], "scope": {"providers": ["two"]}}
    )
    found = checks(report(cli("doctor", "--json", "--config", str(config)), "failed", 1))
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
        REPORT.validate(data)
        return checks(data)["executor"]

    assert executor_check(scripted()) == ("ok", "The scripted executor is configured")
    assert executor_check({"executor": "lexical"})[0] == "ok"
    config = write_config(tmp_path, {**base, "model": {"executor": "scripted", "steps": "x"}})
    found = checks(report(cli("doctor", "--json", "--config", str(config)), "failed", 1))
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


# --- init ---------------------------------------------------------------------------------------

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
    data = report(cli("init", str(target), "--json"), "ok", 0)
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
    data = report(cli("init", str(tmp_path), "--json"), "ok", 0)
    assert all("already exists with this content" in c["message"] for c in data["checks"])
    assert tree(tmp_path) == before


def test_init_never_overwrites_a_different_file(tmp_path: Path) -> None:
    (tmp_path / "capability-graph.json").write_text("{mine}", encoding="utf-8")
    data = report(cli("init", str(tmp_path), "--json"), "conflict", 3)
    found = checks(data)
    assert found["file.capability-graph.json"][0] == "fail"
    assert found["file.providers.example.json"][0] == "skip"
    assert tree(tmp_path) == {"capability-graph.json": b"{mine}"}  # nothing else written either


def test_init_dry_run_plans_and_writes_nothing(tmp_path: Path) -> None:
    data = report(cli("init", str(tmp_path / "x"), "--dry-run", "--json"), "planned", 0)
    assert [c["message"] for c in data["checks"]] == [f"Would create {f}" for f in INIT_FILES]
    assert not (tmp_path / "x").exists()
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "capability-graph.json").write_text("{}", encoding="utf-8")
    report(cli("init", str(tmp_path / "y"), "--dry-run", "--json"), "conflict", 3)


def test_init_into_a_file_fails(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    data = report(cli("init", str(tmp_path / "f"), "--json"), "failed", 1)
    assert checks(data)["directory"][0] == "fail"


def test_init_leaves_no_temporary_files(tmp_path: Path) -> None:
    cli("init", str(tmp_path))
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".capability-graph-")]


# --- mcp-install --------------------------------------------------------------------------------


def entry(config: Path, *, stdio_type: bool = False) -> dict[str, Any]:
    value: dict[str, Any] = {"type": "stdio"} if stdio_type else {}
    value["command"] = sys.executable
    value["args"] = ["-m", "capability_graph.cli", "mcp", "--config", str(config)]
    return value


@pytest.fixture
def graph_config(tmp_path: Path) -> Path:
    return write_graph(tmp_path / "graph")


@pytest.mark.parametrize(
    ("client", "key", "stdio_type"),
    [
        ("claude-desktop", "mcpServers", False),
        ("cursor", "mcpServers", False),
        ("vscode", "servers", True),
    ],
)
def test_mcp_install_json_clients(
    tmp_path: Path, graph_config: Path, client: str, key: str, stdio_type: bool
) -> None:
    target = tmp_path / "client" / "config.json"
    argv = [
        "mcp-install",
        "--client",
        client,
        "--config-path",
        str(target),
        "--config",
        str(graph_config),
        "--json",
    ]
    data = report(cli(*argv), "ok", 0)
    assert checks(data)["graph-config"][0] == "ok"
    installed = json.loads(target.read_text(encoding="utf-8"))
    assert installed == {key: {"capability-graph": entry(graph_config, stdio_type=stdio_type)}}
    # Again: identical entry, nothing to do.
    before = target.read_bytes()
    data = report(cli(*argv), "ok", 0)
    assert "already has the server" in checks(data)["server"][1]
    assert target.read_bytes() == before
    # Another graph under the same name: a conflict, the file is left as it was.
    other = write_graph(tmp_path / "other")
    argv_other = [*argv[:-3], "--config", str(other), "--json"]
    report(cli(*argv_other), "conflict", 3)
    assert target.read_bytes() == before
    # Under another name it is added next to the first.
    report(cli(*argv_other, "--name", "other_graph"), "ok", 0)
    servers = json.loads(target.read_text(encoding="utf-8"))[key]
    assert list(servers) == ["capability-graph", "other_graph"]


def test_mcp_install_preserves_everything_else(tmp_path: Path, graph_config: Path) -> None:
    target = tmp_path / "claude.json"
    original: dict[str, Any] = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {"files": {"command": "npx", "args": ["-y", "files"], "env": {"K": "v"}}},
        "zeta": [1, 2.5, None, True, "中文"],
    }
    target.write_text(json.dumps(original, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
    os.chmod(target, 0o600)
    report(
        cli(
            "mcp-install",
            "--client",
            "claude-desktop",
            "--config-path",
            str(target),
            "--config",
            str(graph_config),
            "--json",
        ),
        "ok",
        0,
    )
    text = target.read_text(encoding="utf-8")
    installed = json.loads(text)
    assert list(installed) == ["globalShortcut", "mcpServers", "zeta"]
    assert installed["zeta"] == original["zeta"]
    assert installed["mcpServers"]["files"] == original["mcpServers"]["files"]
    assert installed["mcpServers"]["capability-graph"] == entry(graph_config)
    assert '\n    "globalShortcut"' in text  # the file's indentation is kept
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "content",
    [
        '{"mcpServers": {}, // a comment\n}',
        "[]",
        '{"mcpServers": []}',
        '{"mcpServers": "x"}',
        "\x00\x01",
    ],
)
def test_mcp_install_never_touches_a_file_it_cannot_edit(
    tmp_path: Path, graph_config: Path, content: str
) -> None:
    target = tmp_path / "mcp.json"
    target.write_text(content, encoding="utf-8")
    data = report(
        cli(
            "mcp-install",
            "--client",
            "cursor",
            "--config-path",
            str(target),
            "--config",
            str(graph_config),
            "--json",
        ),
        "failed",
        1,
    )
    assert checks(data)["client-config"][0] == "fail"
    assert target.read_text(encoding="utf-8") == content
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["mcp.json"]


def test_mcp_install_dry_run(tmp_path: Path, graph_config: Path) -> None:
    target = tmp_path / "x" / "mcp.json"
    data = report(
        cli(
            "mcp-install",
            "--client",
            "vscode",
            "--config-path",
            str(target),
            "--config",
            str(graph_config),
            "--dry-run",
            "--json",
        ),
        "planned",
        0,
    )
    assert "Would add the server capability-graph" in checks(data)["server"][1]
    assert not target.exists()
    assert not target.parent.exists()


def test_mcp_install_edits_the_target_of_a_symbolic_link(
    tmp_path: Path, graph_config: Path
) -> None:
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}', encoding="utf-8")
    link = tmp_path / "mcp.json"
    link.symlink_to(real)
    report(
        cli(
            "mcp-install",
            "--client",
            "cursor",
            "--config-path",
            str(link),
            "--config",
            str(graph_config),
            "--json",
        ),
        "ok",
        0,
    )
    assert link.is_symlink()
    assert "capability-graph" in json.loads(real.read_text(encoding="utf-8"))["mcpServers"]


def test_mcp_install_default_paths(
    tmp_path: Path, graph_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for client in ("cursor", "vscode", "codex", "claude-desktop"):
        run = cli("mcp-install", "--client", client, "--config", str(graph_config))
        assert run.status == 0, run
        assert run.stdout.startswith("capability-graph mcp-install: ok\n")
    assert (tmp_path / ".cursor" / "mcp.json").is_file()
    assert (tmp_path / ".vscode" / "mcp.json").is_file()
    assert (tmp_path / "codex-home" / "config.toml").is_file()
    if sys.platform.startswith("linux"):
        assert (tmp_path / "xdg" / "Claude" / "claude_desktop_config.json").is_file()


CODEX_CONFIG = """\
# Codex settings (hand-written)
model = "o3"  # the default model

[mcp_servers.files]
command = "npx"   # keep this comment
args = ["-y", "files"]

[profiles.fast]
model = "o4-mini"
"""


def test_mcp_install_codex_toml_keeps_comments_and_formatting(
    tmp_path: Path, graph_config: Path
) -> None:
    target = tmp_path / "config.toml"
    target.write_text(CODEX_CONFIG, encoding="utf-8")
    argv = [
        "mcp-install",
        "--client",
        "codex",
        "--config-path",
        str(target),
        "--config",
        str(graph_config),
        "--json",
    ]
    report(cli(*argv), "ok", 0)
    text = target.read_text(encoding="utf-8")
    assert text.startswith(CODEX_CONFIG.split("[profiles.fast]")[0])
    assert "# keep this comment" in text
    assert "[profiles.fast]" in text
    document = tomlkit.parse(text).unwrap()
    assert document["mcp_servers"]["capability-graph"] == entry(graph_config)
    assert document["mcp_servers"]["files"] == {"command": "npx", "args": ["-y", "files"]}
    assert document["model"] == "o3"
    assert document["profiles"] == {"fast": {"model": "o4-mini"}}
    before = target.read_bytes()
    report(cli(*argv), "ok", 0)
    assert target.read_bytes() == before
    other = write_graph(tmp_path / "other")
    report(cli(*argv[:-3], "--config", str(other), "--json"), "conflict", 3)
    assert target.read_bytes() == before


def test_mcp_install_codex_new_file_and_inline_table(tmp_path: Path, graph_config: Path) -> None:
    target = tmp_path / "codex" / "config.toml"
    report(
        cli(
            "mcp-install",
            "--client",
            "codex",
            "--config-path",
            str(target),
            "--config",
            str(graph_config),
            "--json",
        ),
        "ok",
        0,
    )
    text = target.read_text(encoding="utf-8")
    assert text.lstrip().startswith("[mcp_servers.capability-graph]")
    assert tomlkit.parse(text).unwrap() == {
        "mcp_servers": {"capability-graph": entry(graph_config)}
    }

    inline_target = tmp_path / "inline.toml"
    inline_target.write_text('mcp_servers = { a = { command = "x" } }\n', encoding="utf-8")
    report(
        cli(
            "mcp-install",
            "--client",
            "codex",
            "--config-path",
            str(inline_target),
            "--config",
            str(graph_config),
            "--json",
        ),
        "ok",
        0,
    )
    servers = tomlkit.parse(inline_target.read_text(encoding="utf-8")).unwrap()["mcp_servers"]
    assert servers == {"a": {"command": "x"}, "capability-graph": entry(graph_config)}


def test_mcp_install_codex_invalid_toml_is_untouched(tmp_path: Path, graph_config: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_text("[mcp_servers\nbroken = ", encoding="utf-8")
    report(
        cli(
            "mcp-install",
            "--client",
            "codex",
            "--config-path",
            str(target),
            "--config",
            str(graph_config),
            "--json",
        ),
        "failed",
        1,
    )
    assert target.read_text(encoding="utf-8") == "[mcp_servers\nbroken = "
    target.write_text("mcp_servers = 3\n", encoding="utf-8")
    report(
        cli(
            "mcp-install",
            "--client",
            "codex",
            "--config-path",
            str(target),
            "--config",
            str(graph_config),
            "--json",
        ),
        "failed",
        1,
    )


def test_mcp_install_refuses_a_graph_config_that_does_not_exist(tmp_path: Path) -> None:
    data = report(
        cli(
            "mcp-install",
            "--client",
            "cursor",
            "--config-path",
            str(tmp_path / "m.json"),
            "--config",
            str(tmp_path / "nope.json"),
            "--json",
        ),
        "failed",
        1,
    )
    assert checks(data)["graph-config"] == (
        "fail",
        f"{tmp_path / 'nope.json'} cannot be served: CG_CONFIG_INVALID: Cannot read a valid "
        f"bounded JSON configuration file; {tmp_path / 'nope.json'} does not exist; the client "
        "configuration was not touched",
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--client", "emacs"],
        [],
        ["--client", "cursor", "--name", "bad name"],
        ["--client", "cursor", "--name", ""],
    ],
)
def test_mcp_install_usage_errors(argv: list[str]) -> None:
    run = cli("mcp-install", *argv)
    assert run.status == 2
    assert run.stderr.startswith("usage: ")


# --- explain ------------------------------------------------------------------------------------


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
