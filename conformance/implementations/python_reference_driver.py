#!/usr/bin/env python3
"""Conformance driver of the Python reference implementation (driver protocol 1.1).

``cg-conformance`` drives the SDK and the Tool Adapter of an implementation through a *driver*: a
small program that reads one JSON message per line on stdin and answers each with one JSON line on
stdout (``spec/conformance/driver-protocol.schema.json``; ``docs/conformance.md`` explains it).
This is the driver of ``capability_graph``, and the worked example of the implementer's guide:

* ``start``  -> ``started`` with the implementation's name, language, version and surfaces;
* ``run``    -> one observation of one step on the ``sdk`` or the ``tool`` surface:

  - ``open {config}``   ``await CapabilityGraph.open(config)`` (the previous graph is closed);
  - ``call {tool, arguments, handle?}``  ``sdk``: ``await graph.call(tool, arguments,
    cancel=token)`` (the SDK's JSON entry point); ``tool``: ``await ToolAdapter(graph).call(...)``.
    With a
    ``handle`` the call runs in the background and the answer is ``started``;
  - ``await {handle}`` / ``cancel {handle}``  wait for / cancel (``CancelToken``) a started call
    (cancelling one that has finished changes nothing); a handle names its call until its
    ``await`` or the next ``open``, and any other handle is answered ``protocolError``;
  - ``reload {providers?}`` / ``close``  the SDK operations, on both surfaces;
  - ``tools``  (protocol 1.1) ``ToolAdapter.tools`` on the ``tool`` surface (the SDK has no
    tool list: ``unsupported``);
* ``stop``   -> ``stopped``, then exit.

What the caller saw is reported as ``returned`` (the JSON value) or ``raised`` (a GraphError as
its ``to_json()``; anything else by type name). ``display`` is ``str(error)``: the harness checks
it for leaked text too. The protocol owns stdout: anything else the process prints goes to stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any, BinaryIO

from capability_graph import CONTRACT_VERSION, CancelToken, CapabilityGraph, GraphError, ToolAdapter

PROTOCOL = "1.1"
SURFACES = ("sdk", "tool")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("capability-graph")
    except PackageNotFoundError:  # running from a source tree
        return "0"


def returned(value: Any) -> dict[str, Any]:
    return {"outcome": "returned", "value": value}


def raised(error: BaseException) -> dict[str, Any]:
    if isinstance(error, GraphError):
        return {
            "outcome": "raised",
            "graphError": True,
            "error": error.to_json(),
            "display": str(error),
        }
    return {
        "outcome": "raised",
        "graphError": False,
        "errorType": type(error).__name__,
        "display": str(error),
    }


class UnknownHandle(Exception):
    """An ``await`` or ``cancel`` whose handle names no started call (never started, already
    awaited, or started before the last ``open``): answered ``protocolError``, since the
    message, not the implementation, is at fault (spec/conformance/README.md, "Scenarios")."""

    def __init__(self, handle: object) -> None:
        super().__init__(f"no started call has the handle {handle!r}")


class Driver:
    """One graph at a time, plus the calls started with a handle."""

    def __init__(self) -> None:
        self.graph: CapabilityGraph | None = None
        self.adapter: ToolAdapter | None = None
        self.calls: dict[str, tuple[asyncio.Task[dict[str, Any]], CancelToken]] = {}

    async def run(self, surface: str, step: dict[str, Any]) -> dict[str, Any]:
        op = step.get("op")
        if op == "open":
            await self.close()
            try:
                self.graph = await CapabilityGraph.open(step["config"])
            except Exception as error:  # noqa: BLE001 -- every failure is an observation
                return raised(error)
            self.adapter = ToolAdapter(self.graph)
            return returned(None)
        if op == "call":
            token = CancelToken()
            task = asyncio.ensure_future(self._call(surface, step, token))
            if "handle" in step:
                self.calls[step["handle"]] = (task, token)
                return {"outcome": "started"}
            return await task
        if op == "await":
            task, _ = self._started(step.get("handle"))
            del self.calls[step["handle"]]
            return await task
        if op == "cancel":  # a call that has finished: nothing to cancel, its await tells
            self._started(step.get("handle"))[1].cancel()
            return returned(None)
        if op == "reload":
            graph = self._graph()
            try:
                result = await graph.reload(providers=step.get("providers"))
            except Exception as error:  # noqa: BLE001
                return raised(error)
            return returned(result.to_json())
        if op == "close":
            if self.graph is not None:
                await self.graph.close()
            return returned(None)
        if op == "tools" and surface == "tool":
            self._graph()  # the scenario opened a graph, so there is an adapter
            assert self.adapter is not None
            return returned(self.adapter.tools)
        return {"outcome": "unsupported", "reason": f"unknown step op {op!r}"}

    async def _call(self, surface: str, step: dict[str, Any], token: CancelToken) -> dict[str, Any]:
        graph = self._graph()
        try:
            if surface == "tool":
                assert self.adapter is not None
                return returned(
                    await self.adapter.call(step["tool"], step["arguments"], cancel=token)
                )
            return returned(await graph.call(step["tool"], step["arguments"], cancel=token))
        except Exception as error:  # noqa: BLE001
            return raised(error)

    def _started(self, handle: Any) -> tuple[asyncio.Task[dict[str, Any]], CancelToken]:
        if not isinstance(handle, str) or handle not in self.calls:
            raise UnknownHandle(handle)
        return self.calls[handle]

    def _graph(self) -> CapabilityGraph:
        if self.graph is None:
            raise RuntimeError("no graph is open (the scenario must start with an open step)")
        return self.graph

    async def close(self) -> None:
        for task, token in self.calls.values():
            token.cancel()
            task.cancel()
        self.calls.clear()
        if self.graph is not None:
            await self.graph.close()
        self.graph = None
        self.adapter = None


def _dumps(message: dict[str, Any]) -> bytes:
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        return (text + "\n").encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError):
        return (json.dumps(message, ensure_ascii=True, default=repr) + "\n").encode("ascii")


async def serve(protocol_out: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    driver = Driver()

    def send(message: dict[str, Any]) -> None:
        protocol_out.write(_dumps(message))
        protocol_out.flush()

    while True:
        line = await loop.run_in_executor(None, sys.stdin.buffer.readline)
        if not line:
            break
        try:
            message = json.loads(line)
            kind = message["type"]
        except (ValueError, KeyError, TypeError):
            send({"type": "protocolError", "message": "not a protocol message"})
            continue
        if kind == "start":
            send(
                {
                    "type": "started",
                    "protocol": PROTOCOL,
                    "implementation": {
                        "name": "python-reference",
                        "language": "Python",
                        "version": _version(),
                        "contractVersion": CONTRACT_VERSION,
                    },
                    "surfaces": list(SURFACES),
                }
            )
        elif kind == "run":
            seq = message.get("seq")
            surface, step = message.get("surface"), message.get("step")
            if surface not in SURFACES or not isinstance(step, dict) or not isinstance(seq, int):
                send({"type": "protocolError", "message": "run needs seq, surface and step"})
                continue
            try:
                observation = await driver.run(surface, step)
            except UnknownHandle as error:
                send({"type": "protocolError", "seq": seq, "message": str(error)})
                continue
            except Exception as error:  # noqa: BLE001 -- the driver itself must keep going
                observation = raised(error)
            send({"type": "observation", "seq": seq, "observation": observation})
        elif kind == "stop":
            await driver.close()
            send({"type": "stopped"})
            break
        else:
            send({"type": "protocolError", "message": f"unknown message type {kind!r}"})
    await driver.close()


def main() -> None:
    # The protocol owns the real stdout; anything printed by mistake goes to stderr.
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    asyncio.run(serve(protocol_out))


if __name__ == "__main__":
    main()
