"""What both editors share: the refusal (:class:`CannotEdit`) and the JSON tokens."""

from __future__ import annotations

import re
from typing import Final

#: Deeper nesting than this is refused (a failed report), never a RecursionError.
MAX_NESTING: Final = 200

NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# A JSON string token: its escapes are decoded (and judged) by the json module.
STRING: Final = re.compile(r'"(?:[^"\\\x00-\x1f]|\\[^\x00-\x1f])*"')
WHITESPACE: Final = " \t\r\n"


class CannotEdit(Exception):
    """The file cannot be edited safely; ``reason`` says why (it never echoes file content)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
