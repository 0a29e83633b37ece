"""Runs the language-neutral flowcast vectors (conformance/vectors/flowcast/*.json) against
this implementation (they test a library API, not the four surfaces the conformance harness
drives, so this test is their runner).

Each vector runs in a fresh empty working directory (gates' repository, spawned commands'
cwd); ``flowcast._conformance.observe`` turns the Python result into the language-neutral
observation the vector schema describes, and ``check`` compares it with ``expect`` as a
harness would.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from capability_graph_flowcast._conformance import observe
from capability_graph_testing.flowcast_support import SPEC_DIR, VECTORS_DIR


def _load_vectors() -> list[dict[str, Any]]:
    vectors = []
    for path in sorted(VECTORS_DIR.glob("*.json")):
        vectors.extend(json.loads(path.read_text(encoding="utf-8"))["vectors"])
    return vectors


VECTORS = _load_vectors()


def _error_validator() -> Any:
    resources = []
    for path in (SPEC_DIR / "schemas").glob("*.schema.json"):
        schema = json.loads(path.read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    schema = json.loads((SPEC_DIR / "schemas" / "error.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema, registry=Registry().with_resources(resources))


ERROR_SCHEMA = _error_validator()


def project(observed: Any, expected: Any) -> Any:
    """``observed`` cut down to the keys ``expected`` names (the vectors' subset matching)."""
    if isinstance(expected, dict) and isinstance(observed, dict):
        return {k: project(observed[k], v) for k, v in expected.items() if k in observed}
    if isinstance(expected, list) and isinstance(observed, list) and len(expected) == len(observed):
        return [project(o, e) for o, e in zip(observed, expected, strict=True)]
    return observed


def check(
    vector: dict[str, Any], observation: dict[str, Any], elapsed: float, workdir: Path
) -> None:
    expect = vector["expect"]
    for key in ("result", "ok", "value", "error"):
        if key in expect:
            assert key in observation, f"expected {key}, observed {observation}"
            projected = project(observation[key], expect[key])
            assert projected == expect[key]
            assert json.dumps(projected, sort_keys=True) == json.dumps(expect[key], sort_keys=True)
    if "error" in observation:
        assert list(ERROR_SCHEMA.iter_errors(observation["error"])) == []
    if "retryable" in expect:
        assert observation["retryable"] is expect["retryable"]
    stdout = (
        observation.get("result", {}).get("stdout")
        if isinstance(observation.get("result"), dict)
        else None
    )
    if "stdoutLength" in expect:
        assert stdout is not None
        assert len(stdout) == expect["stdoutLength"]
    if "stdoutEndsWith" in expect:
        assert stdout is not None
        assert stdout.endswith(expect["stdoutEndsWith"])
    if "maxSeconds" in expect:
        assert elapsed < expect["maxSeconds"]
    for path, content in expect.get("files", {}).items():
        assert (workdir / path).read_text() == content, path
    for path in expect.get("absentFiles", []):
        assert not (workdir / path).exists(), path


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector(vector: dict[str, Any], tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    started = time.monotonic()
    observation = observe(vector, workdir)
    check(vector, observation, time.monotonic() - started, workdir)
