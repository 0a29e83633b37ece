"""Writing a user's files: atomically, and never over a file that changed since it was read.

Used by the maintenance commands (``init`` creates files, ``mcp-install``/``mcp-uninstall`` edit a
client's configuration): a new file appears complete or not at all (a temporary file linked into
place), an edited file is replaced only if it is still the one that was read (its identity:
device, inode, size and modification time), keeping its mode. Anything else is
:class:`Clobbered`, and nothing was overwritten. An edit from reading to replacing holds
:func:`edit_lock` ([CG-MAINT-22]), so two edits of one file never both act on the same reading.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Final

__all__ = [
    "LOCK_WAIT_S",
    "Clobbered",
    "Locked",
    "create_new",
    "edit_lock",
    "file_identity",
    "file_mode",
    "replace_existing",
    "temporary_file",
]


class Clobbered(Exception):
    """The target appeared (or changed) while we were writing: nothing was overwritten."""


class Locked(Exception):
    """Another edit held the file's lock for longer than :data:`LOCK_WAIT_S`."""

    def __init__(self, lock: Path) -> None:
        super().__init__(str(lock))
        self.lock = lock


#: How long an edit waits for another edit's lock before it reports a conflict ([CG-MAINT-22]).
LOCK_WAIT_S: Final = 5.0
_LOCK_POLL_S: Final = 0.01


def lock_path(path: Path) -> Path:
    """``FILE.lock``, beside ``FILE``."""
    return path.with_name(path.name + ".lock")


@contextmanager
def edit_lock(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` ([CG-MAINT-22]): the file ``FILE.lock`` beside it,
    created exclusively (waiting up to LOCK_WAIT_S while it exists, then :class:`Locked`) and
    removed on exit. When the folder does not exist there is nothing to lock (a new file is
    created exclusively anyway); when the lock cannot be created for another reason, the edit's
    own write fails the same way."""
    lock = lock_path(path)
    deadline = time.monotonic() + LOCK_WAIT_S
    fd: int | None = None
    while fd is None:
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            if time.monotonic() >= deadline:
                raise Locked(lock) from None
            time.sleep(_LOCK_POLL_S)
        except OSError:
            break
    if fd is None:
        yield
        return
    try:
        with suppress(OSError):
            os.write(fd, f"{os.getpid()}\n".encode())
        os.close(fd)
        yield
    finally:
        with suppress(OSError):
            os.unlink(lock)


def file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def temporary_file(directory: Path, data: bytes, mode: int) -> str:
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".capability-graph-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
    except BaseException:
        os.unlink(temporary)
        raise
    return temporary


def create_new(path: Path, data: bytes) -> None:
    """Create ``path`` atomically with ``data``; never replace an existing file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_file(path.parent, data, file_mode())
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise Clobbered from None
    except OSError:  # no hard links here: exclusive create (complete, but not atomic to readers)
        try:
            fd = os.open(
                path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
            )
        except FileExistsError:
            raise Clobbered from None
        with os.fdopen(fd, "wb") as file:
            file.write(data)
    finally:
        os.unlink(temporary)


def replace_existing(path: Path, data: bytes, identity: tuple[int, ...]) -> None:
    """Replace ``path`` atomically, keeping its mode, if it is still the file we read."""
    info = os.stat(path)
    temporary = temporary_file(path.parent, data, info.st_mode & 0o7777)
    try:
        if file_identity(info) != identity:
            raise Clobbered
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def file_identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
