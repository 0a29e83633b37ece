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


def _raised(message: str) -> Observation:
    error = {"code": "CG_INPUT_INVALID", "phase": "query", "message": message}
    return Observation("sdk", {"raised": {**error, "nextAction": "fix_input"}})


def _list_call(arguments: Any) -> GenCase:
    return GenCase(
        "call", "catalog", {"call": {"tool": "list_capabilities", "arguments": arguments}}
    )


@pytest.fixture(scope="module")
def count_faults() -> Any:
    from capability_graph_conformance.explore.faults import fault_count
    from capability_graph_conformance.schemas import SchemaSet
    from capability_graph_conformance.suite import Suite

    suite = Suite.packaged()
    schemas = SchemaSet(suite)
    requests = {op["tool"]: op["request"] for op in suite.operations["operations"]}
    return lambda case, code: fault_count(case, code, schemas, requests)


@pytest.mark.parametrize(
    ("arguments", "faults"),
    [
        # CG-MSG-19: a pure-JSON fault is reported first, in document order: determined
        ({"tags": ["\ud800", "\udc00"]}, 1),
        ({"limit": 2**60}, 1),
        ({"limit": "x", "tags": ["\ud800"]}, 1),
        # a type fault comes before the value's other keywords
        ({"limit": 0.5}, 1),
        ({"limit": 0}, 1),
        # schema faults of different values, or of one object: any one (CG-MSG-8)
        ({"nope": 1, "limit": "x"}, 2),
        ({"limit": "x", "cursor": 1}, 2),
    ],
)
def test_faults_are_counted_per_value_and_rule(
    count_faults: Any, arguments: dict[str, Any], faults: int
) -> None:
    assert count_faults(_list_call(arguments), "CG_INPUT_INVALID") == faults


def test_a_request_with_several_faults_may_name_any_one(count_faults: Any) -> None:
    case = _list_call({"limit": "x", "cursor": 1})
    a, b = _raised("/limit must be an integer"), _raised("/cursor must be a string")
    assert compare(case, a, b, count_faults) == (None, ["several-faults"])


def test_two_lone_surrogates_are_reported_at_the_first(count_faults: Any) -> None:
    case = _list_call({"tags": ["\ud800", "\udc00"]})
    first = _raised("/tags/0 a string has a lone surrogate")
    second = _raised("/tags/1 a string has a lone surrogate")
    assert compare(case, first, second, count_faults)[0] is not None


def test_a_request_with_one_fault_must_name_it(count_faults: Any) -> None:
    case = _list_call({"limit": 0})
    a, b = _raised("/limit must be at least 1"), _raised("/limit must be at most 100")
    signature, applied = compare(case, a, b, count_faults)
    assert (
        signature
        == "call/sdk list_capabilities: raised E:CG_INPUT_INVALID, differs at /raised/message"
    )
    assert applied == []


def test_several_faults_never_excuse_another_code(count_faults: Any) -> None:
    case = _list_call({"limit": "x", "cursor": 1})
    other = {"code": "CG_INPUT_TOO_LARGE", "phase": "query", "nextAction": "narrow_scope"}
    signature, _ = compare(
        case, _raised("/tags/0 x"), Observation("sdk", {"raised": other}), count_faults
    )
    assert signature is not None


def test_several_faults_of_a_configuration_may_name_any_one_on_a_server_that_did_not_start(
    count_faults: Any,
) -> None:
    config = '{"providers": [], "scope": {"request": false}}'
    case = GenCase("config", "empty", {"call": {"tool": "describe_graph"}}, config_text=config)

    def exited(message: str) -> Observation:
        error = {"code": "CG_CONFIG_INVALID", "phase": "config", "message": message}
        line = json.dumps({"ok": False, "error": {**error, "nextAction": "check_config"}})
        return Observation("mcp", {"exited": {"exit": 1, "stdout": "", "stderr": line + "\n"}})

    a = exited("/scope requires the key providers")
    b = exited("/scope has a key that is not allowed (allowed: providers)")
    assert compare(case, a, b, count_faults) == (None, ["several-faults"])


def test_a_message_that_is_not_a_request_may_go_unanswered() -> None:
    case = GenCase(
        "mcp", "catalog", {"frame": '{"jsonrpc": "1.0", "id": 7, "method": "tools/list"}'}
    )
    a = Observation("mcp", {"noResponse": True, "aliveAfter": True})
    b = Observation("mcp", {"protocolError": -32600, "aliveAfter": True})
    assert compare(case, a, b) == (None, ["mcp-not-a-request"])


def test_a_request_must_be_answered() -> None:
    from capability_graph_conformance.explore.oracle import properties

    frame = '{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}'
    case = GenCase("mcp", "catalog", {"frame": frame})
    a = Observation("mcp", {"noResponse": True, "aliveAfter": True})
    b = Observation("mcp", {"protocolError": -32600, "aliveAfter": True})
    assert compare(case, a, b)[0] is not None
    assert "an MCP request got no answer" in properties(case, a, None, {})  # type: ignore[arg-type]
    not_a_request = GenCase("mcp", "catalog", {"frame": '{"id": 7}'})
    assert properties(not_a_request, a, None, {}) == []  # type: ignore[arg-type]


