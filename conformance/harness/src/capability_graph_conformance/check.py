"""``cg-conformance check``: the suite is well-formed and covers the registry.

Fails on: a vector that does not validate against ``spec/conformance/vector.schema.json``; a
duplicate id; an id whose area or name disagrees with its file; an unknown fixture; an error
expectation naming a code outside the registry, a phase the code is not raised in, or a
nextAction the code cannot carry; a registry code without a *required* vector expecting it;
a surface list the action cannot be expressed on; a step scenario that does not start with
``open``, awaits or cancels a handle that names no running call (never started, already awaited,
or started before the last ``open``) or uses a capture that no earlier step made; a ``forbid``
string that the expectation itself contains. It also checks the conformance schemas (metaschema,
``$id``, resolvable ``$ref``), the fixtures' ``fixture.json`` and every manifest and
expected-failures list under ``conformance/implementations``.

Requirement coverage: every vector names the specification's requirement ids it tests; the check
fails on an id the specification does not define, on a specification that breaks its own
syntax, and on a MUST requirement (neither untestable nor deprecated) that no required vector
names. The report counts the requirements and how many of the testable MUSTs are covered.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import referencing.exceptions
from jsonschema import Draft202012Validator

from ._json import dumps
from .endpoint import LONGEST_BASE_URL, answer_body
from .matching import CAPTURED_EDITS
from .requirements import Coverage, RequirementError, suite_coverage
from .schemas import CONFORMANCE_BASE_URI, SchemaSet
from .suite import Suite, SuiteError, Vector

__all__ = ["CheckReport", "check_suite", "error_expectations", "expected_codes", "format_report"]

_PASCAL: Final = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_DRIVER_OPS: Final = frozenset(("open", "call", "await", "cancel", "reload", "close"))


@dataclass
class CheckReport:
    problems: list[str] = field(default_factory=list)
    vectors: int = 0
    by_area: dict[str, int] = field(default_factory=dict)
    by_surface: dict[str, int] = field(default_factory=dict)
    coverage: dict[str, list[str]] = field(default_factory=dict)  # code -> vector ids
    requirements: Coverage | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def error_expectations(vector: Vector) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, error expectation object) of every error the vector expects."""
    error = vector.expect.get("error")
    if isinstance(error, dict):
        yield "expect.error", error
    for index, step in enumerate(vector.data.get("steps", ())):
        expect = step.get("expect") if isinstance(step, dict) else None
        if isinstance(expect, dict) and isinstance(expect.get("error"), dict):
            yield f"steps[{index}].expect.error", expect["error"]


def _result_patterns(vector: Vector) -> Iterator[tuple[str, Any]]:
    if "result" in vector.expect:
        yield "expect.result", vector.expect["result"]
    for index, step in enumerate(vector.data.get("steps", ())):
        expect = step.get("expect") if isinstance(step, dict) else None
        if isinstance(expect, dict) and "result" in expect:
            yield f"steps[{index}].expect.result", expect["result"]


