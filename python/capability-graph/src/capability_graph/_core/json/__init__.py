"""Pure JSON: parsing untrusted bytes, the contract's rules over language values, and writing
JSON -- one module each (``text``, ``pure``, ``canonical``), as the TypeScript implementation has
them under ``core/json/``.

A definition, a configuration or a request must be JSON *data*: string keys, no duplicate keys,
no NaN or Infinity, integers within +/-2**53, nesting at most 32 deep, valid UTF-8 without lone
surrogates. Violations raise :class:`NotPureJson` with a short reason (never the offending value);
callers turn it into the GraphError of their phase.
"""

from __future__ import annotations

from .canonical import canonical_bytes, dump_bytes, dumps, lone_surrogate_count
from .pure import (
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    NotPureJson,
    check_depth,
    check_pure_value,
    integral_beyond_range,
    whole_numbers_as_integers,
)
from .text import (
    CONFIG_SKIP_DEPTH,
    DUPLICATE_KEY,
    MAX_INTEGER_DIGITS,
    MalformedJson,
    duplicated_names,
    parse_definition_json,
    parse_pure_json,
    parse_request_text,
    scan_json_text,
)

__all__ = [
    "CONFIG_SKIP_DEPTH",
    "DUPLICATE_KEY",
    "MAX_DEPTH",
    "MAX_INTEGER_DIGITS",
    "MAX_SAFE_INTEGER",
    "MalformedJson",
    "NotPureJson",
    "canonical_bytes",
    "check_depth",
    "check_pure_value",
    "dump_bytes",
    "dumps",
    "duplicated_names",
    "integral_beyond_range",
    "lone_surrogate_count",
    "parse_definition_json",
    "parse_pure_json",
    "parse_request_text",
    "scan_json_text",
    "whole_numbers_as_integers",
]
