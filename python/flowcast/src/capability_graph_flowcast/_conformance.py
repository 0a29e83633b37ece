"""The Python side of the flowcast conformance vectors (conformance/vectors/flowcast/*.json,
schema spec/flowcast/schemas/vectors.schema.json): perform a vector's ``op`` on its ``input``
and report the language-neutral observation. ``observe(vector, workdir)`` answers a flowcast
vector; ``python/flowcast/tests/test_vectors.py`` compares it with ``expect`` (the vectors test a
library API, not the four surfaces, so the conformance harness leaves them to flowcast's tests)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Final

from ._errors import FlowcastError
from ._gates import GateFailure, GateResult, run_gate, run_gates
from ._parallel import parallel
from ._paths import assert_safe_ident
from ._retry import is_retryable
from ._schema import extract_json
from ._spawn import SpawnResult, spawn_capture, spawn_cli
from ._sync import run_blocking

__all__ = ["observe"]

#: TERM -> KILL grace for vectors that do not set ``killGrace``.
KILL_GRACE: Final = 0.2


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

        def resume_fix(failure: GateFailure) -> None:
            subprocess.run(["sh", "-c", resume_fix_cmd], cwd=workdir, check=False)

        gate["resume_fix"] = resume_fix
    return gate


async def _perform(op: str, data: dict[str, Any], workdir: Path) -> Any:
    """The raw Python outcome of one vector op (raising what flowcast raises)."""
    if op == "spawn_capture" or op == "spawn_cli":
        call = spawn_capture if op == "spawn_capture" else spawn_cli
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
        return await run_gate(
            gate, repo=workdir, dry_run=data.get("dryRun", False), kill_grace=KILL_GRACE
        )
    if op == "run_gates":
        gates = [_gate(g, data.get("resumeFixCmd"), workdir) for g in data["gates"]]
        return await run_gates(
            gates,
            repo=workdir,
            dry_run=data.get("dryRun", False),
            parallel=data.get("parallel", False),
            kill_grace=KILL_GRACE,
        )
    if op == "parallel":

        def task(spec: dict[str, Any]) -> Any:
            return lambda: spawn_cli(spec["cmd"], spec.get("args", []), cwd=workdir)

        return await parallel(
            [task(t) for t in data["tasks"]],
            strict=data.get("strict", True),
            concurrency=data.get("concurrency"),
        )
    raise AssertionError(f"unknown op {op}")


def observe(vector: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """Perform ``vector`` inside ``workdir`` (an empty folder: the gates' repository and the
    cwd of every process) and return its observation: ``{"result": ...}``, ``{"ok": true}``,
    ``{"value": ...}`` or ``{"error": <error JSON>, "retryable": bool}``."""
    op, data = vector["op"], vector["input"]
    if op == "is_retryable":
        error = data["error"]
        native = VectorError(error) if isinstance(error, dict) else error
        result = is_retryable(native)
        if isinstance(error, dict):  # the JSON form must give the same answer
            assert is_retryable(error) is result
        return {"result": result}
    if op == "assert_safe_ident":
        try:
            assert_safe_ident(data["name"], data.get("field", "name"))
        except FlowcastError as error:
            return {"error": error.to_dict()}
        return {"ok": True}
    if op == "extract_json":
        return {"value": extract_json(data["text"])}
    for path, content in data.get("files", {}).items():
        (workdir / path).parent.mkdir(parents=True, exist_ok=True)
        (workdir / path).write_text(content)
    try:
        outcome = run_blocking(_perform, op, data, workdir)
    except FlowcastError as error:
        return {"error": error.to_dict(), "retryable": is_retryable(error)}
    if isinstance(outcome, SpawnResult):
        return {
            "result": {
                "stdout": outcome.stdout,
                "exitCode": outcome.exit_code,
                "timedOut": outcome.timed_out,
                "spawnError": outcome.spawn_error,
                "truncated": outcome.truncated,
            }
        }
    if isinstance(outcome, GateResult):
        return {"result": outcome.to_dict()}
    if isinstance(outcome, list) and outcome and isinstance(outcome[0], GateResult):
        return {"result": [r.to_dict() for r in outcome]}
    return {"result": outcome}
