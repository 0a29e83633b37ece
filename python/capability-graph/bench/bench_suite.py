"""Benchmark the conformance suite against the Python reference, beside its floor.

    python bench/bench_suite.py [--json]

The whole suite (``cg-conformance run``, the harness's default parallelism) is timed from the
outside, wall clock and the CPU seconds of the harness and every process it starts. Its CLI and
MCP commands run through a wrapper that counts them (one ``exec`` of a shell each, measured and
reported), so the run says how many processes the implementation started for each surface.

The floor is what those starts cost on their own, on this machine, measured in the same run: an
MCP server started per distinct configuration costs at least a bare low-level ``mcp`` server's
spawn -> ``initialize`` (the SDK's import dominates it), and a CLI case at least
``python -c "import pydantic"``, plus the ``openai`` SDK's import for a process whose configuration
selects the openai executor. ``floor = (servers x bare server + CLI processes x bare start +
openai processes x the SDK's import) / CPUs``: no harness can run the suite in less on this
machine while each case starts a real process of the implementation.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_core import json_out_option, save_json
from bench_surfaces import BARE_SERVER, Server, timed_run

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[2]
REFERENCE = REPOSITORY / "conformance" / "implementations" / "python-reference.json"
GOAL_S = 25.0

# Logs the command (its first argument), marked "+openai" when its configuration names the
# openai executor (whose process imports the openai SDK).
WRAPPER = """#!/bin/sh
config=capability-graph.json; previous=
for argument in "$@"; do
    [ "$previous" = --config ] && config=$argument
    previous=$argument
done
kind=$1
grep -qs '"openai"' "$config" && kind="$kind+openai"
echo "$kind" >> "{log}"
exec "{cli}" "$@"
"""


def cli_program() -> str:
    script = Path(sys.executable).parent / "capability-graph"
    found = str(script) if script.is_file() else shutil.which("capability-graph")
    if found is None:
        raise SystemExit("bench_suite: capability-graph is not installed")
    return found


def counting_manifest(folder: Path) -> tuple[Path, Path]:
    """The reference's manifest with its CLI and MCP commands run through a counting wrapper."""
    log = folder / "starts.log"
    wrapper = folder / "capability-graph"
    wrapper.write_text(WRAPPER.format(log=log, cli=cli_program()), encoding="utf-8")
    wrapper.chmod(0o755)
    manifest = json.loads(REFERENCE.read_text(encoding="utf-8"))
    manifest.pop("$schema", None)
    here = str(REFERENCE.parent)
    manifest["driver"]["argv"] = [a.replace("{here}", here) for a in manifest["driver"]["argv"]]
    manifest["cli"]["argv"] = [str(wrapper)]
    manifest["mcp"]["argv"] = [str(wrapper), *manifest["mcp"]["argv"][1:]]
    manifest["expectedFailures"] = str(REFERENCE.parent / manifest["expectedFailures"])
    path = folder / "manifest.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return path, log


def median_s(runs: int, measure: Any) -> float:
    measure()  # warm the caches
    return statistics.median(measure() for _ in range(runs))


def bare_initialize_s(folder: Path, runs: int) -> float:
    """bench_surfaces' bare server, serving no tool: a server start and nothing else."""
    script = folder / "bare_server.py"
    script.write_text(BARE_SERVER, encoding="utf-8")
    served = folder / "bare-payload.json"
    served.write_text(json.dumps({"tools": [], "payload": {}, "text": "{}"}), encoding="utf-8")

    def once() -> float:
        server = Server([sys.executable, str(script), str(served)])
        try:
            return server.initialize()
        finally:
            server.close()

    return median_s(runs, once)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="starts per baseline")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    json_out_option(parser)
    args = parser.parse_args(argv)
    harness = Path(sys.executable).parent / "cg-conformance"
    if not harness.is_file():
        raise SystemExit("bench_suite: cg-conformance is not installed")
    cpus = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="cg-bench-suite-") as directory:
        folder = Path(directory)
        manifest, log = counting_manifest(folder)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        run = subprocess.run(
            [
                str(harness),
                "run",
                "-i",
                str(manifest),
                "--strict",
                "--no-progress",
                "--report-dir",
                str(folder / "report"),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if run.returncode != 0:
            sys.stderr.write(run.stdout[-2000:] + run.stderr[-2000:])
            raise SystemExit("bench_suite: the suite did not pass")
        starts = log.read_text(encoding="utf-8").split()
        servers = sum(start.split("+")[0] == "mcp" for start in starts)
        cli = len(starts) - servers
        with_openai = sum(start.endswith("+openai") for start in starts)
        cases = json.loads((folder / "report" / "report.json").read_text(encoding="utf-8"))
        bare_mcp = bare_initialize_s(folder, args.runs)
        bare_start = median_s(
            args.runs, lambda: timed_run([sys.executable, "-c", "import pydantic"])
        )
        shell = median_s(args.runs, lambda: timed_run(["/bin/sh", "-c", "exec true"]))
        openai_sdk = median_s(
            args.runs, lambda: timed_run([sys.executable, "-c", "import pydantic, openai"])
        )
    # A process of an openai configuration imports the openai SDK on top of the rest.
    openai_extra = max(openai_sdk - bare_start, 0.0)
    floor = (servers * bare_mcp + cli * bare_start + with_openai * openai_extra) / cpus
    report = {
        "suite_s": round(wall, 1),
        "suite_cpu_s": round(
            (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1
        ),
        "cases": sum(s["passed"] for s in cases["bySurface"].values())
        if isinstance(cases.get("bySurface"), dict)
        else None,
        "cpus": cpus,
        "mcp_servers": servers,
        "cli_processes": cli,
        "bare_mcp_initialize_ms": round(bare_mcp * 1000, 1),
        "bare_start_ms": round(bare_start * 1000, 1),
        "openai_processes": with_openai,
        "openai_import_ms": round(openai_extra * 1000, 1),
        "wrapper_ms": round(shell * 1000, 1),
        "floor_s": round(floor, 1),
        "suite_to_floor_ratio": round(wall / floor, 2),
        "goal_s": GOAL_S,
    }
    save_json(args.json_out, report)
    if args.json:
        print(json.dumps(report))
        return 0
    print(
        f"suite, all four surfaces, Python reference: {report['suite_s']} s "
        f"({report['suite_cpu_s']} CPU-s; goal <= {GOAL_S:.0f} s)\n"
        f"  processes started: {servers} MCP servers, {cli} CLI commands "
        f"(each through a wrapper of {report['wrapper_ms']} ms)\n"
        f"  floor on {cpus} CPUs: {servers} x bare mcp server {report['bare_mcp_initialize_ms']} "
        f"ms + {cli} x python -c 'import pydantic' {report['bare_start_ms']} ms "
        f"+ {with_openai} x import openai {report['openai_import_ms']} ms "
        f"= {report['floor_s']} s; suite {report['suite_to_floor_ratio']}x its floor"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
