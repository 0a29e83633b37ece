"""Check the built distributions the way a user gets them (the ``package`` session).

    python tools/check_dists.py --dist DIR [--python 3.11 --python 3.12 --python 3.13]

``DIR`` holds the sdist and the wheel of every distribution of the repository (``python -m
build``). This script then checks, and prints the figures (wheel sizes, install times):

1. **contents** — every wheel carries the repository's ``LICENSE`` byte for byte (in
   ``.dist-info/licenses/``), ``py.typed`` in its package, ``License-Expression: Apache-2.0``,
   classifiers, a project URL and an author; every sdist carries ``LICENSE``; the version in the
   file names is the package's ``__version__``; the wheel and the sdist carry, byte for byte,
   every repository file the package's build hook names (the spec, the suite: kept once in the
   repository, copied in at build time).
2. **installs** — per Python, a fresh venv into which pip installs our distributions *from the
   built wheel files only* (given as files, never by name, so no index can supply a project of
   the same name) and their dependencies from the index. Then: each of ours was installed from
   ``DIR`` (``direct_url.json``); the unrelated ``flowcast`` project is absent; from a folder
   outside the repository the packages import with their versions, ``capability-graph describe``
   runs on ``examples/quickstart``, and ``cg-conformance`` runs a selection of vectors on all
   four surfaces with the suite packaged in its wheel, and both packages read their data files
   from where they are installed. The last Python gets the minimal install
   (``capability-graph[mcp]``, no ``codex`` extra) and must answer a codex match with
   ``CG_MODEL_UNAVAILABLE`` + ``check_config`` without ever starting ``codex``.
3. **floors** — on the first Python, every direct dependency pinned to the floor its
   ``pyproject.toml`` declares (the lower bound of its range), all extras, and the same checks
   plus a selection of the test suites run against the installed wheels: the floors are true.

Exit status 0 when everything passed, 1 otherwise (the first failure is printed).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parent.parent
LICENSE = ROOT / "LICENSE"
QUICKSTART = ROOT / "examples" / "quickstart"


@dataclass(frozen=True)
class Distribution:
    name: str  # the distribution name
    folder: str  # its project folder in the repository
    package: str  # its import name


DISTRIBUTIONS = (
    Distribution("capability-graph-flowcast", "python/flowcast", "capability_graph_flowcast"),
    Distribution("capability-graph", "python/capability-graph", "capability_graph"),
    Distribution(
        "capability-graph-conformance", "conformance/harness", "capability_graph_conformance"
    ),
)
#: The extras of capability-graph that are not ours to pin (``codex`` is our own flowcast).
THIRD_PARTY_EXTRAS = ("mcp", "openai")
#: The unrelated project of the package index whose name flowcast once had.
FOREIGN = "flowcast"

#: Vectors run from the installed harness: the seed errors, a query, a config fault, a match
#: outcome and a lifecycle case, on every surface they apply to.
CONFORMANCE_SELECTION = (
    "cg.seed.*",
    "cg.query.unknown-tool",
    "cg.config.file-missing",
    "cg.outcome.list-empty",
    "cg.lifecycle.cancel-match",
)
#: Test modules run against the wheels installed at the floors, each exercising dependencies at
#: their floors: pydantic (the generated models), orjson, jsonschema (both packages), tomlkit
#: (mcp-install's TOML), mcp (the server over stdio), openai (the executor against a loopback
#: server). Latency-bound cases are left out: they test the machine, not the versions.
FLOOR_TESTS = (
    "python/capability-graph/tests/test_graph_open.py",
    "python/capability-graph/tests/test_mcp.py",
    "python/capability-graph/tests/test_executor_openai.py",
    "python/capability-graph/tests/cli/test_mcp_install.py",
    "python/flowcast/tests/test_schema.py",
)
FLOOR_TESTS_DESELECTED = "not hanging"


class Failure(Exception):
    """A check failed; the message says which and why."""


def repository_files(dist: Distribution) -> dict[str, bytes]:
    """The repository files ``dist``'s build hook (``hatch_build.py``) puts into its package:
    path in the wheel -> the bytes the repository holds (empty when it has no such hook)."""
    project = tomllib.loads((ROOT / dist.folder / "pyproject.toml").read_text(encoding="utf-8"))
    config = project["tool"]["hatch"]["build"].get("hooks", {}).get("custom")
    if config is None:
        return {}
    repository = (ROOT / dist.folder / config["repository"]).resolve()
    base = repository / config.get("base", "")
    return {
        f"{config['target']}/{path.relative_to(base).as_posix()}": path.read_bytes()
        for folder, pattern in config["files"]
        for path in sorted((repository / folder).glob(pattern))
        if path.is_file() and "__pycache__" not in path.parts
    }


def step(title: str) -> None:
    print(f"\n== {title}", flush=True)


def run(argv: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a command; its stdout, or a Failure with both streams when it exits non-zero."""
    done = subprocess.run(
        list(argv), cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=1800
    )
    if done.returncode != 0:
        raise Failure(
            f"`{' '.join(argv)}` exited {done.returncode}\n{done.stdout[-3000:]}"
            f"\n{done.stderr[-3000:]}"
        )
    return done.stdout


