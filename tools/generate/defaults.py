"""Step ``defaults``: ``capability_graph/_generated/defaults.py`` -- the defaults and limits of
the contract that the runtime applies, read from the schemas (``default``, ``maximum``,
``maxProperties``, ``maxLength``), so that the core never keeps a copy of a number the schemas
state.

``VALUES`` names each constant and where it lives; ``BUDGETS`` is every budget's default. A
default the schemas state in several places (each executor's ``timeoutMs``) must agree
everywhere, or generation fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import GenerationError, Repo, Step, generated_by

#: Constant -> (schema file, JSON pointer of the value). Only what the runtime reads.
VALUES: dict[str, tuple[str, str]] = {
    "LIST_LIMIT": ("list-request.schema.json", "/properties/limit/default"),
    "MATCH_LIMIT": ("match-request.schema.json", "/properties/limit/default"),
    "RESOLVE_DEPTH": (
        "resolve-request.schema.json",
        "/$defs/RelationTraversal/properties/depth/default",
    ),
    "DOCUMENT_BODIES": ("config.schema.json", "/$defs/DocumentPolicy/properties/bodies/default"),
    "MODEL_TIMEOUT_MS": (
        "config.schema.json",
        "/$defs/ScriptedExecutorConfig/properties/timeoutMs/default",
    ),
    "MAX_TIMEOUT_MS": ("config.schema.json", "/$defs/TimeoutMs/maximum"),
    "MAX_SLEEP_MS": ("config.schema.json", "/$defs/ScriptedSleepStep/properties/sleepMs/maximum"),
    "MAX_CONTEXT_KEYS": ("context.schema.json", "/maxProperties"),
    "MAX_CONTEXT_STRING": ("context.schema.json", "/$defs/ContextText/maxLength"),
    "MAX_BASE_URL": ("config.schema.json", "/$defs/BaseUrl/maxLength"),
    "MAX_OPENAI_MODEL": (
        "config.schema.json",
        "/$defs/OpenAIExecutorConfig/properties/model/maxLength",
    ),
}
#: The budgets: each property of this schema, with its default.
BUDGETS_SCHEMA = "budgets.schema.json"


def _at(schema: Any, pointer: str, where: str) -> Any:
    node = schema
    for raw in pointer.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise GenerationError(f"{where}#{pointer} does not exist")
        node = node[part]
    return node


def _timeouts_agree(config: Any, default: Any) -> None:
    """Every executor's ``timeoutMs`` default is the one ``MODEL_TIMEOUT_MS`` reads."""
    for name, definition in config.get("$defs", {}).items():
        stated = definition.get("properties", {}).get("timeoutMs", {}).get("default", default)
        if stated != default:
            raise GenerationError(
                f"config.schema.json#/$defs/{name}: timeoutMs defaults to {stated}, "
                f"the other executors to {default}"
            )


def render_defaults(schemas: dict[str, Any]) -> str:
    budgets = schemas[BUDGETS_SCHEMA]["properties"]
    missing = sorted(name for name, prop in budgets.items() if "default" not in prop)
    if missing:
        raise GenerationError(f"{BUDGETS_SCHEMA}: no default for {', '.join(missing)}")
    out = [
        f'"""{generated_by("spec/capability-graph/schemas")}',
        "",
        "The defaults and limits of the contract, as the schemas state them.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from types import MappingProxyType",
        "from typing import Final",
        "",
        f"#: Each budget's default ({BUDGETS_SCHEMA}).",
        "DEFAULT_BUDGETS: Final = MappingProxyType({",
        *(f"    {name!r}: {prop['default']!r}," for name, prop in budgets.items()),
        "})",
    ]
    for constant, (schema_name, pointer) in VALUES.items():
        value = _at(schemas[schema_name], pointer, schema_name)
        out += [f"#: {schema_name}#{pointer}", f"{constant}: Final = {value!r}"]
    _timeouts_agree(
        schemas["config.schema.json"],
        _at(schemas["config.schema.json"], VALUES["MODEL_TIMEOUT_MS"][1], "config.schema.json"),
    )
    return "\n".join(out) + "\n"


def defaults_files(repo: Repo) -> dict[Path, str]:
    return {repo.generated / "defaults.py": render_defaults(repo.load_schemas())}


DEFAULTS = Step("defaults", defaults_files)
