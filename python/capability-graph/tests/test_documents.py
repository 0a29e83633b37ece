"""Document reading core (CG-DOC-*): the static path rule, roots, and contained reading.

The traversal battery has one named test per attack (``test_attack_*``). Every error is checked
for its exact contract object and for leaks (no tmp path, root or secret in any rendering), and
every read in the battery runs under :class:`FsWatch` (audit hook + fd spies).
"""

from __future__ import annotations

import copy
import hashlib
import os
import pickle
import socket
import stat
import unicodedata
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from capability_graph import GraphError
from capability_graph._core.documents import (
    MAX_SYMLINKS,
    DocumentBody,
    DocumentRoot,
    check_document_path,
    media_type_for,
    read_document_file,
)
from capability_graph_testing.documents import (
    SECRET,
    STRACE,
    FifoTripwire,
    FsWatch,
    Tree,
    assert_no_leak,
    make_deep_file,
    make_tree,
    mknod_or_skip,
    open_fds,
    read_without_dac_override,
    run_guarded,
    strace_reads,
    trace_violations,
    unwatched,
)

NOT_FOUND = {
    "code": "CG_DOCUMENT_NOT_FOUND",
    "phase": "document",
    "message": "Requested document does not exist",
    "nextAction": "refresh",
}
DENIED = {
    "code": "CG_DOCUMENT_ACCESS_DENIED",
    "phase": "document",
    "message": "Document path is not allowed",
    "nextAction": "check_config",
}
TOO_LARGE = {
    "code": "CG_DOCUMENT_TOO_LARGE",
    "phase": "document",
    "message": "Document exceeds maxDocumentBytes",
    "nextAction": "narrow_scope",
}
UNREADABLE = {
    "code": "CG_DOCUMENT_UNREADABLE",
    "phase": "document",
    "message": "Document cannot be read as stable UTF-8 text",
    "nextAction": "check_config",
}
CONFIG_INVALID = {
    "code": "CG_CONFIG_INVALID",
    "phase": "config",
    "message": "Host configuration is invalid",
    "nextAction": "check_config",
}
DOCUMENT_CODES = {e["code"] for e in (NOT_FOUND, DENIED, TOO_LARGE, UNREADABLE)}

MAX = 1 << 20


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return make_tree(tmp_path)


def read(tree: Tree, relative: str, max_bytes: int = MAX) -> DocumentBody:
    with FsWatch(tree.root) as watch:
        body = read_document_file(tree.doc_root, relative, max_bytes=max_bytes)
    assert watch.violations == []
    assert SECRET not in body.text
    return body


def read_error(tree: Tree, relative: str, max_bytes: int = MAX) -> dict[str, str]:
    """The error's contract object, after checking containment and that nothing leaks."""
    with FsWatch(tree.root) as watch, pytest.raises(GraphError) as info:
        read_document_file(tree.doc_root, relative, max_bytes=max_bytes)
    assert watch.violations == []
    assert_no_leak(info.value, tree.leak_markers())
    return info.value.to_json()


def untouched(tree: Tree, relative: str) -> dict[str, str]:
    """Like :func:`read_error`, and nothing at all may have been opened."""
    with FsWatch(tree.root) as watch, pytest.raises(GraphError) as info:
        read_document_file(tree.doc_root, relative, max_bytes=MAX)
    assert watch.opened == []
    assert watch.violations == []
    assert_no_leak(info.value, tree.leak_markers())
    return info.value.to_json()


# --- the static rule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "guide.md",
        "knowledge/route-validation.md",
        "a/b/c/d.txt",
        ".hidden",
        "...",
        "a..b/c..",
        "name with spaces.md",
        "文档/指南.md",
        "\u2024\u2024/secret.md",
        "\uff0e\uff0e\uff0fsecret.md",
        "a\u2215b",
        "\u202eevil",
    ],
)
def test_check_document_path_accepts_relative_posix_paths_with_any_ordinary_character(
    path: str,
) -> None:
    assert check_document_path(path) is None


