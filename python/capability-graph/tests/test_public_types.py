"""The SDK's public types are the types generated from the schemas (models, and for the resolve
result TypedDicts): they give back exactly the JSON every other surface emits, requests accept
them, a type checker holds a user's script to them, and every generated module is one the runtime
uses."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import MISSING

import capability_graph
from capability_graph import (
    BlockingCapabilityGraph,
    CapabilityGraph,
    GraphError,
    ListResult,
    RelationTraversal,
    ResolveResult,
)
from capability_graph._core.json import dumps
from capability_graph_testing.common import (
    capability,
    error_of,
    expected,
    inline,
    provider,
)

REPOSITORY = Path(__file__).resolve().parents[3]
PACKAGE = Path(capability_graph.__file__).resolve().parent
GENERATED = PACKAGE / "_generated"
ROUNDTRIP_DRIVER = Path(__file__).with_name("roundtrip_driver.py")

CONFIG = inline(
    provider(
        "acme",
        capability("a", relations=[{"kind": "requires", "target": "b"}], tags=["http"]),
        capability("b", relations=[{"kind": "related", "target": "c"}]),
        capability("c"),
    )
)


# --- the JSON form is the contract's, byte for byte ------------------------------------------


def test_every_sdk_model_result_gives_back_the_json_that_call_returns() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        pairs = [
            (graph.describe(), graph.call("describe_graph", {})),
            (graph.list(limit=1), graph.call("list_capabilities", {"limit": 1})),
        ]
    for public, json_result in pairs:
        assert dumps(public.to_json()) == dumps(json_result)
        assert dumps(public.model_dump(mode="json", by_alias=True)) == dumps(json_result)


def test_resolve_gives_back_the_json_result_that_call_returns() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        typed = graph.resolve(ids=["acme::a"], relations={"depth": 2})
        json_result = graph.call(
            "resolve_capabilities", {"ids": ["acme::a"], "relations": {"depth": 2}}
        )
    assert isinstance(typed, ResolveResult)
    assert dumps(typed.to_json()) == dumps(json_result)


def test_resolve_is_read_with_the_attributes_of_every_other_result() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        result = graph.resolve(ids=["acme::a"], relations={"depth": 2})
    first = result.capabilities[0]
    assert (first.id, first.provider_id, first.relations[0].kind) == ("acme::a", "acme", "requires")
    assert first.when_to_use is MISSING
    assert (result.edges[0].from_, result.edges[0].to) == ("acme::a", "acme::b")


def test_a_resolve_view_is_read_only_and_its_json_form_a_copy() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        result = graph.resolve(ids=["acme::c"])
        again = graph.resolve(ids=["acme::c"])
    with pytest.raises(AttributeError):
        result.status = "partial"  # type: ignore[misc]
    copy = result.to_json()
    copy["capabilities"].clear()
    assert len(result.capabilities) == 1
    assert result == again
    assert repr(result).startswith("ResolveResult(status='ok', revision='r:")
    assert repr(result).endswith("capabilities=[1 item], edges=[0 items], unresolved=[0 items])")


def test_attributes_are_snake_case_and_the_json_form_camel_case() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        page = graph.list(limit=1)
    assert isinstance(page, ListResult)
    assert page.items[0].provider_id == "acme"
    assert "providerId" in page.to_json()["items"][0]
    assert page.to_json()["nextCursor"] == page.next_cursor


def test_a_public_result_is_frozen() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        page = graph.list()
    with pytest.raises(ValueError, match="frozen"):
        page.status = "empty"  # type: ignore[misc]


@pytest.mark.slow
def test_every_conformance_result_goes_through_its_public_type_unchanged(tmp_path: Path) -> None:
    # The suite's sdk surface, with each successful result replaced by what its public type
    # gives back (roundtrip_driver.py): every vector still passes, and no JSON text changed.
    implementations = REPOSITORY / "conformance" / "implementations"
    manifest = tmp_path / "roundtrip.json"
    manifest.write_text(
        json.dumps(
            {
                "name": "python-reference-roundtrip",
                "language": "Python",
                "version": "0.1.0",
                "driver": {"argv": ["{python}", str(ROUNDTRIP_DRIVER), str(implementations)]},
            }
        ),
        encoding="utf-8",
    )
    log = tmp_path / "roundtrips.log"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "capability_graph_conformance",
            "run",
            "--suite-root",
            str(REPOSITORY),
            "-i",
            str(manifest),
            "-s",
            "sdk",
            "--no-expected-failures",
            "--no-progress",
            "--report-dir",
            str(tmp_path / "report"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "CG_ROUNDTRIP_LOG": str(log)},
        check=False,
    )
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    sdk = [case for case in report["cases"] if case["surface"] == "sdk"]
    failed = [case["vector"] for case in sdk if case["outcome"] in ("failed", "errored")]
    assert (done.returncode, failed) == (0, [])
    assert sum(case["outcome"] == "passed" for case in sdk) >= 250
    kinds = set(log.read_text(encoding="utf-8").split())
    assert kinds == {
        "describe_graph",
        "list_capabilities",
        "resolve_capabilities",
        "match_capabilities",
        "read_document",
        "reload",
    }


# --- requests accept the generated types, keyword arguments and dicts --------------------------


def test_resolve_accepts_a_relation_traversal_as_its_json_form() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        typed = graph.resolve(ids=["acme::a"], relations=RelationTraversal(depth=2))
        as_dict = graph.resolve(ids=["acme::a"], relations={"depth": 2})
        kinds = graph.resolve(ids=["acme::a"], relations=RelationTraversal(kinds=["related"]))
    assert typed == as_dict
    assert [c.id for c in typed.capabilities] == ["acme::a", "acme::b", "acme::c"]
    assert [c.id for c in kinds.capabilities] == ["acme::a"]


def test_a_misspelled_relation_option_in_a_dict_is_input_invalid() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph, pytest.raises(GraphError) as excinfo:
        graph.resolve(ids=["acme::a"], relations={"dept": 2})
    assert error_of(excinfo) == expected(
        "CG_INPUT_INVALID",
        "query",
        "/relations has a key that is not allowed (allowed: kinds, depth)",
    )


USER_SCRIPT = """\
from capability_graph import BlockingCapabilityGraph, RelationTraversal

