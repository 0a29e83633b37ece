"""The documentation site: generated pages in sync, examples reproducible, snippets runnable.

- every registry code has a page (and an index row and a nav entry);
- every example on an error page, re-run against the reference, prints exactly the output shown
  on the page, and that output is an error of the page's code;
- ``explain_markdown`` renders each page exactly (the page and ``capability-graph explain`` come
  from the same content), and the page embeds ``explain_text`` verbatim;
- the docs step of ``tools/codegen.py --check`` passes, and fails on a changed, missing or
  stale page;
- every runnable snippet of the hand-written pages (a ``python`` block titled ``*.py``) runs in
  a copy of ``examples/quickstart/`` and prints its ``Output`` block.

The example programs run once per session (in parallel) and the results are shared.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import codegen
import doc_examples
import pytest
from generate import docs as docs_step
from generate.base import Repo

from capability_graph import ErrorCode
from capability_graph._testing import (
    REGISTRY,
    explain_index_json,
    explain_index_text,
    explain_json,
    explain_markdown,
    explain_text,
    lookup,
)

REPO = Repo()
ROOT = REPO.root
DOCS = REPO.docs
ERRORS = DOCS / "errors"
QUICKSTART = ROOT / "examples" / "quickstart"
CODES = [code.value for code in REGISTRY]


# -- parsing pages -------------------------------------------------------------------------------

_EXAMPLE = re.compile(
    r"^### (?P<title>[^\n]+)\n\n"
    r"(?:(?P<description>(?!```)[^\n]+)\n\n)?"
    r'```python title="(?P<file>[^"]+)"\n(?P<script>.*?)\n```\n\n'
    r"<!-- example-output:(?P<number>\d+) -->\n"
    r'```json title="[^"]*"\n(?P<output>.*?)\n```\n',
    re.MULTILINE | re.DOTALL,
)

_SNIPPET = re.compile(
    r'^```python title="(?P<file>[^"]+\.py)"\n(?P<script>.*?)\n```\n'
    r'(?:\n```(?:text|json) title="Output[^"]*"\n(?P<output>.*?)\n```\n)?',
    re.MULTILINE | re.DOTALL,
)


def page_examples(code: str) -> list[dict[str, Any]]:
    """The examples shown on a code's page, in the form ``explain_markdown`` takes."""
    text = (ERRORS / f"{code}.md").read_text(encoding="utf-8")
    return [
        {
            "title": match["title"],
            "description": match["description"] or "",
            "script": match["script"] + "\n",
            "output": json.loads(match["output"]),
        }
        for match in _EXAMPLE.finditer(text)
    ]


@dataclass(frozen=True)
class Snippet:
    page: str
    file: str
    script: str
    output: str | None

    def __str__(self) -> str:
        return f"{self.page}:{self.file}"


def hand_written_snippets() -> Iterator[Snippet]:
    generated = {
        path.resolve() for folder in docs_step.GENERATED_DIRS for path in (DOCS / folder).rglob("*")
    }
    for path in sorted(DOCS.rglob("*.md")):
        if path.resolve() in generated:
            continue
        text = path.read_text(encoding="utf-8")
        for match in _SNIPPET.finditer(text):
            yield Snippet(
                str(path.relative_to(DOCS)), match["file"], match["script"] + "\n", match["output"]
            )


SNIPPETS = list(hand_written_snippets())


def run_in_quickstart(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, folder)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=folder,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )


# -- the examples, run once ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def rerun() -> dict[str, list[Any]]:
    """code -> the outputs of the page's example programs, re-run against the reference now."""
    jobs = [(code, example["script"]) for code in CODES for example in page_examples(code)]
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
        outputs = list(pool.map(lambda job: doc_examples.run_script(job[1]), jobs))
    results: dict[str, list[Any]] = {code: [] for code in CODES}
    for (code, _), output in zip(jobs, outputs, strict=True):
        results[code].append(output)
    return results


# -- pages exist ---------------------------------------------------------------------------------


def test_every_registry_code_has_a_page_an_index_row_and_a_nav_entry() -> None:
    index = (ERRORS / "index.md").read_text(encoding="utf-8")
    nav = REPO.mkdocs_yml.read_text(encoding="utf-8")
    for code in CODES:
        page = ERRORS / f"{code}.md"
        assert page.is_file(), f"no page for {code}"
        text = page.read_text(encoding="utf-8")
        assert text.startswith(docs_step.header(docs_step.TAXONOMY)), code
        assert f"\n# {code}\n" in text
        assert f"[{code}]({code}.md)" in index
        assert f"- {code}: errors/{code}.md" in nav
    pages = {path.stem for path in ERRORS.glob("CG_*.md")}
    assert pages == set(CODES), "a page without a registry code"


