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
    "SchemaSet",
    "SpecValidator",
    "ecma_search",
    "ecma_to_python",
]

BASE_URI: Final = "https://schemas.capability-graph.dev/v1/"
CONFORMANCE_BASE_URI: Final = BASE_URI + "conformance/"


def ecma_to_python(pattern: str) -> str:
    """Translate an ECMA-262 pattern for Python's ``re``: an unescaped ``$`` outside a character
    class becomes ``\\Z``."""
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

    def errors(self, name: str, instance: Any, limit: int = 3) -> list[str]:
        """Up to ``limit`` readable problems of ``instance`` against schema ``name``."""
        problems = []
        for error in self.validator(name).iter_errors(instance):
            problems.append(f"{error.json_path}: {error.message}")
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
            problems.append(f"{error.json_path}: {error.message}")
            if len(problems) >= limit:
                break
        return problems


def _read(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path}: a schema must be an object")
    return value
