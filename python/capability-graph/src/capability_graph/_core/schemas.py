"""Validation of JSON values against the contract's schemas.

Two validators, one authority. The JSON Schemas of ``spec/capability-graph/schemas`` are the
contract (a built package carries them in ``_spec/``, see :func:`contract_files`); the Pydantic
models generated from them are the fast path. A value is checked with its generated model first;
only when that fails (the rare path) is the schema consulted, to name the JSON pointer and the
expected type in the message -- never the value.
A test corpus keeps both in agreement.

Why one module of this size: which fault of a value is reported (CG-MSG-14, CG-MSG-17, and the
discriminators of CG-MSG-21, derived here from the schemas) and how it is worded are one rule of
messages.md; apart, the choice would need the wording's internals, as in TypeScript's schemas.ts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from urllib.parse import urljoin

from .._generated.taxonomy import ErrorCode, Phase
from .._generated.validators import validator
from .errors import GraphError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from pydantic import BaseModel

__all__ = [
    "FORMATS",
    "Discriminator",
    "allowed_keys_hint",
    "check_shape",
    "compiled_accepts",
    "compiled_validator",
    "describe_problem",
    "discriminator_of",
    "discriminators",
    "json_equal",
    "load_schema",
    "model_accepts",
    "pointer_message",
    "safe_pointer",
]

SCHEMA_BASE = "https://schemas.capability-graph.dev/v1/"
#: Where an editable install from the checkout finds the contract: the repository's own files.
_CHECKOUT_CONTRACT: Final = Path(__file__).resolve().parents[5] / "spec" / "capability-graph"


@cache
def contract_files() -> Path:
    """The folder holding the contract's ``schemas/*.schema.json`` and ``tools.json``.

    A built package carries them in ``capability_graph/_spec/`` (copied from
    ``spec/capability-graph/`` at build time, never committed twice); an editable install runs
    from the checkout and reads ``spec/capability-graph/`` itself. The package is installed as
    files (a wheel), so they are read by path: ``importlib.resources`` would cost every command
    line its import."""
    packaged = Path(__file__).resolve().parents[1] / "_spec"
    if packaged.is_dir():
        return packaged
    if (_CHECKOUT_CONTRACT / "schemas").is_dir():
        return _CHECKOUT_CONTRACT
    raise RuntimeError("capability_graph is installed without its contract files; reinstall it")


def _schema_names() -> list[str]:
    return sorted(
        p.name
        for p in contract_files().joinpath("schemas").iterdir()
        if p.name.endswith(".schema.json")
    )


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A schema (``*.schema.json``) or the tools document (``tools.json``) of the contract."""
    folder = contract_files() if name == "tools.json" else contract_files().joinpath("schemas")
    schema: dict[str, Any] = json.loads(folder.joinpath(name).read_text("utf-8"))
    return schema


@cache
def _validator(name: str) -> Validator:
    import jsonschema
    from referencing import Registry, Resource

    registry: Registry[Any] = Registry().with_resources(
        (SCHEMA_BASE + n, Resource.from_contents(load_schema(n))) for n in _schema_names()
    )
    # "file.schema.json#/$defs/Name" validates against a part of a schema.
    schema = {"$ref": SCHEMA_BASE + name} if "#" in name else load_schema(name)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@cache
def _contract_keys() -> frozenset[str]:
    """Every property name any schema of the contract defines."""
    keys: set[str] = set()
    stack: list[Any] = [load_schema(name) for name in _schema_names()]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                keys.update(properties)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(keys)


_MAX_POINTER = 160


def safe_pointer(pointer: str) -> str:
    """``pointer`` cut before its first token that is neither an array index nor a key of the
    contract, and to at most 160 characters: a message names where a problem is, but never
    echoes what the caller wrote (an unknown key may itself be a secret)."""
    tokens = pointer.split("/")[1:] if pointer else []
    kept = ""
    for token in tokens:
        name = token.replace("~1", "/").replace("~0", "~")
        if not (token.isascii() and token.isdigit()) and name not in _contract_keys():
            break
        if len(kept) + 1 + len(token) > _MAX_POINTER:
            break
        kept += "/" + token
    return kept or "/"


MAX_MESSAGE = 300


