"""Editing a JSON (or JSONC) client file by a splice into its text (see the package)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .base import MAX_NESTING, NUMBER, STRING, WHITESPACE, CannotEdit

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
            if char in WHITESPACE:
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
        match = NUMBER.match(self.text, start)
        if match is None:
            raise self.fail()
        self.pos = match.end()
        return _Node(start, self.pos, ("n", match.group()))

    def string_end(self) -> int:
        match = STRING.match(self.text, self.pos)
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
        if self.text.strip(WHITESPACE):
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
        while text[ws_start - 1] in WHITESPACE:
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
