"""Shape checks of provider definitions.

A small definition is checked whole by its compiled validator (plain Python, no import of a
validation library: it keeps a CLI command's start-up short). A large one -- definitions can
hold millions of capabilities -- is checked capability by capability with the generated Pydantic
models, whose Rust core is several times faster per capability. Either way a failure is
explained by the JSON Schema of the contract, from the one capability that failed, never by
re-validating a whole large file with jsonschema.
"""

from __future__ import annotations

from typing import Any

from .schemas import compiled_accepts, compiled_validator, describe_problem, model_accepts

__all__ = ["definition_problem"]

_DEFINITION = "definition.schema.json"
_CAPABILITY = "definition.schema.json#/$defs/Capability"


# Above this many capabilities the per-capability Pydantic path is faster than the compiled one
# (and its one-time model build is amortized).
COMPILED_MAX_CAPABILITIES = 2000


def definition_problem(value: Any) -> str | None:
    """None when ``value`` is a valid provider definition, else ``"<pointer> <phrase>"``."""
    if not isinstance(value, dict) or not isinstance(value.get("capabilities"), list):
        return describe_problem(_DEFINITION, value) or "/ is invalid"
    capabilities = value["capabilities"]
    if len(capabilities) <= COMPILED_MAX_CAPABILITIES:
        if compiled_accepts(compiled_validator("definition"), value):
            return None
        return _explain(value, capabilities)
    from .._generated.models.definition import Capability, ProviderDefinition

    if not model_accepts(ProviderDefinition, {**value, "capabilities": []}):
        return _explain(value, ())
    validate = Capability.model_validate
    for index, capability in enumerate(capabilities):
        try:
            validate(capability)
        except ValueError:
            return _explain(value, [capability], start=index)
    return None


def _explain(value: dict[str, Any], capabilities: Any, start: int = 0) -> str:
    """The schema's account of the first problem: the header, then capability by capability."""
    problem = describe_problem(_DEFINITION, {**value, "capabilities": []})
    if problem is not None:
        return problem
    for index, capability in enumerate(capabilities, start):
        problem = describe_problem(_CAPABILITY, capability, f"/capabilities/{index}")
        if problem is not None:
            return problem
    # A fast validator said no where the schema says yes (e.g. a trailing newline that Python's
    # ``$`` tolerates): still refused, without a pointer.
    return "/ is invalid"
