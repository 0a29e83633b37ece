"""Reading local documents without ever leaving their root (see ``docs/documents.md``).

Why one module of this size: every read of a local document goes through the one walk that
keeps it inside its root; in one file, that guarantee is read in one place.

The public pieces, used by the graph core:

* :func:`check_document_path` -- the static rule for a definition's ``path`` (load time);
* :func:`media_type_for` -- the media type derived from a path's suffix;
* :class:`DocumentRoot` -- a document root fixed to its real absolute path at ``open``;
* :func:`read_document_file` -- read one document as bounded, stable UTF-8 text.

Containment, in one paragraph: the root is opened by its fixed real path; from there the relative
path is walked one component at a time with ``*at`` system calls on directory descriptors.  Every
entry is first examined with ``fstatat(AT_SYMLINK_NOFOLLOW)`` -- an ``lstat`` of a name *inside*
an already-verified directory -- so nothing is opened before its type is known.  Directories are
opened with ``O_NOFOLLOW | O_DIRECTORY`` and their identity compared with that ``lstat``;
symbolic links are read with ``readlinkat`` and their relative target is resolved by the same
walk, ``..`` popping the walk's own stack of directory descriptors and never stepping above the
root; absolute targets, a ``..`` above the root and more than 40 links are refused.  Only a
regular file is ever opened for reading (``O_NOFOLLOW | O_NONBLOCK | O_NOCTTY``); its size comes
from ``fstat`` before reading, at most ``size + 1 <= max_bytes + 1`` bytes are read, and after the
read the descriptor's identity (device, inode, size, mtime, ctime) and every link of the chain
from the root to the file are checked again.  Any failure is a ``GraphError`` of phase
``document`` whose message comes from the registry: no path, root or OS text ever leaves here.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
from typing import Final, NoReturn

from .._generated.taxonomy import ErrorCode, Phase
from .errors import GraphError

__all__ = [
    "MAX_SYMLINKS",
    "DocumentBody",
    "DocumentRoot",
    "check_document_path",
    "media_type_for",
    "read_document_file",
]

#: Symbolic links followed while resolving one document (Linux's ``MAXSYMLINKS``); one more is a
#: loop as far as we are concerned: ``CG_DOCUMENT_ACCESS_DENIED``.
MAX_SYMLINKS: Final = 40

_NOT_FOUND: Final = ErrorCode.CG_DOCUMENT_NOT_FOUND
_DENIED: Final = ErrorCode.CG_DOCUMENT_ACCESS_DENIED
_TOO_LARGE: Final = ErrorCode.CG_DOCUMENT_TOO_LARGE
_UNREADABLE: Final = ErrorCode.CG_DOCUMENT_UNREADABLE

_O_CLOEXEC: Final[int] = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW: Final[int] = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY: Final[int] = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK: Final[int] = getattr(os, "O_NONBLOCK", 0)
_O_NOCTTY: Final[int] = getattr(os, "O_NOCTTY", 0)
# O_PATH (Linux) opens a directory for use as a dir_fd with search permission only, exactly like
# the kernel's own path walk; elsewhere a directory is opened read-only.
_O_SEARCH: Final[int] = getattr(os, "O_PATH", os.O_RDONLY)

_DIR_FLAGS: Final = _O_SEARCH | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_NOCTTY | _O_CLOEXEC

# Reading safely needs openat/fstatat/readlinkat and O_NOFOLLOW / O_DIRECTORY. Where they are
# missing every read fails closed with CG_DOCUMENT_UNREADABLE (nextAction check_config).
_SUPPORTED: Final = bool(
    _O_NOFOLLOW
    and _O_DIRECTORY
    and os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.readlink in os.supports_dir_fd
    and os.stat in os.supports_follow_symlinks
)

# --- the static rule ---------------------------------------------------------------------------

# Backslash, colon, C0 and C1 control characters (NUL included), DEL, and lone surrogates.
_FORBIDDEN_CHAR: Final = re.compile("[\\\\:\x00-\x1f\x7f-\x9f\ud800-\udfff]")

_REASON_EMPTY: Final = "must be a non-empty relative POSIX path"
_REASON_ABSOLUTE: Final = "must be a relative POSIX path, not an absolute one"
_REASON_CHARACTER: Final = (
    "must be a relative POSIX path without backslash, colon, NUL or control characters"
)
_REASON_DOTDOT: Final = "must be a relative POSIX path without '..' segments"
_REASON_SEGMENT: Final = "must be a relative POSIX path without empty or '.' segments"


def check_document_path(path: str) -> str | None:
    """The static rule for a document ``path``: ``None`` if acceptable, else a reason phrase.

    Acceptable is a non-empty relative POSIX path made of non-empty segments, none of them ``.``
    or ``..``, with no backslash, colon, NUL, control character (Unicode category Cc) or lone
    surrogate.  Everything else is an ordinary filename character -- including look-alikes such
    as U+2024 ONE DOT LEADER or U+FF0F FULLWIDTH SOLIDUS: paths are never Unicode-normalized,
    so those can only name entries inside the root.  The phrase never echoes the value; callers
    prefix a location, e.g. ``f"{pointer} {reason}"``.
    """
    if not isinstance(path, str) or not path:
        return _REASON_EMPTY
    if path[0] == "/":
        return _REASON_ABSOLUTE
    if _FORBIDDEN_CHAR.search(path) is not None:
        return _REASON_CHARACTER
    framed = f"/{path}/"
    if "/../" in framed:
        return _REASON_DOTDOT
    if "//" in framed or "/./" in framed:
        return _REASON_SEGMENT
    return None


_MARKDOWN_SUFFIXES: Final = frozenset({".md", ".mdx"})


def media_type_for(path: str) -> str:
    """``text/markdown`` for a ``.md``/``.mdx`` suffix (ASCII, any case), else ``text/plain``.

    The suffix is that of the last segment, from its last dot; a leading dot does not start a
    suffix (``.md`` is a hidden file without one), as in ``pathlib``.
    """
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    if dot <= 0:
        return "text/plain"
    suffix = name[dot:]
    if suffix.isascii() and suffix.lower() in _MARKDOWN_SUFFIXES:
        return "text/markdown"
    return "text/plain"


# --- roots -------------------------------------------------------------------------------------


class DocumentRoot:
    """A document root fixed to its real absolute path (immutable). It never shows the path."""

    __slots__ = ("_real",)
    _real: bytes

    def __init__(self, real: bytes) -> None:
        """Internal: use :meth:`fix`."""
        object.__setattr__(self, "_real", real)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("DocumentRoot is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("DocumentRoot is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DocumentRoot):
            return NotImplemented
        return self._real == other._real

    def __hash__(self) -> int:
        return hash((DocumentRoot, self._real))

    def __reduce__(self) -> tuple[type[DocumentRoot], tuple[bytes]]:
        return (DocumentRoot, (self._real,))

    @classmethod
    def fix(
        cls,
        path: str | os.PathLike[str],
        *,
        base: str | os.PathLike[str] | None = None,
        pointer: str | None = None,
    ) -> DocumentRoot:
        """Resolve ``path`` (against ``base`` if relative, else the cwd) to its real absolute path.

        Called once, at ``open``/``reload``: later changes of the working directory or of
        symbolic links above the root do not move it.  A missing root, or one that is not a
        directory, is ``CG_CONFIG_INVALID`` (phase ``config``); ``pointer`` (a JSON pointer such
        as ``/providers/1/documentRoot``) names the place in the message.
        """
        real: str | None = None
        try:
            raw = os.fspath(path)
            if isinstance(raw, str) and raw and "\x00" not in raw:
                if base is not None:
                    raw = os.path.join(os.fspath(base), raw)
                real = os.path.realpath(raw, strict=True)
                if not stat.S_ISDIR(os.stat(real).st_mode):
                    real = None
        except (OSError, ValueError, TypeError):
            real = None
        if real is None or not os.path.isabs(real):
            if pointer is None:
                raise GraphError.of(ErrorCode.CG_CONFIG_INVALID, Phase.CONFIG) from None
            raise GraphError(
                ErrorCode.CG_CONFIG_INVALID,
                Phase.CONFIG,
                f"{pointer} must be an existing directory",
            ) from None
        return cls(os.fsencode(real))

    def __repr__(self) -> str:
        return "DocumentRoot(<fixed>)"


# --- reading -----------------------------------------------------------------------------------


class DocumentBody:
    """A document's content: its size in bytes, the hex SHA-256 of those bytes, and its text
    (a plain class: this module is imported by every command line, see ``config``)."""

    __slots__ = ("bytes", "sha256", "text")

    def __init__(self, bytes: int, sha256: str, text: str) -> None:
        self.bytes = bytes
        self.sha256 = sha256
        self.text = text


class _Failure(Exception):
    """Internal: carries a document code out of the walk; never leaves this module."""

    def __init__(self, code: ErrorCode) -> None:
        super().__init__()
        self.code = code


def _fail(code: ErrorCode) -> NoReturn:
    raise _Failure(code)


def _code_for(error: OSError) -> ErrorCode:
    """The document code for an OS error on an entry inside the root."""
    if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
        return _NOT_FOUND  # missing; a name longer than NAME_MAX cannot exist either
    if error.errno == errno.ELOOP:
        return _DENIED  # the entry became a symbolic link under O_NOFOLLOW
    return _UNREADABLE  # permission, I/O, descriptor limits, anything else


def _identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _content_identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _is_symlink(real: bytes) -> bool:
    """Whether the fixed root path itself is now a symbolic link (an lstat of the root only)."""
    try:
        return stat.S_ISLNK(os.stat(real, follow_symlinks=False).st_mode)
    except OSError:
        return False


class _Walk:
    """The descriptors of one read: the chain of directories from the root, and the file."""

    __slots__ = ("chain", "file_fd", "file_name", "file_stat")

    def __init__(self) -> None:
        # (name in its parent, descriptor, (device, inode)); chain[0] is the root (name b"").
        self.chain: list[tuple[bytes, int, tuple[int, int]]] = []
        self.file_fd = -1
        self.file_name = b""
        self.file_stat: os.stat_result | None = None

    def close(self) -> None:
        fds = [fd for _, fd, _ in self.chain]
        if self.file_fd >= 0:
            fds.append(self.file_fd)
        self.chain.clear()
        self.file_fd = -1
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def open_root(self, real: bytes) -> None:
        try:
            fd = os.open(real, _DIR_FLAGS)
        except OSError as error:
            code = _code_for(error)
        else:
            # O_DIRECTORY made sure it is a directory; its identity is never compared (see docs).
            self.chain.append((b"", fd, (-1, -1)))
            return
        if code is _NOT_FOUND and _is_symlink(real):
            code = _DENIED  # the root itself was replaced by a symbolic link: never followed
        _fail(code)

    def resolve(self, components: list[bytes]) -> None:
        """Walk ``components`` from the root to a regular file, opening it for reading."""
        pending = components[::-1]  # a stack: the next component is pending[-1]
        links = 0
        while pending:
            name = pending.pop()
            if name in (b"", b"."):
                continue  # names the directory on top of the stack ([CG-DOC-16])
            if name == b"..":
                if len(self.chain) == 1:
                    _fail(_DENIED)  # would step above the root
                os.close(self.chain.pop()[1])
                continue
            parent = self.chain[-1][1]
            try:
                entry = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except OSError as error:
                _fail(_code_for(error))
            mode = entry.st_mode
            if stat.S_ISLNK(mode):
                links += 1
                if links > MAX_SYMLINKS:
                    _fail(_DENIED)  # a loop, or a chain as good as one
                try:
                    target = os.readlink(name, dir_fd=parent)
                except OSError as error:
                    _fail(_code_for(error))
                if not target or target.startswith(b"/"):
                    _fail(_DENIED)  # absolute targets are never followed
                pending.extend(reversed(target.split(b"/")))
                continue
            if stat.S_ISDIR(mode):
                self._enter(name, parent, entry)
                continue
            if pending:
                _fail(_NOT_FOUND)  # a non-directory used as a directory (ENOTDIR)
            if not stat.S_ISREG(mode):
                _fail(_DENIED)  # fifo, socket, character or block device: never opened
            self._open_file(name, parent, entry)
            return
        _fail(_DENIED)  # the path names a directory

    def _enter(self, name: bytes, parent: int, entry: os.stat_result) -> None:
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as error:
            _fail(_code_for(error))
        self.chain.append((name, fd, _identity(entry)))
        try:
            opened = os.fstat(fd)
        except OSError as error:
            _fail(_code_for(error))
        if _identity(opened) != _identity(entry):
            _fail(_UNREADABLE)  # swapped between the lstat and the open

    def _open_file(self, name: bytes, parent: int, entry: os.stat_result) -> None:
        try:
            self.file_fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
            opened = os.fstat(self.file_fd)
        except OSError as error:
            _fail(_code_for(error))
        if not stat.S_ISREG(opened.st_mode):
            _fail(_DENIED)
        if _identity(opened) != _identity(entry):
            _fail(_UNREADABLE)  # swapped between the lstat and the open
        self.file_name = name
        self.file_stat = opened

    def read(self, max_bytes: int) -> bytearray:
        """Read the whole file, at most ``size + 1 <= max_bytes + 1`` bytes, and check it held."""
        before = self.file_stat
        assert before is not None
        size = before.st_size
        if size > max_bytes:
            _fail(_TOO_LARGE)  # decided by fstat, before reading anything
        buffer = bytearray(size + 1)
        filled = 0
        try:
            with memoryview(buffer) as view:
                while filled <= size:
                    count = os.readv(self.file_fd, [view[filled:]])
                    if count == 0:
                        break
                    filled += count
            after = os.fstat(self.file_fd)
        except OSError as error:
            _fail(_code_for(error))
        if filled != size or _content_identity(after) != _content_identity(before):
            _fail(_UNREADABLE)  # grew, shrank or was rewritten while being read
        del buffer[size:]
        self._check_chain()
        return buffer

    def _check_chain(self) -> None:
        """Every directory and the file are still linked where the walk found them."""
        links = [
            (self.chain[i - 1][1], self.chain[i][0], self.chain[i][2])
            for i in range(1, len(self.chain))
        ]
        assert self.file_stat is not None
        links.append((self.chain[-1][1], self.file_name, _identity(self.file_stat)))
        for parent, name, identity in links:
            try:
                now = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except OSError:
                _fail(_UNREADABLE)
            if _identity(now) != identity:
                _fail(_UNREADABLE)  # renamed over or moved away during the read


def read_document_file(root: DocumentRoot, relative_path: str, *, max_bytes: int) -> DocumentBody:
    """Read ``relative_path`` under ``root`` as UTF-8 text of at most ``max_bytes`` bytes.

    Raises ``GraphError`` (phase ``document``): ``CG_DOCUMENT_NOT_FOUND`` (missing file),
    ``CG_DOCUMENT_ACCESS_DENIED`` (a path breaking the static rule, a symbolic link that is
    absolute, leaves the root or loops, a fifo, socket, device or directory),
    ``CG_DOCUMENT_TOO_LARGE`` (over ``max_bytes``, by ``fstat`` before reading) or
    ``CG_DOCUMENT_UNREADABLE`` (invalid UTF-8, changed during the read, permission or I/O).
    A wrong argument type or a non-positive ``max_bytes`` is a programming error (``TypeError``,
    ``ValueError``).
    """
    if not isinstance(root, DocumentRoot):
        raise TypeError("root must be a DocumentRoot")
    if not isinstance(relative_path, str):
        raise TypeError("relative_path must be a str")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise ValueError("max_bytes must be a positive int")
    code: ErrorCode
    try:
        return _read(root, relative_path, max_bytes)
    except _Failure as failure:
        code = failure.code
    # Raised outside the handler, so the error has neither a cause nor a context to leak.
    raise GraphError.of(code, Phase.DOCUMENT)


def _read(root: DocumentRoot, relative_path: str, max_bytes: int) -> DocumentBody:
    if check_document_path(relative_path) is not None:
        _fail(_DENIED)
    if not _SUPPORTED:
        _fail(_UNREADABLE)
    components = relative_path.encode("utf-8").split(b"/")
    walk = _Walk()
    try:
        walk.open_root(root._real)
        walk.resolve(components)
        content = walk.read(max_bytes)
    finally:
        walk.close()
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        _fail(_UNREADABLE)
    return DocumentBody(bytes=len(content), sha256=hashlib.sha256(content).hexdigest(), text=text)
