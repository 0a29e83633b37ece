"""``cg-conformance check``: duplicate ids, unknown codes, registry coverage, schema validity."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from capability_graph_conformance.check import check_suite
from capability_graph_conformance.suite import Suite


def test_the_repository_suite_is_well_formed_and_covers_the_registry(suite: Suite) -> None:
    report = check_suite(suite)
    assert report.problems == []
    assert len(suite.codes) == 30
    assert all(report.coverage[code] for code in suite.codes)


def test_the_packaged_suite_is_well_formed() -> None:
    report = check_suite(Suite.packaged())
    assert report.problems == []


@pytest.fixture
def copy(repo: Path, tmp_path: Path) -> Path:
    """A private copy of the suite tree (spec + vectors + fixtures + implementations)."""
    root = tmp_path / "repo"
    for part in ("spec/capability-graph", "spec/conformance"):
        shutil.copytree(repo / part, root / part, ignore=shutil.ignore_patterns("examples"))
    for part in (
        "conformance/vectors/capability-graph",
        "conformance/fixtures",
        "conformance/implementations",
    ):
        shutil.copytree(repo / part, root / part, symlinks=True)
    return root


def _vector(root: Path, vector_id: str) -> Path:
    area, name = vector_id.split(".", 2)[1:]
    return root / "conformance/vectors/capability-graph" / area / f"{name}.json"


def _edit(path: Path, change: dict[str, Any]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(change)
    path.write_text(json.dumps(data), encoding="utf-8")


def _problems(root: Path) -> list[str]:
    return check_suite(Suite.from_repository(root)).problems


def test_a_duplicate_id_fails(copy: Path) -> None:
    twin = _vector(copy, "cg.query.describe").with_name("describe-twin.json")
    shutil.copyfile(_vector(copy, "cg.query.describe"), twin)
    problems = _problems(copy)
    assert any("duplicate id cg.query.describe" in p for p in problems)


def test_an_unknown_code_fails(copy: Path) -> None:
    _edit(
        _vector(copy, "cg.query.provider-not-found"),
        {
            "expect": {
                "error": {"code": "CG_PROVIDER_MISSING", "phase": "query", "nextAction": "refresh"}
            }
        },
    )
    assert any("unknown code 'CG_PROVIDER_MISSING'" in p for p in _problems(copy))


def test_a_registry_code_without_a_vector_fails(copy: Path) -> None:
    for path in (copy / "conformance/vectors/capability-graph").rglob("*.json"):
        if "CG_DOCUMENT_ROOT_REQUIRED" in path.read_text(encoding="utf-8"):
            path.unlink()
    problems = _problems(copy)
    assert (
        "registry code CG_DOCUMENT_ROOT_REQUIRED has no required vector that expects it" in problems
    )


def test_an_optional_vector_does_not_count_as_coverage(copy: Path) -> None:
    for path in (copy / "conformance/vectors/capability-graph").rglob("*.json"):
        if "CG_DOCUMENT_ROOT_REQUIRED" in path.read_text(encoding="utf-8"):
            _edit(path, {"level": "optional"})
    assert any("CG_DOCUMENT_ROOT_REQUIRED has no required vector" in p for p in _problems(copy))


def test_a_vector_that_breaks_its_schema_fails(copy: Path) -> None:
    _edit(_vector(copy, "cg.query.describe"), {"surfaces": ["sdk", "telepathy"]})
    problems = _problems(copy)
    assert any(p.startswith("query/describe.json: schema:") for p in problems)


def test_registry_consistency_of_expectations(copy: Path) -> None:
    _edit(
        _vector(copy, "cg.query.capability-not-found"),
        {
            "expect": {
                "error": {
                    "code": "CG_CAPABILITY_NOT_FOUND",
                    "phase": "match",
                    "nextAction": "retry",
                }
            }
        },
    )
    _edit(
        _vector(copy, "cg.query.describe"),
        {
            "call": {"tool": "describe_graph", "arguments": {}},
            "expect": {
                "error": {"code": "CG_GRAPH_CLOSED", "phase": "lifecycle", "nextAction": "retry"}
            },
        },
    )
    problems = _problems(copy)
    assert any("CG_CAPABILITY_NOT_FOUND is not raised in phase 'match'" in p for p in problems)
    assert any("CG_CAPABILITY_NOT_FOUND cannot carry nextAction 'retry'" in p for p in problems)
    assert any("CG_GRAPH_CLOSED has no nextAction" in p for p in problems)


def test_surfaces_must_be_able_to_express_the_action(copy: Path) -> None:
    _edit(_vector(copy, "cg.config.budget-not-positive"), {"surfaces": ["sdk", "tool", "cli"]})
    _edit(_vector(copy, "cg.query.input-arguments-not-object"), {"surfaces": ["sdk", "mcp"]})
    problems = _problems(copy)
    assert any("a open vector cannot run on ['tool']" in p for p in problems)
    # Arguments that are not an object go over MCP as they are (CG-MCP-7).
    assert not any("input-arguments-not-object" in p for p in problems)


def test_id_must_match_folder_and_file(copy: Path) -> None:
    _edit(_vector(copy, "cg.query.describe"), {"id": "cg.query.describe-graph"})
    assert any("must be cg.query.describe" in p for p in _problems(copy))


def test_forbidden_text_in_an_expectation_fails(copy: Path) -> None:
    _edit(_vector(copy, "cg.seed.error-mjs"), {"forbid": ["Requested capability"]})
    assert any("appears in the expectation itself" in p for p in _problems(copy))


def test_scenarios_are_checked(copy: Path) -> None:
    _edit(
        _vector(copy, "cg.lifecycle.close-idempotent"),
        {"steps": [{"op": "close"}, {"op": "await", "handle": "nothing"}]},
    )
    problems = _problems(copy)
    assert any("first driver step must be open" in p for p in problems)
    assert any("never started" in p for p in problems)


def test_a_scenario_may_await_or_cancel_only_a_running_call(copy: Path) -> None:
    """A handle names its call from its call step to its await or the next open (the driver
    answers any other protocolError: spec/conformance/README.md, "Scenarios")."""
    call = {"op": "call", "tool": "describe_graph", "arguments": {}}
    _edit(
        _vector(copy, "cg.lifecycle.close-idempotent"),
        {
            "steps": [
                {"op": "open"},
                {**call, "handle": "a"},
                {"op": "cancel", "handle": "a"},  # running, or finished and not awaited: fine
                {"op": "await", "handle": "a"},
                {"op": "cancel", "handle": "a"},
                {"op": "await", "handle": "a"},
                {**call, "handle": "b"},
                {"op": "open"},
                {"op": "await", "handle": "b"},
            ]
        },
    )
    problems = [p for p in _problems(copy) if "close-idempotent" in p]
    assert [p.split(": ", 1)[1] for p in problems] == [
        "steps[4]: cancel of a handle already awaited: 'a'",
        "steps[5]: await of a handle already awaited: 'a'",
        "steps[8]: await of a handle started before the last open: 'b'",
    ]


def test_setup_commands_are_only_for_argv_vectors(copy: Path) -> None:
    _edit(_vector(copy, "cg.query.describe"), {"setup": [["init", "--dry-run"]]})
    assert any("setup is only for argv vectors" in p for p in _problems(copy))


def test_edits_of_a_captured_value_are_checked(copy: Path) -> None:
    list_page = {"op": "call", "tool": "list_capabilities", "arguments": {"limit": 1}}
    captured = {**list_page, "expect": {"result": {"nextCursor": {"$capture": "c"}}}}
    edited = {"$captured": "c", "$append": "==", "$setUnusedBits": False}
    _edit(
        _vector(copy, "cg.lifecycle.cursor-bound-to-filter"),
        {
            "steps": [
                {"op": "open"},
                captured,
                {**list_page, "arguments": {"cursor": {"$captured": "never", "$append": "="}}},
                {**list_page, "arguments": {"cursor": edited}},
            ]
        },
    )
    problems = _problems(copy)
    assert any("'never'" in p and "before any step captured it" in p for p in problems)
    assert any("more than one edit" in p for p in problems)
    assert any("'$setUnusedBits' beside '$captured' must be true" in p for p in problems)


def test_expected_failure_lists_must_name_real_vectors(copy: Path) -> None:
    path = copy / "conformance/implementations/python-reference.expected-failures.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["entries"].append({"vector": "cg.query.gone", "surface": "sdk", "reason": "x"})
    path.write_text(json.dumps(data), encoding="utf-8")
    assert any("unknown vector 'cg.query.gone'" in p for p in _problems(copy))


def test_check_command_exit_status(harness: Any, repo: Path, copy: Path) -> None:
    status, out, _ = harness("check", "--suite-root", str(repo))
    assert status == 0
    assert "registry codes covered by required vectors: 30/30" in out
    _edit(_vector(copy, "cg.query.describe"), {"level": "sometimes"})
    status, out, _ = harness("check", "--suite-root", str(copy))
    assert status == 1
    assert "problem(s)" in out


# -- requirement coverage ------------------------------------------------------------------------


def test_every_testable_must_of_the_specification_has_a_required_vector(suite: Suite) -> None:
    report = check_suite(suite)
    assert report.requirements is not None
    assert report.requirements.uncovered() == []
    assert report.requirements.unknown == []


def test_a_vector_naming_an_undefined_requirement_fails(copy: Path) -> None:
    _edit(_vector(copy, "cg.query.describe"), {"requirements": ["CG-OP-1", "CG-NOPE-7"]})
    assert any(
        "cg.query.describe: names requirement CG-NOPE-7, which the specification does not define"
        in p
        for p in _problems(copy)
    )


def test_a_must_without_a_vector_fails(copy: Path) -> None:
    section = copy / "spec/capability-graph/spec/05-precedence.md"
    section.write_text(
        section.read_text(encoding="utf-8") + "\n**[CG-PREC-999]** A new rule MUST hold.\n",
        encoding="utf-8",
    )
    assert any(p.startswith("requirement CG-PREC-999 (05-precedence.md)") for p in _problems(copy))


def test_an_untestable_must_needs_no_vector(copy: Path) -> None:
    section = copy / "spec/capability-graph/spec/05-precedence.md"
    section.write_text(
        section.read_text(encoding="utf-8")
        + "\n**[CG-PREC-999]** A new rule MUST hold. (untestable: no vector can observe it)\n",
        encoding="utf-8",
    )
    assert not any("CG-PREC-999" in p for p in _problems(copy))


def test_a_vector_without_requirements_fails_the_schema(copy: Path) -> None:
    path = _vector(copy, "cg.query.describe")
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["requirements"]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert any(
        p.startswith("query/describe.json: schema:") and "requirements" in p
        for p in _problems(copy)
    )


def test_check_reports_requirement_coverage(harness: Any, repo: Path) -> None:
    _, out, _ = harness("check", "--suite-root", str(repo))
    assert "testable MUSTs covered by required vectors: " in out
    assert "requirements: " in out
