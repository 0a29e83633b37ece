"""Editing a TOML client file (Codex) by a splice into its text (see the package)."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any, Final

from .base import CannotEdit

# --- TOML ----------------------------------------------------------------------------------------


def _toml_string(text: str) -> str:
    """A TOML basic string (the escapes TOML and JSON share, plus \\u for control characters)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char in "\b\t\n\f\r":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        items = (f"{_toml_key(key)} = {_toml_value(item)}" for key, item in value.items())
        return "{ " + ", ".join(items) + " }"
    return _toml_string(value)


def _written(value: Any) -> bool:
    """Whether ``value`` is made only of what ``_toml_value`` writes: strings, lists, tables."""
    if isinstance(value, dict):
        return all(isinstance(key, str) and _written(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_written(item) for item in value)
    return isinstance(value, str)


_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


class TomlDocument:
    """A client's TOML file (Codex ``config.toml``): the servers table under ``key``."""

    def __init__(self, text: str, key: str) -> None:
        self.text = text
        self.key = key
        self.newline = "\r\n" if "\r\n" in text else "\n"
        try:
            self.document = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError):
            raise CannotEdit("not valid TOML") from None
        servers = self.document.get(key)
        if servers is not None and not isinstance(servers, dict):
            raise CannotEdit(f"{key} is not a table")

    def entry(self, name: str) -> Any:
        return self.document.get(self.key, {}).get(name)

    def add(self, name: str, entry: dict[str, Any]) -> str:
        expected = _toml_with(self.document, self.key, name, entry)
        # A new [key.name] table at the end is right for every layout of tables (in order or
        # not); it is wrong only where the servers are an inline table or dotted keys.
        text, nl = self.text, self.newline
        if text and not text.endswith("\n"):
            text += nl
        lines = [f"[{_toml_key(self.key)}.{_toml_key(name)}]"]
        lines += [f"{_toml_key(field_name)} = {_toml_value(v)}" for field_name, v in entry.items()]
        appended = text + (nl if text.strip() else "") + nl.join(lines) + nl
        if _toml_means(appended, expected):
            return appended
        # Servers written as an inline table (one line, by TOML's grammar): one more member.
        member = f"{_toml_key(name)} = {_toml_value(entry)}"
        spliced = _into_inline_table(self.text, self.key, member)
        if spliced is not None and _toml_means(spliced, expected):
            return spliced
        return self._with_tomlkit(lambda servers: _tomlkit_add(servers, name, entry), expected)

    def replace(self, name: str, entry: dict[str, Any]) -> str:
        expected = _toml_with(self.document, self.key, name, entry)
        without = TomlDocument(self.remove(name), self.key)
        new = without.add(name, entry)
        if not _toml_means(new, expected):
            raise CannotEdit("the edit would change more than the server entry")
        return new

    def remove(self, name: str) -> str:
        expected = _toml_with(self.document, self.key, name, None)
        cut = self._without_tables(name)
        if cut is not None and _toml_means(cut, expected):
            return cut
        # The member an inline table got from ``add``: taken out the way it was put in.
        existing = self.entry(name)
        member = f"{_toml_key(name)} = {_toml_value(existing)}" if _written(existing) else None
        for written, left in ((f", {member} ", " "), (f" {member} ", "")):
            if member is not None and self.text.count(written) == 1:
                cut = self.text.replace(written, left)
                if _toml_means(cut, expected):
                    return cut

        def delete(servers: Any) -> None:
            del servers[name]

        return self._with_tomlkit(delete, expected)

    def _without_tables(self, name: str) -> str | None:
        """The text without the tables [key.name] and [key.name.*] (the layout ``add`` writes:
        removing what it appended restores the file), or None when there are none."""
        lines = self.text.splitlines(keepends=True)
        prefix = (self.key, name)
        keep: list[str] = []
        removing = found = False
        for line in lines:
            header = _table_header(line)
            if header is not None:
                removing = header[:2] == prefix
                found = found or removing
            if not removing:
                keep.append(line)
        if not found:
            return None
        if removing and keep and not keep[-1].strip():
            keep.pop()  # the blank line that separated the removed last table
        return "".join(keep)

    def _with_tomlkit(self, edit: Callable[[Any], None], expected: dict[str, Any]) -> str:
        try:
            import tomlkit

            document = tomlkit.parse(self.text)
            servers: Any = document.get(self.key)
            if servers is None:
                servers = tomlkit.table(is_super_table=True)
                document.add(self.key, servers)
            edit(servers)
            new = tomlkit.dumps(document)
        except Exception:  # noqa: BLE001 -- a third-party editor's defect is only "cannot edit"
            raise CannotEdit("the edit would change more than the server entry") from None
        if not _toml_means(new, expected):
            raise CannotEdit("the edit would change more than the server entry")
        return new


