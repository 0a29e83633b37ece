"""Validation of JSON values against the contract's schemas.

Two validators, one authority. The JSON Schemas of ``spec/capability-graph/schemas`` are the
contract (a built package carries them in ``_spec/``, see :func:`contract_files`); the Pydantic
models generated from them are the fast path. A value is checked with its generated model first;
only when that fails (the rare path) is the schema consulted, to name the JSON pointer and the
expected type in the message -- never the value.
A test corpus keeps both in agreement.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .._generated.taxonomy import ErrorCode, Phase
from .._generated.validators import validator
from .errors import GraphError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from pydantic import BaseModel

__all__ = [
    "FORMATS",
    "allowed_keys_hint",
    "check_shape",
    "compiled_accepts",
    "compiled_validator",
    "describe_problem",
    "load_schema",
    "model_accepts",
    "pointer_message",
    "safe_pointer",
]

SCHEMA_BASE = "https://schemas.capability-graph.dev/v1/"
#: Where an editable install from the checkout finds the contract: the repository's own files.
_CHECKOUT_CONTRACT: Final = Path(__file__).resolve().parents[5] / "spec" / "capability-graph"


@cache
def contract_files() -> Traversable:
    """The folder holding the contract's ``schemas/*.schema.json`` and ``tools.json``.

    A built package carries them in ``capability_graph/_spec/`` (copied from
    ``spec/capability-graph/`` at build time, never committed twice); an editable install runs
    from the checkout and reads ``spec/capability-graph/`` itself."""
    packaged = resources.files("capability_graph").joinpath("_spec")
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
        values = expected if keyword == "enum" else [expected]
        return "must be one of: " + ", ".join(json.dumps(v) for v in values)
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


def _best(errors: list[Any]) -> Any:
    """The error to report ([CG-MSG-14]): the highest in the instance; inside a oneOf/anyOf, the
    one branch the value was meant for when only its unknown members fail it ([CG-MSG-17]), else
    the most specific branch error unless two tie."""
    import heapq

    from jsonschema.exceptions import relevance

    best = max(errors, key=relevance, default=None)
    while best is not None and best.context:
        meant = _branch_failing_only_by_unknown_members(best)
        if meant is not None:
            return meant
        smallest = heapq.nsmallest(2, best.context, key=relevance)
        if len(smallest) == 2 and relevance(smallest[0]) == relevance(smallest[1]):
            return best
        best = smallest[0]
    return best


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
    error = _best(errors)
    return pointer_message(prefix + _pointer(error.absolute_path), _phrase(error), _hint(error))


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
