"""The trusted host configuration: reading, validation and the resolved form the core uses.

``load_config`` accepts a mapping, a path to a JSON file, or the generated ``HostConfig`` model,
and returns a :class:`HostConfig` whose relative paths are fixed against the configuration's
folder (the file's folder, or the working directory at ``open`` for a mapping). Every problem is
``CG_CONFIG_INVALID`` in phase ``config``; an unreadable file gets the registry's ``unreadable``
message, a shape problem names its JSON pointer.

The resolved configuration is read-only by convention: its records are plain classes with
``__slots__``, not dataclasses, because making a dataclass costs about a millisecond at import
and every command line imports this module (``docs/contributing.md``, start-up).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

from .._generated.defaults import DEFAULT_BUDGETS, DOCUMENT_BODIES
from .._generated.taxonomy import ErrorCode, Phase
from .cursor import cursor_key
from .errors import GraphError
from .json import (
    CONFIG_SKIP_DEPTH,
    NotPureJson,
    check_pure_value,
    parse_pure_json,
    whole_numbers_as_integers,
)
from .schemas import check_shape, pointer_message

__all__ = [
    "DEFAULT_BUDGETS",
    "Budgets",
    "FileTooLarge",
    "HostConfig",
    "Source",
    "load_config",
    "parse_config_file",
    "read_bounded_file",
    "read_config_file",
]

MAX_CONFIG_BYTES: Final = 1024 * 1024


class Budgets:
    """The budgets in force, every one set (the defaults filled in)."""

    __slots__ = (
        "max_capabilities",
        "max_catalog_entries",
        "max_definition_bytes",
        "max_document_bytes",
        "max_input_bytes",
        "max_model_output_bytes",
        "max_result_bytes",
    )

    def __init__(
        self,
        max_capabilities: int,
        max_catalog_entries: int,
        max_result_bytes: int,
        max_input_bytes: int,
        max_document_bytes: int,
        max_definition_bytes: int,
        max_model_output_bytes: int,
    ) -> None:
        self.max_capabilities = max_capabilities
        self.max_catalog_entries = max_catalog_entries
        self.max_result_bytes = max_result_bytes
        self.max_input_bytes = max_input_bytes
        self.max_document_bytes = max_document_bytes
        self.max_definition_bytes = max_definition_bytes
        self.max_model_output_bytes = max_model_output_bytes

    def to_json(self) -> dict[str, int]:
        return {
            "maxCapabilities": self.max_capabilities,
            "maxCatalogEntries": self.max_catalog_entries,
            "maxResultBytes": self.max_result_bytes,
            "maxInputBytes": self.max_input_bytes,
            "maxDocumentBytes": self.max_document_bytes,
            "maxDefinitionBytes": self.max_definition_bytes,
            "maxModelOutputBytes": self.max_model_output_bytes,
        }


class Source:
    """One provider source. ``path`` is absolute; ``document_root`` is absolute or None."""

    __slots__ = ("definition", "document_root", "index", "path")

    def __init__(
        self, index: int, path: Path | None, definition: Any, document_root: Path | None
    ) -> None:
        self.index = index
        self.path = path
        self.definition = definition  # inline: as the host gave it (checked at load); file: None
        self.document_root = document_root


class HostConfig:
    """A configuration, resolved: its sources, scope, document policy, budgets and model."""

    __slots__ = ("bodies", "budgets", "cursor_key", "model", "raw", "scope", "sources")

    def __init__(
        self,
        sources: tuple[Source, ...],
        scope: tuple[str, ...] | None,
        bodies: Literal["all", "none"] | frozenset[str],
        budgets: Budgets,
        model: Mapping[str, Any] | None,
        raw: Mapping[str, Any],
        cursor_key: bytes = b"",
    ) -> None:
        self.sources = sources
        self.scope = scope
        self.bodies = bodies
        self.budgets = budgets
        self.model = model
        self.raw = raw
        #: The MAC key of this configuration's list cursors (see ``_cursor``).
        self.cursor_key = cursor_key


def _unreadable() -> GraphError:
    return GraphError.of(ErrorCode.CG_CONFIG_INVALID, Phase.CONFIG, variant="unreadable")


class FileTooLarge(Exception):
    """The regular file holds more than the limit (found by ``fstat`` or while reading)."""


def read_bounded_file(path: Path, limit: int) -> bytes | None:
    """Read a regular file of at most ``limit`` bytes; None when it is not a readable regular
    file, :class:`FileTooLarge` when it is one over the limit.

    The file is opened non-blocking (a fifo must not hang us) and checked with ``fstat`` on the
    open descriptor, so what is checked is what is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > limit:
            raise FileTooLarge
        chunks = []
        remaining = limit + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:  # it grew after fstat
            raise FileTooLarge
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def read_config_file(path: Path) -> bytes:
    """The configuration file's bytes (read once), or the registry's ``unreadable`` error."""
    try:
        data = read_bounded_file(path, MAX_CONFIG_BYTES)
    except FileTooLarge:
        data = None
    if data is None:
        raise _unreadable()
    return data


