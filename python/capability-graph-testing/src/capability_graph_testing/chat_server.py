"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1 (ephemeral port) for tests.

Real HTTP/1.1 over loopback: the ``openai`` SDK talks to it exactly as to a real endpoint. Each
test sets :attr:`ChatServer.reply` (a :class:`Reply` or a function of the request) and reads
:attr:`ChatServer.requests` afterwards.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; bytes/str -> sent as is
    delay_s: float = 0.0  # wait before answering (cut short when the server stops)
    headers: dict[str, str] = field(default_factory=dict)  # e.g. a redirect's Location
    # Sent after ``body`` (the Content-Length counts them), one write each, ``chunk_delay_s``
    # apart: a large body streamed slowly. The server stops when the client hangs up.
    chunks: list[bytes] = field(default_factory=list)
    chunk_delay_s: float = 0.0


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


def completion(
    content: str | None, *, refusal: str | None = None, finish: str = "stop"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def answer(output: Any) -> Reply:
    return Reply(body=completion(json.dumps(output)))


def api_error(
    status: int, message: str, code: str | None = None, kind: str = "invalid_request_error"
) -> Reply:
    return Reply(
        status=status,
        body={"error": {"message": message, "type": kind, "param": None, "code": code}},
    )


@dataclass
class ChatServer:
    reply: Reply | Callable[[Received], Reply] = field(default_factory=Reply)
    requests: list[Received] = field(default_factory=list)
    disconnected: threading.Event = field(default_factory=threading.Event)
    #: Body bytes written (the client may not have read them all).
    sent_bytes: int = 0

    def __post_init__(self) -> None:
        self._stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                received = Received(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw)
                )
                server.requests.append(received)
                reply = server.reply(received) if callable(server.reply) else server.reply
                if reply.delay_s and not server._wait(reply.delay_s, self.connection):
                    return
                body = reply.body
                data = (
                    body
                    if isinstance(body, bytes)
                    else body.encode()
                    if isinstance(body, str)
                    else json.dumps(body).encode()
                )
                length = len(data) + sum(len(chunk) for chunk in reply.chunks)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(length))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                    server.sent_bytes += len(data)
                    for chunk in reply.chunks:
                        if server._stopping.is_set():
                            return
                        if reply.chunk_delay_s:
                            time.sleep(reply.chunk_delay_s)
                        self.wfile.write(chunk)
                        server.sent_bytes += len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    server.disconnected.set()

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}
        )

    def _wait(self, seconds: float, connection: socket.socket) -> bool:
        """Wait before answering; False when the client hung up or the server is stopping."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self._stopping.wait(0.01):
                return False
            if _peer_closed(connection):
                self.disconnected.set()
                return False
        return True

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class _Server(ThreadingHTTPServer):
    # Many matches may connect at once: the default backlog of 5 would refuse some of them.
    request_queue_size = 256


def _peer_closed(connection: socket.socket) -> bool:
    """True when the client has closed its end (a readable socket with nothing to read)."""
    connection.setblocking(False)
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        connection.setblocking(True)


def refused_url() -> str:
    """A loopback URL on which nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
