"""Check the JSON Schemas of the Capability Graph contract, their examples and tools.json.

- every ``schemas/*.schema.json`` is valid against the Draft 2020-12 metaschema (all errors are
  reported), declares that dialect, has ``$id`` = ``BASE_URI + file name`` (unique), a PascalCase
  ``title`` and a ``description``;
- portability rules: every ``type: object`` declares ``additionalProperties``; nothing accepts
  ``null``; no ``format`` (``uri`` would be rewritten by generated models); every ``pattern`` is
  anchored (``^...$``) and avoids lookaround, backreferences and ``\\d \\w \\s \\b`` (so ECMA-262,
  Python, Rust and RE2 engines agree); every ``$defs`` entry has its key as ``title``; titles are
  unique across the spec (they name the generated classes);
- every ``$ref`` in every schema resolves (through a registry of all schemas);
- a ``discriminator`` annotation stands exactly beside each ``oneOf`` that has a discriminator by
  [CG-MSG-21] (a member every branch requires with a ``const`` of its own), naming it;
- every example under ``examples/<schema stem>/{valid,invalid}/`` is accepted or rejected as
  labelled, and every schema with a root of its own has at least one of each;
- ``tools.json`` is valid against ``tools.schema.json``, names the five tools in order, and each
  tool's ``inputSchema``/``outputSchema`` is valid, self-contained, equal to the bundle of its
  request/result schema, and judges that schema's examples the same way.

- ``operations.json`` (the operation table) is valid against ``operations.schema.json`` (itself a
  valid Draft 2020-12 schema), its tools are unique, and every request and result schema it
  names exists under ``schemas/``.

The registry <-> enums agreement is checked by ``tools/codegen.py --check`` (its enums step).
``python tools/check_spec.py`` exits 0 when everything holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import referencing.exceptions
from _spec import (
    BASE_URI,
    DIALECT,
    EXAMPLES,
    OPERATIONS_JSON,
    OPERATIONS_SCHEMA,
    SCHEMAS,
    SUFFIX,
    TOOLS,
    TOOLS_JSON,
    BundleError,
    SpecValidator,
    bundle,
    iter_examples,
    iter_refs,
    iter_subschemas,
    load_json,
    load_schemas,
    registry,
    stem,
    validator_for,
)
from jsonschema import Draft202012Validator

# A $ref that does not resolve or a pattern that does not compile only fails when used.
_BROKEN_SCHEMA = (referencing.exceptions.Unresolvable, re.error)
_PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_ROOT_ONLY_KEYS = {"$schema", "$id", "$comment", "title", "description", "$defs"}
_FORBIDDEN_PATTERN_TOKENS = {
    "(?=": "lookahead",
    "(?!": "negative lookahead",
    "(?<=": "lookbehind",
    "(?<!": "negative lookbehind",
    "\\d": r"\d (Unicode digits in Python)",
    "\\D": r"\D",
    "\\w": r"\w (Unicode word characters in Python)",
    "\\W": r"\W",
    "\\s": r"\s (differs between engines)",
    "\\S": r"\S",
    "\\b": r"\b",
    "\\B": r"\B",
}


def _format_error(error: Any) -> str:
    where = error.json_path
    return f"{where}: {error.message}"


def defs_only(schema: dict[str, Any]) -> bool:
    """A schema that only holds ``$defs`` (no root of its own, so no examples)."""
    return set(schema) <= _ROOT_ONLY_KEYS


# -- schemas -------------------------------------------------------------------------------------


def check_schema_files(schemas: dict[str, dict[str, Any]]) -> Iterator[str]:
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    ids: dict[str, str] = {}
    titles: dict[str, str] = {}
    for name, schema in schemas.items():
        for error in sorted(meta.iter_errors(schema), key=lambda e: e.json_path):
            yield f"{name}: not a valid 2020-12 schema: {_format_error(error)}"
        if not isinstance(schema, dict):
            continue
        if schema.get("$schema") != DIALECT:
            yield f"{name}: $schema must be {DIALECT}"
        expected_id = BASE_URI + name
        if schema.get("$id") != expected_id:
            yield f"{name}: $id must be {expected_id} (found {schema.get('$id')!r})"
        if schema.get("$id") in ids:
            yield f"{name}: $id {schema['$id']} is also the $id of {ids[schema['$id']]}"
        ids[str(schema.get("$id"))] = name
        title = schema.get("title")
        if not isinstance(title, str) or not _PASCAL.match(title):
            yield f"{name}: needs a PascalCase title (it names the generated model)"
        if not isinstance(schema.get("description"), str) or not schema["description"].strip():
            yield f"{name}: needs a description"
        for pointer, subschema in iter_subschemas(schema):
            yield from (f"{name}#{pointer}: {p}" for p in _lint_subschema(subschema))
            sub_title = subschema.get("title")
            if isinstance(sub_title, str) and (pointer == "" or pointer.startswith("/$defs/")):
                if sub_title in titles and titles[sub_title] != f"{name}#{pointer}":
                    yield (
                        f"{name}#{pointer}: title {sub_title} is also used by "
                        f"{titles[sub_title]} (titles name generated classes)"
                    )
                titles.setdefault(sub_title, f"{name}#{pointer}")
        for key, definition in (schema.get("$defs") or {}).items():
            if not isinstance(definition, dict) or definition.get("title") != key:
                yield f"{name}#/$defs/{key}: needs title {key!r} (it names the generated type)"


def _lint_subschema(schema: dict[str, Any]) -> Iterator[str]:
    kind = schema.get("type")
    if kind == "object" and "additionalProperties" not in schema:
        yield "an object schema must declare additionalProperties (false unless open by design)"
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        yield "accepts null (the contract never does: null is not omission)"
    if "const" in schema and schema["const"] is None:
        yield "const null"
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        yield "enum with null"
    if "format" in schema:
        yield f"format {schema['format']!r} is not used by the contract (use a pattern)"
    pattern = schema.get("pattern")
    if pattern is not None:
        yield from _lint_pattern(pattern)


def _lint_pattern(pattern: Any) -> Iterator[str]:
    if not isinstance(pattern, str):
        return
    try:
        re.compile(pattern)
    except re.error as error:
        yield f"pattern {pattern!r} does not compile: {error}"
        return
    if not pattern.startswith("^") or not pattern.endswith("$") or pattern.endswith("\\$"):
        yield f"pattern {pattern!r} must be anchored with ^ and $"
    for token, what in _FORBIDDEN_PATTERN_TOKENS.items():
        if token in pattern.replace("\\\\", ""):
            yield f"pattern {pattern!r} uses {what}; write explicit character classes"
    if re.search(r"\\[1-9]", pattern.replace("\\\\", "")):
        yield f"pattern {pattern!r} uses a backreference"


def _follow(node: Any, resolver: Any) -> tuple[Any, Any]:
    """``node`` read through its ``$ref`` (and the resolver of the resource it is in)."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        resolved = resolver.lookup(node["$ref"])
        node, resolver = resolved.contents, resolved.resolver
    return node, resolver


