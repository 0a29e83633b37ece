"""Distribution metadata that holds before anything is built (the ``package`` session checks the
built files themselves): licences, versions, names that are ours, floors, the README's commands
and CI running them."""

from __future__ import annotations

import json
import re
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import check_dists
import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTIONS = check_dists.DISTRIBUTIONS


def project(dist: check_dists.Distribution) -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((ROOT / dist.folder / "pyproject.toml").read_text("utf-8"))
    return data


def requirements(dist: check_dists.Distribution) -> list[Requirement]:
    table = project(dist)["project"]
    texts = list(table["dependencies"])
    for extra in table.get("optional-dependencies", {}).values():
        texts += extra
    return [Requirement(text) for text in texts]


def test_the_root_license_is_the_apache_2_0_text() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License\n                           Version 2.0")
    assert "END OF TERMS AND CONDITIONS" in text


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: d.name)
def test_every_distribution_ships_the_root_license(dist: check_dists.Distribution) -> None:
    assert (ROOT / dist.folder / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    table = project(dist)["project"]
    assert (table["license"], table["license-files"]) == ("Apache-2.0", ["LICENSE"])
    assert "LICENSE" in project(dist)["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]


def test_the_npm_package_ships_the_root_license_under_its_expression() -> None:
    manifest = json.loads((ROOT / "typescript" / "package.json").read_text(encoding="utf-8"))
    assert (ROOT / "typescript" / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    assert manifest["license"] == "Apache-2.0"
    assert "LICENSE" in manifest["files"]
    assert manifest["homepage"].startswith("https://")
    assert manifest["scripts"]["prepack"] == "npm run build"


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: d.name)
def test_every_distribution_has_authors_urls_and_classifiers(
    dist: check_dists.Distribution,
) -> None:
    table = project(dist)["project"]
    assert table["authors"]
    assert table["urls"]["Homepage"].startswith("https://")
    python = [
        c for c in table["classifiers"] if c.startswith("Programming Language :: Python :: 3.")
    ]
    assert python == [f"Programming Language :: Python :: 3.{minor}" for minor in (11, 12, 13)]
    assert "Typing :: Typed" in table["classifiers"]
    assert not [c for c in table["classifiers"] if c.startswith("License ::")]  # the expression


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: d.name)
def test_every_package_is_typed_and_versioned_from_one_source(
    dist: check_dists.Distribution,
) -> None:
    package = ROOT / dist.folder / "src" / dist.package
    assert (package / "py.typed").is_file()
    assert project(dist)["project"]["dynamic"] == ["version"]
    assert project(dist)["tool"]["hatch"]["version"]["path"] == f"src/{dist.package}/__init__.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+", check_dists.source_version(dist))


def test_the_packages_report_their_version() -> None:
    import capability_graph_conformance

    import capability_graph
    import capability_graph_flowcast

    for dist, module in zip(
        DISTRIBUTIONS,
        (capability_graph_flowcast, capability_graph, capability_graph_conformance),
        strict=True,
    ):
        assert module.__version__ == check_dists.source_version(dist)


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: d.name)
def test_no_distribution_depends_on_the_unrelated_flowcast_project(
    dist: check_dists.Distribution,
) -> None:
    assert check_dists.FOREIGN not in {requirement.name for requirement in requirements(dist)}
    assert dist.name.startswith("capability-graph")


def test_the_codex_extra_is_this_repository_s_flowcast() -> None:
    graph, flowcast = DISTRIBUTIONS[1], DISTRIBUTIONS[0]
    extras = project(graph)["project"]["optional-dependencies"]
    assert extras["codex"] == [f"{flowcast.name}=={check_dists.source_version(flowcast)}"]
    assert flowcast.name not in project(graph)["project"]["dependencies"]