def parse_config_file(data: bytes, path: Path) -> tuple[Any, Path]:
    """The JSON value of a configuration file read from ``path``, and the folder its relative
    paths are relative to; the ``unreadable`` error when it is not JSON data."""
    try:
        # Nulls, big numbers and depth are judged next, by the configuration's own rules.
        value = parse_pure_json(
            data, check_values=False, allow_null=True, skip_depth=CONFIG_SKIP_DEPTH
        )
    except NotPureJson:
        raise _unreadable() from None
    return value, Path(os.path.abspath(path)).parent


def load_config(config: Any, *, cwd: Path | None = None) -> HostConfig:
    """Validate ``config`` (mapping, path or generated model) and resolve it."""
    base = cwd if cwd is not None else Path.cwd()
    if isinstance(config, (str, os.PathLike)):
        path = Path(config)
        raw, base = parse_config_file(read_config_file(path), path)
    elif isinstance(config, Mapping):
        raw = config
    elif hasattr(config, "model_dump"):
        raw = config.model_dump(mode="json", by_alias=True, exclude_unset=True)
    else:
        raise GraphError(ErrorCode.CG_CONFIG_INVALID, Phase.CONFIG, "/ must be an object")
    if not isinstance(raw, Mapping):
        # A root that is not an object is reported before any other fault of it (CG-MSG-19); a
        # null file is such a root, the null rule being for member values and array items.
        raise GraphError(ErrorCode.CG_CONFIG_INVALID, Phase.CONFIG, "/ must be an object")
    shaped = _without_inline_definitions(raw)
    try:
        check_pure_value(shaped)
    except NotPureJson as problem:
        raise GraphError(
            ErrorCode.CG_CONFIG_INVALID,
            Phase.CONFIG,
            pointer_message(problem.pointer, problem.reason),
        ) from None
    shaped = whole_numbers_as_integers(shaped)
    if isinstance(raw, Mapping):
        raw = {
            **whole_numbers_as_integers({k: v for k, v in raw.items() if k != "providers"}),
            "providers": raw.get("providers"),
        }
    check_shape(
        "config.schema.json",
        shaped,
        code=ErrorCode.CG_CONFIG_INVALID,
        phase=Phase.CONFIG,
        compiled="config",
    )
    return _resolve(raw, base)


# Inline definitions are provider input, checked in phase ``load`` with CG_DEFINITION_INVALID like
# a definition file; the configuration check sees a valid stand-in in their place.
_STAND_IN: Final = {"providerId": "x", "name": "x", "version": "x", "capabilities": []}


def _without_inline_definitions(raw: Any) -> Any:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("providers"), list):
        return raw
    sources = [
        {**s, "definition": _STAND_IN} if isinstance(s, Mapping) and "definition" in s else s
        for s in raw["providers"]
    ]
    return {**raw, "providers": sources}


def _resolve(raw: Mapping[str, Any], base: Path) -> HostConfig:
    sources = []
    for index, entry in enumerate(raw["providers"]):
        root = entry.get("documentRoot")
        if "path" in entry:
            path = Path(os.path.abspath(base / entry["path"]))
            sources.append(Source(index, path, None, _absolute(base, root) if root else None))
        else:
            sources.append(
                Source(index, None, entry["definition"], _absolute(base, root) if root else None)
            )
    scope = raw.get("scope")
    scope_ids = tuple(scope["providers"]) if scope is not None else None
    if scope_ids is not None and len(set(scope_ids)) != len(scope_ids):
        raise GraphError(
            ErrorCode.CG_CONFIG_INVALID, Phase.CONFIG, "/scope/providers must not repeat items"
        )
    bodies_raw = raw.get("documents", {}).get("bodies", DOCUMENT_BODIES)
    bodies: Literal["all", "none"] | frozenset[str] = (
        ("all" if bodies_raw == "all" else "none")
        if isinstance(bodies_raw, str)
        else frozenset(bodies_raw)
    )
    merged = {**DEFAULT_BUDGETS, **raw.get("budgets", {})}
    budgets = Budgets(
        max_capabilities=merged["maxCapabilities"],
        max_catalog_entries=merged["maxCatalogEntries"],
        max_result_bytes=merged["maxResultBytes"],
        max_input_bytes=merged["maxInputBytes"],
        max_document_bytes=merged["maxDocumentBytes"],
        max_definition_bytes=merged["maxDefinitionBytes"],
        max_model_output_bytes=merged["maxModelOutputBytes"],
    )
    model = raw.get("model")
    return HostConfig(
        tuple(sources), scope_ids, bodies, budgets, model, raw, cursor_key(_identity(raw))
    )


def _identity(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The canonical form of a configuration as written, for the cursor key: the same text
    gives the same key wherever it lies (a copy of a project, each surface of a conformance
    run); any difference a caller could observe gives another. An inline definition stands by
    its position: its content is bound by the revision that every cursor carries."""
    sources = [
        {key: (True if key == "definition" else value) for key, value in entry.items()}
        for entry in raw["providers"]
    ]
    return {**raw, "providers": sources}


def _absolute(base: Path, path: str) -> Path:
    return Path(os.path.abspath(base / path))
