"""Git primitives. Each runs one or two git commands and raises GitError (with git's stderr)
when git fails or cannot be started. They block: git commands here are short."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Final

from ._errors import GitError
from ._paths import assert_safe_ident

__all__ = [
    "git_commit_all",
    "git_create_branch",
    "git_current_branch",
    "git_diff",
    "git_head",
    "git_status",
    "git_worktree_add",
    "git_worktree_remove",
]

StrPath = str | os.PathLike[str]

#: Never cleaned by a rollback: checkpoints of the running flow live there.
FLOWCAST_DIR: Final = ".flowcast"


def _env() -> dict[str, str]:
    return os.environ | {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}


def _git(
    repo: StrPath, *args: str, ok_codes: tuple[int, ...] = (0,)
) -> subprocess.CompletedProcess[str]:
    argv = ["git", "-C", os.fspath(repo), *args]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, errors="replace", env=_env(), check=False
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}", stderr=str(exc)) from exc
    if proc.returncode not in ok_codes:
        stderr = proc.stderr
        first = next((line for line in stderr.splitlines() if line.strip()), "")
        raise GitError(
            f"git {args[0]} failed (exit {proc.returncode})" + (f": {first}" if first else ""),
            stderr=stderr,
        )
    return proc


def _ref_name(name: object, field: str) -> str:
    """Branch names: '/'-separated segments, each a safe identifier (no option look-alikes)."""
    if not isinstance(name, str):
        return assert_safe_ident(name, field)  # raises: not a str
    for segment in name.split("/"):
        assert_safe_ident(segment, field)
    return name


def git_status(repo: StrPath) -> str:
    """``git status --porcelain=v1 --untracked-files=all``: empty when the tree is clean."""
    return _git(repo, "status", "--porcelain=v1", "--untracked-files=all").stdout


def git_diff(repo: StrPath, *, base: str | None = None, staged: bool = False) -> str:
    """The diff of tracked files against the index (or, ``staged``, of the index against HEAD),
    or against ``base`` when given."""
    args = ["diff", "--no-color", "--no-ext-diff"]
    if staged:
        args.append("--cached")
    if base is not None:
        args += ["--end-of-options", base]
    return _git(repo, *args).stdout


def git_head(repo: StrPath) -> str:
    """The commit id of HEAD; GitError when there is none (an empty repository) or no repo."""
    return _git(repo, "rev-parse", "--verify", "HEAD^{commit}").stdout.strip()


def git_current_branch(repo: StrPath) -> str | None:
    """The checked-out branch, or None on a detached HEAD."""
    proc = _git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", ok_codes=(0, 1))
    return proc.stdout.strip() or None


def git_commit_all(repo: StrPath, message: str, *, allow_empty: bool = False) -> str | None:
    """Stage everything (``git add -A``) and commit; return the new commit id, or None when
    there was nothing to commit (unless ``allow_empty``)."""
    _git(repo, "add", "-A")
    staged = _git(repo, "diff", "--cached", "--quiet", ok_codes=(0, 1)).returncode == 1
    if not staged and not allow_empty:
        return None
    _git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git_head(repo)


def git_create_branch(
    repo: StrPath, name: str, *, start_point: str | None = None, checkout: bool = False
) -> None:
    """Create branch ``name`` (at ``start_point``, default HEAD) and optionally check it out.
    Each '/'-separated segment of the name must be a safe identifier (else PathError)."""
    _ref_name(name, "branch")
    rest = [start_point] if start_point is not None else []
    if checkout:
        _git(repo, "checkout", "-q", "-b", name, *rest)
    else:
        _git(repo, "branch", "--end-of-options", name, *rest)


def git_worktree_add(
    repo: StrPath, path: StrPath, *, branch: str | None = None, start_point: str | None = None
) -> Path:
    """Add a worktree at ``path`` (on a new ``branch`` when given); return its absolute path."""
    target = Path(path).absolute()
    args = ["worktree", "add", "-q"]
    if branch is not None:
        args += ["-b", _ref_name(branch, "branch")]
    args.append(os.fspath(target))
    if start_point is not None:
        args.append(start_point)
    _git(repo, *args)
    return target


def git_worktree_remove(repo: StrPath, path: StrPath, *, force: bool = False) -> None:
    """Remove the worktree at ``path`` (``force`` also drops its uncommitted changes)."""
    args = ["worktree", "remove", *(["--force"] if force else []), os.fspath(Path(path).absolute())]
    _git(repo, *args)


def git_reset_hard(repo: StrPath, ref: str) -> None:
    """``git reset --hard REF``: tracked files and the index back to ``ref``."""
    _git(repo, "reset", "-q", "--hard", ref)


def git_clean(repo: StrPath) -> None:
    """Remove untracked files and folders (ignored ones and ``.flowcast/`` stay)."""
    _git(repo, "clean", "-q", "-f", "-d", "-e", f"/{FLOWCAST_DIR}")