ABSOLUTE = "must be a relative POSIX path, not an absolute one"
CHARACTER = "must be a relative POSIX path without backslash, colon, NUL or control characters"
DOTDOT = "must be a relative POSIX path without '..' segments"
SEGMENT = "must be a relative POSIX path without empty or '.' segments"
EMPTY = "must be a non-empty relative POSIX path"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("", EMPTY),
        ("/etc/passwd", ABSOLUTE),
        ("//server/share", ABSOLUTE),
        ("..", DOTDOT),
        ("../guide.md", DOTDOT),
        ("a/../../b", DOTDOT),
        ("a/..", DOTDOT),
        ("a\\b.md", CHARACTER),
        ("..\\secret", CHARACTER),
        ("C:guide.md", CHARACTER),
        ("a\x00b", CHARACTER),
        ("a\nb", CHARACTER),
        ("a\tb", CHARACTER),
        ("a\x7fb", CHARACTER),
        ("a\x85b", CHARACTER),
        ("a\ud800b", CHARACTER),
        ("a//b", SEGMENT),
        ("a/", SEGMENT),
        ("./a", SEGMENT),
        ("a/./b", SEGMENT),
        (".", SEGMENT),
    ],
    ids=repr,
)
def test_check_document_path_rejects_with_a_fixed_reason_that_never_echoes_the_value(
    path: str, reason: str
) -> None:
    assert check_document_path(path) == reason


@pytest.mark.parametrize("value", [None, b"guide.md", 1, ["guide.md"]])
def test_check_document_path_rejects_a_non_string(value: Any) -> None:
    assert check_document_path(value) == EMPTY


# --- media type ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "media_type"),
    [
        ("guide.md", "text/markdown"),
        ("a/b/Guide.MD", "text/markdown"),
        ("x.mdx", "text/markdown"),
        ("x.MdX", "text/markdown"),
        ("notes.txt", "text/plain"),
        ("README", "text/plain"),
        ("guide.md.txt", "text/plain"),
        ("guide.markdown", "text/plain"),
        (".md", "text/plain"),
        ("dir.md/file", "text/plain"),
        ("guide.md.", "text/plain"),
        ("guide.\uff4d\uff44", "text/plain"),
    ],
)
def test_media_type_for_derives_from_the_last_suffix_case_insensitively(
    path: str, media_type: str
) -> None:
    assert media_type_for(path) == media_type


# --- roots -----------------------------------------------------------------------------------


def test_fix_resolves_a_relative_root_once_so_later_chdir_does_not_move_it(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree.base)
    root = DocumentRoot.fix(tree.root.name)
    monkeypatch.chdir(tree.outside)
    assert read_document_file(root, "guide.md", max_bytes=MAX).text == "# Guide\n"


def test_fix_resolves_a_relative_root_against_base(tree: Tree) -> None:
    root = DocumentRoot.fix(tree.root.name, base=tree.base)
    assert read_document_file(root, "sub/deep.md", max_bytes=MAX).text == "deep\n"


def test_fix_follows_symlinks_once_so_retargeting_them_later_does_not_move_the_root(
    tree: Tree,
) -> None:
    alias = tree.base / "alias"
    alias.symlink_to(tree.root)
    root = DocumentRoot.fix(alias)
    alias.unlink()
    alias.symlink_to(tree.outside)
    (tree.outside / "guide.md").write_text(SECRET)
    assert read_document_file(root, "guide.md", max_bytes=MAX).text == "# Guide\n"


@pytest.mark.parametrize("kind", ["missing", "file", "empty", "nul", "dangling-link"])
def test_fix_rejects_a_root_that_is_not_an_existing_directory_as_config_invalid(
    tree: Tree, kind: str
) -> None:
    (tree.base / "dangling").symlink_to(tree.base / "nowhere")
    path = {
        "missing": str(tree.base / "nowhere"),
        "file": str(tree.root / "guide.md"),
        "empty": "",
        "nul": str(tree.root) + "\x00",
        "dangling-link": str(tree.base / "dangling"),
    }[kind]
    with pytest.raises(GraphError) as info:
        DocumentRoot.fix(path)
    assert info.value.to_json() == CONFIG_INVALID
    assert_no_leak(info.value, tree.leak_markers())


def test_fix_names_the_pointer_but_not_the_value_in_its_message(tree: Tree) -> None:
    with pytest.raises(GraphError) as info:
        DocumentRoot.fix(tree.base / "nowhere", pointer="/providers/1/documentRoot")
    assert info.value.to_json() == {
        "code": "CG_CONFIG_INVALID",
        "phase": "config",
        "message": "/providers/1/documentRoot must be an existing directory",
        "nextAction": "check_config",
    }
    assert_no_leak(info.value, tree.leak_markers())


def test_document_root_repr_and_str_never_show_the_real_path(tree: Tree) -> None:
    for rendering in (repr(tree.doc_root), str(tree.doc_root)):
        assert rendering == "DocumentRoot(<fixed>)"


