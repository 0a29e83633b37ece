"""Editing an MCP client's configuration file without changing anything but one server entry.

``mcp-install`` and ``mcp-uninstall`` edit files that people write by hand: JSON (some clients
accept JSONC: comments and trailing commas) and TOML. A re-serialised document loses comments,
key order, escapes and formatting, and some legal inputs cannot be re-serialised at all (a JSON
escape of a lone surrogate, ``"\\ud800"``, decodes to a string that is not UTF-8). So an edit is
a *splice* into the original text: the bytes outside the one member we add, replace or remove
are kept as they are.

Every edit is checked before it is returned: the new text is parsed again and must mean exactly
the original document with that one change (object members in order, numbers by their token).
An edit that cannot be made, or that would mean anything else, is :class:`CannotEdit` with a
short reason, and the caller leaves the file untouched.
"""

from __future__ import annotations

from .base import MAX_NESTING, CannotEdit
from .json_file import JsonDocument
from .toml_file import TomlDocument

__all__ = ["MAX_NESTING", "CannotEdit", "JsonDocument", "TomlDocument"]
