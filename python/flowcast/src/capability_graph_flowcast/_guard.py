"""The self-modification guard: run a change against a git baseline, keep it or roll it back.

``capture_baseline`` records HEAD (and the branch) of a repository; ``with_self_mod_guard``
runs a function that edits the repository and acts on its verdict:

* ``"committed"`` (or None): everything is committed (``git add -A``; nothing to commit is
  fine, e.g. when the function committed itself);
* ``"skip-commit"``: the changes stay in the working tree, uncommitted;
* ``"rolled-back"``: hard rollback to the baseline.

If the function raises (anything, cancellation included), the repository is rolled back and
the original exception propagates; if the rollback itself fails, GuardError(ROLLBACK_FAIL) is
raised with the original exception as ``__cause__``. A rollback is ``git checkout -f BRANCH``,
``git reset --hard BASELINE`` and, when ``clean``, ``git clean -fd`` (ignored files and
``.flowcast/`` survive).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, get_args

from ._errors import GUARD_FAIL, ROLLBACK_FAIL, GitError, GuardError
from ._git import (
    _git,
    git_clean,
    git_commit_all,
    git_current_branch,
    git_head,
    git_reset_hard,
    git_status,
)
from ._sync import in_thread, maybe_await, run_blocking

__all__ = [
    "Baseline",
    "GuardOutcome",
    "Verdict",
    "capture_baseline",
    "with_self_mod_guard",
    "with_self_mod_guard_sync",
]

StrPath = str | os.PathLike[str]
Verdict = Literal["committed", "rolled-back", "skip-commit"]
VERDICTS: Final[tuple[str, ...]] = get_args(Verdict)
DEFAULT_COMMIT_MESSAGE: Final = "flowcast: guarded self-modification"


@dataclass(frozen=True, slots=True)
class Baseline:
    """The state a guarded change can be rolled back to."""

    repo: Path
    head: str
    branch: str | None
    clean: bool


@dataclass(frozen=True, slots=True)
class GuardOutcome:
    """What the guard did: the verdict, the baseline, HEAD afterwards, and the commit it made
    (None when it made none)."""

    verdict: Verdict
    baseline: Baseline
    head: str
    commit: str | None


def capture_baseline(repo: StrPath, require_clean: bool = True) -> Baseline:
    """Record HEAD of ``repo``. GuardError(GUARD_FAIL) when it is not a git repository, has no
    commit yet, or (with ``require_clean``) has uncommitted or untracked changes."""
    root = Path(repo).resolve()
    try:
        head = git_head(root)
        branch = git_current_branch(root)
        status = git_status(root)
    except GitError as exc:
        raise GuardError(
            f"cannot capture a baseline of {root.name!r}: {exc}", code=GUARD_FAIL
        ) from exc
    if status and require_clean:
        changed = len(status.splitlines())
        raise GuardError(
            f"cannot capture a baseline: the working tree has {changed} uncommitted change(s)",
            code=GUARD_FAIL,
        )
    return Baseline(repo=root, head=head, branch=branch, clean=not status)


def _rollback(baseline: Baseline, clean: bool) -> None:
    if baseline.branch is not None and git_current_branch(baseline.repo) != baseline.branch:
        _git(baseline.repo, "checkout", "-q", "-f", baseline.branch)
    git_reset_hard(baseline.repo, baseline.head)
    if clean:
        git_clean(baseline.repo)


def _prepare(repo: StrPath, baseline: Baseline | None, require_clean: bool) -> Baseline:
    if baseline is None:
        return capture_baseline(repo, require_clean)
    if baseline.repo != Path(repo).resolve():
        raise GuardError("the baseline belongs to another repository", code=GUARD_FAIL)
    return baseline


def _settle(result: object, base: Baseline, clean: bool, commit_message: str) -> GuardOutcome:
    verdict = "committed" if result is None else result
    if verdict not in VERDICTS:
        _rollback_or_raise(base, clean, None)
        raise GuardError(
            f"unknown verdict {verdict!r} (expected one of {', '.join(VERDICTS)}); rolled back",
            code=GUARD_FAIL,
        )
    commit = None
    if verdict == "committed":
        commit = git_commit_all(base.repo, commit_message)
    elif verdict == "rolled-back":
        _rollback_or_raise(base, clean, None)
    return GuardOutcome(
        verdict=verdict,  # type: ignore[arg-type]
        baseline=base,
        head=git_head(base.repo),
        commit=commit,
    )


def _rollback_or_raise(base: Baseline, clean: bool, cause: BaseException | None) -> None:
    try:
        _rollback(base, clean)
    except GitError as exc:
        error = GuardError(f"rollback to {base.head[:12]} failed: {exc}", code=ROLLBACK_FAIL)
        # the error that made us roll back; without one (verdict rolled-back), git's own
        raise error from (cause if cause is not None else exc)


async def with_self_mod_guard(
    fn: Callable[[], Awaitable[str | None]] | Callable[[], str | None],
    *,
    repo: StrPath,
    baseline: Baseline | None = None,
    require_clean: bool = True,
    clean: bool = True,
    commit_message: str = DEFAULT_COMMIT_MESSAGE,
) -> GuardOutcome:
    """Run ``fn`` (plain or async, no arguments) as a guarded change of ``repo``.

    The baseline is ``baseline`` or a fresh ``capture_baseline(repo, require_clean)``. See the
    module documentation for verdicts and rollback. A failed commit (a rejecting hook) is
    treated like an error of ``fn``: rollback, then the GitError propagates.
    """
    base = _prepare(repo, baseline, require_clean)
    try:
        result = await maybe_await(fn())
    except BaseException as exc:
        _rollback_or_raise(base, clean, exc)
        raise
    try:
        return _settle(result, base, clean, commit_message)
    except GitError as exc:
        _rollback_or_raise(base, clean, exc)
        raise


def with_self_mod_guard_sync(
    fn: Callable[[], str | None],
    *,
    repo: StrPath,
    baseline: Baseline | None = None,
    require_clean: bool = True,
    clean: bool = True,
    commit_message: str = DEFAULT_COMMIT_MESSAGE,
) -> GuardOutcome:
    """Blocking twin of ``with_self_mod_guard``; ``fn`` is a plain function, run in a worker
    thread (so it may block or use ``asyncio.run``)."""
    return run_blocking(
        with_self_mod_guard,
        in_thread(fn),
        repo=repo,
        baseline=baseline,
        require_clean=require_clean,
        clean=clean,
        commit_message=commit_message,
    )
