"""The scripted executor: every step kind, the script order, empty steps, strict config."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, ErrorCode, GraphError, NextAction
from capability_graph._core.executors import (
    DEFAULT_TIMEOUT_MS,
    build_executor,
    configured_timeout_ms,
    describe_executor,
)
from capability_graph._core.match import MatchOutcome, run_match
from capability_graph_testing.matching import (
    CATALOG,
    SECRET,
    make_job,
    model_error,
    raises_graph_error,
    run,
)

ID_A = CATALOG[0]["id"]
MATCHED: dict[str, Any] = {
    "status": "matched",
    "candidates": [{"id": ID_A, "confidence": 0.9, "reason": "r"}],
}


def scripted(*steps: Any, **extra: Any) -> Any:
    return build_executor({"executor": "scripted", "steps": list(steps), **extra})


async def match(executor: Any, **job: Any) -> MatchOutcome:
    return await run_match(executor, make_job(**job), cancel=None, max_output_bytes=65536)


def outcome_or_error(executor: Any, **job: Any) -> Any:
    async def one() -> Any:
        try:
            return await match(executor, **job)
        except GraphError as error:
            return error.to_json()

    return run(one())


def config_error(message: str) -> dict[str, str]:
    return {
        "code": "CG_CONFIG_INVALID",
        "phase": "config",
        "message": message,
        "nextAction": "check_config",
    }


def test_each_match_consumes_the_next_step_and_the_last_repeats() -> None:
    executor = scripted(
        {"return": MATCHED},
        {"raise": {"code": "CG_MODEL_REFUSED"}},
        {"return": {"status": "no_match", "candidates": []}},
    )
    results = [outcome_or_error(executor) for _ in range(5)]
    assert results == [
        MatchOutcome("matched", MATCHED["candidates"]),
        model_error(ErrorCode.CG_MODEL_REFUSED),
        MatchOutcome("no_match", []),
        MatchOutcome("no_match", []),
        MatchOutcome("no_match", []),
    ]


def test_empty_steps_always_answer_unknown() -> None:
    executor = scripted()
    assert [outcome_or_error(executor) for _ in range(3)] == [MatchOutcome("unknown", [])] * 3


def test_return_step_hands_out_a_copy_each_time() -> None:
    executor = scripted({"return": MATCHED})
    first = run(executor.match(make_job()))
    first["candidates"].clear()
    assert run(executor.match(make_job())) == MATCHED


def test_return_step_can_script_invalid_outputs() -> None:
    assert outcome_or_error(scripted({"return": "nope"})) == model_error(
        ErrorCode.CG_MODEL_OUTPUT_INVALID
    )
    fabricated = {"status": "matched", "candidates": [{"id": "x::y", "confidence": 1}]}
    assert outcome_or_error(scripted({"return": fabricated})) == model_error(
        ErrorCode.CG_MODEL_INVALID_SELECTION
    )
    assert outcome_or_error(scripted({"return": []})) == model_error(
        ErrorCode.CG_MODEL_OUTPUT_INVALID
    )


def test_raise_step_carries_any_code_action_and_message_to_the_projection() -> None:
    executor = scripted(
        {"raise": {"code": "CG_MODEL_UNAVAILABLE", "nextAction": "check_config", "message": SECRET}}
    )
    error = run(raises_graph_error(match(executor)))
    assert error.to_json() == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG)
    raw = scripted({"raise": {"code": "\x00weird", "nextAction": "", "message": ""}})
    assert outcome_or_error(raw) == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)


def test_raise_exception_step_is_a_plain_exception() -> None:
    assert outcome_or_error(scripted({"raiseException": SECRET})) == model_error(
        ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY
    )


def test_sleep_step_waits_then_performs_its_step() -> None:
    executor = scripted({"sleepMs": 60, "then": {"sleepMs": 0, "then": {"return": MATCHED}}})
    started = time.monotonic()
    assert outcome_or_error(executor).status == "matched"
    assert 0.05 <= time.monotonic() - started < 1.0


def test_sleep_past_the_deadline_is_a_timeout() -> None:
    executor = scripted({"sleepMs": 10_000, "then": {"return": MATCHED}})
    assert outcome_or_error(executor, timeout_s=0.05) == model_error(ErrorCode.CG_MODEL_TIMEOUT)


def test_script_position_is_shared_safely_between_threads() -> None:
    executor = scripted(*({"return": {"status": "unknown", "candidates": []}} for _ in range(200)))
    threads = [
        threading.Thread(target=lambda: [run(executor.match(make_job())) for _ in range(50)])
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert executor._next == 200


def test_name_describe_and_timeout() -> None:
    executor = scripted(timeoutMs=1500)
    assert executor.name == "scripted"
    assert describe_executor(executor) == "scripted"
    assert configured_timeout_ms({"executor": "scripted", "steps": [], "timeoutMs": 1500}) == 1500
    assert configured_timeout_ms({"executor": "scripted", "steps": []}) == DEFAULT_TIMEOUT_MS
    assert configured_timeout_ms(None) == DEFAULT_TIMEOUT_MS


def test_describe_executor_never_reports_arbitrary_text() -> None:
    class Custom:
        name = "my-executor.v2"

    class Evil:
        name = f"{SECRET} /etc/passwd"

    class Raising:
        @property
        def name(self) -> str:
            raise RuntimeError(SECRET)

    assert describe_executor(Custom()) == "my-executor.v2"
    assert describe_executor(Evil()) == "custom"
    assert describe_executor(Raising()) == "custom"
    assert describe_executor(object()) == "custom"


def test_an_executor_name_with_an_upper_case_letter_is_reported_as_custom() -> None:
    """The ExecutorName pattern is lowercase ([CG-MODEL-13]), as a result's schema requires."""

    class Upper:
        name = "MyExecutor"

    class Lower:
        name = "myexecutor"

    assert describe_executor(Upper()) == "custom"
    assert describe_executor(Lower()) == "myexecutor"


