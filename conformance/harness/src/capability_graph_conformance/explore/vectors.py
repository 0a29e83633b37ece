"""A find as a static vector: the minimal input, and the reference's answer as the expectation.

The vector names the requirements of its surface (CG-SURF-1 for a request on the SDK, Tool
Adapter and MCP; CG-CLI-2 or CG-CLI-3 for a CLI argument vector; CG-MCP-2 or CG-MCP-4 for an MCP
frame): a human narrows them to the rule the find is about, and moves the file from
``DIR/<area>/`` into ``conformance/vectors/capability-graph/<area>/``. An input a vector cannot
express (a frame that is not a ``tools/call``, an argument that is not UTF-8) is reported, not
written.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .._json import canonical
from .model import GenCase, Observation

__all__ = ["vector_for"]

_AREA = {
    "call": "query",
    "argv": "cli",
    "config": "config",
    "budget": "budget",
    "lexical": "model",
    "mcp": "outcome",
}


def _expectation(observation: Observation) -> dict[str, Any] | None:
    """``expect`` from the reference's SDK/Tool answer."""
    value = observation.value
    if not isinstance(value, dict):
        return None
    answer = value.get("open", value)
    if "raised" in answer:
        return {"error": _error(answer["raised"])}
    returned = answer.get("returned")
    if observation.surface == "tool" and isinstance(returned, dict):
        if returned.get("ok") is False:
            return {"error": _error(returned.get("error"))}
        returned = returned.get("result")
    return {"result": {"$exact": returned}} if "returned" in answer else None


def _error(error: Any) -> dict[str, Any]:
    error = error if isinstance(error, dict) else {}
    return {k: error[k] for k in ("code", "phase", "nextAction", "message") if k in error}


def _cli_expectation(value: dict[str, Any]) -> dict[str, Any]:
    code = value.get("exit")
    if code == 1:
        try:
            envelope = json.loads(value["stderr"].splitlines()[0])
            return {"error": _error(envelope["error"])}
        except (IndexError, KeyError, TypeError, ValueError):
            pass
    if code == 0:
        try:
            return {"result": {"$exact": json.loads(value["stdout"])}}
        except ValueError:
            return {"exit": {"code": 0}}
    if code == 2:
        return {"exit": {"code": 2, "stdoutEmpty": True, "stderrNonEmpty": True}}
    return {"exit": {"code": code}}


def vector_for(
    case: GenCase, surface: str, reference: Observation, signature: str, seed: int
) -> tuple[str, dict[str, Any]] | str:
    """(area, vector) for ``case`` with the reference's answer, or why it cannot be one."""
    digest = hashlib.sha256(canonical(case.to_json()).encode("utf-8", "surrogatepass")).hexdigest()[
        :10
    ]
    area = _AREA.get(case.campaign, "query")
    vector: dict[str, Any] = {
        "$schema": "../../../../spec/conformance/vector.schema.json",
        "id": f"cg.{area}.generated-{case.campaign}-{digest}",
        "title": ("Generated: " + signature)[:200],
        "description": (
            f"Found by cg-conformance explore (seed {seed}, campaign {case.campaign}, case "
            f"{case.index}), shrunk; the expectation is the reference's answer. Narrow the "
            "requirements to the rule this pins."
        ),
        "requirements": ["CG-SURF-1"],
        "level": "required",
        "fixture": case.fixture,
    }
    if reference.errored:
        return "the reference did not answer"
    if "argv" in case.action:
        argv = case.action["argv"]
        if any(_not_utf8(a) for a in argv):
            return "an argument is not UTF-8, which a vector cannot carry"
        vector["requirements"] = ["CG-CLI-3"] if reference.value.get("exit") == 2 else ["CG-CLI-2"]
        vector.update(
            {
                "tags": ["cli"],
                "argv": argv,
                "expect": _cli_expectation(reference.value),
                "surfaces": ["cli"],
            }
        )
        return area, _with_config(vector, case)
    if "frame" in case.action:
        return _frame_vector(vector, case, reference, area)
    call = case.action["call"]
    if _not_utf8(canonical(call)):
        return "the arguments hold a lone surrogate, which a vector's JSON file cannot carry"
    if case.config_text is not None or case.files:
        return area, _scenario(vector, case, reference)
    if surface == "mcp":
        return _frame_vector(vector, case, reference, area)
    expect = _cli_expectation(reference.value) if surface == "cli" else _expectation(reference)
    if expect is None:
        return "the reference's answer is not a result or an error"
    if "open" in (reference.value or {}):
        vector.update({"open": True, "expect": expect, "surfaces": ["sdk", "mcp", "cli"]})
    else:
        vector.update({"call": call, "expect": expect, "surfaces": ["sdk", "tool", "mcp", "cli"]})
    return area, _with_config(vector, case)


