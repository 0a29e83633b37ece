"""Sessions for the Capability Graph workspace. ``nox`` runs the default ones (what CI runs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["lint", "spec", "codegen", "typing", "tests", "package", "typescript"]
#: The Python of the default sessions (what CI runs): nox's own interpreter when it is 3.11 (in
#: CI a venv of the system Python, which proves the README's commands there), else python3.11.
PYTHON = "3.11"

PYPROJECT = nox.project.load_toml("pyproject.toml")


def _group(name: str) -> list[str]:
    return list(nox.project.dependency_groups(PYPROJECT, name))


#: The project folders of the distributions, in dependency order.
DISTRIBUTIONS = ("python/flowcast", "python/capability-graph", "conformance/harness")


def _install_packages(
    session: nox.Session, *more: str, env: dict[str, str | None] | None = None
) -> None:
    # One command, so that the codex extra's capability-graph-flowcast is this folder's; ``more``
    # (other requirements) joins it, to resolve and build everything in one go.
    session.install(
        "./python/flowcast", "./python/capability-graph[mcp,openai,codex]", *more, env=env
    )


def _install_test_support(session: nox.Session) -> None:
    # The shared test code (tests, stress, bench); editable, because it reads spec/ and
    # conformance/vectors from this checkout. Installed after the packages it depends on.
    session.install("--editable", "./python/capability-graph-testing")


def _npm(session: nox.Session, *steps: tuple[str, ...], folder: str = "typescript") -> None:
    """In ``folder``: ``npm ci``, then ``npm STEP...`` for each step. Node 20+ and npm must be on
    PATH: the session never installs them."""
    for program in ("node", "npm"):
        if shutil.which(program) is None:
            session.error(f"the {session.name} session needs {program} (Node 20 or later) on PATH")
    with session.chdir(folder):
        session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
        for step in steps:
            session.run("npm", *step, external=True)


#: The main job's backend: uv (the README's command installs it next to nox) makes the venv and
#: installs in seconds where venv and pip take about a minute; plain venv and pip when nox has no
#: uv beside it (a nox installed on its own), so the session works either way.
MAIN_JOB_BACKEND = "uv|venv"


@nox.session(default=False, venv_backend=MAIN_JOB_BACKEND)
def conformance(session: nox.Session) -> None:
    """The main job: the conformance suite against the Python reference on all four surfaces."""
    # One command: one resolution, each of the three projects built once. The extras are the
    # reference's: mcp (the MCP surface), openai (the model vectors run the openai executor
    # against the scripted endpoint) and codex, as every other session installs them. The
    # harness is built here: it carries this checkout's suite. uv, unlike pip, writes no bytecode
    # at install unless asked: without it each of the run's ~750 processes of the reference (CLI
    # commands, MCP servers, the driver) compiles what it imports (the mcp and openai SDKs: about
    # 0.6 s each) wherever bytecode is not written back (PYTHONDONTWRITEBYTECODE, a read-only
    # tree), which made the run 1.7 times the CPU (700 CPU-seconds, not 410). pip compiles by
    # default.
    _install_packages(session, "./conformance/harness", env={"UV_COMPILE_BYTECODE": "1"})
    session.run("cg-conformance", "check")
    session.run("cg-conformance", "run", *session.posargs)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the test suite of every package and tool."""
    _install_packages(session)
    session.install("./conformance/harness")
    session.install(*_group("test"), *_group("codegen"))
    _install_test_support(session)
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session(python=PYTHON)
def typescript(session: nox.Session) -> None:
    """The TypeScript implementation (typescript/): npm ci, codegen drift check, build, type check,
    lint, unit tests, the packed tarball installed into a fresh project (check-package), then the
    conformance suite against it and against the Python reference on all four surfaces (--strict:
    no expected failures), and `cg-conformance compare --strict` of the two reports: the same
    outcome for every vector and surface, or the session fails. Needs Node 20+ and npm on PATH.
    Arguments (e.g. -k 'cg.cli.*') replace --strict and go to both runs."""
    _install_packages(session)  # the Python reference, compared with below
    session.install("./conformance/harness")
    _npm(
        session,
        ("run", "codegen:check"),
        ("run", "build"),
        ("run", "typecheck"),
        ("run", "lint"),
        ("test",),
        # The package as a user gets it: pack, install into a fresh project, the README's steps.
        ("run", "check-package"),
    )
    # The whole suite must pass; a selection (-k, -s) certifies only what ran, so it is not held
    # to --strict.
    selection = session.posargs or ["--strict"]
    # The reference is the harness's default implementation: no -i.
    for name, implementation in (
        ("typescript", ["-i", "typescript/conformance.json"]),
        ("python", []),
    ):
        session.run(
            "cg-conformance",
            "run",
            *implementation,
            "--report-dir",
            f"cg-conformance-report-{name}",
            *selection,
        )
    # Every vector's error expectation pins code, phase, message and nextAction exactly, so the
    # same outcome everywhere means the same error objects; a case failing on both sides is
    # compared by what it emitted.
    session.run(
        "cg-conformance",
        "compare",
        "--strict",
        "cg-conformance-report-python/report.json",
        "cg-conformance-report-typescript/report.json",
    )
    # A bounded generative campaign (a few minutes, every campaign and surface): TypeScript
    # against the reference on generated cases. A fixed seed and case counts that finish well
    # inside the time bound, so that every run sees the same cases whatever the machine's speed
    # (a case is rebuilt from the seed, the campaign and its index); the finds listed as known
    # do not fail the session, a new one does. The mcp campaign (frames on one server) is faster
    # and gets more cases.
    known = ("--expect-differences", "conformance/explore-known-differences.txt")
    names = ("call", "argv", "config", "budget", "lexical")
    campaigns = [arg for name in names for arg in ("-c", name)]
    _explore_typescript(
        session, "cg-conformance-explore", *campaigns, "--seed", "1", "--count", "120",
        "--time-budget", "900", *known,
    )  # fmt: skip
    _explore_typescript(
        session, "cg-conformance-explore-mcp", "-c", "mcp", "--seed", "1", "--count", "400",
        "--time-budget", "600", *known,
    )  # fmt: skip


