"""What an error code means: the text of ``capability-graph explain CODE`` and of its docs page.

Everything here is a pure function over the generated registry
(``capability_graph._generated.taxonomy``, itself generated from
``spec/capability-graph/taxonomy.json``), so the terminal text, the JSON form and the docs page
(``docs/errors/<CODE>.md``, written by ``tools/codegen.py``) cannot disagree: the page embeds
:func:`explain_text` verbatim, and both render the same :func:`explain_json` data.

- :func:`explain_text` -- terminal text of one code, English and Chinese;
- :func:`explain_json` -- the registry entry of one code as JSON data;
- :func:`explain_index_text` / :func:`explain_index_json` -- every code (``explain`` without CODE);
- :func:`explain_markdown` -- the docs page body of one code, with optional real examples;
- :func:`lookup` -- a code given by a user (case-insensitive) -> :class:`ErrorCode`, or ValueError.

Only the standard library and the generated registry are imported: the CLI's ``explain`` must
stay cheap to start.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._generated.taxonomy import (
    NEXT_ACTION_TEXT,
    PHASE_TEXT,
    REGISTRY,
    CodeEntry,
    ErrorCode,
    NextAction,
    Phase,
)

__all__ = [
    "DOCS_PAGE",
    "explain_index_json",
    "explain_index_text",
    "explain_json",
    "explain_markdown",
    "explain_text",
    "lookup",
]

#: Where the page of a code lives in the docs site (relative to the site root).
DOCS_PAGE: Final = "errors/{code}/"

#: The published docs site the text form links to. ``CAPABILITY_GRAPH_DOCS_URL`` (an http or
#: https URL: a mirror, a local build) replaces it in the CLI; the docs pages always use this one.
DOCS_SITE: Final = "https://capability-graph.dev/"
DOCS_SITE_VARIABLE: Final = "CAPABILITY_GRAPH_DOCS_URL"


def docs_site(environ: Mapping[str, str]) -> str:
    """The docs site of ``environ``: its ``CAPABILITY_GRAPH_DOCS_URL`` when that is an http or
    https URL without whitespace (a ``/`` added at its end), else :data:`DOCS_SITE`."""
    given = environ.get(DOCS_SITE_VARIABLE, "")
    if re.fullmatch(r"https?://[^\s/]+(/[^\s]*)?", given, flags=re.ASCII) is None:
        return DOCS_SITE
    return given if given.endswith("/") else given + "/"


# The projection of an executor's error (CG-MODEL-5), said for one model code.
_EXECUTOR_RULE_EN: Final = (
    "An executor that raises this code keeps it (phase match). {action} The message is always "
    "replaced by the reference message: raw executor text never reaches the caller."
)
_EXECUTOR_RULE_ZH: Final = (
    "执行器抛出此错误码时保留该码（phase 为 match）。{action}message 一律替换为参考消息，"
    "执行器原始文本不会到达调用方。"
)
_ACTION_ONLY_EN: Final = "Its nextAction is always {default}; any other action is replaced."
_ACTION_ONLY_ZH: Final = "nextAction 总是 {default}，其他动作会被替换。"
_ACTION_SOME_EN: Final = (
    "Its nextAction is kept if it is {allowed}; a missing or other action becomes {default}."
)
_ACTION_SOME_ZH: Final = "nextAction 为 {allowed} 时保留；缺失或其他动作回退为 {default}。"


def lookup(code: str | ErrorCode) -> ErrorCode:
    """The registry code named by ``code`` (case-insensitive, surrounding spaces ignored).

    Raises ``ValueError`` for a code that is not in the registry.
    """
    if isinstance(code, ErrorCode):
        return code
    try:
        return ErrorCode(str(code).strip().upper())
    except ValueError:
        raise ValueError(f"unknown error code {code!r}") from None


def _entry(code: str | ErrorCode) -> CodeEntry:
    return REGISTRY[lookup(code)]


def explain_json(code: str | ErrorCode) -> dict[str, Any]:
    """The registry entry of ``code`` as JSON data (keys as in ``taxonomy.json``).

    ``defaultAction`` is ``null`` for a code without one; ``retiredIn`` is present only for a
    retired code. ``docs`` is the site-relative path of the code's page.
    """
    entry = _entry(code)
    data: dict[str, Any] = {
        "code": entry.code.value,
        "phases": [phase.value for phase in entry.phases],
        "defaultAction": entry.default_action.value if entry.default_action else None,
        "executorActions": [action.value for action in entry.executor_actions],
        "messages": dict(entry.messages),
        "pointerMessages": entry.pointer_messages,
        "en": {
            "summary": entry.en.summary,
            "trigger": entry.en.trigger,
            "handling": entry.en.handling,
        },
        "zh": {
            "summary": entry.zh.summary,
            "trigger": entry.zh.trigger,
            "handling": entry.zh.handling,
        },
        "since": entry.since,
    }
    if entry.retired_in is not None:
        data["retiredIn"] = entry.retired_in
    data["docs"] = DOCS_PAGE.format(code=entry.code.value)
    return data


def explain_index_json() -> list[dict[str, Any]]:
    """Every registry entry, in registry order (``explain --json`` without a code)."""
    return [explain_json(code) for code in REGISTRY]


def explain_index_text() -> str:
    """One line per code: the code and its English summary (``explain`` without a code)."""
    width = max(len(code.value) for code in REGISTRY)
    lines = [f"{code.value:<{width}}  {entry.en.summary}" for code, entry in REGISTRY.items()]
    return "\n".join(lines) + "\n"


# -- the shared content --------------------------------------------------------------------------


def _phase_lines(phase: Phase) -> tuple[str, str]:
    en, zh = PHASE_TEXT[phase]
    return en, zh


def _action_lines(action: NextAction) -> tuple[str, str]:
    en, zh = NEXT_ACTION_TEXT[action]
    return en, zh


def _is_model_code(entry: CodeEntry) -> bool:
    return entry.code.value.startswith("CG_MODEL_")


def _executor_rule(entry: CodeEntry, *, markdown: bool) -> tuple[str, str] | None:
    """The projection sentence (CG-MODEL-5) for a model code an executor may raise, else None."""
    if not _is_model_code(entry) or entry.default_action is None:
        return None
    wrap = "`{}`".format if markdown else "{}".format
    default = wrap(entry.default_action.value)
    if entry.executor_actions:
        allowed = [entry.default_action, *entry.executor_actions]
        action_en = _ACTION_SOME_EN.format(
            allowed=" or ".join(wrap(a.value) for a in allowed), default=default
        )
        action_zh = _ACTION_SOME_ZH.format(
            allowed=" 或 ".join(wrap(a.value) for a in allowed), default=default
        )
    else:
        action_en = _ACTION_ONLY_EN.format(default=default)
        action_zh = _ACTION_ONLY_ZH.format(default=default)
    return (
        _EXECUTOR_RULE_EN.format(action=action_en),
        _EXECUTOR_RULE_ZH.format(action=action_zh),
    )


# -- terminal text ------------------------------------------------------------------------------


def explain_text(code: str | ErrorCode, *, site: str = DOCS_SITE) -> str:
    """The terminal text of ``capability-graph explain CODE``: English, then Chinese, then the
    full URL of the code's page under ``site``.

    Ends with a newline. The docs page of the code embeds this text verbatim.
    """
    entry = _entry(code)
    lines = [f"{entry.code.value} -- {entry.en.summary} / {entry.zh.summary}", ""]
    for phase in entry.phases:
        en, zh = _phase_lines(phase)
        lines.append(f"  phase:            {phase.value}  ({en} / {zh})")
    if entry.default_action is None:
        lines.append("  nextAction:       (none: the error carries no nextAction / 无 nextAction)")
    else:
        en, zh = _action_lines(entry.default_action)
        lines.append(f"  nextAction:       {entry.default_action.value}  ({en} / {zh})")
    if _is_model_code(entry):
        extra = ", ".join(action.value for action in entry.executor_actions) or "(none / 无)"
        lines.append(f"  executor may set: {extra}")
    for number, (variant, message) in enumerate(entry.messages.items()):
        label = "  message:          " if number == 0 else " " * 20
        lines.append(f"{label}{message}  ({variant})")
    if entry.pointer_messages:
        lines.append("  pointer messages: yes (the message may name a JSON pointer and a type)")
    lines.append(f"  since:            {entry.since}")
    if entry.retired_in is not None:
        lines.append(f"  retired in:       {entry.retired_in}")
    for label, prose in (("English", entry.en), ("中文", entry.zh)):
        lines += [
            "",
            f"  [{label}]",
            f"  trigger:  {prose.trigger}",
            f"  handling: {prose.handling}",
        ]
    rule = _executor_rule(entry, markdown=False)
    if rule is not None:
        lines += ["", f"  executor: {rule[0]}", f"  执行器:   {rule[1]}"]
    lines += ["", f"  docs: {site}{DOCS_PAGE.format(code=entry.code.value)}"]
    return "\n".join(lines) + "\n"


# -- markdown ------------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fence(body: str, language: str, title: str | None = None) -> str:
    fence = "```"
    while fence in body:
        fence += "`"
    header = f'{fence}{language} title="{title}"' if title else f"{fence}{language}"
    return f"{header}\n{body.rstrip(chr(10))}\n{fence}"


def _example_markdown(example: Mapping[str, Any], number: int, code: str) -> list[str]:
    title = str(example.get("title") or f"Example {number}")
    output = example["output"]
    output_text = json.dumps(output, ensure_ascii=False, indent=2)
    error = output.get("error", output) if isinstance(output, Mapping) else output
    parts = [f"### {title}", ""]
    if example.get("description"):
        parts += [str(example["description"]), ""]
    parts += [
        _fence(str(example["script"]), "python", f"{code.lower()}-{number}.py"),
        "",
        f"<!-- example-output:{number} -->",
        _fence(output_text, "json", "Output (the reference SDK, printed by the script)"),
        "",
    ]
    if isinstance(error, Mapping) and error is output:
        error_text = json.dumps(dict(error), ensure_ascii=False, separators=(",", ":"))
        parts += [
            "The same error object on the other surfaces (the conformance suite checks that "
            "all four are identical) / 其他入口返回同一错误对象:",
            "",
            "| surface | what the caller sees |",
            "|---|---|",
            f'| Tool Adapter | `call()` returns `{{"ok":false,"error":{_md_cell(error_text)}}}` |',
            "| MCP | `isError: true`, one text item whose text is the error object, "
            "no `structuredContent` |",
            "| CLI | exit 1, empty stdout, stderr "
            f'`{{"ok":false,"error":{_md_cell(error_text)}}}` |',
            "",
        ]
    return parts


def explain_markdown(
    code: str | ErrorCode, examples: Sequence[Mapping[str, Any]] | None = None
) -> str:
    """The docs page body of ``code`` (Markdown for mkdocs-material), English beside Chinese.

    ``examples`` are real runs of the reference: each is ``{"title", "script", "output"}`` plus
    an optional ``"description"``, where ``script`` is a Python program that prints ``output``
    (one JSON value) when run. The page ends with the verbatim :func:`explain_text`.
    """
    entry = _entry(code)
    name = entry.code.value
    phases = "<br>".join(
        f"`{phase.value}` — {_phase_lines(phase)[0]} / {_phase_lines(phase)[1]}"
        for phase in entry.phases
    )
    if entry.default_action is None:
        action = "none — the error object has no `nextAction` / 无 `nextAction`"
    else:
        en, zh = _action_lines(entry.default_action)
        action = f"`{entry.default_action.value}` — {en} / {zh}"
    executor = (
        ", ".join(f"`{a.value}`" for a in entry.executor_actions) or "—"
        if _is_model_code(entry)
        else "— (not an executor code / 非执行器错误码)"
    )
    messages = "<br>".join(
        f"`{variant}`: {_md_cell(message)}" for variant, message in entry.messages.items()
    )
    pointer = (
        "yes — the message may name a JSON pointer and the expected type, never the value / "
        "可指出 JSON 路径与期望类型，不含取值"
        if entry.pointer_messages
        else "no — always a reference message / 始终为参考消息"
    )
    lines = [
        f"# {name}",
        "",
        f"**{entry.en.summary}** {entry.zh.summary}",
        "",
        "| | |",
        "|---|---|",
        f"| Phase(s) / 阶段 | {phases} |",
        f"| Default nextAction / 默认动作 | {action} |",
        f"| Executor may also set / 执行器可另设 | {executor} |",
        f"| Reference message(s) / 参考消息 | {messages} |",
        f"| Pointer messages / 路径消息 | {pointer} |",
        f"| Since / 起始版本 | {entry.since} |",
    ]
    if entry.retired_in is not None:
        lines.append(f"| Retired in / 退役版本 | {entry.retired_in} |")
    lines += [
        "",
        "## Trigger / 触发",
        "",
        f"- {entry.en.trigger}",
        f"- {entry.zh.trigger}",
        "",
        "## Handling / 处理",
        "",
        f"- {entry.en.handling}",
        f"- {entry.zh.handling}",
        "",
    ]
    rule = _executor_rule(entry, markdown=True)
    if rule is not None:
        lines += ["## From a model executor / 来自模型执行器", "", rule[0], "", rule[1], ""]
    if examples:
        lines += ["## Example / 示例", ""]
        lines += [
            "Produced by running the script below against the reference implementation; the "
            "test suite re-runs it and compares. / 以下输出由参考实现实际运行脚本得到，"
            "测试会重新运行并比对。",
            "",
        ]
        for number, example in enumerate(examples, start=1):
            lines += _example_markdown(example, number, name)
    lines += [
        "## capability-graph explain",
        "",
        _fence(f"$ capability-graph explain {name}\n{explain_text(entry.code)}", "text"),
        "",
    ]
    return "\n".join(lines)