def test_document_root_is_immutable_and_compares_by_its_fixed_path(tree: Tree) -> None:
    again = DocumentRoot.fix(tree.base / ".." / tree.base.name / tree.root.name)
    assert again == tree.doc_root
    assert hash(again) == hash(tree.doc_root)
    assert copy.deepcopy(tree.doc_root) == tree.doc_root
    assert pickle.loads(pickle.dumps(tree.doc_root)) == tree.doc_root
    with pytest.raises(AttributeError):
        tree.doc_root._real = b"/"


def test_a_root_removed_after_fix_is_not_found(tree: Tree) -> None:
    tree.root.rename(tree.base / "gone")
    assert read_error(tree, "guide.md") == NOT_FOUND


def test_a_root_replaced_by_a_symlink_after_fix_is_denied_and_not_followed(tree: Tree) -> None:
    tree.root.rename(tree.base / "moved")
    tree.root.symlink_to(tree.outside)
    (tree.outside / "guide.md").write_text(SECRET)
    assert read_error(tree, "guide.md") == DENIED


# --- reading ---------------------------------------------------------------------------------


def test_reads_utf8_text_with_its_byte_size_and_sha256(tree: Tree) -> None:
    data = "# Überblick\n\n能力图 ✓\n".encode()
    tree.write("knowledge/route-validation.md", data)
    body = read(tree, "knowledge/route-validation.md")
    assert (body.bytes, body.sha256, body.text) == (
        len(data),
        hashlib.sha256(data).hexdigest(),
        data.decode(),
    )


def test_reads_an_empty_file_as_empty_text(tree: Tree) -> None:
    tree.write("empty.md", b"")
    body = read(tree, "empty.md")
    assert (body.bytes, body.sha256, body.text) == (0, hashlib.sha256(b"").hexdigest(), "")


def test_keeps_a_bom_and_crlf_verbatim(tree: Tree) -> None:
    data = b"\xef\xbb\xbfline\r\nnext\r\n"
    tree.write("bom.txt", data)
    body = read(tree, "bom.txt")
    assert (body.bytes, body.text) == (len(data), "\ufeffline\r\nnext\r\n")


def test_a_file_of_exactly_max_bytes_is_read(tree: Tree) -> None:
    tree.write("exact.md", b"x" * 1000)
    assert read(tree, "exact.md", max_bytes=1000).bytes == 1000


def test_a_file_of_max_bytes_plus_one_is_too_large(tree: Tree) -> None:
    tree.write("over.md", b"x" * 1001)
    assert read_error(tree, "over.md", max_bytes=1000) == TOO_LARGE


def test_too_large_is_decided_by_fstat_before_reading_a_single_byte(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (tree.root / "huge.md").open("wb") as handle:
        handle.truncate(1 << 34)  # 16 GiB, sparse: reading it would take long
    reads: list[int] = []
    real_readv = os.readv

    def counting_readv(fd: int, buffers: Any) -> int:
        reads.append(fd)
        return real_readv(fd, buffers)

    monkeypatch.setattr(os, "readv", counting_readv)
    assert read_error(tree, "huge.md") == TOO_LARGE
    assert reads == []


def test_a_missing_file_is_not_found(tree: Tree) -> None:
    assert read_error(tree, "missing.md") == NOT_FOUND


def test_a_missing_directory_is_not_found(tree: Tree) -> None:
    assert read_error(tree, "nowhere/guide.md") == NOT_FOUND


def test_a_file_used_as_a_directory_is_not_found(tree: Tree) -> None:
    assert read_error(tree, "guide.md/x") == NOT_FOUND


@pytest.mark.parametrize(
    "data",
    [b"\xff", b"ok \x80", b"cut \xe6\x96", b"\xed\xa0\x80 surrogate", b"\xc0\xaf overlong"],
    ids=["ff", "lone-continuation", "truncated", "encoded-surrogate", "overlong"],
)
def test_invalid_utf8_is_unreadable(tree: Tree, data: bytes) -> None:
    tree.write("bad.md", data)
    assert read_error(tree, "bad.md") == UNREADABLE


@pytest.mark.parametrize("max_bytes", [0, -1, True, 1.5, "10"])
def test_max_bytes_must_be_a_positive_int(tree: Tree, max_bytes: Any) -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        read_document_file(tree.doc_root, "guide.md", max_bytes=max_bytes)


def test_wrong_argument_types_are_programming_errors(tree: Tree) -> None:
    with pytest.raises(TypeError, match="relative_path"):
        read_document_file(tree.doc_root, b"guide.md", max_bytes=MAX)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="DocumentRoot"):
        read_document_file(str(tree.root), "guide.md", max_bytes=MAX)  # type: ignore[arg-type]


