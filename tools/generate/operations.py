"""The operation table ``spec/capability-graph/operations.json`` and what derives from it.

Steps:

- ``tools``: ``spec/capability-graph/tools.json`` -- each operation's name, title, description
  and annotations, with its ``inputSchema`` and ``outputSchema`` bundled from its request and
  result schemas (what the Tool Adapter, the MCP server and the harness list);
- ``operations``: ``capability_graph/_generated/operations.py`` -- the table as frozen Python data:
  what the core's dispatch, the SDK, the Tool Adapter, the MCP server and the CLI's graph
  commands read;
- ``handlers``: ``capability_graph/_core/operations/handlers.py`` -- the handler of each operation,
  by tool name: the ``handle`` of the operations package's module named like the operation's SDK
  method, imported by an import statement a reader sees, when the operation is first called (a
  command line that lists never imports the match pipeline). Adding an operation is a table
  entry and a handler module; this file follows by generation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
from _spec import BundleError, module_name, render_tools

from .base import GenerationError, Repo, Step, generated_by, record_class


def load_operations(repo: Repo) -> list[dict[str, Any]]:
    """The operation table, validated by its schema."""
    table = repo.json(repo.operations)
    schema = repo.json(repo.spec / "operations.schema.json")
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(table), key=lambda e: e.json_path
    )
    if errors:
        raise GenerationError(
            "operations.json: " + "; ".join(f"{e.json_path}: {e.message}" for e in errors)
        )
    operations: list[dict[str, Any]] = table["operations"]
    return operations


_OPERATIONS_PRELUDE = "\n".join(
    [
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final, Literal",
        "",
        "from .taxonomy import Phase",
        "",
        'ArgumentType = Literal["string", "integer", "comma-separated", "context-fact"]',
        "",
        "",
        *record_class(
            "CliArgument",
            '''"""One argument of a graph command: an option (``flag``) or a positional
(``positional``) that sets the request ``member`` ('/'-separated when nested)."""''',
            [
                ("flag", "str | None"),
                ("positional", "str | None"),
                ("member", "str"),
                ("type", "ArgumentType"),
                ("repeatable", "bool"),
                ("metavar", "str"),
                ("help", "str"),
            ],
        ),
        "",
        "",
        *record_class(
            "CliCommand",
            '"""A graph command: its name, help, examples and arguments."""',
            [
                ("command", "str"),
                ("help", "str"),
                ("examples", "tuple[str, ...]"),
                ("arguments", "tuple[CliArgument, ...]"),
            ],
        ),
        "",
        "",
        *record_class(
            "Annotations",
            '"""The tool annotations (MCP hints)."""',
            [
                ("read_only", "bool"),
                ("destructive", "bool"),
                ("idempotent", "bool"),
                ("open_world", "bool"),
            ],
        ),
        "",
        "",
        *record_class(
            "Operation",
            '''"""One operation of the table. ``request_model`` and ``result_model`` are
