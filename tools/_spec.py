"""Shared helpers of the spec tools: load the Capability Graph schemas, validate with them, walk
their ``$ref``s, and bundle a schema into a self-contained one (for ``tools.json``).

Used by ``tools/check_spec.py``, ``tools/codegen.py`` and ``tools/tests``. Only the standard
library, ``jsonschema`` and ``referencing`` are needed (the nox ``spec`` session installs nothing
else).

Patterns: JSON Schema patterns are ECMA-262 regular expressions, where ``$`` (without the
multiline flag) matches only at the very end of the string. Python's ``re`` also lets ``$``
match before a final newline, so a stock Python validator accepts ``"acme\\n"`` for
``^[a-z]+$``. The validators built here translate ``$`` to ``\\Z`` so that they judge patterns
as ECMA-262 (and as Pydantic's Rust engine, ajv or Go) do.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import jsonschema
import referencing
import referencing.jsonschema
from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec" / "capability-graph"
SCHEMAS = SPEC / "schemas"
EXAMPLES = SPEC / "examples"
TOOLS_JSON = SPEC / "tools.json"
MODELS = ROOT / "python" / "capability-graph" / "src" / "capability_graph" / "_generated" / "models"

BASE_URI = "https://schemas.capability-graph.dev/v1/"
SUFFIX = ".schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class Tool:
    """A tool of ``tools.json`` and the schemas its input and output are bundled from."""

    name: str
    request: str
    result: str


TOOLS = (
    Tool("describe_graph", "describe-request.schema.json", "describe-result.schema.json"),
    Tool("list_capabilities", "list-request.schema.json", "list-result.schema.json"),
    Tool("resolve_capabilities", "resolve-request.schema.json", "resolve-result.schema.json"),
    Tool("match_capabilities", "match-request.schema.json", "match-result.schema.json"),
    Tool("read_document", "read-document-request.schema.json", "read-document-result.schema.json"),
)


def stem(name: str) -> str:
    """``"list-request.schema.json"`` -> ``"list-request"``."""
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name


def module_name(name: str) -> str:
    """The generated module of a schema file: ``list-request.schema.json`` -> ``list_request``."""
    return stem(name).replace("-", "_")


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def load_schemas(directory: Path = SCHEMAS) -> dict[str, dict[str, Any]]:
    """Every ``*.schema.json`` of ``directory`` by file name, in file-name order."""
    return {p.name: load_json(p) for p in sorted(directory.glob("*" + SUFFIX))}


def registry(schemas: dict[str, dict[str, Any]] | None = None) -> referencing.Registry[Any]:
    """A registry holding every schema under its ``$id`` (and under ``BASE_URI + file name``)."""
    schemas = load_schemas() if schemas is None else schemas
    resources: dict[str, referencing.Resource[Any]] = {}
    for name, schema in schemas.items():
        resource = referencing.jsonschema.DRAFT202012.create_resource(schema)
        resources[BASE_URI + name] = resource
        if isinstance(schema.get("$id"), str):
            resources[schema["$id"]] = resource
    return referencing.Registry().with_resources(resources.items())


# -- ECMA-262 patterns -----------------------------------------------------------------------


def ecma_to_python(pattern: str) -> str:
    """Translate an ECMA-262 pattern (no flags) for Python's ``re``: an unescaped ``$`` outside
    a character class becomes ``\\Z`` (end of string only). Everything our schemas use otherwise
    means the same in both dialects."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            char = r"\Z"
        out.append(char)
        i += 1
    return "".join(out)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(ecma_to_python(pattern))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _compiled(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


SpecValidator = jsonschema.validators.extend(Draft202012Validator, {"pattern": _pattern})
"""Draft 2020-12 with ECMA-262 ``$`` semantics for ``pattern`` (and so ``propertyNames``)."""


def validator_for(
    name: str,
    schemas: dict[str, dict[str, Any]] | None = None,
    reg: referencing.Registry[Any] | None = None,
) -> Validator:
    """A validator for schema file ``name`` (or ``"file.schema.json#/$defs/X"``) resolving every
    sibling ``$ref``. Build it once and reuse it."""
    schemas = load_schemas() if schemas is None else schemas
    reg = registry(schemas) if reg is None else reg
    schema: dict[str, Any] = {"$ref": BASE_URI + name} if "#" in name else schemas[name]
    validator: Validator = SpecValidator(schema, registry=reg)
    return validator


# -- walking schemas ---------------------------------------------------------------------------


def pointer_join(pointer: str, part: str | int) -> str:
    return f"{pointer}/{str(part).replace('~', '~0').replace('/', '~1')}"


# The applicator keywords of Draft 2020-12 that hold subschemas; every other keyword holds data
# ("examples", "default", "const", "enum", "discriminator", ...), which is never walked.
_SCHEMA_MAP_KEYWORDS = frozenset({"$defs", "properties", "patternProperties", "dependentSchemas"})
_SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_KEYWORDS = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "not",
        "if",
        "then",
        "else",
    }
)


