# One piece: one property (mcp-install/uninstall edits); its JSON and TOML grammars share an oracle.
"""Client configuration files from the formats' grammars, and the checks that mcp-install and
mcp-uninstall on them make a correct edit or report ``failed`` with the file byte-identical.

The files are JSON (every escape, lone surrogates included, numbers longer than any integer
type, any whitespace), JSONC where the client accepts it (VS Code: comments and trailing commas)
and TOML (tables out of order, arrays of tables, inline tables, dotted keys, every string
form). The oracle is independent of the editor: Python's json module (with a comment stripper for
JSONC) and tomllib. A correct edit means the new file parses to the old document plus (or minus)
exactly our server entry, and every comment of the old file is still there. Never exit 70, never
a traceback.
"""

from __future__ import annotations

import json
import math
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from capability_graph_testing.common import capability, provider, schema_validator
from capability_graph_testing.surfaces import CliRun, cli

NAME = "capability-graph"
REPORT = schema_validator("maintenance-report.schema.json")

# --- the graph every case serves -----------------------------------------------------------------


def write_served_graph(directory: Path) -> Path:
    """The small graph configuration every case installs (it must open)."""
    path = directory / "capability-graph.json"
    path.write_text(
        json.dumps({"providers": [{"definition": provider("one", capability("a"))}]}),
        encoding="utf-8",
    )
    return path


def our_entry(config: Path, *, stdio_type: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "stdio"} if stdio_type else {}
    entry["command"] = sys.executable
    entry["args"] = ["-m", "capability_graph.cli", "mcp", "--config", str(config)]
    return entry


def run(*argv: str) -> CliRun:
    done = cli(*argv, "--json")
    assert done.status in (0, 1, 3), done  # never 70 (a defect), never a usage error
    assert done.stderr == ""
    REPORT.validate(json.loads(done.stdout))
    assert json.loads(done.stdout)["status"] in ("ok", "failed", "conflict")
    return done


# --- JSON and JSONC from the grammar ------------------------------------------------------------

WHITESPACE = st.sampled_from(["", " ", "\n", "\t", "\r\n", "\n    ", "  \n\t"])
COMMENTS = st.sampled_from(["// note\n", "/* block */", "/* two\n lines */", "//\n", "/**/"])


@st.composite
def gap(draw: st.DrawFn, jsonc: bool) -> str:
    """Whitespace, and (JSONC) comments, between two tokens."""
    parts = [draw(WHITESPACE)]
    if jsonc and draw(st.integers(0, 3)) == 0:
        parts += [draw(COMMENTS), draw(WHITESPACE)]
    return "".join(parts)


ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


@st.composite
def json_string(draw: st.DrawFn) -> tuple[str, str]:
    """(JSON text, the decoded value): literal characters and every kind of escape, with lone
    surrogates and pairs written as \\u escapes."""
    pieces: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.integers(0, 4))
        if kind == 0:
            char = draw(st.characters(codec="utf-8", exclude_characters='"\\'))
            if ord(char) < 0x20:
                char = " "
            pieces.append((char, char))
        elif kind == 1:
            char = draw(st.sampled_from(sorted(ESCAPES)))
            pieces.append((ESCAPES[char], char))
        elif kind == 2:
            point = draw(st.integers(0, 0xFFFF))
            hexa = f"{point:04x}" if draw(st.booleans()) else f"{point:04X}"
            pieces.append((f"\\u{hexa}", chr(point)))
        elif kind == 3:
            pieces.append(("\\/", "/"))
        else:
            high, low = draw(st.integers(0xD800, 0xDBFF)), draw(st.integers(0xDC00, 0xDFFF))
            pieces.append((f"\\u{high:04x}\\u{low:04x}", chr(high) + chr(low)))
    return '"' + "".join(t for t, _ in pieces) + '"', "".join(v for _, v in pieces)


NUMBERS = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.integers(4300, 5000).map(lambda n: "9" * n),  # longer than Python converts by default
    st.sampled_from(["0", "-0", "1.5", "-2.25e-3", "1E400", "6.02e+23", "0.0"]),
)


@st.composite
def json_value(draw: st.DrawFn, jsonc: bool, depth: int = 0) -> str:
    kind = draw(st.integers(0, 5 if depth < 3 else 2))
    if kind == 0:
        return draw(json_string())[0]
    if kind == 1:
        return draw(NUMBERS)
    if kind == 2:
        return draw(st.sampled_from(["true", "false", "null"]))
    if kind == 3:
        items = [draw(json_value(jsonc, depth + 1)) for _ in range(draw(st.integers(0, 3)))]
        return json_array(draw, items, jsonc)
    keys = [draw(json_string())[0] for _ in range(draw(st.integers(0, 3)))]
    members = [(key, draw(json_value(jsonc, depth + 1))) for key in keys]
    return json_object(draw, members, jsonc)


