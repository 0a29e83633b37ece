#!/usr/bin/env python3
"""A standalone fake implementation for the harness's teeth tests (Bowtie-style): it speaks the
driver protocol (SDK and Tool Adapter), the CLI and the MCP server (``mcp --config``), answering
the small fixture suite (``tests/fixtures/suite``) from a built-in behaviour table. It imports
nothing of ``capability_graph``, so the tests prove what the harness catches without depending on
the reference's internals; each mutation breaks one rule of the contract and is a flag:

    python fake_impl.py [--mutate MUTATION[+MUTATION...]] driver
    python fake_impl.py [--mutate MUTATION[+MUTATION...]] cli ARGS...  (``cli mcp --config F``: MCP)

Mutations (the tests assert the exact failing cases):

cli-next-action        the CLI (not its mcp command) reports CG_CAPABILITY_NOT_FOUND with
                       nextAction "retry" instead of "refresh"
mcp-structured-content a failed MCP tools/call also carries structuredContent (the error object)
leak-raw-message       the executor projection keeps the raw executor message (every surface)
refusal-no-match       a CG_MODEL_REFUSED match is reported as status no_match (every surface)
crashing-driver        the driver process dies when asked to call read_document
bad-protocol-driver    the driver answers a call of list_capabilities with a message outside the
                       protocol
tool-extra-member      the Tool Adapter's envelope carries an extra member "debug"
sigint-not-cancelling  the CLI does not turn Ctrl-C during a match into a cancellation (it exits
                       130 with nothing on stderr)
init-overwrites        init replaces a differing configuration instead of reporting a conflict
silent-text-report     init prints nothing without --json (its report is only ever JSON)
stale-tool-definitions the Tool Adapter's definition of match_capabilities has another description
mcp-no-annotations     the MCP server lists its tools without their annotations
close-unsupported      the driver answers every close 'unsupported' (the trailing close the
                       harness sends after each case included); not a fault of the contract, a
                       driver still growing: combined with another mutation (``+``), its
                       failures must still be reported (CG-CONF-7)
none                   no mutation (the default): the fake passes its fixture suite

The only file of the repository it reads is the contract's tool list (spec/capability-graph/
tools.json, CG-TOOL-3), which a conforming implementation exposes verbatim.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

TOOLS = Path(__file__).resolve().parents[4] / "spec" / "capability-graph" / "tools.json"
PROTOCOL = "1.1"  # the driver protocol this fake speaks
MUTATIONS = (
    "none",
    "cli-next-action",
    "mcp-structured-content",
    "leak-raw-message",
    "refusal-no-match",
    "crashing-driver",
    "bad-protocol-driver",
    "tool-extra-member",
    "sigint-not-cancelling",
    "init-overwrites",
    "silent-text-report",
    "stale-tool-definitions",
    "mcp-no-annotations",
    "close-unsupported",
)


def has(mutation: str, name: str) -> bool:
    """Whether ``mutation`` (one mutation, or several joined by ``+``) holds ``name``."""
    return name in mutation.split("+")


#: The registry's codes this fake reports: phase-independent default action and message.
CODES: dict[str, tuple[str, str]] = {
    "CG_CAPABILITY_NOT_FOUND": ("refresh", "Requested capability does not exist"),
    "CG_MODEL_UNAVAILABLE": ("retry", "Model executor is unavailable"),
    "CG_MODEL_REFUSED": ("fix_input", "Model refused the request"),
    "CG_MODEL_CANCELLED": ("retry", "Match was cancelled"),
    "CG_UNKNOWN_TOOL": ("fix_input", "Unknown tool"),
}


class FakeError(Exception):
    """A GraphError of the fake: its JSON is the contract's error object."""

    def __init__(self, code: str, phase: str, message: str = "") -> None:
        action, default = CODES[code]
        self.json = {"code": code, "phase": phase, "message": message or default}
        self.json["nextAction"] = action
        super().__init__(f"{code} ({phase}): {self.json['message']}")


def tool_definitions() -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads(TOOLS.read_text(encoding="utf-8"))["tools"]
    return tools


