"""verify_adversarial with runners that answer, fail, or are real fake CLIs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import FakeBin


def scripted(*answers: str | Exception) -> tuple[list[str], Any]:
    prompts: list[str] = []
    queue = list(answers)

    async def runner(prompt: str) -> str:
        prompts.append(prompt)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return prompts, runner


def vote(verdict: str, reason: str = "r") -> str:
    return json.dumps({"verdict": verdict, "reason": reason})


def verify(claim: str = "the claim", **kwargs: Any) -> flowcast.VerifyResult:
    return asyncio.run(flowcast.verify_adversarial(claim, **kwargs))


def test_a_majority_of_pass_votes_verifies_the_claim() -> None:
    _, runner = scripted(vote("pass"), vote("pass"), vote("fail"))
    result = verify(runner=runner)
    assert (result.passed, result.threshold, len(result.votes)) == (True, 2, 3)


def test_a_majority_of_fail_votes_does_not_verify() -> None:
    _, runner = scripted(vote("fail"), vote("pass"), vote("fail"))
    assert verify(runner=runner).passed is False


def test_each_lens_gets_its_voters_and_the_lens_is_in_the_prompt() -> None:
    prompts, runner = scripted(*(vote("pass") for _ in range(4)))
    result = verify(runner=runner, voters=2, lenses=["security", "tests"])
    assert [v.lens for v in result.votes] == ["security", "security", "tests", "tests"]
    assert sum("lens: security" in p for p in prompts) == 2
    assert all("the claim" in p for p in prompts)


def test_partial_voter_failures_are_recorded_not_raised() -> None:
    _, runner = scripted(vote("pass"), flowcast.SpawnError("rate limit", exit_code=1), vote("pass"))
    result = verify(runner=runner)
    assert result.passed is True
    assert result.voter_errors == [
        flowcast.VoterError(lens="adversarial", error="SpawnError: rate limit")
    ]


def test_failed_voters_count_against_the_threshold() -> None:
    _, runner = scripted(vote("pass"), RuntimeError("down"), RuntimeError("down"))
    assert verify(runner=runner).passed is False


def test_an_explicit_threshold_is_used() -> None:
    _, runner = scripted(vote("pass"), vote("fail"), vote("fail"))
    assert verify(runner=runner, threshold=1).passed is True


def test_a_voter_whose_answer_never_fits_the_schema_is_a_voter_error() -> None:
    _, runner = scripted(vote("pass"), "dunno", "still dunno", vote("pass"))
    result = verify(runner=runner, voters=2)
    assert result.passed is False
    assert len(result.voter_errors) == 1
    assert result.voter_errors[0].error.startswith("SchemaError: ")


def test_all_voters_failing_is_verify_error_listing_each() -> None:
    _, runner = scripted(*(RuntimeError(f"down {i}") for i in range(3)))
    with pytest.raises(flowcast.VerifyError) as caught:
        verify(runner=runner)
    assert caught.value.code == "VERIFY_FAIL"
    assert sorted(v.error for v in caught.value.voter_errors) == [
        "RuntimeError: down 0",
        "RuntimeError: down 1",
        "RuntimeError: down 2",
    ]


def test_all_voters_failing_through_a_real_missing_cli_is_verify_error() -> None:
    async def runner(prompt: str) -> str:
        return await flowcast.spawn_cli("flowcast-no-such-voter-cli", [], stdin=prompt)

    with pytest.raises(flowcast.VerifyError) as caught:
        verify(runner=runner, voters=2)
    assert all("ENOENT" in v.error for v in caught.value.voter_errors)


def test_voting_through_a_fake_agent_cli(fake_bin: FakeBin) -> None:
    fake_bin.add(
        "voter",
        'prompt=$(cat)\ncase "$prompt" in *"lens: security"*) v=fail ;; *) v=pass ;; esac\n'
        'printf \'{"verdict": "%s", "reason": "looked"}\' "$v"\n',
    )

    async def runner(prompt: str) -> str:
        return await flowcast.spawn_cli("voter", [], stdin=prompt)

    result = verify(runner=runner, voters=1, lenses=["security", "logic", "tests"])
    assert [v.verdict for v in result.votes] == ["fail", "pass", "pass"]
    assert result.passed is True


@pytest.mark.parametrize(
    "kwargs",
    [
        {"voters": 0},
        {"voters": True},
        {"lenses": []},
        {"lenses": [""]},
        {"threshold": 0},
        {"threshold": 4},
    ],
)
def test_bad_arguments_are_config_errors(kwargs: dict[str, Any]) -> None:
    _, runner = scripted()
    with pytest.raises(flowcast.ConfigError):
        verify(runner=runner, **kwargs)