def json_array(draw: st.DrawFn, items: list[str], jsonc: bool) -> str:
    inner = ("," + draw(gap(jsonc))).join(draw(gap(jsonc)) + item for item in items)
    trailing = "," if jsonc and items and draw(st.booleans()) else ""
    return "[" + inner + trailing + draw(gap(jsonc)) + "]"


def json_object(draw: st.DrawFn, members: list[tuple[str, str]], jsonc: bool) -> str:
    rendered = [
        draw(gap(jsonc)) + key + draw(gap(jsonc)) + ":" + draw(gap(jsonc)) + value
        for key, value in members
    ]
    trailing = "," if jsonc and members and draw(st.booleans()) else ""
    return "{" + ",".join(rendered) + trailing + draw(gap(jsonc)) + "}"


@st.composite
def client_json(draw: st.DrawFn, key: str, jsonc: bool, config: Path, stdio_type: bool) -> str:
    """A client file: a root object whose servers member is absent, empty, holds other servers,
    holds our entry (the same, or older), a foreign server under our name, or is no object."""
    members = [
        (draw(json_string())[0], draw(json_value(jsonc, 1))) for _ in range(draw(st.integers(0, 3)))
    ]
    servers_kind = draw(st.integers(0, 5))
    if servers_kind:
        servers: list[tuple[str, str]] = [
            (json.dumps(f"s{i}"), draw(json_value(jsonc, 2)))
            for i in range(draw(st.integers(0, 2)))
        ]
        if servers_kind == 2:
            servers.append((json.dumps(NAME), json.dumps(our_entry(config, stdio_type=stdio_type))))
        elif servers_kind == 3:
            older = our_entry(Path("/elsewhere/capability-graph.json"), stdio_type=stdio_type)
            servers.append((json.dumps(NAME), json.dumps(older, indent=2)))
        elif servers_kind == 4:
            servers.append((json.dumps(NAME), '{"command": "npx", "args": ["other"]}'))
        value = (
            json_object(draw, servers, jsonc) if servers_kind != 5 else draw(json_value(jsonc, 1))
        )
        position = draw(st.integers(0, len(members)))
        members.insert(position, (json.dumps(key), value))
    text = json_object(draw, members, jsonc)
    if draw(st.integers(0, 4)) == 0:
        text += draw(gap(jsonc))
    return text if draw(st.integers(0, 9)) else "\ufeff" + text


# An independent oracle: Python's json module; numbers are kept as their text.
def json_meaning(text: str, *, jsonc: bool) -> Any:
    if text.startswith("\ufeff"):
        text = text[1:]
    if jsonc:
        text = strip_jsonc(text)
    return json.loads(
        text,
        object_pairs_hook=lambda pairs: ("object", tuple(pairs)),
        parse_int=lambda s: ("number", s),
        parse_float=lambda s: ("number", s),
        parse_constant=lambda s: ("number", s),
    )


_JSONC_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def strip_jsonc(text: str) -> str:
    def keep(match: re.Match[str]) -> str:
        token = match.group()
        return token if token.startswith('"') else " "

    # A trailing comma may be followed by a comment: strip comments first, then commas.
    without_comments = _JSONC_TOKENS.sub(
        lambda m: m.group() if m.group().startswith(('"', ",")) else " ", text
    )
    return _JSONC_TOKENS.sub(keep, without_comments)


def comments_of(text: str) -> list[str]:
    return [m for m in _JSONC_TOKENS.findall(text) if m.startswith("/")]


def as_meaning(value: Any) -> Any:
    return json_meaning(json.dumps(value), jsonc=False)


def with_server(document: Any, key: str, value: Any) -> Any:
    """The document with servers[NAME] set to ``value`` (None: removed)."""
    members = list(document[1])
    index = next((i for i, (k, _) in enumerate(members) if k == key), None)
    if index is None:
        if value is None:
            return document
        return ("object", (*members, (key, ("object", ((NAME, value),)))))
    servers = [(k, v) for k, v in members[index][1][1] if k != NAME or value is not None]
    if value is not None:
        position = next((i for i, (k, _) in enumerate(servers) if k == NAME), None)
        if position is None:
            servers.append((NAME, value))
        else:
            servers[position] = (NAME, value)
    members[index] = (key, ("object", tuple(servers)))
    return ("object", tuple(members))


#: The JSON clients the cases run against: (servers member, JSONC accepted, "type": "stdio").
JSON_CLIENTS: dict[str, tuple[str, bool, bool]] = {
    "cursor": ("mcpServers", False, False),
    "vscode": ("servers", True, True),
}


