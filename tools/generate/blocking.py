"""Step ``blocking``: the blocking twin ``BlockingCapabilityGraph``, generated from the async
``CapabilityGraph``.

Source: ``capability_graph/_core/graph.py``, read as source (``ast``), not imported. Output:
``capability_graph/_surfaces/sdk/blocking_graph.py``, with a do-not-edit header. For every public
coroutine method of ``CapabilityGraph`` (except those the hand-written runner
``blocking.BlockingGraphRunner`` defines, such as ``close``) the twin gets a blocking method of the
same name, parameters, defaults, annotations and docstring that runs the async method on the twin's
loop. The names its annotations use are imported from where ``graph.py`` gets them. So a changed
signature, a new operation or a new result type reaches the twin by running ``python
tools/codegen.py``, and ``--check`` fails until it has run.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

from .base import PACKAGE, GenerationError, Repo, Step, generated_by

SOURCE = PACKAGE / "_core" / "graph.py"
RUNNER = PACKAGE / "_surfaces" / "sdk" / "blocking.py"
# The async class's package, as the generated module (in another package) imports it.
SOURCE_PACKAGE = "capability_graph._core"
ASYNC_CLASS = "CapabilityGraph"
RUNNER_CLASS = "BlockingGraphRunner"
HEADER = generated_by("capability_graph/_core/graph.py (CapabilityGraph)")
CLASS_DOCSTRING = """\
The blocking twin of [CapabilityGraph][capability_graph.CapabilityGraph]: the same methods,
without ``await``. Open it with ``with BlockingCapabilityGraph.open(config) as graph:``.

Each method runs its async twin on the graph's private event loop and returns its result or
raises its GraphError; a [CancelToken][capability_graph.CancelToken] given to a method may be
cancelled from any thread. The twin may be used from several threads at once; ``close()``
stops running matches and then the loop."""


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise GenerationError(f"blocking: no class {name}")


def _methods_of(cls: ast.ClassDef) -> set[str]:
    return {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def twin_methods(source: ast.Module, runner: ast.Module) -> list[ast.AsyncFunctionDef]:
    """The public coroutine methods of the async class that the twin gets, in source order."""
    own = _methods_of(_class(runner, RUNNER_CLASS))
    return [
        node
        for node in _class(source, ASYNC_CLASS).body
        if isinstance(node, ast.AsyncFunctionDef)
        and not node.name.startswith("_")
        and node.name not in own
    ]


def _bindings(source: ast.Module) -> dict[str, str]:
    """The import line that binds each module-level name of the async class's module, as the
    generated module (beside the runner, in the SDK surface) must write it: absolute."""
    lines: dict[str, str] = {}
    for node in _statements(source.body) + _statements(_type_checking_body(source)):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node.level, node.module)
            for alias in node.names:
                bound = alias.asname or alias.name
                renamed = f" as {alias.asname}" if alias.asname else ""
                lines[bound] = f"from {module} import {alias.name}{renamed}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                lines[alias.asname or alias.name.split(".")[0]] = f"import {alias.name}"
        else:
            for name in _defined(node):
                lines[name] = f"from {SOURCE_PACKAGE}.graph import {name}"
    return lines


def _absolute(level: int, module: str | None) -> str:
    """The absolute name of an import of the async class's module (``level`` dots)."""
    if level == 0:
        return module or ""
    package = SOURCE_PACKAGE.split(".")
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The module-level statements outside ``if TYPE_CHECKING:`` (with those of other ``if``
    blocks)."""
    found: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            if not _is_type_checking(node):
                found += _statements(node.body) + _statements(node.orelse)
        else:
            found.append(node)
    return found


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _type_checking_body(source: ast.Module) -> list[ast.stmt]:
    """The statements of the module's ``if TYPE_CHECKING:`` blocks."""
    return [
        statement
        for node in source.body
        if isinstance(node, ast.If) and _is_type_checking(node)
        for statement in node.body
    ]


def _checking_only(source: ast.Module) -> set[str]:
    """The names the async class's module imports for type checking only: the twin imports them
    the same way (its annotations are never evaluated), so importing it stays as light."""
    return {
        alias.asname or alias.name
        for node in _type_checking_body(source)
        if isinstance(node, ast.ImportFrom | ast.Import)
        for alias in node.names
    }


def _defined(node: ast.stmt) -> list[str]:
    """The names a module-level statement other than an import defines."""
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return [node.name]
    return []


def _names(nodes: list[ast.expr]) -> set[str]:
    found: set[str] = set()
    for node in nodes:
        found.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    return found