def steps(*items: Any, **extra: Any) -> dict[str, Any]:
    return {"executor": "scripted", "steps": list(items), **extra}


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (None, "/model must not be null (omit the key instead)"),
        ([], "/model must be an object"),
        ({}, "/model requires the key executor"),
        ({"executor": None}, "/model/executor must not be null (omit the key instead)"),
        (
            {"executor": "gpt"},
            '/model/executor must be one of: "scripted", "lexical", "openai", "codex"',
        ),
        ({"executor": "scripted"}, "/model requires the key steps"),
        (
            {"executor": "scripted", "steps": None},
            "/model/steps must not be null (omit the key instead)",
        ),
        ({"executor": "scripted", "steps": {}}, "/model/steps must be an array"),
        (
            steps(extra=1),
            "/model has a key that is not allowed (allowed: executor, steps, timeoutMs)",
        ),
        (
            steps(**{SECRET + "!": 1}),
            "/model has a key that is not allowed (allowed: executor, steps, timeoutMs)",
        ),
        (steps(timeoutMs=None), "/model/timeoutMs must not be null (omit the key instead)"),
        (steps(timeoutMs=0), "/model/timeoutMs must be at least 1"),
        (steps(timeoutMs=600001), "/model/timeoutMs must be at most 600000"),
        (steps(timeoutMs=True), "/model/timeoutMs must be an integer"),
        (steps(timeoutMs="5"), "/model/timeoutMs must be an integer"),
        (steps(timeoutMs=1.5), "/model/timeoutMs must be an integer"),
        (steps(None), "/model/steps/0 must not be null (omit the key instead)"),
        (steps({}), "/model/steps/0 does not match any allowed shape"),
        (
            steps({"return": {}, "raise": {"code": "x"}}),
            "/model/steps/0 does not match any allowed shape",
        ),
        (steps({"then": {"return": {}}}), "/model/steps/0 does not match any allowed shape"),
        (
            steps({"return": {}}, {"return": float("nan")}),
            "/model/steps/1/return NaN and Infinity are not JSON",
        ),
        (
            steps({"return": {"a": {1, 2}}}),
            "/model/steps/0/return only JSON values are allowed (no bytes, sets, tuples, objects)",
        ),
        (steps({"raise": {}}), "/model/steps/0/raise requires the key code"),
        (
            steps({"raise": {"code": ""}}),
            "/model/steps/0/raise/code must have at least 1 characters",
        ),
        (steps({"return": None}), "/model/steps/0/return must not be null (omit the key instead)"),
        (steps({"raise": "CG_MODEL_TIMEOUT"}), "/model/steps/0/raise must be an object"),
        (steps({"raise": {"code": 1}}), "/model/steps/0/raise/code must be a string"),
        (
            steps({"raise": {"code": "x", "nextAction": None}}),
            "/model/steps/0/raise/nextAction must not be null (omit the key instead)",
        ),
        (
            steps({"raise": {"code": "x", "message": ["m"]}}),
            "/model/steps/0/raise/message must be a string",
        ),
        (
            steps({"raise": {"code": "x", "cause": "m"}}),
            "/model/steps/0/raise has a key that is not allowed"
            " (allowed: code, nextAction, message)",
        ),
        (
            steps({"raiseException": None}),
            "/model/steps/0/raiseException must not be null (omit the key instead)",
        ),
        (steps({"sleepMs": 5}), "/model/steps/0 does not match any allowed shape"),
        (
            steps({"sleepMs": -1, "then": {"return": {}}}),
            "/model/steps/0/sleepMs must be at least 0",
        ),
        (
            steps({"sleepMs": None, "then": {"return": {}}}),
            "/model/steps/0/sleepMs must not be null (omit the key instead)",
        ),
        (
            steps({"sleepMs": 1, "then": {"oops": 1}}),
            "/model/steps/0/then does not match any allowed shape",
        ),
    ],
)
def test_bad_scripted_config_is_config_invalid_with_a_pointer(model: Any, message: str) -> None:
    with pytest.raises(GraphError) as info:
        BlockingCapabilityGraph.open({"providers": [], "model": model})
    assert info.value.to_json() == config_error(message)
    assert SECRET not in info.value.message


