"""The causes ``doctor`` names: host-side facts about the host's own files.

A GraphError says what is wrong in terms a caller of the graph may see (an unreadable
configuration is one fixed message; a bad relation names no capability). ``doctor`` runs for the
host, on the host's files, so its report may say more: the path, why the file cannot be read
(missing, not a file, empty path, not UTF-8, a JSON syntax error with its line and column, too
big), which configuration keys are unknown, which provider a bad definition belongs to, and which
capability and target make a relation invalid. These facts never enter a GraphError.

Each file is read once: a cause is judged from the bytes already read, or by ``stat`` when the
file could not be read at all.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .._core.config import MAX_CONFIG_BYTES, Source, parse_config_file, read_config_file
from .._core.errors import GraphError
from .._core.json import CONFIG_SKIP_DEPTH, NotPureJson, parse_pure_json

if TYPE_CHECKING:
    from jsonschema import ValidationError

__all__ = [
    "Unreadable",
    "config_facts",
    "definition_facts",
    "file_cause",
    "read_configuration",
    "unknown_config_keys",
]


_EMPTY_PATH: Final = "the configuration path is empty"


class Unreadable(Exception):
    """A configuration file that cannot be read as JSON: ``error`` is what ``open`` raises,
    ``cause`` says why, for the host."""

    def __init__(self, error: GraphError, cause: str) -> None:
        super().__init__(cause)
        self.error = error
        self.cause = cause


def read_configuration(config: str) -> tuple[Any, Path]:
    """The JSON value of the configuration file ``config`` and its folder, read once, as
    ``open`` reads it; :class:`Unreadable` when it cannot be read as JSON."""
    path = Path(config)
    shown = os.path.abspath(config)
    try:
        data = read_config_file(path)
    except GraphError as error:
        cause = file_cause(path, MAX_CONFIG_BYTES)
        raise Unreadable(error, f"{shown} {cause}" if config else _EMPTY_PATH) from None
    try:
        return parse_config_file(data, path)
    except GraphError as error:
        problem = _json_problem(data)
        cause = f"{shown} {problem}" if problem else f"{shown} cannot be read"
        raise Unreadable(error, cause if config else _EMPTY_PATH) from None


def config_facts(config: str) -> str | None:
    """The cause of an unreadable configuration, else its unknown keys, else None."""
    try:
        raw, _ = read_configuration(config)
    except Unreadable as unreadable:
        return unreadable.cause
    unknown = unknown_config_keys(raw)
    return f"unknown keys: {', '.join(unknown)}" if unknown else None


def file_cause(path: Path, limit: int) -> str:
    """Why a file that could not be read cannot be, judged by ``stat`` (it is not opened
    again: a file is read once)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return "does not exist" if not os.path.lexists(path) else "is a broken symbolic link"
    except NotADirectoryError:
        return "does not exist (a parent is not a directory)"
    except (OSError, ValueError) as error:
        return f"cannot be read ({getattr(error, 'strerror', None) or 'invalid path'})"
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_size > limit:
        return f"is larger than the limit of {limit} bytes"
    return "cannot be read (permission denied or not a regular file)"


def _json_problem(data: bytes) -> str | None:
    if not data.strip():
        return "is empty" if not data else "holds only whitespace"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"is not UTF-8 text (invalid byte at offset {error.start})"
    if text.startswith("\ufeff"):
        return "starts with a byte order mark (not allowed in JSON)"
    try:
        json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        return f"has a JSON syntax error at line {error.lineno}, column {error.colno}: {error.msg}"
    except _Constant:
        return "is not JSON: NaN and Infinity are not JSON values"
    except RecursionError:
        pass  # deeper than the stdlib goes: the contract's parser passes over it (CG-CONV-15)
    try:
        parse_pure_json(data, check_values=False, allow_null=True, skip_depth=CONFIG_SKIP_DEPTH)
    except NotPureJson as problem:
        return f"is not JSON data: {problem.reason}"
    return None


class _Constant(Exception):
    pass


def _no_constant(_name: str) -> Any:
    raise _Constant


# --- unknown keys --------------------------------------------------------------------------------


