"""tools/generate/blocking.py (the codegen step ``blocking``): the committed blocking twin is what
the async class generates, and a change to the async class's public methods reaches the twin (or
fails ``--check``)."""

from __future__ import annotations

from pathlib import Path

import codegen
import pytest
from generate import blocking as gen_blocking
from generate.base import Repo


def _render(source: str) -> str:
    return gen_blocking.render(source, gen_blocking.RUNNER.read_text(encoding="utf-8"))


def test_the_committed_twin_is_what_the_async_class_generates() -> None:
    assert codegen.run(Repo(), check=True, steps=["blocking"]) == 0


def test_check_fails_when_the_committed_twin_is_stale(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = tmp_path / "_graph.py"
    changed.write_text(
        gen_blocking.SOURCE.read_text(encoding="utf-8").replace(
            "    async def describe(self) -> DescribeResult:",
            "    async def describe(self, *, verbose: bool = False) -> DescribeResult:",
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(gen_blocking, "SOURCE", changed)
    assert codegen.run(Repo(), check=True, steps=["blocking"]) == 1
    assert "_surfaces/sdk/blocking_graph.py" in capsys.readouterr().err


def test_a_new_parameter_of_an_async_method_appears_in_the_twin_and_is_forwarded() -> None:
    source = gen_blocking.SOURCE.read_text(encoding="utf-8").replace(
        "    async def describe(self) -> DescribeResult:",
        "    async def describe(self, *, verbose: bool = False) -> DescribeResult:",
    )
    text = _render(source)
    assert "    def describe(\n        self,\n        *,\n        verbose: bool = False,\n" in text
    assert "self._run(lambda: self._graph.describe(verbose=verbose))" in text


def _with_count(import_lines: str) -> str:
    """The async module with ``import_lines`` before its snapshot import and a new coroutine
    method ``count`` returning ``Counted``."""
    anchor = "from .snapshot import "
    return (
        gen_blocking.SOURCE.read_text(encoding="utf-8")
        .replace(anchor, f"{import_lines}\n{anchor}", 1)
        .replace(
            "    async def close(self) -> None:",
            "    async def count(self) -> Counted:\n"
            '        """How many."""\n'
            "        raise NotImplementedError\n\n"
            "    async def close(self) -> None:",
        )
    )


def test_a_new_method_with_a_return_type_the_module_imports_reaches_the_twin() -> None:
    text = _render(_with_count("from .types import Counted"))
    assert "from capability_graph._core.types import Counted\n" in text
    assert "    def count(\n        self,\n    ) -> Counted:\n" in text


def test_a_name_imported_for_type_checking_only_is_imported_by_the_twin() -> None:
    text = _render(_with_count("if TYPE_CHECKING:\n    from .types import Counted"))
    assert "\nif TYPE_CHECKING:\n" in text
    assert (
        "\n    from capability_graph._core.types import Counted\n" in text
    )  # never imported at run time


def test_the_runners_own_methods_are_not_generated() -> None:
    text = _render(gen_blocking.SOURCE.read_text(encoding="utf-8"))
    assert "def close(" not in text
    assert "def open(" not in text
