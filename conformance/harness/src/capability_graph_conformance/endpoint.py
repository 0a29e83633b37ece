"""The scripted endpoint: an OpenAI-compatible chat-completions server on loopback, answering
each vector that has an ``endpoint`` member as the vector says.

One server per run, in a thread of its own (the runner's event loop must not wait on it). Every
vector gets a base URL of its own, ``http://127.0.0.1:PORT/<token>/v1``, which replaces the text
``{endpoint}`` in the vector's configuration; a request is attributed to its vector by that
token. The server answers every request of a vector alike (so the surfaces, which run
concurrently, need no order), and checks each request against the executor annex's request
(spec/capability-graph/executors.md section 9): ``POST {baseUrl}/chat/completions``, the bearer
key, the model, the two messages and the structured-output format. What it finds wrong is kept
per vector and fails the vector's cases (the check ``endpoint-requests``).

Every process the harness starts has two variables: :data:`KEY_VARIABLE`, a key made for the run,
and :data:`SPACED_KEY_VARIABLE`, the same key with a space (a key that cannot be sent as a header
value). Both keys are forbidden in every byte a surface emits.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final, NamedTuple

__all__ = ["KEY_VARIABLE", "LONGEST_BASE_URL", "SPACED_KEY_VARIABLE", "Endpoint", "answer_body"]

KEY_VARIABLE: Final = "CG_CONFORMANCE_API_KEY"
SPACED_KEY_VARIABLE: Final = "CG_CONFORMANCE_API_KEY_SPACED"
#: The most of a request body the server reads (a match request holds the catalog).
MAX_REQUEST_BYTES: Final = 16 * 1024 * 1024
_COMPLETIONS: Final = "/v1/chat/completions"
#: A base URL as long as any the endpoint gives (a vector's body sizes are checked with it).
LONGEST_BASE_URL: Final = "http://127.0.0.1:65535/v" + "0" * 16 + "/v1"
_REQUEST_MEMBERS: Final = frozenset(("request", "context", "limit", "catalog"))


def answer_body(script: dict[str, Any], base_url: str) -> bytes:
    """The bytes of the answer a vector's ``endpoint`` asks for (without its status/headers)."""
    if "text" in script:
        body = str(script["text"]).encode("utf-8", "surrogatepass")
    elif "completion" in script:
        body = json.dumps(script["completion"], ensure_ascii=False).encode("utf-8")
    elif "content" in script:
        body = _completion(script["content"], script.get("finishReason", "stop"))
    elif "output" in script:
        content = json.dumps(script["output"], ensure_ascii=False, separators=(",", ":"))
        body = _completion(content, script.get("finishReason", "stop"))
    else:
        body = b""
    body = body.replace(b"{endpoint}", base_url.encode("utf-8"))
    size: int | None = script.get("bodyBytes")
    if size is not None:
        if len(body) > size:
            raise ValueError(f"the body is {len(body)} bytes, over its bodyBytes {size}")
        body += b" " * (size - len(body))  # JSON whitespace: the same value, a larger body
    return body


def _completion(content: str, finish_reason: str) -> bytes:
    completion = {
        "id": "chatcmpl-cg-conformance",
        "object": "chat.completion",
        "created": 0,
        "model": "cg-conformance",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
    }
    return json.dumps(completion, ensure_ascii=False).encode("utf-8")


@dataclass
class _Registration:
    script: dict[str, Any]
    model: Any  # the model name the configuration gives, which every request must carry
    base_url: str
    requests: int = 0
    problems: list[str] = field(default_factory=list)


class _Answer(NamedTuple):
    """What the server sends for one request: ``drop`` says how the answer is cut short."""

    status: int
    headers: dict[str, str]
    body: bytes
    delay: float  # seconds before the answer
    drop: str | None  # "before-answer", "mid-body" or None


