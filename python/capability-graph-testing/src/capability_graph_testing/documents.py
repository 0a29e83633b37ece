# One piece: test_documents.py's witnesses share the real os functions and the trees they watch.
"""Helpers for ``test_documents.py``: hostile trees, and witnesses that nothing outside a root is
touched.

Three independent witnesses are used by the tests:

* :class:`FsWatch` -- in-process. An audit hook (``sys.addaudithook``) records every ``open``
  and every ``os.*``/``shutil.*``/``subprocess.*``/``socket.*`` event; spies around ``os.open``,
  ``os.stat`` and ``os.readlink`` (they record and delegate to the real functions) check that
  every path-based call names one component relative to a directory descriptor whose
  ``/proc/self/fd`` link lies inside the root -- or is the root itself.
* :class:`FifoTripwire` -- a fifo with a writer blocked in ``open``: if anything opens the fifo
  for reading, even non-blocking, the writer wakes up.
* :func:`strace_reads` -- out of process: every file-related system call made while reading,
  recorded by ``strace`` and checked descriptor by descriptor (:func:`trace_violations`).
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from capability_graph import GraphError
from capability_graph._testing import DocumentRoot
from capability_graph_testing.threads import ThreadCall

T = TypeVar("T")

REAL_OPEN = os.open
REAL_STAT = os.stat
REAL_READLINK = os.readlink

# Threads of the helpers themselves (tripwire writers): never recorded.
_HELPER_THREADS: set[int] = set()
_ACTIVE: list[FsWatch] = []

_FORBIDDEN_EVENT = re.compile(r"^(os|shutil|subprocess|socket|glob|tempfile)\.")


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _ACTIVE or threading.get_ident() in _HELPER_THREADS:
        return
    watch = _ACTIVE[-1]
    if event == "open":
        path = args[0]
        if isinstance(path, int):
            return
        watch.audit_open(os.fsencode(path))
    elif _FORBIDDEN_EVENT.match(event):
        watch.violations.append(f"audit event {event}")


sys.addaudithook(_audit)


class FsWatch:
    """Records violations of "only the root, then one component at a time under it"."""

    def __init__(self, root: Path) -> None:
        self.root = os.fsencode(os.path.abspath(root))  # callers pass the real root
        self.violations: list[str] = []
        self.opened: list[bytes] = []
        self._patch = pytest.MonkeyPatch()

    # --- checks ---

    def audit_open(self, path: bytes) -> None:
        self.opened.append(path)
        if path != self.root and not _single_component(path):
            self.violations.append(f"audit: open of {path!r}")

    def _inside(self, dir_fd: int) -> bool:
        try:
            where = os.fsencode(REAL_READLINK(f"/proc/self/fd/{dir_fd}"))
        except OSError:
            return False
        return where == self.root or where.startswith(self.root + b"/")

    def _check(self, call: str, path: Any, dir_fd: int | None) -> None:
        if threading.get_ident() in _HELPER_THREADS:
            return
        name = os.fsencode(path)
        if dir_fd is None:
            if name != self.root:
                self.violations.append(f"{call} of {name!r} without a directory descriptor")
            return
        if not _single_component(name):
            self.violations.append(f"{call} of {name!r}: not one component")
        if not self._inside(dir_fd):
            self.violations.append(f"{call} of {name!r} under a directory outside the root")

    # --- spies ---

    def _open(self, path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        self._check("open", path, dir_fd)
        if not flags & os.O_NOFOLLOW or not flags & os.O_CLOEXEC:
            self.violations.append("open without O_NOFOLLOW | O_CLOEXEC")
        return REAL_OPEN(path, flags, mode, dir_fd=dir_fd)

    def _stat(
        self, path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True
    ) -> os.stat_result:
        if not isinstance(path, int):
            self._check("stat", path, dir_fd)
            if follow_symlinks:
                self.violations.append("stat following symbolic links")
        return REAL_STAT(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

    def _readlink(self, path: Any, *, dir_fd: int | None = None) -> Any:
        self._check("readlink", path, dir_fd)
        if dir_fd is None:
            self.violations.append("readlink without a directory descriptor")
        return REAL_READLINK(path, dir_fd=dir_fd)

    def __enter__(self) -> FsWatch:
        self._patch.setattr(os, "open", self._open)
        self._patch.setattr(os, "stat", self._stat)
        self._patch.setattr(os, "readlink", self._readlink)
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.remove(self)
        self._patch.undo()


def _single_component(name: bytes) -> bool:
    return bool(name) and b"/" not in name and name not in (b".", b"..")


@contextmanager
def unwatched() -> Iterator[None]:
    """Actions of the test itself (e.g. a mutation during a read): not recorded by a watch."""
    ident = threading.get_ident()
    _HELPER_THREADS.add(ident)
    try:
        yield
    finally:
        _HELPER_THREADS.discard(ident)


# --- trees -------------------------------------------------------------------------------------

ROOT_NAME = "cg-docroot-7f3a"
OUTSIDE_NAME = "cg-outside-91b2"
SECRET = "OUTSIDE-SECRET-5c1e"


@dataclass
class Tree:
    """``base/ROOT_NAME`` (the document root) next to ``base/OUTSIDE_NAME`` (never to be read)."""

    base: Path
    root: Path
    outside: Path
    doc_root: DocumentRoot

    def write(self, relative: str, data: str | bytes, *, under: Path | None = None) -> Path:
        path = (under or self.root) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    def link(self, relative: str, target: str | Path) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
        return path

    def leak_markers(self) -> list[str]:
        """Strings that must never appear in an error: every distinctive part of the tmp path."""
        parts = [p for p in self.base.resolve().parts if len(p) >= 4]
        return [str(self.base.resolve()), ROOT_NAME, OUTSIDE_NAME, SECRET, *parts]


def make_tree(base: Path) -> Tree:
    root = base / ROOT_NAME
    outside = base / OUTSIDE_NAME
    root.mkdir()
    outside.mkdir()
    (root / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "sub" / "deep.md").write_text("deep\n", encoding="utf-8")
    (outside / "secret.md").write_text(SECRET, encoding="utf-8")
    (outside / "dir").mkdir()
    (outside / "dir" / "inner.md").write_text(SECRET, encoding="utf-8")
    # A look-alike trap: base/secret.md is what "../secret.md" would name from the root.
    (base / "secret.md").write_text(SECRET, encoding="utf-8")
    return Tree(base, root.resolve(), outside.resolve(), DocumentRoot.fix(root))


# --- errors ------------------------------------------------------------------------------------


def assert_no_leak(error: GraphError, markers: list[str]) -> None:
    """No marker in any rendering of ``error``; no cause or context to dig one out of."""
    assert error.__cause__ is None
    assert error.__context__ is None
    renderings = [
        json.dumps(error.to_json(), ensure_ascii=False),
        str(error),
        repr(error),
        repr(error.args),
        repr(vars(error)),
        repr(pickle.loads(pickle.dumps(error))),
    ]
    for rendering in renderings:
        for marker in markers:
            assert marker not in rendering


# --- blocking guards ---------------------------------------------------------------------------


def run_guarded(fn: Callable[[], T], *, timeout: float = 10.0, fifos: tuple[Path, ...] = ()) -> T:
    """Run ``fn`` in a thread; fail (after unblocking ``fifos``) if it does not finish in time."""
    call = ThreadCall(fn)
    if not call.join(timeout):
        for fifo in fifos:  # release a reader blocked in open()
            with suppress(OSError):
                os.close(REAL_OPEN(fifo, os.O_WRONLY | os.O_NONBLOCK))
        call.join(timeout)
        pytest.fail("the read blocked")
    return call.result()


class FifoTripwire:
    """A fifo whose writer blocks in ``open`` until someone opens it for reading."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self._writer = -1
        self._thread = threading.Thread(target=self._block, daemon=True)
        self._thread.start()
        self._wait_until_blocked()

    def _block(self) -> None:
        _HELPER_THREADS.add(threading.get_ident())
        try:
            self._writer = REAL_OPEN(self.path, os.O_WRONLY | os.O_CLOEXEC)
        finally:
            _HELPER_THREADS.discard(threading.get_ident())

    def _wait_until_blocked(self) -> None:
        deadline = time.monotonic() + 5
        wchan = Path(f"/proc/self/task/{self._thread.native_id}/wchan")
        while time.monotonic() < deadline:
            try:
                if wchan.read_text().strip() in ("wait_for_partner", "fifo_open"):
                    return
            except OSError:
                break
            time.sleep(0.005)
        time.sleep(0.2)  # no /proc: give the writer time to block

    @property
    def tripped(self) -> bool:
        """Whether a reader opened the fifo (the writer's ``open`` returned)."""
        self._thread.join(0.2)
        return not self._thread.is_alive()

    def close(self) -> None:
        if self._thread.is_alive():
            reader = REAL_OPEN(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            self._thread.join(5)
            os.close(reader)
        if self._writer >= 0:
            os.close(self._writer)
            self._writer = -1

    def __enter__(self) -> FifoTripwire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- descriptors -------------------------------------------------------------------------------


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


# --- a deep tree (beyond PATH_MAX), built with directory descriptors ---------------------------


def make_deep_file(root: Path, components: list[str], data: bytes) -> None:
    fd = REAL_OPEN(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in components[:-1]:
            os.mkdir(name, dir_fd=fd)
            child = REAL_OPEN(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        file_fd = REAL_OPEN(components[-1], os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        try:
            os.write(file_fd, data)
        finally:
            os.close(file_fd)
    finally:
        os.close(fd)


# --- strace ------------------------------------------------------------------------------------

STRACE = shutil.which("strace")

_TRACE_SCRIPT = """
import json, os, sys
from capability_graph import GraphError
from capability_graph._testing import DocumentRoot, read_document_file
root = DocumentRoot.fix(sys.argv[1])
paths = json.loads(sys.argv[2])
results = []
try:
    os.stat("/CG-TRACE-BEGIN")
except OSError:
    pass
for path in paths:
    try:
        results.append(read_document_file(root, path, max_bytes=int(sys.argv[3])).text)
    except GraphError as error:
        results.append(error.code.value)
try:
    os.stat("/CG-TRACE-END")
except OSError:
    pass
print(json.dumps(results))
"""


def strace_reads(
    root: Path, paths: list[str], max_bytes: int, trace: Path
) -> tuple[list[str], list[str]]:
    """Read ``paths`` in a child under strace: (results, file-related syscalls of the reads)."""
    assert STRACE is not None
    proc = subprocess.run(
        [
            STRACE,
            "-f",
            "-qq",
            "-s",
            "65536",
            "-e",
            "trace=%file,close",
            "-e",
            "signal=none",
            "-o",
            str(trace),
            sys.executable,
            "-c",
            _TRACE_SCRIPT,
            str(root),
            json.dumps(paths),
            str(max_bytes),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0 and "ptrace" in proc.stderr:
        pytest.skip("strace cannot trace here (ptrace not permitted)")
    assert proc.returncode == 0, proc.stderr
    results: list[str] = json.loads(proc.stdout)
    lines = trace.read_text(encoding="utf-8", errors="replace").splitlines()
    begin = next(i for i, line in enumerate(lines) if '(AT_FDCWD, "/CG-TRACE-BEGIN"' in line)
    end = next(i for i, line in enumerate(lines) if '(AT_FDCWD, "/CG-TRACE-END"' in line)
    return results, lines[begin + 1 : end]


_SYSCALL = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(\w+)\((.*)\)\s+=\s+(-?\d+)")
_AT_CALL = re.compile(r'^(AT_FDCWD|\d+), "((?:[^"\\]|\\.)*)"')


def trace_violations(lines: list[str], root: Path) -> list[str]:
    """Every syscall must be the root's own open/lstat, or one component under an fd inside it."""
    real_root = os.path.realpath(root)
    inside: set[int] = set()
    violations: list[str] = []
    for line in lines:
        match = _SYSCALL.match(line)
        if match is None:
            violations.append(f"unparsed: {line}")
            continue
        call, args, ret = match.group(1), match.group(2), int(match.group(3))
        if call == "close":
            inside.discard(int(args))
            continue
        at = _AT_CALL.match(args)
        if call not in ("openat", "newfstatat", "readlinkat", "statx") or at is None:
            violations.append(f"unexpected: {line}")
            continue
        dirfd, name = at.group(1), at.group(2)
        if dirfd == "AT_FDCWD":
            nofollow = "O_NOFOLLOW" in args or "AT_SYMLINK_NOFOLLOW" in args
            if name != real_root or not nofollow:
                violations.append(f"outside: {line}")
                continue
        elif int(dirfd) not in inside:
            violations.append(f"unknown directory: {line}")
            continue
        elif name == "" and "AT_EMPTY_PATH" in args:
            continue  # fstat
        elif not name or "/" in name or name in (".", ".."):
            violations.append(f"not one component: {line}")
            continue
        elif call != "openat" and "AT_SYMLINK_NOFOLLOW" not in args and call != "readlinkat":
            violations.append(f"follows links: {line}")
            continue
        if call == "openat" and ret >= 0:
            if "O_NOFOLLOW" not in args:
                violations.append(f"open follows links: {line}")
            inside.add(ret)
    return violations


# --- permissions (root bypasses mode bits) ---------------------------------------------------

_READ_SCRIPT = """
import json, sys
from capability_graph import GraphError
from capability_graph._testing import DocumentRoot, read_document_file
root = DocumentRoot.fix(sys.argv[1])
try:
    body = read_document_file(root, sys.argv[2], max_bytes=1 << 20)
except GraphError as error:
    print(json.dumps(error.to_json()))
else:
    print(json.dumps({"text": body.text}))
"""

SETPRIV = shutil.which("setpriv")


def read_without_dac_override(root: Path, relative: str) -> dict[str, str]:
    """Read in a child process that obeys mode bits.

    As root, the child keeps uid 0 but loses CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from its
    bounding set (``setpriv``), so a root-owned file or directory of mode 000 is really closed.
    """
    prefix: list[str] = []
    if os.geteuid() == 0:
        if SETPRIV is None:
            pytest.skip("setpriv is needed to drop CAP_DAC_OVERRIDE as root")
        prefix = [SETPRIV, "--bounding-set=-dac_override,-dac_read_search", "--"]
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", _READ_SCRIPT, str(root), relative],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, str] = json.loads(proc.stdout)
    return result


def mknod_or_skip(path: Path, mode: int, device: int) -> None:
    try:
        os.mknod(path, mode, device)
    except OSError as error:
        if error.errno in (errno.EPERM, errno.EACCES, errno.EINVAL):
            pytest.skip("cannot create device nodes here")
        raise
