"""mcp-install and mcp-uninstall per client: golden files, --env, --force, uninstall.

Golden files (``golden/mcp_install/CASE/``): ``input.*`` is a client's file as a person wrote it,
``expected.*`` the file after ``mcp-install`` (``@PYTHON@`` and ``@CONFIG@`` stand for the
interpreter and the graph configuration), ``uninstalled.*`` (when present) the file after
``mcp-uninstall``; without it, uninstalling restores the input byte for byte.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from capability_graph_testing.surfaces import (
    cli,
    cli_process,
    maintenance_report,
    mcp_install,
    mcp_uninstall,
    report_checks,
    write_graph,
)

GOLDEN = Path(__file__).parent / "golden" / "mcp_install"

# case: (client, the client's file name, extra mcp-install arguments)
CASES: dict[str, tuple[str, str, list[str]]] = {
    "claude-desktop": ("claude-desktop", "claude_desktop_config.json", []),
    "claude-code": ("claude-code", ".mcp.json", ["--env", "OPENAI_API_KEY"]),
    "cursor": ("cursor", "mcp.json", ["--env", "EXAMPLE_KEY"]),
    "vscode": ("vscode", "mcp.json", ["--env", "OPENAI_API_KEY", "--env", "HTTPS_PROXY"]),
    "windsurf": ("windsurf", "mcp_config.json", ["--env", "OPENAI_API_KEY"]),
    "gemini": ("gemini", "settings.json", ["--env", "OPENAI_API_KEY"]),
    "zed": ("zed", "settings.json", []),
    "codex": ("codex", "config.toml", ["--env", "OPENAI_API_KEY"]),
    "codex-inline": ("codex", "config.toml", []),
}


def golden(case: str, stem: str) -> Path | None:
    found = sorted((GOLDEN / case).glob(f"{stem}.*"))
    return found[0] if found else None


def fill(template: bytes, config: Path) -> bytes:
    text = template.decode("utf-8")
    text = text.replace("@PYTHON@", json.dumps(sys.executable)[1:-1])
    return text.replace("@CONFIG@", json.dumps(str(config))[1:-1]).encode("utf-8")


@pytest.fixture
def graph_config(tmp_path: Path) -> Path:
    return write_graph(tmp_path / "graph")


@pytest.mark.parametrize("case", sorted(CASES))
def test_install_matches_the_golden_file_and_uninstall_restores_it(
    tmp_path: Path, graph_config: Path, case: str
) -> None:
    client, file_name, extra = CASES[case]
    source = golden(case, "input")
    assert source is not None
    target = tmp_path / "client" / file_name
    target.parent.mkdir()
    original = source.read_bytes()
    target.write_bytes(original)
    data = maintenance_report(mcp_install(client, target, graph_config, *extra), "ok", 0)
    assert report_checks(data)["server"] == ("ok", f"Added the server capability-graph to {target}")
    expected = golden(case, "expected")
    assert expected is not None
    assert target.read_bytes() == fill(expected.read_bytes(), graph_config)
    # Installing again changes nothing.
    data = maintenance_report(mcp_install(client, target, graph_config, *extra), "ok", 0)
    assert report_checks(data)["server"][1].endswith(
        f"already has the server capability-graph in {target}"
    )
    assert target.read_bytes() == fill(expected.read_bytes(), graph_config)
    # Uninstalling removes exactly our entry.
    data = maintenance_report(mcp_uninstall(client, target), "ok", 0)
    assert report_checks(data)["server"] == (
        "ok",
        f"Removed the server capability-graph from {target}",
    )
    uninstalled = golden(case, "uninstalled")
    assert target.read_bytes() == (original if uninstalled is None else uninstalled.read_bytes())
    assert sorted(p.name for p in target.parent.iterdir()) == [file_name]


@pytest.mark.parametrize("client", ["claude-desktop", "zed"])
def test_env_is_refused_where_the_client_cannot_refer_to_a_variable(
    tmp_path: Path, graph_config: Path, client: str
) -> None:
    target = tmp_path / "settings.json"
    target.write_text("{}\n", encoding="utf-8")
    data = maintenance_report(
        mcp_install(client, target, graph_config, "--env", "OPENAI_API_KEY"), "failed", 1
    )
    label = {"claude-desktop": "Claude Desktop", "zed": "Zed"}[client]
    assert report_checks(data)["env"] == (
        "fail",
        f"{label} has no documented way to refer to an environment variable: --env cannot be "
        "forwarded (set the variable in the entry's env yourself)",
    )
    assert target.read_text(encoding="utf-8") == "{}\n"


OPENAI = {
    "executor": "openai",
    "baseUrl": "http://127.0.0.1:9/v1",
    "model": "m",
    "apiKeyEnv": "CG_TEST_KEY",
}


def test_a_variable_the_executor_needs_and_that_is_not_forwarded_is_a_warning(
    tmp_path: Path,
) -> None:
    config = write_graph(tmp_path / "graph", model=OPENAI)
    target = tmp_path / "mcp.json"
    data = maintenance_report(mcp_install("cursor", target, config), "ok", 0)
    assert data["warnings"] == [
        "The openai executor reads the environment variable CG_TEST_KEY (apiKeyEnv), which "
        "Cursor does not pass to the server: add --env CG_TEST_KEY",
        "Restart Cursor to load the server",
    ]
    other = tmp_path / "other.json"
    data = maintenance_report(mcp_install("cursor", other, config, "--env", "CG_TEST_KEY"), "ok", 0)
    assert data["warnings"] == ["Restart Cursor to load the server"]
    entry = json.loads(other.read_text(encoding="utf-8"))["mcpServers"]["capability-graph"]
    assert entry["env"] == {"CG_TEST_KEY": "${env:CG_TEST_KEY}"}


def test_the_value_of_a_forwarded_variable_is_never_written(
    tmp_path: Path, graph_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CG_TEST_KEY", "sk-SECRET-4f1c")
    for client, name in (("vscode", "mcp.json"), ("codex", "config.toml")):
        target = tmp_path / client / name
        run = mcp_install(client, target, graph_config, "--env", "CG_TEST_KEY")
        maintenance_report(run, "ok", 0)
        assert "sk-SECRET" not in target.read_text(encoding="utf-8")
        assert "sk-SECRET" not in run.stdout


@pytest.mark.parametrize("name", ["1ABC", "A-B", "", "A" * 129])
def test_env_must_be_a_variable_name(name: str) -> None:
    run = cli("mcp-install", "--client", "cursor", "--env", name)
    assert run.status == 2
    assert run.stderr.startswith("usage: ")


def test_force_replaces_our_older_entry_and_keeps_a_backup(tmp_path: Path) -> None:
    first = write_graph(tmp_path / "first")
    second = write_graph(tmp_path / "second")
    target = tmp_path / "mcp.json"
    maintenance_report(mcp_install("cursor", target, first), "ok", 0)
    os.chmod(target, 0o600)
    before = target.read_bytes()
    data = maintenance_report(mcp_install("cursor", target, second), "conflict", 3)
    assert report_checks(data)["server"] == (
        "fail",
        f"Cursor has an older entry for the server capability-graph in {target}: not "
        "overwritten (--force replaces it and keeps a backup)",
    )
    assert target.read_bytes() == before
    planned = maintenance_report(
        mcp_install("cursor", target, second, "--force", "--dry-run"), "planned", 0
    )
    assert report_checks(planned)["server"][1] == (
        f"Would replace the server capability-graph in {target} (keeping a backup)"
    )
    assert target.read_bytes() == before
    data = maintenance_report(mcp_install("cursor", target, second, "--force"), "ok", 0)
    backup = tmp_path / "mcp.json.bak"
    assert report_checks(data)["backup"] == ("ok", f"Kept the previous file as {backup}")
    assert report_checks(data)["server"] == (
        "ok",
        f"Replaced the server capability-graph in {target}",
    )
    assert backup.read_bytes() == before
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600  # it may hold secrets
    args = json.loads(target.read_text(encoding="utf-8"))["mcpServers"]["capability-graph"]["args"]
    assert args[-1] == str(second)
    # A second replacement never overwrites the first backup.
    replaced = target.read_bytes()
    maintenance_report(mcp_install("cursor", target, first, "--force"), "ok", 0)
    assert backup.read_bytes() == before
    assert (tmp_path / "mcp.json.bak.2").read_bytes() == replaced


def test_force_never_replaces_a_server_that_is_not_ours(tmp_path: Path, graph_config: Path) -> None:
    target = tmp_path / "mcp.json"
    target.write_text(
        '{"mcpServers": {"capability-graph": {"command": "npx", "args": ["other"]}}}',
        encoding="utf-8",
    )
    before = target.read_bytes()
    data = maintenance_report(mcp_install("cursor", target, graph_config, "--force"), "conflict", 3)
    assert "another server named capability-graph" in report_checks(data)["server"][1]
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph", "mcp.json"]


def test_uninstall_never_removes_a_server_that_is_not_ours(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_text('[mcp_servers.capability-graph]\ncommand = "npx"\n', encoding="utf-8")
    data = maintenance_report(mcp_uninstall("codex", target), "conflict", 3)
    assert report_checks(data)["server"] == (
        "fail",
        f"The server capability-graph in {target} was not installed by capability-graph: "
        "not removed",
    )
    assert target.read_text(encoding="utf-8") == '[mcp_servers.capability-graph]\ncommand = "npx"\n'


def test_uninstall_without_the_entry_or_the_file_changes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "mcp.json"
    data = maintenance_report(mcp_uninstall("vscode", missing), "ok", 0)
    assert report_checks(data)["server"] == (
        "ok",
        f"VS Code has no server capability-graph in {missing}: nothing to remove",
    )
    assert not missing.parent.exists()
    present = tmp_path / "mcp.json"
    present.write_text('{"servers": {"x": {"command": "y"}}}', encoding="utf-8")
    maintenance_report(mcp_uninstall("vscode", present, "--name", "other"), "ok", 0)
    assert present.read_text(encoding="utf-8") == '{"servers": {"x": {"command": "y"}}}'


def test_uninstall_dry_run_plans_and_writes_nothing(tmp_path: Path, graph_config: Path) -> None:
    target = tmp_path / "settings.json"
    maintenance_report(mcp_install("gemini", target, graph_config), "ok", 0)
    before = target.read_bytes()
    data = maintenance_report(mcp_uninstall("gemini", target, "--dry-run"), "planned", 0)
    assert report_checks(data)["server"] == (
        "ok",
        f"Would remove the server capability-graph from {target}",
    )
    assert target.read_bytes() == before


def test_uninstall_of_an_uneditable_file_is_failed_and_untouched(tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    target.write_text('{"mcpServers": {} // no comments in Cursor\n}', encoding="utf-8")
    data = maintenance_report(mcp_uninstall("cursor", target), "failed", 1)
    assert report_checks(data)["client-config"] == (
        "fail",
        f"{target}: not valid JSON: left untouched",
    )


def test_new_clients_default_paths(
    tmp_path: Path, graph_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for client in ("claude-code", "windsurf", "gemini", "zed"):
        run = cli("mcp-install", "--client", client, "--config", str(graph_config))
        assert run.status == 0, run
    assert "capability-graph" in json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    windsurf = tmp_path / "home" / ".codeium" / "windsurf" / "mcp_config.json"
    assert "capability-graph" in json.loads(windsurf.read_text())["mcpServers"]
    gemini = tmp_path / ".gemini" / "settings.json"
    assert "capability-graph" in json.loads(gemini.read_text())["mcpServers"]
    if sys.platform.startswith("linux"):
        zed = tmp_path / "xdg" / "zed" / "settings.json"
        entry = json.loads(zed.read_text())["context_servers"]["capability-graph"]
        assert entry["source"] == "custom"


def test_a_graph_configuration_that_cannot_be_opened_is_refused_before_the_client_file(
    tmp_path: Path,
) -> None:
    config = tmp_path / "capability-graph.json"
    config.write_text('{"providers": [{"path": "gone.json"}]}', encoding="utf-8")
    target = tmp_path / "mcp.json"
    target.write_text("{}", encoding="utf-8")
    data = maintenance_report(mcp_install("cursor", target, config), "failed", 1)
    assert report_checks(data)["graph-config"] == (
        "fail",
        f"{config} cannot be served: CG_CONFIG_INVALID: /providers/0/path is not a readable "
        "regular file; the client configuration was not touched",
    )
    assert "server" not in report_checks(data)
    assert target.read_text(encoding="utf-8") == "{}"


def test_a_graph_configuration_with_unknown_keys_is_refused_naming_them(tmp_path: Path) -> None:
    config = tmp_path / "capability-graph.json"
    config.write_text('{"providers": [], "modle": {}}', encoding="utf-8")
    target = tmp_path / "mcp.json"
    data = maintenance_report(mcp_install("cursor", target, config), "failed", 1)
    assert report_checks(data)["graph-config"] == (
        "fail",
        f"{config} cannot be served: CG_CONFIG_INVALID: / has a key that is not allowed "
        "(allowed: providers, scope, documents, budgets, model); unknown keys: /modle; "
        "the client configuration was not touched",
    )
    assert not target.exists()


def test_crlf_line_endings_and_a_byte_order_mark_are_kept(
    tmp_path: Path, graph_config: Path
) -> None:
    target = tmp_path / "mcp.json"
    original = '\ufeff{\r\n  "mcpServers": {\r\n    "x": {"command": "y"}\r\n  }\r\n}\r\n'
    target.write_bytes(original.encode("utf-8"))
    maintenance_report(mcp_install("cursor", target, graph_config), "ok", 0)
    text = target.read_bytes().decode("utf-8")
    assert text.startswith('\ufeff{\r\n  "mcpServers": {\r\n    "x": {"command": "y"},\r\n')
    assert text.count("\n") == text.count("\r\n")
    maintenance_report(mcp_uninstall("cursor", target), "ok", 0)
    assert target.read_bytes().decode("utf-8") == original


def test_force_through_a_symbolic_link_backs_up_and_edits_the_real_file(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "config.toml"
    real.parent.mkdir()
    first, second = write_graph(tmp_path / "first"), write_graph(tmp_path / "second")
    maintenance_report(mcp_install("codex", real, first), "ok", 0)
    before = real.read_bytes()
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    maintenance_report(mcp_install("codex", link, second, "--force"), "ok", 0)
    assert link.is_symlink()
    assert (real.parent / "config.toml.bak").read_bytes() == before
    assert str(second) in real.read_text(encoding="utf-8")


def test_uninstall_of_our_inline_entry_with_fields_the_user_added(tmp_path: Path) -> None:
    import tomllib

    target = tmp_path / "config.toml"
    ours = '["-m", "capability_graph.cli", "mcp", "--config", "/x.json"]'
    target.write_text(
        f'mcp_servers = {{ a = {{ command = "x" }}, capability-graph = {{ command = "p", '
        f"args = {ours}, startup_timeout_sec = 20 }} }}\n",
        encoding="utf-8",
    )
    maintenance_report(mcp_uninstall("codex", target), "ok", 0)
    assert tomllib.loads(target.read_text(encoding="utf-8")) == {
        "mcp_servers": {"a": {"command": "x"}}
    }


# --- regressions: these exited 70 ----------------------------------------------------------------


def test_a_lone_surrogate_escape_in_the_client_file_is_kept_as_written(
    tmp_path: Path, graph_config: Path
) -> None:
    target = tmp_path / "mcp.json"
    target.write_text('{"x": "\\ud800"}', encoding="utf-8")
    done = cli_process(
        "mcp-install", "--client", "cursor", "--config-path", str(target),
        "--config", str(graph_config), "--json",
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    text = target.read_text(encoding="utf-8")
    assert text.startswith('{"x": "\\ud800", "mcpServers": {')
    assert json.loads(text)["mcpServers"]["capability-graph"]["args"][-1] == str(graph_config)


def test_codex_servers_separated_by_another_table_get_one_more_table(
    tmp_path: Path, graph_config: Path
) -> None:
    import tomllib

    target = tmp_path / "config.toml"
    original = (
        '[mcp_servers.a]\ncommand = "x"\n\n[other]\nk = 1\n\n[mcp_servers.b]\ncommand = "y"\n'
    )
    target.write_text(original, encoding="utf-8")
    done = cli_process(
        "mcp-install", "--client", "codex", "--config-path", str(target),
        "--config", str(graph_config), "--json",
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    text = target.read_text(encoding="utf-8")
    assert text.startswith(original)
    servers = tomllib.loads(text)["mcp_servers"]
    assert list(servers) == ["a", "b", "capability-graph"]
    assert servers["capability-graph"]["command"] == sys.executable
