"""The packages that read repository files at run time carry them when built, although the
repository keeps them once: a wheel built from the checkout, and one built from the sdist, holds
every file its build hook names, byte for byte; the unpacked wheels read them with no checkout
around; the installed packages read what the repository holds; a build that finds the files
nowhere fails.
(The ``package`` session also installs the built wheels into fresh venvs and runs the suite.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import check_dists
import pytest
from capability_graph_conformance.suite import Suite
from hatchling.builders.sdist import SdistBuilder
from hatchling.builders.wheel import WheelBuilder

from capability_graph._testing import load_schema

ROOT = Path(__file__).resolve().parents[2]
#: project folder -> its package (the wheel's top folder).
PROJECTS = {
    "python/capability-graph": "capability_graph",
    "conformance/harness": "capability_graph_conformance",
}


def hook_config(project: str) -> dict[str, Any]:
    data = tomllib.loads((ROOT / project / "pyproject.toml").read_text(encoding="utf-8"))
    config: dict[str, Any] = data["tool"]["hatch"]["build"]["hooks"]["custom"]
    return config


def expected_files(project: str) -> dict[str, bytes]:
    """What the wheel must hold: path in the wheel -> the repository file's bytes."""
    (dist,) = (d for d in check_dists.DISTRIBUTIONS if d.folder == project)
    return check_dists.repository_files(dist)


def wheel_data(wheel: Path, project: str) -> dict[str, bytes]:
    target = hook_config(project)["target"] + "/"
    with zipfile.ZipFile(wheel) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n.startswith(target)}


def _copy_project(project: str, destination: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "dist", "build")
    return Path(shutil.copytree(ROOT / project, destination / project, ignore=ignore))


def _extract(sdist: Path, into: Path) -> None:
    """Unpack our own sdist. The "data" filter (refuse links out, absolute names, devices) exists
    from Python 3.11.4 on; Debian's 3.11.2, on which CI runs, lacks it, so there every member is
    checked here to stay inside ``into`` before anything is written."""
    with tarfile.open(sdist) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(into, filter="data")
            return
        for member in archive.getmembers():
            target = (into / member.name).resolve()
            assert target.is_relative_to(into.resolve()), member.name
            assert member.isfile() or member.isdir(), member.name
        archive.extractall(into)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    """Per project: a wheel built from the checkout, its sdist, and a wheel built from that sdist
    unpacked far from any checkout."""
    out = tmp_path_factory.mktemp("dist")
    results: dict[str, dict[str, Path]] = {}
    for project in PROJECTS:
        root = str(ROOT / project)
        wheel = Path(next(WheelBuilder(root).build(directory=str(out), versions=["standard"])))
        sdist = Path(next(SdistBuilder(root).build(directory=str(out), versions=["standard"])))
        unpacked = tmp_path_factory.mktemp("from-sdist")
        _extract(sdist, unpacked)
        (source,) = unpacked.iterdir()
        from_sdist_dir = tmp_path_factory.mktemp("wheel-from-sdist")
        builder = WheelBuilder(str(source))
        from_sdist = Path(next(builder.build(directory=str(from_sdist_dir), versions=["standard"])))
        results[project] = {"wheel": wheel, "sdist": sdist, "from_sdist": from_sdist}
    return results


@pytest.mark.slow
@pytest.mark.parametrize("project", PROJECTS)
def test_the_wheel_carries_every_repository_file_it_names(
    built: dict[str, dict[str, Path]], project: str
) -> None:
    expected = expected_files(project)
    assert expected  # the hook names something that exists
    assert wheel_data(built[project]["wheel"], project) == expected


@pytest.mark.slow
@pytest.mark.parametrize("project", PROJECTS)
def test_a_wheel_built_from_the_sdist_carries_the_same_files(
    built: dict[str, dict[str, Path]], project: str
) -> None:
    assert wheel_data(built[project]["from_sdist"], project) == expected_files(project)


@pytest.mark.slow
def test_the_unpacked_wheels_read_their_own_files(
    built: dict[str, dict[str, Path]], tmp_path: Path
) -> None:
    site = tmp_path / "site"
    for project in PROJECTS:
        with zipfile.ZipFile(built[project]["from_sdist"]) as archive:
            archive.extractall(site)
    program = (
        "from capability_graph._testing import contract_files, load_schema\n"
        "from capability_graph_conformance.suite import Suite\n"
        "suite = Suite.packaged()\n"
        "print(contract_files())\n"
        "print(len(load_schema('tools.json')['tools']))\n"
        "from capability_graph._testing import tokenize\n"
        "assert tokenize('ΟΔΟΣ') == ['οδοσ']  # reads the packaged lexical-unicode.json\n"
        "print(suite.root)\n"
        "print(len(suite.vectors))\n"
    )
    # The unpacked wheels first on the path: they shadow the editable installs of this venv.
    env = {**os.environ, "PYTHONPATH": str(site)}
    run = subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    contract, tools, suite_root, vectors = run.stdout.splitlines()
    assert Path(contract) == site / "capability_graph" / "_spec"
    assert int(tools) == 5
    assert Path(suite_root) == site / "capability_graph_conformance" / "data"
    assert int(vectors) == len(
        list((ROOT / "conformance/vectors/capability-graph").rglob("*.json"))
    )


def test_the_installed_packages_read_the_repository_s_files() -> None:
    """Installed editable (the tests' venv: the checkout itself) or from a wheel (the nox
    sessions: the files copied at build time), the packages read what the repository holds."""
    schemas = ROOT / "spec" / "capability-graph" / "schemas"
    for path in sorted(schemas.glob("*.schema.json")):
        assert load_schema(path.name) == json.loads(path.read_text(encoding="utf-8")), path.name
    tools = json.loads((ROOT / "spec/capability-graph/tools.json").read_text(encoding="utf-8"))
    assert load_schema("tools.json") == tools
    packaged, repository = Suite.packaged(), Suite.from_repository(ROOT)
    assert [v.data for v in packaged.vectors] == [v.data for v in repository.vectors]
    assert packaged.taxonomy == repository.taxonomy


def test_a_build_without_the_files_fails(tmp_path: Path) -> None:
    """A project folder with neither the repository around it nor the sdist's files inside:
    the build fails instead of shipping a package without its data."""
    project = _copy_project("python/capability-graph", tmp_path)
    with pytest.raises(RuntimeError, match=r"neither the repository .* nor the sdist"):
        next(WheelBuilder(str(project)).build(directory=str(tmp_path), versions=["standard"]))