def _with_config(vector: dict[str, Any], case: GenCase) -> dict[str, Any]:
    if case.config is not None:
        vector["config"] = case.config
    return vector


def _frame_vector(
    vector: dict[str, Any], case: GenCase, reference: Observation, area: str
) -> tuple[str, dict[str, Any]] | str:
    try:
        frame = (
            json.loads(case.action["frame"])
            if "frame" in case.action
            else {
                "method": "tools/call",
                "params": {
                    "name": case.action["call"]["tool"],
                    "arguments": case.action["call"]["arguments"],
                },
            }
        )
    except ValueError:
        return "the frame is not JSON, which a vector (a tools/call) cannot carry"
    params = frame.get("params") if isinstance(frame, dict) else None
    if (
        not isinstance(params, dict)
        or frame.get("method") != "tools/call"
        or not isinstance(params.get("name"), str)
        or not isinstance(params.get("arguments", {}), dict)
    ):
        return "the frame is not a tools/call with a tool name and an arguments object"
    value = reference.value or {}
    call = {"tool": params["name"], "arguments": params.get("arguments", {})}
    vector["requirements"] = ["CG-MCP-2"]
    if "protocolError" in value:
        vector["requirements"] = ["CG-MCP-4"]
        protocol_error = {"protocolError": {"code": value["protocolError"]}}
        vector.update(
            {
                "call": call,
                "expect": {"error": {"code": "CG_INPUT_INVALID"}},
                "surfaceExpect": {"mcp": protocol_error},
                "surfaces": ["mcp"],
            }
        )
        return area, _with_config(vector, case)
    result = value.get("result")
    if not isinstance(result, dict):
        return "the reference's MCP answer is neither a result nor a protocol error"
    if result.get("isError"):
        try:
            expect: dict[str, Any] = {"error": _error(json.loads(result["content"][0]["text"]))}
        except (KeyError, IndexError, TypeError, ValueError):
            return "the reference's isError result has no error object"
    else:
        expect = {"result": {"$exact": result.get("structuredContent")}}
    vector.update({"call": call, "expect": expect, "surfaces": ["mcp"]})
    return area, _with_config(vector, case)


def _scenario(vector: dict[str, Any], case: GenCase, reference: Observation) -> dict[str, Any]:
    """A generated configuration text or definition file: written by steps, then open, call."""
    steps: list[dict[str, Any]] = [
        {"op": "writeFile", "path": name, "text": text} for name, text in case.files.items()
    ]
    if case.config_text is not None:
        steps.append({"op": "writeFile", "path": "capability-graph.json", "text": case.config_text})
    value = reference.value or {}
    expect = _expectation(reference) or {}
    if "open" in value:
        steps.append({"op": "open", "expect": expect})
    else:
        steps.append({"op": "open"})
        call = case.action["call"]
        steps.append(
            {"op": "call", "tool": call["tool"], "arguments": call["arguments"], "expect": expect}
        )
    vector.update({"steps": steps, "surfaces": ["sdk", "tool"]})
    return vector


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
