"""The lexical tokenizer's character data ([CG-MODEL-16]): generated from Unicode 15.0.0 only,
and judged by its structure wherever the runtime's Unicode version differs."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import codegen
import pytest
from generate import lexical_unicode
from generate.base import GenerationError, Repo

ON_15 = unicodedata.unidata_version == lexical_unicode.UNICODE_VERSION


def _data(repo: Repo) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (repo.spec / lexical_unicode.FILE_NAME).read_text(encoding="utf-8")
    )
    return data


def test_committed_file_is_well_formed() -> None:
    lexical_unicode.check_structure(_data(Repo()))


@pytest.mark.skipif(not ON_15, reason="regenerating needs the Unicode 15.0.0 database")
def test_committed_file_is_what_unicode_15_gives() -> None:
    text = (Repo().spec / lexical_unicode.FILE_NAME).read_text(encoding="utf-8")
    assert text == lexical_unicode.render_data(lexical_unicode.generate())


@pytest.mark.skipif(ON_15, reason="this runtime can regenerate the file")
def test_other_unicode_versions_refuse_to_generate() -> None:
    with pytest.raises(GenerationError, match=r"run the generator with Python 3\.12"):
        lexical_unicode.generate()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("unicodeVersion", "17.0.0", "the header or unicodeVersion was edited"),
        ("word", [[65, 90], [48, 57]], "word range [48, 57] is out of order"),
        ("normalizable", [[0, 0x110000]], "out of order"),
        ("lowercase", [[65, 90, 3, 32]], "lowercase run"),
        ("lowercaseSpecial", [[304, [105]]], "lowercaseSpecial must be"),
    ],
)
def test_a_hand_edited_file_fails_the_codegen_check(
    spec_tree: Repo, key: str, value: object, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = spec_tree.spec / lexical_unicode.FILE_NAME
    data = _data(spec_tree)
    data[key] = value
    path.write_text(json.dumps(data), encoding="utf-8")
    assert codegen.run(spec_tree, check=True, steps=["lexical-unicode"]) == 1
    assert message in capsys.readouterr().err


def test_the_generator_script_refuses_other_unicode_versions() -> None:
    if ON_15:
        pytest.skip("this runtime can regenerate the file")
    script = Path(lexical_unicode.__file__)
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert "is generated from Unicode 15.0.0" in result.stderr