def test_sleep_nesting_is_bounded() -> None:
    step: dict[str, Any] = {"return": {}}
    for _ in range(17):
        step = {"sleepMs": 0, "then": step}
    with pytest.raises(GraphError) as info:
        scripted(step)
    assert info.value.code == "CG_CONFIG_INVALID"
    assert info.value.message.endswith("nests sleepMs steps more than 16 deep")


# -- the configuration's schema alone decides the model section ---------------------------------

AGREEMENT_CORPUS: list[Any] = [
    {"executor": "scripted", "steps": []},
    {"executor": "scripted", "steps": [{"return": {"status": "unknown", "candidates": []}}]},
    {"executor": "scripted", "steps": [{"return": "x"}, {"return": [1]}, {"return": 0}]},
    {"executor": "scripted", "steps": [{"return": None}]},
    {"executor": "scripted", "steps": [{"raise": {"code": "X", "nextAction": "", "message": ""}}]},
    {"executor": "scripted", "steps": [{"raise": {"code": ""}}]},
    {"executor": "scripted", "steps": [{"raise": {"code": "X", "extra": 1}}]},
    {"executor": "scripted", "steps": [{"raiseException": ""}]},
    {"executor": "scripted", "steps": [{"sleepMs": 0, "then": {"raiseException": "x"}}]},
    {"executor": "scripted", "steps": [{"sleepMs": 600001, "then": {"return": 1}}]},
    {"executor": "scripted", "steps": [{"sleepMs": 5}]},
    {"executor": "scripted", "steps": [{}]},
    {"executor": "scripted"},
    {"executor": "scripted", "steps": [], "timeoutMs": 600000},
    {"executor": "scripted", "steps": [], "timeoutMs": 0},
    {"executor": "lexical"},
    {"executor": "lexical", "timeoutMs": 1},
    {"executor": "lexical", "threshold": 0.2},
    {"executor": "openai", "baseUrl": "https://a.example/v1", "model": "m", "apiKeyEnv": "K"},
    {"executor": "openai", "baseUrl": "http://127.0.0.1:8911", "model": "é m", "apiKeyEnv": "_K1"},
    {"executor": "openai", "baseUrl": "https://u:p@a.example/v1", "model": "m", "apiKeyEnv": "K"},
    {"executor": "openai", "baseUrl": "https://a.example/v1?k=1", "model": "m", "apiKeyEnv": "K"},
    {"executor": "openai", "baseUrl": "ftp://a.example", "model": "m", "apiKeyEnv": "K"},
    {"executor": "openai", "baseUrl": "https://a.example/v1", "model": "m\t", "apiKeyEnv": "K"},
    {"executor": "openai", "baseUrl": "https://a.example/v1", "model": "m", "apiKeyEnv": "1K"},
    {"executor": "openai", "baseUrl": "https://a.example/v1", "model": "m"},
    {"executor": "openai", "baseUrl": "https://a.example/v1", "model": "m", "apiKey": "k"},
    {"executor": "codex"},
    {"executor": "codex", "model": "o4-mini", "timeoutMs": 1000},
    {"executor": "codex", "model": "-x"},
    {"executor": "codex", "sandbox": "danger-full-access"},
    {"executor": "gemini"},
    {},
]


@pytest.mark.parametrize("model", AGREEMENT_CORPUS)
def test_the_configuration_schema_alone_decides_the_model_section(model: Any) -> None:
    # One validation path: what config.schema.json#/$defs/ModelConfig accepts opens (the
    # executor builds from it without checking it again), what it refuses is CG_CONFIG_INVALID.
    from capability_graph_testing.common import schema_validator

    by_schema = schema_validator("config.schema.json").is_valid({"providers": [], "model": model})
    code = None
    try:
        BlockingCapabilityGraph.open({"providers": [], "model": model}).close()
    except GraphError as error:
        code = error.code
    assert code in (None, "CG_CONFIG_INVALID")
    assert (code is None) == by_schema


def test_an_executor_name_outside_the_executor_name_pattern_is_custom() -> None:
    # CG-MODEL-13: the name must validate as ids.schema.json's ExecutorName (lowercase), or
    # results holding it would violate their schema (CG-CONV-10).
    class Uppercase:
        name = "MyRanker"

    assert describe_executor(Uppercase()) == "custom"
