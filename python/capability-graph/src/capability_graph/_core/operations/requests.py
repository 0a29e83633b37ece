"""What every operation shares before and after its handler: the operations by tool name, the
request checks (the request text, the depth, the input size, then the shape) and the result size
check.

A request given to ``call`` as JSON text is read here (:func:`request_of_text`), once, so every
surface reads it with the same rules: the SDK and the Tool Adapter pass a caller's text on, the
MCP server its ``arguments`` text and the CLI its ``--arguments`` text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._generated.operations import OPERATION_TABLE, Operation
from ..._generated.taxonomy import ErrorCode, Phase
from ..config import HostConfig
from ..errors import GraphError
from ..frozen import serialized_size
from ..json import (
    NotPureJson,
    check_depth,
    check_pure_value,
    dump_bytes,
    lone_surrogate_count,
    parse_request_text,
    whole_numbers_as_integers,
)
from ..schemas import check_shape, pointer_message

__all__ = [
    "OPERATIONS",
    "TOOL_OF_METHOD",
    "check_request_depth",
    "check_result_size",
    "invalid_arguments_text",
    "oversized_request",
    "parse_arguments_text",
    "prepare_request",
    "request_of_text",
]


#: The operations by tool name, from the generated operation table (``spec/``: operations.json).
OPERATIONS: Final = {op.tool: op for op in OPERATION_TABLE}
#: The tool each SDK method calls, by method name.
TOOL_OF_METHOD: Final = {op.sdk_method: op.tool for op in OPERATION_TABLE}


#: The reason of a request text that starts with U+FEFF (CG-MSG-9).
_BYTE_ORDER_MARK: Final = "a byte order mark is not JSON"


def _input_invalid(phase: Phase, message: str | None = None) -> GraphError:
    return GraphError(ErrorCode.CG_INPUT_INVALID, phase, message)


def oversized_request(tool: str) -> GraphError:
    """The error for a request whose serialized form is known to exceed maxInputBytes."""
    operation = OPERATIONS.get(tool)
    if operation is None:
        return GraphError.of(ErrorCode.CG_INPUT_INVALID, Phase.QUERY, variant="unknownTool")
    return GraphError.of(ErrorCode.CG_INPUT_TOO_LARGE, operation.phase)


def parse_arguments_text(
    tool: str, data: str | bytes, *, max_input_bytes: int | None = None
) -> Any:
    """A tool's arguments given as JSON text -> their value, judged by the request-text rules.

    More than ``max_input_bytes`` bytes of text is ``CG_INPUT_TOO_LARGE``; a text that is not
    well-formed, has a duplicate member name in any object, or holds an integer literal of more
    than ``MAX_INTEGER_DIGITS`` (400) digits is ``CG_INPUT_INVALID`` in the tool's phase, with a
    pointer message (see :func:`capability_graph._json.parse_request_text`). No surface calls it
    any more -- ``call`` reads a text through :func:`request_of_text` -- and its tests pin the
    parser's rules through it.
    """
    if max_input_bytes is not None:
        operation = OPERATIONS.get(tool)
        phase = operation.phase if operation is not None else Phase.QUERY
        size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
        if size > max_input_bytes:
            raise GraphError.of(ErrorCode.CG_INPUT_TOO_LARGE, phase)
    try:
        return parse_request_text(data)
    except NotPureJson as problem:
        raise invalid_arguments_text(tool, problem) from None


def invalid_arguments_text(tool: str, problem: NotPureJson) -> GraphError:
    """The error for a tool's arguments text that the request-text rules reject."""
    operation = OPERATIONS.get(tool)
    phase = operation.phase if operation is not None else Phase.QUERY
    return _input_invalid(phase, pointer_message(problem.pointer, problem.reason))


def _surely_larger_than(value: Any, limit: int) -> bool:
    """Whether ``value`` serializes to more than ``limit`` bytes, judged from a lower bound.

    Walks without copying and stops as soon as the bound passes ``limit``, so a 100 MB request
    is refused before a 100 MB serialization of it is made. The bound never exceeds the compact
    serialization (a property test holds it to that), so a request of exactly ``limit`` bytes is
    never refused here: a string is at least its characters and two quotes (a lone surrogate
    six, its ``\\uXXXX`` escape), a key also its colon, a container its brackets and one
    separator between items, any other value one byte.
    """
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
            if total <= limit:  # scanned only when it still fits: the scan stays bounded
                total += 5 * lone_surrogate_count(item)
        elif isinstance(item, dict):
            total += 2 + max(len(item) - 1, 0)
            for key, child in item.items():
                total += (len(key) if isinstance(key, str) else 1) + 3
                stack.append(child)
        elif isinstance(item, (list, tuple)):
            total += 2 + max(len(item) - 1, 0)
            stack.extend(item)
        else:
            total += 1
        if total > limit:
            return True
    return False


