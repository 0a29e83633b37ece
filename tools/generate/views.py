"""Step ``views``: read-only views over the JSON results the SDK does not validate into models,
generated into ``capability_graph/_generated/views.py`` from ``spec/capability-graph/schemas``.

A resolve result holds thousands of objects; validating them into the Pydantic models costs
about nine times the resolve itself (``docs/benchmarks.md``). A view wraps the JSON result as
it is, in constant time, and reads it the way a model does: snake_case attributes typed from the
schema (an object member is a view, an array a list, an omitted member ``pydantic.MISSING``),
``to_json()`` for the JSON form. So every SDK result is read with one idiom, whichever of the two
types holds it.

Each object schema with a ``title`` reachable from a root becomes a class on
``ContractView`` (``_core/model.py``); a ``oneOf`` with a ``discriminator`` becomes a type alias
and a function that picks the member's view by the discriminating property; a titled ``enum``
becomes a ``Literal`` alias. Anything else in a result schema is refused, so that a schema
change cannot silently produce an untyped attribute.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import GenerationError, Repo, Step, generated_by

#: The results the SDK returns as views, not models.
VIEWED = ("resolve-result.schema.json",)

HEADER = "# " + generated_by("spec/capability-graph/schemas")


def _snake(name: str) -> str:
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    return snake + "_" if keyword.iskeyword(snake) else snake


@dataclass
class _Walk:
    """The schemas, and what the walk from the roots has emitted so far, in dependency order."""

    schemas: dict[str, Any]
    blocks: list[str] = field(default_factory=list)
    done: dict[str, str] = field(default_factory=dict)  # "file#pointer" -> type name
    literals: set[str] = field(default_factory=set)

    def resolve(self, ref: str, file: str) -> tuple[str, str, dict[str, Any]]:
        target_file, _, pointer = ref.partition("#")
        target_file = target_file or file
        node: Any = self.schemas[target_file]
        for part in (p for p in pointer.split("/") if p):
            node = node[part]
        return target_file, pointer, node

    # -- types -----------------------------------------------------------------------------------

    def annotation(self, schema: dict[str, Any], file: str) -> tuple[str, str]:
        """``(annotation, wrap)``: the type of a member and how its JSON value becomes it
        (``{}`` in ``wrap`` stands for the value)."""
        if "$ref" in schema:
            target_file, pointer, target = self.resolve(schema["$ref"], file)
            return self.named(target, target_file, pointer)
        if "const" in schema:
            self.literals.add("Literal")
            return f"Literal[{_lit(schema['const'])}]", "{}"
        if "enum" in schema:
            self.literals.add("Literal")
            return "Literal[" + ", ".join(_lit(v) for v in schema["enum"]) + "]", "{}"
        kind = schema.get("type")
        if kind == "array":
            item, wrap = self.annotation(schema["items"], file)
            if wrap == "{}":
                return f"list[{item}]", "list({})"
            return f"list[{item}]", "[" + wrap.format("item") + " for item in {}]"
        scalars = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
        if isinstance(kind, str) and kind in scalars:
            return scalars[kind], "{}"
        raise GenerationError(f"views: {file}: no view type for {schema!r}")

    def named(self, schema: dict[str, Any], file: str, pointer: str) -> tuple[str, str]:
        key = f"{file}#{pointer}"
        title = schema.get("title")
        if title is None:
            return self.annotation(schema, file)
        if key not in self.done:
            if "oneOf" in schema:
                self.done[key] = title
                self.union(title, schema, file)
            elif schema.get("type") == "object":
                self.done[key] = title
                self.view(title, schema, file)
            elif "enum" in schema:
                self.done[key] = title
                self.literals.add("Literal")
                values = ", ".join(_lit(v) for v in schema["enum"])
                self.blocks.append(f"{title}: TypeAlias = Literal[{values}]\n{_doc(schema)}")
            else:
                return self.annotation(schema, file)
        name = self.done[key]
        if "oneOf" in schema:
            return name, f"_{_snake(name)}({{}})"
        if schema.get("type") == "object":
            return name, f"{name}({{}})"
        return name, "{}"

    # -- declarations ----------------------------------------------------------------------------

    def union(self, title: str, schema: dict[str, Any], file: str) -> None:
        discriminator = schema.get("discriminator", {}).get("propertyName")
        if discriminator is None:
            raise GenerationError(f"views: {file}: {title}'s oneOf has no discriminator")
        members: list[tuple[str, str]] = []
        for branch in schema["oneOf"]:
            target_file, pointer, target = self.resolve(branch["$ref"], file)
            name, _ = self.named(target, target_file, pointer)
            members.append((target["properties"][discriminator]["const"], name))
        alias = " | ".join(name for _, name in members)
        cases = "\n".join(
            f"        case {_lit(value)}:\n            return {name}(value)"
            for value, name in members
        )
        self.blocks.append(
            f"{title}: TypeAlias = {alias}\n{_doc(schema)}\n\n\n"
            f"def _{_snake(title)}(value: dict[str, Any]) -> {title}:\n"
            f"    match tag := value[{_lit(discriminator)}]:\n{cases}\n"
            f'    raise ValueError(f"not a {title}: {discriminator} {{tag!r}}")'
        )

    def view(self, title: str, schema: dict[str, Any], file: str) -> None:
        if schema.get("additionalProperties") is not False:
            raise GenerationError(f"views: {file}: {title} is open (additionalProperties)")
        required = set(schema.get("required", ()))
        members = []
        for member, subschema in schema["properties"].items():
            annotation, wrap = self.annotation(subschema, file)
            value = f"self._json[{_lit(member)}]"
            if member in required:
                body = f"        value: {annotation} = " + wrap.format(value) + "\n"
            else:
                annotation = f"{annotation} | MISSING"
                got = f"self._json.get({_lit(member)}, MISSING)"
                if wrap == "{}":
                    body = f"        value: {annotation} = {got}\n"
                else:
                    body = (
                        f"        raw = {got}\n"
                        f"        value: {annotation} = MISSING if raw is MISSING else "
                        + wrap.format("raw")
                        + "\n"
                    )
            description = subschema.get("description", "")
            members.append(
                f"    @property\n    def {_snake(member)}(self) -> {annotation}:\n"
                f'        """{_escape(description)}"""\n{body}        return value'
            )
        names = ", ".join(_lit(_snake(member)) for member in schema["properties"])
        keys = ", ".join(_lit(member) for member in schema["properties"])
        self.blocks.append(
            f"class {title}(ContractView):\n"
            f'    """{_escape(schema.get("description", title))}"""\n\n'
            f"    __slots__ = ()\n"
            f"    _members = (({names}), ({keys}))\n\n" + "\n\n".join(members)
        )


def _lit(value: Any) -> str:
    """A literal in the generated code, double-quoted like the rest of the code base."""
    return json.dumps(value)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _doc(schema: dict[str, Any]) -> str:
    return f'"""{_escape(schema.get("description", ""))}"""'


def view_module(schemas: dict[str, Any], roots: tuple[str, ...] = VIEWED) -> str:
    walk = _Walk(schemas)
    for root in roots:
        walk.named(schemas[root], root, "")
    names = sorted(walk.done.values())
    exports = "\n".join(f'    "{name}",' for name in names)
    return (
        f"{HEADER}\n"
        '"""The read-only views of the results the SDK does not validate into models (see '
        '``ContractView``)."""\n\n'
        "from __future__ import annotations\n\n"
        "from typing import Any, Literal, TypeAlias\n\n"
        "from pydantic import MISSING\n\n"
        "from capability_graph._core.model import ContractView\n\n"
        f"__all__ = [\n{exports}\n]\n\n\n" + "\n\n\n".join(walk.blocks) + "\n"
    )


def view_files(repo: Repo) -> dict[Path, str]:
    return {repo.generated / "views.py": view_module(repo.load_schemas())}


VIEWS = Step("views", view_files, lambda repo: [repo.generated / "views.py"])