def _explore_typescript(session: nox.Session, report_dir: str, *args: str) -> None:
    session.run(
        "cg-conformance",
        "explore",
        "-i",
        "typescript/conformance.json",
        "--report-dir",
        report_dir,
        "--write-vectors",
        f"{report_dir}/vectors",
        *args,
    )


@nox.session(default=False)
def explore(session: nox.Session) -> None:
    """A long generative campaign: TypeScript against the Python reference on generated cases of
    every campaign and surface (reports in cg-conformance-explore/). Arguments go to
    `cg-conformance explore` (default: a random seed, 2000 cases per campaign, one hour), e.g.
    `nox -s explore -- --seed 7 -c argv --count 500`."""
    _install_packages(session)
    session.install("./conformance/harness")
    _npm(session, ("run", "build"))
    _explore_typescript(
        session,
        "cg-conformance-explore",
        *(session.posargs or ["--count", "2000", "--time-budget", "3600"]),
    )


@nox.session(python=PYTHON)
def spec(session: nox.Session) -> None:
    """Check the spec: registry consistency (the enums step validates it), metaschemas, $refs,
    examples."""
    # tools/_spec.py takes its ECMA-262 pattern translation from the harness
    session.install("./conformance/harness")
    session.install(*_group("codegen"))
    session.run("python", "tools/codegen.py", "--check", "--step", "enums")
    session.run("python", "tools/check_spec.py", *session.posargs)


@nox.session(python=PYTHON)
def codegen(session: nox.Session) -> None:
    """Check that everything generated from spec/ is in sync: enums, models, tools.json, the
    taxonomy and operation tables, validators, defaults and the docs pages (tools/codegen.py;
    pass --write to regenerate)."""
    # The docs step runs example programs against the reference and reads the suite's
    # requirement coverage: it needs both packages.
    _install_packages(session)
    session.install("./conformance/harness")
    session.install(*_group("codegen"))
    write = "--write" in session.posargs
    session.run("python", "tools/codegen.py", *([] if write else ["--check"]))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """Lint and format-check with ruff."""
    session.install(*_group("lint"))
    session.run("ruff", "check", ".", *session.posargs)
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typing(session: nox.Session) -> None:
    """Type-check the packages with mypy (strict)."""
    _install_packages(session)
    session.install("./conformance/harness")
    session.install(*_group("typing"))
    _install_test_support(session)
    session.run(
        "mypy",
        "python/flowcast/src/capability_graph_flowcast",
        "python/capability-graph/src/capability_graph",
        "conformance/harness/src/capability_graph_conformance",
        "conformance/implementations/python_reference_driver.py",
        # the driver an implementer copies: plain Python, strict too
        "conformance/implementations/driver_skeleton.py",
        # a user's program on the public API: it must type-check strictly too
        "python/capability-graph/tests/sdk_user_script.py",
        # the Tool Adapter's exports handed to the openai and anthropic SDKs, no cast
        "python/capability-graph/tests/adapter_user_program.py",
        # the shared test code: the stress and bench tools build on it
        "python/capability-graph-testing/src/capability_graph_testing",
        *session.posargs,
    )