class Endpoint:
    """The server of one run. ``start`` it, ``register`` each vector, ``close`` at the end."""

    def __init__(self) -> None:
        secret = secrets.token_hex(12)
        self.key = f"sk-cg-{secret}"
        self.spaced_key = f"sk cg {secret}"
        self._lock = threading.Lock()
        self._vectors: dict[str, _Registration] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- the run's side -------------------------------------------------------------------------

    def start(self) -> None:
        endpoint = self

        class Handler(_Handler):
            owner = endpoint

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="cg-endpoint", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None, "the endpoint is not started"
        return int(self._server.server_address[1])

    def environment(self) -> dict[str, str]:
        return {KEY_VARIABLE: self.key, SPACED_KEY_VARIABLE: self.spaced_key}

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.key, self.spaced_key)

    def base_url(self, vector_id: str) -> str:
        token = "v" + hashlib.sha256(vector_id.encode("utf-8")).hexdigest()[:16]
        return f"http://127.0.0.1:{self.port}/{token}/v1"

    def register(self, vector_id: str, script: dict[str, Any], config: Any) -> str:
        """Serve ``script`` for ``vector_id``; its base URL (the same for every call)."""
        base_url = self.base_url(vector_id)
        token = base_url.split("/")[3]
        model = config.get("model") if isinstance(config, dict) else None
        name = model.get("model") if isinstance(model, dict) else None
        with self._lock:
            if token not in self._vectors:
                self._vectors[token] = _Registration(script, name, base_url)
        return base_url

    def findings(self, vector_id: str) -> tuple[int, list[str]]:
        """How many requests the vector's base URL received, and what was wrong with them."""
        token = self.base_url(vector_id).split("/")[3]
        with self._lock:
            registration = self._vectors.get(token)
            if registration is None:
                return 0, []
            return registration.requests, list(registration.problems)

    # -- the server's side ----------------------------------------------------------------------

    def _answer(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> _Answer | None:
        token, _, rest = path.lstrip("/").partition("/")
        with self._lock:
            registration = self._vectors.get(token)
            if registration is None:
                return None
            registration.requests += 1
            problems = self._problems(registration, method, "/" + rest, headers, body)
            registration.problems.extend(problems)
        script = registration.script
        drop = script.get("drop")
        if "/" + rest != _COMPLETIONS:  # e.g. a redirect followed: no answer but a 404
            return _Answer(404, {}, b"", 0.0, drop)
        reply_headers = {"Content-Type": "application/json"}
        for name, value in script.get("headers", {}).items():
            reply_headers[name] = value.replace("{endpoint}", registration.base_url)
        try:
            body = answer_body(script, registration.base_url)
        except ValueError as error:  # cg-conformance check refuses such a vector
            with self._lock:
                registration.problems.append(f"the vector's endpoint: {error}")
            return _Answer(500, {}, b"", 0.0, drop)
        status, delay = int(script.get("status", 200)), script.get("delayMs", 0) / 1000
        return _Answer(status, reply_headers, body, delay, drop)

    def _problems(
        self,
        registration: _Registration,
        method: str,
        path: str,
        headers: dict[str, str],
        body: bytes,
    ) -> list[str]:
        problems: list[str] = []
        if path != _COMPLETIONS:
            return [f"a request to {path!r} (only {_COMPLETIONS!r} under the base URL is asked)"]
        if method != "POST":
            problems.append(f"a {method} request (a match POSTs)")
        if headers.get("authorization") != f"Bearer {self.key}":
            problems.append("the Authorization header is not 'Bearer <the key>'")
        try:
            request = json.loads(body)
        except ValueError:
            return [*problems, "the request body is not JSON"]
        if not isinstance(request, dict):
            return [*problems, "the request body is not a JSON object"]
        if request.get("model") != registration.model:
            problems.append(f"model {request.get('model')!r}, not the configuration's")
        problems += _messages_problems(request.get("messages"))
        problems += _format_problems(request.get("response_format"))
        return problems


def _messages_problems(messages: Any) -> list[str]:
    if not isinstance(messages, list) or len(messages) != 2:
        return ["messages is not a system message and a user message"]
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    if roles != ["system", "user"]:
        return [f"the messages' roles are {roles}, not ['system', 'user']"]
    if not all(isinstance(m.get("content"), str) and m["content"] for m in messages):
        return ["a message's content is not a non-empty string"]
    try:
        job = json.loads(messages[1]["content"])
    except ValueError:
        return ["the user message is not a JSON text"]
    if not isinstance(job, dict) or set(job) != _REQUEST_MEMBERS:
        return ["the user message is not {request, context, limit, catalog}"]
    return []


def _format_problems(response_format: Any) -> list[str]:
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return ["response_format is not {type: json_schema, ...}"]
    schema = response_format.get("json_schema")
    if (
        not isinstance(schema, dict)
        or schema.get("name") != "capability_match"
        or schema.get("strict") is not True
        or not isinstance(schema.get("schema"), dict)
    ):
        return ["json_schema is not {name: capability_match, strict: true, schema: {...}}"]
    return []


class _Handler(BaseHTTPRequestHandler):
    owner: Endpoint
    server_version = "cg-conformance-endpoint"

    def _serve(self) -> None:
        length = self.headers.get("Content-Length", "0")
        size = int(length) if length.isdigit() else 0
        body = self.rfile.read(min(size, MAX_REQUEST_BYTES))
        headers = {name.lower(): value for name, value in self.headers.items()}
        answer = self.owner._answer(self.command, self.path, headers, body)
        if answer is None:  # no vector registered under this path
            answer = _Answer(404, {}, b"", 0.0, None)
        status, reply_headers, payload, delay, drop = answer
        if delay:
            time.sleep(delay)
        if drop == "before-answer":
            return  # the connection closes with no answer at all
        try:
            self.send_response(status)
            for name, value in reply_headers.items():
                self.send_header(name, value)
            if not any(name.lower() == "content-length" for name in reply_headers):
                self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            # "mid-body": half the body that the headers announce, then the connection closes.
            self.wfile.write(payload[: len(payload) // 2] if drop == "mid-body" else payload)
        except OSError:
            pass  # the client went away (its deadline passed, or it stopped reading a body)

    do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the run's report says what matters
