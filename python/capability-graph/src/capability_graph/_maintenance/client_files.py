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

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "CannotEdit",
    "JsonDocument",
    "TomlDocument",
]

#: Deeper nesting than this is refused (a failed report), never a RecursionError.
MAX_NESTING: Final = 200

_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# A JSON string token: its escapes are decoded (and judged) by the json module.
_STRING: Final = re.compile(r'"(?:[^"\\\x00-\x1f]|\\[^\x00-\x1f])*"')
_WHITESPACE: Final = " \t\r\n"


class CannotEdit(Exception):
    """The file cannot be edited safely; ``reason`` says why (it never echoes file content)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- JSON and JSONC ------------------------------------------------------------------------------


@dataclass
class _Node:
    """A parsed JSON value with its span in the text (``end`` is one past its last character)."""

    start: int
    end: int
    canonical: Any  # hashable: ("o", ((key, canonical), ...)), ("a", (...)), ("s", str), ...
    members: list[tuple[str, int, _Node]] = field(default_factory=list)  # objects: key, key start


class _JsonParser:
    def __init__(self, text: str, *, jsonc: bool) -> None:
        self.text = text
        self.jsonc = jsonc
        self.pos = 0

    def document(self) -> _Node:
        node = self.value(0)
        self.skip()
        if self.pos != len(self.text):
            raise CannotEdit("not valid JSON" + (" (with comments)" if self.jsonc else ""))
        return node

    def fail(self) -> CannotEdit:
        return CannotEdit("not valid JSON" + (" (with comments)" if self.jsonc else ""))

    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            char = text[self.pos]
            if char in _WHITESPACE:
                self.pos += 1
            elif self.jsonc and text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif self.jsonc and text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail()
                self.pos = end + 2
            else:
                return

    def value(self, depth: int) -> _Node:
        if depth > MAX_NESTING:
            raise CannotEdit(f"nested more than {MAX_NESTING} levels deep")
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail()
        char = self.text[self.pos]
        if char == "{":
            return self.object(depth)
        if char == "[":
            return self.array(depth)
        start = self.pos
        if char == '"':
            return _Node(start, self.string_end(), ("s", self.last_string))
        for literal in ("true", "false", "null"):
            if self.text.startswith(literal, start):
                self.pos = start + len(literal)
                return _Node(start, self.pos, ("l", literal))
        match = _NUMBER.match(self.text, start)
        if match is None:
            raise self.fail()
        self.pos = match.end()
        return _Node(start, self.pos, ("n", match.group()))

    def string_end(self) -> int:
        match = _STRING.match(self.text, self.pos)
        if match is None:
            raise self.fail()
        try:
            self.last_string: str = json.loads(match.group())
        except ValueError:
            raise self.fail() from None
        self.pos = match.end()
        return self.pos

    def object(self, depth: int) -> _Node:
        start = self.pos
        self.pos += 1
        members: list[tuple[str, int, _Node]] = []
        self.skip()
        while not self.text.startswith("}", self.pos):
            if members:
                if not self.text.startswith(",", self.pos):
                    raise self.fail()
                self.pos += 1
                self.skip()
                if self.jsonc and self.text.startswith("}", self.pos):
                    break  # a trailing comma
            if not self.text.startswith('"', self.pos):
                raise self.fail()
            key_start = self.pos
            self.string_end()
            key = self.last_string
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail()
            self.pos += 1
            members.append((key, key_start, self.value(depth + 1)))
            self.skip()
        self.pos += 1
        canonical = ("o", tuple((key, node.canonical) for key, _, node in members))
        return _Node(start, self.pos, canonical, members)

    def array(self, depth: int) -> _Node:
        start = self.pos
        self.pos += 1
        items: list[Any] = []
        self.skip()
        while not self.text.startswith("]", self.pos):
            if items:
                if not self.text.startswith(",", self.pos):
                    raise self.fail()
                self.pos += 1
                self.skip()
                if self.jsonc and self.text.startswith("]", self.pos):
                    break
            items.append(self.value(depth + 1).canonical)
            self.skip()
        self.pos += 1
        return _Node(start, self.pos, ("a", tuple(items)))


def _canonical(value: Any) -> Any:
    """The canonical form of a value we write (strings, lists and objects only)."""
    if isinstance(value, dict):
        return ("o", tuple((key, _canonical(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("a", tuple(_canonical(item) for item in value))
    return ("s", value)


def _plain(canonical: Any) -> Any:
    """A canonical value as Python strings, lists and dicts (for comparing with our entry);
    numbers and literals stay in their canonical form, which no entry of ours equals."""
    kind, value = canonical
    if kind == "o":
        return {key: _plain(item) for key, item in value}
    if kind == "a":
        return [_plain(item) for item in value]
    return canonical if kind != "s" else value


class JsonDocument:
    """A client's JSON (or JSONC) file: the servers object under ``key`` at the root."""

    def __init__(self, text: str, key: str, *, jsonc: bool) -> None:
        self.bom = "\ufeff" if text.startswith("\ufeff") else ""
        self.text = text[len(self.bom) :]
        self.key = key
        self.jsonc = jsonc
        self.newline = "\r\n" if "\r\n" in self.text else "\n"
        self.unit = _indent_unit(self.text)
        self.root: _Node | None = None
        if self.text.strip(_WHITESPACE):
            self.root = _JsonParser(self.text, jsonc=jsonc).document()
            if self.root.canonical[0] != "o":
                raise CannotEdit("not a JSON object")
            found = [node for name, _, node in self.root.members if name == key]
            if len(found) > 1:
                raise CannotEdit(f"{key} appears more than once")
            if found and found[0].canonical[0] != "o":
                raise CannotEdit(f"{key} is not an object")

    def _servers(self) -> _Node | None:
        assert self.root is not None
        return next((node for name, _, node in self.root.members if name == self.key), None)

    def entry(self, name: str) -> Any:
        """The server entry ``name`` as a Python value, or None when there is none."""
        servers = self._servers() if self.root is not None else None
        if servers is None:
            return None
        found = [node for key, _, node in servers.members if key == name]
        if len(found) > 1:
            raise CannotEdit(f"the server {name} appears more than once")
        return _plain(found[0].canonical) if found else None

    # The three edits. Each returns the complete new file text.

    def add(self, name: str, entry: dict[str, Any]) -> str:
        document = {self.key: {name: entry}}
        if self.root is None:
            body = json.dumps(document, ensure_ascii=False, indent=self.unit)
            new = body.replace("\n", self.newline) + self.newline
            return self._checked(self.bom + new, _canonical(document))
        members = self.root.canonical[1]
        servers = self._servers()
        if servers is None:
            new = self._insert(self.root, self.key, document[self.key])
            expected = ("o", (*members, *_canonical(document)[1]))
        else:
            new = self._insert(servers, name, entry)
            expected = ("o", _with_server(members, self.key, name, _canonical(entry)))
        return self._checked(self.bom + new, expected)

    def replace(self, name: str, entry: dict[str, Any]) -> str:
        servers = self._servers()
        assert servers is not None
        _, key_start, node = next(m for m in servers.members if m[0] == name)
        inline = "\n" not in self.text[servers.start : servers.members[0][1]]
        dumped = self._dump(entry, _line_indent(self.text, key_start), inline=inline)
        new = self.text[: node.start] + dumped + self.text[node.end :]
        assert self.root is not None
        members = _with_server(self.root.canonical[1], self.key, name, _canonical(entry))
        return self._checked(self.bom + new, ("o", members))

    def remove(self, name: str) -> str:
        servers = self._servers()
        assert servers is not None
        index = next(i for i, member in enumerate(servers.members) if member[0] == name)
        _, key_start, node = servers.members[index]
        text = self.text
        after = _skip(text, node.end, jsonc=self.jsonc)
        spans: list[tuple[int, int]] = []
        if after < len(text) and text[after] == ",":
            spans.append(_whole_lines(text, key_start, after + 1))
        else:
            spans.append(_whole_lines(text, key_start, node.end))
            if index > 0:  # the previous member's comma goes, its comments stay
                comma = _skip(text, servers.members[index - 1][2].end, jsonc=self.jsonc)
                spans.append((comma, comma + 1))
        new = text
        for start, end in sorted(spans, reverse=True):
            new = new[:start] + new[end:]
        assert self.root is not None
        members = _with_server(self.root.canonical[1], self.key, name, None)
        return self._checked(self.bom + new, ("o", members))

    # --- helpers

    def _insert(self, obj: _Node, name: str, value: Any) -> str:
        text, nl = self.text, self.newline
        close = obj.end - 1
        ws_start = close
        while text[ws_start - 1] in _WHITESPACE:
            ws_start -= 1
        if not obj.members:
            outer = _line_indent(text, obj.start)
            inner = outer + self.unit
            member = json.dumps(name, ensure_ascii=False) + ": " + self._dump(value, inner)
            start = obj.start + 1 if ws_start <= obj.start + 1 else ws_start
            return text[:start] + nl + inner + member + nl + outer + text[close:]
        first_key_start = obj.members[0][1]
        last_end = obj.members[-1][2].end
        after = _skip(text, last_end, jsonc=self.jsonc)
        trailing_comma = text[after] == ","
        if "\n" not in text[obj.start : first_key_start]:  # a one-line object stays one line
            member = (
                json.dumps(name, ensure_ascii=False) + ": " + self._dump(value, "", inline=True)
            )
            return text[:last_end] + ", " + member + text[last_end:]
        indent = _line_indent(text, first_key_start)
        member = json.dumps(name, ensure_ascii=False) + ": " + self._dump(value, indent)
        if trailing_comma:  # keep the file's style: the new last member has one too
            return text[:ws_start] + nl + indent + member + "," + text[ws_start:]
        return (
            text[:last_end] + "," + text[last_end:ws_start] + nl + indent + member + text[ws_start:]
        )

    def _dump(self, value: Any, indent: str, *, inline: bool = False) -> str:
        if inline:
            return json.dumps(value, ensure_ascii=False)
        dumped = json.dumps(value, ensure_ascii=False, indent=self.unit)
        return dumped.replace("\n", self.newline + indent)

    def _checked(self, new: str, expected: Any) -> str:
        """``new`` if it parses to ``expected`` (the canonical form of the intended document)."""
        try:
            reparsed = _JsonParser(new[len(self.bom) :], jsonc=self.jsonc).document()
        except CannotEdit:
            raise CannotEdit("the edit would change more than the server entry") from None
        if reparsed.canonical != expected:
            raise CannotEdit("the edit would change more than the server entry")
        return new


def _with_server(members: Any, key: str, name: str, value: Any) -> Any:
    """The root members with server ``name`` set to ``value`` (appended if new; None: removed)."""
    result = []
    for member_key, member_value in members:
        if member_key == key:
            servers = list(member_value[1])
            position = next((i for i, (n, _) in enumerate(servers) if n == name), None)
            if value is None:
                if position is not None:
                    del servers[position]
            elif position is None:
                servers.append((name, value))
            else:
                servers[position] = (name, value)
            member_value = ("o", tuple(servers))
        result.append((member_key, member_value))
    return tuple(result)


def _skip(text: str, pos: int, *, jsonc: bool) -> int:
    parser = _JsonParser(text, jsonc=jsonc)
    parser.pos = pos
    parser.skip()
    return parser.pos


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    line = text[line_start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _whole_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` to whole lines when nothing else shares those lines."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:start].strip(" \t") or text[end:line_end].strip(" \t\r"):
        return start, end
    return line_start, min(line_end + 1, len(text))


def _indent_unit(text: str) -> str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            prefix = line[: len(line) - len(stripped)]
            if set(prefix) == {" "}:
                return " " * min(len(prefix), 8)
            if set(prefix) == {"\t"}:
                return "\t"
            break
    return "  "


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
