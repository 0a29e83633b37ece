"""What a model reads of the five tools: no requirement ids or implementer notes, and a measured
budget.

A host sends each tool's name, description and input schema with every model request (function
calling; MCP hosts forward the same three). Five tools within 8,000 characters (about 2,000
tokens at four characters a token) cost 1% of a 200k-token context and leave a host room for
dozens of other servers' tools; today they take 7,950. The output schemas (MCP ``tools/list``
only) are for validating results and are not counted. Implementer notes live in each schema's
``$comment``, which the bundling leaves out of ``tools.json``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TOOLS = json.loads((ROOT / "spec" / "capability-graph" / "tools.json").read_text("utf-8"))["tools"]
BUDGET_CHARACTERS = 8000
REQUIREMENT_ID = re.compile(r"\bCG-[A-Z]+-\d+\b")


def model_text(tool: dict[str, Any]) -> str:
    """The part of a tool a function-calling model reads, as compact JSON."""
    schema = json.dumps(tool["inputSchema"], separators=(",", ":"), ensure_ascii=False)
    return tool["name"] + tool["description"] + schema


def test_the_five_tools_fit_the_budget_a_model_reads() -> None:
    sizes = {tool["name"]: len(model_text(tool)) for tool in TOOLS}
    assert sum(sizes.values()) <= BUDGET_CHARACTERS, sizes


def test_no_requirement_id_reaches_a_model() -> None:
    text = json.dumps(TOOLS, ensure_ascii=False)
    assert REQUIREMENT_ID.findall(text) == []


def test_no_implementer_comment_reaches_a_model() -> None:
    assert '"$comment"' not in json.dumps(TOOLS)
