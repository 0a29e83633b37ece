"""The package's layers, as its folders show them: ``_generated`` (spec-derived) under ``_core``
(the engine) under the surfaces (``_surfaces/``) and the maintenance commands
(``_maintenance/``), with the public modules (``__init__``, ``cli``) on top.

Each import of every module is read (``ast``, so an import inside a function or under
``TYPE_CHECKING`` counts as much as one at the top) and judged by :func:`violation`. The rules:

- a module of ``_generated/`` imports no hand-written module, except the model base class
  (``_core/model.py``);
- ``_core/`` imports only ``_core/`` and ``_generated/``;
- ``_maintenance/`` imports only itself, ``_core/`` and ``_generated/``;
- a surface imports no other surface: ``_surfaces/tools.py``, ``_surfaces/mcp.py``,
  ``_surfaces/cli/`` and ``_surfaces/sdk/`` each import ``_core/``, ``_generated/`` and
  themselves; the CLI may also run the maintenance commands and start the MCP server (its
  ``mcp`` command): the one exception between surfaces;
- ``_testing`` (the one declared testing seam, for the project's tools) may import anything;
- nothing imports by a module name in a string (``importlib.import_module``, ``__import__``):
  the lazy imports are statements (``_core/lazy.py``, the generated registries, the package's
  ``__getattr__``, the CLI's commands: ``docs/contributing.md``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import capability_graph

PACKAGE = Path(capability_graph.__file__).parent
NAME = "capability_graph"

#: What each layer (a module-name prefix, longest first) may import, besides itself.
ALLOWED: dict[str, tuple[str, ...]] = {
    "_generated": ("_core.model",),
    "_core": ("_generated",),
    "_maintenance": ("_core", "_generated"),
    "_surfaces.cli": ("_core", "_generated", "_maintenance", "_surfaces.mcp"),
    "_surfaces.mcp": ("_core", "_generated"),
    "_surfaces.tools": ("_core", "_generated"),
    "_surfaces.sdk": ("_core", "_generated"),
}


def _layer(module: str) -> str | None:
    """The layer of a module (dotted, below the package), or None for the public top."""
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def violation(importer: str, imported: str) -> str | None:
    """Why ``importer`` may not import ``imported`` (both dotted below the package), or None."""
    layer = _layer(importer)
    if layer is None or _within(imported, layer):
        return None
    if any(_within(imported, allowed) for allowed in ALLOWED[layer]):
        return None
    return f"{layer} may import only {', '.join(ALLOWED[layer])} besides itself"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports from this package (dotted below it), with its line."""
    module = _module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and (node.module + ".").startswith(NAME + "."):
                target = node.module.split(".")[1:]
            else:
                continue
            # ``from . import sub`` imports the submodule ``sub``.
            for alias in node.names:
                sub = PACKAGE.joinpath(*target, alias.name)
                named = [*target, alias.name] if sub.with_suffix(".py").exists() else target
                found.append((node.lineno, ".".join(named)))
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name.partition(".")[2])
                for a in node.names
                if a.name.startswith(NAME + ".")
            ]
    return found


def _dynamic_imports(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            function = node.func
            name = (
                function.attr
                if isinstance(function, ast.Attribute)
                else getattr(function, "id", "")
            )
            if name in {"import_module", "__import__"}:
                lines.append(node.lineno)
    return lines


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_import_runs_up_a_layer_or_across_surfaces() -> None:
    problems = [
        f"{path.relative_to(PACKAGE)}:{line}: imports {imported}: {why}"
        for path in SOURCES
        for line, imported in _imports(path)
        if (why := violation(_module_name(path), imported)) is not None
    ]
    assert problems == []


def test_no_module_imports_by_a_name_in_a_string() -> None:
    found = [f"{p.relative_to(PACKAGE)}:{line}" for p in SOURCES for line in _dynamic_imports(p)]
    assert found == []


def test_every_module_belongs_to_a_layer_or_is_public() -> None:
    public = {"", "cli", "_testing", "_surfaces"}  # the package, its CLI module, a folder's marker
    stray = [m for m in map(_module_name, SOURCES) if _layer(m) is None and m not in public]
    assert stray == []


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("_generated.operations", "_core.errors"),  # generated code importing hand-written code
        ("_core.snapshot", "_surfaces.mcp"),  # the core importing a surface
        ("_core.graph", "_maintenance.report"),  # the core importing maintenance
        ("_surfaces.mcp", "_surfaces.tools"),  # a surface importing another
        ("_surfaces.tools", "_surfaces.sdk.blocking_graph"),
        ("_maintenance.mcp_install", "_surfaces.sdk.blocking_graph"),  # maintenance up a layer
    ],
)
def test_the_rule_refuses_an_import_up_or_across(importer: str, imported: str) -> None:
    assert violation(importer, imported) is not None


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("_generated.models.config", "_core.model"),
        ("_core.graph", "_generated.taxonomy"),
        ("_surfaces.cli.mcp", "_surfaces.mcp"),
        ("_surfaces.cli.doctor", "_maintenance.diagnose"),
        ("_surfaces.sdk.blocking_graph", "_core.graph"),
        ("", "_surfaces.tools"),
    ],
)
def test_the_rule_allows_an_import_down_or_the_named_exception(
    importer: str, imported: str
) -> None:
    assert violation(importer, imported) is None


#: A hand-written module longer than this says at its top why it is one piece.
LONG_MODULE = 420


def test_a_long_hand_written_module_says_why_it_is_one_piece() -> None:
    unexplained = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        if "_generated" in path.parts or "DO NOT EDIT" in text.partition("\n")[0]:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if text.count("\n") > LONG_MODULE and "Why one module" not in docstring:
            unexplained.append(f"{path.relative_to(PACKAGE)}: {text.count(chr(10))} lines")
    assert unexplained == []


REPOSITORY = Path(__file__).resolve().parents[3]
#: The code outside the package that uses it: the tools, the test-support package, the drivers.
CLIENTS = ("tools", "python/capability-graph-testing/src", "conformance/implementations")


def test_tools_reach_the_internals_only_through_the_declared_seam() -> None:
    reaching = []
    for folder in CLIENTS:
        for path in sorted((REPOSITORY / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and not node.level
                    else [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                for name in names:
                    parts = name.split(".")
                    private = len(parts) > 1 and parts[1].startswith("_")
                    if parts[0] == NAME and private and parts[1] != "_testing":
                        where = path.relative_to(REPOSITORY)
                        reaching.append(f"{where}:{node.lineno}: {name}")
    assert reaching == []