class Graph:
    """The behaviour table: what each tool of the fixture suite answers, given the configuration
    (its scripted executor's steps are consumed one per match, as a real executor's are)."""

    def __init__(self, config: str, mutation: str) -> None:
        text = Path(config).read_bytes()
        self.revision = "r:" + hashlib.sha256(text).hexdigest()[:16]
        model = json.loads(text).get("model") or {}
        self.steps: list[Any] = list(model.get("steps") or [])
        self.mutation = mutation

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if tool == "list_capabilities":
            return {"status": "empty", "revision": self.revision, "items": []}
        if tool == "resolve_capabilities":
            raise FakeError("CG_CAPABILITY_NOT_FOUND", "query")
        if tool == "read_document":
            raise FakeError("CG_CAPABILITY_NOT_FOUND", "document")
        if tool == "match_capabilities":
            return self._match()
        raise FakeError("CG_UNKNOWN_TOOL", "query")

    def _match(self) -> dict[str, Any]:
        step = self.steps.pop(0) if self.steps else {}
        no_match = {
            "status": "no_match",
            "revision": self.revision,
            "executor": "scripted",
            "candidates": [],
        }
        if "sleepMs" in step:
            time.sleep(step["sleepMs"] / 1000)
            return no_match
        raw, code = step.get("raiseException"), "CG_MODEL_UNAVAILABLE"
        if "raise" in step:
            raw, code = step["raise"].get("message"), step["raise"]["code"]
        if code == "CG_MODEL_REFUSED" and has(self.mutation, "refusal-no-match"):
            return no_match
        # The projection (CG-MODEL-7): the code's own message, never the executor's text.
        leak = has(self.mutation, "leak-raw-message") and raw
        raise FakeError(code, "match", raw if leak else "")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- the driver (SDK and Tool Adapter) ------------------------------------------------------------


def _observe(surface: str, graph: Graph, step: dict[str, Any], mutation: str) -> dict[str, Any]:
    try:
        value = graph.call(step["tool"], step.get("arguments", {}))
    except FakeError as error:
        if surface == "tool":
            envelope: dict[str, Any] = {"ok": False, "error": error.json}
            if has(mutation, "tool-extra-member"):
                envelope["debug"] = True
            return {"outcome": "returned", "value": envelope}
        return {"outcome": "raised", "graphError": True, "error": error.json, "display": str(error)}
    if surface == "tool":
        return {"outcome": "returned", "value": {"ok": True, "result": value}}
    return {"outcome": "returned", "value": value}


def driver(mutation: str) -> None:
    graph: Graph | None = None
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "stop":
            print(_dumps({"type": "stopped"}), flush=True)
            return
        if message["type"] == "start":
            implementation = {"name": f"fake-{mutation}", "language": "Python", "version": "0"}
            answer = {"type": "started", "protocol": PROTOCOL, "implementation": implementation}
            print(_dumps({**answer, "surfaces": ["sdk", "tool"]}), flush=True)
            continue
        surface, step = message["surface"], message["step"]
        op, tool = step["op"], step.get("tool")
        observation: dict[str, Any] = {"outcome": "returned", "value": None}
        if op == "open":
            graph = Graph(step["config"], mutation)
        elif op == "tools" and surface == "tool":
            tools = tool_definitions()
            if has(mutation, "stale-tool-definitions"):
                stale = {"name": "match_capabilities", "description": "Match capabilities."}
                tools = [{**t, **stale} if t["name"] == stale["name"] else t for t in tools]
            observation["value"] = tools
        elif op == "call" and graph is not None:
            if has(mutation, "crashing-driver") and tool == "read_document":
                os._exit(3)
            observation = _observe(surface, graph, step, mutation)
            if has(mutation, "bad-protocol-driver") and tool == "list_capabilities":
                observation = {"outcome": "maybe"}
        elif op == "close" and has(mutation, "close-unsupported"):
            observation = {"outcome": "unsupported", "reason": "close is not implemented yet"}
        elif op != "close":
            observation = {"outcome": "unsupported", "reason": f"the fake has no step {op!r}"}
        print(_dumps({"type": "observation", "seq": message["seq"], "observation": observation}))
        sys.stdout.flush()


# -- the CLI ---------------------------------------------------------------------------------------


def _fail(error: FakeError, mutation: str, *, status: int = 1) -> NoReturn:
    body = dict(error.json)
    if has(mutation, "cli-next-action") and body["code"] == "CG_CAPABILITY_NOT_FOUND":
        body["nextAction"] = "retry"
    sys.stderr.write(_dumps({"ok": False, "error": body}) + "\n")
    raise SystemExit(status)


def _cancel_on_sigint(mutation: str) -> None:
    """Ctrl-C during a match is a cancellation (CG-CLI-4): the envelope, exit 130."""

    def cancelled(_signum: int, _frame: Any) -> None:
        if has(mutation, "sigint-not-cancelling"):
            os._exit(130)  # interrupted, but silent: no envelope
        error = FakeError("CG_MODEL_CANCELLED", "match")
        sys.stderr.write(_dumps({"ok": False, "error": error.json}) + "\n")
        sys.stderr.flush()
        os._exit(130)

    signal.signal(signal.SIGINT, cancelled)