# -- 1. contents ---------------------------------------------------------------------------------


def built(dist_dir: Path, dist: Distribution, suffix: str) -> Path:
    stem = dist.name.replace("-", "_")
    found = sorted(dist_dir.glob(f"{stem}-*{suffix}"))
    if len(found) != 1:
        raise Failure(f"expected one {stem}-*{suffix} in {dist_dir}, found {found}")
    return found[0]


def source_version(dist: Distribution) -> str:
    """The ``__version__`` in the package's ``__init__.py`` (the single source)."""
    init = ROOT / dist.folder / "src" / dist.package / "__init__.py"
    for line in init.read_text(encoding="utf-8").splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip('"')
    raise Failure(f"{init} has no __version__")


def check_wheel(wheel: Path, dist: Distribution) -> None:
    version = source_version(dist)
    if not wheel.name.startswith(f"{dist.name.replace('-', '_')}-{version}-"):
        raise Failure(f"{wheel.name}: the version is not {version} (the package's __version__)")
    info = f"{dist.name.replace('-', '_')}-{version}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for required in (f"{info}/licenses/LICENSE", f"{dist.package}/py.typed"):
            if required not in names:
                raise Failure(f"{wheel.name} lacks {required}")
        if archive.read(f"{info}/licenses/LICENSE") != LICENSE.read_bytes():
            raise Failure(f"{wheel.name}: LICENSE differs from the repository's")
        metadata = archive.read(f"{info}/METADATA").decode("utf-8")
        for name, content in repository_files(dist).items():
            if name not in names:
                raise Failure(f"{wheel.name} lacks {name} (a repository file it ships)")
            if archive.read(name) != content:
                raise Failure(f"{wheel.name}: {name} differs from the repository's")
    headers = [line.partition(": ") for line in metadata.split("\n\n", 1)[0].splitlines()]
    fields: dict[str, list[str]] = {}
    for key, _, value in headers:
        fields.setdefault(key, []).append(value)
    expected = {"License-Expression": ["Apache-2.0"], "License-File": ["LICENSE"]}
    for key, values in expected.items():
        if fields.get(key) != values:
            raise Failure(f"{wheel.name}: {key} is {fields.get(key)}, expected {values}")
    for key in ("Classifier", "Project-URL", "Author"):
        if not fields.get(key):
            raise Failure(f"{wheel.name}: no {key}")
    if "Typing :: Typed" not in fields["Classifier"]:
        raise Failure(f"{wheel.name}: no 'Typing :: Typed' classifier")


def check_sdist(sdist: Path, dist: Distribution) -> None:
    import tarfile

    top = f"{dist.name.replace('-', '_')}-{source_version(dist)}"
    with tarfile.open(sdist) as archive:
        names = set(archive.getnames())
        for required in (f"{top}/LICENSE", f"{top}/PKG-INFO", f"{top}/src/{dist.package}/py.typed"):
            if required not in names:
                raise Failure(f"{sdist.name} lacks {required}")
        for name in repository_files(dist):
            if f"{top}/src/{name}" not in names:
                raise Failure(f"{sdist.name} lacks src/{name} (a repository file it ships)")