_HEADER: Final = re.compile(r"\s*\[\[?\s*([^\[\]#]+?)\s*\]\]?\s*(?:#.*)?")
_KEY_PART: Final = re.compile(
    r'\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*(?:\.|$)'
)


def _table_header(line: str) -> tuple[str, ...] | None:
    """The key path of a table header line (``[a.b]``, ``[[a."b"]]``); None for other lines.

    A line inside a multi-line string can look like a header: the caller checks the meaning
    of the result, so such a misreading can only make it fall back, never write.
    """
    match = _HEADER.fullmatch(line.rstrip("\r\n"))
    if match is None:
        return None
    parts: list[str] = []
    text, pos = match.group(1), 0
    while pos < len(text):
        part = _KEY_PART.match(text, pos)
        if part is None or part.end() == pos:
            return None
        basic, literal, bare = part.groups()
        if basic is not None:
            try:
                parts.append(json.loads(f'"{basic}"'))
            except ValueError:
                return None
        else:
            parts.append(literal if literal is not None else bare)
        pos = part.end()
    return tuple(parts)


def _into_inline_table(text: str, key: str, member: str) -> str | None:
    """``text`` with ``member`` added last to the inline table ``key = { ... }`` defined on a
    line of its own before any table header; None when there is no such line."""
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if _table_header(line) is not None:
            return None
        stripped = line.lstrip()
        if not stripped.startswith(f"{_toml_key(key)} ") and not stripped.startswith(
            f"{_toml_key(key)}="
        ):
            continue
        opening = line.find("{")
        closing = _inline_table_end(line, opening) if opening >= 0 else None
        if closing is None:
            return None
        empty = not line[opening + 1 : closing].strip()
        added = line[:closing].rstrip() + ("" if empty else ",") + f" {member} " + line[closing:]
        return "".join([*lines[:index], added, *lines[index + 1 :]])
    return None


def _inline_table_end(line: str, opening: int) -> int | None:
    """The index of the brace that closes the inline table opened at ``opening``."""
    depth, position, quote = 0, opening, ""
    while position < len(line):
        char = line[position]
        if quote:
            if char == "\\" and quote == '"':
                position += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return position if char == "}" else None
        elif char == "#":
            return None
        position += 1
    return None


def _tomlkit_add(servers: Any, name: str, entry: dict[str, Any]) -> None:
    import tomlkit
    from tomlkit.items import InlineTable

    table: Any = tomlkit.inline_table() if isinstance(servers, InlineTable) else tomlkit.table()
    for field_name, value in entry.items():
        table.add(field_name, value)
    servers.add(name, table)


def _toml_with(document: dict[str, Any], key: str, name: str, entry: Any) -> dict[str, Any]:
    servers = dict(document.get(key, {}))
    if entry is None:
        servers.pop(name, None)
    else:
        servers[name] = entry
    return {**document, key: servers}


def _toml_means(text: str, expected: dict[str, Any]) -> bool:
    """Whether ``text`` parses to ``expected`` (an empty servers table and none are the same)."""
    try:
        actual = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return False
    return _same(_without_empty(actual), _without_empty(expected))


def _without_empty(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if value != {}}


def _same(left: Any, right: Any) -> bool:
    """Equality of parsed TOML values in which NaN equals NaN and order of keys counts."""
    if isinstance(left, dict) and isinstance(right, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, float) and isinstance(right, float) and left != left:
        return right != right
    return type(left) is type(right) and bool(left == right)