def request_of_text(tool: str, text: str) -> Any:
    """The request a string given to ``call`` stands for: a request text, read once (CG-CONV-17).

    Judged as every request text is when it is parsed (CG-MSG-13: duplicate member names,
    over-long integer literals, containers at depth 33), before the tool name is looked up
    (CG-PREC-12: in the tool's phase, ``query`` for an unknown tool); a text that is not JSON is
    ``/ not well-formed JSON`` and a byte order mark ``/ a byte order mark is not JSON``
    (CG-CONV-12). The value it holds is then judged like any request value, a string included:
    ``"\"{}\""`` is ``/ must be an object``, never read a second time.
    """
    if text.startswith("\ufeff"):
        operation = OPERATIONS.get(tool)
        phase = operation.phase if operation is not None else Phase.QUERY
        raise _input_invalid(phase, pointer_message("", _BYTE_ORDER_MARK))
    try:
        return parse_request_text(text)
    except NotPureJson as problem:
        raise invalid_arguments_text(tool, problem) from None


def check_request_depth(tool: str, arguments: Any) -> None:
    """The depth rule, before the tool name and the input size (CG-CONV-15, CG-PREC-12): a
    request text's parse finds a container at depth 33 before either is looked at, and a request
    given as a value is judged the same, so that every surface gives one answer. In the tool's
    phase, ``query`` for an unknown tool."""
    try:
        check_depth(arguments)
    except NotPureJson as problem:
        operation = OPERATIONS.get(tool)
        phase = operation.phase if operation is not None else Phase.QUERY
        raise _input_invalid(phase, pointer_message(problem.pointer, problem.reason)) from None


def prepare_request(operation: Operation, arguments: Any, config: HostConfig) -> dict[str, Any]:
    """Input size, then shape (the depth rule came first: :func:`check_request_depth`).
    ``context`` (match) is left to the context check that follows."""
    phase = operation.phase
    limit = config.budgets.max_input_bytes
    if _surely_larger_than(arguments, limit):
        raise GraphError.of(ErrorCode.CG_INPUT_TOO_LARGE, phase)
    try:
        size = len(dump_bytes(arguments))  # bounded: the walk above capped it near the budget
    except (TypeError, ValueError):
        size = None  # not JSON at all: a shape problem, reported below
    if size is not None and size > limit:
        raise GraphError.of(ErrorCode.CG_INPUT_TOO_LARGE, phase)
    if not isinstance(arguments, dict):
        raise _input_invalid(phase, "/ must be an object")
    rest = {k: v for k, v in arguments.items() if k != "context"}
    try:
        check_pure_value(rest)
        # ``context`` is checked by its own rules next (CG_CONTEXT_INVALID), but the depth rule
        # counts every container of the request, as it does in a request text (CG-CONV-15).
        if "context" in arguments:
            check_depth(arguments["context"], "/context", 1)
    except NotPureJson as problem:
        raise _input_invalid(phase, pointer_message(problem.pointer, problem.reason)) from None
    shaped = whole_numbers_as_integers(rest)
    if "context" in arguments:
        shaped["context"] = arguments["context"]
    arguments = shaped
    shaped = dict(arguments)
    # Only the match request has a context (the one operation of the match phase).
    context_present = "context" in shaped and operation.phase is Phase.MATCH
    if context_present:
        if shaped["context"] is None:
            raise _input_invalid(phase, "/context must not be null (omit the key instead)")
        shaped["context"] = {}
    check_shape(
        operation.request_schema,
        shaped,
        code=ErrorCode.CG_INPUT_INVALID,
        phase=phase,
        compiled=operation.compiled,
    )
    if context_present:
        shaped["context"] = arguments["context"]
    return shaped


def check_result_size(result: Mapping[str, Any], config: HostConfig, phase: Phase) -> None:
    """``CG_RESULT_TOO_LARGE`` when the result's compact serialization exceeds maxResultBytes
    (nothing is ever truncated). The parts shared with the snapshot remember their size."""
    if serialized_size(result) > config.budgets.max_result_bytes:
        raise GraphError.of(ErrorCode.CG_RESULT_TOO_LARGE, phase)
