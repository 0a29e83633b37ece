"""The two oracles of the generative mode.

*Differential*: what one surface of the implementation under test answered is compared with
what the same surface of the other implementation answered, under the equality of CG-SURF-1
(the same R, or the same E byte for byte as a JSON value) and of each surface's projection (CLI:
exit status, stdout bytes, stderr envelope; MCP: the result's content, isError and
structuredContent, or the JSON-RPC error code). The contract lets a few things vary; each is an
entry of :data:`ALLOWED_VARIATIONS` citing its requirement, applied explicitly and counted.

*Property*: what any one implementation answers must hold on its own: every answer validates
against its schema, no traceback, no exit 70, no exception other than GraphError, every MCP
request answered and the session alive after any frame, the surfaces agree (CG-SURF-1), and a
resolve result's edges stay inside the closure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._json import canonical, preview
from ..schemas import SchemaSet
from .faults import mcp_request
from .model import GenCase, Observation

__all__ = [
    "ALLOWED_VARIATIONS",
    "FaultCounter",
    "Variation",
    "compare",
    "outcome_class",
    "properties",
    "subject",
    "surfaces_agree",
]


#: How many faults the value that an error code judges has in a case (see :mod:`.faults`).
FaultCounter = Callable[[GenCase, str], int]


@dataclass(frozen=True)
class Variation:
    """A way two conforming answers may differ: where, which requirement allows it, and the
    function that erases it from both answers (it returns None when it does not apply)."""

    id: str
    requirement: str
    surface: str
    allows: str
    erase: Callable[[GenCase, Any, Any, FaultCounter | None], tuple[Any, Any] | None]


def _usage_text(
    case: GenCase, a: Any, b: Any, count_faults: FaultCounter | None
) -> tuple[Any, Any] | None:
    if a.get("exit") == 2 and b.get("exit") == 2 and a.get("stderr") != b.get("stderr"):
        erased = "<usage text>"
        return {**a, "stderr": erased if a["stderr"].strip() else ""}, {
            **b,
            "stderr": erased if b["stderr"].strip() else "",
        }
    return None


def _either_answer(
    a: Any, b: Any, answers: tuple[dict[str, Any], ...], erased: str
) -> tuple[Any, Any] | None:
    """Both MCP answers erased to ``erased`` when each is one of ``answers`` (and they differ);
    whether the session lived on after the frame is still compared."""
    core_a = {k: v for k, v in a.items() if k != "aliveAfter"}
    core_b = {k: v for k, v in b.items() if k != "aliveAfter"}
    if core_a == core_b or core_a not in answers or core_b not in answers:
        return None
    return (
        {erased: True, "aliveAfter": a.get("aliveAfter")},
        {erased: True, "aliveAfter": b.get("aliveAfter")},
    )


def _unparsable_line(
    case: GenCase, a: Any, b: Any, count_faults: FaultCounter | None
) -> tuple[Any, Any] | None:
    frame = case.action.get("frame")
    if frame is None:
        return None
    try:
        json.loads(frame)
    except ValueError:
        answers = ({"protocolError": -32700}, {"noResponse": True})
        return _either_answer(a, b, answers, "answered -32700 or dropped")
    return None


def _other_exception_type(
    case: GenCase, a: Any, b: Any, count_faults: FaultCounter | None
) -> tuple[Any, Any] | None:
    if "raisedOther" in a and "raisedOther" in b and a != b:
        return {"raisedOther": "<type>"}, {"raisedOther": "<type>"}
    return None


def _not_a_request(
    case: GenCase, a: Any, b: Any, count_faults: FaultCounter | None
) -> tuple[Any, Any] | None:
    frame = case.action.get("frame")
    if frame is None or mcp_request(frame):
        return None
    answers = ({"protocolError": -32600}, {"protocolError": -32700}, {"noResponse": True})
    return _either_answer(a, b, answers, "answered with a JSON-RPC error or not")


def _explain_text(
    case: GenCase, a: Any, b: Any, count_faults: FaultCounter | None
) -> tuple[Any, Any] | None:
    argv = case.action.get("argv") or []
    if not argv or argv[0] != "explain" or "--json" in argv:
        return None
    if a.get("exit") == 0 and b.get("exit") == 0:
        return {**a, "stdout": "<explain text>"}, {**b, "stdout": "<explain text>"}
    return None


def _several_faults(
    case: GenCase, a: Any, b: Any, count_faults: FaultCounter | None
) -> tuple[Any, Any] | None:
    left, right = _error_object(a), _error_object(b)
    if left is None or right is None:
        return None
    others = ("code", "phase", "nextAction")
    if any(left.get(k) != right.get(k) for k in others) or left.get("message") == right.get(
        "message"
    ):
        return None
    if not all(str(e.get("message", "")).startswith("/") for e in (left, right)):
        return None
    if count_faults is None or count_faults(case, str(left.get("code"))) < 2:
        return None
    erased = "<the message of one of several faults>"
    return _with_message(a, erased), _with_message(b, erased)


#: A match deadline at most this long (ms) may lose its race with an executor's answer.
RACE_DEADLINE_MS = 50


def _deadline_ms(case: GenCase) -> int | None:
    """The match deadline a case asks for: ``--timeout-ms`` of an argv, or the ``timeoutMs`` of
    a call's arguments; None when it names none or cannot be read."""
    argv = case.action.get("argv")
    if isinstance(argv, list):
        texts = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "--timeout-ms"]
        texts += [word.partition("=")[2] for word in argv if word.startswith("--timeout-ms=")]
        numbers = [int(text) for text in texts if text.isascii() and text.isdigit()]
        return numbers[0] if len(numbers) == 1 else None
    call = case.action.get("call")
    arguments = call.get("arguments") if isinstance(call, dict) else None
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return None
    deadline = arguments.get("timeoutMs") if isinstance(arguments, dict) else None
    return deadline if isinstance(deadline, int) and not isinstance(deadline, bool) else None


