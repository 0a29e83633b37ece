"""Engines shared by the reliability tests and ``scripts/stress.py`` / ``bench/``: a storm of
threads mixing ``close()``, ``reload()`` and queries on the blocking twin, and an event-loop
ticker that measures how long the loop was kept from running while an executor worked."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capability_graph import BlockingCapabilityGraph, CapabilityGraph, GraphError

# --- the blocking twin under threads ----------------------------------------------------------


@dataclass
class TwinStorm:
    """What a storm of closing, reloading and querying threads saw."""

    rounds: int = 0
    calls: Counter[str] = field(default_factory=Counter)  # "result" or an error code
    wrong: list[str] = field(default_factory=list)  # anything but a result or a GraphError
    hung: int = 0  # threads still running after the bound
    worst_close_s: float = 0.0
    threads_left: int = 0
    loops_open: int = 0

    def figures(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "calls": sum(self.calls.values()),
            "outcomes": dict(sorted(self.calls.items())),
            "wrong_endings": len(self.wrong),
            "hung_threads": self.hung,
            "worst_close_s": round(self.worst_close_s, 3),
            "threads_left": self.threads_left,
            "loops_left_open": self.loops_open,
        }


def twin_storm(
    config: Any,
    *,
    rounds: int,
    closers: int = 8,
    workers: int = 8,
    calls_per_worker: int = 5,
    bound_s: float = 60.0,
) -> TwinStorm:
    """Per round: open a blocking graph, then ``closers`` threads call ``close()`` twice while
    ``workers`` threads run reloads, lists, matches and describes, all released at once."""
    storm = TwinStorm()
    baseline = {t.ident for t in threading.enumerate()}
    lock = threading.Lock()
    for _ in range(rounds):
        graph = BlockingCapabilityGraph.open(config)
        start = threading.Barrier(closers + workers)

        def close(graph: BlockingCapabilityGraph = graph, start: threading.Barrier = start) -> None:
            start.wait()
            began = time.monotonic()
            try:
                graph.close()
                graph.close()
            except BaseException as error:
                with lock:
                    storm.wrong.append(f"close: {error!r}")
            with lock:
                storm.worst_close_s = max(storm.worst_close_s, time.monotonic() - began)

        def work(
            number: int, graph: BlockingCapabilityGraph = graph, start: threading.Barrier = start
        ) -> None:
            start.wait()
            for step in range(calls_per_worker):
                operation = (number + step) % 4
                try:
                    if operation == 0:
                        graph.reload()
                    elif operation == 1:
                        graph.list()
                    elif operation == 2:
                        graph.match(request="find a")
                    else:
                        graph.describe()
                    outcome = "result"
                except GraphError as error:
                    outcome = str(error.code)
                except BaseException as error:
                    outcome = "wrong"
                    with lock:
                        storm.wrong.append(f"call: {error!r}")
                with lock:
                    storm.calls[outcome] += 1

        threads = [threading.Thread(target=close) for _ in range(closers)]
        threads += [threading.Thread(target=work, args=(n,)) for n in range(workers)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + bound_s
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        storm.hung += sum(thread.is_alive() for thread in threads)
        storm.loops_open += not graph._loop.is_closed()
        storm.rounds += 1
    settle = time.monotonic() + 5.0  # a thread that has finished its work may still be exiting
    while time.monotonic() < settle:
        left = [t for t in threading.enumerate() if t.ident not in baseline]
        if not left:
            break
        time.sleep(0.01)
    storm.threads_left = len([t for t in threading.enumerate() if t.ident not in baseline])
    return storm


# --- event-loop responsiveness ----------------------------------------------------------------


@dataclass
class Ticks:
    """What a ticker on the event loop saw while a coroutine ran."""

    outcome: Any
    ticks: int
    max_stall_s: float
    elapsed_s: float

    def figures(self) -> dict[str, Any]:
        return {
            "ticks": self.ticks,
            "max_stall_ms": round(self.max_stall_s * 1000, 1),
            "elapsed_ms": round(self.elapsed_s * 1000, 1),
        }


async def with_ticker(work: Any, period_s: float = 0.005) -> Ticks:
    """Await ``work`` while a task ticks every ``period_s``; the longest gap between two ticks
    beyond the period is the stall the work caused (plus the machine's own scheduling noise)."""
    stop = asyncio.Event()
    gaps: list[float] = []

    async def tick() -> None:
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(period_s)
            now = time.monotonic()
            gaps.append(now - last - period_s)
            last = now

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0)  # the ticker runs before the work starts
    started = time.monotonic()
    try:
        outcome: Any = await work
    except GraphError as error:
        outcome = error.to_json()
    elapsed = time.monotonic() - started
    stop.set()
    await ticker
    return Ticks(outcome, len(gaps), max(gaps, default=0.0), elapsed)


#: Words for long, legal capability texts (ASCII letters: the tokenizer's common case).
_WORDS = [
    "request",
    "body",
    "schema",
    "route",
    "validate",
    "contract",
    "payment",
    "invoice",
    "refund",
    "customer",
    "account",
    "token",
    "session",
    "cache",
    "queue",
    "retry",
    "webhook",
    "upload",
    "download",
    "stream",
    "render",
    "template",
    "query",
    "index",
    "search",
    "filter",
    "export",
    "import",
    "report",
    "metric",
    "trace",
    "log",
    "alert",
    "deploy",
    "build",
    "release",
]