``module.Class`` under ``_generated.models`` (the module also under ``validators``)."""''',
            [
                ("tool", "str"),
                ("title", "str"),
                ("phase", "Phase"),
                ("request_schema", "str"),
                ("result_schema", "str"),
                ("request_model", "str"),
                ("result_model", "str"),
                ("annotations", "Annotations"),
                ("sdk_method", "str"),
                ("cli", "CliCommand"),
            ],
        ),
        "",
        "    @property",
        "    def compiled(self) -> str:",
        '        """The module of the compiled request validator (``_generated/validators``)."""',
        '        return self.request_model.partition(".")[0]',
        "",
        "",
    ]
)


def render_operations(operations: list[dict[str, Any]], schemas: dict[str, Any]) -> str:
    """The operation table as frozen Python data (``_generated/operations.py``)."""

    def model(schema_name: str) -> str:
        return f"{module_name(schema_name)}.{schemas[schema_name]['title']}"

    out = [
        f'"""{generated_by("spec/capability-graph/operations.json")}"""',
        _OPERATIONS_PRELUDE.rstrip("\n") + "\n\n",
        "OPERATION_TABLE: Final = (",
    ]
    for op in operations:
        hints = op["annotations"]
        cli = op["cli"]
        out += [
            "    Operation(",
            f"        tool={op['tool']!r},",
            f"        title={op['title']!r},",
            f"        phase=Phase({op['phase']!r}),",
            f"        request_schema={op['request']!r},",
            f"        result_schema={op['result']!r},",
            f"        request_model={model(op['request'])!r},",
            f"        result_model={model(op['result'])!r},",
            "        annotations=Annotations(",
            f"            read_only={hints['readOnlyHint']!r},",
            f"            destructive={hints['destructiveHint']!r},",
            f"            idempotent={hints['idempotentHint']!r},",
            f"            open_world={hints['openWorldHint']!r},",
            "        ),",
            f"        sdk_method={op['sdk']['method']!r},",
            "        cli=CliCommand(",
            f"            command={cli['command']!r},",
            f"            help={cli['help']!r},",
            f"            examples={tuple(cli['examples'])!r},",
            "            arguments=(",
        ]
        for argument in cli["arguments"]:
            out += [
                "                CliArgument(",
                f"                    flag={argument.get('flag')!r},",
                f"                    positional={argument.get('positional')!r},",
                f"                    member={argument['member']!r},",
                f"                    type={argument['type']!r},",
                f"                    repeatable={argument.get('repeatable', False)!r},",
                f"                    metavar={argument['metavar']!r},",
                f"                    help={argument['help']!r},",
                "                ),",
            ]
        out += ["            ),", "        ),", "    ),"]
    out += [")", ""]
    return "\n".join(out)


def render_handlers(operations: list[dict[str, Any]]) -> str:
    """The handler registry of the core's dispatch (``_core/operations/handlers.py``)."""
    cases = []
    for op in sorted(operations, key=lambda op: op["sdk"]["method"]):
        cases += [
            f'        case "{op["tool"]}":',
            f"            from .{op['sdk']['method']} import handle as {op['tool']}",
            "",
            f"            return {op['tool']}",
        ]
    tools = [f'        "{op["tool"]}",' for op in operations]
    return "\n".join(
        [
            f'"""{generated_by("spec/capability-graph/operations.json")}',
            "",
            "The handler of each operation, by tool name: the ``handle`` of this package's module",
            "named like the operation's SDK method, imported when the operation is first called",
            '(a command line that lists never imports the match pipeline)."""',
            "",
            "from __future__ import annotations",
            "",
            "from typing import Final",
            "",
            "from .common import Handler, HandlerRegistry",
            "",
            '__all__ = ["HANDLERS"]',
            "",
            "",
            "def _handler(tool: str) -> Handler:",
            "    match tool:",
            *cases,
            "    raise KeyError(tool)",
            "",
            "",
            "HANDLERS: Final = HandlerRegistry(",
            "    (",
            *tools,
            "    ),",
            "    _handler,",
            ")",
            "",
        ]
    )


def handlers_files(repo: Repo) -> dict[Path, str]:
    path = repo.package / "_core" / "operations" / "handlers.py"
    return {path: render_handlers(load_operations(repo))}


def tools_files(repo: Repo) -> dict[Path, str]:
    try:
        text = render_tools(load_operations(repo), repo.load_schemas())
    except BundleError as error:
        raise GenerationError(f"cannot bundle the tool schemas: {error}") from None
    return {repo.tools_json: text}


def operations_files(repo: Repo) -> dict[Path, str]:
    text = render_operations(load_operations(repo), repo.load_schemas())
    return {repo.generated / "operations.py": text}


TOOLS = Step("tools", tools_files)
OPERATIONS = Step("operations", operations_files)
HANDLERS = Step("handlers", handlers_files)