def check_contents(dist_dir: Path) -> dict[str, Path]:
    step("contents: LICENSE, py.typed and metadata in every wheel and sdist")
    wheels = {}
    for dist in DISTRIBUTIONS:
        wheel = built(dist_dir, dist, ".whl")
        sdist = built(dist_dir, dist, ".tar.gz")
        check_wheel(wheel, dist)
        check_sdist(sdist, dist)
        wheels[dist.name] = wheel
        print(
            f"  {wheel.name}: {wheel.stat().st_size / 1024:.0f} KiB;"
            f" {sdist.name}: {sdist.stat().st_size / 1024:.0f} KiB",
            flush=True,
        )
    return wheels


# -- 2. installs ---------------------------------------------------------------------------------


def find_python(version: str) -> str:
    """An interpreter of ``version`` (``3.12``): on PATH, else under pyenv's versions."""
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(
        glob.glob(str(pyenv_root / "versions" / f"{version}.*" / "bin" / "python3"))
    )
    for candidate in filter(None, candidates):
        done = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0 and done.stdout.strip() == version:
            return candidate
    raise Failure(f"no Python {version} found (python{version} on PATH, or pyenv's versions)")


@dataclass(frozen=True)
class Install:
    python: str  # the version
    extras: str  # capability-graph's extras
    pins: tuple[str, ...] = ()  # name==version pins of the floors


def floor_pins() -> tuple[str, ...]:
    """``name==floor`` for every third-party direct dependency of every distribution."""
    from packaging.requirements import Requirement

    ours = {dist.name for dist in DISTRIBUTIONS}
    floors: dict[str, str] = {}
    for dist in DISTRIBUTIONS:
        project = tomllib.loads((ROOT / dist.folder / "pyproject.toml").read_text("utf-8"))
        requirements = list(project["project"]["dependencies"])
        extras = project["project"].get("optional-dependencies", {})
        for extra in THIRD_PARTY_EXTRAS:
            requirements += extras.get(extra, [])
        for text in requirements:
            requirement = Requirement(text)
            if requirement.name in ours:
                continue
            lower = [spec.version for spec in requirement.specifier if spec.operator == ">="]
            if len(lower) != 1:
                raise Failure(f"{dist.folder}: {text!r} has no single >= floor")
            if floors.setdefault(requirement.name, lower[0]) != lower[0]:
                raise Failure(f"{requirement.name}: two different floors ({floors})")
    return tuple(f"{name}=={version}" for name, version in sorted(floors.items()))


def install(plan: Install, wheels: dict[str, Path], work: Path) -> Path:
    """A fresh venv with our wheels (files) and their dependencies; returns its bin folder."""
    venv = work / f"venv-{plan.python}{'-floors' if plan.pins else ''}"
    run([find_python(plan.python), "-m", "venv", str(venv)])
    bin_dir = venv / "bin"
    main = f"{wheels['capability-graph']}[{plan.extras}]"
    ours = [main, str(wheels["capability-graph-conformance"])]
    if "codex" in plan.extras.split(","):
        ours.append(str(wheels["capability-graph-flowcast"]))
    started = time.monotonic()
    run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", *ours, *plan.pins])
    seconds = time.monotonic() - started
    what = "floors" if plan.pins else f"capability-graph[{plan.extras}]"
    print(f"  Python {plan.python}: pip install {what} + harness: {seconds:.1f} s", flush=True)
    return bin_dir


#: Prints, per distribution name, null when it is not installed, else its direct_url.json
#: (PEP 610; {} when it was installed from an index).
_PROVENANCE = """
import json, sys
from importlib import metadata
out = {}
for name in sys.argv[1:]:
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        out[name] = None
    else:
        out[name] = json.loads(dist.read_text("direct_url.json") or "{}")
print(json.dumps(out))
"""


