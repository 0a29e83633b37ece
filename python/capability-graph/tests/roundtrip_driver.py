"""The reference conformance driver, with every successful SDK result taken through the SDK's
public type and back (``test_public_types.py`` runs the suite's ``sdk`` surface with it).

A ``call`` that returns goes through the public type of its operation's result (the generated
model the operation table names, which the SDK methods return), and ``reload`` through
``ReloadResult``. The observation reported is the JSON form the public type gives back, so every
vector's expectations are checked against it; a JSON text that differs by one byte from the
core's is reported as a failure of the step. Each checked result adds a line to the file named
by ``CG_ROUNDTRIP_LOG``, so the test knows how many went through.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from capability_graph import ReloadResult
from capability_graph._generated.operations import OPERATION_TABLE
from capability_graph._json import dumps

sys.path.insert(0, sys.argv[1])  # the folder of the reference driver
import python_reference_driver as reference

PUBLIC_TYPES: dict[str, Any] = {}
for operation in OPERATION_TABLE:
    module, _, name = operation.result_model.partition(".")
    generated = importlib.import_module(f"capability_graph._generated.models.{module}")
    PUBLIC_TYPES[operation.tool] = getattr(generated, name)
RELOAD = TypeAdapter(ReloadResult)


def through_public_type(kind: str, value: Any) -> dict[str, Any]:
    if kind == "reload":
        public = RELOAD.validate_python(value)
    else:
        public = PUBLIC_TYPES[kind].model_validate(value)
    back = public.to_json()
    if dumps(back) != dumps(value):
        return reference.raised(AssertionError(f"{kind}: the public type gave back {back!r}"))
    with Path(os.environ["CG_ROUNDTRIP_LOG"]).open("a", encoding="utf-8") as log:
        log.write(f"{kind}\n")
    return reference.returned(back)


class RoundTripDriver(reference.Driver):
    def __init__(self) -> None:
        super().__init__()
        self.tools: dict[str, str] = {}  # handle -> tool of a call started in the background

    async def run(self, surface: str, step: dict[str, Any]) -> dict[str, Any]:
        observation = await super().run(surface, step)
        if surface == "sdk" and observation.get("outcome") == "returned":
            if step.get("op") == "reload":
                return through_public_type("reload", observation["value"])
            if step.get("op") in ("call", "await") and isinstance(observation["value"], dict):
                tool = step.get("tool") or self.tools.pop(step["handle"])
                return through_public_type(tool, observation["value"])
        elif step.get("op") == "call" and "handle" in step:
            self.tools[step["handle"]] = step["tool"]
        return observation


reference.Driver = RoundTripDriver  # type: ignore[misc]
reference.main()