with BlockingCapabilityGraph.open({"providers": []}) as graph:
    result = graph.resolve(ids=["acme::a"], relations=RelationTraversal(dept=2))
    print(result.capabilities[0].provider_id, result.capabilities[0].providerId)
    page = graph.list()
    print(page.items[0].provider_id, page.items[0].providerId)
    result.status = "partial"
    print(graph.resolve(ids=["acme::a"], relations=RelationTraversal(kinds=["requires"])))
"""


@pytest.mark.slow
def test_mypy_strict_catches_a_misspelled_option_an_attribute_and_a_write_to_a_result(
    tmp_path: Path,
) -> None:
    script = tmp_path / "user.py"
    script.write_text(USER_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(script)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        check=False,
    )
    errors = [
        line.split(": error: ", 1)[1] for line in done.stdout.splitlines() if ": error: " in line
    ]
    assert errors == [
        'Unexpected keyword argument "dept" for "RelationTraversal"; did you mean "depth"?  '
        "[call-arg]",
        '"CapabilityDetail" has no attribute "providerId"; maybe "provider_id"?  [attr-defined]',
        '"CapabilitySummary" has no attribute "providerId"; maybe "provider_id"?  [attr-defined]',
        'Property "status" defined in "ResolveResult" is read-only  [misc]',
    ]  # and a relation kind is its string, as in the JSON form


def test_async_resolve_returns_what_the_blocking_twin_returns() -> None:
    async def scenario() -> ResolveResult:
        async with CapabilityGraph.open(CONFIG) as graph:
            return await graph.resolve(ids=["acme::c"])

    with BlockingCapabilityGraph.open(CONFIG) as graph:
        assert asyncio.run(scenario()) == graph.resolve(ids=["acme::c"])


# --- what is generated is used ----------------------------------------------------------------

#: Generated modules (``package.module`` under ``_generated``) that no hand-written module
#: imports, each with its reason.
UNIMPORTED_ALLOWED: dict[str, str] = {}
#: The packages of generated types, checked here.
TYPE_PACKAGES = ("models",)


def _imported_types(tree: ast.Module) -> set[str]:
    """The generated type modules (``models.list_result``) a hand-written module imports, by name
    or by table."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            package, _, module = node.module.lstrip(".").removeprefix("_generated.").partition(".")
            if package in TYPE_PACKAGES and module:
                found.add(f"{package}.{module}")
            elif package in TYPE_PACKAGES:  # from ._generated.models import list_result
                found.update(f"{package}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "_LAZY_MODELS" for target in node.targets
        ):
            value = ast.literal_eval(node.value)
            found.update(module for module in value.values() if "." in module)
    return found


def _generated_imports(module: str) -> set[str]:
    """The modules of its own package that a generated module imports (``from .ids import``)."""
    package, _, name = module.partition(".")
    tree = ast.parse((GENERATED / package / f"{name}.py").read_text(encoding="utf-8"))
    return {
        f"{package}.{node.module}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
    }


def test_every_generated_type_module_is_used_by_the_runtime() -> None:
    used: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if "_generated" not in path.relative_to(PACKAGE).parts:
            used |= _imported_types(ast.parse(path.read_text(encoding="utf-8")))
    todo = list(used)
    while todo:  # a used module's own imports are used
        for module in _generated_imports(todo.pop()):
            if module not in used:
                used.add(module)
                todo.append(module)
    generated = {
        f"{package}.{path.stem}"
        for package in TYPE_PACKAGES
        for path in (GENERATED / package).glob("*.py")
        if path.stem != "__init__"
    }
    assert generated - used - set(UNIMPORTED_ALLOWED) == set()
    assert set(UNIMPORTED_ALLOWED) <= generated
    assert used <= generated


# --- the API reference describes every field --------------------------------------------------


def _undescribed_fields(path: Path) -> list[str]:
    """``Class.field`` for each field of a generated model that no docstring follows (the
    generator writes a property's schema ``description`` as the docstring under the field)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    missing = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        body = node.body
        for index, statement in enumerate(body):
            if isinstance(statement, ast.FunctionDef):  # a view's property
                if not _docstring(statement.body[0]).strip():
                    missing.append(f"{node.name}.{statement.name}")
                continue
            if not isinstance(statement, ast.AnnAssign) or not isinstance(
                statement.target, ast.Name
            ):
                continue
            after = body[index + 1] if index + 1 < len(body) else None
            if not _docstring(after).strip():
                missing.append(f"{node.name}.{statement.target.id}")
    return missing


def _docstring(node: ast.stmt | None) -> str:
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ):
        return node.value.value
    return ""


def test_every_field_of_the_public_models_has_a_description() -> None:
    public = capability_graph._core.results._LAZY_MODELS  # the table of public models
    missing = []
    for module in sorted(set(public.values())):
        missing += _undescribed_fields(GENERATED / f"{module.replace('.', '/')}.py")
    assert missing == []


# --- the JSON path does not pay for the models ----------------------------------------------


def test_importing_the_package_and_its_blocking_twin_does_not_import_pydantic() -> None:
    script = (
        "import sys\n"
        "from capability_graph import BlockingCapabilityGraph, CapabilityGraph\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'pydantic'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout == "[]\n"