def test_every_third_party_dependency_has_one_floor_across_distributions() -> None:
    pins = check_dists.floor_pins()
    names = {Requirement(pin).name for pin in pins}
    ours = {dist.name for dist in DISTRIBUTIONS}
    expected = {r.name for d in DISTRIBUTIONS for r in requirements(d)} - ours
    assert names == expected
    assert all(str(Requirement(pin).specifier).startswith("==") for pin in pins)


def readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)


def test_the_readme_commands_never_pip_install_into_the_system_python() -> None:
    main_job, tests = readme_commands()
    setup = 'python3 -m venv .venv-nox && .venv-nox/bin/python -m pip install --quiet "nox=='
    for command in (main_job, tests):
        assert command.startswith(setup)
        assert "python3 -m pip" not in command
    assert main_job.endswith(".venv-nox/bin/python -m nox -s conformance")
    assert tests.endswith(".venv-nox/bin/python -m nox")


def test_ci_runs_the_readme_test_command_with_the_system_python() -> None:
    _, tests = readme_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "PYTHON=/usr/bin/python3\n" in ci
    assert "\n" + tests.replace("python3 -m venv", '"$PYTHON" -m venv', 1) + "\n" in ci


# -- the contents check of the package session, on wheels made here ------------------------------

FLOWCAST = DISTRIBUTIONS[0]
METADATA = """Metadata-Version: 2.4
Name: capability-graph-flowcast
Version: {version}
Author: Capability Graph maintainers
License-Expression: Apache-2.0
License-File: LICENSE
Project-URL: Homepage, https://capability-graph.dev
Classifier: Typing :: Typed

flowcast
"""


def wheel(tmp_path: Path, *, omit: str = "", license_text: bytes | None = None) -> Path:
    version = check_dists.source_version(FLOWCAST)
    info = f"capability_graph_flowcast-{version}.dist-info"
    files = {
        f"{info}/METADATA": METADATA.format(version=version).encode(),
        f"{info}/licenses/LICENSE": license_text or (ROOT / "LICENSE").read_bytes(),
        "capability_graph_flowcast/__init__.py": b"",
        "capability_graph_flowcast/py.typed": b"",
    }
    path = tmp_path / f"capability_graph_flowcast-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            if name != omit:
                archive.writestr(name, data)
    return path


def test_the_contents_check_accepts_a_complete_wheel(tmp_path: Path) -> None:
    check_dists.check_wheel(wheel(tmp_path), FLOWCAST)


@pytest.mark.parametrize("missing", ["licenses/LICENSE", "py.typed"])
def test_the_contents_check_rejects_a_wheel_without_license_or_py_typed(
    tmp_path: Path, missing: str
) -> None:
    version = check_dists.source_version(FLOWCAST)
    omit = {
        "licenses/LICENSE": f"capability_graph_flowcast-{version}.dist-info/licenses/LICENSE",
        "py.typed": "capability_graph_flowcast/py.typed",
    }[missing]
    with pytest.raises(check_dists.Failure, match=f"lacks {re.escape(omit)}$"):
        check_dists.check_wheel(wheel(tmp_path, omit=omit), FLOWCAST)


def test_the_contents_check_rejects_another_license_text(tmp_path: Path) -> None:
    with pytest.raises(check_dists.Failure, match="LICENSE differs from the repository's"):
        check_dists.check_wheel(wheel(tmp_path, license_text=b"MIT License\n"), FLOWCAST)


# A link or image on a package index page resolves against the index, not the repository: a
# relative one is a dead link there.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)[^)]*\)|<(https?://[^>]+)>")


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: d.name)
def test_every_long_description_links_absolutely_and_says_how_to_use_it(
    dist: check_dists.Distribution,
) -> None:
    readme_name = project(dist)["project"]["readme"]
    text = (ROOT / dist.folder / readme_name).read_text(encoding="utf-8")
    targets = [a or b for a, b in _LINK.findall(text)]
    relative = [t for t in targets if not t.startswith(("https://", "http://", "#", "mailto:"))]
    assert relative == []
    assert "```sh\npip install " in text  # the first command a user types
    assert len(text.splitlines()) >= 15  # a page, not a line
