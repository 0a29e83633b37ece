"""Run every benchmark of the repository (the ``bench`` nox session), then print ONE summary of
every ratio they measured, for both languages, each with its goal and whether it holds.

Each benchmark compares against a baseline measured in the same run; each prints its usual
output and writes its JSON (``--json-out``) into a temporary folder, from which the summary is
read (nothing is measured twice: ``bench_typescript`` runs with ``--no-python``, the Python
ratios coming from ``bench_core`` and ``bench_surfaces``). ``--record`` copies those JSON files
into ``docs/benchmarks/`` (then ``python tools/codegen.py`` draws the site's figures from that one
run). Other arguments are passed to every benchmark.

    python bench/run.py [--record] [extra arguments for every benchmark]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
RECORDED = ROOT / "docs" / "benchmarks"

#: Arguments some benchmarks get from this runner: the Python column of bench_typescript is
#: what bench_core and bench_surfaces measure in the same run.
EXTRA = {"bench_typescript": ["--no-python"]}

Figures = dict[str, Any]


def run_all(argv: list[str], folder: Path) -> tuple[Figures, int]:
    figures: Figures = {}
    failures = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.stem}", flush=True)
        out = folder / f"{script.stem}.json"
        command = [sys.executable, str(script), *EXTRA.get(script.stem, []), *argv]
        command += ["--json-out", str(out)]
        if subprocess.run(command, check=False).returncode != 0 or not out.is_file():
            failures += 1
            continue
        figures[script.stem] = json.loads(out.read_text(encoding="utf-8"))
    return figures, failures


def _row(rows: Any, **match: Any) -> dict[str, Any] | None:
    if isinstance(rows, dict):
        rows = rows.get("rows", [rows])
    for row in rows:
        if all(row.get(key) == value for key, value in match.items()):
            return dict(row)
    return None


def _get(figures: Figures, bench: str, key: str, **match: Any) -> float | None:
    row = _row(figures.get(bench, []), **match)
    return None if row is None or row.get(key) is None else float(row[key])


#: The ratio lines: label, baseline, goal, and how to read the Python and TypeScript values.
Reader = Callable[[Figures], float | None]
RATIOS: tuple[tuple[str, str, float, Reader, str, float, Reader], ...] = (
    (
        "CLI cold start",
        "python -c 'import pydantic'",
        1.3,
        lambda f: _get(f, "bench_surfaces", "cli_cold_start_ratio"),
        'node -e ""',
        1.4,
        lambda f: _get(f, "bench_typescript", "cli_cold_start_ratio", implementation="typescript"),
    ),
    (
        "open 100k, time",
        "json.loads",
        1.5,
        lambda f: _get(f, "bench_core", "open_ratio", capabilities=100000),
        "JSON.parse",
        1.5,
        lambda f: _get(
            f, "bench_typescript", "open_ratio", implementation="typescript", capabilities=100000
        ),
    ),
    (
        # Python: parse + the schema check; TypeScript: parse + a revision's serialization and hash.
        "open 100k: its floor",
        "json.loads",
        1.5,
        lambda f: _get(f, "bench_core", "parse_and_schema_ratio", capabilities=100000),
        "JSON.parse",
        1.5,
        lambda f: _get(
            f,
            "bench_typescript",
            "open_floor_ratio",
            implementation="typescript",
            capabilities=100000,
        ),
    ),
    (
        "open 100k, peak memory",
        "json.loads",
        1.3,
        lambda f: _get(f, "bench_core", "rss_ratio", capabilities=100000),
        "JSON.parse",
        1.3,
        lambda f: _get(
            f, "bench_typescript", "rss_ratio", implementation="typescript", capabilities=100000
        ),
    ),
    (
        "MCP spawn -> initialize",
        "bare server, same SDK",
        1.1,
        lambda f: _get(f, "bench_surfaces", "mcp_initialize_ratio"),
        "bare server, same SDK",
        1.1,
        lambda f: _get(f, "bench_typescript", "mcp_initialize_ratio", implementation="typescript"),
    ),
    (
        "MCP tools/call",
        "bare server, same SDK",
        1.15,
        lambda f: _get(f, "bench_surfaces", "mcp_call_ratio"),
        "bare server, same SDK",
        1.15,
        lambda f: _get(f, "bench_typescript", "mcp_call_ratio", implementation="typescript"),
    ),
)


def scale_lines(figures: Figures) -> list[tuple[str, str, str, str, str]]:
    """The scale benchmark's checks per implementation: the largest growth exponent (goal <= 1.15,
    linear), the ticker's longest gap (<= 50 ms), the cold match within its deadline, and list
    paging through every capability."""
    scale = figures.get("bench_scale")
    if not scale:
        return []
    out = []
    for name in ("python", "typescript"):
        rows = [r for r in scale["rows"] if r["implementation"] == name]
        if not rows:
            continue
        growth = [
            e
            for e in scale["exponents"]
            if e["implementation"] == name and e["exponent"] is not None
        ]
        if growth:
            worst = max(growth, key=lambda e: e["exponent"])
            out.append(
                (
                    f"scale: worst growth exponent ({worst['operation']})",
                    name,
                    f"{worst['exponent']:.2f}",
                    "<= 1.15",
                    _holds(worst["exponent"] <= 1.15),
                )
            )
        gap = max(r["ticker_max_gap_ms"] for r in rows)
        out.append(
            (
                "scale: ticker max gap during match",
                name,
                f"{gap:g} ms",
                "<= 50 ms",
                _holds(gap <= 50),
            )
        )
        late = [r for r in rows if not r["match_within_deadline"]]
        outcomes = "/".join(sorted({r["match_outcome"] for r in rows}))
        out.append(
            ("scale: cold match within its deadline", name, outcomes, "yes", _holds(not late))
        )
        complete = all(r["list_items"] == r["capabilities"] for r in rows)
        out.append(
            (
                "scale: list pages through everything",
                name,
                "all" if complete else "NO",
                "all",
                _holds(complete),
            )
        )
    return out


def suite_lines(figures: Figures) -> list[tuple[str, str, str, str, str]]:
    """The whole suite against the reference, with the floor its process starts set."""
    suite = figures.get("bench_suite")
    if not suite:
        return []
    return [
        (
            "suite, all four surfaces (seconds)",
            "python",
            f"{suite['suite_s']:g} s",
            f"<= {suite['goal_s']:g} s",
            _holds(suite["suite_s"] <= suite["goal_s"]),
        ),
        (
            "suite: floor of its process starts (seconds)",
            "python",
            f"{suite['floor_s']:g} s",
            f"<= {suite['goal_s']:g} s",
            _holds(suite["floor_s"] <= suite["goal_s"]),
        ),
    ]


def _holds(ok: bool) -> str:
    return "yes" if ok else "NO"


def summary(figures: Figures) -> str:
    lines: list[tuple[str, str, str, str, str]] = []
    for label, py_base, py_goal, python, ts_base, ts_goal, typescript in RATIOS:
        for name, base, goal, read in (
            ("python", py_base, py_goal, python),
            ("typescript", ts_base, ts_goal, typescript),
        ):
            value = read(figures)
            shown = "-" if value is None else f"{value:.2f}x"
            held = "-" if value is None else _holds(value <= goal)
            lines.append((f"{label} vs {base}", name, shown, f"<= {goal:g}x", held))
    lines += scale_lines(figures)
    lines += suite_lines(figures)
    head = ("ratio", "implementation", "measured", "goal", "holds")
    widths = [max(len(row[i]) for row in (head, *lines)) for i in range(len(head))]
    out = ["  ".join(cell.ljust(width) for cell, width in zip(head, widths, strict=True))]
    out.append("  ".join("-" * width for width in widths))
    out += [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in lines
    ]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    record = "--record" in argv
    argv = [arg for arg in argv if arg != "--record"]
    with tempfile.TemporaryDirectory(prefix="cg-bench-") as directory:
        figures, failures = run_all(argv, Path(directory))
        print("\n== summary: every ratio measured in this run, with its goal")
        print(summary(figures))
        if record:
            for path in sorted(Path(directory).glob("*.json")):
                shutil.copyfile(path, RECORDED / path.name)
                print(f"recorded docs/benchmarks/{path.name}")
            print("now: python tools/codegen.py (the figures of docs/benchmarks.md)")
    if failures:
        print(f"{failures} benchmark(s) failed", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
