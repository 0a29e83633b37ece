"""What the generative mode works with: a generated case and what one surface answered to it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from .._json import canonical

__all__ = ["GenCase", "Observation"]


@dataclass
class GenCase:
    """One generated input: the working folder it needs and one action.

    ``action`` is ``{"call": {"tool", "arguments"}}`` (SDK, Tool Adapter, MCP ``tools/call``,
    CLI ``call TOOL --arguments``), ``{"argv": [...]}`` (CLI only; ``{config}`` is the
    configuration's path) or ``{"frame": TEXT}`` (one raw MCP stdin line after ``initialize``).
    The configuration is ``config_text`` verbatim when given, else the fixture's configuration
    with ``config`` applied as a JSON Merge Patch, else the fixture's file; ``files`` are written
    into the folder too (definition files of a generated catalog)."""

    campaign: str
    fixture: str
    action: dict[str, Any]
    config: Any | None = None
    config_text: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    index: int = 0

    def folder_key(self) -> str:
        """Cases with the same key can share a working folder (and an open graph)."""
        text = canonical([self.fixture, self.config, self.config_text, self.files])
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    def with_action(self, action: dict[str, Any]) -> GenCase:
        return GenCase(
            self.campaign,
            self.fixture,
            action,
            self.config,
            self.config_text,
            dict(self.files),
            dict(self.meta),
            self.index,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "campaign": self.campaign,
            "index": self.index,
            "fixture": self.fixture,
        }
        if self.config is not None:
            data["config"] = self.config
        if self.config_text is not None:
            data["configText"] = self.config_text
        if self.files:
            data["files"] = self.files
        if self.meta:
            data["meta"] = self.meta
        data.update(self.action)
        return data


@dataclass
class Observation:
    """What one surface of one implementation answered, reduced to what the contract compares.

    ``value`` is a JSON form per surface:

    * sdk: ``{"returned": R}``, ``{"raised": E}``, ``{"raisedOther": TYPE}`` or, when the graph
      did not open, ``{"open": {"raised": E}}``;
    * tool: ``{"returned": {ok, result | error}}`` (or as sdk when it raised or did not open);
    * mcp: ``{"result": {content, isError, structuredContent?}}``, ``{"protocolError": CODE}``,
      ``{"noResponse": true}``, ``{"exited": {exit, stdout, stderr}}`` (did not start);
    * cli: ``{"exit": N, "stdout": TEXT, "stderr": TEXT}``.

    ``errored`` is set when the harness could not get an answer at all (the driver died, a
    timeout) and says why; ``extra`` keeps what is shown but not compared (SDK display texts,
    MCP protocol error messages)."""

    surface: str
    value: Any = None
    errored: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"surface": self.surface, "value": self.value}
        if self.errored:
            data["errored"] = self.errored
        if self.extra:
            data["extra"] = self.extra
        return data
