"""Step ``validators``: ``capability_graph/_generated/validators/`` -- the schemas of the small
documents (host configuration, provider definitions, every operation's request) compiled to plain
Python by fastjsonschema (pinned).

A compiled validator is a yes/no check that costs no import of a validation library, which is
what keeps a CLI command's cold start short. Large definitions use the generated Pydantic models
instead; the JSON Schema explains every failure (``capability_graph._core.schemas``).
"""

from __future__ import annotations

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
        files[repo.validators / f"{module_name(schema_name)}.py"] = (
            f"# {generated_by('spec/capability-graph/schemas/' + schema_name)}\n"
            f"# Compiled by fastjsonschema {FASTJSONSCHEMA_VERSION}.\n"
            "# ruff: noqa\n" + code + f"\n\nvalidate = {root.group(1)}\n"
        )
    files[repo.validators / "__init__.py"] = _registry(
        [module_name(name) for name in compiled_schemas(repo)]
    )
    return files


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