def check_provenance(bin_dir: Path, dist_dir: Path, expected: Sequence[str]) -> None:
    """Each of ours came from a file of ``dist_dir``; the foreign project is not installed."""
    names = [dist.name for dist in DISTRIBUTIONS]
    found = json.loads(run([str(bin_dir / "python"), "-c", _PROVENANCE, *names, FOREIGN]))
    if found[FOREIGN] is not None:
        raise Failure(f"the unrelated project {FOREIGN!r} was installed")
    for name in names:
        origin = found[name]
        if name not in expected:
            if origin is not None:
                raise Failure(f"{name} was installed although not asked for")
            continue
        path = Path(unquote(urlparse((origin or {}).get("url", "")).path))
        if path.parent.resolve() != dist_dir.resolve():
            raise Failure(f"{name} was not installed from {dist_dir}: {origin}")


def check_imports(bin_dir: Path, packages: Sequence[Distribution], cwd: Path) -> None:
    code = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]: print(importlib.import_module(name).__version__)"
    )
    versions = run([str(bin_dir / "python"), "-c", code, *(d.package for d in packages)], cwd=cwd)
    expected = [source_version(d) for d in packages]
    if versions.split() != expected:
        raise Failure(f"imported versions {versions.split()}, expected {expected}")


def check_cli(bin_dir: Path, cwd: Path) -> None:
    config = QUICKSTART / "capability-graph.json"
    described = json.loads(
        run([str(bin_dir / "capability-graph"), "describe", "--config", str(config)], cwd=cwd)
    )
    if not isinstance(described, dict) or "providers" not in described:
        raise Failure(f"describe printed an unexpected result: {described}")


def check_data(bin_dir: Path, cwd: Path) -> None:
    """Both packages read their data from the installed package, not from a checkout."""
    code = (
        "from capability_graph._testing import contract_files, load_schema\n"
        "from capability_graph_conformance.suite import Suite\n"
        "from capability_graph._testing import tokenize\n"
        "load_schema('tools.json'); load_schema('config.schema.json')\n"
        "assert tokenize('ΟΔΟΣ') == ['οδοσ']  # reads the packaged lexical-unicode.json\n"
        "print(contract_files()); print(Suite.packaged().root)"
    )
    for location in run([str(bin_dir / "python"), "-c", code], cwd=cwd).split():
        if "site-packages" not in Path(location).parts:
            raise Failure(f"an installed package reads its data from {location}")


def check_conformance(bin_dir: Path, cwd: Path) -> None:
    report_dir = cwd / "conformance-report"
    selection = [arg for pattern in CONFORMANCE_SELECTION for arg in ("-k", pattern)]
    run(
        [
            str(bin_dir / "cg-conformance"),
            "run",
            "--no-progress",
            "--report-dir",
            str(report_dir),
            *selection,
        ],
        cwd=cwd,
    )
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    surfaces = {s: report["bySurface"][s]["passed"] for s in ("sdk", "tool", "mcp", "cli")}
    verdicts = {s: report["surfaces"][s]["verdict"] for s in surfaces}
    # A selection is never a full run, so its overall verdict is "partial" at best: every surface
    # must pass what was selected, and run some of it.
    if set(verdicts.values()) != {"pass"} or not all(surfaces.values()):
        raise Failure(
            f"conformance selection: {report['verdictText']}, passed per surface {surfaces}"
        )


_FAKE_CODEX = """#!/bin/sh
echo started >> "{log}"
echo "codex-cli 9.9.9"
"""


