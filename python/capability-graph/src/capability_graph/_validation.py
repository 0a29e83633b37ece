"""Shape checks of the contract's documents on their hot paths.

The generated Pydantic models decide quickly whether a value is valid; when one is not, the
JSON Schema of the contract names the problem (see ``_schemas``). Provider definitions can hold
millions of capabilities, so they are checked capability by capability: a failure is explained
from the one capability that failed, not by re-validating the whole file with jsonschema.
"""

from __future__ import annotations

from typing import Any

from ._schemas import describe_problem

__all__ = ["definition_problem"]

_DEFINITION = "definition.schema.json"
_CAPABILITY = "definition.schema.json#/$defs/Capability"


def definition_problem(value: Any) -> str | None:
    """None when ``value`` is a valid provider definition, else ``"<pointer> <phrase>"``."""
    from ._generated.models.definition import Capability, ProviderDefinition

    if not isinstance(value, dict) or not isinstance(value.get("capabilities"), list):
        return describe_problem(_DEFINITION, value) or "/ is invalid"
    header = {**value, "capabilities": []}
    if not _accepts(ProviderDefinition, header):
        return describe_problem(_DEFINITION, header) or "/ is invalid"
    validate = Capability.model_validate
    for index, capability in enumerate(value["capabilities"]):
        try:
            validate(capability)
        except ValueError:
            problem = describe_problem(_CAPABILITY, capability, f"/capabilities/{index}")
            return problem or f"/capabilities/{index} is invalid"
    return None


def _accepts(model: Any, value: Any) -> bool:
    try:
        model.model_validate(value)
    except ValueError:
        return False
    return True
