"""Runs the language-neutral flowcast vectors (conformance/vectors/flowcast/*.json) against
this implementation, until the conformance harness drives them through a driver.

Each vector runs in a fresh empty working directory (gates' repository, spawned commands'
cwd); ``observe`` turns the Python result into the language-neutral observation the vector
schema describes, and ``check`` compares it with ``expect``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import flowcast
import jsonschema
import pytest
from fc_support import SPEC_DIR, VECTORS_DIR
from referencing import Registry, Resource

KILL_GRACE = 0.2


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


class VectorError(Exception):
    """A native error built from a vector's errorLike object."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec.get("message", ""))
        if "timedOut" in spec:
            self.timed_out = spec["timedOut"]
        if "apiStatus" in spec:
            self.api_status = spec["apiStatus"]


def _gate(spec: dict[str, Any], resume_fix_cmd: str | None, workdir: Path) -> dict[str, Any]:
    names = {"onFail": "on_fail", "autofixCmd": "autofix_cmd"}
    gate = {names.get(key, key): value for key, value in spec.items()}
    if resume_fix_cmd is not None:

        def resume_fix(failure: flowcast.GateFailure) -> None:
            subprocess.run(["sh", "-c", resume_fix_cmd], cwd=workdir, check=False)

        gate["resume_fix"] = resume_fix
    return gate


async def _perform(op: str, data: dict[str, Any], workdir: Path) -> Any:
    """The raw Python outcome of one vector op (raising what flowcast raises)."""
    if op == "spawn_capture" or op == "spawn_cli":
        call = flowcast.spawn_capture if op == "spawn_capture" else flowcast.spawn_cli
        return await call(
            data["cmd"],
            data.get("args", []),
            cwd=workdir,
            timeout=data.get("timeout"),
            env=data.get("env"),
            stdin=data.get("stdin"),
            kill_grace=data.get("killGrace", KILL_GRACE),
        )
    if op == "run_gate":
        gate = _gate(data["gate"], data.get("resumeFixCmd"), workdir)
        return await flowcast.run_gate(
            gate, repo=workdir, dry_run=data.get("dryRun", False), kill_grace=KILL_GRACE
        )
    if op == "run_gates":
        gates = [_gate(g, data.get("resumeFixCmd"), workdir) for g in data["gates"]]
        return await flowcast.run_gates(
            gates,
            repo=workdir,
            dry_run=data.get("dryRun", False),
            parallel=data.get("parallel", False),
            kill_grace=KILL_GRACE,
        )
    if op == "parallel":

        def task(spec: dict[str, Any]) -> Any:
            return lambda: flowcast.spawn_cli(spec["cmd"], spec.get("args", []), cwd=workdir)

        return await flowcast.parallel(
            [task(t) for t in data["tasks"]],
            strict=data.get("strict", True),
            concurrency=data.get("concurrency"),
        )
    raise AssertionError(f"unknown op {op}")


def observe(vector: dict[str, Any], workdir: Path) -> dict[str, Any]:
    op, data = vector["op"], vector["input"]
    if op == "is_retryable":
        error = data["error"]
        native = VectorError(error) if isinstance(error, dict) else error
        result = flowcast.is_retryable(native)
        if isinstance(error, dict):  # the JSON form must give the same answer
            assert flowcast.is_retryable(error) is result
        return {"result": result}
    if op == "assert_safe_ident":
        try:
            flowcast.assert_safe_ident(data["name"], data.get("field", "name"))
        except flowcast.FlowcastError as error:
            return {"error": error.to_dict()}
        return {"ok": True}
    if op == "extract_json":
        return {"value": flowcast.extract_json(data["text"])}
    for path, content in data.get("files", {}).items():
        (workdir / path).parent.mkdir(parents=True, exist_ok=True)
        (workdir / path).write_text(content)
    try:
        outcome = asyncio.run(_perform(op, data, workdir))
    except flowcast.FlowcastError as error:
        return {"error": error.to_dict(), "retryable": flowcast.is_retryable(error)}
    if isinstance(outcome, flowcast.SpawnResult):
        return {
            "result": {
                "stdout": outcome.stdout,
                "exitCode": outcome.exit_code,
                "timedOut": outcome.timed_out,
                "spawnError": outcome.spawn_error,
                "truncated": outcome.truncated,
            }
        }
    if isinstance(outcome, flowcast.GateResult):
        return {"result": outcome.to_dict()}
    if isinstance(outcome, list) and outcome and isinstance(outcome[0], flowcast.GateResult):
        return {"result": [r.to_dict() for r in outcome]}
    return {"result": outcome}


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
