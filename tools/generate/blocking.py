"""Step ``blocking``: the blocking twin ``BlockingCapabilityGraph``, generated from the async
``CapabilityGraph``.

Source: ``capability_graph/_graph.py``, read as source (``ast``), not imported. Output:
``capability_graph/_generated/blocking.py``, with a do-not-edit header. For every public coroutine
method of ``CapabilityGraph`` (except those the hand-written runner
``_blocking.BlockingGraphRunner`` defines, such as ``close``) the twin gets a blocking method of the
same name, parameters, defaults, annotations and docstring that runs the async method on the twin's
loop. The names its annotations use are imported from where ``_graph.py`` gets them. So a changed
signature, a new operation or a new result type reaches the twin by running ``python
tools/codegen.py``, and ``--check`` fails until it has run.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

from .base import PACKAGE, GenerationError, Repo, Step, generated_by

SOURCE = PACKAGE / "_graph.py"
RUNNER = PACKAGE / "_blocking.py"
ASYNC_CLASS = "CapabilityGraph"
RUNNER_CLASS = "BlockingGraphRunner"
HEADER = generated_by("capability_graph/_graph.py (CapabilityGraph)")
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


def _bindings(source: ast.Module) -> dict[str, tuple[str, bool]]:
    """The import line that binds each module-level name of the async class's module, as the
    generated module (one package level deeper) must write it, and whether ``_graph.py`` binds
    it for type checking only (under ``if TYPE_CHECKING:``)."""
    lines: dict[str, tuple[str, bool]] = {}
    for node, checking in _statements(source.body):
        if isinstance(node, ast.ImportFrom):
            module = "." * (node.level + 1 if node.level else 0) + (node.module or "")
            for alias in node.names:
                bound = alias.asname or alias.name
                renamed = f" as {alias.asname}" if alias.asname else ""
                lines[bound] = (f"from {module} import {alias.name}{renamed}", checking)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                lines[alias.asname or alias.name.split(".")[0]] = (f"import {alias.name}", checking)
        else:
            for name in _defined(node):
                lines[name] = (f"from .._graph import {name}", checking)
    return lines


def _statements(body: list[ast.stmt], checking: bool = False) -> list[tuple[ast.stmt, bool]]:
    """The module-level statements, with those of ``if`` blocks, each with whether it is in an
    ``if TYPE_CHECKING:`` block."""
    found: list[tuple[ast.stmt, bool]] = []
    for node in body:
        if isinstance(node, ast.If):
            inner = checking or ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
            found += _statements(node.body, inner) + _statements(node.orelse, checking)
        else:
            found.append((node, checking))
    return found


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
    annotations: list[ast.expr] = []
    defaults: list[ast.expr] = []
    for method in methods:
        args = method.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        annotations += [a.annotation for a in every if a is not None and a.annotation is not None]
        defaults += [d for d in (*args.defaults, *args.kw_defaults) if d is not None]
        annotations += [method.returns] if method.returns is not None else []
    bindings = _bindings(source)
    imports = {f"from .._blocking import {RUNNER_CLASS}"}
    # A name _graph.py imports for type checking only is imported so by the twin too (its
    # annotations are never evaluated): importing the twin must not import what _graph.py
    # defers (the public models, and Pydantic with them).
    checking_imports: set[str] = set()
    runtime_names = _names(defaults)
    for name in _names(annotations) | runtime_names:
        if name in bindings:
            line, checking = bindings[name]
            if checking and name not in runtime_names:
                checking_imports.add(line)
            else:
                imports.add(line)
        elif not hasattr(builtins, name):
            raise GenerationError(f"blocking: {name} is not bound at the top of _graph.py")
    checking_block = ""
    if checking_imports:
        imports.add("from typing import TYPE_CHECKING")
        indented = (
            _import_block(checking_imports).replace("\n", "\n    ").replace("\n    \n", "\n\n")
        )
        checking_block = f"\n\nif TYPE_CHECKING:\n    {indented}"
    body = "\n".join(_method(method) for method in methods)
    return (
        f'"""{HEADER}\n\nRegenerate with ``python tools/codegen.py`` after changing the '
        'public methods of\n``CapabilityGraph``; ``--check`` reports drift."""\n\n'
        "from __future__ import annotations\n\n"
        f"{_import_block(imports)}{checking_block}\n\n"
        '__all__ = ["BlockingCapabilityGraph"]\n\n\n'
        f"class BlockingCapabilityGraph({RUNNER_CLASS}):\n"
        f"{_docstring(CLASS_DOCSTRING, '    ')}\n\n"
        f"{body}"
    )


def _isort(name: str) -> tuple[int, str]:
    """isort's order of imported names: constants, then classes, then the rest."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def _import_block(imports: set[str]) -> str:
    """The import lines, one per module, grouped as isort does: plain, absolute, relative."""
    plain = sorted(i for i in imports if i.startswith("import "))
    by_module: dict[str, list[str]] = {}
    for line in imports - set(plain):
        module, _, name = line.removeprefix("from ").partition(" import ")
        by_module.setdefault(module, []).append(name)
    froms = {m: f"from {m} import {', '.join(sorted(n, key=_isort))}" for m, n in by_module.items()}
    absolute = [froms[m] for m in sorted(froms) if not m.startswith(".")]
    relative = [froms[m] for m in sorted(froms) if m.startswith(".")]
    return "\n\n".join("\n".join(group) for group in (plain, absolute, relative) if group)


def blocking_files(repo: Repo) -> dict[Path, str]:
    # The sources are the package's own modules (not generated, so never pending).
    source, runner = (path.read_text(encoding="utf-8") for path in (SOURCE, RUNNER))
    return {repo.generated / "blocking.py": render(source, runner)}


BLOCKING = Step("blocking", blocking_files)