def _deadline_race(
    case: GenCase, a: Any, b: Any, count_faults: FaultCounter | None
) -> tuple[Any, Any] | None:
    deadline = _deadline_ms(case)
    if deadline is None or deadline > RACE_DEADLINE_MS:
        return None
    codes = [(_error_object(side) or {}).get("code") for side in (a, b)]
    if codes.count("CG_MODEL_TIMEOUT") != 1:
        return None
    other = b if codes[0] == "CG_MODEL_TIMEOUT" else a
    if _error_object(other) is not None:
        return None  # an error other than the timeout is compared
    race = {"race": "CG_MODEL_TIMEOUT or the executor's answer"}
    return race, race


def _error_object(value: Any) -> dict[str, Any] | None:
    """The error object an answer of any surface carries, or None (an MCP server that did not
    start answers as the CLI does: ``exited``)."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("exited"), dict):
        return _error_object(value["exited"])
    answer = value.get("open", value)
    raised = answer.get("raised") if isinstance(answer, dict) else None
    if isinstance(raised, dict):
        return raised
    returned = answer.get("returned") if isinstance(answer, dict) else None
    error = returned.get("error") if isinstance(returned, dict) else None
    if isinstance(error, dict):
        return error
    result = value.get("result")
    if isinstance(result, dict) and result.get("isError"):
        try:
            found = json.loads(result["content"][0]["text"])
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        return found if isinstance(found, dict) else None
    if value.get("exit") == 1:
        try:
            found = json.loads(value["stderr"].splitlines()[0])["error"]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        return found if isinstance(found, dict) else None
    return None


def _with_message(value: dict[str, Any], message: str) -> dict[str, Any]:
    if isinstance(value.get("exited"), dict):
        return {**value, "exited": _with_message(value["exited"], message)}
    if "open" in value:
        return {**value, "open": _with_message(value["open"], message)}
    if isinstance(value.get("raised"), dict):
        return {**value, "raised": {**value["raised"], "message": message}}
    returned = value.get("returned")
    if isinstance(returned, dict) and isinstance(returned.get("error"), dict):
        error = {**returned["error"], "message": message}
        return {**value, "returned": {**returned, "error": error}}
    if isinstance(value.get("result"), dict):
        error = json.loads(value["result"]["content"][0]["text"])
        text = json.dumps({**error, "message": message})
        content = [{**value["result"]["content"][0], "text": text}]
        return {**value, "result": {**value["result"], "content": content}}
    lines = value["stderr"].splitlines()
    envelope = json.loads(lines[0])
    envelope["error"]["message"] = message
    return {**value, "stderr": "\n".join([json.dumps(envelope), *lines[1:]])}


#: Everything two conforming implementations may answer differently, one entry per rule. The
#: SDK's display text (CG-SDK-3) and a JSON-RPC error's message (CG-MCP-4 fixes only the code)
#: are never part of an observation's compared value; they are counted here when they differ.
ALLOWED_VARIATIONS: tuple[Variation, ...] = (
    Variation(
        "cli-usage-text",
        "CG-CLI-3",
        "cli",
        "a usage error (exit 2) has usage text on stderr whose wording is the "
        "implementation's; exit 2, stdout empty and stderr non-empty are compared",
        _usage_text,
    ),
    Variation(
        "mcp-unparsable-line",
        "CG-MCP-4",
        "mcp",
        "a stdin line that is not JSON is answered -32700 or dropped; the session must "
        "live on either way",
        _unparsable_line,
    ),
    Variation(
        "mcp-not-a-request",
        "CG-MCP-6",
        "mcp",
        "a message that is not a JSON-RPC 2.0 request (no method, another jsonrpc, an id "
        "that is null or a fraction) is answered with a JSON-RPC error or left unanswered; "
        "the session must live on either way",
        _not_a_request,
    ),
    Variation(
        "explain-text",
        "CG-CLI-13",
        "cli",
        "the text form of explain (without --json) is the implementation's layout; its exit "
        "status and an empty stderr are compared",
        _explain_text,
    ),
    Variation(
        "several-faults",
        "CG-MSG-8",
        "*",
        "an input with several faults may be reported with the message of any one of them; "
        "code, phase and nextAction are compared, and each message must be a pointer message",
        _several_faults,
    ),
    Variation(
        "deadline-race",
        "CG-MODEL-3",
        "*",
        f"a match whose deadline is at most {RACE_DEADLINE_MS} ms may end CG_MODEL_TIMEOUT in one "
        "implementation and with the executor's answer in the other: which comes first is a "
        "race; any other error is compared",
        _deadline_race,
    ),
    Variation(
        "sdk-other-exception-type",
        "CG-SDK-1",
        "sdk",
        "the name of an exception that is not GraphError is the language's (both are "
        "defects, reported by the property oracle)",
        _other_exception_type,
    ),
    Variation(
        "sdk-display-text",
        "CG-SDK-3",
        "sdk",
        "the display text of a GraphError is SDK-local",
        lambda _c, _a, _b, _f: None,
    ),
    Variation(
        "mcp-protocol-error-message",
        "CG-MCP-4",
        "mcp",
        "a JSON-RPC error's message text is the MCP layer's; its code is compared",
        lambda _c, _a, _b, _f: None,
    ),
)


def compare(
    case: GenCase, a: Observation, b: Observation, count_faults: FaultCounter | None = None
) -> tuple[str | None, list[str]]:
    """(None or a signature of the difference, the ids of the allowed variations applied).

    ``count_faults`` counts an input's faults for the several-faults variation (CG-MSG-8);
    without it, every message is compared."""
    applied: list[str] = []
    for key, name in (("display", "sdk-display-text"), ("message", "mcp-protocol-error-message")):
        if key in a.extra and key in b.extra and a.extra[key] != b.extra[key]:
            applied.append(name)
    if a.errored or b.errored:
        return None, applied  # not a difference: the property oracle reports errored answers
    left, right = a.value, b.value
    if canonical(left) == canonical(right):
        return None, applied
    for variation in ALLOWED_VARIATIONS:
        if variation.surface not in ("*", a.surface) and not (
            variation.surface == "sdk" and a.surface == "tool"
        ):
            continue
        if not isinstance(left, dict) or not isinstance(right, dict):
            break
        erased = variation.erase(case, left, right, count_faults)
        if erased is not None:
            applied.append(variation.id)
            left, right = erased
            if canonical(left) == canonical(right):
                return None, applied
    return signature(case, a.surface, left, right), applied


def subject(case: GenCase) -> str:
    """What a case asks for: its tool, its CLI command, or its MCP frame's method (and tool)."""
    if "call" in case.action:
        return str(case.action["call"].get("tool"))
    if "argv" in case.action:
        argv = case.action["argv"]
        return str(argv[0]) if argv else "(no command)"
    try:
        frame = json.loads(case.action["frame"])
    except ValueError:
        return "frame (not JSON)"
    if not isinstance(frame, dict) or not isinstance(frame.get("method"), str):
        return "frame (no method)"
    params = frame.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return f"{frame['method']} {name}" if isinstance(name, str) else str(frame["method"])