def _codes_in_pattern(pattern: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Objects of a result pattern that hold a ``code`` string (e.g. a reload's error)."""
    if isinstance(pattern, dict):
        if isinstance(pattern.get("code"), str):
            yield where, pattern
        for key, value in pattern.items():
            yield from _codes_in_pattern(value, f"{where}.{key}")
    elif isinstance(pattern, list):
        for index, value in enumerate(pattern):
            yield from _codes_in_pattern(value, f"{where}[{index}]")


def expected_codes(vector: Vector) -> set[str]:
    """Every registry code the vector expects to observe."""
    codes = {str(e.get("code")) for _, e in error_expectations(vector)}
    for where, pattern in _result_patterns(vector):
        codes.update(str(obj["code"]) for _, obj in _codes_in_pattern(pattern, where))
    return codes


def check_suite(suite: Suite, schemas: SchemaSet | None = None) -> CheckReport:
    report = CheckReport()
    try:
        vectors = suite.vectors
    except SuiteError as error:
        report.problems.append(str(error))
        return report
    schemas = SchemaSet(suite) if schemas is None else schemas
    report.problems.extend(_check_conformance_schemas(suite, schemas))
    report.vectors = len(vectors)
    report.by_area = dict(sorted(Counter(v.area for v in vectors).items()))
    report.by_surface = dict(Counter(s for v in vectors for s in v.surfaces))
    seen: dict[str, Path] = {}
    coverage: dict[str, list[str]] = defaultdict(list)
    for vector in vectors:
        where = f"{vector.area}/{vector.path.name}"
        for problem in schemas.errors("conformance/vector.schema.json", vector.data, limit=5):
            report.problems.append(f"{where}: schema: {problem}")
        if vector.id in seen:
            report.problems.append(f"{where}: duplicate id {vector.id} (also {seen[vector.id]})")
        seen[vector.id] = vector.path
        report.problems.extend(f"{where}: {p}" for p in _check_vector(suite, vector))
        if vector.level == "required":
            for code in expected_codes(vector):
                coverage[code].append(vector.id)
    for code in suite.codes:
        if not coverage.get(code):
            report.problems.append(f"registry code {code} has no required vector that expects it")
    report.coverage = {code: sorted(coverage.get(code, ())) for code in suite.codes}
    report.problems.extend(_check_requirements(suite, report))
    report.problems.extend(_check_fixtures(suite))
    report.problems.extend(_check_implementations(suite, schemas, set(seen)))
    return report


def _check_requirements(suite: Suite, report: CheckReport) -> Iterator[str]:
    try:
        report.requirements = suite_coverage(suite)
    except (RequirementError, OSError) as error:
        yield f"specification: {error}"
        return
    for vector_id, ident in report.requirements.unknown:
        yield f"{vector_id}: names requirement {ident}, which the specification does not define"
    for requirement in report.requirements.uncovered():
        yield (
            f"requirement {requirement.id} ({requirement.source}) is a MUST without a required "
            "vector (write one, or mark it '(untestable: reason)' if no vector can test it)"
        )


# -- one vector ----------------------------------------------------------------------------------


def _check_endpoint(data: dict[str, Any]) -> Iterator[str]:
    """A scripted endpoint's body fits its ``bodyBytes``, and the configuration names it."""
    script = data["endpoint"]
    try:
        answer_body(script, LONGEST_BASE_URL)
    except ValueError as error:
        yield f"endpoint: {error}"
    if "{endpoint}" not in json.dumps(data.get("config", {})):
        yield "endpoint: the configuration never names {endpoint}"


def _check_vector(suite: Suite, vector: Vector) -> Iterator[str]:
    data = vector.data
    parts = vector.id.split(".", 2)
    if len(parts) == 3 and (parts[1] != vector.area or parts[2] + ".json" != vector.path.name):
        yield f"id {vector.id} must be cg.{vector.area}.{vector.path.stem} (its folder and file)"
    if vector.fixture and not suite.fixture_dir(vector.fixture).is_dir():
        yield f"unknown fixture {vector.fixture!r}"
    yield from _check_codes(suite, vector)
    surfaces = set(vector.surfaces)
    kind = vector.kind
    allowed = {
        "call": {"sdk", "tool", "mcp", "cli"},
        "open": {"sdk", "mcp", "cli"},
        "argv": {"cli"},
        "steps": {"sdk", "tool"},
    }[kind]
    if surfaces - allowed:
        yield f"a {kind} vector cannot run on {sorted(surfaces - allowed)}"
    if "surfaceExpect" in data:
        for surface in data["surfaceExpect"]:
            if surface not in surfaces:
                yield f"surfaceExpect.{surface} for a surface the vector does not list"
    if "exit" in vector.expect and kind != "argv":
        yield "expect.exit is only for argv vectors"
    if "env" in data and kind != "argv":
        yield "env is only for argv vectors"
    if "setup" in data and kind != "argv":
        yield "setup is only for argv vectors"
    if "endpoint" in data:
        yield from _check_endpoint(data)
    if kind == "steps":
        yield from _check_steps(data.get("steps", []))
    expectations = [data.get("expect"), data.get("surfaceExpect")]
    expectations += [s.get("expect") for s in data.get("steps", ()) if isinstance(s, dict)]
    text = dumps(expectations)
    for secret in vector.forbid:
        if secret in text:
            yield f"forbid string {secret!r} appears in the expectation itself"


def _check_codes(suite: Suite, vector: Vector) -> Iterator[str]:
    for where, expectation in error_expectations(vector):
        code = expectation.get("code")
        entry = suite.codes.get(str(code))
        if entry is None:
            yield f"{where}: unknown code {code!r} (not in the registry)"
            continue
        if expectation.get("phase") not in entry.get("phases", ()):
            yield f"{where}: {code} is not raised in phase {expectation.get('phase')!r}"
        default = entry.get("defaultAction")
        action = expectation.get("nextAction")
        if default is None and action is not None:
            yield f"{where}: {code} has no nextAction, the vector expects {action!r}"
        elif default is not None and action is None:
            yield f"{where}: {code} always has a nextAction (default {default!r})"
        elif (
            action is not None
            and action != default
            and action not in entry.get("executorActions", ())
        ):
            yield f"{where}: {code} cannot carry nextAction {action!r}"
    for where, pattern in _result_patterns(vector):
        for at, obj in _codes_in_pattern(pattern, where):
            if obj["code"] not in suite.codes:
                yield f"{at}: unknown code {obj['code']!r} (not in the registry)"


def _check_steps(steps: list[Any]) -> Iterator[str]:
    driver_steps = [s for s in steps if isinstance(s, dict) and s.get("op") in _DRIVER_OPS]
    if not driver_steps or driver_steps[0].get("op") != "open":
        yield "a scenario's first driver step must be open"
    started: set[str] = set()
    # A handle names its call from its call step to its await, or to the next open, which ends
    # the calls still running (spec/conformance/README.md, "Scenarios"): the driver answers
    # anything else protocolError, so no vector may send it.
    live: set[str] = set()
    collected: set[str] = set()  # awaited handles
    captured: set[str] = set()
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        op = step.get("op")
        handle = step.get("handle")
        if op == "open":
            live.clear()
        if op == "call" and handle is not None:
            if handle in started:
                yield f"steps[{index}]: handle {handle!r} is started twice"
            started.add(handle)
            live.add(handle)
            if "expect" in step:
                yield f"steps[{index}]: a started call has its expectation on its await step"
        if op in ("await", "cancel") and handle not in live:
            if handle not in started:
                why = "that was never started"
            elif handle in collected:
                why = "already awaited"
            else:
                why = "started before the last open"
            yield f"steps[{index}]: {op} of a handle {why}: {handle!r}"
        if op == "await" and handle in live:
            live.discard(handle)
            collected.add(handle)
        for name in _names(step.get("arguments"), "$captured"):
            if name not in captured:
                yield f"steps[{index}]: {{'$captured': {name!r}}} before any step captured it"
        yield from (f"steps[{index}]: {p}" for p in _captured_edits(step.get("arguments")))
        expect = step.get("expect")
        for name in _names(expect, "$same") + _names(expect, "$differs"):
            if name not in captured:
                yield f"steps[{index}]: compares with {name!r} before any step captured it"
        captured.update(_names(expect, "$capture"))
        if op not in _DRIVER_OPS and "expect" in step:
            yield f"steps[{index}]: a {op} step is performed by the harness and has no expectation"
    for index, step in enumerate(steps):
        if isinstance(step, dict) and step.get("op") == "call" and step.get("handle") in started:
            awaited = any(
                isinstance(s, dict) and s.get("op") == "await" and s.get("handle") == step["handle"]
                for s in steps[index + 1 :]
            )
            if not awaited:
                yield f"steps[{index}]: handle {step['handle']!r} is never awaited"


def _names(value: Any, matcher: str) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        edits = CAPTURED_EDITS if matcher == "$captured" else frozenset()
        if matcher in value and set(value) - {matcher} <= edits:
            found.append(str(value[matcher]))
        for item in value.values():
            found.extend(_names(item, matcher))
    elif isinstance(value, list):
        for item in value:
            found.extend(_names(item, matcher))
    return found


def _captured_edits(value: Any) -> Iterator[str]:
    """Problems of the edit members beside ``$captured``: at most one, each of its type."""
    if isinstance(value, dict):
        edits = set(value) & CAPTURED_EDITS if "$captured" in value else set()
        if len(edits) > 1:
            yield f"{{'$captured': ...}} has more than one edit: {sorted(edits)}"
        if "$append" in edits and not isinstance(value["$append"], str):
            yield "'$append' beside '$captured' must be a string"
        if "$setUnusedBits" in edits and value["$setUnusedBits"] is not True:
            yield "'$setUnusedBits' beside '$captured' must be true"
        for item in value.values():
            yield from _captured_edits(item)
    elif isinstance(value, list):
        for item in value:
            yield from _captured_edits(item)


# -- schemas, fixtures, implementations ------------------------------------------------------------


def _check_conformance_schemas(suite: Suite, schemas: SchemaSet) -> Iterator[str]:
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    for path in sorted((suite.spec_dir / "conformance").glob("*.schema.json")):
        name = f"spec/conformance/{path.name}"
        schema = schemas.documents.get(CONFORMANCE_BASE_URI + path.name, {})
        for error in meta.iter_errors(schema):
            yield f"{name}: not a valid 2020-12 schema: {error.json_path}: {error.message}"
        if schema.get("$id") != CONFORMANCE_BASE_URI + path.name:
            yield f"{name}: $id must be {CONFORMANCE_BASE_URI + path.name}"
        if not _PASCAL.match(str(schema.get("title", ""))):
            yield f"{name}: needs a PascalCase title"
        if not str(schema.get("description", "")).strip():
            yield f"{name}: needs a description"
        resolver = schemas.registry.resolver(base_uri=CONFORMANCE_BASE_URI + path.name)
        for ref in _refs(schema):
            try:
                resolver.lookup(ref)
            except referencing.exceptions.Unresolvable:
                yield f"{name}: $ref {ref!r} does not resolve"


def _refs(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            elif key not in ("examples", "const", "enum", "default"):
                yield from _refs(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _refs(item)


def _check_fixtures(suite: Suite) -> Iterator[str]:
    if not suite.fixtures_dir.is_dir():
        yield f"no fixtures folder at {suite.fixtures_dir}"
        return
    for folder in sorted(p for p in suite.fixtures_dir.iterdir() if p.is_dir()):
        meta = folder / "fixture.json"
        if not meta.exists():
            continue
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except ValueError as error:
            yield f"fixtures/{folder.name}/fixture.json: {error}"
            continue
        known = {"description", "symlinks", "hardlinks"}
        links = data.get("symlinks", {}) if isinstance(data, dict) else None
        hard = data.get("hardlinks", {}) if isinstance(data, dict) else None
        if not isinstance(links, dict) or not isinstance(hard, dict) or set(data) - known:
            yield (
                f"fixtures/{folder.name}/fixture.json: only description, symlinks and hardlinks "
                "are known"
            )
            continue
        for link, target in links.items():
            if not isinstance(target, str) or not _inside(link):
                yield f"fixtures/{folder.name}/fixture.json: bad symlink {link!r}"
        for link, existing in hard.items():
            if not isinstance(existing, str) or not _inside(link) or not _inside(existing):
                yield f"fixtures/{folder.name}/fixture.json: bad hard link {link!r}"
            elif not (folder / existing).is_file():
                yield f"fixtures/{folder.name}/fixture.json: hard link {link!r} names no file"


def _inside(relative: str) -> bool:
    """A relative path that stays inside the fixture's folder."""
    return not relative.startswith("/") and ".." not in relative.split("/")


def _check_implementations(suite: Suite, schemas: SchemaSet, ids: set[str]) -> Iterator[str]:
    folder = suite.implementations_dir
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        name = f"conformance/implementations/{path.name}"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            yield f"{name}: {error}"
            continue
        if path.name.endswith(".expected-failures.json"):
            for problem in schemas.errors("conformance/expected-failures.schema.json", data):
                yield f"{name}: {problem}"
            for entry in data.get("entries", ()) if isinstance(data, dict) else ():
                if isinstance(entry, dict) and entry.get("vector") not in ids:
                    yield f"{name}: entry for an unknown vector {entry.get('vector')!r}"
        else:
            for problem in schemas.errors("conformance/manifest.schema.json", data):
                yield f"{name}: {problem}"


def format_report(report: CheckReport) -> str:
    lines = [f"{report.vectors} vectors in {len(report.by_area)} areas"]
    lines.append("  " + ", ".join(f"{area} {n}" for area, n in report.by_area.items()))
    lines.append(
        "  surfaces: " + ", ".join(f"{s} {n}" for s, n in sorted(report.by_surface.items()))
    )
    covered = sum(1 for ids in report.coverage.values() if ids)
    lines.append(f"registry codes covered by required vectors: {covered}/{len(report.coverage)}")
    if report.requirements is not None:
        counts = report.requirements.counts()
        lines.append(
            f"requirements: {counts['requirements']} (MUST {counts['MUST']}, "
            f"SHOULD {counts['SHOULD']}, MAY {counts['MAY']}; untestable {counts['untestable']}, "
            f"deprecated {counts['deprecated']})"
        )
        lines.append(
            "testable MUSTs covered by required vectors: "
            f"{counts['testable MUST covered']}/{counts['testable MUST']}"
        )
    if report.problems:
        lines.append(f"{len(report.problems)} problem(s):")
        lines.extend(f"  - {p}" for p in report.problems)
    else:
        lines.append("ok")
    return "\n".join(lines)
