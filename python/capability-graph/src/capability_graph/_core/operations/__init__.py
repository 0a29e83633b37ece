"""The operations of the contract: one handler module per operation, dispatched by the table.

The generated operation table (``_generated.operations``, from
``spec/capability-graph/operations.json``) names each operation's SDK method; the module of that
name in this package is its handler, and its ``handle`` has the one signature of
:data:`Handler`. :data:`HANDLERS` (``handlers.py``) is generated from the same table, with an
import a reader can follow per handler, so adding an operation is a table entry and a module
here -- no list of tool names is kept by hand.

``CapabilityGraph.call`` checks the request (:func:`prepare_request`), looks the handler up by
tool name, awaits it with an :class:`OperationContext` and checks the result's size
(:func:`check_result_size`). The shared parts live in ``requests`` (what comes before and after
a handler) and ``common`` (the context, scope and existence).
"""

from __future__ import annotations

from .common import Handler, OperationContext
from .handlers import HANDLERS
from .requests import (
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
    "invalid_arguments_text",
    "oversized_request",
    "parse_arguments_text",
    "prepare_request",
    "request_of_text",
]
