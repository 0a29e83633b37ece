#!/usr/bin/env python3
"""A fake implementation for the generative mode's tests: a standalone driver that relays the
driver protocol to the reference's driver (a separate process) and changes its answers for one
input class. It uses no name of the reference, only the protocol.

    python explore_proxy.py MUTATION

Mutations:

list-tags-code   a list_capabilities call whose arguments have a "tags" member raises a
                 GraphError CG_FAKE_CODE instead of whatever the reference answers
crash-on-read    the driver process dies when asked to call read_document
none             every answer relayed unchanged
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

DRIVER = Path(__file__).resolve().parents[3] / "implementations" / "python_reference_driver.py"
FAKE_ERROR = {
    "code": "CG_FAKE_CODE",
    "phase": "query",
    "message": "Fake",
    "nextAction": "fix_input",
}


def _mutated(mutation: str, message: dict[str, Any]) -> dict[str, Any] | None:
    """The answer to ``message`` when the mutation decides it, else None (relay)."""
    step = message.get("step", {}) if message.get("type") == "run" else {}
    if step.get("op") != "call":
        return None
    tool, arguments = step.get("tool"), step.get("arguments")
    if mutation == "crash-on-read" and tool == "read_document":
        os._exit(3)
    tags = isinstance(arguments, dict) and "tags" in arguments
    if mutation == "list-tags-code" and tool == "list_capabilities" and tags:
        if message["surface"] == "tool":
            observation = {"outcome": "returned", "value": {"ok": False, "error": FAKE_ERROR}}
        else:
            observation = {
                "outcome": "raised",
                "graphError": True,
                "error": FAKE_ERROR,
                "display": "CG_FAKE_CODE (query): Fake",
            }
        return {"type": "observation", "seq": message["seq"], "observation": observation}
    return None


def main() -> None:
    mutation = sys.argv[1]
    reference = subprocess.Popen(
        [sys.executable, str(DRIVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="surrogatepass",
    )
    assert reference.stdin is not None
    assert reference.stdout is not None
    for line in sys.stdin:
        message = json.loads(line)
        answer = _mutated(mutation, message)
        if answer is not None:
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            continue
        reference.stdin.write(line)
        reference.stdin.flush()
        sys.stdout.write(reference.stdout.readline())
        sys.stdout.flush()
        if message.get("type") == "stop":
            break
    reference.stdin.close()
    reference.wait()


if __name__ == "__main__":
    main()
