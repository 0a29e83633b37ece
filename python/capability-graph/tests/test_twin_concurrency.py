"""The blocking twin under threads: ``close()``, ``reload()`` and queries from many threads at
once. Every call ends with a result or a ``GraphError`` (``CG_GRAPH_CLOSED`` once close won the
race); every ``close()`` returns; no thread, event loop or asyncio traceback is left behind."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from capability_graph import BlockingCapabilityGraph, GraphError
from capability_graph_testing.common import capability, inline, provider
from capability_graph_testing.reliability import twin_storm

CONFIG = {
    **inline(provider("acme", *(capability(f"c{n}") for n in range(40)))),
    "model": {"executor": "lexical"},
}


def test_eight_threads_closing_at_once_all_return_and_leave_no_thread_or_loop() -> None:
    storm = twin_storm(CONFIG, rounds=20, closers=8, workers=0)
    assert storm.wrong == []
    assert storm.hung == 0
    assert storm.loops_open == 0
    assert storm.threads_left == 0


def test_calls_racing_close_end_with_a_result_or_graph_closed() -> None:
    storm = twin_storm(CONFIG, rounds=10, closers=4, workers=8)
    assert storm.wrong == []
    assert storm.hung == 0
    assert set(storm.calls) <= {"result", "CG_GRAPH_CLOSED"}
    assert storm.calls["CG_GRAPH_CLOSED"] > 0  # close did win some races
    assert storm.threads_left == 0


def test_a_reload_in_flight_when_another_thread_closes_is_a_result_or_graph_closed(
    tmp_path: Path,
) -> None:
    # A definition large enough that its reload is still being built when close() arrives.
    definition = provider("big", *(capability(f"c{n}") for n in range(5000)))
    (tmp_path / "big.json").write_text(json.dumps(definition), encoding="utf-8")
    (tmp_path / "config.json").write_text('{"providers": [{"path": "big.json"}]}', "utf-8")
    outcomes: list[object] = []
    for _ in range(5):
        graph = BlockingCapabilityGraph.open(tmp_path / "config.json")
        reloading = threading.Barrier(2)

        def reload(
            graph: BlockingCapabilityGraph = graph, go: threading.Barrier = reloading
        ) -> None:
            go.wait()
            try:
                outcomes.append(graph.reload().ok)
            except GraphError as error:
                outcomes.append(error.code)
            except BaseException as error:
                outcomes.append(repr(error))

        thread = threading.Thread(target=reload)
        thread.start()
        reloading.wait()
        time.sleep(0.05)  # the reload is on its way (when it is not, the result is still valid)
        graph.close()
        thread.join(60)
        assert not thread.is_alive()
    assert set(map(str, outcomes)) <= {"True", "CG_GRAPH_CLOSED"}, outcomes


def test_calls_after_close_from_many_threads_are_graph_closed() -> None:
    graph = BlockingCapabilityGraph.open(CONFIG)
    graph.close()
    codes: list[str] = []

    def call() -> None:
        try:
            graph.list()
        except GraphError as error:
            codes.append(error.code)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert codes == ["CG_GRAPH_CLOSED"] * 8


def test_a_storm_in_a_fresh_process_prints_nothing_on_stderr() -> None:
    script = textwrap.dedent(
        f"""
        import json, logging
        from capability_graph_testing.reliability import twin_storm
        # -X dev logs a WARNING for any callback slower than 0.1 s, which a loaded machine
        # produces; errors (a task destroyed pending, an exception never retrieved) still show.
        logging.getLogger("asyncio").setLevel(logging.ERROR)
        CONFIG = json.loads({json.dumps(CONFIG)!r})
        storm = twin_storm(CONFIG, rounds=10, closers=8, workers=8)
        assert not storm.wrong and not storm.hung and not storm.threads_left, storm.figures()
        """
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-X", "dev", "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""