def test_a_hard_link_inside_the_root_is_read_as_the_regular_file_it_is(tree: Tree) -> None:
    os.link(tree.root / "guide.md", tree.root / "hard.md")
    assert os.stat(tree.root / "hard.md").st_nlink == 2
    assert read(tree, "hard.md").text == "# Guide\n"


# --- symlinks inside the root (allowed while the walk never leaves the root) ------------------


def test_a_relative_symlink_to_a_file_inside_the_root_is_followed(tree: Tree) -> None:
    tree.link("sub/link.md", "../guide.md")
    assert read(tree, "sub/link.md").text == "# Guide\n"


def test_a_relative_symlink_to_a_directory_inside_the_root_is_followed(tree: Tree) -> None:
    tree.link("alias", "sub")
    tree.link("sub/up", "..")
    assert read(tree, "alias/deep.md").text == "deep\n"
    assert read(tree, "sub/up/sub/up/guide.md").text == "# Guide\n"


def test_a_chain_of_max_symlinks_is_followed_and_one_more_is_denied(tree: Tree) -> None:
    assert MAX_SYMLINKS == 40
    previous = "guide.md"
    for index in range(MAX_SYMLINKS + 1):
        tree.link(f"chain{index}", previous)
        previous = f"chain{index}"
    assert read(tree, f"chain{MAX_SYMLINKS - 1}").text == "# Guide\n"
    assert read_error(tree, f"chain{MAX_SYMLINKS}") == DENIED


def test_an_absolute_symlink_is_denied_even_when_it_points_inside_the_root(tree: Tree) -> None:
    tree.link("abs.md", tree.root / "guide.md")
    assert read_error(tree, "abs.md") == DENIED


# --- the traversal battery --------------------------------------------------------------------


@pytest.mark.parametrize("path", ["..", "../secret.md", "sub/../../secret.md", "sub/.."])
def test_attack_dotdot_is_denied_without_touching_the_filesystem(tree: Tree, path: str) -> None:
    assert untouched(tree, path) == DENIED


def test_attack_absolute_path_is_denied_without_touching_the_filesystem(tree: Tree) -> None:
    assert untouched(tree, str(tree.outside / "secret.md")) == DENIED
    assert untouched(tree, "/etc/passwd") == DENIED


def test_attack_nul_byte_is_denied_without_touching_the_filesystem(tree: Tree) -> None:
    assert untouched(tree, "guide.md\x00../../secret.md") == DENIED
    assert untouched(tree, "\x00") == DENIED


@pytest.mark.parametrize(
    "path",
    ["..\\secret.md", "sub\\..\\..\\secret.md", "C:\\secret.md", "c:secret.md", "a\x1b[2Jb"],
    ids=["backslash-dotdot", "backslash-deep", "drive", "colon", "escape-sequence"],
)
def test_attack_backslash_colon_and_control_characters_are_denied(tree: Tree, path: str) -> None:
    assert untouched(tree, path) == DENIED


LOOK_ALIKES = {
    "one-dot-leader-pair": "\u2024\u2024",
    "two-dot-leader": "\u2025",
    "fullwidth-full-stops": "\uff0e\uff0e",
    "dotdot-fullwidth-solidus": "..\uff0f..",
    "division-slash": "..\u2215..",
    "fraction-slash": "..\u2044..",
    "small-full-stops": "\ufe52\ufe52",
}