def _init(folder: Path, *, dry_run: bool, as_json: bool, mutation: str) -> int:
    """init (CG-MAINT-5, CG-MAINT-6): the configuration, an example provider and a document; a
    differing configuration is a conflict and nothing is written."""
    config = {"providers": [{"path": "providers/example.json"}]}
    files = {
        "capability-graph.json": _dumps(config) + "\n",
        "providers/example.json": _dumps(
            {"providerId": "example", "name": "Example", "version": "1", "capabilities": []}
        )
        + "\n",
        "providers/knowledge/getting-started.md": "# Getting started\n",
    }
    target = folder / "capability-graph.json"
    if has(mutation, "init-overwrites") and not dry_run:
        target.unlink(missing_ok=True)
    conflict = target.exists() and target.read_text(encoding="utf-8") != files[target.name]
    ids = ("configuration", "provider", "document")
    if conflict:
        checks = [{"id": "configuration", "status": "fail", "message": "differs: not overwritten"}]
        checks += [{"id": i, "status": "skip", "message": "Not written"} for i in ids[1:]]
        status, exit_code = "conflict", 3
    else:
        verb = "Would create" if dry_run else "Created"
        checks = [
            {"id": i, "status": "ok", "message": f"{verb} {f}"}
            for i, f in zip(ids, files, strict=True)
        ]
        status, exit_code = ("planned" if dry_run else "ok"), 0
        for relative, text in files.items() if not dry_run else ():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_text(text, encoding="utf-8")
    if as_json:
        print(_dumps({"status": status, "checks": checks, "warnings": []}))
    elif not has(mutation, "silent-text-report"):
        print(f"capability-graph init: {status}")
        for check in checks:
            print(f"  [{check['status']}] {check['id']}: {check['message']}")
    return exit_code


def cli(mutation: str, argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="capability-graph")
    parser.add_argument("--config", default="capability-graph.json")
    commands = parser.add_subparsers(dest="command", required=True)
    call = commands.add_parser("call")
    call.add_argument("tool")
    call.add_argument("--arguments", default="{}")
    commands.add_parser("resolve").add_argument("ids", nargs="+")
    commands.add_parser("match").add_argument("request")
    commands.add_parser("mcp")
    init = commands.add_parser("init")
    init.add_argument("folder")
    init.add_argument("--dry-run", action="store_true")
    init.add_argument("--json", action="store_true")
    for command in commands.choices.values():
        command.add_argument("--config", default=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.command == "init":
        folder = Path(args.folder)
        raise SystemExit(_init(folder, dry_run=args.dry_run, as_json=args.json, mutation=mutation))
    graph = Graph(args.config, mutation)
    if args.command == "mcp":
        mcp(graph, mutation)
        return
    if args.command == "call":
        tool, arguments = args.tool, json.loads(args.arguments)
    elif args.command == "resolve":
        tool, arguments = "resolve_capabilities", {"ids": args.ids}
    else:
        tool, arguments = "match_capabilities", {"request": args.request}
        _cancel_on_sigint(mutation)
    try:
        result = graph.call(tool, arguments)
    except FakeError as error:
        _fail(error, mutation)
    print(_dumps(result))


# -- the MCP server (newline-delimited JSON-RPC on stdio) ------------------------------------------


def _tool_result(graph: Graph, params: dict[str, Any], mutation: str) -> dict[str, Any]:
    try:
        result = graph.call(params["name"], params.get("arguments", {}))
    except FakeError as error:
        text = {"type": "text", "text": _dumps(error.json)}
        failed: dict[str, Any] = {"content": [text], "isError": True}
        if has(mutation, "mcp-structured-content"):
            failed["structuredContent"] = error.json
        return failed
    return {"content": [{"type": "text", "text": _dumps(result)}], "structuredContent": result}


def mcp(graph: Graph, mutation: str) -> None:
    tools = tool_definitions()
    if has(mutation, "mcp-no-annotations"):
        tools = [{k: v for k, v in tool.items() if k != "annotations"} for tool in tools]
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification
        method, params = message.get("method"), message.get("params") or {}
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            answer["result"] = {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": f"fake-{mutation}", "version": "0"},
            }
        elif method == "tools/list":
            answer["result"] = {"tools": tools}
        elif method == "tools/call":
            answer["result"] = _tool_result(graph, params, mutation)
        elif method == "ping":
            answer["result"] = {}
        else:
            answer["error"] = {"code": -32601, "message": "Method not found"}
        print(_dumps(answer), flush=True)


def main() -> None:
    # By hand, not argparse: everything after the role is the CLI's own argv.
    argv, mutation = sys.argv[1:], "none"
    if argv[:1] == ["--mutate"]:
        mutation, argv = argv[1], argv[2:]
    if not set(mutation.split("+")) <= set(MUTATIONS) or argv[:1] not in (["driver"], ["cli"]):
        raise SystemExit(f"usage: fake_impl.py [--mutate {'|'.join(MUTATIONS)}] driver|cli ARGS")
    if argv[0] == "driver":
        driver(mutation)
    else:
        cli(mutation, argv[1:])


if __name__ == "__main__":
    main()
