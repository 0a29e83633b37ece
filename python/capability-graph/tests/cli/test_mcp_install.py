"""``capability-graph mcp-install`` / ``mcp-uninstall`` on the clients' configuration files: the
entry added, everything else kept, a file it cannot edit never touched."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from capability_graph_testing.surfaces import (
    CLI,
    cli,
    maintenance_report,
    mcp_install,
    report_checks,
    usage_error,
    write_graph,
)


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
    data = maintenance_report(mcp_install(client, target, graph_config), "ok", 0)
    assert report_checks(data)["graph-config"][0] == "ok"
    installed = json.loads(target.read_text(encoding="utf-8"))
    assert installed == {key: {"capability-graph": entry(graph_config, stdio_type=stdio_type)}}
    # Again: identical entry, nothing to do.
    before = target.read_bytes()
    data = maintenance_report(mcp_install(client, target, graph_config), "ok", 0)
    assert "already has the server" in report_checks(data)["server"][1]
    assert target.read_bytes() == before
    # Another graph under the same name: a conflict, the file is left as it was.
    other = write_graph(tmp_path / "other")
    maintenance_report(mcp_install(client, target, other), "conflict", 3)
    assert target.read_bytes() == before
    # Under another name it is added next to the first.
    maintenance_report(mcp_install(client, target, other, "--name", "other_graph"), "ok", 0)
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
    maintenance_report(
        mcp_install("claude-desktop", target, graph_config),
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
    data = maintenance_report(
        mcp_install("cursor", target, graph_config),
        "failed",
        1,
    )
    assert report_checks(data)["client-config"][0] == "fail"
    assert target.read_text(encoding="utf-8") == content
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["mcp.json"]


def test_mcp_install_dry_run(tmp_path: Path, graph_config: Path) -> None:
    target = tmp_path / "x" / "mcp.json"
    data = maintenance_report(
        mcp_install("vscode", target, graph_config, "--dry-run"),
        "planned",
        0,
    )
    assert "Would add the server capability-graph" in report_checks(data)["server"][1]
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
    maintenance_report(
        mcp_install("cursor", link, graph_config),
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
    maintenance_report(mcp_install("codex", target, graph_config), "ok", 0)
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
    maintenance_report(mcp_install("codex", target, graph_config), "ok", 0)
    assert target.read_bytes() == before
    other = write_graph(tmp_path / "other")
    maintenance_report(mcp_install("codex", target, other), "conflict", 3)
    assert target.read_bytes() == before


def test_mcp_install_codex_new_file_and_inline_table(tmp_path: Path, graph_config: Path) -> None:
    target = tmp_path / "codex" / "config.toml"
    maintenance_report(
        mcp_install("codex", target, graph_config),
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
    maintenance_report(
        mcp_install("codex", inline_target, graph_config),
        "ok",
        0,
    )
    servers = tomlkit.parse(inline_target.read_text(encoding="utf-8")).unwrap()["mcp_servers"]
    assert servers == {"a": {"command": "x"}, "capability-graph": entry(graph_config)}


def test_mcp_install_codex_invalid_toml_is_untouched(tmp_path: Path, graph_config: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_text("[mcp_servers\nbroken = ", encoding="utf-8")
    maintenance_report(
        mcp_install("codex", target, graph_config),
        "failed",
        1,
    )
    assert target.read_text(encoding="utf-8") == "[mcp_servers\nbroken = "
    target.write_text("mcp_servers = 3\n", encoding="utf-8")
    maintenance_report(
        mcp_install("codex", target, graph_config),
        "failed",
        1,
    )


def test_mcp_install_refuses_a_graph_config_that_does_not_exist(tmp_path: Path) -> None:
    data = maintenance_report(
        mcp_install("cursor", tmp_path / "m.json", tmp_path / "nope.json"),
        "failed",
        1,
    )
    assert report_checks(data)["graph-config"] == (
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


def test_an_env_name_that_is_not_a_variable_name_names_the_format_whole(config: Path) -> None:
    run = cli("mcp-install", "--client", "cursor", "--env", "1BAD", "--config", str(config))
    usage_error(
        run,
        "mcp-install",
        "argument --env: must be an environment variable name: "
        "A-Z a-z _, then up to 127 of A-Z a-z 0-9 _",
    )


def _listed(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["id"], c["status"]) for c in data["checks"]]


def test_the_checks_of_mcp_install_and_uninstall_are_listed_in_one_order(
    tmp_path: Path, graph_config: Path
) -> None:
    # [CG-MAINT-20]: graph-config, env (with --env), client-config, server.
    target = tmp_path / "client.json"
    data = maintenance_report(mcp_install("cursor", target, graph_config, "--env", "K"), "ok", 0)
    assert _listed(data) == [
        ("graph-config", "ok"),
        ("env", "ok"),
        ("client-config", "ok"),
        ("server", "ok"),
    ]
    uninstall = ("mcp-uninstall", "--client", "cursor", "--config-path", str(target), "--json")
    data = maintenance_report(cli(*uninstall), "ok", 0)
    assert _listed(data) == [("client-config", "ok"), ("server", "ok")]
    # No file at all: nothing to remove, the same two checks.
    data = maintenance_report(cli(*uninstall[:4], str(tmp_path / "none.json"), "--json"), "ok", 0)
    assert _listed(data) == [("client-config", "ok"), ("server", "ok")]


def test_a_dry_run_that_would_write_nothing_reports_ok(tmp_path: Path, graph_config: Path) -> None:
    # [CG-MAINT-19]: planned only when a real run would write the file.
    target = tmp_path / "client.json"
    maintenance_report(mcp_install("cursor", target, graph_config), "ok", 0)
    before = target.read_bytes()
    maintenance_report(mcp_install("cursor", target, graph_config, "--dry-run"), "ok", 0)
    assert target.read_bytes() == before
    uninstall = ("mcp-uninstall", "--client", "cursor", "--config-path", str(target), "--json")
    maintenance_report(cli(*uninstall, "--dry-run"), "planned", 0)
    maintenance_report(cli(*uninstall), "ok", 0)
    after = target.read_bytes()
    maintenance_report(cli(*uninstall, "--dry-run"), "ok", 0)
    assert target.read_bytes() == after


#: Rounds of two concurrent ``mcp-install`` processes (CG-MAINT-22); stress-like runs of
#: 40 rounds are in docs/reliability.md (the test keeps to seconds).
RACE_ROUNDS = 8


@pytest.mark.slow
def test_concurrent_installs_into_one_file_lose_no_entry(
    tmp_path: Path, graph_config: Path
) -> None:
    # CG-MAINT-22: two edits of one client file at once never both act on the same reading; each
    # reports ok only when its entry is in the file. Other servers make the file slower to edit,
    # so that the edits overlap.
    others = {f"other{i}": {"command": "x", "args": ["y"] * 8} for i in range(200)}
    lost: list[tuple[int, str]] = []
    for round_ in range(RACE_ROUNDS):
        target = tmp_path / f"round{round_}" / "mcp.json"
        target.parent.mkdir()
        target.write_text(json.dumps({"mcpServers": others}), encoding="utf-8")
        runs = [
            subprocess.Popen(
                [
                    *CLI,
                    "mcp-install",
                    *("--client", "cursor", "--config-path", str(target)),
                    *("--config", str(graph_config), "--name", name, "--json"),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("alpha", "beta")
        ]
        outcomes = [
            (name, *run.communicate(timeout=60))
            for name, run in zip(("alpha", "beta"), runs, strict=True)
        ]
        servers = json.loads(target.read_text(encoding="utf-8"))["mcpServers"]
        for name, out, err in outcomes:
            assert err == ""
            status = json.loads(out)["status"]
            assert status in ("ok", "conflict")
            if status == "ok" and name not in servers:
                lost.append((round_, name))
        assert sorted(path.name for path in target.parent.iterdir()) == ["mcp.json"]  # no lock
    assert lost == []


def test_an_edit_held_by_another_is_a_conflict_and_the_file_is_untouched(
    tmp_path: Path, graph_config: Path
) -> None:
    # CG-MAINT-22: the lock FILE.lock of another edit is waited for (5 s), then a conflict.
    target = tmp_path / "mcp.json"
    target.write_text('{"mcpServers": {}}\n', encoding="utf-8")
    lock = tmp_path / "mcp.json.lock"
    lock.write_text("", encoding="utf-8")
    before = target.read_bytes()
    data = maintenance_report(mcp_install("cursor", target, graph_config), "conflict", 3)
    assert report_checks(data)["client-config"] == (
        "fail",
        f"{target} is being edited by another process: {lock} exists (remove it if no edit is "
        "running); left untouched",
    )
    assert target.read_bytes() == before
    assert lock.exists()  # another's lock is never taken away
    lock.unlink()
    maintenance_report(mcp_install("cursor", target, graph_config), "ok", 0)
    assert lock.exists() is False


@pytest.mark.parametrize("text", ["", "\n\n", "\ufeff", " \t\r\n"])
@pytest.mark.parametrize("client", ["cursor", "vscode"])
def test_an_existing_json_file_holding_no_value_is_left_untouched(
    tmp_path: Path, graph_config: Path, text: str, client: str
) -> None:
    target = tmp_path / "client.json"
    target.write_bytes(text.encode("utf-8"))
    installed = maintenance_report(mcp_install(client, target, graph_config), "failed", 1)
    comments = " (with comments)" if client == "vscode" else ""
    assert installed["checks"][-1] == {
        "id": "client-config",
        "status": "fail",
        "message": f"{target}: not valid JSON{comments}: left untouched",
    }
    argv = ["--client", client, "--config-path", str(target), "--json"]
    maintenance_report(cli("mcp-uninstall", *argv), "failed", 1)
    assert target.read_bytes() == text.encode("utf-8")
