"""The trigger table of the error reference: one or more small programs per registry code.

Each example is a self-contained Python program that uses the reference SDK the way a user
would and prints one JSON value: the error object (``GraphError.to_json()``), or for
``CG_RELOAD_FAILED`` the reload result that carries it. The docs step of ``tools/codegen.py``
runs every program and writes its real output on the code's page (``docs/errors/<CODE>.md``);
``tools/tests/test_docs.py`` re-runs the program shown on the page and compares.

Programs run in an empty temporary working directory, with the interpreter that runs the
generator (``capability_graph`` must be importable).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["EXAMPLES", "Example", "run_script"]


@dataclass(frozen=True)
class Example:
    """One trigger: a title, an optional sentence, and the program."""

    title: str
    script: str
    description: str = ""


_ACME = """ACME = {
    "providerId": "acme",
    "name": "Acme HTTP",
    "version": "1",
    "capabilities": [
        {
            "id": "route.validation",
            "name": "Request validation",
            "description": "Validate input before a route handler runs.",
        }
    ],
}"""

_OPEN = "async with await CapabilityGraph.open(CONFIG) as graph:"
_REQUEST = 'request="validate my request body"'


def _indent(text: str, by: int = 4) -> str:
    return "\n".join((" " * by + line) if line else "" for line in text.splitlines())


def _program(
    body: str,
    *,
    config: str = "",
    imports: tuple[str, ...] = (),
    names: tuple[str, ...] = ("CapabilityGraph", "GraphError"),
    prelude: str = "",
) -> str:
    """An asyncio program: ``prelude``, ``config`` (Python source), then ``main()`` = ``body``.

    Any GraphError escaping ``main()`` is printed as its error object, as in the contract's
    reference error example.
    """
    plain = sorted(
        ["import asyncio", "import json", *(i for i in imports if i.startswith("import "))]
    )
    froms = sorted(i for i in imports if i.startswith("from "))
    blocks = ["\n".join(plain + froms), f"from capability_graph import {', '.join(names)}"]
    blocks += [block.strip("\n") for block in (prelude, config) if block.strip()]
    blocks.append("async def main() -> None:\n" + _indent(body.strip("\n")))
    blocks.append(
        "try:\n"
        "    asyncio.run(main())\n"
        "except GraphError as error:\n"
        "    print(json.dumps(error.to_json()))"
    )
    # ruff/black layout: one blank line after the imports, two around definitions
    text, previous_is_def = blocks[0] + "\n\n" + blocks[1], False
    for block in blocks[2:]:
        is_def = block.startswith(("def ", "async def "))
        text += ("\n\n\n" if is_def or previous_is_def else "\n\n") + block
        previous_is_def = is_def
    return text + "\n"


def _config(
    *,
    model: str | None = None,
    budgets: str | None = None,
    extra: tuple[str, ...] = (),
    providers: str = '[{"definition": ACME}]',
    before: str = "",
) -> str:
    """``ACME`` (plus ``before``) and a CONFIG dict serving it."""
    lines = [_ACME]
    if before:
        lines.append(before.strip("\n"))
    lines += ["CONFIG = {", f'    "providers": {providers},']
    if budgets is not None:
        lines.append(f'    "budgets": {budgets},')
    lines += [f"    {line}" for line in extra]
    if model is not None:
        lines.append(f'    "model": {model},')
    lines.append("}")
    return "\n".join(lines)


def _scripted(step: str) -> str:
    """A scripted-executor ``model`` value (Python source at the indentation of a CONFIG key)."""
    one_line = f'{{"executor": "scripted", "steps": [{step}]}}'
    if len(one_line) + len('    "model": ,') <= 88:
        return one_line
    if len(f'        "steps": [{step}],') <= 88:
        steps = f"[{step}]"
    else:
        steps = "[\n" + _indent(step, 12) + "\n        ]"
    return '{\n        "executor": "scripted",\n        "steps": ' + steps + ",\n    }"


def _match(step: str, *, call: str = f"await graph.match({_REQUEST})", **config: Any) -> str:
    names = ("CancelToken", "CapabilityGraph", "GraphError") if "CancelToken" in call else None
    return _program(
        f"{_OPEN}\n{_indent(call)}",
        config=_config(model=_scripted(step), **config),
        **({"names": names} if names else {}),
    )


def _read(document_id: str) -> str:
    return (
        f"{_OPEN}\n"
        "    await graph.read_document(\n"
        f'        capability_id="acme::route.validation", document_id="{document_id}"\n'
        "    )"
    )


def _with_document(document: str) -> str:
    return f'ACME["capabilities"][0]["documents"] = [\n    {document}\n]'


# A provider file whose capability declares the document 'guide' at docs/guide.md, written into
# a temporary folder by the document examples.
_FILE_PRELUDE = """def write_provider(folder: Path) -> Path:
    definition = {
        "providerId": "acme",
        "name": "Acme HTTP",
        "version": "1",
        "capabilities": [
            {
                "id": "route.validation",
                "name": "Request validation",
                "description": "Validate input before a route handler runs.",
                "documents": [
                    {"id": "guide", "title": "Guide", "path": "docs/guide.md"}
                ],
            }
        ],
    }
    (folder / "docs").mkdir()
    path = folder / "acme.json"
    path.write_text(json.dumps(definition), encoding="utf-8")
    return path"""


def _document_program(setup: str, budgets: str | None = None) -> str:
    config = '{"providers": [{"path": str(provider)}]}'
    if budgets:
        config = (
            '{\n        "providers": [{"path": str(provider)}],\n'
            + f'        "budgets": {budgets},\n    }}'
        )
    body = (
        "with tempfile.TemporaryDirectory() as folder:\n"
        + _indent(setup.strip("\n"))
        + f"\n    config = {config}\n"
        + "    async with await CapabilityGraph.open(config) as graph:\n"
        + "        await graph.read_document(\n"
        + '            capability_id="acme::route.validation", document_id="guide"\n'
        + "        )"
    )
    return _program(
        body, imports=("import tempfile", "from pathlib import Path"), prelude=_FILE_PRELUDE
    )


_SECOND_CAPABILITY = (
    'ACME["capabilities"].append(\n'
    '    {"id": "route.cache", "name": "Caching", "description": "Cache responses."}\n'
    ")"
)
_SLOW = """{
    "sleepMs": 5000,
    "then": {"return": {"status": "no_match", "candidates": []}},
}"""

EXAMPLES: dict[str, tuple[Example, ...]] = {
    "CG_CONFIG_INVALID": (
        Example(
            "A budget that is not a positive integer",
            _program(
                f"{_OPEN}\n    await graph.describe()",
                config='CONFIG = {"providers": [], "budgets": {"maxCapabilities": 0}}',
            ),
            "The message names the JSON pointer and the expected type, never the value.",
        ),
        Example(
            "A configuration file that cannot be read (the reference doctor example)",
            _program('await CapabilityGraph.open("deliberately-missing-config.json")'),
            "The CLI reports the same error object for "
            "`capability-graph doctor --config deliberately-missing-config.json` "
            '(stderr `{"ok":false,"error":{...}}`, exit 1).',
        ),
    ),
    "CG_DEFINITION_INVALID": (
        Example(
            "null sent for an optional field",
            _program(
                "await CapabilityGraph.open(CONFIG)",
                config=_config(
                    before='ACME["capabilities"][0]["whenToUse"] = None  # null is never "omitted"'
                ),
            ),
        ),
    ),
    "CG_RELATION_INVALID": (
        Example(
            "A relation to a capability the provider does not declare",
            _program(
                "await CapabilityGraph.open(CONFIG)",
                config=_config(
                    before='ACME["capabilities"][0]["relations"] = [\n'
                    '    {"kind": "requires", "target": "schema.request"}  # not declared\n'
                    "]"
                ),
            ),
        ),
    ),
    "CG_RELATION_CYCLE": (
        Example(
            "Two capabilities that require each other",
            _program(
                "await CapabilityGraph.open(CONFIG)",
                prelude="""def capability(local_id: str, requires: str) -> dict:
    return {
        "id": local_id,
        "name": local_id,
        "description": f"The {local_id} capability.",
        "relations": [{"kind": "requires", "target": requires}],
    }""",
                config="""CONFIG = {
    "providers": [
        {
            "definition": {
                "providerId": "acme",
                "name": "Acme HTTP",
                "version": "1",
                "capabilities": [
                    capability("a", requires="b"),
                    capability("b", requires="a"),
                ],
            }
        }
    ]
}""",
            ),
        ),
    ),
    "CG_CONTEXT_INVALID": (
        Example(
            "A nested object in the context",
            _program(
                f"{_OPEN}\n"
                "    await graph.match(\n"
                f"        {_REQUEST},\n"
                '        context={"user": {"name": "Ada"}},  # facts must be flat scalars\n'
                "    )",
                config=_config(model='{"executor": "lexical"}'),
            ),
        ),
    ),
    "CG_INPUT_INVALID": (
        Example(
            "A capability id that is not a full id",
            _program(
                f'{_OPEN}\n    await graph.resolve(ids=["route.validation"])  # no "acme::"',
                config=_config(),
            ),
        ),
        Example(
            "null sent to mean 'omitted' (JSON entry point)",
            _program(
                f'{_OPEN}\n    await graph.call("list_capabilities", {{"limit": None}})',
                config=_config(),
            ),
            "The SDK's keyword arguments treat `None` as omitted; a JSON request never does.",
        ),
        Example(
            "A key the request does not take (JSON entry point)",
            _program(
                f'{_OPEN}\n    await graph.call("match_capabilities", {{"text": "pay"}})',
                config=_config(),
            ),
            "The message names the keys the request takes, never the key that was sent.",
        ),
    ),
    "CG_ACCESS_DENIED": (
        Example(
            "A capability outside the trusted scope",
            _program(
                f'{_OPEN}\n    await graph.resolve(ids=["vault::secrets.read"])',
                config=_config(
                    before="""VAULT = {
    "providerId": "vault",
    "name": "Vault",
    "version": "1",
    "capabilities": [
        {"id": "secrets.read", "name": "Read secrets", "description": "Read a secret."}
    ],
}""",
                    providers='[{"definition": ACME}, {"definition": VAULT}]',
                    extra=('"scope": {"providers": ["acme"]},  # requests can only narrow it',),
                ),
            ),
            "Out-of-scope ids are denied whether or not they exist, so scope never leaks "
            "existence.",
        ),
        Example(
            "A document body that is not approved",
            _program(
                _read("guide"),
                config=_config(
                    before=_with_document('{"id": "guide", "title": "Guide", "path": "guide.md"}'),
                    extra=('"documents": {"bodies": "none"},',),
                ),
            ),
        ),
    ),
    "CG_PROVIDER_NOT_FOUND": (
        Example(
            "Listing a provider that is not loaded",
            _program(f'{_OPEN}\n    await graph.list(providers=["billing"])', config=_config()),
        ),
    ),
    "CG_CAPABILITY_NOT_FOUND": (
        Example(
            "The reference error example, in Python",
            _program(
                f'{_OPEN}\n    await graph.resolve(ids=["acme::missing"])',
                config="""CONFIG = {
    "providers": [
        {
            "definition": {
                "providerId": "acme",
                "name": "Error example",
                "version": "1",
                "capabilities": [],
            }
        }
    ]
}""",
            ),
        ),
    ),
    "CG_CATALOG_TOO_LARGE": (
        Example(
            "More capabilities than maxCapabilities (load)",
            _program(
                "await CapabilityGraph.open(CONFIG)",
                config=_config(
                    before=_SECOND_CAPABILITY,
                    budgets='{"maxCapabilities": 1}',
                ),
            ),
        ),
        Example(
            "An authorized catalog over maxCatalogEntries (match)",
            _match(
                '{"return": {"status": "no_match", "candidates": []}}',
                before=_SECOND_CAPABILITY,
                budgets='{"maxCatalogEntries": 1}',
            ),
        ),
    ),
    "CG_RESULT_TOO_LARGE": (
        Example(
            "A result over maxResultBytes",
            _program(
                f"{_OPEN}\n    await graph.describe()",
                config=_config(budgets='{"maxResultBytes": 64}'),
            ),
            "Nothing is ever silently truncated.",
        ),
    ),
    "CG_INPUT_TOO_LARGE": (
        Example(
            "A request over maxInputBytes",
            _program(
                f'{_OPEN}\n    await graph.match(request="validate " * 10)',
                config=_config(budgets='{"maxInputBytes": 32}', model='{"executor": "lexical"}'),
            ),
        ),
    ),
    "CG_GRAPH_CLOSED": (
        Example(
            "A call after close",
            _program(
                "graph = await CapabilityGraph.open(CONFIG)\n"
                "await graph.close()\n"
                "await graph.describe()",
                config=_config(),
            ),
            "The error object has no `nextAction`.",
        ),
    ),
    "CG_RELOAD_FAILED": (
        Example(
            "A provider file that became invalid",
            _program(
                "with tempfile.TemporaryDirectory() as folder:\n"
                '    path = Path(folder) / "acme.json"\n'
                '    path.write_text(json.dumps(ACME), encoding="utf-8")\n'
                '    config = {"providers": [{"path": str(path)}]}\n'
                "    async with await CapabilityGraph.open(config) as graph:\n"
                '        path.write_text("{not json", encoding="utf-8")\n'
                "        result = await graph.reload()  # not an exception: ok is false\n"
                "        print(json.dumps(result.to_json()))",
                config=_ACME,
                imports=("import tempfile", "from pathlib import Path"),
            ),
            "`reload` returns `ok: false` with `CG_RELOAD_FAILED` and the real cause per "
            "provider; the old snapshot (its `revision`) keeps serving.",
        ),
    ),
    "CG_DOCUMENT_ROOT_REQUIRED": (
        Example(
            "A path document of an inline provider without documentRoot",
            _program(
                _read("guide"),
                config=_config(
                    before=_with_document('{"id": "guide", "title": "Guide", "path": "guide.md"}'),
                    extra=('# no "documentRoot" next to the inline definition',),
                ),
            ),
        ),
    ),
    "CG_DOCUMENT_NOT_FOUND": (
        Example(
            "A document id the capability does not declare",
            _program(_read("missing"), config=_config()),
        ),
    ),
    "CG_DOCUMENT_ACCESS_DENIED": (
        Example(
            "A symbolic link that leaves the document root",
            _document_program(
                'root = Path(folder) / "provider"\n'
                "root.mkdir()\n"
                "provider = write_provider(root)\n"
                '(Path(folder) / "secret.md").write_text("SECRET", encoding="utf-8")\n'
                '(root / "docs" / "guide.md").symlink_to(Path(folder) / "secret.md")'
            ),
            "The link is never followed out of the root, not even to `stat` its target.",
        ),
    ),
    "CG_DOCUMENT_REFERENCE_ONLY": (
        Example(
            "Reading a url document",
            _program(
                _read("upstream"),
                config=_config(
                    before=_with_document(
                        '{"id": "upstream", "title": "Upstream", "url": "https://example.com/v"}'
                    )
                ),
            ),
        ),
    ),
    "CG_DOCUMENT_TOO_LARGE": (
        Example(
            "A document larger than maxDocumentBytes",
            _document_program(
                "root = Path(folder)\n"
                "provider = write_provider(root)\n"
                '(root / "docs" / "guide.md").write_text("x" * 100, encoding="utf-8")',
                budgets='{"maxDocumentBytes": 10}',
            ),
        ),
    ),
    "CG_DOCUMENT_UNREADABLE": (
        Example(
            "A document that is not UTF-8",
            _document_program(
                "root = Path(folder)\n"
                "provider = write_provider(root)\n"
                '(root / "docs" / "guide.md").write_bytes(b"caf\\xe9")  # Latin-1, not UTF-8'
            ),
        ),
    ),
    "CG_MODEL_NOT_CONFIGURED": (
        Example(
            "match without a model executor",
            _program(
                f"{_OPEN}\n"
                "    await graph.list()  # static queries keep working\n"
                f"    await graph.match({_REQUEST})",
                config=_config(),
            ),
        ),
    ),
    "CG_MODEL_UNAVAILABLE": (
        Example(
            "An executor that raises a plain exception",
            _match('{"raiseException": "connection reset by 10.0.0.7 (token SECRET-4f1c)"}'),
            "Any plain exception or unknown code becomes `CG_MODEL_UNAVAILABLE` with `retry`; "
            "its text never reaches the caller.",
        ),
    ),
    "CG_MODEL_EXECUTOR_UNSAFE": (
        Example(
            "An executor reporting unmet isolation prerequisites",
            _match('{"raise": {"code": "CG_MODEL_EXECUTOR_UNSAFE"}}'),
            "The `codex` executor raises this when the platform, version or sandbox "
            "prerequisites are not met; it never falls back to an unsandboxed run.",
        ),
    ),
    "CG_MODEL_CONTEXT_EXCEEDED": (
        Example(
            "An executor error with an action it may not set",
            _match('{"raise": {"code": "CG_MODEL_CONTEXT_EXCEEDED", "nextAction": "retry"}}'),
            "`retry` is not allowed for this code, so the default `narrow_scope` replaces it.",
        ),
    ),
    "CG_MODEL_OUTPUT_INVALID": (
        Example(
            "A confidence outside [0, 1]",
            _match(
                """{
    "return": {
        "status": "matched",
        "candidates": [{"id": "acme::route.validation", "confidence": 1.5}],
    }
}"""
            ),
        ),
    ),
    "CG_MODEL_INVALID_SELECTION": (
        Example(
            "A fabricated capability id",
            _match(
                """{
    "return": {
        "status": "matched",
        "candidates": [{"id": "acme::made.up", "confidence": 0.9}],
    }
}"""
            ),
        ),
    ),
    "CG_MODEL_OUTPUT_TOO_LARGE": (
        Example(
            "Executor output over maxModelOutputBytes",
            _match(
                """{
    "return": {
        "status": "matched",
        "candidates": [
            {
                "id": "acme::route.validation",
                "confidence": 0.9,
                "reason": "x" * 200,
            }
        ],
    }
}""",
                budgets='{"maxModelOutputBytes": 64}',
            ),
        ),
    ),
    "CG_MODEL_REFUSED": (
        Example(
            "The model refuses",
            _match('{"raise": {"code": "CG_MODEL_REFUSED", "message": "I cannot do that."}}'),
            "A refusal is an error, never `no_match`; the executor's own text is replaced by "
            "the reference message.",
        ),
    ),
    "CG_MODEL_TIMEOUT": (
        Example(
            "A deadline shorter than the executor's work",
            _match(_SLOW, call=f"await graph.match({_REQUEST}, timeout_ms=50)"),
            "The late result is discarded.",
        ),
    ),
    "CG_MODEL_CANCELLED": (
        Example(
            "The caller cancels a running match",
            _match(
                _SLOW,
                call="token = CancelToken()\n"
                "asyncio.get_running_loop().call_later(0.05, token.cancel)\n"
                f"await graph.match({_REQUEST}, cancel=token)",
            ),
            "MCP `notifications/cancelled` and Ctrl-C in the CLI (exit 130) cancel the same way.",
        ),
    ),
}


def run_script(script: str, *, timeout: float = 120.0) -> Any:
    """Run ``script`` with this interpreter in an empty temporary folder; return the JSON value
    on the last line of its stdout. Raises ``RuntimeError`` when it fails or prints no JSON."""
    with tempfile.TemporaryDirectory(prefix="cg-docs-") as folder:
        done = subprocess.run(
            [sys.executable, "-c", script],
            cwd=folder,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
            check=False,
        )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        raise RuntimeError(
            f"example program failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return json.loads(lines[-1])


def error_of(output: Any) -> Mapping[str, Any]:
    """The error object inside an example's output (the output itself, or its ``error``)."""
    if isinstance(output, Mapping) and "code" in output:
        return output
    if isinstance(output, Mapping) and isinstance(output.get("error"), Mapping):
        return output["error"]  # type: ignore[no-any-return]
    raise ValueError(f"no error object in {output!r}")
