"""spawn_capture / spawn_cli and their blocking twins, with real processes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import (
    Twin,
    alive,
    tree_script,
    wait_for_lines,
    wait_for_lines_async,
)

PATH_ONLY = {"PATH": os.environ.get("PATH", os.defpath)}


def test_capture_returns_merged_output_and_exit_code(twin: Twin) -> None:
    result = twin("spawn_capture", "sh", ["-c", "printf out; printf err >&2; printf more; exit 3"])
    assert result == flowcast.SpawnResult(stdout="outerrmore", exit_code=3, timed_out=False)


def test_capture_of_a_missing_program_reports_enoent_without_raising(twin: Twin) -> None:
    result = twin("spawn_capture", "flowcast-no-such-program-7f3a", [])
    assert (result.spawn_error, result.exit_code, result.stdout) == ("ENOENT", None, "")


def test_capture_of_a_non_executable_file_reports_eacces(twin: Twin, tmp_path: Path) -> None:
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    result = twin("spawn_capture", str(script), [])
    assert result.spawn_error == "EACCES"


def test_capture_in_a_missing_cwd_reports_enoent(twin: Twin, tmp_path: Path) -> None:
    result = twin("spawn_capture", "sh", ["-c", "true"], cwd=tmp_path / "missing")
    assert result.spawn_error == "ENOENT"


def test_capture_with_a_nul_byte_in_an_argument_reports_einval(twin: Twin) -> None:
    assert twin("spawn_capture", "echo", ["a\0b"]).spawn_error == "EINVAL"


def test_capture_runs_in_cwd(twin: Twin, tmp_path: Path) -> None:
    assert twin("spawn_capture", "pwd", [], cwd=tmp_path).stdout.strip() == str(tmp_path.resolve())


def test_env_replaces_the_environment(twin: Twin, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLOWCAST_OUTER", "outer")
    script = 'printf "%s|%s" "$FLOWCAST_INNER" "$FLOWCAST_OUTER"'
    result = twin("spawn_capture", "sh", ["-c", script], env=PATH_ONLY | {"FLOWCAST_INNER": "in"})
    assert result.stdout == "in|"


def test_without_env_the_process_inherits_the_environment(
    twin: Twin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOWCAST_OUTER", "outer")
    assert twin("spawn_capture", "sh", ["-c", 'printf "$FLOWCAST_OUTER"']).stdout == "outer"


def test_stdin_text_is_written_then_closed(twin: Twin) -> None:
    assert twin("spawn_capture", "cat", [], stdin="über\n").stdout == "über\n"


def test_stdin_bytes_are_written_verbatim(twin: Twin) -> None:
    assert twin("spawn_capture", "od", ["-An", "-tx1"], stdin=b"\x00\xff").stdout.split() == [
        "00",
        "ff",
    ]


def test_large_stdin_and_output_flow_without_deadlock(twin: Twin) -> None:
    data = "x" * (4 * 1024 * 1024)
    assert len(twin("spawn_capture", "cat", [], stdin=data).stdout) == len(data)


def test_without_stdin_the_process_reads_end_of_file(twin: Twin) -> None:
    started = time.monotonic()
    assert twin("spawn_capture", "cat", [], timeout=5).stdout == ""
    assert time.monotonic() - started < 2


def test_output_over_16_mib_is_cut_with_one_marker(twin: Twin) -> None:
    script = "head -c 17825792 /dev/zero | tr '\\000' a"
    result = twin("spawn_capture", "sh", ["-c", script])
    assert result.truncated is True
    assert result.exit_code == 0
    assert result.stdout == "a" * flowcast.MAX_OUTPUT_BYTES + flowcast.TRUNCATION_MARKER


def test_output_of_exactly_16_mib_is_not_truncated(twin: Twin) -> None:
    script = f"head -c {flowcast.MAX_OUTPUT_BYTES} /dev/zero | tr '\\000' a"
    result = twin("spawn_capture", "sh", ["-c", script])
    assert (result.truncated, len(result.stdout)) == (False, flowcast.MAX_OUTPUT_BYTES)


def test_invalid_utf8_output_is_replaced_not_raised(twin: Twin) -> None:
    assert twin("spawn_capture", "printf", ["a\\377b"]).stdout == "a\ufffdb"


def test_timeout_kills_the_whole_process_tree(twin: Twin, tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    started = time.monotonic()
    result = twin(
        "spawn_capture", "sh", ["-c", tree_script(pids_file)], timeout=0.5, kill_grace=0.3
    )
    elapsed = time.monotonic() - started
    pids = [int(p) for p in wait_for_lines(pids_file, 3)]
    assert result.timed_out is True
    assert result.exit_code == -signal.SIGTERM
    assert [p for p in pids if alive(p)] == []
    assert not Path(f"/proc/{pids[0]}").exists()  # the direct child was reaped
    assert elapsed < 3


def test_timeout_sends_kill_after_the_grace_to_a_tree_ignoring_term(
    twin: Twin, tmp_path: Path
) -> None:
    pids_file = tmp_path / "pids"
    script = "trap '' TERM; " + tree_script(pids_file)
    started = time.monotonic()
    result = twin("spawn_capture", "sh", ["-c", script], timeout=0.3, kill_grace=0.4)
    elapsed = time.monotonic() - started
    pids = [int(p) for p in wait_for_lines(pids_file, 3)]
    assert result.timed_out is True
    assert result.exit_code == -signal.SIGKILL
    assert [p for p in pids if alive(p)] == []
    assert 0.6 < elapsed < 3


def test_timeout_keeps_the_output_printed_before_it(twin: Twin) -> None:
    result = twin(
        "spawn_capture", "sh", ["-c", "printf early; sleep 30"], timeout=0.3, kill_grace=0.2
    )
    assert (result.stdout, result.timed_out) == ("early", True)


def test_a_process_finishing_in_time_is_not_timed_out(twin: Twin) -> None:
    result = twin("spawn_capture", "sh", ["-c", "printf quick"], timeout=5)
    assert (result.stdout, result.timed_out, result.exit_code) == ("quick", False, 0)


@pytest.mark.parametrize("code", [0, 3])
def test_stop_group_stops_what_an_exited_process_left_running(
    twin: Twin, tmp_path: Path, code: int
) -> None:
    # A background child holding the output pipe: without stop_group the call would wait for it
    # up to the timeout; with it the group is stopped as soon as the process exits.
    pid_file = tmp_path / "pid"
    script = f"sleep 30 & echo $! > {pid_file}; printf done; exit {code}"
    started = time.monotonic()
    result = twin("spawn_capture", "sh", ["-c", script], timeout=20, kill_grace=1, stop_group=True)
    elapsed = time.monotonic() - started
    (background,) = [int(p) for p in wait_for_lines(pid_file, 1)]
    assert (result.stdout, result.exit_code, result.timed_out) == ("done", code, False)
    assert not alive(background)
    assert elapsed < 10


def test_cancelling_the_awaiting_task_kills_and_reaps_the_tree_first(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"

    async def scenario() -> list[int]:
        task = asyncio.create_task(
            flowcast.spawn_capture("sh", ["-c", tree_script(pids_file)], kill_grace=0.3)
        )
        pids = [int(p) for p in await wait_for_lines_async(pids_file, 3)]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [p for p in pids if alive(p)] == []  # already gone when CancelledError arrived
        assert not Path(f"/proc/{pids[0]}").exists()
        return pids

    assert len(asyncio.run(scenario())) == 3


def test_cancelling_spawn_cli_kills_a_tree_ignoring_term(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    script = "trap '' TERM; " + tree_script(pids_file)

    async def scenario() -> list[int]:
        task = asyncio.create_task(flowcast.spawn_cli("sh", ["-c", script], kill_grace=0.2))
        pids = [int(p) for p in await wait_for_lines_async(pids_file, 3)]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return [p for p in pids if alive(p)]

    assert asyncio.run(scenario()) == []


def test_an_asyncio_timeout_around_spawn_kills_the_tree(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"

    async def scenario() -> None:
        async with asyncio.timeout(0.5):
            await flowcast.spawn_cli("sh", ["-c", tree_script(pids_file)], kill_grace=0.2)

    with pytest.raises(TimeoutError):
        asyncio.run(scenario())
    pids = [int(p) for p in wait_for_lines(pids_file, 3)]
    assert [p for p in pids if alive(p)] == []


def test_ctrl_c_in_the_blocking_twin_kills_the_tree(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    argv = ["-c", tree_script(pids_file)]
    program = (
        "import signal, sys\nimport capability_graph_flowcast as flowcast\n"
        # Ctrl-C as a terminal delivers it, also when this test runs with SIGINT ignored (a
        # shell's background job): the program under test is the one that must handle it.
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "try:\n"
        f"    flowcast.spawn_capture_sync('sh', {argv!r}, kill_grace=0.2)\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(42)\n"
    )
    with subprocess.Popen([sys.executable, "-c", program]) as proc:
        pids = [int(p) for p in wait_for_lines(pids_file, 3, timeout=10)]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 42
    assert [p for p in pids if alive(p)] == []


def test_blocking_twin_works_inside_a_running_event_loop() -> None:
    async def scenario() -> str:
        return flowcast.spawn_cli_sync("sh", ["-c", "printf inside"])

    assert asyncio.run(scenario()) == "inside"


def test_spawn_cli_returns_the_output_of_a_zero_exit(twin: Twin) -> None:
    assert twin("spawn_cli", "sh", ["-c", "printf ok; printf warn >&2"]) == "okwarn"


def test_spawn_cli_raises_spawn_error_with_errno_name_for_a_missing_program(twin: Twin) -> None:
    with pytest.raises(flowcast.SpawnError) as caught:
        twin("spawn_cli", "flowcast-no-such-program-7f3a", ["--version"])
    error = caught.value
    assert (error.code, error.spawn_error, error.exit_code) == ("SPAWN_ERROR", "ENOENT", None)
    assert "No such file or directory" in str(error)


def test_spawn_cli_raises_spawn_error_with_exit_code_and_output(twin: Twin) -> None:
    with pytest.raises(flowcast.SpawnError) as caught:
        twin("spawn_cli", "sh", ["-c", "printf 'it broke'; exit 2"])
    error = caught.value
    assert (error.spawn_error, error.exit_code, error.output) == (None, 2, "it broke")
    assert str(error) == "'sh' exited with code 2: it broke"


def test_spawn_cli_message_keeps_only_the_output_tail(twin: Twin) -> None:
    with pytest.raises(flowcast.SpawnError) as caught:
        twin("spawn_cli", "sh", ["-c", "head -c 2000 /dev/zero | tr '\\000' x; printf END; exit 1"])
    assert str(caught.value).endswith("x" * 497 + "END")
    assert len(str(caught.value)) < 600


def test_spawn_cli_names_the_signal_that_ended_the_process(twin: Twin) -> None:
    with pytest.raises(flowcast.SpawnError) as caught:
        twin("spawn_cli", "sh", ["-c", "kill -9 $$"])
    assert caught.value.exit_code == -9
    assert str(caught.value) == "'sh' was killed by SIGKILL"


def test_spawn_cli_raises_timeout_error_on_timeout(twin: Twin) -> None:
    with pytest.raises(flowcast.TimeoutError) as caught:
        twin("spawn_cli", "sh", ["-c", "sleep 30"], timeout=0.2, kill_grace=0.2)
    assert (caught.value.code, caught.value.timed_out) == ("TIMEOUT", True)
    assert str(caught.value) == "'sh' timed out after 0.2s"


def test_spawn_cli_timeout_is_also_a_builtin_timeout_error(twin: Twin) -> None:
    with pytest.raises(TimeoutError):
        twin("spawn_cli", "sh", ["-c", "sleep 30"], timeout=0.2, kill_grace=0.2)


def test_spawn_cli_passes_stdin(twin: Twin) -> None:
    assert twin("spawn_cli", "cat", [], stdin="prompt text") == "prompt text"


def test_a_string_given_as_args_is_a_type_error(twin: Twin) -> None:
    with pytest.raises(TypeError):
        twin("spawn_capture", "echo", "hello")


@pytest.mark.parametrize("timeout", [0, -1.0])
def test_a_non_positive_timeout_is_a_value_error(twin: Twin, timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        twin("spawn_capture", "true", [], timeout=timeout)


def test_concurrent_spawns_do_not_mix_output() -> None:
    async def scenario() -> list[str]:
        return list(
            await asyncio.gather(
                *(flowcast.spawn_cli("sh", ["-c", f"sleep 0.0{i}; printf {i}"]) for i in range(8))
            )
        )

    assert asyncio.run(scenario()) == [str(i) for i in range(8)]


def _running_with_argument(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if token.encode() in argv and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("ticks", [0, 1, 2, 5])
def test_cancelling_while_the_process_starts_leaves_nothing_running(ticks: int) -> None:
    token = f"31.{ticks}4159"

    async def scenario() -> None:
        task = asyncio.create_task(
            flowcast.spawn_capture("sh", ["-c", f"sleep {token} & sleep {token}"], kill_grace=0.2)
        )
        for _ in range(ticks):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert _running_with_argument(token) == []
