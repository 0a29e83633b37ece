"""``doctor`` reads the configuration and each provider definition once.

The CLI runs as a subprocess (``python -m capability_graph.cli doctor``) with a
``sitecustomize`` module first on its path that installs an audit hook recording every ``open``
of the watched files: ``open()`` and ``os.open`` both raise the interpreter's ``open`` audit
event, so every way the core could read a file is seen. (A FIFO cannot stand in for the
configuration: a configuration that is not a regular file is refused before it is read, by
contract.)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from capability_graph_testing.common import capability, provider
from capability_graph_testing.surfaces import cli_process

#: Imported at the start of the CLI's interpreter: counts the opens of the paths in ``WATCH``
#: (os.pathsep-separated) and writes ``{path: count}`` to ``OPENS`` at exit.
WATCHER = """
import atexit, json, os, sys

watched = {os.path.realpath(p): 0 for p in os.environ["WATCH"].split(os.pathsep)}

def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(args[0]))
        if path in watched:
            watched[path] += 1

def report():
    with open(os.environ["OPENS"], "w", encoding="utf-8") as out:
        json.dump(watched, out)

atexit.register(report)
sys.addaudithook(hook)
"""


def doctor_opens(
    tmp_path: Path, config: Path, *watched: Path
) -> tuple[subprocess.CompletedProcess[str], dict[Path, int]]:
    """Run ``doctor --json`` on ``config``; return the run and how often the configuration and
    each watched file were opened."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(WATCHER, encoding="utf-8")
    opens = tmp_path / "opens.json"
    paths = [config, *watched]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")])),
        "WATCH": os.pathsep.join(str(p) for p in paths),
        "OPENS": str(opens),
    }
    run = cli_process("doctor", "--json", "--config", str(config), env=env)
    counted: dict[str, int] = json.loads(opens.read_text(encoding="utf-8"))
    return run, {path: counted[os.path.realpath(path)] for path in paths}


def graph(tmp_path: Path, definition: Any) -> tuple[Path, Path]:
    (tmp_path / "acme.json").write_text(json.dumps(definition), encoding="utf-8")
    config = tmp_path / "capability-graph.json"
    config.write_text(json.dumps({"providers": [{"path": "acme.json"}]}), encoding="utf-8")
    return config, tmp_path / "acme.json"


def test_doctor_on_a_healthy_graph_opens_the_configuration_once(tmp_path: Path) -> None:
    config, definition = graph(tmp_path, provider("acme", capability("a")))
    run, opens = doctor_opens(tmp_path, config, definition)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["status"] == "ok"
    assert opens[config] == 1


def test_doctor_on_a_healthy_graph_opens_each_provider_file_once(tmp_path: Path) -> None:
    config, definition = graph(tmp_path, provider("acme", capability("a")))
    run, opens = doctor_opens(tmp_path, config, definition)
    assert run.returncode == 0, run.stderr
    assert opens[definition] == 1


def test_doctor_names_the_cause_of_a_failing_provider_file_without_reading_it_again(
    tmp_path: Path,
) -> None:
    bad = provider("acme", capability("a", relations=[{"kind": "requires", "target": "zz"}]))
    config, definition = graph(tmp_path, bad)
    run, opens = doctor_opens(tmp_path, config, definition)
    assert run.returncode == 1
    source = next(c for c in json.loads(run.stdout)["checks"] if c["id"] == "source.0")
    assert source["message"] == (
        "CG_RELATION_INVALID: Provider definition declares an invalid relation "
        f"(file {definition}; provider acme; capability acme::a: relation requires -> zz: "
        "the target is not a capability of this provider)"
    )
    assert opens[definition] == 1


def test_doctor_names_the_cause_of_an_unreadable_configuration_without_reading_it_again(
    tmp_path: Path,
) -> None:
    config = tmp_path / "capability-graph.json"
    config.write_text('{"providers": [}', encoding="utf-8")
    run, opens = doctor_opens(tmp_path, config)
    assert run.returncode == 1
    assert json.loads(run.stderr)["error"]["code"] == "CG_CONFIG_INVALID"
    assert json.loads(run.stdout)["checks"][0]["message"] == (
        f"Cannot read the configuration: {config} has a JSON syntax error at line 1, column 16: "
        "Expecting value"
    )
    assert opens[config] == 1
