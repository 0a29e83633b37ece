"""The MCP clients ``mcp-install`` and ``mcp-uninstall`` know (the ``--client`` names).

Each client is described by where its configuration lives (the location its documentation
gives), the member that holds its servers, the file format, the shape of a stdio entry and how
the entry refers to an environment variable. The table is a module of its own so that the CLI
declares its options without importing the editors (``mcp_install``, ``client_files``): a graph
command's start-up never pays for them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal

__all__ = ["CLIENTS", "ENV_NAME", "Client"]

#: An environment variable name (the configuration's ``EnvVarName``).
ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class Client:
    """One MCP client (a plain class: the CLI imports this table at start-up, where making a
    dataclass would cost about a millisecond)."""

    __slots__ = ("default_path", "env_reference", "extra", "key", "label", "syntax")

    def __init__(
        self,
        label: str,
        key: str,
        syntax: Literal["json", "jsonc", "toml"],
        default_path: Callable[[], Path],
        extra: tuple[tuple[str, str], ...] = (),
        env_reference: str | None = None,
    ) -> None:
        self.label = label
        self.key = key  # the member (JSON) or table (TOML) that holds the servers
        self.syntax = syntax
        self.default_path = default_path
        self.extra = extra  # fields a stdio entry carries before "command"
        # How an entry forwards variable NAME: "env" with this value template, "env_vars" (TOML
        # list of names), or None when the client documents no way to refer to a variable.
        self.env_reference = env_reference


def _config_home() -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return Path(xdg) if xdg else Path.home() / ".config"


def _appdata() -> Path:
    appdata = os.environ.get("APPDATA")
    return Path(appdata) if appdata else Path.home() / "AppData" / "Roaming"


def _claude_desktop_path() -> Path:
    # https://modelcontextprotocol.io/quickstart/user (claude_desktop_config.json)
    if sys.platform == "darwin":
        return (
            Path.home()
            / "Library"
            / "Application Support"
            / "Claude"
            / "claude_desktop_config.json"
        )
    if sys.platform == "win32":
        return _appdata() / "Claude" / "claude_desktop_config.json"
    return _config_home() / "Claude" / "claude_desktop_config.json"


def _codex_path() -> Path:
    # https://developers.openai.com/codex/mcp ($CODEX_HOME/config.toml, default ~/.codex)
    codex_home = os.environ.get("CODEX_HOME")
    return (Path(codex_home) if codex_home else Path.home() / ".codex") / "config.toml"


def _windsurf_path() -> Path:
    # https://docs.windsurf.com/windsurf/cascade/mcp (~/.codeium/windsurf/mcp_config.json)
    return Path.home() / ".codeium" / "windsurf" / "mcp_config.json"


def _zed_path() -> Path:
    # https://zed.dev/docs/configuring-zed (the user settings file; custom context servers:
    # https://zed.dev/docs/ai/mcp)
    if sys.platform == "win32":
        return _appdata() / "Zed" / "settings.json"
    return _config_home() / "zed" / "settings.json"


CLIENTS: Final = {
    "claude-desktop": Client(
        # The config file has no variable references: an env value is taken literally.
        "Claude Desktop",
        "mcpServers",
        "json",
        _claude_desktop_path,
    ),
    "claude-code": Client(
        # https://code.claude.com/docs/en/mcp -- project scope: .mcp.json at the project root;
        # "${VAR}" is expanded in command, args and env.
        "Claude Code",
        "mcpServers",
        "json",
        lambda: Path(".mcp.json"),
        extra=(("type", "stdio"),),
        env_reference="${%s}",
    ),
    "cursor": Client(
        # https://cursor.com/docs/context/mcp -- project .cursor/mcp.json; "${env:NAME}".
        "Cursor",
        "mcpServers",
        "json",
        lambda: Path(".cursor") / "mcp.json",
        env_reference="${env:%s}",
    ),
    "vscode": Client(
        # https://code.visualstudio.com/docs/copilot/reference/mcp-configuration -- workspace
        # .vscode/mcp.json, "servers", stdio entries need "type"; the file is JSON with comments
        # and predefined variables such as "${env:NAME}"
        # (https://code.visualstudio.com/docs/reference/variables-reference).
        "VS Code",
        "servers",
        "jsonc",
        lambda: Path(".vscode") / "mcp.json",
        extra=(("type", "stdio"),),
        env_reference="${env:%s}",
    ),
    "windsurf": Client(
        # https://docs.windsurf.com/windsurf/cascade/mcp -- user file; "${env:NAME}" is
        # interpolated in command, args and env.
        "Windsurf",
        "mcpServers",
        "json",
        _windsurf_path,
        env_reference="${env:%s}",
    ),
    "gemini": Client(
        # https://geminicli.com/docs/tools/mcp-server -- project .gemini/settings.json (the
        # scope `gemini mcp add` writes by default), "mcpServers"; settings strings expand
        # "$VAR" and "${VAR}" (https://geminicli.com/docs/cli/configuration). Gemini CLI reads
        # settings through strip-json-comments (packages/cli/src/config/settings.ts): comments.
        "Gemini CLI",
        "mcpServers",
        "jsonc",
        lambda: Path(".gemini") / "settings.json",
        env_reference="${%s}",
    ),
    "zed": Client(
        # https://zed.dev/docs/ai/mcp -- "context_servers" in the user settings.json (JSON with
        # comments and trailing commas); no variable references are documented.
        "Zed",
        "context_servers",
        "jsonc",
        _zed_path,
        extra=(("source", "custom"),),
    ),
    "codex": Client(
        # https://developers.openai.com/codex/mcp -- [mcp_servers.NAME]; env_vars lists the
        # variables forwarded from Codex's own environment.
        "Codex",
        "mcp_servers",
        "toml",
        _codex_path,
        env_reference="env_vars",
    ),
}
