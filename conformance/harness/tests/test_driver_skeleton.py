"""The driver skeleton an implementer copies (conformance/implementations/driver_skeleton.py):
it speaks driver protocol 1.1 line for line, and the real harness, run on it, reports every step
it does not implement as the protocol says (``unsupported``: a skipped case, never an error).
The report names the implementation by its manifest, whatever the driver says of itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from capability_graph_conformance.schemas import SchemaSet

REPO = Path(__file__).resolve().parents[3]
SKELETON = REPO / "conformance" / "implementations" / "driver_skeleton.py"
DRIVER_MESSAGE = "conformance/driver-protocol.schema.json#/$defs/DriverMessage"
SELF_REPORT = {"name": "my-implementation", "language": "MyLanguage", "version": "0.0.0"}
STARTED = {
    "type": "started",
    "protocol": "1.1",
    "implementation": SELF_REPORT,
    "surfaces": ["sdk", "tool"],
}
NOTE = (
    "The driver reports itself as my-implementation 0.0.0 (MyLanguage); this report names the "
    "implementation as its manifest does."
)


def _run(step: dict[str, Any], *, seq: int, surface: str = "sdk") -> dict[str, Any]:
    return {"type": "run", "seq": seq, "surface": surface, "step": step}


# -- the protocol, line by line --------------------------------------------------------------------

CONVERSATION: list[tuple[Any, dict[str, Any]]] = [
    ({"type": "start", "protocol": "1.1", "suite": "1.4.0"}, STARTED),
    (
        _run({"op": "open", "config": "/tmp/x/capability-graph.json"}, seq=1),
        {"outcome": "unsupported", "reason": "open is not implemented yet"},
    ),
    (
        _run({"op": "call", "tool": "list_capabilities", "arguments": {}}, seq=2),
        {"outcome": "unsupported", "reason": "call is not implemented yet"},
    ),
    (
        _run(
            {
                "op": "call",
                "tool": "match_capabilities",
                "arguments": {"query": "x"},
                "handle": "m",
            },
            seq=3,
            surface="tool",
        ),
        {"outcome": "started"},
    ),
    (
        _run({"op": "cancel", "handle": "m"}, seq=4, surface="tool"),
        {"outcome": "returned", "value": None},
    ),
    (
        _run({"op": "await", "handle": "m"}, seq=5, surface="tool"),
        {"outcome": "unsupported", "reason": "call is not implemented yet"},
    ),
    (
        _run({"op": "reload", "providers": ["acme"]}, seq=6),
        {"outcome": "unsupported", "reason": "reload is not implemented yet"},
    ),
    (
        _run({"op": "close"}, seq=7),
        {"outcome": "unsupported", "reason": "close is not implemented yet"},
    ),
    (
        _run({"op": "tools"}, seq=8, surface="tool"),
        {"outcome": "unsupported", "reason": "tools is not implemented yet"},
    ),
    (
        _run({"op": "tools"}, seq=9),
        {"outcome": "unsupported", "reason": "the SDK has no tool definitions"},
    ),
    (  # a step of a later minor protocol version
        _run({"op": "signal"}, seq=10),
        {"outcome": "unsupported", "reason": "unknown step op 'signal'"},
    ),
]


def test_the_skeleton_answers_each_line_with_one_line_of_the_protocol(schemas: SchemaSet) -> None:
    lines = [message for message, _ in CONVERSATION]
    lines += [
        _run({"op": "await", "handle": "nobody"}, seq=11),
        _run({"op": "cancel", "handle": "m"}, seq=12, surface="tool"),  # already awaited
        "not JSON",
        {"type": "hello", "seq": 13},
        {"type": "run", "seq": 14, "surface": "sdk"},
        _run({"op": "call", "tool": "describe_graph", "arguments": {}, "handle": "old"}, seq=15),
        _run({"op": "open", "config": "/tmp/x/capability-graph.json"}, seq=16),
        _run({"op": "await", "handle": "old"}, seq=17),  # started before the last open
        {"type": "stop"},
    ]
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    done = subprocess.run(
        [sys.executable, str(SKELETON)],
        input=text.encode("utf-8"),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert done.stderr == b""
    answers = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    for answer in answers:
        assert schemas.errors(DRIVER_MESSAGE, answer) == [], answer
    observations = [
        {"type": "observation", "seq": message["seq"], "observation": observation}
        for message, observation in CONVERSATION[1:]
    ]
    assert answers == [
        STARTED,
        *observations,
        {"type": "protocolError", "seq": 11, "message": "no started call has the handle 'nobody'"},
        {"type": "protocolError", "seq": 12, "message": "no started call has the handle 'm'"},
        {"type": "protocolError", "message": "Expecting value: line 1 column 1 (char 0)"},
        {"type": "protocolError", "seq": 13, "message": "unknown message type 'hello'"},
        {"type": "protocolError", "seq": 14, "message": "missing member 'step'"},
        {"type": "observation", "seq": 15, "observation": {"outcome": "started"}},
        {
            "type": "observation",
            "seq": 16,
            "observation": {"outcome": "unsupported", "reason": "open is not implemented yet"},
        },
        {"type": "protocolError", "seq": 17, "message": "no started call has the handle 'old'"},
        {"type": "stopped"},
    ]


def test_the_implementers_page_includes_the_skeleton_rather_than_a_copy() -> None:
    page = (REPO / "docs" / "implementers.md").read_text(encoding="utf-8")
    assert '--8<-- "conformance/implementations/driver_skeleton.py"' in page


# -- the harness on the skeleton -------------------------------------------------------------------


def _manifest(tmp_path: Path, name: str, **commands: list[str]) -> Path:
    data: dict[str, Any] = {"name": "acme-go", "language": "Go", "version": "0.3.0"}
    data.update({surface: {"argv": argv} for surface, argv in commands.items()})
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _run_harness(
    harness: Any, root: Path, manifest: Path, reports: Path
) -> tuple[int, str, dict[str, Any]]:
    status, out, _ = harness(
        "run", "--suite-root", str(root), "--no-progress", "--report-dir", str(reports),
        "-i", str(manifest), "-j", "2",
    )  # fmt: skip
    return status, out, json.loads((reports / "report.json").read_text(encoding="utf-8"))


def _reasons(report: dict[str, Any], surface: str) -> set[tuple[str, str]]:
    """(outcome, reason) of every applicable case of ``surface``."""
    return {
        (c["outcome"], c.get("reason", ""))
        for c in report["cases"]
        if c["surface"] == surface and c["outcome"] != "not-applicable"
    }


@pytest.mark.slow
def test_the_harness_skips_every_step_of_the_bare_skeleton_and_names_the_manifest(
    harness: Any, fixture_suite_root: Path, tmp_path: Path, schemas: SchemaSet
) -> None:
    """The skeleton as shipped, no CLI and no MCP command: nothing errors, nothing is checked."""
    manifest = _manifest(tmp_path, "bare", driver=[sys.executable, str(SKELETON)])
    status, out, report = _run_harness(harness, fixture_suite_root, manifest, tmp_path / "r")
    assert schemas.errors("conformance/report.schema.json", report) == []
    assert status == 1
    assert report["verdict"] == "fail"
    assert report["verdictText"] == "FAIL (no check ran)"
    assert report["reasons"] == ["no check ran"]
    unsupported = "the driver does not support step 0 (open): open is not implemented yet"
    assert {s: (v["verdict"], v["reason"]) for s, v in report["surfaces"].items()} == {
        "sdk": ("not-run", unsupported),
        "tool": ("not-run", unsupported),
        "mcp": ("not-run", "the manifest has no MCP command"),
        "cli": ("not-run", "the manifest has no CLI command"),
    }
    assert _reasons(report, "sdk") == _reasons(report, "tool") == {("skipped", unsupported)}
    assert report["summary"]["errored"] == report["summary"]["checks"] == 0
    # named by its manifest; what the driver says of itself is kept beside it
    assert report["implementation"] == {
        "name": "acme-go",
        "language": "Go",
        "version": "0.3.0",
        "driver": STARTED,
    }
    summary = (tmp_path / "r" / "summary.md").read_text(encoding="utf-8")
    assert summary.splitlines()[0] == "# Conformance: acme-go 0.3.0 (Go)"
    assert summary.splitlines()[4] == NOTE
    assert out.startswith("# Conformance: acme-go 0.3.0 (Go)\n")
    assert f"\n{NOTE}\n" in out


@pytest.mark.slow
def test_a_cli_first_implementation_passes_the_cli_and_skips_the_next_unwritten_step(
    harness: Any, fixture_suite_root: Path, tmp_path: Path, fakes: Path
) -> None:
    """The order of work of docs/implementers.md: a CLI (here the fake's) and a driver whose
    open and close are written: the CLI passes, the driver's cases stop at the call."""
    filled = tmp_path / "filled_driver.py"
    filled.write_text(
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('skeleton', {str(SKELETON)!r})\n"
        "skeleton = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(skeleton)\n"
        "skeleton.Library.open = lambda self, config: None\n"
        "skeleton.Library.close = lambda self: None\n"
        "sys.exit(skeleton.main())\n",
        encoding="utf-8",
    )
    fake_cli = [sys.executable, str(fakes / "fake_impl.py"), "--mutate", "none", "cli"]
    manifest = _manifest(tmp_path, "cli-first", driver=[sys.executable, str(filled)], cli=fake_cli)
    status, _, report = _run_harness(harness, fixture_suite_root, manifest, tmp_path / "r")
    assert status == 0
    assert report["verdict"] == "partial"
    assert report["verdictText"] == "PASS (cli; sdk, tool, mcp not run)"
    call = "the driver does not support step 1 (call): call is not implemented yet"
    tools = "the driver does not support step 1 (tools): tools is not implemented yet"
    assert {s: (v["verdict"], v.get("reason")) for s, v in report["surfaces"].items()} == {
        "sdk": ("not-run", call),
        "tool": ("not-run", call),
        "mcp": ("not-run", "the manifest has no MCP command"),
        "cli": ("pass", None),
    }
    assert _reasons(report, "sdk") == {("skipped", call)}
    assert _reasons(report, "tool") == {("skipped", call), ("skipped", tools)}
    assert report["reasons"] == [
        f"sdk not-run: {call}",
        f"tool not-run: {call}",
        "mcp not-run: the manifest has no MCP command",
    ]


@pytest.mark.slow
def test_an_implementation_without_a_driver_is_named_by_its_manifest_alone(
    harness: Any, fixture_suite_root: Path, tmp_path: Path, fakes: Path
) -> None:
    fake_cli = [sys.executable, str(fakes / "fake_impl.py"), "--mutate", "none", "cli"]
    manifest = _manifest(tmp_path, "cli-only", cli=fake_cli)
    status, out, report = _run_harness(harness, fixture_suite_root, manifest, tmp_path / "r")
    assert status == 0
    assert report["implementation"] == {"name": "acme-go", "language": "Go", "version": "0.3.0"}
    assert report["verdictText"] == "PASS (cli; sdk, tool, mcp not run)"
    assert report["reasons"] == [
        "sdk not-run: the manifest has no driver command",
        "tool not-run: the manifest has no driver command",
        "mcp not-run: the manifest has no MCP command",
    ]
    assert out.startswith("# Conformance: acme-go 0.3.0 (Go)\n")
    assert "The driver reports itself" not in out
