"""Structured output: JSON Schema validation, JSON extraction from model text, retries."""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from ._errors import SchemaError
from ._sync import in_thread, maybe_await, run_blocking

__all__ = ["extract_json", "run_structured", "run_structured_sync", "validate_schema"]

Runner = Callable[[str], Awaitable[str] | str]

# JavaScript's String.prototype.trim() set, so extraction agrees across implementations.
_JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_FENCE: Final = "```"
_INFO_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+.-")
_MAX_ERRORS: Final = 20


def _pointer(path: Any) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else "(root)"


def validate_schema(value: Any, schema: Mapping[str, Any] | bool) -> list[str]:
    """Validate ``value`` against a JSON Schema (Draft 2020-12 unless ``$schema`` says
    otherwise). Returns the errors as ``"<JSON pointer>: <message>"`` strings, sorted, at most
    20; an empty list means valid. Never raises: an invalid schema, an unresolvable ``$ref`` or
    a bad pattern is reported as an error string too. Remote ``$ref``s are never fetched.
    """
    try:
        validator = _validator(schema)
        if isinstance(validator, str):
            return [validator]
        errors = sorted(
            (f"{_pointer(e.absolute_path)}: {e.message}" for e in validator.iter_errors(value)),
        )
    except RecursionError:
        return ["(root): value or schema nested too deeply to validate"]
    except Exception as exc:  # noqa: BLE001 - the contract: report, never raise
        ref = getattr(exc, "ref", None)  # referencing.exceptions.Unresolvable
        if isinstance(ref, str):
            return [f"invalid schema: cannot resolve {ref!r}"]
        return [f"invalid schema: {type(exc).__name__}: {exc}"]
    return errors[:_MAX_ERRORS]


@functools.lru_cache(maxsize=64)
def _cached_validator(canonical: str) -> Any:
    return _build_validator(json.loads(canonical))


def _build_validator(schema: Any) -> Any:
    """A validator for ``schema``, or the string describing why the schema is invalid."""
    # imported on first use: jsonschema costs ~0.1 s to import, most flowcast users never
    # validate (and it is untyped: Any is what we get).
    jsonschema: Any = importlib.import_module("jsonschema")
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    meta = validator_class(
        validator_class.META_SCHEMA, format_checker=validator_class.FORMAT_CHECKER
    )
    problems = list(meta.iter_errors(schema))
    if problems:
        first = min(problems, key=lambda e: (list(map(str, e.path)), e.message))
        return f"invalid schema at {_pointer(first.path)}: {first.message}"
    return validator_class(schema)


def _validator(schema: Any) -> Any:
    try:
        canonical = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return _build_validator(schema)
    return _cached_validator(canonical)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return False, None


def _first_fenced_block(text: str) -> str | None:
    start = text.find(_FENCE)
    if start < 0:
        return None
    pos = start + len(_FENCE)
    while pos < len(text) and text[pos] in _INFO_CHARS:
        pos += 1
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    if text.startswith("\r\n", pos):
        pos += 2
    elif text.startswith("\n", pos):
        pos += 1
    end = text.find(_FENCE, pos)
    return text[pos:end] if end >= 0 else None


def _first_balanced(text: str) -> str | None:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def _extract(text: object) -> tuple[bool, Any]:
    if not isinstance(text, str):
        return False, None
    for candidate in (_first_fenced_block(text), _first_balanced(text), text.strip(_JS_WHITESPACE)):
        if candidate is not None:
            found, value = _parse(candidate)
            if found:
                return True, value
    return False, None


def extract_json(text: object) -> Any:
    """The JSON value in a model's answer, or None when there is none. Never raises.

    Tried in order, the first that parses wins: the body of the first fenced code block
    (```` ``` ```` with an optional info word such as ``json``); the first balanced ``{...}`` or
    ``[...]`` (aware of strings and escapes); the whole text, trimmed of whitespace. Parsing
    is strict JSON: NaN and Infinity are not JSON. A literal ``null`` answer also gives None.
    """
    return _extract(text)[1]


def _schema_prompt(prompt: str, schema: Mapping[str, Any] | bool) -> str:
    return (
        f"{prompt}\n\nRespond with a single JSON value that validates against this JSON Schema "
        f"(Draft 2020-12), and nothing else:\n{json.dumps(schema, sort_keys=True)}"
    )


async def run_structured(
    runner: Runner,
    prompt: str,
    *,
    schema: Mapping[str, Any] | bool,
    retries: int = 1,
) -> Any:
    """Ask ``runner`` (a function of the prompt returning text, plain or async) for JSON that
    validates against ``schema``; return the parsed value.

    The schema is appended to the prompt. An answer without JSON, or with JSON that does not
    validate, is retried up to ``retries`` more times with the problems appended to the prompt;
    then SchemaError (``schema_error`` lists the last problems). An exception raised by the
    runner is not retried: it propagates.
    """
    if retries < 0:
        raise ValueError("retries must be >= 0")
    base = _schema_prompt(prompt, schema)
    attempt_prompt = base
    problems: list[str] = []
    for _ in range(retries + 1):
        answer = await maybe_await(runner(attempt_prompt))
        found, value = _extract(answer)
        problems = validate_schema(value, schema) if found else ["(root): no JSON value found"]
        if not problems:
            return value
        attempt_prompt = (
            f"{base}\n\nYour previous answer was rejected:\n"
            + "\n".join(f"- {p}" for p in problems)
            + "\nAnswer again with corrected JSON only."
        )
    raise SchemaError(
        f"no valid structured output after {retries + 1} attempt(s): {problems[0]}",
        schema_error="; ".join(problems),
    )


def run_structured_sync(
    runner: Callable[[str], str],
    prompt: str,
    *,
    schema: Mapping[str, Any] | bool,
    retries: int = 1,
) -> Any:
    """Blocking twin of ``run_structured``; the runner is a plain function, run in a worker
    thread (so it may block or use ``asyncio.run``)."""
    return run_blocking(run_structured, in_thread(runner), prompt, schema=schema, retries=retries)
