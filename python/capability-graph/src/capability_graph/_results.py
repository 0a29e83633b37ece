"""Typed results of the SDK operations.

Each result is a small frozen dataclass with the fields of the spec's result in snake_case and
``to_json()`` returning exactly the spec's JSON form (which is what every other surface emits).
Nested items stay JSON-shaped dictionaries (typed as ``TypedDict``s): they are the contract's
objects, passed through without copying.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

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
    revision: str
    providers: list[dict[str, Any]]
    scope: dict[str, list[str]]
    model: dict[str, Any]
    budgets: dict[str, int]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DescribeResult:
        return cls(
            data["revision"], data["providers"], data["scope"], data["model"], data["budgets"]
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "revision": self.revision,
            "providers": self.providers,
            "scope": self.scope,
            "model": self.model,
            "budgets": self.budgets,
        }


@dataclass(frozen=True, slots=True)
class ListResult:
    status: Literal["ok", "empty"]
    revision: str
    items: list[CapabilitySummary]
    next_cursor: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ListResult:
        return cls(data["status"], data["revision"], data["items"], data.get("nextCursor"))

    def to_json(self) -> dict[str, Any]:
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
    status: Literal["ok", "partial"]
    revision: str
    capabilities: list[CapabilityDetail]
    edges: list[dict[str, str]]
    unresolved: list[dict[str, str]]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ResolveResult:
        return cls(
            data["status"],
            data["revision"],
            data["capabilities"],
            data["edges"],
            data["unresolved"],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "revision": self.revision,
            "capabilities": self.capabilities,
            "edges": self.edges,
            "unresolved": self.unresolved,
        }


@dataclass(frozen=True, slots=True)
class MatchResult:
    status: Literal["matched", "no_match", "unknown"]
    revision: str
    executor: str
    candidates: list[MatchCandidate]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchResult:
        return cls(data["status"], data["revision"], data["executor"], data["candidates"])

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "revision": self.revision,
            "executor": self.executor,
            "candidates": self.candidates,
        }


@dataclass(frozen=True, slots=True)
class DocumentResult:
    capability_id: str
    document_id: str
    media_type: str
    bytes: int
    sha256: str
    text: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DocumentResult:
        return cls(
            data["capabilityId"],
            data["documentId"],
            data["mediaType"],
            data["bytes"],
            data["sha256"],
            data["text"],
        )

    def to_json(self) -> dict[str, Any]:
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
    ok: bool
    revision: str
    providers: list[dict[str, Any]]
    error: dict[str, str] | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReloadResult:
        return cls(data["ok"], data["revision"], data["providers"], data.get("error"))

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"ok": self.ok}
        if self.error is not None:
            result["error"] = self.error
        result["revision"] = self.revision
        result["providers"] = self.providers
        return result
