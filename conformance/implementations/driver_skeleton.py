#!/usr/bin/env python3
"""A conformance driver to start from: copy this file (into your implementation's language if it
is not Python) and fill in the places marked ``YOUR LIBRARY``.

It speaks driver protocol 1.1 (``spec/conformance/driver-protocol.schema.json``): one JSON object
per line on stdin, exactly one JSON object per line on stdout, in order. As it stands it performs
no step: it answers every ``run`` with ``{"outcome": "unsupported", "reason": ...}``, the
protocol's way to say "not yet", and ``cg-conformance`` skips those cases instead of failing
them. Every hook of ``Library`` you write turns skipped cases into checked ones.

Standard library only. Try it by hand::

    printf '%s\\n' '{"type":"start","protocol":"1.1","suite":"1.4.0"}' '{"type":"stop"}' \\
      | python3 driver_skeleton.py
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

PROTOCOL = "1.1"

# YOUR LIBRARY: what the driver says of itself in 'started'. The report names the implementation
# by its manifest; this self-report is kept beside it (report.json: implementation.driver).
IMPLEMENTATION = {"name": "my-implementation", "language": "MyLanguage", "version": "0.0.0"}
# The surfaces this driver drives. A surface left out is reported "not run" (no case of it runs).
SURFACES = ["sdk", "tool"]


class NotYet(Exception):
    """Raised by a hook that is not written yet: the step is answered 'unsupported'."""


class Library:
    """Where the driver calls your implementation: one method per step, each raising ``NotYet``
    until you write it. Let your library's errors raise; the driver reports them as the caller
    saw them."""

    def open(self, config: str) -> None:
        """Open a graph from the configuration file ``config`` (an absolute path), closing the
        one opened before, if any."""
        # YOUR LIBRARY: self.close(); self.graph = mylib.open(config)
        raise NotYet("open")

    def call(self, surface: str, tool: str, arguments: Any, cancel: threading.Event) -> Any:
        """Call ``tool`` on the open graph with ``arguments`` exactly as given (any JSON value).

        ``surface == "sdk"``: the SDK's JSON entry point ``call(tool, arguments)``; return the
        result's JSON form and let a GraphError raise. ``surface == "tool"``: the Tool Adapter's
        ``call(tool, arguments)``; return its ``{"ok": ...}`` envelope as it is. ``cancel`` is
        set when the harness cancels this call: connect it to your cancel token."""
        # YOUR LIBRARY: return self.graph.call(tool, arguments, cancel=...)  (sdk)
        #               return self.adapter.call(tool, arguments)            (tool)
        raise NotYet("call")

    def reload(self, providers: list[str] | None) -> Any:
        """The SDK's reload (on both surfaces); return the reload result's JSON form."""
        # YOUR LIBRARY: return self.graph.reload(providers=providers).to_json()
        raise NotYet("reload")

    def close(self) -> None:
        """The SDK's close: idempotent, and nothing to do when no graph is open. The harness
        also sends it after every case, to clean up: that close is not checked, and answering it
        'unsupported' does not skip the case (its checks decide it). Vectors of their own check
        close (reload, close during a match), so write it with ``open``."""
        # YOUR LIBRARY: if self.graph is not None: self.graph.close()
        raise NotYet("close")

    def tool_definitions(self) -> list[Any]:
        """The Tool Adapter's tool definitions as it exposes them: a list of ``{name, title,
        description, inputSchema, outputSchema, annotations}`` (compared with tools.json)."""
        # YOUR LIBRARY: return self.adapter.tools
        raise NotYet("tools")

    def error_object(self, error: Exception) -> dict[str, Any] | None:
        """The error object E of ``error`` (``to_json()``) when it is your GraphError, else
        None (any other exception)."""
        # YOUR LIBRARY: return error.to_json() if isinstance(error, mylib.GraphError) else None
        return None


# -- the protocol: nothing below needs to change ---------------------------------------------------


class ProtocolError(Exception):
    """A line the driver cannot understand: answered ``protocolError``."""


def returned(value: Any) -> dict[str, Any]:
    return {"outcome": "returned", "value": value}


def unsupported(reason: str) -> dict[str, Any]:
    return {"outcome": "unsupported", "reason": reason}


class Driver:
    def __init__(self, library: Library) -> None:
        self.library = library
        #: handle -> (thread, cancel signal, where the thread leaves its observation)
        self.calls: dict[str, tuple[threading.Thread, threading.Event, list[dict[str, Any]]]] = {}

    def observe(self, action: Callable[[], Any]) -> dict[str, Any]:
        """What the caller saw when running ``action``."""
        try:
            return returned(action())
        except NotYet as missing:
            return unsupported(f"{missing} is not implemented yet")
        except Exception as error:  # noqa: BLE001 -- every failure is an observation
            error_object = self.library.error_object(error)
            if error_object is not None:
                return {
                    "outcome": "raised",
                    "graphError": True,
                    "error": error_object,
                    "display": str(error),
                }
            return {
                "outcome": "raised",
                "graphError": False,
                "errorType": type(error).__name__,
                "display": str(error),
            }

    def run(self, surface: str, step: dict[str, Any]) -> dict[str, Any]:
        library, op = self.library, step["op"]
        if op == "open":
            # A new scenario: the calls started before it end, and their handles are forgotten.
            for _, cancel, _ in self.calls.values():
                cancel.set()
            self.calls.clear()
            config = step["config"]
            return self.observe(lambda: library.open(config))
        if op == "call":
            tool, arguments, cancel = step["tool"], step["arguments"], threading.Event()

            def call() -> Any:
                return library.call(surface, tool, arguments, cancel)

            if "handle" not in step:
                return self.observe(call)
            # started now; the harness awaits (or cancels) it later, by its handle
            box: list[dict[str, Any]] = []
            thread = threading.Thread(target=lambda: box.append(self.observe(call)), daemon=True)
            thread.start()
            self.calls[step["handle"]] = (thread, cancel, box)
            return {"outcome": "started"}
        if op == "await":
            thread, _, box = self._started(step["handle"])
            thread.join()
            del self.calls[step["handle"]]
            return box[0]
        if op == "cancel":  # also of a call that has finished: nothing happens, await tells
            self._started(step["handle"])[1].set()
            return returned(None)
        if op == "reload":
            providers = step.get("providers")
            return self.observe(lambda: library.reload(providers))
        if op == "close":
            return self.observe(library.close)
        if op == "tools" and surface == "tool":
            return self.observe(library.tool_definitions)
        if op == "tools":
            return unsupported("the SDK has no tool definitions")
        return unsupported(f"unknown step op {op!r}")  # a step of a later protocol

    def _started(self, handle: str) -> tuple[threading.Thread, threading.Event, list[Any]]:
        """The call started with ``handle``: from its ``call`` to its ``await`` or the next
        ``open``. Any other handle (never started, already awaited, from before the last open)
        is the harness's mistake, not your library's: a protocol error."""
        if handle not in self.calls:
            raise ProtocolError(f"no started call has the handle {handle!r}")
        return self.calls[handle]

    def answer(self, line: bytes) -> dict[str, Any]:
        """The one answer to one line of the harness."""
        seq = None
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ProtocolError("a message is a JSON object")
            if isinstance(message.get("seq"), int):
                seq = message["seq"]
            kind = message.get("type")
            if kind == "start":
                return {
                    "type": "started",
                    "protocol": PROTOCOL,
                    "implementation": IMPLEMENTATION,
                    "surfaces": SURFACES,
                }
            if kind == "run":
                observation = self.run(message["surface"], message["step"])
                return {"type": "observation", "seq": message["seq"], "observation": observation}
            if kind == "stop":
                self.observe(self.library.close)
                return {"type": "stopped"}
            raise ProtocolError(f"unknown message type {kind!r}")
        except (ValueError, KeyError, TypeError, AttributeError, ProtocolError) as error:
            what = f"missing member {error}" if isinstance(error, KeyError) else str(error)
            answer: dict[str, Any] = {"type": "protocolError", "message": what}
            if seq is not None and seq >= 1:
                answer["seq"] = seq
            return answer


def main() -> int:
    # The protocol owns stdout: keep it for the protocol and point file descriptor 1 (and
    # sys.stdout) at stderr, so nothing your library prints can break a line.
    protocol: TextIO = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    driver = Driver(Library())
    for line in sys.stdin.buffer:
        answer = driver.answer(line)
        # ASCII JSON: a text with a lone surrogate still travels, escaped.
        protocol.write(json.dumps(answer, separators=(",", ":")) + "\n")
        protocol.flush()
        if answer["type"] == "stopped":
            return 0
    driver.observe(driver.library.close)  # stdin ended without 'stop'
    return 0


if __name__ == "__main__":
    sys.exit(main())