def json_case(client: str, config: Path) -> st.SearchStrategy[str]:
    key, jsonc, stdio = JSON_CLIENTS[client]
    return client_json(key, jsonc, config, stdio)


def check_json_case(directory: Path, config: Path, client: str, text: str) -> str:
    """Install (with --force) and uninstall on ``text``; the outcome of the install."""
    key, jsonc, stdio = JSON_CLIENTS[client]
    target = directory / "client.json"
    target.write_bytes(text.encode("utf-8"))
    original = json_meaning(text, jsonc=jsonc)
    entry = as_meaning(our_entry(config, stdio_type=stdio))
    argv = ("--client", client, "--config-path", str(target))
    installed = run("mcp-install", *argv, "--config", str(config), "--force")
    status: str = json.loads(installed.stdout)["status"]
    new = target.read_bytes().decode("utf-8")
    if status != "ok":
        assert new == text  # byte-identical
        return status
    assert json_meaning(new, jsonc=jsonc) == with_server(original, key, entry)
    for comment in comments_of(text):
        assert new.count(comment) >= text.count(comment)
    removed = run("mcp-uninstall", *argv)
    after = target.read_bytes().decode("utf-8")
    if json.loads(removed.stdout)["status"] == "ok":
        expected = with_server(with_server(original, key, entry), key, None)
        assert json_meaning(after, jsonc=jsonc) == expected
    else:
        assert after == new
    return "ok"


@st.composite
def damaged_json(draw: st.DrawFn, config: Path) -> bytes:
    """A valid client file with a few bytes deleted, inserted or replaced."""
    raw = bytearray(draw(json_case("cursor", config)).encode("utf-8"))
    for _ in range(draw(st.integers(1, 3))):
        position = draw(st.integers(0, len(raw)))
        action = draw(st.integers(0, 2))
        byte = draw(st.sampled_from(b'{}[],:"\\/ \n0e-tfn\x00\xff'))
        if action == 0 and position < len(raw):
            del raw[position]
        elif action == 1:
            raw.insert(position, byte)
        elif position < len(raw):
            raw[position] = byte
    return bytes(raw)


def check_damaged_json_case(directory: Path, config: Path, raw: bytes) -> str:
    """Edited correctly when it is still JSON, otherwise refused with the file untouched."""
    target = directory / "client.json"
    target.write_bytes(raw)
    try:
        original: Any = json_meaning(raw.decode("utf-8"), jsonc=False)
    except (UnicodeDecodeError, ValueError, RecursionError):
        original = None
    done = run(
        "mcp-install", "--client", "cursor", "--config-path", str(target), "--config", str(config)
    )
    status = json.loads(done.stdout)["status"]
    if status != "ok":
        assert target.read_bytes() == raw
        return f"{status}, {'JSON' if original is not None else 'not JSON'}"
    assert original is not None  # what is not JSON is never edited
    new = target.read_bytes().decode("utf-8")
    assert json_meaning(new, jsonc=False) == with_server(
        original, "mcpServers", as_meaning(our_entry(config, stdio_type=False))
    )
    return "ok, JSON"


# --- TOML from the grammar ----------------------------------------------------------------------

TOML_STRINGS = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=8).map(
        lambda s: json.dumps(s, ensure_ascii=False)  # a basic string, JSON escapes are TOML's
    ),
    st.text(st.characters(codec="utf-8", exclude_characters="\\'\n\r\x7f"), max_size=8)
    .filter(lambda s: all(ord(c) >= 0x20 or c == "\t" for c in s))
    .map(lambda s: f"'{s}'"),
    st.sampled_from(['"""\nline one\nline "two"\n"""', "'''raw\\n'''", '"\\U0001F600 \\u00e9"']),
)
TOML_SCALARS = st.one_of(
    TOML_STRINGS,
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.sampled_from(["0x_dead", "0xdead_beef", "0o755", "0b1010", "1_000", "+17", "-0"]),
    st.sampled_from(["3.14", "-1e-3", "inf", "-inf", "nan", "6.626e-34", "1_000.5"]),
    st.sampled_from(["true", "false", "1979-05-27T07:32:00Z", "1979-05-27", "07:32:00"]),
)


@st.composite
def toml_value(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.integers(0, 2 if depth < 2 else 0))
    if kind == 0:
        return draw(TOML_SCALARS)
    if kind == 1:
        items = [draw(toml_value(depth + 1)) for _ in range(draw(st.integers(0, 3)))]
        if draw(st.booleans()):
            return "[\n  " + ",\n  # a comment\n  ".join(items) + (",\n]" if items else "]")
        return "[" + ", ".join(items) + "]"
    keys = draw(st.lists(st.sampled_from(["a", "b", "c", '"q k"']), unique=True, max_size=3))
    return "{ " + ", ".join(f"{k} = {draw(toml_value(depth + 1))}" for k in keys) + " }"