@nox.session(python=PYTHON)
def package(session: nox.Session) -> None:
    """Build every distribution, check it, install it from the built files only on 3.11-3.13
    (and once at the dependency floors), then import, run the CLI and a conformance selection;
    then run the README's "Use it" steps as written (tools/check_readme.py)."""
    session.install(*_group("package"))
    dist = Path(session.create_tmp()) / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    for project in DISTRIBUTIONS:
        session.run("python", "-m", "build", "--outdir", str(dist), project)
    built = sorted(str(path) for path in dist.iterdir())
    session.run("twine", "check", "--strict", *built)
    session.run("check-wheel-contents", *(path for path in built if path.endswith(".whl")))
    tests = [arg for requirement in _group("test") for arg in ("--test-requirement", requirement)]
    session.run("python", "tools/check_dists.py", "--dist", str(dist), *tests, *session.posargs)
    # The README's "Use it" steps, as written, on a copy of the repository.
    session.run("python", "tools/check_readme.py")


@nox.session(default=False)
def demo(session: nox.Session) -> None:
    """A walk through the quickstart graph: open it, run every operation, show an error."""
    _install_packages(session)
    session.run("python", "examples/demo.py", *session.posargs)


@nox.session(default=False)
def docs(session: nox.Session) -> None:
    """Build the site strictly (generated pages in sync, the conformance verdicts from a run of
    the suite against both implementations, the CJK web font installed from npm in
    tools/site-font and shipped with the site), then open it in headless Chromium (console
    errors, the Chinese text drawn with the shipped font, search). Needs Node 20+ and npm on
    PATH. Arguments go to tools/check_site.py (e.g. --screenshot FILE)."""
    _install_packages(session)
    session.install("./conformance/harness")  # the requirement coverage page
    session.install(*_group("docs"))
    session.run("python", "tools/codegen.py", "--check", "--step", "docs")
    # The conformance page's verdicts and matrices come from a run in this build, against both
    # implementations: the TypeScript one is built first.
    _npm(session, ("run", "build"))
    # Noto Sans SC for the Chinese text, pinned by tools/site-font/package-lock.json; the mkdocs
    # hook tools/site_font.py copies it into the site (and fails the build without it).
    _npm(session, folder="tools/site-font")
    session.run("python", "tools/site_conformance.py")
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", "site", env={"NO_MKDOCS_2_WARNING": "1"}
    )
    session.run("python", "tools/check_site.py", "--site", "site", *session.posargs)


@nox.session(default=False)
def stress(session: nox.Session) -> None:
    """The long reliability battery (fuzzing, reload and close storms), printing its figures."""
    _install_packages(session)
    session.install(*_group("test"))
    _install_test_support(session)
    session.run("python", "python/capability-graph/scripts/stress.py", *session.posargs)


@nox.session(name="stress-ts", default=False)
def stress_ts(session: nox.Session) -> None:
    """The long TypeScript reliability battery (typescript/scripts/stress.mjs): the suite's
    battery tests on CG_STRESS_SCALE times more cases, printing each section's figures. Arguments
    go to the script (--scale N, --sections a,b, --json FILE). Needs Node 20+ and npm on PATH."""
    _npm(session, ("run", "build"), ("run", "stress", "--", *session.posargs))


@nox.session(default=False)
def mutation(session: nox.Session) -> None:
    """Mutation testing of the reference with the conformance suite as the oracle: prints the
    mutation score per module and every surviving mutant (python/capability-graph/scripts/
    mutation.py; pass module file names to choose, --fresh to start over). Slow: minutes per
    module."""
    _install_packages(session)
    session.install("./conformance/harness")
    session.install(*_group("mutation"))
    session.run("python", "python/capability-graph/scripts/mutation.py", *session.posargs)


@nox.session(name="mutation-ts", default=False)
def mutation_ts(session: nox.Session) -> None:
    """Mutation testing of the TypeScript implementation with the conformance suite as the
    oracle (StrykerJS's command runner; typescript/scripts/mutation.mjs): prints the mutation
    score per module and every surviving mutant. Arguments go to `npm run mutation` (modules
    under src/, --sample N --seed S). Needs Node 20+ and npm on PATH. Slow: minutes per module."""
    session.install("./conformance/harness")
    _npm(session, ("run", "mutation", "--", *session.posargs))


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Run the benchmarks and print ratios against their baselines (the TypeScript ones beside
    the Python ones; they need Node 20+ and npm on PATH)."""
    _install_packages(session, "./conformance/harness")  # bench_suite runs the suite
    session.install(*_group("test"))
    _install_test_support(session)
    if shutil.which("npm") is not None:  # the TypeScript benchmarks run when Node is there
        _npm(session, ("run", "build"))
    session.run("python", "python/capability-graph/bench/run.py", *session.posargs)