def test_every_code_has_at_least_one_example_on_its_page() -> None:
    for code in CODES:
        examples = page_examples(code)
        assert examples, f"{code}: no example on the page"
        assert len(examples) == len(doc_examples.EXAMPLES[code]), code


# -- examples reproduce --------------------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_page_examples_reproduce_against_the_reference(
    code: str, rerun: dict[str, list[Any]]
) -> None:
    shown = [example["output"] for example in page_examples(code)]
    assert rerun[code] == shown, f"{code}: the reference now prints something else"
    entry = REGISTRY[ErrorCode(code)]
    for output in shown:
        error = doc_examples.error_of(output)
        assert error["code"] == code
        assert error["phase"] in {phase.value for phase in entry.phases}
        if entry.default_action is None:
            assert "nextAction" not in error
        else:
            allowed = {entry.default_action.value, *(a.value for a in entry.executor_actions)}
            assert error["nextAction"] in allowed
        assert set(error) <= {"code", "phase", "message", "nextAction"}


def test_page_examples_are_the_generator_programs() -> None:
    for code in CODES:
        on_page = [example["script"] for example in page_examples(code)]
        assert on_page == [example.script for example in doc_examples.EXAMPLES[code]], code


def test_examples_never_show_a_secret_or_a_raw_executor_text(rerun: dict[str, list[Any]]) -> None:
    text = json.dumps(rerun)
    for leak in ("SECRET", "10.0.0.7", "I cannot do that", "/tmp", "cg-docs-"):
        assert leak not in text


# -- explain and the pages agree -----------------------------------------------------------------


@pytest.mark.parametrize("code", CODES)
def test_explain_markdown_renders_the_page(code: str) -> None:
    page = (ERRORS / f"{code}.md").read_text(encoding="utf-8")
    assert page == docs_step.header(docs_step.TAXONOMY) + explain_markdown(
        code, page_examples(code)
    )
    assert f"$ capability-graph explain {code}\n{explain_text(code)}" in page


def test_explain_json_is_the_registry_entry() -> None:
    registry = json.loads((ROOT / docs_step.TAXONOMY).read_text(encoding="utf-8"))
    for entry in registry["codes"]:
        data = explain_json(entry["code"])
        assert data["docs"] == f"errors/{entry['code']}/"
        expected = {**entry, "defaultAction": entry.get("defaultAction")}
        assert {k: v for k, v in data.items() if k != "docs"} == expected
    assert [item["code"] for item in explain_index_json()] == CODES
    assert explain_index_text().splitlines()[0].startswith("CG_CONFIG_INVALID  ")
    assert len(explain_index_text().splitlines()) == len(CODES)


def test_explain_text_has_both_languages_and_every_field() -> None:
    for code, entry in REGISTRY.items():
        text = explain_text(code)
        assert text.startswith(f"{code.value} -- {entry.en.summary} / {entry.zh.summary}\n")
        for phase in entry.phases:
            assert f"phase:            {phase.value}" in text
        if entry.default_action is not None:
            assert f"nextAction:       {entry.default_action.value}" in text
        for prose in (entry.en, entry.zh):
            assert prose.trigger in text
            assert prose.handling in text
        for message in entry.messages.values():
            assert message in text


def test_lookup_is_case_insensitive_and_rejects_unknown_codes() -> None:
    assert lookup(" cg_model_refused ") is ErrorCode.CG_MODEL_REFUSED
    assert lookup(ErrorCode.CG_GRAPH_CLOSED) is ErrorCode.CG_GRAPH_CLOSED
    for bad in ("CG_NOPE", "", "CG_MODEL_REFUSED\x00"):
        with pytest.raises(ValueError, match="unknown error code"):
            lookup(bad)
    with pytest.raises(ValueError, match="unknown error code"):
        explain_text("nope")


def test_explain_module_imports_only_the_standard_library_and_the_registry() -> None:
    source = Path(sys.modules[explain_text.__module__].__file__ or "").read_text(encoding="utf-8")
    imported: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
    assert imported <= {
        "__future__",
        "json",
        "re",
        "collections.abc",
        "typing",
        ".._generated.taxonomy",
    }


# -- the generator -------------------------------------------------------------------------------


def _page_results() -> dict[str, list[dict[str, Any]]]:
    return {code: page_examples(code) for code in CODES}


