"""validate_schema, extract_json, run_structured (and its twin)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import FakeBin, Twin

PERSON = {
    "type": "object",
    "required": ["name", "age"],
    "additionalProperties": False,
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
}


def test_a_valid_value_has_no_errors() -> None:
    assert flowcast.validate_schema({"name": "Ada", "age": 36}, PERSON) == []


def test_errors_name_the_json_pointer_and_are_sorted() -> None:
    errors = flowcast.validate_schema({"name": 1, "age": -1, "x": 0}, PERSON)
    assert errors == [
        "(root): Additional properties are not allowed ('x' was unexpected)",
        "/age: -1 is less than the minimum of 0",
        "/name: 1 is not of type 'string'",
    ]


def test_draft_2020_12_keywords_are_enforced() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}
    assert flowcast.validate_schema([1], schema) == []
    assert flowcast.validate_schema([1, 2], schema) != []


def test_local_refs_resolve() -> None:
    schema = {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}
    assert flowcast.validate_schema({"a": "x"}, schema) == ["/a: 'x' is not of type 'integer'"]


def test_an_invalid_schema_is_reported_not_raised() -> None:
    assert flowcast.validate_schema(1, {"type": "nonsense"})[0].startswith(
        "invalid schema at /type"
    )


def test_a_bad_pattern_is_reported_not_raised() -> None:
    assert flowcast.validate_schema("a", {"pattern": "("}) == [
        "invalid schema at /pattern: '(' is not a 'regex'"
    ]


def test_an_unresolvable_ref_is_reported_and_never_fetched() -> None:
    errors = flowcast.validate_schema(1, {"$ref": "https://example.invalid/s.json"})
    assert errors == ["invalid schema: cannot resolve 'https://example.invalid/s.json'"]


def test_boolean_schemas_work() -> None:
    assert flowcast.validate_schema("x", True) == []
    assert flowcast.validate_schema("x", False) == ["(root): False schema does not allow 'x'"]


def test_non_json_python_values_are_checked_not_crashed_on() -> None:
    assert flowcast.validate_schema({"name": b"x", "age": 1}, PERSON) == [
        "/name: b'x' is not of type 'string'"
    ]


def test_errors_are_capped_at_twenty() -> None:
    assert len(flowcast.validate_schema(list(range(50)), {"items": {"type": "string"}})) == 20


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(json_values, json_values)
def test_validate_schema_never_raises(value: Any, schema: Any) -> None:
    errors = flowcast.validate_schema(value, schema)
    assert isinstance(errors, list)
    assert all(isinstance(e, str) for e in errors)


@given(st.text())
def test_extract_json_never_raises_on_text(text: str) -> None:
    flowcast.extract_json(text)


@given(st.text(alphabet='{}[]"\\` \nabc:1,json'))
def test_extract_json_never_raises_on_bracket_soup(text: str) -> None:
    flowcast.extract_json(text)


@given(
    json_values, st.text(alphabet="abc .:\n", max_size=10), st.text(alphabet="abc .\n", max_size=10)
)
def test_a_json_value_in_a_fence_is_found_whatever_the_prose(
    value: Any, before: str, after: str
) -> None:
    text = f"{before}```json\n{json.dumps(value)}\n```{after}"
    assert flowcast.extract_json(text) == value


@given(
    st.dictionaries(st.text(), json_values, min_size=1, max_size=3),
    st.text(alphabet="ab :.", max_size=10),
)
def test_an_object_after_prose_is_found(value: dict[str, Any], before: str) -> None:
    assert flowcast.extract_json(f"{before} {json.dumps(value)} and that is all") == value


def test_extract_json_of_a_non_string_is_none() -> None:
    assert flowcast.extract_json(b'{"a": 1}') is None


def test_extract_json_scans_deep_nesting_without_recursion_error() -> None:
    assert flowcast.extract_json("[" * 100_000 + "]" * 100_000) is None


def answers(*texts: str) -> tuple[list[str], Any]:
    prompts: list[str] = []
    queue = list(texts)

    def runner(prompt: str) -> str:
        prompts.append(prompt)
        return queue.pop(0)

    return prompts, runner


def test_run_structured_returns_the_parsed_value(twin: Twin) -> None:
    prompts, runner = answers('Sure: {"name": "Ada", "age": 36}')
    assert twin("run_structured", runner, "who?", schema=PERSON) == {"name": "Ada", "age": 36}
    assert prompts[0].startswith("who?\n\nRespond with a single JSON value")
    assert json.dumps(PERSON, sort_keys=True) in prompts[0]


def test_run_structured_retries_with_the_problems_appended(twin: Twin) -> None:
    prompts, runner = answers('{"name": "Ada"}', '{"name": "Ada", "age": 36}')
    assert twin("run_structured", runner, "who?", schema=PERSON, retries=1)["age"] == 36
    assert len(prompts) == 2
    assert "(root): 'age' is a required property" in prompts[1]


def test_run_structured_raises_schema_error_when_retries_are_exhausted(twin: Twin) -> None:
    prompts, runner = answers("no idea", '{"name": 5, "age": 1}')
    with pytest.raises(flowcast.SchemaError) as caught:
        twin("run_structured", runner, "who?", schema=PERSON, retries=1)
    assert caught.value.schema_error == "/name: 5 is not of type 'string'"
    assert caught.value.code == "SCHEMA_ERROR"
    assert "(root): no JSON value found" in prompts[1]


def test_run_structured_accepts_null_when_the_schema_does() -> None:
    _, runner = answers("null")
    assert flowcast.run_structured_sync(runner, "?", schema={"type": "null"}, retries=0) is None


def test_run_structured_does_not_retry_a_runner_exception() -> None:
    calls = []

    def runner(prompt: str) -> str:
        calls.append(prompt)
        raise flowcast.SpawnError("boom", exit_code=1)

    with pytest.raises(flowcast.SpawnError):
        flowcast.run_structured_sync(runner, "?", schema=PERSON, retries=3)
    assert len(calls) == 1


def test_run_structured_awaits_an_async_runner() -> None:
    async def runner(prompt: str) -> str:
        await asyncio.sleep(0)
        return '{"name": "Ada", "age": 1}'

    assert asyncio.run(flowcast.run_structured(runner, "?", schema=PERSON))["age"] == 1


def test_run_structured_over_a_real_cli(fake_bin: FakeBin) -> None:
    fake_bin.add(
        "answer", 'cat > /dev/null; printf \'```json\\n{"name": "Bo", "age": 2}\\n```\\n\'\n'
    )

    async def runner(prompt: str) -> str:
        return await flowcast.spawn_cli("answer", [], stdin=prompt)

    assert asyncio.run(flowcast.run_structured(runner, "?", schema=PERSON)) == {
        "name": "Bo",
        "age": 2,
    }


def test_the_runner_of_the_blocking_twin_may_use_asyncio_run() -> None:
    def runner(prompt: str) -> str:
        return asyncio.run(flowcast.spawn_cli("printf", ['{"name": "Al", "age": 3}']))

    assert flowcast.run_structured_sync(runner, "?", schema=PERSON)["name"] == "Al"
