"""Typed results of the SDK operations.

Each result is a small frozen dataclass with the fields of the spec's result in snake_case and
``to_json()`` returning exactly the spec's JSON form (which is what every other surface emits).
Nested items stay JSON-shaped dictionaries (typed as ``TypedDict``s): they are the contract's
objects, passed through without copying.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Final, Literal, NotRequired, TypedDict

__all__ = [
    "CapabilityDetail",
    "CapabilitySummary",
    "DescribeResult",
    "DocumentResult",
    "ListResult",
    "MatchCandidate",
    "MatchResult",
    "ReloadResult",
    "ResolveResult",
]


# A repr shows a list by its length and a document body by its length: a page of items or a
# document would otherwise fill the screen. Everything else (a cursor included) is shown whole.
_BODY: Final = "text"


def _compact_repr(result: Any) -> str:
    parts = []
    for item in fields(result):
        value = getattr(result, item.name)
        if isinstance(value, list):
            shown = f"[{len(value)} item{'' if len(value) == 1 else 's'}]"
        elif item.name == _BODY:
            shown = f"<{len(value)} characters>"
        else:
            shown = repr(value)
        parts.append(f"{item.name}={shown}")
    return f"{type(result).__name__}({', '.join(parts)})"


class CapabilitySummary(TypedDict):
    id: str
    providerId: str
    name: str
    description: str
    tags: list[str]


class CapabilityDetail(CapabilitySummary):
    whenToUse: NotRequired[str]
    relations: list[dict[str, str]]
    documents: list[dict[str, Any]]


class MatchCandidate(TypedDict):
    id: str
    confidence: float
    reason: NotRequired[str]


@dataclass(frozen=True, slots=True)
class DescribeResult:
    """The result of ``describe``: revision, providers in scope, scope, model and budgets."""

    revision: str
    providers: list[dict[str, Any]]
    scope: dict[str, list[str]]
    model: dict[str, Any]
    budgets: dict[str, int]

    __repr__ = _compact_repr

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DescribeResult:
        """The result from its JSON form (as ``call`` returns it)."""
        return cls(
            data["revision"], data["providers"], data["scope"], data["model"], data["budgets"]
        )

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON form of the result, as every other surface emits it."""
        return {
            "revision": self.revision,
            "providers": self.providers,
            "scope": self.scope,
            "model": self.model,
            "budgets": self.budgets,
        }


@dataclass(frozen=True, slots=True)
class ListResult:
    """The result of ``list``: a page of capability summaries; ``next_cursor`` gets the next."""

    status: Literal["ok", "empty"]
    revision: str
    items: list[CapabilitySummary]
    next_cursor: str | None = None

    __repr__ = _compact_repr

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ListResult:
        """The result from its JSON form (as ``call`` returns it)."""
        return cls(data["status"], data["revision"], data["items"], data.get("nextCursor"))

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON form of the result, as every other surface emits it."""
        result: dict[str, Any] = {
            "status": self.status,
            "revision": self.revision,
            "items": self.items,
        }
        if self.next_cursor is not None:
            result["nextCursor"] = self.next_cursor
        return result


@dataclass(frozen=True, slots=True)
class ResolveResult:
    """The result of ``resolve``: the declarations, the relation edges followed, the unresolved."""

    status: Literal["ok", "partial"]
    revision: str
    capabilities: list[CapabilityDetail]
    edges: list[dict[str, str]]
    unresolved: list[dict[str, str]]

    __repr__ = _compact_repr

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ResolveResult:
        """The result from its JSON form (as ``call`` returns it)."""
        return cls(
            data["status"],
            data["revision"],
            data["capabilities"],
            data["edges"],
            data["unresolved"],
        )

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON form of the result, as every other surface emits it."""
        return {
            "status": self.status,
            "revision": self.revision,
            "capabilities": self.capabilities,
            "edges": self.edges,
            "unresolved": self.unresolved,
        }


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The result of ``match``: the executor's verdict and its candidates, checked against the
    catalog.
    """

    status: Literal["matched", "no_match", "unknown"]
    revision: str
    executor: str
    candidates: list[MatchCandidate]

    __repr__ = _compact_repr

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchResult:
        """The result from its JSON form (as ``call`` returns it)."""
        return cls(data["status"], data["revision"], data["executor"], data["candidates"])

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON form of the result, as every other surface emits it."""
        return {
            "status": self.status,
            "revision": self.revision,
            "executor": self.executor,
            "candidates": self.candidates,
        }


@dataclass(frozen=True, slots=True)
class DocumentResult:
    """The result of ``read_document``: the document body (UTF-8 text) with its size and SHA-256."""

    capability_id: str
    document_id: str
    media_type: str
    bytes: int
    sha256: str
    text: str

    __repr__ = _compact_repr

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DocumentResult:
        """The result from its JSON form (as ``call`` returns it)."""
        return cls(
            data["capabilityId"],
            data["documentId"],
            data["mediaType"],
            data["bytes"],
            data["sha256"],
            data["text"],
        )

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON form of the result, as every other surface emits it."""
        return {
            "capabilityId": self.capability_id,
            "documentId": self.document_id,
            "mediaType": self.media_type,
            "bytes": self.bytes,
            "sha256": self.sha256,
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class ReloadResult:
    """The result of ``reload``: ``ok`` and each provider's outcome (a failure changes nothing)."""

    ok: bool
    revision: str
    providers: list[dict[str, Any]]
    error: dict[str, str] | None = None

    __repr__ = _compact_repr

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReloadResult:
        """The result from its JSON form (as ``call`` returns it)."""
        return cls(data["ok"], data["revision"], data["providers"], data.get("error"))

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON form of the result, as every other surface emits it."""
        result: dict[str, Any] = {"ok": self.ok}
        if self.error is not None:
            result["error"] = self.error
        result["revision"] = self.revision
        result["providers"] = self.providers
        return result