@pytest.mark.parametrize("look_alike", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_attack_unicode_look_alikes_are_ordinary_names_inside_the_root(
    tree: Tree, look_alike: str
) -> None:
    path = f"{look_alike}/secret.md"
    assert check_document_path(path) is None
    # Not found: the name is taken literally, never normalized into "..".
    assert read_error(tree, path) == NOT_FOUND
    assert read_error(tree, f"sub/{look_alike}/{look_alike}/secret.md") == NOT_FOUND
    # And when such an entry exists, it is the one inside the root that is read.
    tree.write(path, "inside")
    assert read(tree, path).text == "inside"


def test_look_alikes_would_escape_if_they_were_nfkc_normalized() -> None:
    # The trap the reader must not fall into (paths are never Unicode-normalized).
    assert unicodedata.normalize("NFKC", "\u2024\u2024") == ".."
    assert unicodedata.normalize("NFKC", "\uff0e\uff0e\uff0f") == "../"


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_attack_symlink_to_an_outside_file_is_denied(tree: Tree, kind: str) -> None:
    target = tree.outside / "secret.md"
    tree.link("leak.md", target if kind == "absolute" else f"../{tree.outside.name}/secret.md")
    assert read_error(tree, "leak.md") == DENIED


@pytest.mark.parametrize("kind", ["absolute", "relative", "relative-from-subdir"])
def test_attack_symlink_as_an_intermediate_directory_to_outside_is_denied(
    tree: Tree, kind: str
) -> None:
    if kind == "absolute":
        tree.link("out", tree.outside)
        path = "out/secret.md"
    elif kind == "relative":
        tree.link("out", f"../{tree.outside.name}")
        path = "out/secret.md"
    else:
        tree.link("sub/out", f"../../{tree.outside.name}/dir")
        path = "sub/out/inner.md"
    assert read_error(tree, path) == DENIED


def test_attack_symlink_that_leaves_and_reenters_the_root_is_denied(tree: Tree) -> None:
    tree.link("sub/round-trip.md", f"../../{tree.root.name}/guide.md")
    assert read_error(tree, "sub/round-trip.md") == DENIED


def test_attack_symlink_to_the_parent_of_the_root_is_denied(tree: Tree) -> None:
    tree.link("up", "..")
    assert read_error(tree, "up/secret.md") == DENIED
    assert read_error(tree, "up") == DENIED


@pytest.mark.parametrize("kind", ["self", "pair", "through-directory", "directory-cycle"])
def test_attack_symlink_loop_is_denied(tree: Tree, kind: str) -> None:
    if kind == "self":
        tree.link("loop", "loop")
        path = "loop"
    elif kind == "pair":
        tree.link("a", "b")
        tree.link("b", "a")
        path = "a"
    elif kind == "through-directory":
        tree.link("d", "d/x")
        path = "d/guide.md"
    else:
        tree.link("sub/cycle", "../sub/cycle/..")
        path = "sub/cycle/guide.md"
    assert read_error(tree, path) == DENIED


def test_attack_fifo_is_denied_without_blocking_or_being_opened(tree: Tree) -> None:
    with FifoTripwire(tree.root / "pipe.md") as wire:
        error = run_guarded(lambda: read_error(tree, "pipe.md"), fifos=(wire.path,))
        assert error == DENIED
        assert not wire.tripped


def test_attack_symlink_to_a_fifo_inside_the_root_is_denied_without_opening_it(
    tree: Tree,
) -> None:
    with FifoTripwire(tree.root / "pipe") as wire:
        tree.link("sub/pipe.md", "../pipe")
        error = run_guarded(lambda: read_error(tree, "sub/pipe.md"), fifos=(wire.path,))
        assert error == DENIED
        assert not wire.tripped


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_attack_symlink_to_an_outside_fifo_never_opens_it(tree: Tree, kind: str) -> None:
    with FifoTripwire(tree.outside / "pipe.md") as wire:
        tree.link("pipe.md", wire.path if kind == "absolute" else f"../{tree.outside.name}/pipe.md")
        error = run_guarded(lambda: read_error(tree, "pipe.md"), fifos=(wire.path,))
        assert error == DENIED
        assert not wire.tripped


@pytest.mark.parametrize(
    ("kind", "device"),
    [(stat.S_IFCHR, os.makedev(1, 3)), (stat.S_IFBLK, os.makedev(7, 0))],
    ids=["character-device", "block-device"],
)
def test_attack_device_node_inside_the_root_is_denied(tree: Tree, kind: int, device: int) -> None:
    mknod_or_skip(tree.root / "dev.md", kind | 0o600, device)
    assert read_error(tree, "dev.md") == DENIED


@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_attack_symlink_to_dev_null_is_denied(tree: Tree, kind: str) -> None:
    tree.link("null.md", "/dev/null" if kind == "absolute" else "../" * 40 + "dev/null")
    assert read_error(tree, "null.md") == DENIED


def test_attack_socket_is_denied(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree.root)  # bind by a short relative name (sun_path is 108 bytes)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind("sock.md")
        assert stat.S_ISSOCK(os.stat(tree.root / "sock.md").st_mode)
        assert read_error(tree, "sock.md") == DENIED


@pytest.mark.parametrize("kind", ["directory", "symlink-to-directory", "symlink-to-root"])
def test_attack_directory_is_denied(tree: Tree, kind: str) -> None:
    tree.link("here", ".")
    tree.link("alias", "sub")
    path = {"directory": "sub", "symlink-to-directory": "alias", "symlink-to-root": "here"}[kind]
    assert read_error(tree, path) == DENIED


def test_attack_component_longer_than_name_max_is_not_found(tree: Tree) -> None:
    assert read_error(tree, "x" * 256) == NOT_FOUND
    assert read_error(tree, "sub/" + "é" * 200 + ".md") == NOT_FOUND  # 400 bytes


def test_attack_path_longer_than_path_max_is_not_found(tree: Tree) -> None:
    path = "/".join(["a" * 200] * 30) + "/guide.md"  # ~6 KB
    assert len(path.encode()) > os.pathconf(tree.root, "PC_PATH_MAX")
    assert read_error(tree, path) == NOT_FOUND
    assert read_error(tree, "sub/" * 2000 + "deep.md") == NOT_FOUND


def test_a_real_tree_deeper_than_path_max_is_read_component_by_component(tree: Tree) -> None:
    components = ["d" * 250] * 24 + ["deep.md"]  # ~6 KB: one open() of it would fail
    make_deep_file(tree.root, components, b"very deep\n")
    path = "/".join(components)
    assert len(path.encode()) > os.pathconf(tree.root, "PC_PATH_MAX")
    body = read_document_file(tree.doc_root, path, max_bytes=MAX)
    assert body.text == "very deep\n"


def _mutate_after_first_read(monkeypatch: pytest.MonkeyPatch, mutate: Callable[[], object]) -> None:
    """Run ``mutate`` (a real filesystem change) right after the reader's first ``readv``."""
    real_readv = os.readv
    done: list[bool] = []

    def readv_then_mutate(fd: int, buffers: Any) -> int:
        count = real_readv(fd, buffers)
        if not done:
            done.append(True)
            with unwatched():
                mutate()
        return count

    monkeypatch.setattr(os, "readv", readv_then_mutate)


def test_attack_file_replaced_by_rename_during_the_read_is_unreadable(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    replacement = tree.write("replacement.tmp", "# Guide\n")  # even the same content

    _mutate_after_first_read(monkeypatch, lambda: replacement.replace(tree.root / "guide.md"))
    assert read_error(tree, "guide.md") == UNREADABLE


def test_attack_file_grown_during_the_read_is_unreadable(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    def grow() -> None:
        with (tree.root / "guide.md").open("ab") as handle:
            handle.write(b"more\n")

    _mutate_after_first_read(monkeypatch, grow)
    assert read_error(tree, "guide.md") == UNREADABLE


def test_attack_file_truncated_during_the_read_is_unreadable(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    _mutate_after_first_read(monkeypatch, lambda: os.truncate(tree.root / "guide.md", 2))
    assert read_error(tree, "guide.md") == UNREADABLE


def test_attack_file_rewritten_in_place_during_the_read_is_unreadable(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tree.root / "guide.md"
    before = path.stat()

    def rewrite() -> None:
        with path.open("r+b") as handle:
            handle.write(b"# Fake!\n")  # same size
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))

    _mutate_after_first_read(monkeypatch, rewrite)
    assert read_error(tree, "guide.md") == UNREADABLE


def test_attack_directory_moved_out_of_the_root_during_the_read_is_unreadable(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    _mutate_after_first_read(
        monkeypatch, lambda: (tree.root / "sub").rename(tree.outside / "moved")
    )
    assert read_error(tree, "sub/deep.md") == UNREADABLE


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_permission_denied_is_unreadable(tree: Tree, kind: str) -> None:
    tree.write("open/doc.md", "readable")
    tree.write("open/private.md", SECRET)
    tree.write("closed/doc.md", SECRET)
    assert read_without_dac_override(tree.root, "open/doc.md") == {"text": "readable"}  # control
    (tree.root / "open" / "private.md").chmod(0o000)
    (tree.root / "closed").chmod(0o000)
    try:
        denied = "open/private.md" if kind == "file" else "closed/doc.md"
        assert read_without_dac_override(tree.root, denied) == UNREADABLE
    finally:
        (tree.root / "closed").chmod(0o755)


# --- proofs: nothing outside, nothing leaked, nothing left open -------------------------------


def _hostile_tree(tree: Tree) -> list[tuple[str, dict[str, str]]]:
    """A tree with one entry per attack, and each path's expected error."""
    tree.link("out-abs.md", tree.outside / "secret.md")
    tree.link("out-rel.md", f"../{tree.outside.name}/secret.md")
    tree.link("out-dir", f"../{tree.outside.name}")
    tree.link("up", "..")
    tree.link("loop-a", "loop-b")
    tree.link("loop-b", "loop-a")
    tree.link("null.md", "/dev/null")
    tree.link("reenter.md", f"../{tree.root.name}/guide.md")
    os.mkfifo(tree.root / "pipe.md")
    os.mkfifo(tree.outside / "pipe.md")
    tree.link("out-pipe.md", f"../{tree.outside.name}/pipe.md")
    tree.write("bad.md", b"\xff")
    tree.write("big.md", b"x" * 2000)
    return [
        ("out-abs.md", DENIED),
        ("out-rel.md", DENIED),
        ("out-dir/secret.md", DENIED),
        ("up/secret.md", DENIED),
        ("up/" + tree.outside.name + "/secret.md", DENIED),
        ("loop-a", DENIED),
        ("null.md", DENIED),
        ("reenter.md", DENIED),
        ("pipe.md", DENIED),
        ("out-pipe.md", DENIED),
        ("sub", DENIED),
        ("../secret.md", DENIED),
        ("\u2024\u2024/secret.md", NOT_FOUND),
        ("missing.md", NOT_FOUND),
        ("x" * 300, NOT_FOUND),
        ("bad.md", UNREADABLE),
        ("big.md", TOO_LARGE),
    ]


def test_errors_never_show_the_root_a_path_or_outside_content(tree: Tree) -> None:
    for path, expected in _hostile_tree(tree):
        with pytest.raises(GraphError) as info:
            run_guarded(partial(read_document_file, tree.doc_root, path, max_bytes=1000))
        assert info.value.to_json() == expected, path
        assert_no_leak(info.value, [*tree.leak_markers(), path])


def test_every_descriptor_is_closed_on_success_and_on_every_error(tree: Tree) -> None:
    cases = _hostile_tree(tree)
    before = open_fds()
    for _ in range(3):
        assert read_document_file(tree.doc_root, "sub/deep.md", max_bytes=MAX).text == "deep\n"
        for path, _expected in cases:
            with pytest.raises(GraphError):
                read_document_file(tree.doc_root, path, max_bytes=1000)
    assert open_fds() == before


@pytest.mark.skipif(STRACE is None, reason="strace is not installed")
def test_nothing_outside_the_root_is_opened_or_stated_per_strace(tree: Tree) -> None:
    cases = _hostile_tree(tree)
    tree.link("sub/in.md", "../guide.md")
    paths = [path for path, _ in cases] + ["guide.md", "sub/in.md"]
    results, syscalls = strace_reads(tree.root, paths, 1000, tree.base / "trace.txt")
    assert results == [expected["code"] for _, expected in cases] + ["# Guide\n"] * 2
    assert syscalls, "the trace recorded nothing"
    assert trace_violations(syscalls, tree.root) == []
    # Outside names appear only as the content of links read inside the root, never as a target.
    touching = [line for line in syscalls if "readlinkat(" not in line]
    assert not any(tree.outside.name in line or "/dev/" in line for line in touching)
    assert any("readlinkat(" in line and tree.outside.name in line for line in syscalls)


# --- the witnesses themselves would notice an escape ------------------------------------------


def test_witness_fs_watch_flags_opens_and_stats_outside_the_root(tree: Tree) -> None:
    outside_dir = os.open(tree.outside, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with FsWatch(tree.root) as watch:
            os.close(os.open(tree.outside / "secret.md", os.O_RDONLY | os.O_CLOEXEC))
            os.stat("secret.md", dir_fd=outside_dir, follow_symlinks=False)
            os.stat(tree.root / "guide.md")
    finally:
        os.close(outside_dir)
    assert len(watch.violations) == 6, watch.violations


def test_witness_fifo_tripwire_trips_on_a_non_blocking_open(tree: Tree) -> None:
    with FifoTripwire(tree.outside / "wire") as wire:
        assert not wire.tripped
        os.close(os.open(wire.path, os.O_RDONLY | os.O_NONBLOCK))
        assert wire.tripped


def test_witness_trace_check_flags_escapes(tree: Tree) -> None:
    root = os.path.realpath(tree.root)
    lines = [
        f'1 openat(AT_FDCWD, "{root}", O_RDONLY|O_NOFOLLOW|O_PATH|O_DIRECTORY) = 3',
        '1 openat(3, "sub", O_RDONLY|O_NOFOLLOW|O_PATH|O_DIRECTORY) = 4',
        '1 newfstatat(4, "", {st_mode=S_IFDIR}, AT_EMPTY_PATH) = 0',
        '1 newfstatat(4, "deep.md", {st_mode=S_IFREG}, AT_SYMLINK_NOFOLLOW) = 0',
        "1 close(4) = 0",
    ]
    assert trace_violations(lines, tree.root) == []
    bad = [
        '1 openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_NOFOLLOW) = 5',
        '1 newfstatat(4, "deep.md", {st_mode=S_IFREG}, 0) = 0',
        '1 openat(3, "..", O_RDONLY|O_NOFOLLOW|O_PATH|O_DIRECTORY) = 4',
        '1 openat(3, "a/b", O_RDONLY|O_NOFOLLOW) = 4',
        '1 openat(3, "guide.md", O_RDONLY) = 4',
        '1 stat("/etc/passwd", {st_mode=S_IFREG}) = 0',
    ]
    assert len(trace_violations(lines[:1] + bad, tree.root)) == len(bad)


# --- the property ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Tree, set[str]]]:
    tree = make_tree(tmp_path_factory.mktemp("hostile"))
    _hostile_tree(tree)
    tree.link("sub/in.md", "../guide.md")
    tree.link("alias", "sub")
    tree.write("\u2024\u2024/secret.md", "look-alike inside")
    tree.write("notes.txt", "notes")
    mknod_ok = True
    try:
        os.mknod(tree.root / "dev.md", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except OSError:
        mknod_ok = False
    inside = {"# Guide\n", "deep\n", "look-alike inside", "notes", "x" * 2000}
    yield tree, inside
    if mknod_ok:
        (tree.root / "dev.md").unlink()


SEGMENTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "guide.md",
        "sub",
        "deep.md",
        "in.md",
        "alias",
        "up",
        "out-dir",
        "out-abs.md",
        "out-rel.md",
        "out-pipe.md",
        "pipe.md",
        "loop-a",
        "null.md",
        "dev.md",
        "reenter.md",
        "secret.md",
        "big.md",
        "bad.md",
        "notes.txt",
        "\u2024\u2024",
        "\uff0e\uff0e",
        "\ud800",
        "a\x00b",
        "\\",
        "C:",
        "cg-outside-91b2",
        "cg-docroot-7f3a",
    ]
)
_HOSTILE_PATHS = st.builds(
    lambda lead, parts: lead + "/".join(parts),
    st.sampled_from(["", "", "", "/", "../"]),
    st.lists(st.one_of(SEGMENTS, SEGMENTS, SEGMENTS, st.text(max_size=6)), min_size=1, max_size=5),
)
# Only names that pass the static rule, so that most examples reach the walk.
_WALKABLE_PATHS = st.lists(
    st.sampled_from(
        [
            "guide.md",
            "sub",
            "deep.md",
            "in.md",
            "alias",
            "up",
            "out-dir",
            "out-rel.md",
            "pipe.md",
            "loop-a",
            "dev.md",
            "big.md",
            "bad.md",
            "notes.txt",
            "secret.md",
            "\u2024\u2024",
            "cg-docroot-7f3a",
            "cg-outside-91b2",
        ]
    ),
    min_size=1,
    max_size=4,
).map("/".join)
_READABLE = st.sampled_from(
    [
        "guide.md",
        "sub/deep.md",
        "sub/in.md",
        "alias/deep.md",
        "alias/in.md",
        "notes.txt",
        "big.md",
        "\u2024\u2024/secret.md",
    ]
)
PATHS = st.one_of(st.text(max_size=40), _HOSTILE_PATHS, _WALKABLE_PATHS, _READABLE)


@settings(
    max_examples=400,
    deadline=None,
    database=None,
)
@given(path=PATHS)
def test_property_any_path_reads_inside_the_root_or_fails_with_a_document_code(
    hostile: tuple[Tree, set[str]], path: str
) -> None:
    tree, inside = hostile
    body: DocumentBody | GraphError
    with FsWatch(tree.root) as watch:
        try:
            body = read_document_file(tree.doc_root, path, max_bytes=4096)
        except GraphError as error:
            body = error
    assert watch.violations == []
    event(body.code.value if isinstance(body, GraphError) else "read")
    if isinstance(body, GraphError):
        assert body.code.value in DOCUMENT_CODES
        assert body.to_json()["phase"] == "document"
        assert_no_leak(body, tree.leak_markers())
    else:
        assert body.text in inside
        assert body.sha256 == hashlib.sha256(body.text.encode()).hexdigest()