def pointer_message(pointer: str, phrase: str, hint: str | None = None) -> str:
    """``"<safe pointer> <phrase>"``, the form of every pointer message, with `` (<hint>)`` when
    one fits in the 300 characters of a message (messages.md: the grammar of pointer messages)."""
    message = f"{safe_pointer(pointer)} {phrase}"
    if hint is not None and len(message) + len(hint) + 3 <= MAX_MESSAGE:
        message += f" ({hint})"
    return message


def allowed_keys_hint(keys: Iterable[str]) -> str:
    """``allowed: a, b, c`` -- the keys an object takes, in the schema's order (contract words)."""
    names = list(keys)
    return "allowed: " + (", ".join(names) if names else "none")


# The expected format of every titled string definition with a ``pattern`` that a request, a
# configuration or a definition can hold, by the definition's ``title``. The same table is in
# spec/capability-graph/spec/messages.md ([CG-MSG-6]); a test keeps the two equal.
FORMATS: Final = {
    "CapabilityId": "provider::capability",
    "ProviderId": "a-z, then up to 63 of a-z 0-9 . _ -",
    "LocalCapabilityId": "a-z, then up to 127 of a-z 0-9 . _ -",
    "DocumentId": "A-Z or a-z, then up to 127 of A-Z a-z 0-9 . _ -",
    "Cursor": "the nextCursor of a previous page",
    "ExecutorName": "a-z, then up to 63 of a-z 0-9 . _ -",
    "DocumentRole": "a-z, then up to 63 of a-z 0-9 _ -",
    "Locale": "a language tag such as en or zh-CN",
    "DocumentPath": "a relative path of plain names joined by /",
    "Tag": "text without spaces or control characters",
    "DisplayName": "text without control characters",
    "VersionLabel": "text without control characters",
    "Text": "text without control characters other than tab, newline and carriage return",
    "HttpUrl": "an absolute http or https URL",
    "BaseUrl": "an absolute http or https URL without query or fragment",
    "EnvVarName": "an environment variable name: A-Z a-z _, then up to 127 of A-Z a-z 0-9 _",
    "LocalPath": "a path without NUL characters",
}


_TYPE_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
}


def _hint(error: Any) -> str | None:
    """What lets the caller fix the call, in contract words: the keys an object allows, or the
    expected format of a string."""
    keyword = error.validator
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        properties = error.schema.get("properties", {})
        return allowed_keys_hint(properties)
    if keyword == "pattern":
        title = error.schema.get("title")
        if title in FORMATS:
            return f"expected: {FORMATS[title]}"
    return None


def _phrase(error: Any) -> str:
    """What is wrong, in the schema's terms; never the offending value."""
    keyword = error.validator
    expected = error.validator_value
    if keyword == "type":
        kinds = [expected] if isinstance(expected, str) else list(expected)
        return "must be " + " or ".join(_TYPE_NAMES.get(k, k) for k in kinds)
    if keyword == "required":
        missing = [
            k for k in expected if isinstance(error.instance, dict) and k not in error.instance
        ]
        return f"requires the key {missing[0]}" if missing else "misses a required key"
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        return "has a key that is not allowed"
    if keyword in ("enum", "const"):
        return _one_of(expected if keyword == "enum" else [expected])
    if keyword == "pattern":
        return "does not have the required format"
    if keyword in ("minLength", "maxLength"):
        bound = "at least" if keyword == "minLength" else "at most"
        return f"must have {bound} {expected} characters"
    if keyword in ("minItems", "maxItems"):
        bound = "at least" if keyword == "minItems" else "at most"
        return f"must have {bound} {expected} items"
    if keyword in ("minProperties", "maxProperties"):
        bound = "at least" if keyword == "minProperties" else "at most"
        return f"must have {bound} {expected} keys"
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        words = {
            "minimum": "at least",
            "maximum": "at most",
            "exclusiveMinimum": "greater than",
            "exclusiveMaximum": "less than",
        }
        return f"must be {words[keyword]} {expected}"
    if keyword == "uniqueItems":
        return "must not repeat items"
    if keyword == "propertyNames":
        return "has a key that does not have the required format"
    if keyword in ("oneOf", "anyOf"):
        return "does not match any allowed shape"
    return "is invalid"