def test_a_text_request_is_a_text_only_to_the_sdk_and_the_tool_adapter() -> None:
    from capability_graph_conformance.explore.oracle import surfaces_agree

    error = {"code": "CG_INPUT_INVALID", "phase": "query", "nextAction": "fix_input"}
    text = json.dumps({**error, "message": "/ must be an object"})
    answers = {
        "sdk": Observation("sdk", {"returned": {"status": "empty", "items": []}}),
        "mcp": Observation(
            "mcp", {"result": {"content": [{"type": "text", "text": text}], "isError": True}}
        ),
    }
    assert surfaces_agree(_list_call("{}"), answers) == []
    assert surfaces_agree(_list_call({}), answers) != []


def test_explain_text_layout_may_differ_but_json_may_not() -> None:
    a = Observation("cli", {"exit": 0, "stdout": "CG_X one layout\n", "stderr": ""})
    b = Observation("cli", {"exit": 0, "stdout": "CG_X: another\n", "stderr": ""})
    text = GenCase("argv", "catalog", {"argv": ["explain", "CG_X"]})
    as_json = GenCase("argv", "catalog", {"argv": ["explain", "CG_X", "--json"]})
    assert compare(text, a, b) == (None, ["explain-text"])
    assert compare(as_json, a, b)[0] is not None


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


def _cli_failure(message: str) -> Observation:
    error = {"code": "CG_INPUT_INVALID", "phase": "match", "message": message}
    line = json.dumps({"ok": False, "error": {**error, "nextAction": "fix_input"}})
    return Observation("cli", {"exit": 1, "stdout": "", "stderr": line + "\n"})


def test_an_argv_call_whose_arguments_have_several_faults_may_name_any_one(
    count_faults: Any,
) -> None:
    argv = ["call", "match_capabilities", "--arguments", '{"capabilityId": "a"}', "--config", "c"]
    case = GenCase("argv", "catalog", {"argv": argv})
    a = _cli_failure("/ requires the key request")
    b = _cli_failure("/ has a key that is not allowed (allowed: request, context)")
    assert compare(case, a, b, count_faults) == (None, ["several-faults"])


def test_an_argv_call_whose_arguments_have_one_fault_must_name_it(count_faults: Any) -> None:
    argv = ["call", "match_capabilities", "--arguments", "{}", "--config", "c"]
    case = GenCase("argv", "catalog", {"argv": argv})
    a = _cli_failure("/ requires the key request")
    b = _cli_failure("/ has a key that is not allowed (allowed: request, context)")
    assert compare(case, a, b, count_faults)[0] is not None


def _cli_success() -> Observation:
    return Observation("cli", {"exit": 0, "stdout": '{"status":"unknown"}\n', "stderr": ""})


def _cli_timeout() -> Observation:
    error = {"code": "CG_MODEL_TIMEOUT", "phase": "match", "message": "Model executor timed out"}
    line = json.dumps({"ok": False, "error": {**error, "nextAction": "retry"}})
    return Observation("cli", {"exit": 1, "stdout": "", "stderr": line + "\n"})


@pytest.mark.parametrize("deadline", ["1", "01", "50"])
def test_a_short_deadline_may_lose_its_race_with_the_answer(deadline: str) -> None:
    case = GenCase("argv", "catalog", {"argv": ["match", "x", "--timeout-ms", deadline]})
    assert compare(case, _cli_timeout(), _cli_success()) == (None, ["deadline-race"])
    assert compare(case, _cli_success(), _cli_timeout()) == (None, ["deadline-race"])


def test_a_deadline_of_a_call_may_lose_its_race_too() -> None:
    case = GenCase("call", "catalog", {"call": {"tool": "match_capabilities", "arguments": {
        "request": "x", "timeoutMs": 1}}})  # fmt: skip
    timeout = Observation("sdk", {"raised": {"code": "CG_MODEL_TIMEOUT", "phase": "match",
        "message": "Model executor timed out", "nextAction": "retry"}})  # fmt: skip
    answer = Observation("sdk", {"returned": {"status": "unknown", "candidates": []}})
    assert compare(case, timeout, answer) == (None, ["deadline-race"])


def test_a_longer_deadline_or_another_error_is_compared() -> None:
    longer = GenCase("argv", "catalog", {"argv": ["match", "x", "--timeout-ms", "51"]})
    assert compare(longer, _cli_timeout(), _cli_success())[0] is not None
    short = GenCase("argv", "catalog", {"argv": ["match", "x", "--timeout-ms", "1"]})
    assert compare(short, _cli_timeout(), _cli_failure("/request must be a string"))[0] is not None
