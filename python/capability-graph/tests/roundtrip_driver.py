"""The reference conformance driver, with every successful SDK result taken through the SDK's
public type and back (``test_public_types.py`` runs the suite's ``sdk`` surface with it).

A ``call`` that returns goes through the public type of its operation's result (the generated
type the operation table names, which the SDK methods return: a model, validated and dumped, or
for resolve a view, every attribute read back into its JSON form), and ``reload`` through
``ReloadResult``. The observation reported is the JSON form the public type gives back, so every
vector's expectations are checked against it; a JSON text that differs by one byte from the
core's is reported as a failure of the step. Each checked result adds a line to the file named
by ``CG_ROUNDTRIP_LOG``, so the test knows how many went through.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

import capability_graph
from capability_graph import ReloadResult
from capability_graph._core.json import dumps
from capability_graph._generated.operations import OPERATION_TABLE
from capability_graph._testing import ContractView
from capability_graph_testing.common import read_whole

sys.path.insert(0, sys.argv[1])  # the folder of the reference driver
import python_reference_driver as reference

#: The public type of each operation's result, by tool name (and of reload), as the package
#: exports it under the name the operation table gives.
PUBLIC_TYPES: dict[str, Any] = {
    operation.tool: getattr(capability_graph, operation.result_model.partition(".")[2])
    for operation in OPERATION_TABLE
}
PUBLIC_TYPES["reload"] = ReloadResult


def through_public_type(kind: str, value: Any) -> dict[str, Any]:
    public_type = PUBLIC_TYPES[kind]
    if isinstance(public_type, type) and issubclass(public_type, BaseModel):
        back = public_type.model_validate(value).to_json()
    elif isinstance(public_type, type) and issubclass(public_type, ContractView):
        back = read_whole(public_type(value))
    else:  # a union of models (reload)
        adapter: TypeAdapter[Any] = TypeAdapter(public_type)
        back = adapter.dump_python(adapter.validate_python(value), mode="json", by_alias=True)
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
