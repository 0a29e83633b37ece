"""Adversarial verification: independent voters try to refute a claim, each through a lens."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ._errors import ConfigError, VerifyError, VoterError
from ._schema import run_structured

__all__ = ["DEFAULT_LENSES", "VOTE_SCHEMA", "VerifyResult", "Vote", "verify_adversarial"]

DEFAULT_LENSES: Final = ("adversarial",)
VOTE_SCHEMA: Final = {
    "type": "object",
    "required": ["verdict", "reason"],
    "properties": {
        "verdict": {"enum": ["pass", "fail"]},
        "reason": {"type": "string"},
    },
}


@dataclass(frozen=True, slots=True)
class Vote:
    """One voter's answer: ``pass`` (could not refute the claim) or ``fail``, and why."""

    lens: str
    verdict: Literal["pass", "fail"]
    reason: str


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """``passed`` when at least ``threshold`` votes are ``pass``. Voters that could not vote
    are in ``voter_errors`` and count as not passing."""

    passed: bool
    votes: list[Vote]
    voter_errors: list[VoterError]
    threshold: int


def _prompt(claim: str, lens: str) -> str:
    return (
        "You are an adversarial verifier. Try hard to refute the claim below, looking at it "
        f'through this lens: {lens}.\nAnswer verdict "fail" if you find a concrete reason it '
        'is false or unsupported, otherwise "pass", with a short reason.\n\n'
        f"Claim:\n{claim}"
    )


async def verify_adversarial(
    claim: str,
    *,
    voters: int = 3,
    lenses: Sequence[str] | None = None,
    threshold: int | None = None,
    runner: Callable[[str], Awaitable[str] | str],
) -> VerifyResult:
    """Ask ``voters`` voters per lens (default one lens, "adversarial") to refute ``claim``,
    concurrently, each through ``run_structured(runner, ...)`` with ``VOTE_SCHEMA``.

    ``threshold`` is the number of ``pass`` votes needed (default: a strict majority of all
    voters). A voter whose runner raises, or whose answer never fits the schema, is recorded in
    ``voter_errors``; only when every voter failed is VerifyError raised. Bad arguments are
    ConfigErrors.
    """
    lens_list = list(DEFAULT_LENSES if lenses is None else lenses)
    if isinstance(voters, bool) or not isinstance(voters, int) or voters < 1:
        raise ConfigError("voters must be a positive int")
    if not lens_list or not all(isinstance(lens, str) and lens for lens in lens_list):
        raise ConfigError("lenses must be non-empty strings")
    total = voters * len(lens_list)
    needed = total // 2 + 1 if threshold is None else threshold
    if isinstance(needed, bool) or not isinstance(needed, int) or not 1 <= needed <= total:
        raise ConfigError(f"threshold must be an int from 1 to {total} (the number of voters)")

    assignments = [lens for lens in lens_list for _ in range(voters)]

    async def vote(lens: str) -> Any:
        return await run_structured(runner, _prompt(claim, lens), schema=VOTE_SCHEMA)

    outcomes = await asyncio.gather(*(vote(lens) for lens in assignments), return_exceptions=True)
    votes: list[Vote] = []
    errors: list[VoterError] = []
    for lens, outcome in zip(assignments, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome
            errors.append(VoterError(lens=lens, error=f"{type(outcome).__name__}: {outcome}"))
        else:
            votes.append(Vote(lens=lens, verdict=outcome["verdict"], reason=outcome["reason"]))
    if not votes:
        raise VerifyError(
            f"all {total} voter(s) failed; the claim was not verified: {errors[0].error}",
            voter_errors=errors,
        )
    passes = sum(v.verdict == "pass" for v in votes)
    return VerifyResult(passed=passes >= needed, votes=votes, voter_errors=errors, threshold=needed)