def outcome_class(surface: str, value: Any) -> str:
    """A short name of what an answer was: ``R``, ``E:CODE``, ``exit 2``, ``-32602``..."""
    if not isinstance(value, dict):
        return "?"
    if surface in ("sdk", "tool"):
        if "open" in value:
            return "open " + outcome_class(surface, value["open"])
        if "raised" in value:
            return "raised E:" + str((value["raised"] or {}).get("code"))
        if "raisedOther" in value:
            return "raised other"
        returned = value.get("returned")
        if surface == "tool" and isinstance(returned, dict) and returned.get("ok") is False:
            return "E:" + str((returned.get("error") or {}).get("code"))
        return "R"
    if surface == "mcp":
        if "result" in value:
            result = value["result"] or {}
            if result.get("isError"):
                return "isError E:" + str(_mcp_error_code(result))
            return "R"
        return ",".join(
            f"{k}={v}" if k != "noResponse" else "no response"
            for k, v in value.items()
            if k != "aliveAfter" and v is not None
        )
    exit_code = value.get("exit")
    if exit_code == 1:
        return f"exit 1 E:{_cli_error_code(value.get('stderr', ''))}"
    return f"exit {exit_code}"


def _mcp_error_code(result: dict[str, Any]) -> Any:
    try:
        return json.loads(result["content"][0]["text"]).get("code")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return "?"


