"""Properties that take more than one request, checked on one implementation at a time.

* the pages of a listing, followed by their cursors, concatenate to the unpaged listing
  (CG-CUR-1), for a few page sizes and filters;
* describe is idempotent and its revision is the one every query reports (stable revision);
* a budget refusal is monotonic in the limit: a request refused under a limit is refused under
  every smaller one (CG-BUD-*), checked over the budget campaign's cases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._json import canonical
from .model import GenCase, Observation
from .targets import Target

__all__ = ["budget_monotonic", "paging_and_revision"]

_PAGE_SIZES = (1, 2, 3)
_FILTERS: tuple[dict[str, Any], ...] = ({}, {"tags": ["http"]}, {"providers": ["acme", "notes"]})
_MAX_PAGES = 200


async def _sdk(target: Target, config: Path, tool: str, arguments: Any) -> Any:
    case = GenCase("probe", "-", {"call": {"tool": tool, "arguments": arguments}})
    observation: Observation = await target.observe(case, "sdk", config)
    value = observation.value if isinstance(observation.value, dict) else {}
    return value.get("returned")


async def paging_and_revision(target: Target, config: Path) -> list[str]:
    """The multi-request properties that ``target`` breaks on the graph of ``config``."""
    problems: list[str] = []
    first = await _sdk(target, config, "describe_graph", {})
    if not isinstance(first, dict):
        return problems  # the graph did not open or describe failed: the cases report it
    again = await _sdk(target, config, "describe_graph", {})
    if canonical(first) != canonical(again):
        problems.append("describe is not idempotent (two describes of one graph differ)")
    for filters in _FILTERS:
        whole = await _sdk(target, config, "list_capabilities", {**filters, "limit": 500})
        if not isinstance(whole, dict) or "items" not in whole:
            continue
        if whole.get("revision") != first.get("revision"):
            problems.append("list reports another revision than describe")
        for size in _PAGE_SIZES:
            items: list[Any] = []
            request: dict[str, Any] = {**filters, "limit": size}
            for _page in range(_MAX_PAGES):
                page = await _sdk(target, config, "list_capabilities", request)
                if not isinstance(page, dict):
                    problems.append(f"a page of limit {size} failed while following cursors")
                    break
                items += page.get("items", [])
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
                request = {**filters, "limit": size, "cursor": cursor}
            if canonical(items) != canonical(whole["items"]):
                problems.append(
                    f"the pages of limit {size} do not concatenate to the unpaged listing"
                )
    return sorted(set(problems))


def budget_monotonic(samples: list[tuple[str, str, Any, str]]) -> list[str]:
    """``samples``: (budget, request, limit, outcome class). A request refused under a limit
    must be refused under every smaller limit of the same budget."""
    problems = []
    groups: dict[tuple[str, str], list[tuple[int, bool]]] = {}
    for budget, request, limit, outcome in samples:
        if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1:
            refused = "TOO_LARGE" in outcome or "CG_DEFINITION_INVALID" in outcome
            groups.setdefault((budget, request), []).append((limit, refused))
    for (budget, request), seen in sorted(groups.items()):
        seen.sort()
        refused_at = [limit for limit, refused in seen if refused]
        accepted_at = [limit for limit, refused in seen if not refused]
        if refused_at and accepted_at and max(refused_at) > min(accepted_at):
            problems.append(
                f"a {budget} refusal is not monotonic in the limit (request {request}: accepted "
                f"at {min(accepted_at)}, refused at {max(refused_at)})"
            )
    return problems
