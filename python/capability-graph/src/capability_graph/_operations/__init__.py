"""The operations of the contract: one handler module per operation, dispatched by the table.

The generated operation table (``_generated.operations``, from
``spec/capability-graph/operations.json``) names each operation's SDK method; the module of that
name in this package is its handler, and its ``handle`` has the one signature of
:data:`Handler`. :data:`HANDLERS` is built from the table, so adding an operation is a table
entry and a module here -- no list of tool names is kept by hand.

``CapabilityGraph.call`` checks the request (:func:`prepare_request`), looks the handler up by
tool name, awaits it with an :class:`OperationContext` and checks the result's size
(:func:`check_result_size`). The shared parts live in the private modules: ``_requests`` (what
comes before and after a handler) and ``_common`` (the context, scope and existence).
"""

from __future__ import annotations

import importlib
from typing import Final

from .._generated.operations import Operation
from ._common import Handler, OperationContext
from ._requests import (
    OPERATIONS,
    TOOL_OF_METHOD,
    check_request_depth,
    check_result_size,
    invalid_arguments_text,
    oversized_request,
    parse_arguments_text,
    prepare_request,
    request_of_text,
)

__all__ = [
    "HANDLERS",
    "OPERATIONS",
    "TOOL_OF_METHOD",
    "Handler",
    "OperationContext",
    "check_request_depth",
    "check_result_size",
    "handler_module",
    "invalid_arguments_text",
    "oversized_request",
    "parse_arguments_text",
    "prepare_request",
    "request_of_text",
]


def handler_module(operation: Operation) -> str:
    """The module holding ``operation``'s handler: this package's module named like its SDK
    method."""
    return f"{__name__}.{operation.sdk_method}"


def _handler(operation: Operation) -> Handler:
    handle: Handler = importlib.import_module(handler_module(operation)).handle
    return handle


#: The handler of each operation, by tool name, built from the operation table.
HANDLERS: Final[dict[str, Handler]] = {tool: _handler(op) for tool, op in OPERATIONS.items()}
