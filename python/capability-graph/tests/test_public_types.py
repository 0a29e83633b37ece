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
from pydantic import TypeAdapter, ValidationError

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


def test_resolve_returns_the_json_result_that_call_returns() -> None:
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        typed = graph.resolve(ids=["acme::a"], relations={"depth": 2})
        json_result = graph.call(
            "resolve_capabilities", {"ids": ["acme::a"], "relations": {"depth": 2}}
        )
    assert dumps(typed) == dumps(json_result)
    assert typed["capabilities"][0]["providerId"] == "acme"


def test_the_resolve_result_type_is_closed_and_typed_for_a_validator() -> None:
    # The TypedDicts are generated closed (no other keys) with the schema's member types, so
    # a validator built from them refuses what the schema refuses.
    with BlockingCapabilityGraph.open(CONFIG) as graph:
        result = graph.resolve(ids=["acme::c"])
    adapter: TypeAdapter[ResolveResult] = TypeAdapter(ResolveResult)
    assert adapter.validate_python(result) == result
    with pytest.raises(ValidationError, match="extra_forbidden"):
        adapter.validate_python({**result, "extra": 1})
    detail = {**result["capabilities"][0], "providerId": 5}
    with pytest.raises(ValidationError, match="string_type"):
        adapter.validate_python({**result, "capabilities": [detail]})


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
    assert [c["id"] for c in typed["capabilities"]] == ["acme::a", "acme::b", "acme::c"]
    assert [c["id"] for c in kinds["capabilities"]] == ["acme::a"]


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
    print(result["capabilities"][0]["providerId"], result["capabilities"][0]["provider_id"])
    page = graph.list()
    print(page.items[0].provider_id, page.items[0].providerId)
    result["capabilities"][0]["tags"].append("x")
    print(graph.resolve(ids=["acme::a"], relations=RelationTraversal(kinds=["requires"])))
"""


@pytest.mark.slow
def test_mypy_strict_catches_a_misspelled_option_key_attribute_and_a_write_to_a_shared_list(
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
        'TypedDict "CapabilityDetail" has no key "provider_id"  [typeddict-item]',
        '"CapabilitySummary" has no attribute "providerId"; maybe "provider_id"?  [attr-defined]',
        '"Sequence[str]" has no attribute "append"  [attr-defined]',
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
TYPE_PACKAGES = ("models", "typeddicts")


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
            found.update(value.values())
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
    for position, node in enumerate(tree.body):
        if _is_functional_typeddict(node):
            # Name = TypedDict("Name", {"from": ...}): its docstring describes each key.
            after = tree.body[position + 1] if position + 1 < len(tree.body) else None
            text = _docstring(after)
            assert isinstance(node, ast.Assign)
            assert isinstance(node.value, ast.Call)
            name, members = node.targets[0], node.value.args[1]
            assert isinstance(name, ast.Name)
            assert isinstance(members, ast.Dict)
            keys = [key.value for key in members.keys if isinstance(key, ast.Constant)]
            missing += [f"{name.id}.{key}" for key in keys if f"- ``{key}``: " not in text]
            continue
        if not isinstance(node, ast.ClassDef):
            continue
        body = node.body
        for index, statement in enumerate(body):
            if not isinstance(statement, ast.AnnAssign) or not isinstance(
                statement.target, ast.Name
            ):
                continue
            after = body[index + 1] if index + 1 < len(body) else None
            described = (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
                and after.value.value.strip() != ""
            )
            if not described:
                missing.append(f"{node.name}.{statement.target.id}")
    return missing


def _is_functional_typeddict(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "TypedDict"
    )


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
        package, _, name = module.partition(".")
        missing += _undescribed_fields(GENERATED / package / f"{name}.py")
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