def _cli_error_code(stderr: str) -> Any:
    try:
        return json.loads(stderr.strip().splitlines()[0])["error"]["code"]
    except (IndexError, KeyError, TypeError, ValueError):
        return "?"


def _first_difference(left: Any, right: Any, path: str = "") -> str:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            if key not in left or key not in right:
                return f"{path}/{key} ({'missing' if key not in left else 'extra'})"
            if canonical(left[key]) != canonical(right[key]):
                return _first_difference(left[key], right[key], f"{path}/{key}")
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            return f"{path} (length {len(left)} vs {len(right)})"
        for item_l, item_r in zip(left, right, strict=True):
            if canonical(item_l) != canonical(item_r):
                return _first_difference(item_l, item_r, f"{path}/*")
    if isinstance(left, str) and isinstance(right, str) and path.endswith(("/text", "/stderr")):
        try:  # a JSON text inside a text: compare what it says
            return _first_difference(json.loads(left), json.loads(right.splitlines()[0]), path)
        except (ValueError, IndexError):
            pass
    return path or "/"


def signature(case: GenCase, surface: str, left: Any, right: Any) -> str:
    """The group a difference falls in: campaign, surface, tool or command, both outcome
    classes and, when they are the same class, where the answers first differ."""
    head = f"{case.campaign}/{surface} {subject(case)}"
    class_l, class_r = outcome_class(surface, left), outcome_class(surface, right)
    if class_l != class_r:
        return f"{head}: {class_l} vs {class_r}"
    return f"{head}: {class_l}, differs at {_first_difference(left, right)}"


# -- the property oracle ---------------------------------------------------------------------------

_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|\n\s+at [^\n]*:\d+:\d+\)?")


def properties(
    case: GenCase, observation: Observation, schemas: SchemaSet, cli_tools: dict[str, str]
) -> list[str]:
    """The properties ``observation`` breaks, each a short signature-like text."""
    if observation.errored:
        return [f"errored: {preview(observation.errored, 160)}"]
    value = observation.value
    surface = observation.surface
    problems: list[str] = []
    text = json.dumps(value, ensure_ascii=False)
    if _TRACEBACK.search(text):
        problems.append("a traceback or stack trace reached the caller")
    if not isinstance(value, dict):
        return [*problems, "no answer"]
    tool = case.action.get("call", {}).get("tool")
    if surface in ("sdk", "tool"):
        if "raisedOther" in value:
            problems.append(f"raised {value['raisedOther']}, not GraphError")
        answer = value.get("open", value)
        if "raised" in answer:
            problems += _schema(schemas, "error.schema.json", answer["raised"], "error object")
        elif surface == "tool" and "returned" in value:
            problems += _schema(
                schemas, "tool-outcome.schema.json", value["returned"], "tool outcome"
            )
            outcome = value["returned"]
            if isinstance(outcome, dict) and outcome.get("ok") is True and tool:
                problems += _result(schemas, tool, outcome.get("result"))
        elif "returned" in value and tool:
            problems += _result(schemas, tool, value["returned"])
    elif surface == "mcp":
        if value.get("noResponse") and ("call" in case.action or mcp_request(case.action["frame"])):
            problems.append("an MCP request got no answer")
        if "stdoutNotJson" in value:
            problems.append("the MCP server wrote a line that is not JSON on stdout")
        if value.get("aliveAfter") is False:
            problems.append("the MCP session ended after a frame")
        if "result" in value:
            problems += _schema(
                schemas, "mcp-tool-result.schema.json", value["result"], "MCP tool result"
            )
    else:
        problems += _cli_properties(case, value, schemas, cli_tools)
    return problems