def derived_discriminator(branches: Any, resolver: Any) -> str | None:
    """The discriminator of a ``oneOf`` of ``branches`` by [CG-MSG-21]: a member name that every
    branch, read through its ``$ref``, an object schema, requires and gives a ``const``, the
    consts pairwise different; the first such name of the first branch's ``properties``."""
    if not isinstance(branches, list) or len(branches) < 2:
        return None
    resolved = [_follow(branch, resolver) for branch in branches]
    if not all(isinstance(b, dict) and b.get("type") == "object" for b, _ in resolved):
        return None
    for name in resolved[0][0].get("properties", {}):
        values: list[str] = []
        for branch, where in resolved:
            member, _ = _follow(branch.get("properties", {}).get(name), where)
            if name not in branch.get("required", []):
                break
            if not isinstance(member, dict) or "const" not in member:
                break
            values.append(json.dumps(member["const"], sort_keys=True))
        else:
            if len(set(values)) == len(values):
                return name
    return None


def check_discriminators(
    schemas: dict[str, dict[str, Any]], reg: referencing.Registry[Any]
) -> Iterator[str]:
    """A ``discriminator`` annotation stands beside exactly the ``oneOf`` that has a discriminator
    by [CG-MSG-21] (messages.md), and names it: the annotation records the derivation."""
    for name, schema in schemas.items():
        resolver = reg.resolver(base_uri=str(schema.get("$id") or BASE_URI + name))
        for pointer, subschema in iter_subschemas(schema):
            annotation = subschema.get("discriminator")
            annotated = annotation.get("propertyName") if isinstance(annotation, dict) else None
            try:
                derived = derived_discriminator(subschema.get("oneOf"), resolver)
            except _BROKEN_SCHEMA:
                continue  # reported by check_refs
            if annotation is not None and derived is None:
                yield f"{name}#{pointer}: a discriminator annotation on a oneOf without one"
            elif derived is not None and annotated != derived:
                yield (
                    f"{name}#{pointer}: the oneOf has the discriminator {derived!r} "
                    '(CG-MSG-21): annotate it {"discriminator": {"propertyName": '
                    f'"{derived}"}}}}'
                )