def check_codex_without_extra(bin_dir: Path, cwd: Path) -> None:
    """Without the codex extra a codex match is unavailable + check_config; codex never runs."""
    fake_bin = cwd / "fake-bin"
    fake_bin.mkdir()
    log = cwd / "codex-started"
    codex = fake_bin / "codex"
    codex.write_text(_FAKE_CODEX.format(log=log), encoding="utf-8")
    codex.chmod(0o755)
    # The quickstart graph with the codex executor (file sources made absolute).
    quickstart = json.loads((QUICKSTART / "capability-graph.json").read_text(encoding="utf-8"))
    for source in quickstart["providers"]:
        if "path" in source:
            source["path"] = str(QUICKSTART / source["path"])
    config = cwd / "codex.json"
    config.write_text(json.dumps({**quickstart, "model": {"executor": "codex"}}), "utf-8")
    env = {**os.environ, "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [
            str(bin_dir / "capability-graph"),
            "match",
            "validate the request body",
            "--config",
            str(config),
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    error = json.loads(done.stderr.strip().splitlines()[-1]).get("error", {}) if done.stderr else {}
    if done.returncode != 1 or (error.get("code"), error.get("phase"), error.get("nextAction")) != (
        "CG_MODEL_UNAVAILABLE",
        "match",
        "check_config",
    ):
        raise Failure(f"codex without its extra: exit {done.returncode}, {done.stderr!r}")
    if log.exists():
        raise Failure("codex without its extra: the codex program was started")


def check_install(plan: Install, wheels: dict[str, Path], dist_dir: Path, work: Path) -> Path:
    step(
        f"install on Python {plan.python}: capability-graph[{plan.extras}]"
        + (" at the floors" if plan.pins else "")
    )
    bin_dir = install(plan, wheels, work)
    with_codex = "codex" in plan.extras.split(",")
    expected = [
        d.name for d in DISTRIBUTIONS if with_codex or d.name != "capability-graph-flowcast"
    ]
    check_provenance(bin_dir, dist_dir, expected)
    outside = Path(tempfile.mkdtemp(prefix=f"cg-outside-{plan.python}-", dir=work))
    check_imports(bin_dir, [d for d in DISTRIBUTIONS if d.name in expected], outside)
    check_cli(bin_dir, outside)
    check_data(bin_dir, outside)
    check_conformance(bin_dir, outside)
    if not with_codex:
        check_codex_without_extra(bin_dir, outside)
    print(
        f"  Python {plan.python}: provenance, imports, CLI smoke, data, conformance selection: ok",
        flush=True,
    )
    return bin_dir


def check_floor_tests(bin_dir: Path, requirements: Sequence[str], pins: Sequence[str]) -> None:
    """Run FLOOR_TESTS with the test tools and the test-support package added; the floors stay
    pinned (a test tool's own pin of a dependency, such as jsonschema, gives way to the floor)."""
    from packaging.requirements import Requirement

    pinned = {Requirement(pin).name for pin in pins}
    tools = [r for r in requirements if Requirement(r).name not in pinned]
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "--quiet"]
    run([*pip, *tools, *pins])
    # The shared test code the modules import; without dependencies, so that the packages under
    # test stay the installed wheels.
    run([*pip, "--no-deps", "--editable", str(ROOT / "python" / "capability-graph-testing")])
    pytest = [str(bin_dir / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    run([*pytest, "-k", FLOOR_TESTS_DESELECTED, *FLOOR_TESTS], cwd=ROOT)
    print(
        f"  floors: {len(FLOOR_TESTS)} test modules passed against the installed wheels", flush=True
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, required=True, help="the built sdists and wheels")
    parser.add_argument("--python", action="append", default=[], help="versions (3.11 ...)")
    parser.add_argument(
        "--test-requirement", action="append", default=[], help="for the floor tests"
    )
    args = parser.parse_args(argv)
    versions = args.python or ["3.11", "3.12", "3.13"]
    started = time.monotonic()
    try:
        wheels = check_contents(args.dist)
        with tempfile.TemporaryDirectory(prefix="cg-dists-") as tmp:
            work = Path(tmp)
            for index, version in enumerate(versions):
                minimal = index == len(versions) - 1 and len(versions) > 1
                extras = "mcp" if minimal else "mcp,openai,codex"
                check_install(Install(version, extras), wheels, args.dist, work)
            step(f"floors on Python {versions[0]}: {', '.join(floor_pins())}")
            pins = floor_pins()
            plan = Install(versions[0], "mcp,openai,codex", pins)
            bin_dir = check_install(plan, wheels, args.dist, work)
            check_floor_tests(bin_dir, args.test_requirement, pins)
    except Failure as failure:
        print(f"\ncheck_dists: FAILED: {failure}")
        return 1
    print(f"\ncheck_dists: passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