def _cli_properties(
    case: GenCase, value: dict[str, Any], schemas: SchemaSet, cli_tools: dict[str, str]
) -> list[str]:
    problems = []
    code, stdout, stderr = value.get("exit"), value.get("stdout", ""), value.get("stderr", "")
    argv = case.action.get("argv") or ["call", case.action.get("call", {}).get("tool")]
    tool = argv[1] if argv[0] == "call" and len(argv) > 1 else cli_tools.get(str(argv[0]))
    if code == 70:
        problems.append("exit 70 (a defect of the implementation)")
    if code is not None and code < 0:
        problems.append(f"killed by signal {-code}")
    if code == 2 and (stdout or not stderr.strip()):
        problems.append("a usage error must leave stdout empty and write usage text on stderr")
    if argv[0] in cli_tools or argv[0] == "call":
        lines = stderr.splitlines()
        if code == 1:
            if stdout or len(lines) != 1:
                problems.append("exit 1: stdout must be empty and stderr one envelope line")
            else:
                try:
                    envelope = json.loads(lines[0])
                except ValueError:
                    problems.append("exit 1: the stderr line is not JSON")
                else:
                    problems += _schema(schemas, "cli-error.schema.json", envelope, "envelope")
        elif code == 0 and tool:
            try:
                result = json.loads(stdout)
            except ValueError:
                problems.append("exit 0: stdout is not one JSON document")
            else:
                problems += _result(schemas, tool, result)
    return problems


def _schema(schemas: SchemaSet, name: str, value: Any, what: str) -> list[str]:
    found = schemas.errors(name, value, limit=1)
    return [f"the {what} does not match {name}: {found[0]}"] if found else []


def _result(schemas: SchemaSet, tool: str, result: Any) -> list[str]:
    found = schemas.result_errors(tool, result, limit=1)
    problems = [f"the {tool} result does not match its schema: {found[0]}"] if found else []
    if tool == "resolve_capabilities" and isinstance(result, dict):
        problems += _closure(result)
    return problems


def _closure(result: dict[str, Any]) -> list[str]:
    """Every edge of a resolve result joins two returned capabilities (unresolved targets are
    listed apart, never as edges)."""
    returned = {c.get("id") for c in result.get("capabilities", []) if isinstance(c, dict)}
    for edge in result.get("edges", []):
        if isinstance(edge, dict):
            for end in ("from", "to"):
                if end in edge and edge[end] not in returned:
                    return [f"a resolve edge's {end!r} is not among the returned capabilities"]
    return []


def surfaces_agree(case: GenCase, observations: dict[str, Observation]) -> list[str]:
    """CG-SURF-1 inside one implementation: the SDK, the Tool Adapter and MCP give the same R or
    E for one request. A string given as the request is a text to the SDK and the Tool Adapter
    but a value to MCP and the CLI (CG-CONV-17): those two are left out of that comparison."""
    seen: dict[str, str] = {}
    text_request = isinstance(case.action.get("call", {}).get("arguments"), str)
    for surface, observation in observations.items():
        if observation.errored or not isinstance(observation.value, dict):
            continue
        if text_request and surface in ("mcp", "cli"):
            continue
        projected = _projection(surface, observation.value)
        if projected is not None:
            seen[surface] = canonical(projected)
    if len(set(seen.values())) > 1:
        return [
            "CG-SURF-1: the surfaces disagree ("
            + ", ".join(f"{s}={outcome_class(s, observations[s].value)}" for s in seen)
            + ")"
        ]
    return []


def _projection(surface: str, value: dict[str, Any]) -> Any:
    if surface == "sdk":
        answer = value.get("open", value)
        if "raised" in answer:
            return {"error": answer["raised"]}
        return {"result": answer["returned"]} if "returned" in answer else None
    if surface == "tool":
        answer = value.get("open", value)
        if "raised" in answer:
            return {"error": answer["raised"]}
        outcome = answer.get("returned")
        if isinstance(outcome, dict):
            return {k: v for k, v in outcome.items() if k in ("result", "error")}
        return None
    if surface == "mcp" and "result" in value:
        result = value["result"] or {}
        if result.get("isError"):
            try:
                return {"error": json.loads(result["content"][0]["text"])}
            except (KeyError, IndexError, TypeError, ValueError):
                return None
        return {"result": result.get("structuredContent")}
    if surface == "mcp" and "exited" in value:
        return _cli_projection(value["exited"])
    if surface == "cli":
        return _cli_projection(value)
    return None


def _cli_projection(value: dict[str, Any]) -> Any:
    if value.get("exit") == 1:
        try:
            return {"error": json.loads(value["stderr"].splitlines()[0])["error"]}
        except (IndexError, KeyError, TypeError, ValueError):
            return None
    if value.get("exit") == 0:
        try:
            return {"result": json.loads(value["stdout"])}
        except (KeyError, ValueError):
            return None
    return None
