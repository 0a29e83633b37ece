"""The API parity table (docs/api.md) lists every public name of the Python package, once, and
pairs it with its TypeScript name or says why there is none. The TypeScript side of the same
table is checked by typescript/test/api-parity.test.ts.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
from pathlib import Path

import pytest

import capability_graph
from capability_graph._testing import LAZY_MODELS

PAGE = Path(__file__).resolve().parents[3] / "docs" / "api.md"
ROW = re.compile(r"^\| (`[^`]+`|—) \| (`[^`]+`|—) \| (.*) \|$")


def table() -> list[tuple[str | None, str | None, str]]:
    """The rows of the table: (Python name, TypeScript name, reason), ``None`` for ``—``."""
    rows = []
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if match := ROW.match(line):
            python, typescript, reason = (cell.strip("`") for cell in match.groups())
            rows.append(
                (
                    None if python == "—" else python,
                    None if typescript == "—" else typescript,
                    reason.strip(),
                )
            )
    return rows


def public_names() -> list[str]:
    """Every name the package exports, and the public members of the classes it exports
    (hand-written ones: the generated types' members are the schema's)."""
    names = []
    for name in capability_graph.__all__:
        names.append(name)
        value = getattr(capability_graph, name)
        if name in LAZY_MODELS or not inspect.isclass(value) or issubclass(value, enum.Enum):
            continue
        members: set[str] = set()
        for klass in value.__mro__:
            if klass.__module__.startswith("capability_graph"):
                members |= set(vars(klass)) | set(inspect.get_annotations(klass))
        if dataclasses.is_dataclass(value):
            members |= {field.name for field in dataclasses.fields(value)}
        names += [f"{name}.{member}" for member in sorted(members) if not member.startswith("_")]
    return names


def same_name(python: str, typescript: str, classes: dict[str, str]) -> bool:
    """Whether two names are one name in each language's case; a member's class is the one its
    class row pairs it with."""

    def folded(name: str) -> str:
        return name.replace("_", "").lower()

    if "." not in python or "." not in typescript:
        return python == typescript or (
            "." not in python + typescript
            and folded(python) == folded(typescript)
            and python[0].islower() == typescript[0].islower()
        )
    python_class, python_member = python.split(".", 1)
    typescript_class, typescript_member = typescript.split(".", 1)
    return classes.get(python_class) == typescript_class and folded(python_member) == folded(
        typescript_member
    )


def test_every_public_python_name_has_exactly_one_row() -> None:
    listed = [python for python, _, _ in table() if python is not None]
    assert sorted(listed) == sorted(public_names())


def test_every_row_pairs_the_same_name_or_says_why_not() -> None:
    rows = table()
    classes = {
        python: typescript
        for python, typescript, _ in rows
        if python and typescript and "." not in python
    }
    unexplained = [
        (python, typescript)
        for python, typescript, reason in rows
        if not reason
        and (python is None or typescript is None or not same_name(python, typescript, classes))
    ]
    assert unexplained == []


@pytest.mark.parametrize(
    ("python", "typescript", "same"),
    [
        ("read_document", "readDocument", True),
        ("openai_chat_tools", "openAIChatTools", True),
        ("GraphError", "graphError", False),
        ("CapabilityGraph.read_document", "CapabilityGraph.readDocument", True),
        ("Report.status", "DiagnosticsReport.status", True),
        ("Report.status", "Report.status", False),
        ("GraphError.of", "graphError", False),
    ],
)
def test_same_name_folds_case_and_underscores_only(
    python: str, typescript: str, same: bool
) -> None:
    classes = {"CapabilityGraph": "CapabilityGraph", "Report": "DiagnosticsReport"}
    assert same_name(python, typescript, classes) is same
