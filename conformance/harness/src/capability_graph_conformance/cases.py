"""Cases (one vector on one surface) and the checks of each surface's projection (CG-SURF-1).

From one ``expect.error`` E every surface is checked for its own envelope:

* SDK: the operation raises the implementation's GraphError and its ``to_json()`` is E;
* Tool Adapter: ``call`` returns exactly ``{"ok": false, "error": E}`` (never raises);
* MCP: the ``tools/call`` result has ``isError: true``, exactly one text item whose text is the
  JSON of E, and no ``structuredContent``;
* CLI: exit status 1, nothing on stdout, and exactly one line on stderr:
  ``{"ok": false, "error": E}``.

E itself must be a valid error object (exactly ``code``, ``phase``, ``message`` and, only when
the code has one, ``nextAction``) whose code, phase and nextAction are the expected ones (the
message too when the vector gives it). Results are checked against the tool's output schema and
the vector's pattern. Across the surfaces of a vector, the observed error objects (or results)
must be identical, message included (:func:`cross_check`). No surface may emit a forbidden string
in any byte (:func:`check_forbidden`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ._json import canonical, preview
from .matching import match
from .schemas import SchemaSet
from .suite import Vector

__all__ = [
    "CaseResult",
    "Check",
    "Outcome",
    "check_cli_envelope",
    "check_error_object",
    "check_forbidden",
    "check_mcp_result",
    "check_result",
    "cross_check",
]

Outcome = Literal["passed", "failed", "errored", "skipped", "not-applicable"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "errored", "skipped", "not-applicable")


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "passed": self.passed}
        if self.detail:
            data["detail"] = self.detail
        return data


@dataclass
class CaseResult:
    vector: Vector
    surface: str
    outcome: Outcome = "passed"
    reason: str = ""
    checks: list[Check] = field(default_factory=list)
    duration_ms: int = 0
    evidence: Any = None
    #: What the surface reported, in step order, for the cross-surface comparison:
    #: ("error", E) or ("result", R).
    observed: list[tuple[str, Any]] = field(default_factory=list)
    expected_failure: bool = False
    #: MCP: the failure was seen on a server shared by a batch of vectors and could not be
    #: confirmed on a dedicated server (the report says so).
    unconfirmed: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.vector.id, self.surface)

    def check(self, name: str, passed: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, passed, "" if passed else detail))
        return passed

    def finish(self) -> None:
        """Settle the outcome from the checks (errored and skipped stay as they are)."""
        if self.outcome in ("errored", "skipped", "not-applicable"):
            return
        failed = [c for c in self.checks if not c.passed]
        if failed:
            self.outcome = "failed"
            self.reason = "; ".join(f"{c.name}: {c.detail}" for c in failed[:3])
        elif not self.checks:
            self.outcome = "errored"
            self.reason = self.reason or "no check ran"
        else:
            self.outcome = "passed"
            self.reason = ""

    def error(self, reason: str, evidence: Any = None) -> None:
        self.outcome = "errored"
        self.reason = reason
        if evidence is not None:
            self.evidence = evidence

    def skip(self, reason: str) -> None:
        self.outcome = "skipped"
        self.reason = reason


# -- error objects and results -------------------------------------------------------------------


def check_error_object(
    case: CaseResult, error: Any, expected: dict[str, Any], schemas: SchemaSet, label: str = ""
) -> None:
    """E is a valid error object with the expected code, phase, nextAction (and message)."""
    prefix = f"{label}: " if label else ""
    problems = schemas.errors("error.schema.json", error)
    case.check(
        "error-object-schema",
        not problems,
        prefix + "; ".join(problems) + f" in {preview(error, 300)}",
    )
    if not isinstance(error, dict):
        return
    case.check(
        "error-code",
        error.get("code") == expected.get("code"),
        f"{prefix}expected {expected.get('code')}, got {error.get('code')!r}",
    )
    case.check(
        "error-phase",
        error.get("phase") == expected.get("phase"),
        f"{prefix}expected {expected.get('phase')}, got {error.get('phase')!r}",
    )
    want, got = expected.get("nextAction"), error.get("nextAction")
    case.check(
        "error-next-action",
        want == got and (("nextAction" in error) == ("nextAction" in expected)),
        f"{prefix}expected {want if want else 'no nextAction'}, got "
        + (repr(got) if "nextAction" in error else "no nextAction"),
    )
    if "message" in expected:
        case.check(
            "error-message",
            error.get("message") == expected["message"],
            f"{prefix}expected {expected['message']!r}, got {error.get('message')!r}",
        )


def check_result(
    case: CaseResult,
    result: Any,
    pattern: Any,
    schemas: SchemaSet,
    *,
    tool: str | None = None,
    schema: str | None = None,
    captures: dict[str, Any] | None = None,
) -> None:
    if tool is not None:
        problems = schemas.result_errors(tool, result)
        case.check("result-schema", not problems, "; ".join(problems))
    elif schema is not None:
        problems = schemas.errors(schema, result)
        case.check("result-schema", not problems, "; ".join(problems))
    mismatches = match(pattern, result, captures)
    case.check("result-match", not mismatches, "; ".join(mismatches[:4]))


# -- the MCP envelope ----------------------------------------------------------------------------


def check_mcp_result(
    case: CaseResult, raw: Any, expect: dict[str, Any], tool: str, schemas: SchemaSet
) -> None:
    """Check the raw ``result`` of a ``tools/call`` response against ``expect``."""
    if not isinstance(raw, dict):
        case.check("mcp-tool-result", False, f"the result is not an object: {preview(raw, 200)}")
        return
    content = raw.get("content")
    items_ok = (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and content[0].get("type") == "text"
        and isinstance(content[0].get("text"), str)
    )
    case.check(
        "mcp-one-text-item", items_ok, f"content must be one text item: {preview(content, 300)}"
    )
    text_value: Any = None
    if items_ok:
        assert isinstance(content, list)
        try:
            text_value = json.loads(content[0]["text"])
        except ValueError:
            case.check(
                "mcp-text-json",
                False,
                f"the text item is not JSON: {preview(content[0]['text'], 200)}",
            )
    if "error" in expect:
        case.check("mcp-is-error", raw.get("isError") is True, f"isError is {raw.get('isError')!r}")
        case.check(
            "mcp-no-structured-content",
            "structuredContent" not in raw,
            f"a failed call carries structuredContent {preview(raw.get('structuredContent'), 200)}",
        )
        problems = schemas.errors("mcp-tool-result.schema.json", raw)
        case.check("mcp-envelope-schema", not problems, "; ".join(problems))
        if items_ok and text_value is not None:
            case.observed.append(("error", text_value))
            check_error_object(case, text_value, expect["error"], schemas)
        return
    case.check(
        "mcp-not-error",
        "isError" not in raw,  # not even false (CG-MCP-9)
        f"a success has the member isError {raw.get('isError')!r}",
    )
    structured = raw.get("structuredContent")
    if not case.check(
        "mcp-structured-content", isinstance(structured, dict), "no structuredContent object"
    ):
        return
    problems = schemas.errors("mcp-tool-result.schema.json", raw)
    case.check("mcp-envelope-schema", not problems, "; ".join(problems))
    if items_ok:
        case.check(
            "mcp-text-equals-structured",
            text_value is not None and canonical(text_value) == canonical(structured),
            "the text item does not hold the same JSON as structuredContent",
        )
    case.observed.append(("result", structured))
    check_result(case, structured, expect["result"], schemas, tool=tool)


# -- the CLI envelope (also an MCP server that cannot open its configuration) ---------------------


def _check_stdout_report(case: CaseResult, stdout: bytes, schemas: SchemaSet, prefix: str) -> None:
    """A maintenance report beside the envelope: text, or (--json) a failed MaintenanceReport."""
    if not case.check(f"{prefix}-stdout-report", bool(stdout.strip()), "stdout is empty"):
        return
    try:
        report = json.loads(stdout)
    except ValueError:
        return  # the human form: any text
    problems = schemas.errors("maintenance-report.schema.json", report)
    if isinstance(report, dict) and report.get("status") != "failed":
        problems.append(f"status is {report.get('status')!r}, not 'failed'")
    case.check(
        f"{prefix}-stdout-report", not problems, "; ".join(problems) + f" in {preview(stdout, 300)}"
    )


def check_cli_envelope(
    case: CaseResult,
    exit_code: int | None,
    stdout: bytes,
    stderr: bytes,
    expected: dict[str, Any],
    schemas: SchemaSet,
    prefix: str = "cli",
    *,
    stdout_report: bool = False,
) -> None:
    """Exit 1 (130 for a cancelled match), stderr one line with the envelope; stdout empty, or
    (``stdout_report``) the maintenance command's report."""
    want_exit = 130 if expected.get("code") == "CG_MODEL_CANCELLED" else 1
    case.check(
        f"{prefix}-exit-status", exit_code == want_exit, f"expected {want_exit}, got {exit_code}"
    )
    if stdout_report:
        _check_stdout_report(case, stdout, schemas, prefix)
    else:
        case.check(
            f"{prefix}-stdout-empty", stdout == b"", f"stdout is not empty: {preview(stdout, 300)}"
        )
    try:
        text = stderr.decode("utf-8")
    except UnicodeDecodeError:
        case.check(f"{prefix}-stderr-one-line", False, "stderr is not UTF-8")
        return
    body = text[:-1] if text.endswith("\n") else text
    if not case.check(
        f"{prefix}-stderr-one-line",
        bool(body) and "\n" not in body and "\r" not in body,
        f"stderr must be exactly one line: {preview(text, 300)}",
    ):
        return
    try:
        envelope = json.loads(body)
    except ValueError:
        case.check(f"{prefix}-envelope", False, f"stderr is not JSON: {preview(body, 300)}")
        return
    problems = schemas.errors("cli-error.schema.json", envelope)
    case.check(
        f"{prefix}-envelope", not problems, "; ".join(problems) + f" in {preview(envelope, 300)}"
    )
    if not (isinstance(envelope, dict) and isinstance(envelope.get("error"), dict)):
        return
    case.observed.append(("error", envelope["error"]))
    check_error_object(case, envelope["error"], expected, schemas)


