"""The generative mode (cg-conformance explore): found differences are real and shrunk, identical
implementations agree, a crash is reported with context, and a seed replays its cases.

The fakes are standalone drivers relaying the driver protocol to the reference's driver with one
change each (tests/fakes/explore_proxy.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capability_graph_conformance._json import escape_lone_surrogates
from capability_graph_conformance.explore.model import GenCase, Observation
from capability_graph_conformance.explore.oracle import compare
from capability_graph_conformance.explore.shrink import shrink, smaller
from capability_graph_conformance.explore.strategies import CAMPAIGNS, generate


def _explore(harness: Any, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    status, _out, _err = harness("explore", "--report-dir", str(tmp_path / "report"), *args)
    report: dict[str, Any] = json.loads((tmp_path / "report" / "report.json").read_text())
    return status, report


# -- pure parts --------------------------------------------------------------------------------


@pytest.mark.parametrize("campaign", sorted(CAMPAIGNS))
def test_a_seed_gives_the_same_cases(campaign: str) -> None:
    first = [generate(campaign, 7, i).to_json() for i in range(40)]
    again = [generate(campaign, 7, i).to_json() for i in range(40)]
    other = [generate(campaign, 8, i).to_json() for i in range(40)]
    assert first == again
    assert first != other


def test_a_case_does_not_depend_on_the_cases_before_it() -> None:
    assert generate("call", 3, 25).to_json() == generate("call", 3, 25).to_json()


def test_shrinking_keeps_the_smallest_input_with_the_property() -> None:
    case = GenCase(
        "call",
        "catalog",
        {
            "call": {
                "tool": "list_capabilities",
                "arguments": {
                    "providers": ["acme", "billing"],
                    "tags": ["http", "x" * 50],
                    "limit": 100,
                },
            }
        },
    )

    async def keeps(candidate: GenCase) -> bool:
        arguments = candidate.action["call"]["arguments"]
        return isinstance(arguments, dict) and "tags" in arguments

    import asyncio

    minimal, spent = asyncio.run(shrink(case, keeps, 500))
    assert minimal.action["call"]["arguments"] == {"tags": []}
    assert 0 < spent < 500


def test_smaller_values_are_smaller() -> None:
    assert list(smaller(True)) == [False]
    assert 0 in list(smaller(17))
    assert [] in list(smaller([1, 2]))
    assert {} in list(smaller({"a": 1}))


def test_usage_text_on_exit_2_is_an_allowed_variation() -> None:
    case = GenCase("argv", "catalog", {"argv": ["nope"]})
    a = Observation("cli", {"exit": 2, "stdout": "", "stderr": "usage: one\n"})
    b = Observation("cli", {"exit": 2, "stdout": "", "stderr": "usage: two\n"})
    assert compare(case, a, b) == (None, ["cli-usage-text"])


def test_another_exit_status_is_a_difference() -> None:
    case = GenCase("argv", "catalog", {"argv": ["list"]})
    a = Observation("cli", {"exit": 2, "stdout": "", "stderr": "usage\n"})
    b = Observation("cli", {"exit": 1, "stdout": "", "stderr": "{}\n"})
    signature, applied = compare(case, a, b)
    assert signature == "argv/cli list: exit 2 vs exit 1 E:?"
    assert applied == []


# -- against fake implementations (processes) --------------------------------------------------


@pytest.mark.slow
def test_a_fake_differing_on_one_input_class_is_found_and_shrunk(
    harness: Any, fakes: Path, tmp_path: Path
) -> None:
    status, report = _explore(
        harness,
        tmp_path,
        "-i",
        str(fakes / "explore-list-tags-code.json"),
        "-c",
        "call",
        "-s",
        "sdk",
        "-s",
        "tool",
        "--seed",
        "11",
        "--count",
        "60",
        "--write-vectors",
        str(tmp_path / "vectors"),
    )
    assert status == 1
    differences = [f for f in report["findings"] if f["kind"] == "difference"]
    assert differences
    for finding in differences:
        assert finding["signature"].startswith("call/")
        assert " list_capabilities: raised E:CG_FAKE_CODE vs " in finding["signature"] or (
            " list_capabilities: E:CG_FAKE_CODE vs " in finding["signature"]
        )
        arguments = finding["minimal"]["call"]["arguments"]
        assert list(arguments) == ["tags"]  # every other member shrunk away
        assert "does not match" not in finding["vector"]  # a valid vector was written
    written = list((tmp_path / "vectors").rglob("*.json"))
    assert written
    vector = json.loads(written[0].read_text())
    assert vector["call"]["tool"] == "list_capabilities"
    assert vector["requirements"] == ["CG-SURF-1"]
    assert "CG_FAKE_CODE" not in json.dumps(vector["expect"])  # the reference's answer


@pytest.mark.slow
def test_identical_implementations_give_no_difference(
    harness: Any, fakes: Path, tmp_path: Path
) -> None:
    status, report = _explore(
        harness,
        tmp_path,
        "-i",
        str(fakes / "explore-none.json"),
        "-c",
        "call",
        "-c",
        "budget",
        "-s",
        "sdk",
        "-s",
        "tool",
        "--seed",
        "5",
        "--count",
        "40",
    )
    assert [f for f in report["findings"] if f["kind"] == "difference"] == []
    assert sum(c["cases"] for c in report["campaigns"]) == 80
    assert status == 0, report["findings"]


@pytest.mark.slow
def test_a_crashing_fake_is_errored_with_context_and_the_run_goes_on(
    harness: Any, fakes: Path, tmp_path: Path
) -> None:
    status, report = _explore(
        harness,
        tmp_path,
        "-i",
        str(fakes / "explore-crash-on-read.json"),
        "-c",
        "call",
        "-s",
        "sdk",
        "--seed",
        "3",
        "--count",
        "40",
    )
    assert status == 1
    errored = [f for f in report["findings"] if "errored" in f["signature"]]
    assert errored, report["findings"]
    assert all(f["implementation"] == "fake-explore-crash-on-read" for f in errored)
    outcome = next(iter(errored[0]["outcomes"].values()))
    assert "the driver exited (status 3)" in outcome["errored"]
    assert errored[0]["case"]["call"]["tool"] == "read_document"
    assert report["campaigns"][0]["cases"] == 40  # the driver was restarted


@pytest.mark.slow
def test_a_seed_replays_the_same_finds(harness: Any, fakes: Path, tmp_path: Path) -> None:
    args = [
        "-i",
        str(fakes / "explore-list-tags-code.json"),
        "-c",
        "call",
        "-s",
        "sdk",
        "--seed",
        "11",
        "--count",
        "60",
    ]
    _s, first = _explore(harness, tmp_path / "a", *args)
    _s, again = _explore(harness, tmp_path / "b", *args)
    assert [(f["signature"], f["case"], f["minimal"]) for f in first["findings"]] == [
        (f["signature"], f["case"], f["minimal"]) for f in again["findings"]
    ]
    index = first["findings"][0]["case"]["index"]
    _s, replay = _explore(harness, tmp_path / "c", *args, "--case", str(index))
    assert replay["findings"][0]["case"] == first["findings"][0]["case"]


def test_a_budget_refusal_must_be_monotonic_in_the_limit() -> None:
    from capability_graph_conformance.explore.probes import budget_monotonic

    fine = [
        ("maxInputBytes", "r", 10, "raised E:CG_INPUT_TOO_LARGE"),
        ("maxInputBytes", "r", 40, "R"),
    ]
    assert budget_monotonic(fine) == []
    broken = [*fine, ("maxInputBytes", "r", 50, "raised E:CG_INPUT_TOO_LARGE")]
    assert budget_monotonic(broken) == [
        "a maxInputBytes refusal is not monotonic in the limit (request r: accepted at 40, "
        "refused at 50)"
    ]


def test_a_lone_surrogate_in_a_report_is_written_as_its_escape() -> None:
    text = json.dumps({"frame": "x\ud800y"}, ensure_ascii=False)
    escaped = escape_lone_surrogates(text)
    escaped.encode("utf-8")  # no lone surrogate left to refuse
    assert json.loads(escaped) == {"frame": "x\ud800y"}
