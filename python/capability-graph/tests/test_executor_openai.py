"""The openai executor over real HTTP against a loopback chat-completions server."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, CancelToken, ErrorCode, GraphError, NextAction
from capability_graph._core.executors import build_executor
from capability_graph._core.executors.prompt import OUTPUT_SCHEMA
from capability_graph._core.match import MatchOutcome, run_match
from capability_graph_testing.chat_server import (
    ChatServer,
    Received,
    Reply,
    answer,
    api_error,
    completion,
    refused_url,
)
from capability_graph_testing.matching import CATALOG, SECRET, make_job, model_error, run

KEY_ENV = "CG_TEST_OPENAI_KEY"
KEY = f"sk-{SECRET}-key"
ID_A, ID_B = CATALOG[0]["id"], CATALOG[1]["id"]
MATCHED = {
    "status": "matched",
    "candidates": [
        {"id": ID_B, "confidence": 0.8, "reason": "declares the body schema"},
        {"id": ID_A, "confidence": 0.4, "reason": ""},
    ],
}


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def executor_for(url: str, **extra: Any) -> Any:
    model = {"executor": "openai", "baseUrl": url, "model": "test-model", "apiKeyEnv": KEY_ENV}
    return build_executor({**model, **extra})


def match(
    url: str, *, timeout_s: float = 5.0, cancel: CancelToken | None = None, **job: Any
) -> Any:
    async def one() -> Any:
        try:
            return await run_match(
                executor_for(url),
                make_job(timeout_s=timeout_s, **job),
                cancel=cancel,
                max_output_bytes=job.get("max_output_bytes", 65536),
            )
        except GraphError as error:
            rendered = str(error.to_json())
            assert SECRET not in rendered
            assert KEY not in rendered
            return error.to_json()

    return run(one())


def test_success_sends_a_strict_json_schema_request_and_validates_the_answer(key: str) -> None:
    with ChatServer(answer(MATCHED)) as server:
        outcome = match(server.url, context={"framework": "fastapi"}, limit=3)
    assert outcome == MatchOutcome(
        "matched",
        [
            {"id": ID_B, "confidence": 0.8, "reason": "declares the body schema"},
            {"id": ID_A, "confidence": 0.4},  # an empty reason is no reason
        ],
    )
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {key}"
    assert request.body["model"] == "test-model"
    assert request.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "capability_match", "strict": True, "schema": OUTPUT_SCHEMA},
    }
    system, user = request.body["messages"]
    assert system["role"] == "system"
    assert user["role"] == "user"
    assert all(entry["id"] in user["content"] for entry in CATALOG)
    assert '"framework": "fastapi"' in user["content"]
    assert '"limit": 3' in user["content"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            api_error(401, f"bad key {SECRET}", "invalid_api_key"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG),
        ),
        (
            api_error(403, f"forbidden {SECRET}"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG),
        ),
        (
            api_error(404, f"no such model {SECRET}", "model_not_found"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG),
        ),
        (
            api_error(429, f"Rate limit reached {SECRET}", "rate_limit_exceeded"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY),
        ),
        (
            api_error(500, f"boom {SECRET}", kind="server_error"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY),
        ),
        (
            api_error(503, f"overloaded {SECRET}", kind="server_error"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY),
        ),
        (Reply(502, f"<html>{SECRET}</html>"), (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)),
        (
            api_error(
                400,
                f"This model's maximum context length is 8192 tokens {SECRET}",
                "context_length_exceeded",
            ),
            (ErrorCode.CG_MODEL_CONTEXT_EXCEEDED, None),
        ),
        (
            api_error(400, f"This model's maximum context length is 4096 tokens {SECRET}"),
            (ErrorCode.CG_MODEL_CONTEXT_EXCEEDED, None),
        ),
        (
            api_error(400, f"response_format json_schema is not supported {SECRET}"),
            (ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG),
        ),
        (
            Reply(body=completion(None, refusal=f"I can't help with that {SECRET}")),
            (ErrorCode.CG_MODEL_REFUSED, None),
        ),
        (Reply(body=completion("", finish="content_filter")), (ErrorCode.CG_MODEL_REFUSED, None)),
        (
            Reply(body=completion('{"status": "matched", "candi', finish="length")),
            (ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE, None),
        ),
        # Cut off at the model's output limit: never used, even when the content is complete.
        (
            Reply(body=completion(json.dumps(MATCHED), finish="length")),
            (ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE, None),
        ),
        (
            Reply(body=completion(None, finish="length")),
            (ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE, None),
        ),
        (
            Reply(body=completion(None, refusal=f"no {SECRET}", finish="length")),
            (ErrorCode.CG_MODEL_REFUSED, None),
        ),
        (Reply(body=completion(f"not json {SECRET}")), (ErrorCode.CG_MODEL_OUTPUT_INVALID, None)),
        (Reply(body=completion(None)), (ErrorCode.CG_MODEL_OUTPUT_INVALID, None)),
        (Reply(body=f"{{not json {SECRET}"), (ErrorCode.CG_MODEL_OUTPUT_INVALID, None)),
        (Reply(body={"choices": []}), (ErrorCode.CG_MODEL_OUTPUT_INVALID, None)),
        # Nested deeper than the JSON parser goes: the body itself, and the answer it carries.
        (Reply(body=b'{"choices":' + b"[" * 100_000), (ErrorCode.CG_MODEL_OUTPUT_INVALID, None)),
        (Reply(body=completion("[" * 30_000)), (ErrorCode.CG_MODEL_OUTPUT_INVALID, None)),
        (
            Reply(body=completion('{"status":' + "[" * 30_000)),
            (ErrorCode.CG_MODEL_OUTPUT_INVALID, None),
        ),
        (Reply(body={"choices": [{"message": "text"}]}), (ErrorCode.CG_MODEL_OUTPUT_INVALID, None)),
        (
            answer(
                {"status": "matched", "candidates": [{"id": ID_A, "confidence": 7, "reason": ""}]}
            ),
            (ErrorCode.CG_MODEL_OUTPUT_INVALID, None),
        ),
        (
            answer(
                {
                    "status": "matched",
                    "candidates": [{"id": "acme::invented", "confidence": 0.9, "reason": SECRET}],
                }
            ),
            (ErrorCode.CG_MODEL_INVALID_SELECTION, None),
        ),
        (answer({"status": "no_match", "candidates": []}), "no_match"),
        (answer({"status": "unknown", "candidates": []}), "unknown"),
    ],
)
def test_http_outcomes_are_projected(key: str, reply: Reply, expected: Any) -> None:
    expected_outcome: Any
    with ChatServer(reply) as server:
        result = match(server.url)
    if isinstance(expected, str):
        expected_outcome = MatchOutcome(expected, [])  # type: ignore[arg-type]
        assert result == expected_outcome
    else:
        code, action = expected
        assert result == model_error(code, "default" if action is None else action)


def test_connection_refused_is_unavailable_retry(key: str) -> None:
    assert match(refused_url()) == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)


def test_oversized_answer_is_output_too_large(key: str) -> None:
    big = {
        "status": "matched",
        "candidates": [{"id": ID_A, "confidence": 0.5, "reason": "x" * 5000}],
    }
    with ChatServer(answer(big)) as server:
        assert match(server.url, max_output_bytes=4096) == model_error(
            ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE
        )


def test_oversized_transport_body_is_refused_while_streaming(key: str) -> None:
    padding = {"status": "unknown", "candidates": []}
    body = completion(__import__("json").dumps(padding))
    body["padding"] = "p" * 400_000  # the envelope, not the answer, is huge
    with ChatServer(Reply(body=body)) as server:
        assert match(server.url, max_output_bytes=1024) == model_error(
            ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE
        )


#: How long a stalled loopback server holds its answer: far beyond any deadline in these tests,
#: so "the connection was dropped" is observed as an ordering (the client hung up before the
#: server answered), never as a latency a loaded machine could miss.
STALL_S = 120.0
#: A generous bound for an event that should follow at once (a loaded CI machine may be slow).
SETTLE_S = 30.0


def test_hanging_server_times_out_at_the_deadline_and_the_connection_is_dropped(key: str) -> None:
    arrived = threading.Event()

    def first_answers_then_stall(request: Received) -> Reply:
        if not arrived.is_set() and len(server.requests) == 1:  # the warm-up match
            return answer({"status": "unknown", "candidates": []})
        arrived.set()
        return Reply(body=completion("{}"), delay_s=STALL_S)

    with ChatServer(first_answers_then_stall) as server:
        executor = executor_for(server.url)

        async def warm_then_hang() -> Any:
            # The first match prepares the executor (the SDK import, the TLS context): under
            # load that alone may outlast a short deadline, before any request is sent.
            await run_match(
                executor, make_job(timeout_s=SETTLE_S), cancel=None, max_output_bytes=65536
            )
            try:
                return await run_match(
                    executor, make_job(timeout_s=0.5), cancel=None, max_output_bytes=65536
                )
            except GraphError as error:
                return error.to_json()

        started = time.monotonic()
        result = run(warm_then_hang())
        elapsed = time.monotonic() - started
        assert arrived.is_set()  # the stalled request was sent ...
        # ... and the client closed its connection (work stopped) while the server held it.
        assert server.disconnected.wait(SETTLE_S)
    assert result == model_error(ErrorCode.CG_MODEL_TIMEOUT)
    assert elapsed < SETTLE_S * 2  # the deadline ended it, not the server's answer


def test_cancel_during_the_request_is_model_cancelled_and_drops_the_connection(key: str) -> None:
    token = CancelToken()
    arrived = threading.Event()

    def slow(request: Received) -> Reply:
        arrived.set()
        return Reply(body=completion("{}"), delay_s=STALL_S)

    def cancel_once_sent() -> None:
        arrived.wait(SETTLE_S)
        token.cancel()

    with ChatServer(slow) as server:
        canceller = threading.Thread(target=cancel_once_sent)
        canceller.start()
        try:
            result = match(server.url, cancel=token, timeout_s=SETTLE_S * 2)
        finally:
            canceller.join()
        assert server.disconnected.wait(SETTLE_S)
    assert result == model_error(ErrorCode.CG_MODEL_CANCELLED)


def test_request_timeout_option_is_the_deadline_not_an_sdk_retry(key: str) -> None:
    calls: list[Received] = []

    def flaky(request: Received) -> Reply:
        calls.append(request)
        return api_error(500, "boom", kind="server_error")

    with ChatServer(flaky) as server:
        assert match(server.url) == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)
    assert len(calls) == 1  # max_retries=0: retrying is the caller's decision


@pytest.mark.parametrize("value", [None, ""])
def test_missing_or_empty_key_variable_is_unavailable_check_config(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, value)
    with ChatServer(answer(MATCHED)) as server:
        assert match(server.url) == model_error(
            ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG
        )
    assert server.requests == []


def test_missing_openai_package_is_unavailable_check_config(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # `import openai` raises ImportError
    assert match("http://127.0.0.1:9/v1") == model_error(
        ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG
    )


def test_building_the_executor_does_not_import_openai() -> None:
    import subprocess

    code = (
        "import sys; from capability_graph._core.executors import build_executor;"
        "build_executor({'executor': 'openai', 'baseUrl': 'http://h/v1', 'model': 'm',"
        " 'apiKeyEnv': 'K'}); print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


BASE = {
    "executor": "openai",
    "baseUrl": "https://api.example.com/v1",
    "model": "m",
    "apiKeyEnv": "K",
}
URL_RULE = (
    "/model/baseUrl does not have the required format"
    " (expected: an absolute http or https URL without query or fragment)"
)
ENV_RULE = (
    "/model/apiKeyEnv does not have the required format"
    " (expected: an environment variable name: A-Z a-z _, then up to 127 of A-Z a-z 0-9 _)"
)
KEYS_RULE = (
    "/model has a key that is not allowed (allowed: executor, baseUrl, model, apiKeyEnv, timeoutMs)"
)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"baseUrl": None}, "/model/baseUrl must not be null (omit the key instead)"),
        (
            {"baseUrl": "ftp://example.com"},
            URL_RULE,
        ),
        (
            {"baseUrl": "example.com/v1"},
            URL_RULE,
        ),
        (
            {"baseUrl": f"https://user:{SECRET}@example.com/v1"},
            URL_RULE,
        ),
        (
            {"baseUrl": f"https://example.com/v1?key={SECRET}"},
            URL_RULE,
        ),
        (
            {"baseUrl": "https://example.com/v1#x"},
            URL_RULE,
        ),
        (
            {"baseUrl": "https://exa mple.com/v1"},
            URL_RULE,
        ),
        ({"model": ""}, "/model/model must have at least 1 characters"),
        ({"model": 5}, "/model/model must be a string"),
        ({"model": "gpt\n4"}, "/model/model does not have the required format"),
        ({"model": "m" * 257}, "/model/model must have at most 256 characters"),
        (
            {"baseUrl": "https://exa\\mple.com/v1"},
            URL_RULE,
        ),
        (
            {"baseUrl": "https://example.com/" + "a" * 2048},
            "/model/baseUrl must have at most 2048 characters",
        ),
        (
            {"apiKeyEnv": f"sk-{SECRET}"},
            ENV_RULE,
        ),
        (
            {"apiKeyEnv": "1ABC"},
            ENV_RULE,
        ),
        ({"apiKeyEnv": None}, "/model/apiKeyEnv must not be null (omit the key instead)"),
        (
            {"apiKey": SECRET},
            KEYS_RULE,
        ),
        ({"timeoutMs": 0}, "/model/timeoutMs must be at least 1"),
    ],
)
def test_bad_openai_config_is_config_invalid_without_echo(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(GraphError) as info:
        BlockingCapabilityGraph.open({"providers": [], "model": {**BASE, **changes}})
    assert info.value.to_json() == {
        "code": "CG_CONFIG_INVALID",
        "phase": "config",
        "message": message,
        "nextAction": "check_config",
    }


@pytest.mark.parametrize(
    "url",
    ["https://api.example.com/v1", "HTTP://127.0.0.1:8911/v1", "http://[::1]:80", "https://h"],
)
def test_good_base_urls(url: str) -> None:
    executor: Any = build_executor({**BASE, "baseUrl": url})
    assert executor.base_url == url


@pytest.mark.parametrize("key_name", ["baseUrl", "model", "apiKeyEnv"])
def test_required_openai_options(key_name: str) -> None:
    """[CG-MSG-21]: the executor chosen names the option it lacks."""
    model = {k: v for k, v in BASE.items() if k != key_name}
    with pytest.raises(GraphError) as info:
        BlockingCapabilityGraph.open({"providers": [], "model": model})
    assert info.value.message == f"/model requires the key {key_name}"


def test_concurrent_first_matches_share_one_preparation_and_close_leaves_no_thread(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capability_graph import CapabilityGraph
    from capability_graph._core.executors import openai as openai_compat
    from capability_graph_testing.common import capability, inline, provider

    preparations: list[str] = []
    real = openai_compat._import_sdk

    def counted() -> Any:
        preparations.append(threading.current_thread().name)
        time.sleep(0.2)  # a cold import takes about a second: the first matches all wait for it
        return real()

    monkeypatch.setattr(openai_compat, "_import_sdk", counted)
    graphs, matches = 5, 20

    async def scenario(url: str) -> list[Any]:
        model = {"executor": "openai", "baseUrl": url, "model": "m", "apiKeyEnv": KEY_ENV}
        config = {**inline(provider("acme", capability("a"))), "model": model}
        opened = [await CapabilityGraph.open(config) for _ in range(graphs)]
        calls = [
            graph.call("match_capabilities", {"request": "validate"})
            for graph in opened
            for _ in range(matches)
        ]
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        for graph in opened:
            await graph.close()
        return outcomes

    with ChatServer(answer({"status": "no_match", "candidates": []})) as server:
        outcomes = run(scenario(server.url))
    odd = [o for o in outcomes if not (isinstance(o, dict) and o["status"] == "no_match")]
    assert odd == []
    assert len(preparations) == graphs  # one per executor, not one per concurrent first match
    # close() waited for its preparation: nothing of the executor is left running.
    assert [t.name for t in threading.enumerate() if t.name == "cg-openai"] == []


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_not_followed_and_is_unavailable_check_config(key: str, status: int) -> None:
    # executors.md section 9: the bearer key never goes to another place.
    with ChatServer(answer(MATCHED)) as elsewhere:
        moved = Reply(
            status=status, body=b"", headers={"Location": elsewhere.url + "/chat/completions"}
        )
        with ChatServer(moved) as server:
            result = match(server.url)
    assert result == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG)
    assert len(server.requests) == 1
    assert elsewhere.requests == []


@pytest.mark.parametrize("value", [f"sk-{SECRET}\nx", f"sk-{SECRET} x", f"sk-{SECRET}\u00e9"])
def test_a_key_that_cannot_be_a_header_value_is_check_config_and_sends_nothing(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(KEY_ENV, value)
    with ChatServer(answer(MATCHED)) as server:
        assert match(server.url) == model_error(
            ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG
        )
    assert server.requests == []


def test_a_base_url_the_client_cannot_use_is_check_config(key: str) -> None:
    # The BaseUrl pattern admits a bracketed literal that is no IP address.
    assert match("http://[::1:]:80/v1") == model_error(
        ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG
    )


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/v1", "http://[/v1", "http://a:0/v1"])
def test_a_base_url_with_a_bad_port_or_bracket_is_config_invalid(url: str) -> None:
    with pytest.raises(GraphError) as info:
        BlockingCapabilityGraph.open({"providers": [], "model": {**BASE, "baseUrl": url}})
    assert info.value.to_json()["message"] == URL_RULE


#: An error body far over the bound of CG-MODEL-19 (4 x maxModelOutputBytes + 64 KiB).
ERROR_CHUNK = b"x" * 65536
ERROR_CHUNKS = 800  # 52 MB


@pytest.mark.parametrize(
    ("status", "action"), [(400, NextAction.CHECK_CONFIG), (503, NextAction.RETRY)]
)
@pytest.mark.parametrize("chunk_delay_s", [0.0, 0.01], ids=["fast", "slow"])
def test_a_huge_error_body_is_read_to_the_bound_then_projected_by_its_status(
    key: str, status: int, action: NextAction, chunk_delay_s: float
) -> None:
    # CG-MODEL-19: a non-2xx body is read to its bound at most, then dropped; one over the bound
    # is no context overflow (however it starts), so the status alone decides. Slowly streamed
    # (52 MB at 64 KiB per 10 ms takes more than 8 s), the body would outlast the deadline.
    head = b'{"error": {"code": "context_length_exceeded", "message": "maximum context", "x": "'
    huge = Reply(status=status, body=head, chunks=[ERROR_CHUNK] * ERROR_CHUNKS + [b'"}}'])
    huge.chunk_delay_s = chunk_delay_s
    total = len(head) + len(ERROR_CHUNK) * ERROR_CHUNKS + 3

    def warm_then_huge(request: Received) -> Reply:
        if len(server.requests) == 1:  # the warm-up match
            return answer({"status": "unknown", "candidates": []})
        return huge

    with ChatServer(warm_then_huge) as server:
        executor = executor_for(server.url)

        async def warm_then_fail() -> Any:
            await run_match(
                executor, make_job(timeout_s=SETTLE_S), cancel=None, max_output_bytes=65536
            )
            try:
                return await run_match(
                    executor, make_job(timeout_s=5.0), cancel=None, max_output_bytes=65536
                )
            except GraphError as error:
                return error.to_json()

        result = run(warm_then_fail())
        assert server.disconnected.wait(SETTLE_S)  # the client hung up before the body ended
    assert result == model_error(ErrorCode.CG_MODEL_UNAVAILABLE, action)
    assert server.sent_bytes < total
