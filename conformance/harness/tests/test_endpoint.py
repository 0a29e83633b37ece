"""The scripted endpoint (spec/conformance/README.md, "The scripted endpoint"): what it answers,
and what it finds wrong in a request, over real loopback HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from capability_graph_conformance.endpoint import Endpoint, answer_body

CONFIG = {"model": {"executor": "openai", "model": "m-1"}}
JOB = {"request": "r", "context": {}, "limit": 5, "catalog": []}


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    server.start()
    yield server
    server.close()


def good_request(key: str, **changes: Any) -> dict[str, Any]:
    body = {
        "model": "m-1",
        "messages": [
            {"role": "system", "content": "instructions"},
            {"role": "user", "content": json.dumps(JOB)},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "capability_match", "strict": True, "schema": {}},
        },
    }
    body.update(changes)
    return {"body": body, "key": key}


def post(url: str, body: Any, key: str) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read(), dict(error.headers)


def test_a_good_request_gets_the_scripted_completion_and_no_finding(endpoint: Endpoint) -> None:
    base = endpoint.register("cg.x.a", {"output": {"status": "no_match"}}, CONFIG)
    sent = good_request(endpoint.key)
    status, body, _ = post(base + "/chat/completions", sent["body"], sent["key"])
    assert status == 200
    choice = json.loads(body)["choices"][0]
    assert choice["message"]["content"] == '{"status":"no_match"}'
    assert choice["finish_reason"] == "stop"
    assert endpoint.findings("cg.x.a") == (1, [])


def test_a_wrong_key_is_a_finding(endpoint: Endpoint) -> None:
    base = endpoint.register("cg.x.b", {"output": {}}, CONFIG)
    post(base + "/chat/completions", good_request("")["body"], "sk-other")
    assert endpoint.findings("cg.x.b") == (
        1,
        ["the Authorization header is not 'Bearer <the key>'"],
    )


def test_another_model_is_a_finding(endpoint: Endpoint) -> None:
    base = endpoint.register("cg.x.c", {"output": {}}, CONFIG)
    post(base + "/chat/completions", good_request("", model="m-2")["body"], endpoint.key)
    assert endpoint.findings("cg.x.c") == (1, ["model 'm-2', not the configuration's"])


def test_a_user_message_without_the_catalog_is_a_finding(endpoint: Endpoint) -> None:
    base = endpoint.register("cg.x.d", {"output": {}}, CONFIG)
    messages = [
        {"role": "system", "content": "instructions"},
        {"role": "user", "content": json.dumps({"request": "r", "context": {}, "limit": 5})},
    ]
    post(base + "/chat/completions", good_request("", messages=messages)["body"], endpoint.key)
    assert endpoint.findings("cg.x.d")[1] == [
        "the user message is not {request, context, limit, catalog}"
    ]


def test_a_request_outside_the_completions_path_is_a_finding_answered_404(
    endpoint: Endpoint,
) -> None:
    base = endpoint.register("cg.x.e", {"output": {}}, CONFIG)
    status, _, _ = post(base + "/elsewhere/chat/completions", {}, endpoint.key)
    assert status == 404
    assert endpoint.findings("cg.x.e") == (
        1,
        [
            "a request to '/v1/elsewhere/chat/completions' "
            "(only '/v1/chat/completions' under the base URL is asked)"
        ],
    )


def test_status_and_headers_are_the_scripts_with_the_base_url_in_place(
    endpoint: Endpoint,
) -> None:
    script = {"status": 307, "headers": {"Location": "{endpoint}/moved"}, "text": "x"}
    base = endpoint.register("cg.x.f", script, CONFIG)
    request = urllib.request.Request(
        base + "/chat/completions", data=b"{}", method="POST", headers={}
    )

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as raised:
        opener.open(request, timeout=10)
    with raised.value as answer:
        assert answer.code == 307
        assert answer.headers["Location"] == base + "/moved"


def test_each_vector_has_its_own_base_url_and_count(endpoint: Endpoint) -> None:
    first = endpoint.register("cg.x.g", {"output": {}}, CONFIG)
    second = endpoint.register("cg.x.h", {"output": {}}, CONFIG)
    assert first != second
    post(first + "/chat/completions", good_request("")["body"], endpoint.key)
    assert endpoint.findings("cg.x.g")[0] == 1
    assert endpoint.findings("cg.x.h")[0] == 0


def test_body_bytes_pads_the_body_with_spaces_to_the_exact_size() -> None:
    body = answer_body({"completion": {"a": 1}, "bodyBytes": 20}, "http://h")
    assert body == b'{"a": 1}' + b" " * 12


def test_body_bytes_below_the_body_is_an_error_of_the_vector() -> None:
    with pytest.raises(ValueError, match="over its bodyBytes 3"):
        answer_body({"completion": {"a": 1}, "bodyBytes": 3}, "http://h")


def test_the_keys_are_in_the_environment_and_one_holds_a_space(endpoint: Endpoint) -> None:
    environment = endpoint.environment()
    assert environment["CG_CONFORMANCE_API_KEY"] == endpoint.key
    assert " " in environment["CG_CONFORMANCE_API_KEY_SPACED"]
    assert set(endpoint.secrets) == set(environment.values())


def test_drop_before_answer_closes_the_connection_with_no_answer(endpoint: Endpoint) -> None:
    import http.client

    base = endpoint.register("cg.x.i", {"output": {}, "drop": "before-answer"}, CONFIG)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        post(base + "/chat/completions", good_request("")["body"], endpoint.key)
    assert endpoint.findings("cg.x.i") == (1, [])


def test_drop_mid_body_sends_half_the_announced_body(endpoint: Endpoint) -> None:
    import http.client

    base = endpoint.register("cg.x.j", {"text": "0123456789", "drop": "mid-body"}, CONFIG)
    with pytest.raises(http.client.IncompleteRead) as raised:
        post(base + "/chat/completions", good_request("")["body"], endpoint.key)
    assert raised.value.partial == b"01234"


def test_the_surfaces_of_one_vector_are_counted_apart(tmp_path: Any) -> None:
    from capability_graph_conformance.suite import Suite
    from capability_graph_conformance.workspace import Workspace, endpoint_key

    suite = Suite.packaged()
    vector = next(v for v in suite.vectors if v.id == "cg.model.openai-matched")
    server = Endpoint()
    server.start()
    try:
        workspace = Workspace(suite, tmp_path, server)
        sdk = workspace.effective_config(vector, "sdk")["model"]["baseUrl"]
        cli = workspace.effective_config(vector, "cli")["model"]["baseUrl"]
        assert sdk != cli
        post(sdk + "/chat/completions", good_request("")["body"], server.key)
        assert server.findings(endpoint_key(vector, "sdk"))[0] == 1
        assert server.findings(endpoint_key(vector, "cli"))[0] == 0
    finally:
        server.close()