def long_catalog_definition(count: int, *, text_chars: int, provider_id: str = "big") -> Any:
    """A provider of ``count`` capabilities whose description and whenToUse are each about
    ``text_chars`` characters of ordinary words (at most the schema's 8,192)."""
    capabilities = []
    for number in range(count):
        words = [_WORDS[(number * 7 + i * 13) % len(_WORDS)] for i in range(text_chars // 6)]
        text = " ".join(words)[: min(text_chars, 8192)]
        capabilities.append(
            {
                "id": f"c{number}",
                "name": f"{_WORDS[number % len(_WORDS)]} capability {number}",
                "description": text,
                "whenToUse": text[::-1].strip() or text,
                "tags": [_WORDS[number % 11], f"n{number}"],
            }
        )
    return {"providerId": provider_id, "name": "Big", "version": "1", "capabilities": capabilities}


# --- one hanging match per executor, for the ticker ----------------------------------------------

#: The executors a ticker watches, and the catalog sizes of the lexical one.
TICKER_KINDS = ("scripted", "lexical-1k", "lexical-100k", "openai", "codex")
_KEY_ENV = "CG_TICKER_OPENAI_KEY"


@contextlib.contextmanager
def hanging_match(kind: str, folder: Path) -> Iterator[dict[str, Any]]:
    """A host configuration whose match keeps ``kind``'s executor working past any short
    deadline: a scripted sleep, a cold lexical index (999 capabilities with texts at the
    schema's maximum length, or 100,000 short ones), an OpenAI-compatible loopback server that
    holds its answer, a fake ``codex`` on PATH that sleeps with a child process."""
    from capability_graph_testing.chat_server import ChatServer, Reply, completion
    from capability_graph_testing.fake_codex import install_fake_codex, path_with

    saved = {name: os.environ.get(name) for name in ("PATH", _KEY_ENV)}
    try:
        if kind == "scripted":
            model: dict[str, Any] = {
                "executor": "scripted",
                "steps": [{"sleepMs": 600_000, "then": {"return": {}}}],
            }
            yield _ticker_config(1, model)
        elif kind in ("lexical-1k", "lexical-100k"):
            count, chars = (999, 8192) if kind == "lexical-1k" else (100_000, 40)
            definition = long_catalog_definition(count, text_chars=chars)
            yield {
                "providers": [{"definition": definition}],
                "model": {"executor": "lexical"},
                "budgets": {"maxCatalogEntries": count, "maxCapabilities": max(count, 100_000)},
            }
        elif kind == "openai":
            os.environ[_KEY_ENV] = "ticker-key"
            with ChatServer(Reply(body=completion("{}"), delay_s=600)) as server:
                model = {
                    "executor": "openai",
                    "baseUrl": server.url,
                    "model": "m",
                    "apiKeyEnv": _KEY_ENV,
                }
                yield _ticker_config(3, model)
        elif kind == "codex":
            fake = install_fake_codex(folder / "codex-bin")
            fake.behave(exec={"sleep": 600, "child": True, "last_message": "{}"})
            os.environ["PATH"] = path_with(fake.folder)
            yield _ticker_config(3, {"executor": "codex"})
        else:
            raise ValueError(kind)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _ticker_config(count: int, model: dict[str, Any]) -> dict[str, Any]:
    capabilities = [
        {"id": f"c{n}", "name": f"C{n}", "description": f"Does c{n}."} for n in range(count)
    ]
    definition = {"providerId": "p", "name": "P", "version": "1", "capabilities": capabilities}
    return {"providers": [{"definition": definition}], "model": model}


async def tick_through_matches(
    config: dict[str, Any], *, timeout_ms: int, matches: int = 1, freeze_gc: bool = False
) -> list[Ticks]:
    """Open ``config`` and run ``matches`` matches one after the other, each under a ticker.

    ``freeze_gc`` moves everything alive after ``open`` out of the cyclic collector's reach
    (``gc.freeze()``, as a host may do), whose full passes over a large graph stall every
    thread of the process."""
    graph = await CapabilityGraph.open(config)
    if freeze_gc:
        gc.freeze()
    try:
        arguments = {"request": "validate the request body schema", "timeoutMs": timeout_ms}
        return [
            await with_ticker(graph.call("match_capabilities", arguments)) for _ in range(matches)
        ]
    finally:
        await graph.close()
        if freeze_gc:
            gc.unfreeze()


# --- forged cursors (random-driven, for the long battery) --------------------------------------


def b64url(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def forge_cursor(rng: Any, revision: str, real: str, filters: str) -> str:
    """A cursor the graph did not issue, close to real ones: random text and bytes, payloads
    with no or a random MAC (huge, negative, fractional and nested offsets, other versions,
    revisions and filter keys), deep nesting, and a real cursor with one byte changed."""
    import base64
    import json as _json
    import sys as _sys

    kind = rng.choice(("text", "bytes", "payload", "macless", "nested", "tampered"))
    if kind == "text":
        alphabet = 'ABCxyz019-_=+/ .{}[]"\\\u00e9\u4e2d\x00'
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 300)))
    if kind == "bytes":
        return b64url(rng.randbytes(rng.randint(1, 400)))
    if kind in ("payload", "macless"):
        offset = rng.choice(
            [0, 1, -1, 2, _sys.maxsize, -_sys.maxsize - 1, 2**64, 10**400, 0.5, "1", None, [1]]
        )
        body = _json.dumps(
            {
                "v": rng.choice([1, 2, 3, "2"]),
                "r": rng.choice([revision, "r:0000000000000000"]),
                "f": rng.choice([filters, "0" * 16]),
                "o": offset,
            }
        ).encode()
        mac = rng.randbytes(16) if kind == "payload" else b""
        return b64url(mac + body)
    if kind == "nested":
        return b64url(rng.randbytes(rng.randint(0, 16)) + b"[" * rng.randint(1, 40_000))
    raw = bytearray(base64.urlsafe_b64decode(real + "=="))
    raw[rng.randrange(len(raw))] ^= rng.randint(1, 255)
    forged = b64url(bytes(raw))
    return forged if forged != real else forged + "A"
