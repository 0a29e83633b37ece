"""run_match: deadline, caller cancellation, close, late results, output validation, order."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from capability_graph import CancelToken, ErrorCode, GraphError, MatchJob, NextAction
from capability_graph._core import match as match_module
from capability_graph._core.match import (
    MatchOutcome,
    project_executor_failure,
    run_match,
    validate_executor_output,
)
from capability_graph_testing.matching import (
    CATALOG,
    CLOSED,
    SECRET,
    FuncExecutor,
    make_job,
    model_error,
    raises_graph_error,
    returning,
    run,
)

ID_A, ID_B, ID_C = (entry["id"] for entry in CATALOG)
INVALID = model_error(ErrorCode.CG_MODEL_OUTPUT_INVALID)
SELECTION = model_error(ErrorCode.CG_MODEL_INVALID_SELECTION)
TOO_LARGE = model_error(ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE)
TIMEOUT = model_error(ErrorCode.CG_MODEL_TIMEOUT)
CANCELLED = model_error(ErrorCode.CG_MODEL_CANCELLED)


def matched(*ids: str) -> dict[str, Any]:
    return {"status": "matched", "candidates": [{"id": i, "confidence": 0.5} for i in ids]}


def validate(raw: object, *, limit: int = 5, max_output_bytes: int = 65536) -> MatchOutcome:
    return validate_executor_output(
        raw, authorized_ids={ID_A, ID_B, ID_C}, limit=limit, max_output_bytes=max_output_bytes
    )


def validation_error(raw: object, **kwargs: Any) -> dict[str, str]:
    with pytest.raises(GraphError) as info:
        validate(raw, **kwargs)
    return info.value.to_json()


# -- validation --------------------------------------------------------------------------------


def test_valid_outputs_become_outcomes_with_only_contract_keys() -> None:
    raw = {
        "status": "matched",
        "candidates": [
            {"id": ID_B, "confidence": 1, "reason": "schema"},
            {"id": ID_A, "confidence": 0.0},
        ],
    }
    outcome = validate(raw)
    assert outcome == MatchOutcome(
        "matched",
        [{"id": ID_B, "confidence": 1, "reason": "schema"}, {"id": ID_A, "confidence": 0.0}],
    )
    assert validate({"status": "no_match", "candidates": []}) == MatchOutcome("no_match", [])
    assert validate({"status": "unknown", "candidates": []}) == MatchOutcome("unknown", [])


def test_candidates_exactly_at_limit_are_accepted() -> None:
    assert len(validate(matched(ID_A, ID_B), limit=2).candidates) == 2


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "matched",
        [matched(ID_A)],
        {"status": "matched"},
        {"candidates": []},
        {**matched(ID_A), "extra": 1},
        {"status": "maybe", "candidates": []},
        {"status": None, "candidates": []},
        {"status": "MATCHED", "candidates": [{"id": ID_A, "confidence": 0.5}]},
        {"status": "matched", "candidates": {"id": ID_A, "confidence": 0.5}},
        {"status": "matched", "candidates": []},
        {"status": "no_match", "candidates": [{"id": ID_A, "confidence": 0.5}]},
        {"status": "unknown", "candidates": [{"id": ID_A, "confidence": 0.5}]},
        {"status": "matched", "candidates": [ID_A]},
        {"status": "matched", "candidates": [{"id": ID_A}]},
        {"status": "matched", "candidates": [{"confidence": 0.5}]},
        {"status": "matched", "candidates": [{"id": 7, "confidence": 0.5}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": 1.0001}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": -0.01}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": True}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": "0.5"}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": None}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": 0.5, "reason": None}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": 0.5, "reason": 3}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": 0.5, "reason": ""}]},
        {
            "status": "matched",
            "candidates": [{"id": ID_A, "confidence": 0.5, "reason": "r" * 1025}],
        },
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": 0.5, "score": 3}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": float("nan")}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": float("inf")}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": 0.5, "reason": "\ud800"}]},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": 0.5}], 1: 2},
        {"status": "matched", "candidates": [{"id": ID_A, "confidence": 0.5, "reason": {1, 2}}]},
        object(),
    ],
)
def test_output_of_the_wrong_shape_is_output_invalid(raw: object) -> None:
    assert validation_error(raw) == INVALID


def test_more_candidates_than_limit_is_output_invalid() -> None:
    assert validation_error(matched(ID_A, ID_B, ID_C), limit=2) == INVALID


@pytest.mark.parametrize(
    "ids",
    [
        ["acme::fabricated"],
        [ID_A, "acme::fabricated"],
        ["acme::route.validation "],
        ["route.validation"],
        [ID_A, ID_A],
        [ID_B, ID_A, ID_B],
    ],
)
def test_fabricated_unauthorized_or_duplicate_id_is_invalid_selection(ids: list[str]) -> None:
    assert validation_error(matched(*ids)) == SELECTION


def test_output_over_budget_is_too_large_and_at_budget_is_fine() -> None:
    raw = {"status": "matched", "candidates": [{"id": ID_A, "confidence": 0.5, "reason": "é" * 40}]}
    size = (
        len(
            b'{"status":"matched","candidates":[{"id":"acme::route.validation","confidence":0.5,"reason":""}]}'
        )
        + 80
    )
    assert validate(raw, max_output_bytes=size).status == "matched"
    assert validation_error(raw, max_output_bytes=size - 1) == TOO_LARGE


def test_validation_order_is_json_then_size_then_shape_then_selection() -> None:
    # size before shape: an oversized document of the wrong shape is too large
    assert validation_error({"junk": "x" * 100}, max_output_bytes=50) == TOO_LARGE
    # not JSON data before size
    assert validation_error({"junk": "x" * 100, "set": {1}}, max_output_bytes=50) == INVALID
    # shape (of the whole document) before selection
    fabricated_then_bad = {
        "status": "matched",
        "candidates": [{"id": "x::fabricated", "confidence": 0.5}, {"id": ID_A, "confidence": 2}],
    }
    assert validation_error(fabricated_then_bad) == INVALID
    # limit is a shape rule: more candidates than limit wins over a fabricated id
    assert validation_error(matched("x::a", "x::b"), limit=1) == INVALID


def test_catalog_ids_are_only_collected_when_a_candidate_needs_them() -> None:
    class Exploding(list[dict[str, Any]]):
        def __iter__(self) -> Any:
            raise AssertionError("catalog iterated")

    job = make_job(catalog=Exploding(CATALOG))
    outcome = run(
        run_match(
            returning({"status": "no_match", "candidates": []}),
            job,
            cancel=None,
            max_output_bytes=65536,
        )
    )
    assert outcome == MatchOutcome("no_match", [])


# -- running -----------------------------------------------------------------------------------


def test_result_is_validated_against_the_jobs_catalog() -> None:
    executor = returning(matched(ID_C))
    outcome = run(run_match(executor, make_job(), cancel=None, max_output_bytes=65536))
    assert outcome == MatchOutcome("matched", [{"id": ID_C, "confidence": 0.5}])
    narrowed = make_job(catalog=CATALOG[:2])
    error = run(
        raises_graph_error(run_match(executor, narrowed, cancel=None, max_output_bytes=65536))
    )
    assert error.to_json() == SELECTION


def test_executor_sees_the_output_budget_of_the_run() -> None:
    seen: list[int] = []

    async def fn(job: MatchJob) -> object:
        seen.append(job.max_output_bytes)
        return {"status": "unknown", "candidates": []}

    run(
        run_match(FuncExecutor(fn), make_job(max_output_bytes=1), cancel=None, max_output_bytes=777)
    )
    assert seen == [777]


def test_no_executor_is_model_not_configured() -> None:
    error = run(
        raises_graph_error(run_match(None, make_job(), cancel=None, max_output_bytes=65536))
    )
    assert error.to_json() == model_error(ErrorCode.CG_MODEL_NOT_CONFIGURED)


def _sleeper(seconds: float, log: list[str]) -> FuncExecutor:
    async def fn(job: MatchJob) -> object:
        log.append("started")
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            log.append("cancelled")
            raise
        log.append("finished")
        return matched(ID_A)

    return FuncExecutor(fn)


def test_deadline_is_model_timeout_and_the_executor_task_is_cancelled() -> None:
    log: list[str] = []
    job = make_job(timeout_s=0.1)
    started = time.monotonic()
    error = run(
        raises_graph_error(run_match(_sleeper(10, log), job, cancel=None, max_output_bytes=65536))
    )
    assert error.to_json() == TIMEOUT
    assert log == ["started", "cancelled"]
    assert time.monotonic() - started < 1.0
    assert time.monotonic() - job.deadline < 0.5


def test_deadline_already_passed_never_calls_the_executor() -> None:
    log: list[str] = []
    executor = _sleeper(0, log)
    error = run(
        raises_graph_error(
            run_match(executor, make_job(timeout_s=-1), cancel=None, max_output_bytes=65536)
        )
    )
    assert error.to_json() == TIMEOUT
    assert executor.calls == 0


def test_cancel_token_from_another_thread_is_model_cancelled() -> None:
    log: list[str] = []
    token = CancelToken()
    timer = threading.Timer(0.05, token.cancel)
    timer.start()
    try:
        error = run(
            raises_graph_error(
                run_match(_sleeper(10, log), make_job(), cancel=token, max_output_bytes=65536)
            )
        )
    finally:
        timer.join()
    assert error.to_json() == CANCELLED
    assert log == ["started", "cancelled"]


def test_token_cancelled_before_the_match_never_calls_the_executor() -> None:
    token = CancelToken()
    token.cancel()
    executor = _sleeper(0, [])
    error = run(
        raises_graph_error(run_match(executor, make_job(), cancel=token, max_output_bytes=65536))
    )
    assert error.to_json() == CANCELLED
    assert executor.calls == 0


@pytest.mark.parametrize("kind", ["token", "event", "future"])
def test_stop_signal_is_graph_closed_lifecycle_not_timeout_or_cancel(kind: str) -> None:
    log: list[str] = []

    async def scenario() -> GraphError:
        loop = asyncio.get_running_loop()
        stop: Any
        if kind == "token":
            stop = CancelToken()
            fire = stop.cancel
        elif kind == "event":
            stop = asyncio.Event()
            fire = stop.set
        else:
            stop = loop.create_future()

            def fire() -> None:
                stop.set_result(None)

        loop.call_later(0.05, fire)
        return await raises_graph_error(
            run_match(
                _sleeper(10, log),
                make_job(),
                cancel=CancelToken(),
                max_output_bytes=65536,
                stop=stop,
            )
        )

    error = run(scenario())
    assert error.to_json() == CLOSED
    assert error.next_action is None
    assert log == ["started", "cancelled"]


def test_stop_already_set_wins_over_a_cancelled_token_and_a_passed_deadline() -> None:
    stop, token = CancelToken(), CancelToken()
    stop.cancel()
    token.cancel()
    error = run(
        raises_graph_error(
            run_match(
                _sleeper(0, []),
                make_job(timeout_s=-1),
                cancel=token,
                max_output_bytes=65536,
                stop=stop,
            )
        )
    )
    assert error.to_json() == CLOSED


def test_close_during_match_from_another_thread_wins_over_cancel() -> None:
    stop, token = CancelToken(), CancelToken()

    def both() -> None:
        stop.cancel()
        token.cancel()

    timer = threading.Timer(0.05, both)
    timer.start()
    try:
        error = run(
            raises_graph_error(
                run_match(
                    _sleeper(10, []), make_job(), cancel=token, max_output_bytes=65536, stop=stop
                )
            )
        )
    finally:
        timer.join()
    assert error.to_json() == CLOSED


def test_runner_waits_for_the_executors_cleanup_and_discards_its_late_result() -> None:
    cleaned = threading.Event()

    async def slow_to_stop(job: MatchJob) -> object:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0.2)  # e.g. killing a process tree, then returns a result anyway
            cleaned.set()
            return matched(ID_A)
        return matched(ID_A)

    job = make_job(timeout_s=0.05)
    error = run(
        raises_graph_error(
            run_match(FuncExecutor(slow_to_stop), job, cancel=None, max_output_bytes=65536)
        )
    )
    assert error.to_json() == TIMEOUT  # the late result is not used
    assert cleaned.is_set()  # when the error arrives, the executor's cleanup has finished
    assert time.monotonic() - job.deadline >= 0.2


def test_cleanup_that_never_ends_is_abandoned_after_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(match_module, "CLEANUP_LIMIT_S", 0.1)

    release = asyncio.Event()

    async def unstoppable(job: MatchJob) -> object:
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if release.is_set():
                    raise

    async def scenario() -> tuple[GraphError, float]:
        job = make_job(timeout_s=0.05)
        error = await raises_graph_error(
            run_match(FuncExecutor(unstoppable), job, cancel=None, max_output_bytes=65536)
        )
        late = time.monotonic() - job.deadline
        assert len(match_module._ORPHANS) == 1
        (orphan,) = match_module._ORPHANS
        release.set()
        orphan.cancel()
        await asyncio.wait([orphan])
        assert not match_module._ORPHANS
        return error, late

    error, late = run(scenario())
    assert error.to_json() == TIMEOUT
    assert 0.1 <= late < 0.5


def test_outer_task_cancellation_stops_the_executor_and_propagates() -> None:
    log: list[str] = []

    async def scenario() -> None:
        task = asyncio.ensure_future(
            run_match(_sleeper(10, log), make_job(), cancel=None, max_output_bytes=65536)
        )
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    assert log == ["started", "cancelled"]


def test_task_cancelled_right_after_close_still_answers_graph_closed() -> None:
    # The blocking twin closes the graph, then tears its loop down (cancelling every task)
    # before the runner had a chance to look: the match must still end with CG_GRAPH_CLOSED.
    log: list[str] = []

    async def scenario() -> object:
        stop = CancelToken()
        task = asyncio.ensure_future(
            run_match(_sleeper(10, log), make_job(), cancel=None, max_output_bytes=65536, stop=stop)
        )
        await asyncio.sleep(0.05)
        stop.cancel()
        task.cancel()
        done = await asyncio.gather(task, return_exceptions=True)
        return done[0]

    outcome = run(scenario())
    assert isinstance(outcome, GraphError)
    assert outcome.to_json() == CLOSED
    assert log == ["started", "cancelled"]


def test_executor_that_cancels_itself_is_unavailable_retry() -> None:
    async def fn(job: MatchJob) -> object:
        raise asyncio.CancelledError

    error = run(
        raises_graph_error(
            run_match(FuncExecutor(fn), make_job(), cancel=None, max_output_bytes=65536)
        )
    )
    assert error.to_json() == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)


class SyncExecutor:
    name = "sync"

    def __init__(self, result: object = None, error: Exception | None = None) -> None:
        self.result, self.error = result, error

    def match(self, job: MatchJob) -> object:
        if self.error is not None:
            raise self.error
        return self.result


def test_foreign_executor_with_a_plain_match_is_tolerated_and_projected() -> None:
    plain: Any = SyncExecutor(matched(ID_B))
    ok = run(run_match(plain, make_job(), cancel=None, max_output_bytes=65536))
    assert ok.candidates == [{"id": ID_B, "confidence": 0.5}]
    failing: Any = SyncExecutor(error=RuntimeError(SECRET))
    error = run(
        raises_graph_error(run_match(failing, make_job(), cancel=None, max_output_bytes=65536))
    )
    assert error.to_json() == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)


def test_projected_error_never_chains_the_raw_cause() -> None:
    async def fn(job: MatchJob) -> object:
        raise ValueError(SECRET)

    error = run(
        raises_graph_error(
            run_match(FuncExecutor(fn), make_job(), cancel=None, max_output_bytes=65536)
        )
    )
    assert error.__cause__ is None
    assert error.__suppress_context__
    assert SECRET not in repr(error)
    assert SECRET not in str(error)


def test_blocking_twin_pattern_loop_in_a_worker_thread_cancelled_from_the_caller() -> None:
    token = CancelToken()
    result: list[dict[str, str]] = []

    def worker() -> None:
        error = asyncio.run(
            raises_graph_error(
                run_match(_sleeper(10, []), make_job(), cancel=token, max_output_bytes=65536)
            )
        )
        result.append(error.to_json())

    thread = threading.Thread(target=worker)
    thread.start()
    time.sleep(0.05)
    token.cancel()
    thread.join(timeout=2)
    assert result == [CANCELLED]


def test_many_concurrent_matches_are_all_stopped_by_one_close() -> None:
    async def scenario() -> list[BaseException | MatchOutcome]:
        stop = CancelToken()
        runs = [
            run_match(
                _sleeper(10, []),
                make_job(),
                cancel=CancelToken(),
                max_output_bytes=65536,
                stop=stop,
            )
            for _ in range(50)
        ]
        asyncio.get_running_loop().call_later(0.05, stop.cancel)
        started = time.monotonic()
        results = await asyncio.gather(*runs, return_exceptions=True)
        assert time.monotonic() - started < 1.0
        return results

    results = run(scenario())
    assert all(isinstance(r, GraphError) and r.to_json() == CLOSED for r in results)


def test_project_executor_failure_is_what_run_match_raises() -> None:
    exc = ValueError(SECRET)
    assert project_executor_failure(exc).to_json() == model_error(
        ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY
    )


# -- cancel token ------------------------------------------------------------------------------


def test_cancel_token_is_idempotent_and_wakes_waiters_and_callbacks_once() -> None:
    token = CancelToken()
    calls: list[int] = []
    remove = token.add_callback(lambda: calls.append(1))
    token.add_callback(lambda: calls.append(2))
    remove()

    async def waiter() -> bool:
        asyncio.get_running_loop().call_later(0.02, token.cancel)
        await asyncio.wait_for(token.wait(), 1)
        return token.cancelled

    assert run(waiter()) is True
    token.cancel()
    assert calls == [2]
    late: list[int] = []
    token.add_callback(lambda: late.append(1))
    assert late == [1]
    run(token.wait())  # already cancelled: returns at once
    assert repr(token) == "CancelToken(cancelled=True)"


@pytest.mark.parametrize(
    ("confidence", "form"), [(1e-7, b"1e-7"), (0.000001, b"0.000001"), (1.0, b"1")]
)
def test_output_size_counts_numbers_in_their_rfc8785_form(confidence: float, form: bytes) -> None:
    # CG-BUD-9: not Python's 1e-07, 1e-06 or 1.0.
    raw = {"status": "matched", "candidates": [{"id": ID_A, "confidence": confidence}]}
    size = len(
        b'{"status":"matched","candidates":[{"id":"acme::route.validation","confidence":'
        + form
        + b"}]}"
    )
    assert validate(raw, max_output_bytes=size).status == "matched"
    assert validation_error(raw, max_output_bytes=size - 1) == TOO_LARGE


def test_a_reason_of_1024_characters_outside_the_bmp_is_valid() -> None:
    # CG-CONV-14: code points, not UTF-16 units.
    raw = {
        "status": "matched",
        "candidates": [{"id": ID_A, "confidence": 0.5, "reason": "😀" * 1024}],
    }
    assert validate(raw).status == "matched"
    assert (
        validation_error({**raw, "candidates": [{**raw["candidates"][0], "reason": "😀" * 1025}]})[
            "code"
        ]
        == "CG_MODEL_OUTPUT_INVALID"
    )
