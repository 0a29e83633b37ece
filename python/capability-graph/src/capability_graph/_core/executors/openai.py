"""The ``openai`` executor: any OpenAI-compatible chat-completions endpoint, structured output.

``{"executor": "openai", "baseUrl": "https://api.example.com/v1", "model": "gpt-x",
"apiKeyEnv": "EXAMPLE_API_KEY", "timeoutMs"?: N}`` — the key is read from the named environment
variable at match time (never stored in config, results or errors). The request asks for
``response_format: {type: json_schema, json_schema: {name, strict: true, schema}}``.

The ``openai`` package is an optional extra (``capability-graph[openai]``), imported only when a
match runs; missing it is ``CG_MODEL_UNAVAILABLE`` + ``check_config``. The SDK's exceptions are
mapped in exactly one place, :func:`_project_openai_error`. The HTTP body is read through the
SDK's streaming response with a byte cap, so an oversized answer is refused before it is
buffered whole: ``CG_MODEL_OUTPUT_TOO_LARGE``. A body of any other status is read to the same cap
at most before the SDK sees it (CG-MODEL-19): the SDK would otherwise read it whole.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import urllib.parse
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ..._generated.taxonomy import REGISTRY, ErrorCode, NextAction, Phase
from ..errors import GraphError
from ..json import NotPureJson, parse_request_text
from .prompt import OUTPUT_SCHEMA, SYSTEM_PROMPT, drop_empty_reasons, payload
from .threads import Preparation

if TYPE_CHECKING:
    import ssl

    import openai

    from .job import MatchJob

__all__ = ["OpenAICompatExecutor"]

T = TypeVar("T")

# An API key goes into an HTTP header: only visible ASCII can be sent unchanged (executors.md 9).
_HEADER_SAFE_KEY: Final = re.compile(r"[\x21-\x7e]+")
# The HTTP body around the answer (JSON escaping, ids, usage) may exceed the answer itself.
_TRANSPORT_FACTOR: Final = 4
_TRANSPORT_SLACK: Final = 65_536
# The SDK's own timeout backs up the runner's deadline, which is the authority.
_SDK_TIMEOUT_MARGIN_S: Final = 1.0
# CG-MODEL-23: exactly this code, or a message matching this pattern (ASCII case ignored).
_CONTEXT_CODE: Final = "context_length_exceeded"
_CONTEXT_TEXT: Final = re.compile(r"context[ _-]?(length|window)", re.I | re.ASCII)


def _error(code: ErrorCode, action: NextAction | None = None) -> GraphError:
    return GraphError(code, Phase.MATCH, None, action if action is not None else _default(code))


def _default(code: ErrorCode) -> NextAction:
    action = REGISTRY[code].default_action
    assert action is not None
    return action


def _unavailable(action: NextAction) -> GraphError:
    return _error(ErrorCode.CG_MODEL_UNAVAILABLE, action)


#: How long ``aclose`` waits for a preparation still running (an import cannot be interrupted).
_PREPARATION_JOIN_S: Final = 30.0


class OpenAICompatExecutor:
    """One executor per configuration; a fresh SDK client per match (bound to that match's
    event loop, closed when the match ends or is cancelled).

    The SDK is imported and the TLS context made once per executor, on one thread however many
    matches start at once; ``aclose`` waits for that thread, so nothing outlives the graph."""

    name: Final = "openai"

    def __init__(self, base_url: str, model: str, api_key_env: str) -> None:
        self.base_url = base_url
        self.model = model
        self.api_key_env = api_key_env
        self._preparation = Preparation(_import_sdk, "cg-openai")

    @classmethod
    def from_config(cls, model: Mapping[str, Any], where: str) -> OpenAICompatExecutor:
        return cls(model["baseUrl"], model["model"], model["apiKeyEnv"])

    async def match(self, job: MatchJob) -> object:
        api_key = os.environ.get(self.api_key_env)
        if not api_key or _HEADER_SAFE_KEY.fullmatch(api_key) is None:
            # Unset, empty, or not sendable as a header value: a configuration fault, and no
            # request is sent (a header the client would reject or alter must not leave).
            raise _unavailable(NextAction.CHECK_CONFIG)
        if not _usable_url(self.base_url):
            raise _unavailable(NextAction.CHECK_CONFIG)
        sdk, tls, bounded_client = await self._prepare()
        timeout = max(job.deadline - time.monotonic(), 0.001) + _SDK_TIMEOUT_MARGIN_S
        try:
            async with sdk.AsyncOpenAI(
                api_key=api_key,
                base_url=self.base_url,
                max_retries=0,
                timeout=timeout,
                # A redirect is never followed: the bearer key must not be sent to another
                # place (executors.md 9); a 3xx answer is the baseUrl's fault, check_config.
                http_client=bounded_client(
                    _body_cap(job.max_output_bytes), verify=tls, follow_redirects=False
                ),
            ) as client:
                body = await self._request(client, job)
        except GraphError:
            raise
        except sdk.OpenAIError as exc:
            raise _project_openai_error(sdk, exc) from None
        return _answer(body, job.max_output_bytes)

    async def _prepare(self) -> tuple[Any, ssl.SSLContext, Any]:
        """The SDK module and a TLS context, made once per executor off the event loop: the
        import takes ~1 s cold and loading CA certificates ~50 ms, which would otherwise block
        the loop (and the deadline) on every match. Concurrent first matches share one thread."""
        prepared = await self._preparation.get()
        if prepared is None:
            raise _unavailable(NextAction.CHECK_CONFIG)
        return prepared

    async def aclose(self) -> None:
        """Wait (bounded) for a preparation still running, so no thread outlives the graph."""
        await self._preparation.join(_PREPARATION_JOIN_S)

    async def _request(self, client: openai.AsyncOpenAI, job: MatchJob) -> bytes:
        cap = _body_cap(job.max_output_bytes)
        async with client.chat.completions.with_streaming_response.create(
            model=self.model,
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": payload(job)},
            ],
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": "capability_match",
                    "strict": True,
                    "schema": OUTPUT_SCHEMA,
                },
            },
        ) as response:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.iter_bytes():
                size += len(chunk)
                if size > cap:
                    raise _error(ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE)
                chunks.append(chunk)
        return b"".join(chunks)


def _usable_url(base_url: str) -> bool:
    """Whether the HTTP client can use ``base_url``: the BaseUrl pattern admits a bracketed
    literal that is no IP address (``http://[::1:]``), which is a configuration fault too."""
    try:
        parts = urllib.parse.urlsplit(base_url)
        _ = parts.port
    except ValueError:
        return False
    return bool(parts.hostname)


def _body_cap(max_output_bytes: int) -> int:
    """The most of a response body that is read, whatever its status (executors.md 9)."""
    return _TRANSPORT_FACTOR * max_output_bytes + _TRANSPORT_SLACK


def _import_sdk() -> tuple[Any, ssl.SSLContext, Any] | None:
    try:
        import openai
    except ImportError:
        return None
    return openai, _sdk_tls_context(), _bounded_client_class(openai.DefaultAsyncHttpxClient)


def _sdk_tls_context() -> ssl.SSLContext:
    """The TLS context the SDK's HTTP transport would build for itself (httpx2 for openai 3,
    httpx for openai 2), else the system default (made on the preparation's thread, with the
    SDK: a graph that never matches imports neither)."""
    import ssl

    factory = None
    with contextlib.suppress(ImportError):
        import httpx2  # type: ignore[import-not-found,unused-ignore]

        factory = getattr(httpx2, "create_ssl_context", None)
    if factory is None:
        with contextlib.suppress(ImportError):
            import httpx  # type: ignore[import-not-found,unused-ignore]

            factory = getattr(httpx, "create_ssl_context", None)
    tls: ssl.SSLContext = factory() if factory is not None else ssl.create_default_context()
    return tls


def _bounded_client_class(base: type[Any]) -> type[Any]:
    """The SDK's HTTP client, except that a body of a status other than 2xx is read to a cap at
    most (CG-MODEL-19). The SDK reads such a body whole before it raises its status error (a
    400 MB body: 2.2 GB of memory, and past the deadline); this client hands it a response
    holding at most ``cap`` decoded bytes instead, or none when the body is larger (a body over
    the bound is no context overflow: its status alone decides)."""

    class BoundedClient(base):  # type: ignore[misc]
        def __init__(self, cap: int, **options: Any) -> None:
            super().__init__(**options)
            self._cg_cap = cap

        async def send(self, request: Any, *, stream: bool = False, **options: Any) -> Any:
            response = await super().send(request, stream=True, **options)
            if 200 <= response.status_code < 300:
                if not stream:
                    await response.aread()
                return response
            try:
                raw = await _read_prefix(response, self._cg_cap)
            finally:
                await response.aclose()
            body = _decoded(raw, response.headers.get("content-encoding", ""), self._cg_cap)
            headers = [
                (name, value)
                for name, value in response.headers.multi_items()
                if name.lower() not in ("content-length", "content-encoding", "transfer-encoding")
            ]
            return type(response)(
                response.status_code,
                headers=headers,
                content=body,
                request=response.request,
                extensions=response.extensions,
            )

    return BoundedClient


async def _read_prefix(response: Any, cap: int) -> bytes | None:
    """The raw (still encoded) body, or None once it grows past ``cap``."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _decoded(raw: bytes | None, encoding: str, cap: int) -> bytes:
    """The body decoded to at most ``cap`` bytes; empty when larger, or in an encoding other
    than gzip or deflate (nothing is decompressed past the cap)."""
    if raw is None:
        return b""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding not in ("gzip", "x-gzip", "deflate"):
        return b""
    # 32 + MAX_WBITS: a zlib or gzip header, detected; -MAX_WBITS: raw deflate.
    for wbits in (32 + zlib.MAX_WBITS, -zlib.MAX_WBITS):
        try:
            inflater = zlib.decompressobj(wbits)
            body = inflater.decompress(raw, cap + 1)
        except zlib.error:
            continue
        return body if len(body) <= cap else b""
    return b""


def _json_text(data: str | bytes) -> Any:
    """A body or a content read by the rules of a request text (CG-MODEL-25): UTF-8 without a
    byte order mark, RFC 8259 JSON, no duplicate member, no container at depth 33; else None."""
    try:
        return parse_request_text(data)
    except NotPureJson:
        return None


def _answer(body: bytes, max_output_bytes: int) -> object:
    """The chat-completions body -> the raw executor output (a parsed JSON value), by the rows of
    the annex's table in order, on the first choice (CG-MODEL-24)."""
    invalid = _error(ErrorCode.CG_MODEL_OUTPUT_INVALID)
    completion = _json_text(body)
    choices = completion.get("choices") if isinstance(completion, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict):
        raise invalid
    finish = choice.get("finish_reason")
    message = choice.get("message")
    if not isinstance(message, dict):
        message = {}  # no refusal and no content: the finish reason still decides first
    refusal = message.get("refusal")
    if (isinstance(refusal, str) and refusal) or finish == "content_filter":
        raise _error(ErrorCode.CG_MODEL_REFUSED)
    if finish == "length":  # the answer was cut off at the upstream output limit
        raise _error(ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE)
    content = message.get("content")
    if not isinstance(content, str):
        raise invalid
    if len(content.encode("utf-8", "surrogatepass")) > max_output_bytes:
        raise _error(ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE)
    try:
        output = parse_request_text(content)
    except NotPureJson:
        raise invalid from None
    return drop_empty_reasons(output)


def _project_openai_error(sdk: Any, exc: BaseException) -> GraphError:
    """THE mapping of the ``openai`` SDK's exceptions (CG-MODEL-15); nothing of ``exc`` survives."""
    if isinstance(exc, sdk.APITimeoutError):
        return _error(ErrorCode.CG_MODEL_TIMEOUT)
    if isinstance(exc, sdk.APIConnectionError):
        return _unavailable(NextAction.RETRY)
    if isinstance(exc, sdk.APIResponseValidationError):
        return _error(ErrorCode.CG_MODEL_OUTPUT_INVALID)
    if isinstance(exc, sdk.LengthFinishReasonError):
        return _error(ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE)
    if isinstance(exc, sdk.ContentFilterFinishReasonError):
        return _error(ErrorCode.CG_MODEL_REFUSED)
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        if 300 <= status < 400:  # a redirect, not followed
            return _unavailable(NextAction.CHECK_CONFIG)
        if status in (400, 413, 422) and _is_context_error(exc):
            return _error(ErrorCode.CG_MODEL_CONTEXT_EXCEEDED)
        if status in (401, 403):
            return _unavailable(NextAction.CHECK_CONFIG)
        if status in (408, 409, 429) or status >= 500:
            return _unavailable(NextAction.RETRY)
        return _unavailable(NextAction.CHECK_CONFIG)  # 400, 404, 422...: endpoint or model setup
    return _unavailable(NextAction.RETRY)


def _is_context_error(exc: Any) -> bool:
    """Whether the (bounded) error body says the context overflowed (CG-MODEL-23): its ``error``
    object's code, or its message; nothing the SDK makes of the body counts."""
    response = getattr(exc, "response", None)
    body = _json_text(getattr(response, "content", b""))
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return False
    if error.get("code") == _CONTEXT_CODE:
        return True
    message = error.get("message")
    return isinstance(message, str) and _CONTEXT_TEXT.search(message) is not None