def toml_pairs(draw: st.DrawFn, keys: list[str]) -> str:
    lines = []
    for key in keys:
        comment = "  # why" if draw(st.booleans()) else ""
        lines.append(f"{key} = {draw(toml_value())}{comment}\n")
    return "".join(lines)


@st.composite
def client_toml(draw: st.DrawFn, config: Path) -> str:
    """A Codex config: top-level keys, then tables in any order — [mcp_servers.*] separated by
    other tables, arrays of tables, sub-tables — or the servers as an inline table or dotted
    keys; sometimes our entry (the same, older, or a foreign one under our name)."""
    text = "# Codex settings\n" + toml_pairs(draw, draw(st.lists(
        st.sampled_from(["model", "approval_policy", '"odd key"', "n"]), unique=True, max_size=3
    )))  # fmt: skip
    ours = our_entry(config, stdio_type=False)
    server_names = draw(st.lists(st.sampled_from(["files", "docs", "x-1", NAME]), unique=True))
    layout = draw(st.sampled_from(["tables", "inline", "dotted", "none", "array"]))
    if layout == "inline":
        inner = ", ".join(f'{json.dumps(n)} = {{ command = "c" }}' for n in server_names)
        text += f"mcp_servers = {{ {inner} }}\n"
    elif layout == "dotted":
        text += "".join(f'mcp_servers.{json.dumps(n)}.command = "c"\n' for n in server_names)
    blocks: list[str] = []
    if layout == "tables":
        for server in server_names:
            body = f'command = "c"\nargs = [{draw(TOML_STRINGS)}]\n'
            if server == NAME:
                variant = draw(st.integers(0, 2))
                entry = ours if variant == 0 else {**ours, "args": [*ours["args"][:-1], "/old"]}
                body = (
                    'command = "npx"\n'
                    if variant == 2
                    else "".join(
                        f"{k} = {json.dumps(v, ensure_ascii=False)}\n" for k, v in entry.items()
                    )
                )
            blocks.append(f"[mcp_servers.{json.dumps(server)}]\n{body}")
            if draw(st.booleans()):
                blocks.append(f"[mcp_servers.{json.dumps(server)}.env]\nK = {draw(TOML_STRINGS)}\n")
    if layout == "array":
        blocks.append('[[mcp_servers]]\ncommand = "c"\n')
    for table in draw(st.lists(st.sampled_from(["profiles.fast", "tui", "history"]), unique=True)):
        blocks.append(f"[{table}]\n" + toml_pairs(draw, ["k", "v"]))
    for _ in range(draw(st.integers(0, 2))):
        blocks.append("[[projects.trusted]]\n" + toml_pairs(draw, ["path"]))
    order = draw(st.permutations(range(len(blocks))))
    separator = draw(st.sampled_from(["\n", "", "\n# between\n"]))
    text += separator + separator.join(blocks[i] for i in order)
    return text if draw(st.integers(0, 4)) else text.replace("\n", "\r\n")


def same_toml(left: Any, right: Any) -> bool:
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same_toml(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(same_toml, left, right))
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    return type(left) is type(right) and bool(left == right)


def toml_with(document: dict[str, Any], value: Any) -> dict[str, Any]:
    servers = dict(document.get("mcp_servers", {}))
    if value is None:
        servers.pop(NAME, None)
    else:
        servers[NAME] = value
    result = {**document, "mcp_servers": servers}
    return {k: v for k, v in result.items() if not (k == "mcp_servers" and v == {})}


def without_empty_servers(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if not (k == "mcp_servers" and v == {})}


def check_toml_case(directory: Path, config: Path, text: str) -> str:
    """Install (with --force) and uninstall on ``text``; the outcome of the install."""
    target = directory / "config.toml"
    target.write_bytes(text.encode("utf-8"))
    try:
        original: dict[str, Any] | None = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        original = None
    argv = ("--client", "codex", "--config-path", str(target))
    installed = run("mcp-install", *argv, "--config", str(config), "--force")
    status = json.loads(installed.stdout)["status"]
    outcome = f"{status}, {'TOML' if original is not None else 'not TOML'}"
    new = target.read_bytes().decode("utf-8")
    if status != "ok":
        assert new == text
        return outcome
    assert original is not None
    entry = our_entry(config, stdio_type=False)
    assert same_toml(without_empty_servers(tomllib.loads(new)), toml_with(original, entry))
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            assert line in new.splitlines()
    removed = run("mcp-uninstall", *argv)
    after = target.read_bytes().decode("utf-8")
    if json.loads(removed.stdout)["status"] == "ok":
        assert same_toml(without_empty_servers(tomllib.loads(after)), toml_with(original, None))
    else:
        assert after == new
    return outcome