class Discriminator(NamedTuple):
    """The member ``name`` whose ``const`` tells the branches of a ``oneOf`` apart, and the
    ``const`` of each branch, in branch order ([CG-MSG-21]). A named tuple, not a dataclass:
    every command line imports this module, and making a dataclass costs it about a
    millisecond (``docs/contributing.md``)."""

    name: str
    values: tuple[Any, ...]


def json_equal(left: Any, right: Any) -> bool:
    """Equality of two JSON values, where a boolean is never a number (``True == 1`` in Python)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(json_equal, left, right))
    numbers = isinstance(left, (int, float)) and isinstance(right, (int, float))
    return (numbers or type(left) is type(right)) and left == right


#: Follows the ``$ref`` of a schema found in the resource at a base URI: the schema referred to
#: and the base URI of its resource.
Resolve = Callable[[dict[str, Any], str], tuple[dict[str, Any], str]]


def discriminator_of(branches: list[Any], base: str, resolve: Resolve) -> Discriminator | None:
    """The discriminator of a ``oneOf`` of these ``branches`` (found in the resource at ``base``),
    or None ([CG-MSG-21]): a member name that every branch, read through its ``$ref``, an object
    schema, requires and gives a ``const``, the consts pairwise different; the first such name of
    the first branch's ``properties``."""
    if len(branches) < 2 or not all(isinstance(b, dict) for b in branches):
        return None
    resolved = [resolve(b, base) for b in branches]
    if not all(b.get("type") == "object" for b, _ in resolved):
        return None
    for name in resolved[0][0].get("properties", {}):
        values: list[Any] = []
        for branch, where in resolved:
            member = branch.get("properties", {}).get(name)
            member = resolve(member, where)[0] if isinstance(member, dict) else {}
            if name not in branch.get("required", []) or "const" not in member:
                break
            values.append(member["const"])
        else:
            if not any(json_equal(a, b) for i, a in enumerate(values) for b in values[i + 1 :]):
                return Discriminator(name, tuple(values))
    return None


# Keywords whose values are data, never subschemas (a const may hold any key at all).
_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples", "discriminator"})


def _resolve(node: dict[str, Any], base: str) -> tuple[dict[str, Any], str]:
    while isinstance(node.get("$ref"), str):
        base, _, fragment = urljoin(base, node["$ref"]).partition("#")
        node = load_schema(base.removeprefix(SCHEMA_BASE))
        for token in fragment.split("/")[1:]:
            node = node[token.replace("~1", "/").replace("~0", "~")]
    return node, base


@cache
def _discriminators() -> dict[int, tuple[dict[str, Any], Discriminator]]:
    """Every ``oneOf`` of the contract's schemas that has a discriminator, by the identity of the
    schema object holding it: the very objects the validators walk (``load_schema`` is cached and
    the validators' registry holds its results)."""
    found: dict[int, tuple[dict[str, Any], Discriminator]] = {}
    for name in _schema_names():
        stack: list[Any] = [load_schema(name)]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                branches = node.get("oneOf")
                if isinstance(branches, list):
                    tag = discriminator_of(branches, SCHEMA_BASE + name, _resolve)
                    if tag is not None:
                        found[id(node)] = (node, tag)
                stack.extend(v for k, v in node.items() if k not in _DATA_KEYWORDS)
            elif isinstance(node, list):
                stack.extend(node)
    return found


def discriminators() -> dict[str, Discriminator]:
    """The discriminator of every ``oneOf`` that has one, by the title of the schema holding it."""
    return {str(node.get("title")): tag for node, tag in _discriminators().values()}


def _discriminator(combinator: Any) -> Discriminator | None:
    """The discriminator of the ``oneOf`` an error reports, or None ([CG-MSG-21])."""
    if combinator.validator != "oneOf":
        return None
    entry = _discriminators().get(id(combinator.schema))
    return entry[1] if entry is not None and entry[0] is combinator.schema else None


class _Fault(NamedTuple):
    """The fault reported: where (the instance path), what is wrong, and the hint (a named
    tuple, as :class:`Discriminator`)."""

    path: list[Any]
    phrase: str
    hint: str | None = None


