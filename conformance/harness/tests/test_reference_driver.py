"""The Python reference's driver (conformance/implementations/python_reference_driver.py) keeps
the handle rules of the protocol (spec/conformance/README.md, "Scenarios"): a handle names its
call until its ``await`` or the next ``open``; ``cancel`` of a call that has finished answers
``returned null`` and changes nothing; an ``await`` or ``cancel`` of any other handle is a
``protocolError`` echoing ``seq``. The TypeScript driver's test (typescript/test/driver.test.ts)
holds it to the same conversation, and the skeleton's (test_driver_skeleton.py) too."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from capability_graph_conformance.schemas import SchemaSet

REPO = Path(__file__).resolve().parents[3]
DRIVER = REPO / "conformance" / "implementations" / "python_reference_driver.py"
DRIVER_MESSAGE = "conformance/driver-protocol.schema.json#/$defs/DriverMessage"
DESCRIBE = {"op": "call", "tool": "describe_graph", "arguments": {}}


def _run(seq: int, step: dict[str, Any]) -> dict[str, Any]:
    return {"type": "run", "seq": seq, "surface": "sdk", "step": step}


def _unknown(seq: int, handle: str) -> dict[str, Any]:
    message = f"no started call has the handle {handle!r}"
    return {"type": "protocolError", "seq": seq, "message": message}


def test_a_handle_names_its_call_until_its_await_or_the_next_open(
    tmp_path: Path, schemas: SchemaSet
) -> None:
    shutil.copytree(REPO / "conformance" / "fixtures" / "minimal", tmp_path / "graph")
    config = str(tmp_path / "graph" / "capability-graph.json")
    lines = [
        {"type": "start", "protocol": "1.1", "suite": "1.4.0"},
        _run(1, {"op": "open", "config": config}),
        _run(2, {**DESCRIBE, "handle": "done"}),
        _run(3, DESCRIBE),  # by now the started call is over
        _run(4, {"op": "cancel", "handle": "done"}),
        _run(5, {"op": "await", "handle": "done"}),
        _run(6, {"op": "await", "handle": "done"}),
        _run(7, {"op": "cancel", "handle": "done"}),
        _run(8, {"op": "await", "handle": "nobody"}),
        _run(9, {**DESCRIBE, "handle": "old"}),
        _run(10, {"op": "open", "config": config}),
        _run(11, {"op": "cancel", "handle": "old"}),
        _run(12, {"op": "close"}),
        {"type": "stop"},
    ]
    done = subprocess.run(
        [sys.executable, str(DRIVER)],
        input="".join(json.dumps(line) + "\n" for line in lines).encode("utf-8"),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    for answer in answers:
        assert schemas.errors(DRIVER_MESSAGE, answer) == [], answer
    described = answers[3]["observation"]
    assert described["outcome"] == "returned"
    assert described["value"]["revision"].startswith("r")
    null = {"outcome": "returned", "value": None}
    assert answers[2:] == [
        {"type": "observation", "seq": 2, "observation": {"outcome": "started"}},
        {"type": "observation", "seq": 3, "observation": described},
        # cancelling a call that has finished changes nothing; its await answers what it returned
        {"type": "observation", "seq": 4, "observation": null},
        {"type": "observation", "seq": 5, "observation": described},
        _unknown(6, "done"),  # already awaited
        _unknown(7, "done"),
        _unknown(8, "nobody"),  # never started
        {"type": "observation", "seq": 9, "observation": {"outcome": "started"}},
        {"type": "observation", "seq": 10, "observation": null},
        _unknown(11, "old"),  # started before the last open
        {"type": "observation", "seq": 12, "observation": null},
        {"type": "stopped"},
    ]
