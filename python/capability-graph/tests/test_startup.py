"""The CLI's start-up: a graph command imports what it runs, and nothing else.

Each graph command runs in a fresh interpreter on the quickstart's configuration, as the
console script runs it, and the test reads what the process imported. It fails on

- a module of the package that the command does not need (the allowlists below: the CLI and
  the core a call runs through, plus each command's own operation and request validator);
- any other module not allowed by name below, each group with the reason it is needed
  (what a bare interpreter imports before the command starts, the environment's start-up
  hooks included, is measured and allowed);
- an import statement the package itself runs (``builtins.__import__`` is watched) of a module
  outside :data:`PACKAGE_IMPORTS`: ``inspect`` is loaded because orjson imports
  ``dataclasses``, but the package importing it would fail here.

``match`` is the one command that runs on the event loop (its deadline, cancellation and
executor need it): it alone may import ``asyncio`` and what comes with it. The budget this
guards is measured by ``bench/bench_surfaces.py`` (``cli_cold_start_ratio``, target 1.3x
``python -c "import pydantic"``); ``docs/contributing.md`` gives the rules.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from capability_graph_testing.common import REPO

CONFIG = REPO / "examples" / "quickstart" / "capability-graph.json"

#: Each graph command, as a user types it (after ``capability-graph``).
COMMANDS: dict[str, list[str]] = {
    "describe": ["describe"],
    "list": ["list"],
    "resolve": ["resolve", "acme::route.validation"],
    "read": ["read", "acme::route.validation", "guide"],
    "call": ["call", "list_capabilities", "--arguments", '{"limit": 1}'],
    "match": ["match", "validate a request body"],
}

# --- the package's own modules ----------------------------------------------------------------

_PACKAGE_GROUPS: dict[str, tuple[str, ...]] = {
    # The console script's module; the package itself (the error type and the taxonomy).
    "entry": (
        "",
        "cli",
        "_core",
        "_core.errors",
        "_core.lazy",
        "_core.results",
        "_generated",
        "_generated.taxonomy",
    ),
    # The CLI: run, the argv grammar, the streams; the parser is the whole command line, so
    # every command family declares its arguments (the --client names from the client table).
    "cli": (
        "_surfaces",
        "_surfaces.cli",
        "_surfaces.cli.arguments",
        "_surfaces.cli.base",
        "_surfaces.cli.doctor",
        "_surfaces.cli.explain",
        "_surfaces.cli.graph",
        "_surfaces.cli.init",
        "_surfaces.cli.main",
        "_surfaces.cli.mcp",
        "_surfaces.cli.mcp_install",
        "_surfaces.cli.parser",
        "_surfaces.cli.requests",
        "_maintenance",
        "_maintenance.clients",
    ),
    # The core a call runs through: opening (configuration, sources, snapshot, documents),
    # the JSON rules, the checks before and after a handler, the dispatch.
    "core": (
        "_core.cancel",
        "_core.collector",
        "_core.config",
        "_core.cursor",
        "_core.documents",
        "_core.executors",
        "_core.frozen",
        "_core.graph",
        "_core.json",
        "_core.json.canonical",
        "_core.json.pure",
        "_core.json.text",
        "_core.load",
        "_core.operations",
        "_core.operations.common",
        "_core.operations.describe",
        "_core.operations.handlers",
        "_core.operations.requests",
        "_core.schemas",
        "_core.snapshot",
        "_core.validation",
        "_generated.defaults",
        "_generated.operations",
    ),
    # The compiled validators of the configuration and of provider definitions.
    "validators": (
        "_generated.validators",
        "_generated.validators.config",
        "_generated.validators.definition",
    ),
    # The quickstart configures the lexical executor, which the graph builds when it opens.
    "executor": ("_core.executors.fdlibm", "_core.executors.lexical", "_core.slices"),
}

#: Each command's own modules: its operation's handler and its request's compiled validator
#: (``describe``'s handler is the core's: a graph's repr uses it).
_PACKAGE_OF_COMMAND: dict[str, tuple[str, ...]] = {
    "describe": ("_generated.validators.describe_request",),
    "list": ("_core.operations.list", "_generated.validators.list_request"),
    "resolve": ("_core.operations.resolve", "_generated.validators.resolve_request"),
    "read": ("_core.operations.read_document", "_generated.validators.read_document_request"),
    "call": ("_core.operations.list", "_generated.validators.list_request"),
    # the match pipeline, the context check, the executor's job
    "match": (
        "_core.context",
        "_core.executors.job",
        "_core.match",
        "_core.operations.match",
        "_generated.validators.match_request",
    ),
}

# --- everything else, by name -----------------------------------------------------------------

_EXTERNAL_GROUPS: dict[str, tuple[str, ...]] = {
    # The language: typing, enum, re, the collections and what they import.
    "language": (
        "__future__",
        "collections",
        "collections.abc",
        "contextlib",
        "copy",
        "copyreg",
        "enum",
        "errno",
        "functools",
        "gc",
        "itertools",
        "keyword",
        "math",
        "numbers",
        "operator",
        "re",
        "re._casefix",
        "re._compiler",
        "re._constants",
        "re._parser",
        "reprlib",
        "struct",
        "types",
        "typing",
        "typing.io",
        "typing.re",
        "warnings",
        "weakref",
    ),
    # The command line: argparse, whose messages go through gettext (which reads the locale).
    "argparse": ("argparse", "gettext", "locale"),
    # Paths: pathlib and what it imports (a package from Python 3.13, with glob, pwd, grp).
    "paths": (
        "fnmatch",
        "glob",
        "grp",
        "ipaddress",
        "ntpath",
        "pathlib",
        "pathlib._abc",
        "pathlib._local",
        "pwd",
        "urllib",
        "urllib.parse",
    ),
    # JSON: the dependencies orjson (parsing, writing) and rfc8785 (canonical bytes of
    # revisions and cursors), and the standard json for the exact path of a request text.
    "json": (
        "json",
        "json.decoder",
        "json.encoder",
        "json.scanner",
        "orjson",
        "orjson.orjson",
        "rfc8785",
        "rfc8785._impl",
    ),
    # What orjson imports when it loads, to know the types it writes: dataclasses (with
    # inspect and what inspect imports), datetime and uuid (with platform).
    "orjson": (
        "ast",
        "dataclasses",
        "datetime",
        "dis",
        "importlib",
        "importlib._bootstrap",
        "importlib._bootstrap_external",
        "importlib.machinery",
        "inspect",
        "linecache",
        "opcode",
        "platform",
        "token",
        "tokenize",
        "uuid",
    ),
    # Revisions (SHA-256) and list cursors (HMAC, base64url).
    "hashing": ("base64", "binascii", "hashlib", "hmac"),
    # The cancel token and the executors' locks.
    "threads": ("threading",),
    # The lexical executor (its tokenizer and ranking) and the validators' number types.
    "lexical": ("array", "decimal", "heapq", "unicodedata"),
}

#: ``match`` only: the event loop its deadline, cancellation and executor need, and what
#: asyncio imports.
_EVENT_LOOP: tuple[str, ...] = (
    "asyncio",
    "atexit",
    "concurrent",
    "concurrent.futures",
    "concurrent.futures._base",
    "concurrent.futures.thread",
    "contextvars",
    "fcntl",
    "logging",
    "queue",
    "select",
    "selectors",
    "signal",
    "socket",
    "ssl",
    "string",
    "subprocess",
    "textwrap",
    "traceback",
)

#: The modules outside the package that the package's own import statements may name on a
#: graph command's path; a module allowed above only because a dependency imports it
#: (``inspect``, ``ast``, ``uuid``, ...) is not among them.
PACKAGE_IMPORTS: frozenset[str] = frozenset(
    {
        "__future__",
        "_thread",
        "argparse",
        "array",
        "base64",
        "binascii",
        "collections",
        "collections.abc",
        "contextlib",
        "copy",
        "decimal",
        "enum",
        "errno",
        "functools",
        "gc",
        "hashlib",
        "heapq",
        "hmac",
        "itertools",
        "json",
        "math",
        "orjson",
        "os",
        "pathlib",
        "re",
        "rfc8785",
        "stat",
        "struct",
        "sys",
        "threading",
        "time",
        "types",
        "typing",
        "unicodedata",
        "urllib.parse",  # the schemas resolve $ref URIs (pathlib imports it anyway)
    }
)
#: ``match`` only: the loop, the executor's job (a public dataclass), the match runner's
#: awaitable check, Ctrl-C.
_MATCH_IMPORTS: frozenset[str] = frozenset({"asyncio", "dataclasses", "inspect", "signal"})

PACKAGE = "capability_graph"

# Run in the child: watch the import statements the package runs, run the console script's
# main() with the command line, then report what the process imported.
PROBE = """
import builtins, sys
report, *argv = sys.argv[1:]
real_import = builtins.__import__
named = set()

