"""Strict readers for the ``model`` section of the host configuration.

Every failure is ``CG_CONFIG_INVALID`` (phase ``config``) with a JSON-pointer message that says
where the problem is and what was expected, never the offending value. An object key is named in a
pointer only when it looks like an identifier, so a key cannot smuggle text into a message.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final, NoReturn

from ..._generated.taxonomy import ErrorCode, Phase
from ..errors import GraphError
from ..schemas import allowed_keys_hint

__all__ = ["ConfigReader", "config_error", "pointer"]

_SAFE_KEY: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_MAX_SAFE_INT: Final = 2**53


def config_error(message: str) -> GraphError:
    return GraphError(ErrorCode.CG_CONFIG_INVALID, Phase.CONFIG, message)


def pointer(base: str, key: str | int) -> str:
    """``base`` + ``/key`` (keys are identifier-like or list indexes; see module doc)."""
    return f"{base}/{key}"


class ConfigReader:
    """Reads one JSON object of the config at ``where`` with a fixed set of keys."""

    def __init__(self, value: object, where: str, allowed: tuple[str, ...]) -> None:
        if not isinstance(value, Mapping):
            raise config_error(f"{where} must be an object")
        for key in value:
            if not isinstance(key, str) or key not in allowed:
                # Never the key itself: it is not a word of the contract (it may be a secret).
                hint = allowed_keys_hint(allowed)
                raise config_error(f"{where} has a key that is not allowed ({hint})")
        self.value: Mapping[str, Any] = value
        self.where = where

    def fail(self, key: str, expected: str) -> NoReturn:
        raise config_error(f"{pointer(self.where, key)} must be {expected}")

    def has(self, key: str) -> bool:
        return key in self.value

    def required(self, key: str) -> Any:
        if key not in self.value:
            raise config_error(f"{pointer(self.where, key)} is required")
        return self.value[key]

    def string(
        self,
        key: str,
        *,
        required: bool = False,
        pattern: re.Pattern[str] | None = None,
        expected: str = "a non-empty string",
        max_length: int = 4096,
    ) -> str | None:
        if not required and key not in self.value:
            return None
        value = self.required(key)
        if (
            not isinstance(value, str)
            or not value
            or len(value) > max_length
            or (pattern is None and not value.isprintable())
            or (pattern is not None and pattern.fullmatch(value) is None)
        ):
            self.fail(key, expected)
        return str(value)

    def required_string(
        self,
        key: str,
        *,
        pattern: re.Pattern[str] | None = None,
        expected: str = "a non-empty string",
        max_length: int = 4096,
    ) -> str:
        value = self.string(
            key, required=True, pattern=pattern, expected=expected, max_length=max_length
        )
        assert value is not None  # required=True never returns None
        return value

    def integer(
        self, key: str, *, minimum: int, maximum: int, required: bool = False
    ) -> int | None:
        if not required and key not in self.value:
            return None
        value = self.required(key)
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)  # JSON does not distinguish 5 from 5.0
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            self.fail(key, f"an integer from {minimum} to {maximum}")
        return int(value)


def check_json_data(value: object, where: str, depth: int = 0) -> None:
    """Reject what JSON cannot carry (the pure-JSON rules, CG-CONV-7) inside ``value``."""
    if depth > 32:
        raise config_error(f"{where} is nested too deeply")
    if value is None or isinstance(value, bool | str):
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise config_error(f"{where} must be valid Unicode text") from None
        return
    if isinstance(value, int):
        if not -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
            raise config_error(f"{where} must be an integer between -2^53 and 2^53")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise config_error(f"{where} must be a finite number")
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            check_json_data(item, pointer(where, index), depth + 1)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise config_error(f"{where} must have string keys")
            name = key if _SAFE_KEY.fullmatch(key) else "*"
            check_json_data(item, pointer(where, name), depth + 1)
        return
    raise config_error(f"{where} must be JSON data")
