"""JSON Schema validation with the suite's schemas (Draft 2020-12, ECMA-262 patterns).

Every schema of ``spec/capability-graph/schemas`` and ``spec/conformance`` is loaded into one
``referencing`` registry under its ``$id``, so cross-file ``$ref`` resolve offline. Patterns are
judged as ECMA-262 does (JSON Schema's dialect): an unescaped ``$`` outside a character class
matches only at the very end, unlike Python's ``re`` (which also matches before a final newline).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Final

import jsonschema
import jsonschema.validators
import referencing
import referencing.jsonschema
from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator

from .suite import Suite

__all__ = [
    "BASE_URI",
    "CONFORMANCE_BASE_URI",
    "InvalidDocument",
    "SchemaSet",
    "SpecValidator",
    "describe",
    "ecma_search",
    "ecma_to_python",
    "json_type",
]

BASE_URI: Final = "https://schemas.capability-graph.dev/v1/"
CONFORMANCE_BASE_URI: Final = BASE_URI + "conformance/"


def ecma_to_python(pattern: str) -> str:
    """Translate an ECMA-262 pattern (no flags) for Python's ``re``: an unescaped ``$`` outside
    a character class becomes ``\\Z`` (end of string only; Python's ``$`` also matches before a
    final newline). Everything the schemas use otherwise means the same in both dialects. The
    spec tools (``tools/_spec.py``) use this one too."""
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


def ecma_search(pattern: str, text: str) -> bool:
    """Whether the ECMA-262 ``pattern`` matches somewhere in ``text`` (JSON Schema semantics)."""
    return _compiled(pattern).search(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not ecma_search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


SpecValidator: Any = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"pattern": _pattern}
)


class InvalidDocument(Exception):
    """A JSON file that cannot be read, is not JSON or is not valid against its schema (the
    message names the file)."""


class SchemaSet:
    """The schemas of one suite, with cached validators."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        resources: dict[str, referencing.Resource[Any]] = {}
        self.documents: dict[str, dict[str, Any]] = {}
        for folder, base in (
            (suite.spec_dir / "capability-graph" / "schemas", BASE_URI),
            (suite.spec_dir / "conformance", CONFORMANCE_BASE_URI),
        ):
            for path in sorted(folder.glob("*.schema.json")):
                schema = _read(path)
                uri = base + path.name
                self.documents[uri] = schema
                resource = referencing.jsonschema.DRAFT202012.create_resource(schema)
                resources[uri] = resource
                if isinstance(schema.get("$id"), str):
                    resources[schema["$id"]] = resource
        self.registry: referencing.Registry[Any] = referencing.Registry().with_resources(
            resources.items()
        )
        self._validators: dict[str, Validator] = {}
        self._tool_validators: dict[str, Validator] | None = None

    def validator(self, name: str) -> Validator:
        """A validator for ``name``: ``"error.schema.json"``, ``"conformance/vector.schema.json"``
        or either with a ``#/$defs/...`` fragment."""
        found = self._validators.get(name)
        if found is None:
            found = SpecValidator({"$ref": BASE_URI + name}, registry=self.registry)
            self._validators[name] = found
        return found

    def load(self, path: Path, name: str) -> Any:
        """The JSON document at ``path``, valid against schema ``name`` (an implementation's
        manifest, an expected-failures list); else :class:`InvalidDocument`."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise InvalidDocument(f"{path}: {error}") from None
        problems = self.errors(name, data)
        if problems:
            raise InvalidDocument(f"{path}: " + "; ".join(problems))
        return data

    def errors(self, name: str, instance: Any, limit: int = 3) -> list[str]:
        """Up to ``limit`` readable problems of ``instance`` against schema ``name``."""
        problems = []
        for error in self.validator(name).iter_errors(instance):
            problems.append(describe(error))
            if len(problems) >= limit:
                break
        return problems

    def result_errors(self, tool: str, instance: Any, limit: int = 3) -> list[str]:
        """Problems of ``instance`` as the result of ``tool`` (its outputSchema in tools.json)."""
        if self._tool_validators is None:
            self._tool_validators = {
                t["name"]: SpecValidator(t["outputSchema"])
                for t in self.suite.tools.get("tools", ())
                if isinstance(t, dict) and "outputSchema" in t
            }
        validator = self._tool_validators.get(tool)
        if validator is None:
            return []  # an unknown tool has no result schema; other checks report it
        problems = []
        for error in validator.iter_errors(instance):
            problems.append(describe(error))
            if len(problems) >= limit:
                break
        return problems


def describe(error: jsonschema.ValidationError) -> str:
    """One readable line for a validation error: the failing member (a JSON path) and what it
    breaks, never a repr of the whole value. For ``oneOf``/``anyOf`` it names the branch that came
    closest (the one whose failure lies deepest) and that branch's own failure."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        branches: dict[int, list[jsonschema.ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(int(sub.schema_path[0]), []).append(sub)
        # The closest branch: one whose discriminating constants hold (no const failure), with
        # the fewest failures, then the deepest.
        index, failures = min(
            branches.items(),
            key=lambda item: (
                any(f.validator == "const" for f in item[1]),
                len(item[1]),
                -max(len(f.path) for f in item[1]),
                item[0],
            ),
        )
        branch_schemas: list[Any] = list(error.validator_value)  # type: ignore[arg-type]
        details = "; ".join(describe(f) for f in failures[:3])
        return (
            f"{error.json_path}: matches none of the {len(branch_schemas)} branches of "
            f"{error.validator}; closest: branch {index}{_branch_name(branch_schemas[index])}: "
            f"{details}"
        )
    if error.validator == "oneOf":  # valid under several branches
        return f"{error.json_path}: matches more than one branch of oneOf"
    if error.validator == "type":
        return (
            f"{error.json_path}: expected {error.validator_value}, got {json_type(error.instance)}"
        )
    if error.validator == "enum":
        allowed: list[Any] = list(error.validator_value)  # type: ignore[arg-type]
        text = json.dumps(allowed, ensure_ascii=False)
        listed = text if len(text) <= 80 else f"the {len(allowed)} allowed values"
        return f"{error.json_path}: {_short(error.instance)} is not one of {listed}"
    if error.validator == "const":
        return f"{error.json_path}: {_short(error.instance)} is not {_short(error.validator_value)}"
    if error.validator == "not":
        return f"{error.json_path}: must not match {_short(error.validator_value)}"
    if error.validator in ("if", "then", "else", "allOf", "dependentSchemas") and error.context:
        return describe(max(error.context, key=lambda f: len(f.path)))
    if error.validator in ("required", "additionalProperties", "unevaluatedProperties"):
        return f"{error.json_path}: {error.message}"
    return f"{error.json_path}: {error.validator} {_short(error.validator_value)} fails for " + (
        _short(error.instance)
    )


def _branch_name(schema: Any) -> str:
    if not isinstance(schema, dict):
        return ""
    for key in ("title", "$ref"):
        if isinstance(schema.get(key), str):
            return f" ({schema[key].rsplit('/', 1)[-1]})"
    return ""


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), type(value).__name__)


def _short(value: Any, limit: int = 80) -> str:
    """A scalar or small value as JSON; a large one by its type and size only."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) <= limit:
        return text
    if isinstance(value, (dict, list)):
        return f"an {json_type(value)} of {len(value)} member(s)"
    return text[: limit - 3] + "..."


def _read(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path}: a schema must be an object")
    return value