def iter_subschemas(schema: Any, pointer: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(json pointer, subschema)`` for ``schema`` and every subschema in it."""
    if not isinstance(schema, dict):
        return
    yield pointer, schema
    for key, value in schema.items():
        here = pointer_join(pointer, key)
        if key in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            for sub, subschema in value.items():
                yield from iter_subschemas(subschema, pointer_join(here, sub))
        elif key in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            for index, item in enumerate(value):
                yield from iter_subschemas(item, pointer_join(here, index))
        elif key in _SCHEMA_KEYWORDS:
            yield from iter_subschemas(value, here)


def iter_refs(schema: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Yield ``(json pointer of the subschema, $ref value)`` for every ``$ref`` in ``schema``."""
    for pointer, subschema in iter_subschemas(schema):
        ref = subschema.get("$ref")
        if isinstance(ref, str):
            yield pointer, ref


# -- bundling ------------------------------------------------------------------------------------


def _split(base_uri: str, ref: str) -> tuple[str, str]:
    """``(absolute resource URI, fragment)`` of ``ref`` seen from resource ``base_uri``."""
    uri, fragment = urldefrag(urljoin(base_uri, ref))
    return uri, fragment


class BundleError(ValueError):
    """A ``$ref`` reached while bundling does not resolve."""


def _resolve_pointer(document: Any, fragment: str) -> Any:
    node = document
    if not fragment:
        return node
    if not fragment.startswith("/"):
        raise BundleError(f"unsupported fragment {fragment!r} (only JSON pointers)")
    try:
        for raw in fragment[1:].split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node[part]
    except (KeyError, IndexError, ValueError, TypeError):
        raise BundleError(f"#{fragment} does not exist") from None
    return node


def bundle(name: str, schemas: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Schema file ``name`` as one self-contained schema: every schema it reaches through
    ``$ref`` (in its own file or another) is copied under ``$defs`` (named by its title) and every
    ``$ref`` becomes local (``#/$defs/Name``, or ``#`` for the root). ``$id``/``$schema`` are
    dropped, so the result can be handed as is to MCP clients and function-calling APIs.
    Raises ``BundleError`` when a ``$ref`` does not resolve."""
    schemas = load_schemas() if schemas is None else schemas
    by_uri = {BASE_URI + n: s for n, s in schemas.items()}
    root_uri = BASE_URI + name
    names: dict[tuple[str, str], str] = {}
    defs: dict[str, Any] = {}

    def def_name(uri: str, fragment: str) -> str:
        key = (uri, fragment)
        if key in names:
            return names[key]
        if uri not in by_uri:
            raise BundleError(f"$ref to {uri} (no such schema)")
        target = _resolve_pointer(by_uri[uri], fragment)
        base = target.get("title") if isinstance(target, dict) else None
        if not isinstance(base, str):
            base = fragment.rsplit("/", 1)[-1] if fragment else stem(uri.rsplit("/", 1)[-1])
        candidate, counter = base, 2
        while candidate in defs:
            candidate, counter = f"{base}{counter}", counter + 1
        names[key] = candidate
        defs[candidate] = None  # reserve the name before recursing (recursive schemas)
        defs[candidate] = rewrite(target, uri, whole_document=not fragment)
        return candidate

    def rewrite(node: Any, uri: str, *, whole_document: bool = False) -> Any:
        if not isinstance(node, dict):
            return copy.deepcopy(node)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$id", "$schema") or (key == "$defs" and whole_document):
                continue
            if key == "$ref" and isinstance(value, str):
                target_uri, fragment = _split(uri, value)
                local = (target_uri, fragment) == (root_uri, "")
                out[key] = "#" if local else "#/$defs/" + def_name(target_uri, fragment)
            elif key in _SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                out[key] = {sub: rewrite(subschema, uri) for sub, subschema in value.items()}
            elif key in _SCHEMA_LIST_KEYWORDS and isinstance(value, list):
                out[key] = [rewrite(item, uri) for item in value]
            elif key in _SCHEMA_KEYWORDS:
                out[key] = rewrite(value, uri)
            else:
                out[key] = copy.deepcopy(value)
        return out

    bundled: dict[str, Any] = rewrite(schemas[name], root_uri, whole_document=True)
    if defs:
        bundled["$defs"] = dict(sorted(defs.items()))
    return bundled


def render_json(value: Any) -> str:
    """The canonical text of a JSON file written by the tools: 2-space indent, UTF-8, newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def render_tools(tools_document: dict[str, Any], schemas: dict[str, dict[str, Any]]) -> str:
    """``tools.json`` with every tool's input and output schemas re-bundled from ``schemas``
    (names, titles, descriptions and annotations are kept as written)."""
    document = copy.deepcopy(tools_document)
    by_name = {tool.name: tool for tool in TOOLS}
    for entry in document.get("tools", []):
        tool = by_name.get(entry.get("name"))
        if tool is None:
            continue
        entry["inputSchema"] = bundle(tool.request, schemas)
        entry["outputSchema"] = bundle(tool.result, schemas)
    return render_json(document)


# -- examples ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """``examples/<schema stem>/{valid,invalid}/<name>.json``."""

    schema: str  # schema file name
    valid: bool
    path: Path

    @property
    def id(self) -> str:
        return f"{stem(self.schema)}/{'valid' if self.valid else 'invalid'}/{self.path.stem}"

    def load(self) -> Any:
        return load_json(self.path)


def iter_examples(directory: Path = EXAMPLES) -> Iterator[Example]:
    """Every example file, sorted by schema, label and name."""
    for schema_dir in sorted(p for p in directory.iterdir() if p.is_dir()):
        for label in ("valid", "invalid"):
            for path in sorted((schema_dir / label).glob("*.json")):
                yield Example(schema_dir.name + SUFFIX, label == "valid", path)