def check_refs(schemas: dict[str, dict[str, Any]], reg: referencing.Registry[Any]) -> Iterator[str]:
    for name, schema in schemas.items():
        resolver = reg.resolver(base_uri=str(schema.get("$id") or BASE_URI + name))
        for pointer, ref in iter_refs(schema):
            try:
                resolver.lookup(ref)
            except referencing.exceptions.Unresolvable as error:
                yield f"{name}#{pointer}: $ref {ref!r} does not resolve ({type(error).__name__})"


# -- examples ------------------------------------------------------------------------------------


def check_examples(
    schemas: dict[str, dict[str, Any]],
    reg: referencing.Registry[Any],
    examples_dir: Path = EXAMPLES,
    report: list[str] | None = None,
) -> Iterator[str]:
    """Problems with the examples; ``report`` (if given) receives one line per example."""
    if not examples_dir.is_dir():
        yield f"{examples_dir} does not exist"
        return
    for entry in sorted(examples_dir.iterdir()):
        if not entry.is_dir() or entry.name + SUFFIX not in schemas:
            yield f"examples/{entry.name}: no schema {entry.name}{SUFFIX}"
            continue
        for child in sorted(entry.iterdir()):
            if child.name not in ("valid", "invalid"):
                yield f"examples/{entry.name}/{child.name}: only valid/ and invalid/ belong here"
        for label in ("valid", "invalid"):
            strays = [p.name for p in (entry / label).glob("*") if p.suffix != ".json"]
            for stray in sorted(strays):
                yield f"examples/{entry.name}/{label}/{stray}: examples are .json files"
    validators: dict[str, Any] = {}
    counts: dict[tuple[str, bool], int] = {}
    for example in iter_examples(examples_dir):
        if example.schema not in schemas:
            continue
        counts[example.schema, example.valid] = counts.get((example.schema, example.valid), 0) + 1
        try:
            instance = example.load()
        except ValueError as error:
            yield f"examples/{example.id}: not JSON ({error})"
            continue
        if example.schema not in validators:
            validators[example.schema] = validator_for(example.schema, schemas, reg)
        try:
            errors = list(validators[example.schema].iter_errors(instance))
        except _BROKEN_SCHEMA:
            yield (
                f"examples/{example.id}: cannot be checked: a $ref of {example.schema} does not "
                "resolve or a pattern does not compile"
            )
            continue
        if example.valid and errors:
            first = min(errors, key=lambda e: e.json_path)
            yield f"examples/{example.id}: labelled valid but rejected: {_format_error(first)}"
        elif not example.valid and not errors:
            yield f"examples/{example.id}: labelled invalid but accepted"
        elif report is not None:
            verdict = "accepted" if example.valid else "rejected"
            reason = "" if example.valid else f" ({min(errors, key=str).message[:80]})"
            report.append(f"ok   examples/{example.id}: {verdict}{reason}")
    for name, schema in schemas.items():
        if defs_only(schema):
            continue
        for valid in (True, False):
            if not counts.get((name, valid)):
                label = "valid" if valid else "invalid"
                yield f"{name}: no {label} example in examples/{stem(name)}/{label}/"


# -- tools.json ----------------------------------------------------------------------------------


def _self_contained_problems(schema: dict[str, Any]) -> Iterator[str]:
    for error in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema):
        yield f"not a valid 2020-12 schema: {_format_error(error)}"
    resolver = referencing.Registry().resolver_with_root(
        referencing.jsonschema.DRAFT202012.create_resource(schema)
    )
    for pointer, ref in iter_refs(schema):
        if not ref.startswith("#"):
            yield f"{pointer}: $ref {ref!r} is not local"
            continue
        try:
            resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            yield f"{pointer}: $ref {ref!r} does not resolve"


