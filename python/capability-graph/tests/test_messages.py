"""Pointer messages follow the grammar of spec/capability-graph/spec/messages.md ([CG-MSG-*]).

The core's table of expected formats is the spec's, unknown keys are answered with the keys the
object allows (never the caller's key), and a pattern fault names the expected format.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capability_graph import BlockingCapabilityGraph, GraphError
from capability_graph._core.schemas import FORMATS, pointer_message
from capability_graph_testing.common import (
    REPO,
    SCHEMAS,
    capability,
    error_of,
    expected,
    inline,
    provider,
)

MESSAGES_SPEC = REPO / "spec" / "capability-graph" / "spec" / "messages.md"
SECRET_KEY = "zz-secret-7f3a"
# Titled patterns that never reach a pointer message: result-only values, and context keys,
# whose messages are the fixed texts of [CG-MSG-11].
NOT_IN_MESSAGES = {"Revision", "Sha256", "ReportText", "ContextKey"}


def _spec_formats() -> dict[str, str]:
    text = MESSAGES_SPEC.read_text(encoding="utf-8")
    table = text.split("**[CG-MSG-6]**", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([A-Za-z]+)` \| `([^`]+)` \|$", table, flags=re.MULTILINE))


def _titled_patterns() -> set[str]:
    titles: set[str] = set()
    for path in SCHEMAS.glob("*.schema.json"):
        stack: list[Any] = [json.loads(path.read_text(encoding="utf-8"))]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if "pattern" in node and "title" in node:
                    titles.add(node["title"])
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return titles


def test_the_core_uses_the_format_table_of_the_spec() -> None:
    assert _spec_formats() == FORMATS


def test_every_titled_pattern_a_caller_or_host_can_violate_has_an_expected_format() -> None:
    assert _titled_patterns() - NOT_IN_MESSAGES == set(FORMATS)


def _call_error(tool: str, arguments: Any) -> dict[str, str]:
    config = inline(provider("acme", capability("a")))
    with BlockingCapabilityGraph.open(config) as graph, pytest.raises(GraphError) as excinfo:
        graph.call(tool, arguments)
    return error_of(excinfo)


@pytest.mark.parametrize(
    ("tool", "arguments", "phase", "allowed"),
    [
        ("describe_graph", {}, "query", "none"),
        ("list_capabilities", {}, "query", "providers, tags, limit, cursor"),
        ("resolve_capabilities", {"ids": ["acme::a"]}, "query", "ids, relations"),
        (
            "match_capabilities",
            {"request": "pay"},
            "match",
            "request, context, providers, limit, timeoutMs",
        ),
        (
            "read_document",
            {"capabilityId": "acme::a", "documentId": "d"},
            "document",
            "capabilityId, documentId",
        ),
    ],
    ids=["describe", "list", "resolve", "match", "read"],
)
def test_an_unknown_request_key_is_answered_with_the_allowed_keys_never_the_key(
    tool: str, arguments: dict[str, Any], phase: str, allowed: str
) -> None:
    error = _call_error(tool, {**arguments, SECRET_KEY: 1})
    assert error == expected(
        "CG_INPUT_INVALID", phase, f"/ has a key that is not allowed (allowed: {allowed})"
    )


def test_a_match_sent_text_instead_of_request_learns_the_allowed_keys() -> None:
    assert _call_error("match_capabilities", {"text": "pay"})["message"] == (
        "/ has a key that is not allowed (allowed: request, context, providers, limit, timeoutMs)"
    )


def test_an_unknown_key_of_a_nested_request_object_names_that_objects_keys() -> None:
    error = _call_error("resolve_capabilities", {"ids": ["acme::a"], "relations": {"deep": 2}})
    assert error["message"] == "/relations has a key that is not allowed (allowed: kinds, depth)"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "resolve_capabilities",
            {"ids": ["acme.a"]},
            "/ids/0 does not have the required format (expected: provider::capability)",
        ),
        (
            "list_capabilities",
            {"providers": ["Acme"]},
            "/providers/0 does not have the required format"
            " (expected: a-z, then up to 63 of a-z 0-9 . _ -)",
        ),
        (
            "read_document",
            {"capabilityId": "acme::a", "documentId": "-d"},
            "/documentId does not have the required format"
            " (expected: A-Z or a-z, then up to 127 of A-Z a-z 0-9 . _ -)",
        ),
    ],
    ids=["capability-id", "provider-id", "document-id"],
)
def test_a_malformed_id_names_the_expected_format(
    tool: str, arguments: dict[str, Any], message: str
) -> None:
    assert _call_error(tool, arguments)["message"] == message


def test_the_hint_is_left_out_when_the_message_would_pass_300_characters() -> None:
    pointer = "/" + "/".join(["0"] * 70)  # 140 characters of array indexes
    hint = "allowed: " + ", ".join(["capabilityId"] * 12)
    message = pointer_message(pointer, "has a key that is not allowed", hint)
    assert message == f"{pointer} has a key that is not allowed"
    short = pointer_message("/", "has a key that is not allowed", "allowed: none")
    assert short == "/ has a key that is not allowed (allowed: none)"


def test_a_message_of_exactly_300_characters_keeps_its_hint() -> None:
    phrase = "has a key that is not allowed"
    hint = "x" * (300 - len("/ ") - len(phrase) - len(" ()"))
    assert len(pointer_message("/", phrase, hint)) == 300


def _table_messages(requirement: str) -> list[str]:
    """The last column of the table under ``requirement`` in messages.md."""
    text = MESSAGES_SPEC.read_text(encoding="utf-8")
    section = text.split(f"**[{requirement}]**", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    return [re.findall(r"`([^`]+)`", row.rsplit("|", 2)[-2])[0] for row in rows]


def test_the_context_messages_are_the_closed_set_of_the_spec() -> None:
    from capability_graph._core.context import validate_context

    faults: list[Any] = [
        "text",
        {f"k{i}": 1 for i in range(65)},
        {"1st": 1},
        {"a": "x" * 1025},
        {"a": "\ud800"},
        {"a": 2**53 + 1},
        {"a": None},
    ]
    messages = []
    for context in faults:
        with pytest.raises(GraphError) as excinfo:
            validate_context(context)
        messages.append(error_of(excinfo)["message"])
    assert messages == _table_messages("CG-MSG-11")


def test_the_pure_json_phrases_are_the_ones_of_the_spec() -> None:
    from capability_graph._core.json import NotPureJson, check_pure_value, parse_pure_json

    def reason_of(check: Any) -> str:
        with pytest.raises(NotPureJson) as excinfo:
            check()
        problem = excinfo.value
        return pointer_message(problem.pointer, problem.reason)

    deep: Any = "leaf"
    for _ in range(33):
        deep = [deep]
    produced = [
        reason_of(lambda: check_pure_value({"limit": None})),
        reason_of(lambda: check_pure_value({"limit": 2**53 + 1})),
        reason_of(lambda: check_pure_value({"limit": float("nan")})),
        reason_of(lambda: check_pure_value([deep])).rsplit(" ", 4)[-4:],
        reason_of(lambda: check_pure_value({"limit": "\ud800"})),
    ]
    table = _table_messages("CG-MSG-9")
    assert produced[0] == table[0].replace("<pointer>", "/limit")
    assert produced[1] == table[1].replace("<pointer>", "/limit")
    assert produced[2] == table[2].replace("<pointer>", "/limit")
    assert produced[3] == table[3].split(" ")[1:]
    assert produced[4] == table[4].replace("<pointer>", "/limit")
    parsed = [
        reason_of(lambda: parse_pure_json(b"\xff")),
        reason_of(lambda: parse_pure_json(b"\xef\xbb\xbf{}")),
        reason_of(lambda: parse_pure_json(b'{"a": 1, "a": 2}')),
        reason_of(lambda: parse_pure_json(b"{")),
    ]
    assert parsed == table[5:9]


def _open_error(config: Any) -> dict[str, str]:
    with pytest.raises(GraphError) as excinfo:
        BlockingCapabilityGraph.open(config)
    return error_of(excinfo)


UNKNOWN_STEP = {"status": "unknown", "candidates": []}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"model": {"executor": "scripted", "steps": [], SECRET_KEY: 1}},
            "/model has a key that is not allowed (allowed: executor, steps, timeoutMs)",
        ),
        (
            {"model": {"executor": "lexical", "steps": []}},
            "/model has a key that is not allowed (allowed: executor, timeoutMs)",
        ),
        (
            {"model": {"executor": "codex", SECRET_KEY: 1}},
            "/model has a key that is not allowed (allowed: executor, model, timeoutMs)",
        ),
        (
            {"providers": [{"path": "a.json", SECRET_KEY: "d"}]},
            "/providers/0 has a key that is not allowed (allowed: path, documentRoot)",
        ),
        (
            {"model": {"executor": "scripted", "steps": [{"return": UNKNOWN_STEP, "x": 1}]}},
            "/model/steps/0 has a key that is not allowed (allowed: return)",
        ),
        (
            {"model": {"executor": "scripted", "steps": [{"sleepMs": 0, "then": {"raise": {}}}]}},
            "/model/steps/0/then/raise requires the key code",
        ),
        # Two branches fit but for one member each: the combinator itself ([CG-MSG-14]).
        (
            {"providers": [{"path": "a.json", "definition": {}}]},
            "/providers/0 does not match any allowed shape",
        ),
        (
            {"model": {"executor": "scripted", "steps": [{"return": 1, "raiseException": "x"}]}},
            "/model/steps/0 does not match any allowed shape",
        ),
    ],
    ids=[
        "scripted",
        "lexical-given-steps",
        "codex",
        "file-source",
        "step",
        "nested",
        "both",
        "two",
    ],
)
def test_an_unknown_key_of_a_variant_names_the_keys_of_that_variant(
    config: dict[str, Any], message: str
) -> None:
    """[CG-MSG-17]: the one branch failing only by unknown members is the one reported."""
    full = {"providers": [], **config}
    assert _open_error(full) == expected("CG_CONFIG_INVALID", "config", message)
    assert SECRET_KEY not in message


def test_an_unknown_key_of_a_path_document_names_the_keys_of_a_path_document() -> None:
    document = {"id": "d", "title": "D", "path": "d.md", SECRET_KEY: "en"}
    config = inline(provider("docs", capability("a", documents=[document])))
    assert _open_error(config) == expected(
        "CG_DEFINITION_INVALID",
        "load",
        "/capabilities/0/documents/0 has a key that is not allowed"
        " (allowed: id, title, role, locale, path)",
    )


def test_a_null_context_is_the_null_rule_of_the_request_not_a_context_fault() -> None:
    """[CG-CTX-5]: `"context": null` is a shape fault, before scope and the executor."""
    error = _call_error(
        "match_capabilities", {"request": "pay", "context": None, "providers": ["elsewhere"]}
    )
    assert error == expected(
        "CG_INPUT_INVALID", "match", "/context must not be null (omit the key instead)"
    )


# -- a oneOf with a discriminator ([CG-MSG-21]) ---------------------------------------------------

EXECUTORS = '"scripted", "lexical", "openai", "codex"'
#: One valid section of each executor, every option given.
VALID_MODELS: dict[str, dict[str, Any]] = {
    "scripted": {"executor": "scripted", "steps": [{"return": UNKNOWN_STEP}], "timeoutMs": 1000},
    "lexical": {"executor": "lexical", "timeoutMs": 1000},
    "openai": {
        "executor": "openai",
        "baseUrl": "https://api.example.com/v1",
        "model": "gpt-x",
        "apiKeyEnv": "CG_KEY",
        "timeoutMs": 1000,
    },
    "codex": {"executor": "codex", "model": "o4-mini", "timeoutMs": 1000},
}
REQUIRED = {"scripted": ["executor", "steps"], "lexical": ["executor"], "codex": ["executor"]}
REQUIRED["openai"] = ["executor", "baseUrl", "model", "apiKeyEnv"]


def test_the_discriminators_are_derived_from_the_schemas() -> None:
    """[CG-MSG-21]: derived from the branches (a required member with a const in each)."""
    from capability_graph._core.schemas import Discriminator, discriminators

    assert discriminators() == {
        "ModelConfig": Discriminator("executor", ("scripted", "lexical", "openai", "codex")),
        "DocumentMetadata": Discriminator("kind", ("file", "url")),
        "ReloadResult": Discriminator("ok", (True, False)),
        "ProviderReloadOutcome": Discriminator("ok", (True, False)),
        "ToolOutcome": Discriminator("ok", (True, False)),
    }


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ({"executor": "openai", "model": "gpt-x"}, "/model requires the key baseUrl"),
        (
            {"executor": "openai", "baseUrl": "https://a.example/v1", "model": "m"},
            "/model requires the key apiKeyEnv",
        ),
        ({"executor": "scripted", "timeoutMs": 5}, "/model requires the key steps"),
        (
            {**VALID_MODELS["openai"], "model": 5},
            "/model/model must be a string",
        ),
        ({**VALID_MODELS["openai"], "apiKeyEnv": ["K"]}, "/model/apiKeyEnv must be a string"),
        ({"executor": "codex", "model": "a b"}, "/model/model does not have the required format"),
        ({"executor": "codex", "timeoutMs": "5000"}, "/model/timeoutMs must be an integer"),
        ({"executor": "lexical", "timeoutMs": 0}, "/model/timeoutMs must be at least 1"),
        ({"executor": "scripted", "steps": {}}, "/model/steps must be an array"),
        (
            {"executor": "scripted", "steps": [{"return": UNKNOWN_STEP}], "timeoutMs": 600001},
            "/model/timeoutMs must be at most 600000",
        ),
        (
            {**VALID_MODELS["openai"], "baseUrl": "ftp://x"},
            "/model/baseUrl does not have the required format"
            " (expected: an absolute http or https URL without query or fragment)",
        ),
        # Faults below the branch keep the rules of the oneOf they are in ([CG-MSG-14]).
        (
            {"executor": "scripted", "steps": [{"sleepMs": -1, "then": {"return": 1}}]},
            "/model/steps/0/sleepMs must be at least 0",
        ),
        (
            {"executor": "scripted", "steps": [{"sleepMs": 5}]},
            "/model/steps/0 does not match any allowed shape",
        ),
        # An unknown key names the keys of the executor chosen ([CG-MSG-4]).
        (
            {"executor": "codex", SECRET_KEY: 1},
            "/model has a key that is not allowed (allowed: executor, model, timeoutMs)",
        ),
    ],
    ids=[
        "openai-without-base-url",
        "openai-without-api-key-env",
        "scripted-without-steps",
        "openai-model-number",
        "openai-api-key-env-array",
        "codex-model-format",
        "codex-timeout-string",
        "lexical-timeout-zero",
        "scripted-steps-object",
        "scripted-timeout-too-long",
        "openai-base-url-format",
        "step-below",
        "step-of-no-kind",
        "unknown-key",
    ],
)
def test_a_fault_of_the_executor_chosen_is_named_in_its_terms(
    model: dict[str, Any], message: str
) -> None:
    """[CG-MSG-21] step 4: the value judged by the branch its executor selects."""
    assert _open_error({"providers": [], "model": model}) == expected(
        "CG_CONFIG_INVALID", "config", message
    )


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ({"executor": "oracle"}, f"/model/executor must be one of: {EXECUTORS}"),
        ({"executor": "OpenAI", "model": "gpt-x"}, f"/model/executor must be one of: {EXECUTORS}"),
        ({"executor": 5}, f"/model/executor must be one of: {EXECUTORS}"),
        ({"executor": True}, f"/model/executor must be one of: {EXECUTORS}"),
        ({"executor": ["openai"]}, f"/model/executor must be one of: {EXECUTORS}"),
        ({"model": "gpt-x", "baseUrl": "https://a.example/v1"}, "/model requires the key executor"),
        ({}, "/model requires the key executor"),
        ({SECRET_KEY: "openai"}, "/model requires the key executor"),
        ("openai", "/model must be an object"),
        ([{"executor": "openai"}], "/model must be an object"),
        (5, "/model must be an object"),
    ],
    ids=[
        "unknown",
        "case",
        "number",
        "boolean",
        "array",
        "missing",
        "empty",
        "secret-key",
        "string",
        "array-section",
        "number-section",
    ],
)
def test_a_model_section_that_selects_no_executor_names_the_discriminator(
    model: Any, message: str
) -> None:
    """[CG-MSG-21] steps 1 to 3: not an object, no executor, or one there is not."""
    error = _open_error({"providers": [], "model": model})
    assert error == expected("CG_CONFIG_INVALID", "config", message)
    assert SECRET_KEY not in error["message"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"providers": [{"path": "a.json", "definition": {}}]},
            "/providers/0 does not match any allowed shape",
        ),
        ({"providers": [{}]}, "/providers/0 does not match any allowed shape"),
        (
            {
                "providers": [],
                "model": {"executor": "scripted", "steps": [{"return": 1, "raise": {"code": "x"}}]},
            },
            "/model/steps/0 does not match any allowed shape",
        ),
    ],
    ids=["source-of-two-kinds", "source-of-no-kind", "step-of-two-kinds"],
)
def test_a_one_of_without_a_discriminator_keeps_the_combinator_message(
    config: dict[str, Any], message: str
) -> None:
    """[CG-MSG-14]: a provider source and a scripted step have no discriminator."""
    assert _open_error(config) == expected("CG_CONFIG_INVALID", "config", message)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


#: Strings each string member cannot take, by executor and member.
BAD_TEXT = {
    "baseUrl": ["", "ftp://x", "https://a b/v1", "https://a.example/v1?q=1"],
    "model": ["", "a\nb", "m" * 257],
    "apiKeyEnv": ["", "1ABC", "A-B"],
}
BAD_CODEX_MODEL = ["", "a b", "-x", "m" * 129]


def _corrupt(executor: str, member: str) -> st.SearchStrategy[Any]:
    """Values ``member`` cannot take: another JSON type, or its own type out of its rules."""
    if member == "executor":
        return _JSON.filter(lambda v: not (isinstance(v, str) and v in VALID_MODELS))
    if member == "timeoutMs":
        wrong = _JSON.filter(lambda v: not isinstance(v, int) or isinstance(v, bool))
        return wrong | st.integers(max_value=0) | st.integers(min_value=600001, max_value=2**53)
    if member == "steps":
        return _JSON.filter(lambda v: not isinstance(v, list)) | st.lists(_SCALARS, min_size=1)
    texts = BAD_CODEX_MODEL if executor == "codex" else BAD_TEXT[member]
    return _JSON.filter(lambda v: not isinstance(v, str)) | st.sampled_from(texts)


@st.composite
def _broken_model(draw: st.DrawFn) -> tuple[dict[str, Any], str, bool]:
    executor = draw(st.sampled_from(sorted(VALID_MODELS)))
    model = json.loads(json.dumps(VALID_MODELS[executor]))
    member = draw(st.sampled_from(sorted(model)))
    deleted = member in REQUIRED[executor] and draw(st.booleans())
    if deleted:
        del model[member]
    else:
        model[member] = draw(_corrupt(executor, member))
    return model, member, deleted


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(_broken_model())
def test_a_single_member_deleted_or_corrupted_is_named(
    case: tuple[dict[str, Any], str, bool],
) -> None:
    """[CG-MSG-21]: one required member deleted, or one member given a value it cannot take, of
    a valid section of any executor is named by the message (never `/model does not match ...`)."""
    from capability_graph._core.schemas import describe_problem

    model, member, deleted = case
    message = describe_problem("config.schema.json", {"providers": [], "model": model})
    assert message is not None
    if deleted:
        assert message == f"/model requires the key {member}"
    else:
        assert message.startswith((f"/model/{member} ", f"/model/{member}/")), message