def _best(errors: list[Any]) -> _Fault | None:
    """The fault to report ([CG-MSG-14]): the highest in the instance; inside a ``oneOf`` with a
    discriminator, the fault of the branch it selects ([CG-MSG-21]); inside another
    oneOf/anyOf, the one branch the value was meant for when only its unknown members fail it
    ([CG-MSG-17]), else the most specific branch error unless two tie."""
    import heapq

    from jsonschema.exceptions import relevance

    best = max(errors, key=relevance, default=None)
    while best is not None and best.context:
        tag = _discriminator(best)
        if tag is not None:
            selected = _selected_branch(best, tag)
            if isinstance(selected, _Fault):
                return selected
            if not selected:
                break
            # The branch as if it were the schema: its error highest in the value.
            best = max(selected, key=relevance)
            continue
        meant = _branch_failing_only_by_unknown_members(best)
        if meant is not None:
            best = meant
            break
        smallest = heapq.nsmallest(2, best.context, key=relevance)
        if len(smallest) == 2 and relevance(smallest[0]) == relevance(smallest[1]):
            break
        best = smallest[0]
    if best is None:
        return None
    return _Fault(list(best.absolute_path), _phrase(best), _hint(best))


def _selected_branch(combinator: Any, tag: Discriminator) -> _Fault | list[Any]:
    """The fault of a value failing a ``oneOf`` with a discriminator that selects no branch (not
    an object, no discriminator, an unknown one), else the errors of the branch it selects
    ([CG-MSG-21])."""
    path = list(combinator.absolute_path)
    value = combinator.instance
    if not isinstance(value, dict):
        return _Fault(path, "must be " + _TYPE_NAMES["object"])
    if tag.name not in value:
        return _Fault(path, f"requires the key {tag.name}")
    chosen = [i for i, const in enumerate(tag.values) if json_equal(const, value[tag.name])]
    if not chosen:
        return _Fault([*path, tag.name], _one_of(tag.values))
    return [e for e in combinator.context if e.relative_schema_path[0] == chosen[0]]


def _one_of(values: Iterable[Any]) -> str:
    return "must be one of: " + ", ".join(json.dumps(v) for v in values)


def _branch_failing_only_by_unknown_members(combinator: Any) -> Any:
    """The ``additionalProperties`` error of the one branch of ``combinator`` whose every error
    is that the value itself has members the branch does not allow, or None ([CG-MSG-17])."""
    by_branch: dict[Any, list[Any]] = {}
    for error in combinator.context:
        by_branch.setdefault(error.relative_schema_path[0], []).append(error)
    meant = [
        errors[0]
        for errors in by_branch.values()
        if all(e.validator == "additionalProperties" and not e.relative_path for e in errors)
    ]
    return meant[0] if len(meant) == 1 else None


def describe_problem(schema_name: str, value: Any, prefix: str = "") -> str | None:
    """``"<pointer> <phrase>"`` for the first schema violation of ``value``, or None if valid."""
    errors = list(_validator(schema_name).iter_errors(value))
    if not errors:
        return None
    fault = _best(errors)
    if fault is None:
        return None
    return pointer_message(prefix + _pointer(fault.path), fault.phrase, fault.hint)


def model_accepts(model: type[BaseModel], value: Any) -> bool:
    """Whether the generated Pydantic ``model`` accepts ``value``."""
    from pydantic import ValidationError

    try:
        model.model_validate(value)
    except ValidationError:
        return False
    return True


def compiled_validator(module: str) -> Callable[[Any], Any]:
    """The fastjsonschema-compiled ``validate`` of ``_generated/validators/<module>.py``."""
    return validator(module)


def compiled_accepts(validate: Callable[[Any], Any], value: Any) -> bool:
    try:
        validate(value)
    except Exception:  # noqa: BLE001 -- any refusal (or a value it cannot even inspect) is a no
        return False
    return True


def check_shape(
    schema_name: str,
    value: Any,
    *,
    code: ErrorCode,
    phase: Phase,
    compiled: str,
) -> None:
    """Raise ``GraphError(code, phase)`` naming the first violation of ``schema_name``.

    The compiled validator (``compiled``: module name) gives a fast yes/no; only a "no" consults
    the JSON Schema, for the message.
    """
    if compiled_accepts(compiled_validator(compiled), value):
        return
    problem = describe_problem(schema_name, value)
    # None: the compiled validator rejected what the schema accepts (e.g. a trailing newline
    # that Python's ``$`` tolerates): the value is still refused, with the generic message.
    raise GraphError(code, phase, problem)
