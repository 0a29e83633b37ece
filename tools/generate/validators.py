"""Step ``validators``: ``capability_graph/_generated/validators/`` -- the schemas of the small
documents (host configuration, provider definitions, every operation's request) compiled to plain
Python by fastjsonschema (pinned).

A compiled validator is a yes/no check that costs no import of a validation library, which is
what keeps a CLI command's cold start short. Large definitions use the generated Pydantic models
instead; the JSON Schema explains every failure (``capability_graph._core.schemas``). For the
same cold start, a schema's patterns are compiled when a value is first checked against each
(fastjsonschema compiles them all at import): :func:`_lazy_patterns`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from _spec import module_name

from .base import GenerationError, Repo, Step, generated_by
from .operations import load_operations

FASTJSONSCHEMA_VERSION = "2.21.2"
SCHEMA_ID_BASE = "https://schemas.capability-graph.dev/v1/"
#: The documents compiled besides every operation's request (added from the operation table).
COMPILED_DOCUMENTS = ("config.schema.json", "definition.schema.json")

_EXCEPTION_CLASS = '''

class JsonSchemaValueException(ValueError):
    """A value the schema rejects (the validator says no; the JSON Schema explains why)."""

    def __init__(self, message, value=None, name=None, definition=None, rule=None):
        super().__init__(message)
'''


def compiled_schemas(repo: Repo) -> list[str]:
    """The schema files that get a compiled validator, in a stable order."""
    return [*COMPILED_DOCUMENTS, *(op["request"] for op in load_operations(repo))]


def validator_files(repo: Repo) -> dict[Path, str]:
    """Each selected schema compiled to a standalone module with one ``validate(data)``."""
    import fastjsonschema

    if fastjsonschema.VERSION != FASTJSONSCHEMA_VERSION:
        raise GenerationError(
            f"fastjsonschema {FASTJSONSCHEMA_VERSION} is required, not {fastjsonschema.VERSION}"
        )
    by_id = {schema["$id"]: schema for schema in repo.load_schemas().values()}

    def resolve(uri: str) -> Any:
        return by_id[uri.split("#")[0]]

    files: dict[Path, str] = {}
    for schema_name in compiled_schemas(repo):
        code = fastjsonschema.compile_to_code(
            by_id[SCHEMA_ID_BASE + schema_name],
            handlers={"https": resolve},
            use_default=False,  # never insert defaults into the caller's data
            use_formats=False,
        )
        root = re.search(r"^def (validate_\w+)\(", code, re.MULTILINE)
        if root is None:
            raise GenerationError(f"fastjsonschema wrote no validate function for {schema_name}")
        code = code.replace("from fastjsonschema import JsonSchemaValueException\n", "")
        code = code.replace(
            "from decimal import Decimal\n", "from decimal import Decimal\n" + _EXCEPTION_CLASS
        )
        code = _lazy_patterns(code, schema_name)
        files[repo.validators / f"{module_name(schema_name)}.py"] = (
            f"# {generated_by('spec/capability-graph/schemas/' + schema_name)}\n"
            f"# Compiled by fastjsonschema {FASTJSONSCHEMA_VERSION}.\n"
            "# ruff: noqa\n" + code + f"\n\nvalidate = {root.group(1)}\n"
        )
    files[repo.validators / "__init__.py"] = _registry(
        [module_name(name) for name in compiled_schemas(repo)]
    )
    return files


_LAZY_PATTERNS = '''class _Patterns(dict):
    """The schema's patterns by their source, each compiled when a value is first checked
    against it: compiling them all at import would cost every command line that loads this."""

    def __missing__(self, pattern):
        compiled = self[pattern] = re.compile(_PATTERN_SOURCES[pattern])
        return compiled


REGEX_PATTERNS = _Patterns()
_PATTERN_SOURCES = {
'''


def _lazy_patterns(code: str, schema_name: str) -> str:
    """fastjsonschema's ``REGEX_PATTERNS = {source: re.compile(translated), ...}`` as a mapping
    that compiles each pattern on first use (the validator reads ``REGEX_PATTERNS[source]``)."""
    found = [
        node
        for node in ast.parse(code).body
        if isinstance(node, ast.Assign)
        and [getattr(target, "id", None) for target in node.targets] == ["REGEX_PATTERNS"]
    ]
    if not found:
        return code
    (node,) = found
    entries = []
    if not isinstance(node.value, ast.Dict):
        raise GenerationError(f"{schema_name}: REGEX_PATTERNS is not a dict")
    for key, value in zip(node.value.keys, node.value.values, strict=True):
        if not (
            isinstance(key, ast.Constant)
            and isinstance(value, ast.Call)
            and ast.unparse(value.func) == "re.compile"
            and len(value.args) == 1
            and not value.keywords
            and isinstance(value.args[0], ast.Constant)
        ):
            raise GenerationError(f"{schema_name}: a pattern fastjsonschema compiles unexpectedly")
        entries.append(f"    {key.value!r}: {value.args[0].value!r},\n")
    lines = code.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno or node.lineno
    return "".join([*lines[:start], _LAZY_PATTERNS, *entries, "}\n", *lines[end:]])


def _registry(modules: list[str]) -> str:
    """The package's ``validator(name)``: each compiled module imported on first use, by an
    import statement a reader (and mypy) can follow; a new operation's request validator joins
    it by generation."""
    cases = "".join(
        f'        case "{module}":\n            from . import {module} as compiled\n'
        for module in modules
    )
    return (
        f'"""{generated_by("spec/capability-graph/schemas")}\n\n'
        "Compiled JSON Schema validators (fastjsonschema), one module per schema, each imported\n"
        'when first asked for (a CLI command imports only the ones it uses)."""\n\n'
        "from __future__ import annotations\n\n"
        "from collections.abc import Callable\n"
        "from types import ModuleType\n"
        "from typing import Any\n\n\n"
        "def validator(name: str) -> Callable[[Any], Any]:\n"
        '    """The ``validate`` of the compiled module ``name``."""\n'
        "    compiled: ModuleType\n"
        "    match name:\n"
        f"{cases}"
        "        case _:\n"
        '            raise LookupError(f"no compiled validator {name!r}")\n'
        "    validate: Callable[[Any], Any] = compiled.validate\n"
        "    return validate\n"
    )


def owned(repo: Repo) -> Iterable[Path]:
    return repo.validators.glob("*.py")


VALIDATORS = Step("validators", validator_files, owned)
