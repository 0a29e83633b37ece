"""Git primitives on real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import git


def test_status_of_a_clean_tree_is_empty(repo: Path) -> None:
    assert flowcast.git_status(repo) == ""


def test_status_lists_modified_and_untracked_files(repo: Path) -> None:
    (repo / "README.md").write_text("changed\n")
    (repo / "new" / "deep").mkdir(parents=True)
    (repo / "new" / "deep" / "file.txt").write_text("x")
    assert flowcast.git_status(repo).splitlines() == [" M README.md", "?? new/deep/file.txt"]


def test_status_outside_a_repository_raises_git_error_with_stderr(tmp_path: Path) -> None:
    with pytest.raises(flowcast.GitError) as caught:
        flowcast.git_status(tmp_path)
    assert caught.value.code == "GIT_FAIL"
    assert "not a git repository" in caught.value.stderr
    assert str(caught.value).startswith("git status failed (exit 128): fatal: not a git repository")


def test_diff_shows_unstaged_changes(repo: Path) -> None:
    (repo / "README.md").write_text("changed\n")
    assert "+changed" in flowcast.git_diff(repo)


def test_diff_staged_shows_the_index(repo: Path) -> None:
    (repo / "README.md").write_text("staged\n")
    git(repo, "add", "README.md")
    assert flowcast.git_diff(repo) == ""
    assert "+staged" in flowcast.git_diff(repo, staged=True)


def test_diff_against_a_base(repo: Path) -> None:
    first = flowcast.git_head(repo)
    (repo / "README.md").write_text("second\n")
    flowcast.git_commit_all(repo, "second")
    assert "+second" in flowcast.git_diff(repo, base=first)


def test_diff_against_an_unknown_base_raises_git_error(repo: Path) -> None:
    with pytest.raises(flowcast.GitError, match="git diff failed"):
        flowcast.git_diff(repo, base="no-such-ref")


def test_head_is_the_commit_id(repo: Path) -> None:
    assert flowcast.git_head(repo) == git(repo, "rev-parse", "HEAD").strip()


def test_head_of_an_empty_repository_raises_git_error(empty_repo: Path) -> None:
    with pytest.raises(flowcast.GitError) as caught:
        flowcast.git_head(empty_repo)
    assert caught.value.stderr


def test_commit_all_commits_tracked_and_untracked_changes(repo: Path) -> None:
    (repo / "README.md").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    commit = flowcast.git_commit_all(repo, "change things")
    assert commit == flowcast.git_head(repo)
    assert flowcast.git_status(repo) == ""
    assert git(repo, "log", "-1", "--format=%s").strip() == "change things"


def test_commit_all_with_nothing_to_commit_returns_none(repo: Path) -> None:
    head = flowcast.git_head(repo)
    assert flowcast.git_commit_all(repo, "nothing") is None
    assert flowcast.git_head(repo) == head


def test_commit_all_allow_empty_commits_anyway(repo: Path) -> None:
    head = flowcast.git_head(repo)
    assert flowcast.git_commit_all(repo, "empty", allow_empty=True) not in (None, head)


def test_commit_rejected_by_a_hook_raises_git_error_with_the_hook_output(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'hook says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    (repo / "x.txt").write_text("x")
    with pytest.raises(flowcast.GitError) as caught:
        flowcast.git_commit_all(repo, "blocked")
    assert "hook says no" in caught.value.stderr


def test_create_branch_leaves_the_current_branch(repo: Path) -> None:
    flowcast.git_create_branch(repo, "feature/x-1")
    assert "feature/x-1" in git(repo, "branch", "--list")
    assert flowcast.git_current_branch(repo) == "main"


def test_create_branch_with_checkout_switches_to_it(repo: Path) -> None:
    flowcast.git_create_branch(repo, "work", checkout=True)
    assert flowcast.git_current_branch(repo) == "work"


def test_create_branch_that_exists_raises_git_error(repo: Path) -> None:
    with pytest.raises(flowcast.GitError) as caught:
        flowcast.git_create_branch(repo, "main")
    assert "already exists" in caught.value.stderr


@pytest.mark.parametrize("name", ["-D", "a//b", "x/../y", "feat/", "a b"])
def test_create_branch_rejects_unsafe_names_with_path_error(repo: Path, name: str) -> None:
    with pytest.raises(flowcast.PathError):
        flowcast.git_create_branch(repo, name)


def test_current_branch_of_a_detached_head_is_none(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    assert flowcast.git_current_branch(repo) is None


def test_worktree_add_and_remove(repo: Path, tmp_path: Path) -> None:
    path = flowcast.git_worktree_add(repo, tmp_path / "wt", branch="wt-branch")
    assert (path / "README.md").read_text() == "hello\n"
    assert flowcast.git_current_branch(path) == "wt-branch"
    flowcast.git_worktree_remove(repo, path)
    assert not path.exists()


def test_worktree_add_at_a_start_point(repo: Path, tmp_path: Path) -> None:
    first = flowcast.git_head(repo)
    (repo / "README.md").write_text("second\n")
    flowcast.git_commit_all(repo, "second")
    path = flowcast.git_worktree_add(repo, tmp_path / "old", start_point=first)
    assert (path / "README.md").read_text() == "hello\n"


def test_worktree_add_onto_an_existing_folder_raises_git_error(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "file").write_text("x")
    with pytest.raises(flowcast.GitError, match="git worktree failed") as caught:
        flowcast.git_worktree_add(repo, target)
    assert "already exists" in caught.value.stderr


def test_worktree_remove_of_a_dirty_worktree_needs_force(repo: Path, tmp_path: Path) -> None:
    path = flowcast.git_worktree_add(repo, tmp_path / "wt")
    (path / "dirty.txt").write_text("x")
    with pytest.raises(flowcast.GitError):
        flowcast.git_worktree_remove(repo, path)
    flowcast.git_worktree_remove(repo, path, force=True)
    assert not path.exists()


def test_git_that_cannot_start_raises_git_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(repo / "no-bin-here"))
    with pytest.raises(flowcast.GitError, match="cannot run git"):
        flowcast.git_status(repo)
