"""Benchmark the TypeScript implementation against its baselines, beside the Python figures.

    python bench/bench_typescript.py [--runs 15] [--calls 300] [--size 100000] [--json]
                                           [--no-python]

* CLI cold start: ``node dist/src/bin/capability-graph.js describe`` (the start-up bundle that
  ``bin/capability-graph`` runs) on the quickstart configuration vs ``node -e ""`` (Python:
  ``capability-graph describe`` vs ``python -c "import pydantic"``).
* MCP initialize: spawn -> ``initialize`` answered, ``capability-graph mcp`` vs a bare low-level
  ``@modelcontextprotocol/sdk`` server (``typescript/bench/bare-mcp-server.mjs``) serving the same
  five tool definitions and answering ``tools/call`` with the same payload.
* MCP tools/call round trip on running servers: ``describe_graph`` vs the bare server's answer
  with the same ``describe_graph`` result.
* ``open`` of a generated provider with ``--size`` capabilities (the core benchmark's generator,
  ``bench_core.generate``: two relations, two documents and tags per capability, ~45 MB at 100k)
  vs ``JSON.parse`` of the same bytes, reading the file included in both, time and peak RSS,
  each in a fresh process.

The same client and method as ``bench_surfaces.py`` and ``bench_core.py`` (alternating runs,
medians), whose ratios are printed in the Python column (``--no-python`` skips them). Needs the
TypeScript build: ``npm ci && npm run build`` in ``typescript/``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_core import generate, json_out_option, save_json
from bench_surfaces import Server, alternate, median_ms, round_trips, timed_run

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PACKAGE = ROOT / "typescript"
CLI = PACKAGE / "dist" / "src" / "bin" / "capability-graph.js"
BARE_SERVER = PACKAGE / "bench" / "bare-mcp-server.mjs"
OPEN_CHILD = PACKAGE / "bench" / "open-child.mjs"
QUICKSTART = ROOT / "examples" / "quickstart" / "capability-graph.json"
TOOLS_JSON = ROOT / "spec" / "capability-graph" / "tools.json"


def node_child(mode: str, path: Path) -> dict[str, Any]:
    output = subprocess.run(
        ["node", str(OPEN_CHILD), mode, str(path)], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, Any] = json.loads(output)
    return result


def measure_surfaces(runs: int, calls: int, folder: Path) -> dict[str, float]:
    ours_argv = ["node", str(CLI), "mcp", "--config", str(QUICKSTART)]
    # The bare server answers with exactly what ours answers for describe_graph.
    describe = subprocess.run(
        ["node", str(CLI), "describe", "--config", str(QUICKSTART)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    payload_file = folder / "bare-payload.json"
    payload_file.write_text(
        json.dumps(
            {
                "tools": json.loads(TOOLS_JSON.read_text(encoding="utf-8"))["tools"],
                "payload": json.loads(describe),
            }
        ),
        encoding="utf-8",
    )
    bare_argv = ["node", str(BARE_SERVER), str(payload_file)]

    cli_times, node_times = alternate(
        runs,
        lambda: timed_run(["node", str(CLI), "describe", "--config", str(QUICKSTART)]),
        lambda: timed_run(["node", "-e", ""]),
    )

    def initialize(argv: list[str]) -> float:
        server = Server(argv)
        try:
            return server.initialize()
        finally:
            server.close()

    ours_init, bare_init = alternate(
        runs, lambda: initialize(ours_argv), lambda: initialize(bare_argv)
    )
    ours = Server(ours_argv)
    theirs = Server(bare_argv)
    try:
        ours.initialize()
        theirs.initialize()
        bare_calls = round_trips(theirs, calls, "describe_graph", {})
        describe_calls = round_trips(ours, calls, "describe_graph", {})
        bare_calls += round_trips(theirs, calls, "describe_graph", {})
    finally:
        ours.close()
        theirs.close()
    return {
        "cli_cold_start_ms": median_ms(cli_times),
        "node_e_ms": median_ms(node_times),
        "cli_cold_start_ratio": median_ms(cli_times) / median_ms(node_times),
        "mcp_initialize_ms": median_ms(ours_init),
        "bare_initialize_ms": median_ms(bare_init),
        "mcp_initialize_ratio": median_ms(ours_init) / median_ms(bare_init),
        "mcp_call_describe_ms": median_ms(describe_calls),
        "bare_call_ms": median_ms(bare_calls),
        "mcp_call_ratio": median_ms(describe_calls) / median_ms(bare_calls),
    }


def measure_open(size: int, folder: Path) -> dict[str, float]:
    path = generate(size, folder)
    baseline = min((node_child("parse", path) for _ in range(3)), key=lambda r: r["seconds"])
    floor = min((node_child("floor", path) for _ in range(3)), key=lambda r: r["seconds"])
    graph = min((node_child("open", path) for _ in range(2)), key=lambda r: r["seconds"])
    row = {
        "capabilities": size,
        "bytes": path.stat().st_size,
        "json_parse_s": baseline["seconds"],
        "open_s": graph["seconds"],
        "open_ratio": graph["seconds"] / baseline["seconds"],
        "parse_serialize_hash_s": floor["seconds"],
        "open_floor_ratio": floor["seconds"] / baseline["seconds"],
        "json_parse_rss_mb": baseline["rss_mb"],
        "open_rss_mb": graph["rss_mb"],
        "rss_ratio": graph["rss_mb"] / baseline["rss_mb"],
    }
    path.unlink()
    return row


def python_figures(runs: int, calls: int, size: int) -> dict[str, float]:
    """The Python reference's ratios, measured now by its own benchmarks."""
    surfaces = json.loads(
        subprocess.run(
            [
                *(sys.executable, str(HERE / "bench_surfaces.py"), "--json"),
                *("--runs", str(runs), "--calls", str(calls)),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    core = json.loads(
        subprocess.run(
            [sys.executable, str(HERE / "bench_core.py"), "--json", "--sizes", str(size)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )[0]
    return {
        "cli_cold_start_ratio": surfaces["cli_cold_start_ratio"],
        "mcp_initialize_ratio": surfaces["mcp_initialize_ratio"],
        "mcp_call_ratio": surfaces["mcp_call_ratio"],
        "open_ratio": core["open_ratio"],
        "rss_ratio": core["rss_ratio"],
    }


ROWS = (
    ("cli_cold_start_ratio", "CLI cold start", 'node -e ""', "python -c 'import pydantic'"),
    ("mcp_initialize_ratio", "MCP spawn -> initialize", "bare SDK server", "bare SDK server"),
    ("mcp_call_ratio", "MCP tools/call describe", "bare SDK server", "bare SDK server"),
    ("open_ratio", "open, time", "JSON.parse", "json.loads"),
    ("rss_ratio", "open, peak RSS", "JSON.parse", "json.loads"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="cold starts per subject")
    parser.add_argument("--calls", type=int, default=300, help="tools/call round trips")
    parser.add_argument("--size", type=int, default=100000, help="capabilities for open")
    parser.add_argument("--no-python", action="store_true", help="skip the Python column")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    json_out_option(parser)
    args = parser.parse_args(argv)
    if not CLI.is_file():
        print("bench_typescript: build first: (cd typescript && npm ci && npm run build)")
        return 1
    with tempfile.TemporaryDirectory(prefix="cg-bench-typescript-") as directory:
        folder = Path(directory)
        typescript = measure_surfaces(args.runs, args.calls, folder)
        typescript.update(measure_open(args.size, folder))
    python = None if args.no_python else python_figures(args.runs, args.calls, args.size)
    # One row per implementation, the form docs/benchmarks/*.json tables are made from.
    rows = [{"implementation": "typescript", **{k: round(v, 3) for k, v in typescript.items()}}]
    if python is not None:
        rows.append({"implementation": "python", **{k: round(v, 3) for k, v in python.items()}})
    save_json(args.json_out, {"rows": rows})
    if args.json:
        print(json.dumps({"rows": rows}))
        return 0
    print(
        f"typescript ({args.runs} cold starts each, {args.calls} calls, open of "
        f"{args.size:,} capabilities; medians)"
    )
    print(
        f"  CLI describe cold start  : {typescript['cli_cold_start_ms']:8.1f} ms   "
        f'node -e "": {typescript["node_e_ms"]:7.1f} ms'
    )
    print(
        f"  MCP spawn -> initialize  : {typescript['mcp_initialize_ms']:8.1f} ms   "
        f"bare SDK server: {typescript['bare_initialize_ms']:7.1f} ms"
    )
    print(
        f"  MCP tools/call describe  : {typescript['mcp_call_describe_ms']:8.3f} ms   "
        f"bare SDK server: {typescript['bare_call_ms']:7.3f} ms"
    )
    print(
        f"  open ({typescript['bytes'] / 1e6:.0f} MB)            : "
        f"{typescript['open_s']:8.3f} s    "
        f"JSON.parse: {typescript['json_parse_s']:.3f} s; peak RSS "
        f"{typescript['open_rss_mb']:.0f} MB vs {typescript['json_parse_rss_mb']:.0f} MB; "
        f"floor (parse, JSON.stringify, SHA-256): {typescript['parse_serialize_hash_s']:.3f} s "
        f"= {typescript['open_floor_ratio']:.2f}x JSON.parse"
    )
    print(f"  {'ratio':<26}{'TypeScript':>12}{'Python':>10}   baselines (TypeScript / Python)")
    for key, label, ts_baseline, py_baseline in ROWS:
        python_ratio = "-" if python is None else f"{python[key]:.2f}x"
        print(
            f"  {label:<26}{typescript[key]:>11.2f}x{python_ratio:>10}   "
            f"{ts_baseline} / {py_baseline}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