def _parameters(method: ast.AsyncFunctionDef) -> tuple[list[str], list[str]]:
    """The twin's parameter lines (after ``self``) and the arguments of the forwarded call."""
    args = method.args
    lines: list[str] = []
    call: list[str] = []

    def declared(arg: ast.arg, default: ast.expr | None, prefix: str = "") -> str:
        text = prefix + arg.arg
        if arg.annotation is not None:
            text += f": {ast.unparse(arg.annotation)}"
        if default is not None:
            text += f" = {ast.unparse(default)}" if arg.annotation else f"={ast.unparse(default)}"
        return text

    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        if index == 0:
            continue  # self
        lines.append(declared(arg, default))
        call.append(arg.arg)
        if args.posonlyargs and arg is args.posonlyargs[-1]:
            lines.append("/")
    if args.vararg is not None:
        lines.append(declared(args.vararg, None, "*"))
        call.append(f"*{args.vararg.arg}")
    elif args.kwonlyargs:
        lines.append("*")
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        lines.append(declared(arg, default))
        call.append(f"{arg.arg}={arg.arg}")
    if args.kwarg is not None:
        lines.append(declared(args.kwarg, None, "**"))
        call.append(f"**{args.kwarg.arg}")
    return lines, call


def _docstring(text: str, indent: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = escaped.splitlines()
    if len(lines) == 1:
        return f'{indent}"""{lines[0]}"""'
    body = "\n".join(f"{indent}{line}" if line else "" for line in lines[1:])
    return f'{indent}"""{lines[0]}\n{body}\n{indent}"""'


def _method(method: ast.AsyncFunctionDef) -> str:
    lines, call = _parameters(method)
    returns = f" -> {ast.unparse(method.returns)}" if method.returns is not None else ""
    docstring = ast.get_docstring(method) or ""
    seen = (
        f"The blocking form of [CapabilityGraph.{method.name}]"
        f"[capability_graph.CapabilityGraph.{method.name}]."
    )
    signature = "\n".join(f"        {line}," for line in ["self", *lines])
    text = f"{docstring}\n\n{seen}" if docstring else seen
    return (
        f"    def {method.name}(\n{signature}\n    ){returns}:\n"
        f"{_docstring(text, '        ')}\n"
        f"        return self._run(lambda: self._graph.{method.name}({', '.join(call)}))\n"
    )


def render(source_text: str, runner_text: str) -> str:
    source = ast.parse(source_text)
    methods = twin_methods(source, ast.parse(runner_text))
    used: list[ast.expr] = []
    for method in methods:
        args = method.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        used += [a.annotation for a in every if a is not None and a.annotation is not None]
        used += [d for d in (*args.defaults, *args.kw_defaults) if d is not None]
        used += [method.returns] if method.returns is not None else []
    bindings = _bindings(source)
    checking_only = _checking_only(source)
    imports = {f"from .blocking import {RUNNER_CLASS}"}
    checking: set[str] = set()
    for name in _names(used):
        if name in bindings:
            (checking if name in checking_only else imports).add(bindings[name])
        elif not hasattr(builtins, name):
            raise GenerationError(f"blocking: {name} is not bound at the top of _core/graph.py")
    block = _import_block(imports | ({"from typing import TYPE_CHECKING"} if checking else set()))
    if checking:
        guarded = _import_block(checking).replace("\n", "\n    ").replace("\n    \n", "\n\n")
        block += f"\n\nif TYPE_CHECKING:\n    {guarded}"
    body = "\n".join(_method(method) for method in methods)
    return (
        f'"""{HEADER}\n\nRegenerate with ``python tools/codegen.py`` after changing the '
        'public methods of\n``CapabilityGraph``; ``--check`` reports drift."""\n\n'
        "from __future__ import annotations\n\n"
        f"{block}\n\n"
        '__all__ = ["BlockingCapabilityGraph"]\n\n\n'
        f"class BlockingCapabilityGraph({RUNNER_CLASS}):\n"
        f"{_docstring(CLASS_DOCSTRING, '    ')}\n\n"
        f"{body}"
    )


def _import_block(imports: set[str]) -> str:
    """The import lines, one per module, grouped as isort does: plain, third-party, first-party,
    relative."""
    plain = sorted(i for i in imports if i.startswith("import "))
    by_module: dict[str, list[str]] = {}
    for line in imports - set(plain):
        module, _, name = line.removeprefix("from ").partition(" import ")
        by_module.setdefault(module, []).append(name)
    froms = {m: f"from {m} import {', '.join(sorted(n))}" for m, n in by_module.items()}
    ours = [froms[m] for m in sorted(froms) if m.startswith("capability_graph")]
    absolute = [froms[m] for m in sorted(froms) if not m.startswith((".", "capability_graph"))]
    relative = [froms[m] for m in sorted(froms) if m.startswith(".")]
    groups = (plain, absolute, ours, relative)
    return "\n\n".join("\n".join(group) for group in groups if group)


def blocking_files(repo: Repo) -> dict[Path, str]:
    # The sources are the package's own modules (not generated, so never pending).
    source, runner = (path.read_text(encoding="utf-8") for path in (SOURCE, RUNNER))
    return {repo.package / "_surfaces" / "sdk" / "blocking_graph.py": render(source, runner)}


BLOCKING = Step("blocking", blocking_files)
