"""How many faults an input has, for the one allowed variation that depends on it (CG-MSG-8).

With one fault the message is the grammar's and is compared; with several an implementation may
report any one of them, so two conforming implementations may name different ones. A fault is
counted per value and rule: each pure-JSON fault of a value (a lone surrogate, an integer beyond
2^53, a null member, NaN, a container at depth 33), and each keyword error of the value's schema
at its instance pointer. In a request, CG-MSG-19 orders some faults (pure-JSON faults first, in
document order; ``type`` before a value's other keywords): those count as one. The count errs
towards *one*: anything this module cannot read counts as one fault, so the messages are
compared.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..schemas import SchemaSet
from .model import GenCase

__all__ = ["fault_count", "mcp_request"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DEPTH = 32
_SAFE = 2**53


def _pure_faults(value: Any, pointer: str, depth: int, found: set[tuple[str, str]]) -> None:
    if isinstance(value, str):
        if _SURROGATE.search(value):
            found.add((pointer, "surrogate"))
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if abs(value) > _SAFE:
            found.add((pointer, "range"))
    elif isinstance(value, float):
        if not math.isfinite(value):
            found.add((pointer, "non-finite"))
        elif value.is_integer() and _SAFE < abs(value) < 1e21:
            found.add((pointer, "range"))
    elif isinstance(value, dict | list):
        if depth > _MAX_DEPTH:
            found.add((pointer, "depth"))
            return
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in items:
            name = str(key).replace("~", "~0").replace("/", "~1")
            if isinstance(key, str) and _SURROGATE.search(key):
                found.add((f"{pointer}/{name}", "surrogate-name"))
            if child is None:
                found.add((f"{pointer}/{name}", "null"))
            _pure_faults(child, f"{pointer}/{name}", depth + 1, found)


def _clipped(value: Any, depth: int = 0) -> Any:
    """``value`` with every container at depth 33 replaced by an empty one (the schema check
    must not follow a million levels; the depth fault is counted apart)."""
    if isinstance(value, dict):
        if depth > _MAX_DEPTH:
            return {}
        return {k: _clipped(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth > _MAX_DEPTH:
            return []
        return [_clipped(v, depth + 1) for v in value]
    return value


def _count(value: Any, schema: str, schemas: SchemaSet, request: bool = False) -> int:
    """The faults of ``value``; for a request, as CG-MSG-19 orders them: a pure-JSON fault (outside
    ``context``, whose values the context rules judge, but its depth included) is reported first
    and in document order, so with one the answer is determined (1); a ``type`` fault of a value
    comes before its other keywords, which then do not count."""
    found: set[tuple[str, str]] = set()
    _pure_faults(value, "", 0, found)
    if request:
        pure = {f for f in found if f[1] == "depth" or not f[0].startswith("/context")}
        if pure:
            return 1
        found = set()
    try:
        for error in schemas.validator(schema).iter_errors(_clipped(value)):
            where = "".join(
                "/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path
            )
            found.add((where, str(error.validator)))
    except (RecursionError, re.error, TypeError, ValueError):
        return 1
    if request:
        typed = {where for where, rule in found if rule == "type"}
        found = {(where, rule) for where, rule in found if where not in typed or rule == "type"}
    return len(found)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def mcp_request(frame: str) -> bool:
    """Whether a stdin line is a request that CG-MCP-6 binds: a JSON object with
    ``"jsonrpc": "2.0"``, a string ``method``, an ``id`` that is an integer or a string without
    lone surrogates, and ``params``, when present, an object."""
    message = _loads(frame)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    ident = message.get("id")
    if isinstance(ident, bool) or not isinstance(ident, int | str | float):
        return False
    if isinstance(ident, float) and not ident.is_integer():
        return False
    if isinstance(ident, str) and _SURROGATE.search(ident):
        return False
    return isinstance(message.get("method"), str) and isinstance(message.get("params", {}), dict)


def _argv_faults(argv: Any, schemas: SchemaSet, operations: dict[str, str]) -> int:
    """The faults of the request of ``call TOOL --arguments TEXT`` (one tool name, one
    ``--arguments``, no ``--arguments-file``); 1 for any other command line."""
    if not isinstance(argv, list) or argv[:1] != ["call"] or "--arguments-file" in argv:
        return 1
    texts = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "--arguments"]
    texts += [word.partition("=")[2] for word in argv if word.startswith("--arguments=")]
    tools = [word for word in argv if word in operations]
    if len(texts) != 1 or len(tools) != 1:
        return 1
    arguments = _loads(texts[0])
    if arguments is None:
        return 1
    return _count(arguments, operations[tools[0]], schemas, request=True)


def fault_count(case: GenCase, code: str, schemas: SchemaSet, operations: dict[str, str]) -> int:
    """The faults of the value that ``code`` judges in ``case`` (1 when it cannot tell)."""
    if code == "CG_INPUT_INVALID" and "call" in case.action and case.config_text is None:
        call = case.action["call"]
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):
            arguments = _loads(arguments)
        schema = operations.get(str(call.get("tool")))
        if not schema or arguments is None:
            return 1
        return _count(arguments, schema, schemas, request=True)
    if code == "CG_INPUT_INVALID" and "argv" in case.action:
        return _argv_faults(case.action["argv"], schemas, operations)
    if code == "CG_INPUT_INVALID" and "frame" in case.action:
        frame = _loads(case.action["frame"])
        params = frame.get("params") if isinstance(frame, dict) else None
        if not isinstance(params, dict) or not isinstance(params.get("arguments"), dict):
            return 1
        schema = operations.get(str(params.get("name")))
        return _count(params["arguments"], schema, schemas, request=True) if schema else 1
    if code == "CG_CONFIG_INVALID" and case.config_text is not None:
        config = _loads(case.config_text)
        if not isinstance(config, dict):
            return 1
        return _count(config, "config.schema.json", schemas)
    if code == "CG_DEFINITION_INVALID" and case.config_text is not None:
        config = _loads(case.config_text)
        providers = config.get("providers") if isinstance(config, dict) else None
        if not isinstance(providers, list) or len(providers) != 1:
            return 1
        source = providers[0]
        if isinstance(source, dict) and "definition" in source:
            definition = source["definition"]
        elif isinstance(source, dict) and isinstance(source.get("path"), str):
            definition = _loads(case.files.get(source["path"], ""))
        else:
            return 1
        return _count(definition, "definition.schema.json", schemas)
    return 1
