"""The job a match hands to a model executor: :class:`MatchJob` (the protocol is in
``__init__``).

A module of its own because only a match makes one: a command line that never matches does not
pay for making the class (a dataclass costs about a millisecond at import, and the executors'
package is imported whenever a graph opens).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import DEFAULT_MAX_OUTPUT_BYTES

__all__ = ["MatchJob"]


@dataclass(frozen=True, slots=True)
class MatchJob:
    """One match, as handed to an executor.

    ``catalog`` holds the capability summaries of the authorized catalog of this request:
    ``{id, providerId, name, description, tags}`` plus ``whenToUse`` when the capability has one.
    Executors must treat the job (and the catalog's entries) as read-only. ``deadline`` is a
    ``time.monotonic()`` instant. ``max_output_bytes`` is ``budgets.maxModelOutputBytes``; the
    runner fills it in, so an executor that reads text from a transport can bound it early.
    """

    request: str
    context: Mapping[str, Any]
    catalog: Sequence[Mapping[str, Any]]
    limit: int
    deadline: float
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES
