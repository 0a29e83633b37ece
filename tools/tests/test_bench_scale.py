"""The scale benchmark (python/capability-graph/bench/bench_scale.py) at a tiny size, for both
implementations, and the figures the docs step draws from its JSON (tools/generate/scale_chart.py).

Timing is never checked here: only that every operation ran in its fresh child, that the JSON has
the shape ``docs/benchmarks/bench_scale.json`` keeps (rows, exponents, recorded), that list paged
through every capability, and that the chart is a well-formed SVG with its axes and legend.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from generate.scale_chart import OPERATIONS, scale_section, scale_svg

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "python" / "capability-graph" / "bench" / "bench_scale.py"
TYPESCRIPT_BUILD = ROOT / "typescript" / "dist" / "src" / "index.js"
SIZES = (200, 400)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("node") is None or not TYPESCRIPT_BUILD.is_file():
        pytest.skip("the TypeScript build is missing (npm ci && npm run build in typescript/)")
    out = tmp_path_factory.mktemp("scale") / "bench_scale.json"
    command = [sys.executable, str(BENCH), "--sizes", ",".join(map(str, SIZES))]
    command += ["--implementations", "python,typescript", "--json-out", str(out)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert "growth exponents" in completed.stdout  # the human-readable table is printed too
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def test_one_row_per_size_and_implementation(report: dict[str, Any]) -> None:
    assert set(report) == {"recorded", "rows", "exponents"}
    assert sorted((r["implementation"], r["capabilities"]) for r in report["rows"]) == sorted(
        (name, size) for name in ("python", "typescript") for size in SIZES
    )
    for row in report["rows"]:
        for key, _, _, _ in OPERATIONS:
            assert isinstance(row[key], int | float), (key, row)
            assert row[key] > 0, (key, row)
        assert row["peak_rss_mb"] >= row["bare_rss_mb"] > 0
        assert row["file_bytes_per_cap"] == round(row["file_bytes"] / row["capabilities"], 1)
        assert row["match_outcome"] == "matched"
        assert row["match_within_deadline"] is True
        assert row["resolved"] == row["capabilities"]  # depth 3 from every 2nd (size / 100)
        assert isinstance(row["ticker_max_gap_ms"], int | float)


def test_list_paged_through_every_capability(report: dict[str, Any]) -> None:
    for row in report["rows"]:
        assert row["list_items"] == row["capabilities"]
        assert row["list_pages"] == -(-row["capabilities"] // 500)


def test_exponents_between_consecutive_sizes(report: dict[str, Any]) -> None:
    exponents = report["exponents"]
    assert {(e["implementation"], e["from"], e["to"]) for e in exponents} == {
        (name, *SIZES) for name in ("python", "typescript")
    }
    for item in exponents:  # the matches ended "matched": no exponent is capped
        assert item["exponent"] is not None
        assert item["superlinear"] == (item["exponent"] > 1.15)


def test_the_chart_and_the_table(report: dict[str, Any]) -> None:
    svg = scale_svg(report)
    root = ET.fromstring(svg)  # well-formed (no "--" in its do-not-edit comment)
    assert "DO NOT EDIT" in svg
    texts = {"".join(node.itertext()) for node in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"200", "400", "capabilities (log scale)", "Python", "TypeScript"} <= texts
    assert {label for _, label, _, _ in OPERATIONS} <= texts
    lines = scale_section(report, "benchmarks/scale.svg")
    assert lines[0] == "### `bench_scale`"
    assert "](benchmarks/scale.svg)" in lines[2]
    table = [line for line in lines if line.startswith("| ")]
    assert table[0] == "| operation | 200 | 400 | growth 200→400 |"
    assert len(table) == 1 + len(OPERATIONS) + 5
