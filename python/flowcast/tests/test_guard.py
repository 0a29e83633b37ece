"""capture_baseline / with_self_mod_guard on real repositories."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import Twin, git


def edit(repo: Path, verdict: str | None = None) -> object:
    def change() -> str | None:
        (repo / "README.md").write_text("edited\n")
        (repo / "added.txt").write_text("new\n")
        return verdict

    return change


def test_baseline_records_head_and_branch(repo: Path) -> None:
    baseline = flowcast.capture_baseline(repo)
    assert baseline.head == flowcast.git_head(repo)
    assert (baseline.branch, baseline.clean, baseline.repo) == ("main", True, repo.resolve())


def test_baseline_of_a_dirty_tree_is_guard_fail(repo: Path) -> None:
    (repo / "untracked.txt").write_text("x")
    with pytest.raises(flowcast.GuardError) as caught:
        flowcast.capture_baseline(repo)
    assert caught.value.code == "GUARD_FAIL"


def test_baseline_of_a_dirty_tree_is_allowed_when_clean_is_not_required(repo: Path) -> None:
    (repo / "untracked.txt").write_text("x")
    assert flowcast.capture_baseline(repo, require_clean=False).clean is False


def test_baseline_without_a_head_commit_is_guard_fail(empty_repo: Path) -> None:
    with pytest.raises(flowcast.GuardError) as caught:
        flowcast.capture_baseline(empty_repo)
    assert caught.value.code == "GUARD_FAIL"
    assert isinstance(caught.value.__cause__, flowcast.GitError)


def test_baseline_outside_a_repository_is_guard_fail(tmp_path: Path) -> None:
    with pytest.raises(flowcast.GuardError, match="cannot capture a baseline"):
        flowcast.capture_baseline(tmp_path)


def test_verdict_committed_commits_the_changes(twin: Twin, repo: Path) -> None:
    before = flowcast.git_head(repo)
    outcome = twin("with_self_mod_guard", edit(repo, "committed"), repo=repo)
    assert outcome.verdict == "committed"
    assert outcome.commit == outcome.head != before
    assert flowcast.git_status(repo) == ""
    assert (repo / "added.txt").exists()


def test_returning_none_means_committed(twin: Twin, repo: Path) -> None:
    assert twin("with_self_mod_guard", edit(repo), repo=repo).verdict == "committed"


def test_committed_with_no_changes_makes_no_commit(twin: Twin, repo: Path) -> None:
    outcome = twin("with_self_mod_guard", lambda: "committed", repo=repo)
    assert (outcome.commit, outcome.head) == (None, outcome.baseline.head)


def test_verdict_skip_commit_keeps_the_changes_uncommitted(twin: Twin, repo: Path) -> None:
    outcome = twin("with_self_mod_guard", edit(repo, "skip-commit"), repo=repo)
    assert (outcome.verdict, outcome.commit, outcome.head) == (
        "skip-commit",
        None,
        outcome.baseline.head,
    )
    assert (repo / "README.md").read_text() == "edited\n"
    assert (repo / "added.txt").exists()


def test_verdict_rolled_back_restores_the_baseline(twin: Twin, repo: Path) -> None:
    outcome = twin("with_self_mod_guard", edit(repo, "rolled-back"), repo=repo)
    assert outcome.verdict == "rolled-back"
    assert (repo / "README.md").read_text() == "hello\n"
    assert not (repo / "added.txt").exists()
    assert flowcast.git_status(repo) == ""


def test_an_error_rolls_back_and_propagates_unchanged(twin: Twin, repo: Path) -> None:
    def broken() -> None:
        (repo / "README.md").write_text("half-done\n")
        (repo / "junk.txt").write_text("junk\n")
        raise KeyError("mid-change")

    with pytest.raises(KeyError, match="mid-change"):
        twin("with_self_mod_guard", broken, repo=repo)
    assert (repo / "README.md").read_text() == "hello\n"
    assert not (repo / "junk.txt").exists()


def test_a_red_gate_inside_the_guard_rolls_back(repo: Path) -> None:
    async def change_then_gate() -> None:
        (repo / "README.md").write_text("breaks the gate\n")
        await flowcast.run_gate({"name": "readme", "cmd": "grep -q hello README.md"}, repo=repo)

    with pytest.raises(flowcast.GateError, match="quality gate 'readme' failed"):
        asyncio.run(flowcast.with_self_mod_guard(change_then_gate, repo=repo))
    assert (repo / "README.md").read_text() == "hello\n"


def test_commits_made_by_the_function_are_undone_by_rollback(twin: Twin, repo: Path) -> None:
    before = flowcast.git_head(repo)

    def commit_then_fail() -> None:
        (repo / "README.md").write_text("committed inside\n")
        flowcast.git_commit_all(repo, "inside")
        raise RuntimeError("after commit")

    with pytest.raises(RuntimeError):
        twin("with_self_mod_guard", commit_then_fail, repo=repo)
    assert flowcast.git_head(repo) == before


def test_rollback_returns_to_the_baseline_branch(twin: Twin, repo: Path) -> None:
    def switch_then_fail() -> None:
        flowcast.git_create_branch(repo, "elsewhere", checkout=True)
        raise RuntimeError("on the wrong branch")

    with pytest.raises(RuntimeError):
        twin("with_self_mod_guard", switch_then_fail, repo=repo)
    assert flowcast.git_current_branch(repo) == "main"


def test_clean_false_keeps_untracked_files_on_rollback(twin: Twin, repo: Path) -> None:
    outcome = twin("with_self_mod_guard", edit(repo, "rolled-back"), repo=repo, clean=False)
    assert outcome.verdict == "rolled-back"
    assert (repo / "README.md").read_text() == "hello\n"
    assert (repo / "added.txt").exists()


def test_rollback_keeps_ignored_files_and_flowcast_state(twin: Twin, repo: Path) -> None:
    (repo / ".gitignore").write_text("*.log\n")
    flowcast.git_commit_all(repo, "ignore logs")
    (repo / ".flowcast" / "runs" / "r1").mkdir(parents=True)
    (repo / ".flowcast" / "runs" / "r1" / "state.json").write_text("{}")
    baseline = flowcast.capture_baseline(repo, require_clean=False)
    (repo / "build.log").write_text("log")
    twin("with_self_mod_guard", edit(repo, "rolled-back"), repo=repo, baseline=baseline)
    assert (repo / "build.log").exists()
    assert (repo / ".flowcast" / "runs" / "r1" / "state.json").exists()


def test_a_dirty_tree_is_guard_fail_before_the_function_runs(twin: Twin, repo: Path) -> None:
    (repo / "README.md").write_text("dirty\n")
    ran = []
    with pytest.raises(flowcast.GuardError) as caught:
        twin("with_self_mod_guard", lambda: ran.append(1), repo=repo)
    assert (caught.value.code, ran) == ("GUARD_FAIL", [])


def test_a_given_baseline_is_used_instead_of_a_fresh_one(twin: Twin, repo: Path) -> None:
    baseline = flowcast.capture_baseline(repo)
    (repo / "pre-existing.txt").write_text("made after the baseline\n")
    twin("with_self_mod_guard", edit(repo, "rolled-back"), repo=repo, baseline=baseline)
    assert not (repo / "pre-existing.txt").exists()


def test_a_baseline_of_another_repository_is_guard_fail(
    twin: Twin, repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(repo, other)
    with pytest.raises(flowcast.GuardError, match="another repository"):
        twin(
            "with_self_mod_guard", edit(repo), repo=repo, baseline=flowcast.capture_baseline(other)
        )


def test_an_unknown_verdict_rolls_back_then_is_guard_fail(twin: Twin, repo: Path) -> None:
    with pytest.raises(flowcast.GuardError, match="unknown verdict 'panic'") as caught:
        twin("with_self_mod_guard", edit(repo, "panic"), repo=repo)
    assert caught.value.code == "GUARD_FAIL"
    assert (repo / "README.md").read_text() == "hello\n"


def test_a_failing_rollback_is_rollback_fail_with_the_original_error_as_cause(
    twin: Twin, repo: Path
) -> None:
    original = RuntimeError("the change went wrong")

    def break_repo_then_fail() -> None:
        (repo / "README.md").write_text("edited\n")
        (repo / ".git" / "index.lock").write_text("")  # a concurrent git holds the index
        raise original

    with pytest.raises(flowcast.GuardError) as caught:
        twin("with_self_mod_guard", break_repo_then_fail, repo=repo)
    assert caught.value.code == "ROLLBACK_FAIL"
    assert caught.value.__cause__ is original
    assert "index.lock" in str(caught.value)  # git's reason for refusing
    assert caught.value.to_dict()["cause"] == {
        "name": "RuntimeError",
        "message": "the change went wrong",
    }


def test_a_failing_rolled_back_verdict_is_rollback_fail_caused_by_git(
    twin: Twin, repo: Path
) -> None:
    def lock_index() -> str:
        (repo / ".git" / "index.lock").write_text("")
        return "rolled-back"

    with pytest.raises(flowcast.GuardError) as caught:
        twin("with_self_mod_guard", lock_index, repo=repo)
    assert caught.value.code == "ROLLBACK_FAIL"
    assert isinstance(caught.value.__cause__, flowcast.GitError)


def test_a_commit_rejected_by_a_hook_rolls_back_and_raises_git_error(
    twin: Twin, repo: Path
) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(flowcast.GitError, match="no commits today"):
        twin("with_self_mod_guard", edit(repo, "committed"), repo=repo)
    assert (repo / "README.md").read_text() == "hello\n"


def test_cancellation_inside_the_guard_rolls_back(repo: Path) -> None:
    async def scenario() -> None:
        async def slow_change() -> None:
            (repo / "README.md").write_text("half\n")
            await asyncio.sleep(30)

        task = asyncio.create_task(flowcast.with_self_mod_guard(slow_change, repo=repo))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert (repo / "README.md").read_text() == "hello\n"
    assert git(repo, "status", "--porcelain") == ""


def test_the_blocking_twin_runs_fn_outside_any_event_loop(repo: Path) -> None:
    async def write_async() -> None:
        (repo / "async.txt").write_text("x")

    def uses_asyncio_run() -> str:
        asyncio.run(write_async())
        return "committed"

    outcome = flowcast.with_self_mod_guard_sync(uses_asyncio_run, repo=repo)
    assert outcome.commit is not None
