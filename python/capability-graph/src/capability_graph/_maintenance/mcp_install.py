"""``mcp-install`` and ``mcp-uninstall``: this graph's MCP server in an MCP client's configuration.

Why one module of this size: the two commands; the steps (lock, check, splice, backup) are only
theirs, the editors are in ``client_files`` and the client table is in ``clients`` (which the
CLI reads to declare ``--client`` without importing the editors).

The edit itself is a splice into the file's text
(:mod:`._client_files`); a write replaces the file atomically and only if it is still the file
that was read, and ``--force`` keeps the previous file next to it first.

Report checks, in this order ([CG-MAINT-20]): ``graph-config`` (install: the graph
configuration opens), ``env`` (install with ``--env``: the client can forward the variables asked
for), ``client-config`` (the client's file can be read and edited), ``backup`` (``--force``:
where the previous file is kept), ``server`` (the outcome). The report ends with the first check
that fails.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Final, Literal

from .._core.config import FileTooLarge, read_bounded_file
from .._core.files import (
    Clobbered,
    Locked,
    create_new,
    edit_lock,
    file_identity,
    replace_existing,
    temporary_file,
)
from .client_files import CannotEdit, JsonDocument, TomlDocument
from .clients import CLIENTS, Client
from .report import Report

__all__ = ["CLIENTS", "Client", "install", "is_ours", "server_entry", "uninstall"]

PROG: Final = "capability-graph"
#: The largest MCP client configuration file edited.
MAX_CLIENT_CONFIG: Final = 16 * 1024 * 1024
_MAX_BACKUPS: Final = 100


def server_entry(client: str, config: str, env: tuple[str, ...] = ()) -> dict[str, Any]:
    """The server entry ``mcp-install`` writes for ``client``, serving ``config``."""
    spec = CLIENTS[client]
    entry: dict[str, Any] = dict(spec.extra)
    entry["command"] = sys.executable
    entry["args"] = ["-m", "capability_graph.cli", "mcp", "--config", os.path.abspath(config)]
    if env:
        assert spec.env_reference is not None
        if spec.env_reference == "env_vars":
            entry["env_vars"] = list(env)
        else:
            entry["env"] = {name: spec.env_reference % name for name in env}
    return entry


def is_ours(entry: Any) -> bool:
    """Whether a client's entry starts this package's MCP server (an entry we may replace)."""
    if not isinstance(entry, dict):
        return False
    args = entry.get("args")
    if not isinstance(args, list):
        return False
    # "-m capability_graph.cli mcp ...": the module, then the mcp command.
    return any(
        module == "capability_graph.cli" and command == "mcp" for module, command in pairwise(args)
    )


# --- the two commands ----------------------------------------------------------------------------


def install(
    report: Report,
    client_name: str,
    *,
    config: str,
    client_config: str | None,
    name: str,
    env: tuple[str, ...],
    force: bool,
    dry_run: bool,
) -> None:
    client = CLIENTS[client_name]
    model = _check_graph(report, config)
    if model is None:
        return
    if env and client.env_reference is None:
        report.check(
            "env",
            "fail",
            f"{client.label} has no documented way to refer to an environment variable: "
            "--env cannot be forwarded (set the variable in the entry's env yourself)",
        )
        report.status = "failed"
        return
    if env:
        report.check("env", "ok", f"Forwarding by reference: {', '.join(env)}")
    _warn_unforwarded(report, model, env, client.label)
    _under_lock(
        report,
        client,
        client_config,
        dry_run,
        lambda: _install_entry(
            report, client_name, config, client_config, name, env, force, dry_run
        ),
    )


def _install_entry(
    report: Report,
    client_name: str,
    config: str,
    client_config: str | None,
    name: str,
    env: tuple[str, ...],
    force: bool,
    dry_run: bool,
) -> None:
    client = CLIENTS[client_name]
    target = _ClientFile.open(report, client, client_config, creating=True)
    if target is None:
        return
    entry = server_entry(client_name, config, env)
    existing = target.entry(report, name)
    if existing is _UNEDITABLE:
        return
    if existing is None:
        target.write(report, name, lambda doc: doc.add(name, entry), dry_run=dry_run, verb="add")
        return
    if existing == entry:
        report.check(
            "server", "ok", f"{client.label} already has the server {name} in {target.shown}"
        )
        return
    if not is_ours(existing):
        report.check(
            "server",
            "fail",
            f"{client.label} has another server named {name} in {target.shown}: not overwritten "
            "(choose another --name, or remove that entry)",
        )
        report.status = "conflict"
        return
    if not force:
        report.check(
            "server",
            "fail",
            f"{client.label} has an older entry for the server {name} in {target.shown}: not "
            "overwritten (--force replaces it and keeps a backup)",
        )
        report.status = "conflict"
        return
    target.write(
        report, name, lambda doc: doc.replace(name, entry), dry_run=dry_run, verb="replace"
    )


def uninstall(
    report: Report, client_name: str, *, client_config: str | None, name: str, dry_run: bool
) -> None:
    client = CLIENTS[client_name]
    _under_lock(
        report,
        client,
        client_config,
        dry_run,
        lambda: _uninstall_entry(report, client, client_config, name, dry_run),
    )


def _uninstall_entry(
    report: Report, client: Client, client_config: str | None, name: str, dry_run: bool
) -> None:
    target = _ClientFile.open(report, client, client_config, creating=False)
    if target is None:
        return
    existing = target.entry(report, name) if target.text is not None else None
    if existing is _UNEDITABLE:
        return
    if existing is None:
        report.check(
            "server",
            "ok",
            f"{client.label} has no server {name} in {target.shown}: nothing to remove",
        )
        return
    if not is_ours(existing):
        report.check(
            "server",
            "fail",
            f"The server {name} in {target.shown} was not installed by {PROG}: not removed",
        )
        report.status = "conflict"
        return
    target.write(report, name, lambda doc: doc.remove(name), dry_run=dry_run, verb="remove")


# --- steps ---------------------------------------------------------------------------------------


def _under_lock(
    report: Report, client: Client, given: str | None, dry_run: bool, edit: Callable[[], None]
) -> None:
    """Run ``edit`` (reading the client's file to writing it) under the file's edit lock
    ([CG-MAINT-22]), so that a concurrent edit cannot read the file before this one wrote it;
    a lock held too long by another edit is a ``conflict``. ``--dry-run`` writes nothing, not
    even the lock."""
    if dry_run:
        edit()
        return
    target = Path(given) if given else client.default_path()
    try:
        with edit_lock(Path(os.path.realpath(target))):
            edit()
    except Locked as busy:
        report.check(
            "client-config",
            "fail",
            f"{target} is being edited by another process: {busy.lock} exists (remove it if "
            "no edit is running); left untouched",
        )
        report.status = "conflict"


def _check_graph(report: Report, config: str) -> dict[str, Any] | None:
    """Open the graph the server will serve; its model section, or None when it cannot open."""
    from .._core.errors import GraphError
    from .._core.load import open_graph
    from .causes import config_facts

    shown = os.path.abspath(config) if config else repr(config)
    try:
        # The steps a server's start runs (the configuration, every source, the scope).
        host = open_graph(config, None, Path.cwd()).config
    except GraphError as error:
        cause = config_facts(config)
        report.check(
            "graph-config",
            "fail",
            f"{shown} cannot be served: {error.code.value}: {error.message}"
            + (f"; {cause}" if cause else "")
            + "; the client configuration was not touched",
        )
        report.status = "failed"
        return None
    report.check("graph-config", "ok", f"The server will serve {shown}")
    return dict(host.model) if host.model is not None else {}


def _warn_unforwarded(
    report: Report, model: dict[str, Any], env: tuple[str, ...], label: str
) -> None:
    variable = model.get("apiKeyEnv")
    if isinstance(variable, str) and variable not in env:
        report.warn(
            f"The {model.get('executor')} executor reads the environment variable {variable} "
            f"(apiKeyEnv), which {label} does not pass to the server: add --env {variable}"
        )


class _Uneditable:
    pass


_UNEDITABLE: Final = _Uneditable()


@dataclass
class _ClientFile:
    client: Client
    shown: str
    real: Path
    text: str | None  # None: the file does not exist yet
    data: bytes
    identity: tuple[int, ...] | None
    mode: int

    @classmethod
    def open(
        cls, report: Report, client: Client, given: str | None, *, creating: bool
    ) -> _ClientFile | None:
        """The client's file (``--config-path``, else the client's default location:
        [CG-MAINT-18]), read; None (and a failed ``client-config`` check) when it cannot be."""
        target = Path(given) if given else client.default_path()
        shown = str(target)
        # Edit the file a symbolic link points to; never replace the link itself.
        real = Path(os.path.realpath(target))
        if not os.path.lexists(real):
            missing = "does not exist yet: it will be created" if creating else "does not exist"
            report.check("client-config", "ok", f"{shown} {missing}")
            return cls(client, shown, real, None, b"", None, 0)
        reason = "is not a readable UTF-8 file"
        try:
            info = os.stat(real)
            data = read_bounded_file(real, MAX_CLIENT_CONFIG)
            text = None if data is None else data.decode("utf-8")
        except FileTooLarge:
            text, reason = None, f"is larger than {MAX_CLIENT_CONFIG // (1024 * 1024)} MiB"
        except (OSError, UnicodeDecodeError):
            text = None
        if text is None or data is None:
            report.check("client-config", "fail", f"{shown} {reason}: left untouched")
            report.status = "failed"
            return None
        opened = cls(client, shown, real, text, data, file_identity(info), info.st_mode & 0o7777)
        try:
            opened.document()  # parses, and its servers member is one object (or absent)
        except CannotEdit as problem:
            opened._cannot(report, problem.reason, check_id="client-config")
            return None
        report.check("client-config", "ok", f"{shown} can be edited")
        return opened

    def document(self) -> JsonDocument | TomlDocument:
        text = self.text or ""
        if self.client.syntax == "toml":
            return TomlDocument(text, self.client.key)  # an empty TOML file is a document
        if self.text is not None and not text.removeprefix("\ufeff").strip(" \t\n\r"):
            # A file that exists but holds no JSON value is not readable JSON (CG-MAINT-8):
            # left untouched, as a missing file is not (that one is created, CG-MAINT-18).
            syntax = " (with comments)" if self.client.syntax == "jsonc" else ""
            raise CannotEdit(f"not valid JSON{syntax}")
        return JsonDocument(text, self.client.key, jsonc=self.client.syntax == "jsonc")

    def entry(self, report: Report, name: str) -> Any:
        try:
            return self.document().entry(name)
        except CannotEdit as problem:
            self._cannot(report, problem.reason)
            return _UNEDITABLE

    def _cannot(self, report: Report, reason: str, *, check_id: str = "server") -> None:
        """A file that cannot be edited safely: ``failed``, left byte-identical. Once the file
        has passed its ``client-config`` check, what remains is the ``server`` edit's."""
        report.check(check_id, "fail", f"{self.shown}: {reason}: left untouched")
        report.status = "failed"

    def write(
        self,
        report: Report,
        name: str,
        edit: Callable[[Any], str],
        *,
        dry_run: bool,
        verb: Literal["add", "replace", "remove"],
    ) -> None:

        label, shown = self.client.label, self.shown
        try:
            new = edit(self.document()).encode("utf-8")
        except CannotEdit as problem:
            self._cannot(report, problem.reason)
            return
        except UnicodeEncodeError:  # a path that is not valid Unicode cannot be written as text
            self._cannot(report, "the server's command or paths are not valid UTF-8")
            return
        done = {
            "add": (
                f"Would add the server {name} to {shown}",
                f"Added the server {name} to {shown}",
            ),
            "replace": (
                f"Would replace the server {name} in {shown} (keeping a backup)",
                f"Replaced the server {name} in {shown}",
            ),
            "remove": (
                f"Would remove the server {name} from {shown}",
                f"Removed the server {name} from {shown}",
            ),
        }[verb]
        if dry_run:
            report.check("server", "ok", done[0])
            report.status = "planned"
            return
        if verb == "replace":
            try:
                backup = _keep_backup(self.real, self.data, self.mode)
            except OSError as error:
                report.check(
                    "backup",
                    "fail",
                    f"Cannot keep a backup of {shown}: {error.strerror or 'error'}",
                )
                report.status = "failed"
                return
            report.check("backup", "ok", f"Kept the previous file as {backup}")
        try:
            if self.identity is None:
                create_new(self.real, new)
            else:
                replace_existing(self.real, new, self.identity)
        except Clobbered:
            report.check(
                "server", "fail", f"{shown} changed while it was being edited: not overwritten"
            )
            report.status = "conflict"
            return
        except OSError as error:
            report.check("server", "fail", f"Cannot write {shown}: {error.strerror or 'error'}")
            report.status = "failed"
            return
        report.check("server", "ok", done[1])
        report.warn(f"Restart {label} to {'unload' if verb == 'remove' else 'load'} the server")


def _keep_backup(real: Path, data: bytes, mode: int) -> Path:
    """Write ``data`` next to ``real`` under a new name (FILE.bak, FILE.bak.2, ...), never
    replacing a file, with the original's permissions (it may hold secrets)."""

    temporary = temporary_file(real.parent, data, mode)
    try:
        for number in range(1, _MAX_BACKUPS + 1):
            backup = real.with_name(real.name + (".bak" if number == 1 else f".bak.{number}"))
            try:
                os.link(temporary, backup)
            except FileExistsError:
                continue
            return backup
        raise OSError(0, f"{_MAX_BACKUPS} backups exist already")
    finally:
        os.unlink(temporary)