# -- leaks -----------------------------------------------------------------------------------------


def check_forbidden(
    case: CaseResult, chunks: Iterable[tuple[str, bytes]], forbid: Sequence[str]
) -> None:
    """No forbidden string in any chunk: searched in the raw bytes and, for chunks that are JSON
    (or JSON lines), in the decoded text too (an escape must not hide a leak)."""
    found: list[str] = []
    for label, data in chunks:
        views = [data.decode("utf-8", errors="replace")]
        for line in data.splitlines():
            try:
                views.append(json.dumps(json.loads(line), ensure_ascii=False))
            except ValueError:
                continue
        for secret in forbid:
            if any(secret in view for view in views):
                found.append(f"{secret!r} in {label}")
    case.check("no-forbidden-text", not found, "; ".join(sorted(set(found))[:5]))


# -- across surfaces -------------------------------------------------------------------------------


def cross_check(cases: Sequence[CaseResult]) -> None:
    """The surfaces of one vector reported identical error objects (or results), step by step.

    When they disagree, the surfaces outside the largest agreeing group fail (ties keep the group
    holding the SDK, else the first). Cases without observations take no part.
    """
    taking_part = [c for c in cases if c.observed and c.outcome not in ("errored", "skipped")]
    if len(taking_part) < 2:
        return
    forms = {c.surface: canonical(c.observed) for c in taking_part}
    counts = Counter(forms.values())
    best = max(counts.values())
    leaders = [form for form, n in counts.items() if n == best]
    if len(leaders) > 1:
        sdk_form = forms.get("sdk")
        leader = sdk_form if sdk_form in leaders else forms[taking_part[0].surface]
    else:
        leader = leaders[0]
    reference = next(c for c in taking_part if forms[c.surface] == leader)
    for case in taking_part:
        same = forms[case.surface] == leader
        detail = (
            ""
            if same
            else (
                f"{case.surface} reported {preview(case.observed, 300)}, "
                f"{reference.surface} reported {preview(reference.observed, 300)}"
            )
        )
        case.check("identical-across-surfaces", same, detail)