def check_tools(
    schemas: dict[str, dict[str, Any]],
    reg: referencing.Registry[Any],
    tools_path: Path = TOOLS_JSON,
    examples_dir: Path = EXAMPLES,
) -> Iterator[str]:
    label = tools_path.name
    if not tools_path.is_file():
        yield f"{label}: missing"
        return
    try:
        document = load_json(tools_path)
    except ValueError as error:
        yield f"{label}: not JSON ({error})"
        return
    if "tools.schema.json" in schemas:
        for error in validator_for("tools.schema.json", schemas, reg).iter_errors(document):
            yield f"{label}: invalid against tools.schema.json: {_format_error(error)}"
    entries = document.get("tools") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        return
    names = [entry.get("name") for entry in entries if isinstance(entry, dict)]
    if names != [tool.name for tool in TOOLS]:
        yield f"{label}: tools must be {[t.name for t in TOOLS]} in this order (found {names})"
    by_name = {entry.get("name"): entry for entry in entries if isinstance(entry, dict)}
    examples = list(iter_examples(examples_dir)) if examples_dir.is_dir() else []
    for tool in TOOLS:
        entry = by_name.get(tool.name)
        if entry is None:
            continue
        for key, source in (("inputSchema", tool.request), ("outputSchema", tool.result)):
            where = f"{label}: {tool.name}.{key}"
            schema = entry.get(key)
            if not isinstance(schema, dict):
                yield f"{where}: not a schema"
                continue
            problems = list(_self_contained_problems(schema))
            yield from (f"{where}: {p}" for p in problems)
            if source not in schemas:
                yield f"{where}: its source schema {source} is missing"
                continue
            try:
                expected = bundle(source, schemas)
            except BundleError as error:
                yield f"{where}: {source} cannot be bundled: {error}"
                continue
            if schema != expected:
                yield f"{where}: differs from the bundle of {source}; run `python tools/codegen.py`"
            if problems:
                continue
            validator = SpecValidator(schema)
            original = validator_for(source, schemas, reg)
            for example in (e for e in examples if e.schema == source):
                instance = example.load()
                try:
                    same = validator.is_valid(instance) == original.is_valid(instance)
                except _BROKEN_SCHEMA:
                    break  # reported by check_refs / check_examples
                if not same:
                    yield f"{where}: judges examples/{example.id} unlike {source}"


# -- main ----------------------------------------------------------------------------------------


def check_all(
    schemas_dir: Path = SCHEMAS,
    examples_dir: Path = EXAMPLES,
    tools_path: Path = TOOLS_JSON,
    report: list[str] | None = None,
) -> list[str]:
    """Every problem of the spec (empty when it is consistent)."""
    problems: list[str] = []
    try:
        schemas = load_schemas(schemas_dir)
    except ValueError as error:
        return [f"a schema is not JSON: {error}"]
    if not schemas:
        return [f"no *{SUFFIX} in {schemas_dir}"]
    reg = registry(schemas)
    problems += check_schema_files(schemas)
    problems += check_refs(schemas, reg)
    problems += check_discriminators(schemas, reg)
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    invalid = [name for name, schema in schemas.items() if not meta.is_valid(schema)]
    if invalid:
        # Validating with a schema that breaks its metaschema can crash (e.g. "minimum": "one").
        problems.append(
            f"examples and {tools_path.name} not checked until {', '.join(invalid)} "
            "are valid schemas"
        )
        return problems
    problems += check_examples(schemas, reg, examples_dir, report)
    problems += check_tools(schemas, reg, tools_path, examples_dir)
    problems += check_operations(schemas, tools_path.parent / OPERATIONS_JSON.name)
    return problems


def check_operations(schemas: dict[str, dict[str, Any]], table_path: Path) -> Iterator[str]:
    """The operation table against its schema, and the schema files it names."""
    label = table_path.name
    schema_path = table_path.parent / OPERATIONS_SCHEMA.name
    if not table_path.is_file() or not schema_path.is_file():
        yield f"{label}: missing (with {schema_path.name})"
        return
    schema = load_json(schema_path)
    meta_errors = list(Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema))
    if meta_errors:
        yield from (f"{schema_path.name}: {_format_error(e)}" for e in meta_errors)
        return
    table = load_json(table_path)
    errors = list(Draft202012Validator(schema).iter_errors(table))
    if errors:
        yield from (f"{label}: {_format_error(e)}" for e in errors)
        return
    tools = [op["tool"] for op in table["operations"]]
    if len(set(tools)) != len(tools):
        yield f"{label}: a tool is listed twice ({tools})"
    for op in table["operations"]:
        for key in ("request", "result"):
            if op[key] not in schemas:
                yield f"{label}: {op['tool']}.{key}: no schemas/{op[key]}"


def _print(lines: Iterable[str], stream: Any = sys.stdout) -> None:
    for line in lines:
        print(line, file=stream)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemas", type=Path, default=SCHEMAS)
    parser.add_argument("--examples", type=Path, default=EXAMPLES)
    parser.add_argument("--tools", type=Path, default=TOOLS_JSON)
    parser.add_argument("-v", "--verbose", action="store_true", help="list every example verdict")
    args = parser.parse_args(argv)
    report: list[str] = []
    problems = check_all(args.schemas, args.examples, args.tools, report)
    if args.verbose:
        _print(report)
    if problems:
        _print((f"FAIL {p}" for p in problems), sys.stderr)
        print(f"check_spec: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    schemas = load_schemas(args.schemas)
    examples = sum(1 for _ in iter_examples(args.examples))
    print(
        f"check_spec: ok -- {len(schemas)} schemas, {examples} examples as labelled, "
        f"{len(TOOLS)} tools in {args.tools.name}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
