"""The fuzzer of the surfaces' inputs: CLI argv, MCP frames, definitions and configurations.

Built on the values and mutations of :class:`~capability_graph_testing.battery.values.ValueFuzzer`:
argv mixing commands, flags and hostile tokens; garbage MCP lines (random bytes, truncated or
huge frames, wrong fields, odd JSON); mutated provider definitions (as values and as bytes) and
configurations.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capability_graph_testing.battery.graph import VALID_REQUESTS
from capability_graph_testing.battery.hostile import SECRET
from capability_graph_testing.battery.registry import TOOLS
from capability_graph_testing.battery.values import ValueFuzzer, dumps_or
from capability_graph_testing.common import capability, provider
from capability_graph_testing.surfaces import CLI_GRAPH_OPTIONS


class Fuzzer(ValueFuzzer):
    """Random inputs of every surface, on the values and mutations of :class:`ValueFuzzer`."""

    # -- CLI argv ------------------------------------------------------------------------------

    COMMANDS = ("describe", "list", "resolve", "match", "read", "call", "doctor", "explain")
    FLAGS = (
        *CLI_GRAPH_OPTIONS,
        "--json",
        "--help",
        "-h",
        "--version",
        "--config",
        "--bogus",
        "-x",
        "--",
        "--dry-run",
    )

    def argv(self, config: str, *, others: Sequence[str] = ()) -> list[str]:
        rng = self.rng
        tokens = [
            "acme",
            "acme::a",
            "acme::b",
            "beta::x",
            "guide",
            "5",
            "-1",
            "0",
            "99999999999999999999",
            "1e3",
            "١٢",
            "k=v",
            "k:=3",
            "k:=true",
            "k:=[1]",
            "k:=",
            "=v",
            "k:=nan",
            "requires,related",
            "requires,,",
            '{"ids":["acme::a"]}',
            '{"request":"validate"}',
            "{",
            "[]",
            "null",
            '{"a":' * 40 + "1" + "}" * 40,
            "describe_graph",
            "match_capabilities",
            "read_document",
            "no_such_tool",
            "CG_GRAPH_CLOSED",
            "cg_model_timeout",
            SECRET,
            "\x07",
            "",
            " ",
            "é",
            "中文",
            "\udcff",
            "a" * 5000,
            *others,
        ]
        if self.hostile_keys:
            tokens += ['{"abcdefghijk":' * 40 + "1" + "}" * 40, '{"\\u0007":null}']
        if "cli-context-recursion" not in self.avoid:
            tokens.append("k:=" + "[" * 5000)
        if "deep-context" not in self.avoid:
            tokens.append("k:=" + "[" * 900 + "]" * 900)
        argv: list[str] = []
        if rng.random() < 0.9:
            argv.append(rng.choice(self.COMMANDS))
        for _ in range(rng.randint(0, 6)):
            argv.append(rng.choice(self.FLAGS) if rng.random() < 0.4 else rng.choice(tokens))
        if rng.random() < 0.85:
            argv += ["--config", config]
        elif rng.random() < 0.5:
            argv += ["--config", rng.choice(["/nonexistent/x.json", "/dev/null", "/", *others])]
        return argv

    # -- MCP frames ----------------------------------------------------------------------------

    def frame(self) -> bytes:
        """One garbage line for the MCP server (without the newline)."""
        rng = self.rng
        json_fuzz = Fuzzer(rng, python_values=False, avoid=self.avoid)
        call: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": rng.randint(1, 10**6),
            "method": "tools/call",
            "params": {"name": rng.choice(TOOLS), "arguments": VALID_REQUESTS[rng.choice(TOOLS)]},
        }
        kind = rng.randrange(16)
        if kind == 0:
            return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200)))
        if kind == 1:
            text = json.dumps(call).encode()
            return text[: rng.randrange(1, len(text))]
        if kind == 2:
            return b"x" * rng.choice([1 << 16, 1 << 20, 4 << 20])
        if kind == 3:
            big = dict(
                call,
                params={"name": "match_capabilities", "arguments": {"request": "x" * (2 << 20)}},
            )
            return json.dumps(big).encode()
        if kind == 4:
            field_name = rng.choice(["jsonrpc", "id", "method", "params"])
            broken = dict(call)
            broken[field_name] = json_fuzz.value()
            return dumps_or(broken, b"[" * 5000)
        if kind == 5:
            wrong = {**call, "params": {**call["params"], "name": json_fuzz.value()}}
            return dumps_or(wrong, b"{" * 5000)
        if kind == 6:
            tool = rng.choice(TOOLS)
            arguments = json_fuzz.request(tool)
            return dumps_or(dict(call, params={"name": tool, "arguments": arguments}), b"]")
        if kind == 7:
            method = rng.choice(["no/such", "resources/list", "prompts/get", "", "tools/", SECRET])
            return json.dumps(
                {"jsonrpc": "2.0", "id": rng.randint(1, 99), "method": method}
            ).encode()
        if kind == 8:
            method = rng.choice(
                ["notifications/cancelled", "notifications/progress", "notifications/x"]
            )
            note = {"jsonrpc": "2.0", "method": method, "params": json_fuzz.value()}
            return dumps_or(note, b"}")
        if kind == 9:
            return rng.choice([b"[" * 100_000, b"{" * 50_000, b'{"a":' * 20_000])
        if kind == 10:
            return rng.choice(
                [
                    b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":NaN}}',
                    b'{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}',
                    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_capabilities","arguments":{"cursor":"\\ud800"}}}',
                    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":4,"method":"tools/list"}',
                    json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).encode(
                        "utf-16"
                    ),
                    b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_capabilities","arguments":{"limit":1e400}}}',
                ]
            )
        if kind == 11:
            return json.dumps([call, call]).encode()
        if kind == 12:
            return rng.choice([b"", b" ", b"\t", b"\r", b"null", b"0", b'"str"', b"{}"])
        if kind == 13:
            response = {"jsonrpc": "2.0", "id": rng.randint(1, 99), "result": json_fuzz.value()}
            return dumps_or(response, b"{]")
        if kind == 14:
            arguments = json_fuzz.value()
            described = dict(call, params={"name": "describe_graph", "arguments": arguments})
            return dumps_or(described, b"[]]")
        initialize = {"jsonrpc": "2.0", "id": rng.randint(1, 99), "method": "initialize"}
        return dumps_or(dict(initialize, params=json_fuzz.value()), b"{{")

    # -- configurations and definitions ------------------------------------------------------

    def definition(self, provider_id: str = "acme") -> Any:
        base = provider(
            provider_id,
            capability(
                "a",
                tags=["http"],
                whenToUse="when",
                relations=[
                    {"kind": "requires", "target": "b"},
                    {"kind": "related", "target": "z::q"},
                ],
                documents=[{"id": "d", "title": "D", "path": "docs/d.md", "role": "guide"}],
            ),
            capability("b", relations=[{"kind": "parent", "target": "a"}]),
        )
        definition = self.value() if self.rng.random() < 0.1 else self.mutate(base)
        if "null-definition" in self.avoid and definition is None:
            return {}
        return definition

    def definition_bytes(self) -> bytes:
        rng = self.rng
        kind = rng.randrange(6)
        valid = dumps_or(Fuzzer(rng, python_values=False).definition(), b"[" * 5000)
        if kind == 0:
            return valid
        if kind == 1:
            return valid[: rng.randrange(0, len(valid) + 1)]
        if kind == 2:
            return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300)))
        if kind == 3:
            return rng.choice(
                [
                    b'{"providerId":"acme","providerId":"acme","name":"A","version":"1","capabilities":[]}',
                    b'{"providerId":"acme","name":"A","version":"1","capabilities":[],"x":NaN}',
                    b'{"providerId":"acme","name":"\\ud800","version":"1","capabilities":[]}',
                    b'\xef\xbb\xbf{"providerId":"acme","name":"A","version":"1","capabilities":[]}',
                    b'{"providerId":"acme","name":"A","version":1e999,"capabilities":[]}',
                    b"[" * 100_000,
                ]
            )
        if kind == 4:
            return valid.decode().encode("utf-16")
        return dumps_or(Fuzzer(rng, python_values=False).value(), b"{")

    def config(self, directory: Path) -> Any:
        """A mutated configuration whose valid form points at files in ``directory``."""
        base = {
            "providers": [
                {"path": "providers/acme.json"},
                {"definition": provider("beta", capability("x")), "documentRoot": "providers"},
            ],
            "scope": {"providers": ["acme", "beta"]},
            "documents": {"bodies": ["acme"]},
            "budgets": {"maxCapabilities": 100, "maxInputBytes": 4096},
            "model": {
                "executor": "scripted",
                "timeoutMs": 1000,
                "steps": [{"return": {"status": "unknown", "candidates": []}}],
            },
        }
        config = self.value() if self.rng.random() < 0.1 else self.mutate(base)
        if "null-definition" in self.avoid and type(config) is dict:
            for source in (
                config.get("providers", ()) if type(config.get("providers")) is list else ()
            ):
                if type(source) is dict and "definition" in source and source["definition"] is None:
                    source["definition"] = {}
        return config