def unknown_config_keys(raw: Any) -> list[str]:
    """The JSON pointers of configuration members the configuration schema does not allow."""
    from .._core.config import _without_inline_definitions
    from .._core.schemas import _validator

    validator = _validator("config.schema.json")
    found: list[str] = []
    for error in validator.iter_errors(_without_inline_definitions(raw)):
        found.extend(_extra_members(error))
    return sorted(set(found))


def _extra_members(error: ValidationError) -> Iterator[str]:
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        allowed = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        base = "".join(f"/{_escape(part)}" for part in error.absolute_path)
        for key in error.instance:
            if key not in allowed:
                yield f"{base}/{_escape(str(key))}"
    if error.validator in ("oneOf", "anyOf") and error.context:
        # Only the variants the value was meant for: those that fail on nothing but extra keys
        # and faults below them (a file source is not judged by the inline variant's rules),
        # never on the member that tells the variants apart (a scripted model is not judged by
        # the openai variant, whose "executor" is another constant).
        by_variant: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            by_variant.setdefault(sub.schema_path[0], []).append(sub)
        for errors in by_variant.values():
            if all(_is_extra_or_below(sub, error) for sub in errors):
                for sub in errors:
                    yield from _extra_members(sub)


def _is_extra_or_below(sub: ValidationError, parent: ValidationError) -> bool:
    depth, parent_depth = len(sub.absolute_path), len(parent.absolute_path)
    if sub.validator in ("const", "enum") and depth == parent_depth + 1:
        return False  # the variant's own tag: another variant
    return sub.validator == "additionalProperties" or depth > parent_depth


def _escape(part: Any) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


# --- definitions and relations -------------------------------------------------------------------


def definition_facts(source: Source, data: bytes | None, max_bytes: int) -> str:
    """Where a failing source comes from and, when it says so, its provider and bad relation.

    ``data`` is what was read of a file source (None: it could not be read under ``max_bytes``;
    ``stat`` says why).
    """
    if source.path is None:
        facts = ["inline definition"]
        value = source.definition
    else:
        facts = [f"file {source.path}"]
        if data is None:
            return f"{facts[0]} {file_cause(source.path, max_bytes)}"
        value, problem = _definition_value(data)
        if problem is not None:
            return f"{facts[0]} {problem}"
    if isinstance(value, Mapping):
        provider_id = value.get("providerId")
        if isinstance(provider_id, str) and provider_id.isprintable() and len(provider_id) <= 64:
            facts.append(f"provider {provider_id}")
        relation = _bad_relation(value)
        if relation is not None:
            facts.append(relation)
    return "; ".join(facts)


def _definition_value(data: bytes) -> tuple[Any, str | None]:
    """A definition file's JSON value, or why it is not JSON data."""
    problem = _json_problem(data)
    if problem is not None:
        return None, problem
    try:
        return parse_pure_json(data, check_values=False), None
    except NotPureJson as reason:
        return None, f"is not JSON data: {reason.reason}"


def _bad_relation(definition: Mapping[str, Any]) -> str | None:
    """The first relation ``load`` refuses, as "capability C: relation KIND -> TARGET: why"."""
    from .._core.snapshot import relation_problem

    capabilities = definition.get("capabilities")
    provider_id = definition.get("providerId")
    if not isinstance(capabilities, list) or not isinstance(provider_id, str):
        return None
    local_ids = {c.get("id") for c in capabilities if isinstance(c, Mapping)}
    for capability in capabilities:
        if not isinstance(capability, Mapping) or not isinstance(capability.get("id"), str):
            continue
        relations = capability.get("relations")
        if not isinstance(relations, list):
            continue
        seen: set[tuple[str, str]] = set()
        for relation in relations:
            if not isinstance(relation, Mapping):
                continue
            kind, target = relation.get("kind"), relation.get("target")
            why: str | None
            if not isinstance(kind, str) or not isinstance(target, str):
                why = "a relation needs a kind and a target (strings)"
            else:
                why = relation_problem(provider_id, capability["id"], kind, target, local_ids, seen)
            if why is not None:
                return (
                    f"capability {provider_id}::{capability['id']}: relation "
                    f"{_short(kind)} -> {_short(target)}: {why}"
                )
    return None


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 200 else text[:197] + "..."