def watched(name, globals=None, locals=None, fromlist=(), level=0):
    module = real_import(name, globals, locals, fromlist, level)
    importer = (globals or {}).get("__name__") or ""
    ours = lambda n: n == "capability_graph" or n.startswith("capability_graph.")
    if ours(importer) and level == 0 and not ours(name):
        named.add(name)
        named.update(f"{name}.{i}" for i in fromlist or () if f"{name}.{i}" in sys.modules)
    return module

builtins.__import__ = watched
sys.argv = ["capability-graph", *argv]
from capability_graph.cli import main
try:
    main()
except SystemExit as done:
    status = done.code
loaded = sorted(sys.modules)
builtins.__import__ = real_import
import json
with open(report, "w", encoding="utf-8") as out:
    json.dump({"status": status, "loaded": loaded, "named": sorted(named)}, out)
"""


def _interpreter_modules() -> set[str]:
    """What a bare interpreter of this environment imports before any command runs."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    modules: list[str] = ast.literal_eval(done.stdout)
    return set(modules)


def _run(command: str, tmp_path: Path) -> dict[str, Any]:
    report = tmp_path / "report.json"
    argv = [*COMMANDS[command], "--config", str(CONFIG)]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.stderr == ""
    result: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    assert result["status"] == 0, done.stdout
    return result


