"""Path safety: identifiers that become path components or git refs."""

from __future__ import annotations

import re
from typing import Final

from ._errors import PathError

__all__ = ["SAFE_IDENT_PATTERN", "assert_safe_ident"]

SAFE_IDENT_PATTERN: Final = r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$"
_SAFE_IDENT: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_SHOWN_CHARS: Final = 80


def assert_safe_ident(name: object, field: str = "name") -> str:
    """Return ``name`` if it is a safe identifier, else raise PathError.

    Safe: ASCII letters and digits at both ends, and only letters, digits, ``.``, ``_`` and
    ``-`` between (``SAFE_IDENT_PATTERN``, matched against the whole string: a trailing newline
    is not forgiven). So it can never be empty, ``.``/``..``, absolute, contain a separator, or
    start like an option. Anything that is not a str raises PathError too.
    """
    if isinstance(name, str) and _SAFE_IDENT.fullmatch(name):
        return name
    if isinstance(name, str):
        shown = repr(name if len(name) <= _SHOWN_CHARS else name[:_SHOWN_CHARS] + "...")
    else:
        shown = f"a {type(name).__name__}, not a str"
    raise PathError(
        f"invalid {field} {shown}: use letters, digits, '.', '_' or '-', "
        "starting and ending with a letter or digit"
    )