def test_docs_step_check_passes(
    rerun: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The programs were just re-run (``rerun``); feed their real outputs to the check.
    def run_examples() -> dict[str, list[dict[str, Any]]]:
        return {
            code: [
                docs_step.example_data(example, output)
                for example, output in zip(doc_examples.EXAMPLES[code], rerun[code], strict=True)
            ]
            for code in CODES
        }

    monkeypatch.setattr(docs_step, "run_examples", run_examples)
    assert codegen.run(REPO, check=True, steps=["docs"]) == 0


def _check(repo: Repo) -> int:
    return codegen.run(repo, check=True, steps=["docs"])


@pytest.fixture
def docs_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """The repository with a copy of docs/ and mkdocs.yml; examples come from the pages."""
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    shutil.copy(REPO.mkdocs_yml, tmp_path / "mkdocs.yml")
    results = _page_results()
    monkeypatch.setattr(docs_step, "run_examples", lambda: results)
    repo = Repo(docs=docs, mkdocs_yml=tmp_path / "mkdocs.yml")
    assert _check(repo) == 0
    return repo


def test_check_fails_on_a_changed_page(docs_copy: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    page = docs_copy.docs / "errors" / "CG_MODEL_REFUSED.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nedited by hand\n", encoding="utf-8")
    assert _check(docs_copy) == 1
    assert f"changed: {page} (differs from its sources)" in capsys.readouterr().err
    assert codegen.run(docs_copy, check=False, steps=["docs"]) == 0
    assert _check(docs_copy) == 0


def test_check_fails_on_a_missing_page(docs_copy: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    page = docs_copy.docs / "contract" / "error.md"
    page.unlink()
    assert _check(docs_copy) == 1
    assert f"missing: {page}" in capsys.readouterr().err


def test_check_fails_on_a_stale_page(docs_copy: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    stale = docs_copy.docs / "errors" / "CG_RETIRED_LONG_AGO.md"
    stale.write_text("# gone\n", encoding="utf-8")
    assert _check(docs_copy) == 1
    assert f"unexpected: {stale} (its source is gone)" in capsys.readouterr().err
    assert codegen.run(docs_copy, check=False, steps=["docs"]) == 0
    assert not stale.exists()


def test_check_fails_on_an_edited_nav(docs_copy: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    text = docs_copy.mkdocs_yml.read_text(encoding="utf-8")
    edited = text.replace("- CG_MODEL_REFUSED: errors/CG_MODEL_REFUSED.md\n", "")
    docs_copy.mkdocs_yml.write_text(edited, encoding="utf-8")
    assert _check(docs_copy) == 1
    assert f"changed: {docs_copy.mkdocs_yml}" in capsys.readouterr().err


def test_contract_pages_cover_every_schema_and_field() -> None:
    schemas = docs_step.load_schemas(REPO)
    for name, schema in schemas.items():
        text = (DOCS / "contract" / f"{name}.md").read_text(encoding="utf-8")
        assert text.startswith(
            docs_step.header(f"spec/capability-graph/schemas/{name}.schema.json")
        )
        for field in schema.get("properties", {}):
            assert f"| `{field}` |" in text, f"{name}: field {field} missing"
        for definition in schema.get("$defs", {}).values():
            for field in definition.get("properties", {}):
                assert f"| `{field}` |" in text, f"{name}: field {field} missing"
    index = (DOCS / "contract" / "index.md").read_text(encoding="utf-8")
    for name in schemas:
        assert f"]({name}.md)" in index


def test_every_doc_link_to_an_error_page_names_a_registry_code() -> None:
    for path in DOCS.rglob("*.md"):
        for code in re.findall(r"errors/(CG_[A-Z_]+)\.md", path.read_text(encoding="utf-8")):
            assert code in CODES, f"{path.relative_to(DOCS)} links to unknown {code}"


# -- runnable snippets of the hand-written pages ---------------------------------------------------


def test_the_hand_written_pages_have_runnable_snippets() -> None:
    pages = {snippet.page for snippet in SNIPPETS}
    for page in ("quickstart.md", "concepts.md", "surfaces/sdk.md", "surfaces/tools.md"):
        assert page in pages


@pytest.mark.parametrize("snippet", SNIPPETS, ids=str)
def test_snippet_runs_and_prints_its_output(snippet: Snippet, tmp_path: Path) -> None:
    done = run_in_quickstart(snippet.script, tmp_path)
    assert done.returncode == 0, f"{snippet} failed:\n{done.stdout}\n{done.stderr}"
    if snippet.output is not None:
        printed = [line.rstrip() for line in done.stdout.rstrip("\n").splitlines()]
        assert printed == [line.rstrip() for line in snippet.output.splitlines()], done.stdout