def allowed_package_modules(command: str) -> set[str]:
    names = [name for group in _PACKAGE_GROUPS.values() for name in group]
    names += _PACKAGE_OF_COMMAND[command]
    return {f"{PACKAGE}.{name}" if name else PACKAGE for name in names}


def allowed_external_modules(command: str) -> set[str]:
    names = {name for group in _EXTERNAL_GROUPS.values() for name in group}
    return names | set(_EVENT_LOOP) if command == "match" else names


def _is_event_loop(name: str) -> bool:
    return name == "asyncio" or name.startswith("asyncio.")


def _is_private_stdlib(name: str) -> bool:
    """A C accelerator or private helper of the standard library (``_json``, ``_sre``):
    judged through the public module that imports it."""
    top = name.partition(".")[0]
    return top.startswith("_") and top in sys.stdlib_module_names


@pytest.fixture(scope="module")
def interpreter_modules() -> set[str]:
    return _interpreter_modules()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_graph_command_imports_only_what_it_runs(
    command: str, tmp_path: Path, interpreter_modules: set[str]
) -> None:
    result = _run(command, tmp_path)
    loaded = set(result["loaded"]) - interpreter_modules
    ours = {m for m in loaded if m == PACKAGE or m.startswith(PACKAGE + ".")}
    others = loaded - ours
    allowed = allowed_external_modules(command)
    unexpected_others = sorted(
        m
        for m in others
        if m not in allowed
        and not _is_private_stdlib(m)
        and not (command == "match" and _is_event_loop(m))
    )
    unneeded = sorted(ours - allowed_package_modules(command))
    assert unneeded == [], "modules of the package this command does not need"
    assert unexpected_others == [], "modules no group of _EXTERNAL_GROUPS allows"
    named = set(result["named"])
    permitted = PACKAGE_IMPORTS | _MATCH_IMPORTS if command == "match" else PACKAGE_IMPORTS
    assert sorted(named - permitted) == [], "imported by the package itself: see PACKAGE_IMPORTS"


#: The event loop and what comes with it: only a match may import them.
_LOOP_ONLY = ("asyncio", "concurrent", "logging", "selectors", "socket", "ssl", "subprocess")

#: The ``model`` section of each built-in executor (no match runs: nothing is contacted).
EXECUTORS: dict[str, dict[str, Any]] = {
    "openai": {
        "executor": "openai",
        "baseUrl": "https://api.example.com/v1",
        "model": "m",
        "apiKeyEnv": "CG_TEST_KEY",
    },
    "codex": {"executor": "codex"},
    "scripted": {"executor": "scripted", "steps": [{"sleepMs": 1, "then": {"return": {}}}]},
    "lexical": {"executor": "lexical"},
}


@pytest.mark.parametrize("executor", list(EXECUTORS))
def test_no_executor_brings_the_event_loop_to_a_command_that_does_not_match(
    executor: str, tmp_path: Path
) -> None:
    # A graph builds its executor when it opens; building one imports none of what its
    # matches will need (the loop, the TLS context, the SDK's thread).
    config = tmp_path / "capability-graph.json"
    acme = CONFIG.parent / "providers" / "acme.json"
    config.write_text(
        json.dumps({"providers": [{"path": str(acme)}], "model": EXECUTORS[executor]}),
        encoding="utf-8",
    )
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), "describe", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    result = json.loads(report.read_text(encoding="utf-8"))
    assert (done.stderr, result["status"]) == ("", 0)
    assert json.loads(done.stdout)["model"] == {"configured": True, "executor": executor}
    loop = sorted(m for m in result["loaded"] if m.partition(".")[0] in _LOOP_ONLY)
    assert loop == []


def test_the_allowlists_name_only_what_some_command_imports(
    tmp_path: Path, interpreter_modules: set[str]
) -> None:
    # An allowlist entry nothing imports any more is stale: the list shrinks with the path.
    loaded: set[str] = set()
    named: set[str] = set()
    for command in ("list", "read", "match"):
        result = _run(command, tmp_path)
        loaded |= set(result["loaded"])
        named |= set(result["named"])
    package = allowed_package_modules("read") | allowed_package_modules("match")
    package |= allowed_package_modules("list")
    stale_package = sorted(
        m
        for m in package
        if m not in loaded
        and m
        not in {
            # the requests of the commands not run here
            f"{PACKAGE}._generated.validators.describe_request",
            f"{PACKAGE}._generated.validators.resolve_request",
            f"{PACKAGE}._core.operations.resolve",
        }
    )
    assert stale_package == []
    # Version-specific stdlib entries (typing.io on 3.11) may be absent elsewhere: only the
    # statements the package runs are held to be exact.
    assert sorted(PACKAGE_IMPORTS - named - interpreter_modules) == []
