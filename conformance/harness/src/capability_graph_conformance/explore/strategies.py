"""Seeded generators of inputs, one family per campaign.

Every case is built from its own ``random.Random`` seeded with (run seed, campaign, index), so a
case replays from those three alone, whatever else the run generated. The shapes follow the
request schemas (``spec/capability-graph/schemas/*-request.schema.json``), the operation table
(``operations.json``: tools, CLI commands, flags and their types), the configuration and budget
schemas, and the MCP framing; each family mixes valid inputs with inputs broken one way at a time
(a member missing, unknown or of the wrong type; a value one past a bound; a text that is not
JSON, not UTF-8 or begins with a byte order mark).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from .model import GenCase

__all__ = ["CAMPAIGNS", "generate"]

# -- the fixtures' catalogs (conformance/fixtures), so that valid ids hit real capabilities -----

_CATALOG_IDS = [
    "acme::route.validation",
    "acme::route.handler",
    "acme::schema.request",
    "billing::invoice.create",
    "internal::audit.log",
    "notes::note.take",
]
_PROVIDERS = ["acme", "billing", "internal", "notes", "nobody"]
_TAGS = ["http", "validation", "billing", "notes", "greek", "HTTP", "missing"]
_RELATION_KINDS = ["requires", "parent", "specializes", "related", "depends", "Requires"]
_DOCUMENTS = [
    "guide",
    "howto",
    "upstream",
    "big",
    "latin1",
    "folder",
    "missing",
    "escape",
    "..",
    "a/b",
]

_STRINGS = [
    "",
    " ",
    "x",
    "validate the JSON body of a POST route",
    "ünïcödé",
    "e\u0301",  # a combining mark
    "\u00e9",
    "\u4e2d\u6587\u8def\u7531",
    "\u0645\u0631\u062d\u0628\u0627",
    "\U0001f600",
    "\u0000",
    "\ufeffbom",
    "a" * 300,
    "\u212b",  # angstrom sign (NFC folds it)
    "İ",
    "ß",
    "\t\n",
]
_NUMBERS: list[Any] = [
    0,
    1,
    -1,
    2,
    5,
    20,
    21,
    100,
    500,
    501,
    1.0,
    1.5,
    -0.0,
    1e308,
    2**53,
    2**53 + 1,
    -(2**53) - 1,
    10**30,
    600000,
    600001,
]


def _pick(rng: random.Random, items: list[Any]) -> Any:
    return items[rng.randrange(len(items))]


def json_value(rng: random.Random, depth: int = 0) -> Any:
    """Any JSON value, small and shallow, biased to the awkward ones."""
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return _pick(rng, _NUMBERS)
    if kind in (3, 4):
        return _pick(rng, _STRINGS)
    if kind == 5:
        return [json_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    return {_pick(rng, ["a", "b", "request", "limit", ""]): json_value(rng, depth + 1)}


def _nested(depth: int, leaf: Any = 1) -> Any:
    value: Any = leaf
    for index in range(depth):
        value = [value] if index % 2 else {"a": value}
    return value


def _capability_id(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return str(_pick(rng, _CATALOG_IDS))
    return str(
        _pick(
            rng,
            [
                "acme",
                "acme::",
                "::x",
                "ACME::route.validation",
                "acme::nowhere",
                "nobody::x",
                "acme::route.validation ",
                "a" * 64 + "::x",
                "a" * 65 + "::x",
                "acme:::x",
            ],
        )
    )


# -- valid requests, one per tool ------------------------------------------------------------------


def _describe(rng: random.Random) -> dict[str, Any]:
    return {}


def _list(rng: random.Random) -> dict[str, Any]:
    request: dict[str, Any] = {}
    if rng.random() < 0.4:
        request["providers"] = rng.sample(_PROVIDERS, rng.randrange(1, 3))
    if rng.random() < 0.3:
        request["tags"] = rng.sample(_TAGS, rng.randrange(1, 3))
    if rng.random() < 0.5:
        request["limit"] = _pick(rng, [1, 2, 3, 100, 500])
    return request


def _resolve(rng: random.Random) -> dict[str, Any]:
    request: dict[str, Any] = {"ids": [_capability_id(rng) for _ in range(rng.randrange(1, 4))]}
    if rng.random() < 0.6:
        relations: dict[str, Any] = {}
        if rng.random() < 0.8:
            relations["kinds"] = rng.sample(_RELATION_KINDS[:4], rng.randrange(1, 5))
        if rng.random() < 0.8:
            relations["depth"] = rng.randrange(0, 9)
        request["relations"] = relations
    return request


def _match(rng: random.Random) -> dict[str, Any]:
    request: dict[str, Any] = {"request": _pick(rng, _STRINGS[1:]) or "route"}
    if rng.random() < 0.3:
        request["context"] = {
            _pick(rng, ["lang", "n", "flag", "x"]): _pick(rng, ["py", 3, True, 1.5])
            for _ in range(rng.randrange(1, 3))
        }
    if rng.random() < 0.3:
        request["providers"] = rng.sample(_PROVIDERS[:4], rng.randrange(1, 3))
    if rng.random() < 0.4:
        request["limit"] = rng.randrange(1, 21)
    if rng.random() < 0.2:
        request["timeoutMs"] = _pick(rng, [1000, 60000, 600000])
    return request


def _read(rng: random.Random) -> dict[str, Any]:
    return {"capabilityId": _capability_id(rng), "documentId": str(_pick(rng, _DOCUMENTS))}


VALID: dict[str, Callable[[random.Random], dict[str, Any]]] = {
    "describe_graph": _describe,
    "list_capabilities": _list,
    "resolve_capabilities": _resolve,
    "match_capabilities": _match,
    "read_document": _read,
}


def broken(rng: random.Random, request: Any) -> Any:
    """``request`` broken one way: a member missing, unknown, null or of another type, a value past
    a bound, deep nesting, or not an object at all."""
    kind = rng.randrange(7)
    if kind == 0 or not isinstance(request, dict):
        return _pick(rng, [None, [], "{}", 1, True, [{}]])
    mutated = dict(request)
    if kind == 1 and mutated:
        mutated.pop(_pick(rng, sorted(mutated)))
    elif kind == 2:
        mutated[_pick(rng, ["extra", "Limit", "ids", "request", "cursor", ""])] = json_value(rng)
    elif kind == 3 and mutated:
        mutated[_pick(rng, sorted(mutated))] = json_value(rng)
    elif kind == 4:
        mutated[_pick(rng, sorted(mutated) or ["x"])] = _nested(rng.randrange(20, 80))
    elif kind == 5:
        mutated["limit"] = _pick(rng, _NUMBERS)
    else:
        mutated["cursor"] = _pick(rng, ["", "=", "abc", "a" * 40, "eyJ2IjoxfQ", "!!", "a" * 40000])
    return mutated


def _tool_request(rng: random.Random) -> tuple[str, Any]:
    tool = str(_pick(rng, sorted(VALID)))
    request: Any = VALID[tool](rng)
    if rng.random() < 0.5:
        request = broken(rng, request)
    if rng.random() < 0.03:
        tool = str(_pick(rng, ["no_such_tool", "Describe_Graph", "describe", ""]))
    return tool, request


# -- campaigns ----------------------------------------------------------------------------------


def _call(rng: random.Random, index: int) -> GenCase:
    tool, request = _tool_request(rng)
    fixture = "catalog" if rng.random() < 0.85 else _pick(rng, ["model", "tight", "edges"])
    arguments: Any = request
    if rng.random() < 0.1:
        # The request as JSON text (CG-CONV-17): a text to the SDK and the Tool Adapter, a string
        # value to MCP and the CLI. The request written out (ASCII, lone surrogates escaped), or one
        # of the hostile texts.
        arguments = _pick(rng, [json.dumps(request), _json_text(rng)])
    return GenCase("call", fixture, action={"call": {"tool": tool, "arguments": arguments}})


_COMMANDS = ["describe", "list", "resolve", "match", "read", "call", "explain", "doctor", "nope"]
_FLAGS = {
    "list": ["--provider", "--tag", "--limit", "--cursor"],
    "resolve": ["--relations", "--depth"],
    "match": ["--context", "--provider", "--limit", "--timeout-ms"],
    "read": [],
    "describe": [],
    "call": ["--arguments", "--arguments-file"],
}
_INTEGER_TEXTS = [
    "0",
    "1",
    "-1",
    "+1",
    "01",
    "1.0",
    "1e2",
    " 1",
    "",
    "x",
    "500",
    "501",
    "9007199254740993",
    "9" * 30,
    "-0",
    "٣",
    "0x10",
]


def _json_text(rng: random.Random) -> str:
    """A JSON text for --arguments: valid, duplicate members, deep, big integers, NaN, BOM..."""
    kind = rng.randrange(10)
    if kind == 0:
        return '{"limit": 1, "limit": 2}'
    if kind == 1:
        depth = rng.randrange(28, 40)
        return '{"x":' * depth + "1" + "}" * depth
    if kind == 2:
        return '{"limit": ' + "1" * rng.choice([16, 399, 400, 401, 500]) + "}"
    if kind == 3:
        return str(_pick(rng, ['{"limit": NaN}', '{"limit": Infinity}', '{"limit": -0}', "{'a'}"]))
    if kind == 4:
        return "\ufeff{}"
    if kind == 5:
        return str(
            _pick(rng, ["", " ", "{", "[]", "null", "{}x", '"\\ud800"', '{"ids":["\\ud800"]}'])
        )
    if kind == 6:
        return "[" * rng.randrange(30, 2000)
    return json.dumps(VALID[_pick(rng, sorted(VALID))](rng), ensure_ascii=rng.random() < 0.5)


def _argv(rng: random.Random, index: int) -> GenCase:
    command = str(_pick(rng, _COMMANDS))
    argv: list[str] = [command]
    if command == "call":
        tool, request = _tool_request(rng)
        argv.append(tool)
        argv += ["--arguments", json.dumps(request) if rng.random() < 0.5 else _json_text(rng)]
    elif command == "resolve":
        argv += [_capability_id(rng) for _ in range(rng.randrange(0, 3))]
    elif command == "match":
        argv.append(str(_pick(rng, _STRINGS[1:])))
    elif command == "read":
        argv += [_capability_id(rng), str(_pick(rng, _DOCUMENTS))][: rng.randrange(3)]
    elif command == "explain":
        codes = ["CG_INPUT_INVALID", "CG_NOPE", "cg_input_invalid"]
        argv += [str(_pick(rng, codes))][: rng.randrange(2)]
    for _ in range(rng.randrange(3)):
        flags = [*_FLAGS.get(command, []), "--config", "--nope", "--json", "--", "-x"]
        flag = str(_pick(rng, flags))
        argv.append(flag)
        if flag in ("--limit", "--depth", "--timeout-ms"):
            argv.append(str(_pick(rng, _INTEGER_TEXTS)))
        elif flag in ("--provider",):
            argv.append(str(_pick(rng, _PROVIDERS)))
        elif flag == "--tag":
            argv.append(str(_pick(rng, _TAGS)))
        elif flag == "--relations":
            kinds = ",".join(rng.sample(_RELATION_KINDS, rng.randrange(1, 3)))
            argv.append(kinds + str(_pick(rng, ["", ","])))
        elif flag == "--context":
            argv.append(_pick(rng, ["lang=py", "n=3", "lang=py", "=x", "noequals", "a=b=c"]))
        elif flag == "--cursor":
            argv.append(_pick(rng, ["abc", "", "eyJ2IjoxfQ"]))
        elif flag == "--arguments":
            argv.append(_json_text(rng))
        elif flag == "--arguments-file":
            argv.append(_pick(rng, ["missing.json", ".", "providers"]))
        elif flag == "--config":
            argv.append(_pick(rng, ["{config}", "missing.json"]))
    argv = [a.replace("\0", "") for a in argv]  # a NUL cannot be in a process argument
    if "--config" not in argv and rng.random() < 0.95:
        argv += ["--config", "{config}"]
    if rng.random() < 0.05:
        argv[rng.randrange(len(argv))] += "\udcff"  # a byte that is not UTF-8
    return GenCase("argv", "catalog", action={"argv": argv})


def _config(rng: random.Random, index: int) -> GenCase:
    """A host configuration (and definition file), valid or broken, then describe and list."""
    definition: Any = {
        "providerId": _pick(rng, ["gen", "gen", "gen", "Gen", "g" * 65, "g" * 64]),
        "name": "Generated",
        "version": "1",
        "capabilities": [
            {"id": f"c{n}", "name": f"Cap {n}", "description": "Generated capability."}
            for n in range(rng.randrange(0, 4))
        ],
    }
    if rng.random() < 0.3:
        definition = broken(rng, definition)
    source: dict[str, Any] = (
        {"definition": definition} if rng.random() < 0.5 else {"path": "gen.json"}
    )
    config: dict[str, Any] = {"providers": [source]}
    if rng.random() < 0.3:
        config["scope"] = {"providers": rng.sample(["gen", "nobody"], rng.randrange(0, 3))}
    if rng.random() < 0.3:
        value = _pick(rng, [0, 1, 2, 100, 65536, 10**9, -1, 1.5, "1", None, 2**31])
        config["budgets"] = {_pick(rng, list(BUDGETS)): value}
    if rng.random() < 0.2:
        config["model"] = _pick(
            rng,
            [
                {"executor": "lexical"},
                {"executor": "scripted", "steps": []},
                {"executor": "lexical", "timeoutMs": 0},
                {"executor": "nope"},
                None,
            ],
        )
    if rng.random() < 0.3:
        config = broken(rng, config)
    text = json.dumps(config)
    if rng.random() < 0.1:
        text = _pick(rng, ["\ufeff" + text, text + "x", text.replace(":", ": ", 1), "", "{"])
    files = {"gen.json": json.dumps(definition)}
    tool = str(_pick(rng, ["describe_graph", "list_capabilities"]))
    return GenCase(
        "config",
        "empty",
        config_text=text,
        files=files,
        action={"call": {"tool": tool, "arguments": {}}},
    )


BUDGETS = {
    "maxCapabilities": "open",
    "maxCatalogEntries": "match",
    "maxResultBytes": "list",
    "maxInputBytes": "list",
    "maxDocumentBytes": "read",
    "maxDefinitionBytes": "open",
    "maxModelOutputBytes": "match",
}


def _budget(rng: random.Random, index: int) -> GenCase:
    """A budget set near the size of what a request needs: at, one below, one above."""
    name = str(_pick(rng, sorted(BUDGETS)))
    sizes = {
        "maxCapabilities": 6,
        "maxCatalogEntries": 4,
        "maxResultBytes": 900,
        "maxInputBytes": 40,
        "maxDocumentBytes": 60,
        "maxDefinitionBytes": 900,
        "maxModelOutputBytes": 120,
    }
    spread = 40 if sizes[name] > 100 else 3
    limit: Any = max(1, sizes[name] + rng.randrange(-spread, spread + 1))
    if rng.random() < 0.1:
        limit = _pick(rng, [0, -1, 2**53, 10**9 + 1, 1.5])
    # the fixture's scripted model gives way to the lexical one (a null member removes "steps")
    model = {"executor": "lexical", "steps": None}
    config: dict[str, Any] = {"budgets": {name: limit}, "model": model}
    what = BUDGETS[name]
    if what == "list":
        # few distinct requests, so that one request meets several limits (monotonicity)
        arguments: Any = {"limit": _pick(rng, [1, 5])}
        if name == "maxInputBytes":
            arguments["tags"] = ["x" * _pick(rng, [5, 30])]
        tool = "list_capabilities"
    elif what == "match":
        tool, arguments = "match_capabilities", {"request": "validate " * _pick(rng, [1, 3])}
    elif what == "read":
        tool = "read_document"
        document = _pick(rng, ["guide", "big"])
        arguments = {"capabilityId": "acme::route.validation", "documentId": document}
    else:
        tool, arguments = "describe_graph", {}
    return GenCase(
        "budget",
        "catalog",
        config=config,
        action={"call": {"tool": tool, "arguments": arguments}},
        meta={"budget": name, "limit": limit},
    )


_WORDS = [
    "route",
    "routes",
    "validation",
    "validate",
    "the",
    "a",
    "of",
    "JSON",
    "json",
    "café",
    "cafe\u0301",
    "Straße",
    "strasse",
    "ИНН",
    "検証",
    "العربية",
    "résumé",
    "invoice",
    "invoices",
    "note",
    "notes",
    "",
    "API",
    "naïve",
    "x",
]


def _lexical(rng: random.Random, index: int) -> GenCase:
    """A match with the lexical executor over a generated catalog (scripts, marks, plurals,
    stopwords, ties)."""
    capabilities = []
    for n in range(rng.randrange(1, 6)):
        words = " ".join(_pick(rng, _WORDS) for _ in range(rng.randrange(1, 5))) or "blank"
        capability: dict[str, Any] = {"id": f"c{n}", "name": words, "description": words}
        if rng.random() < 0.3:
            capability["tags"] = [str(_pick(rng, ["http", "json", "billing"]))]
        if rng.random() < 0.3:
            capability["whenToUse"] = " ".join(_pick(rng, _WORDS) for _ in range(3)) or "x"
        capabilities.append(capability)
    definition = {
        "providerId": "lex",
        "name": "Lexical",
        "version": "1",
        "capabilities": capabilities,
    }
    request = " ".join(_pick(rng, _WORDS) for _ in range(rng.randrange(1, 5))).strip() or "route"
    arguments: dict[str, Any] = {"request": request}
    if rng.random() < 0.3:
        arguments["limit"] = rng.randrange(1, 6)
    config = {"providers": [{"definition": definition}], "model": {"executor": "lexical"}}
    return GenCase(
        "lexical",
        "empty",
        config=config,
        action={"call": {"tool": "match_capabilities", "arguments": arguments}},
    )


def _mcp(rng: random.Random, index: int) -> GenCase:
    """A ``tools/call`` frame: arguments null, missing or of another type, lone surrogates, deep
    nesting, unknown tools; or a malformed frame."""
    kind = rng.randrange(8)
    tool, request = _tool_request(rng)
    params: dict[str, Any] = {"name": tool, "arguments": request}
    if kind == 0:
        params.pop("arguments")
    elif kind == 1:
        params["arguments"] = None
    elif kind == 2:
        params["arguments"] = {"request": "\ud800x", "ids": ["acme::\udfff"]}
    elif kind == 3:
        params["arguments"] = _nested(rng.randrange(20, 200))
    elif kind == 4:
        params["name"] = _pick(rng, ["no_such_tool", None, 1, ""])
    if kind == 5:
        frame = _pick(
            rng,
            [
                "not json",
                "{",
                "[]",
                "{}",
                '{"jsonrpc":"2.0","id":7}',
                '{"jsonrpc":"2.0","id":7,"method":"tools/call"}',
                '{"jsonrpc":"2.0","id":7,"method":"nope/nope"}',
                '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[]}',
                "\ufeff{}",
                '{"jsonrpc":"1.0","id":7,"method":"tools/list"}',
            ],
        )
        return GenCase("mcp", "catalog", action={"frame": frame})
    frame = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    return GenCase("mcp", "catalog", action={"frame": frame})


Generator = Callable[[random.Random, int], GenCase]

#: campaign -> (generator, the surfaces it runs on, surfaces run only on every n-th case). A
#: campaign whose cases each need a configuration of their own pays a process start per case on
#: MCP (a server per configuration) and the CLI; those surfaces sample the cases.
CAMPAIGNS: dict[str, tuple[Generator, tuple[str, ...], dict[str, int]]] = {
    "call": (_call, ("sdk", "tool", "mcp", "cli"), {"cli": 4}),
    "argv": (_argv, ("cli",), {}),
    "config": (_config, ("sdk", "tool", "mcp", "cli"), {"mcp": 3, "cli": 3}),
    "budget": (_budget, ("sdk", "tool", "mcp"), {"mcp": 3}),
    "lexical": (_lexical, ("sdk", "tool", "mcp"), {"mcp": 5}),
    "mcp": (_mcp, ("mcp",), {}),
}


def generate(campaign: str, seed: int, index: int) -> GenCase:
    """Case ``index`` of ``campaign`` under ``seed`` (the same three give the same case)."""
    rng = random.Random(f"{seed}:{campaign}:{index}")  # noqa: S311 -- replayable, not secret
    case = CAMPAIGNS[campaign][0](rng, index)
    case.index = index
    return case
