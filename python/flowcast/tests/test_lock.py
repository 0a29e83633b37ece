"""The resume lock, against real live, dead and reused-pid owners."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import wait_for_lines


def owner_file(lock: Path, pid: int, started_at: str, run_id: str = "r") -> None:
    lock.mkdir(parents=True)
    (lock / "owner.json").write_text(
        json.dumps({"pid": pid, "startedAt": started_at, "runId": run_id})
    )


def lock_at(path: Path, **options: object) -> flowcast.ResumeLock:
    return flowcast.ResumeLock(path, run_id="r", **options)  # type: ignore[arg-type]


HOLDER = """
import sys, time
import capability_graph_flowcast as flowcast
lock = flowcast.ResumeLock(sys.argv[1], run_id="r")
lock.acquire()
print("held", flush=True)
open(sys.argv[2], "w").write("held\\n")
time.sleep(30)
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """Another process holding the lock at tmp_path/lock."""
    lock = tmp_path / "lock"
    ready = tmp_path / "ready"
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(lock), str(ready)]) as proc:
        try:
            wait_for_lines(ready, 1, timeout=10)
            yield proc, lock
        finally:
            proc.kill()


def test_acquire_writes_owner_json(tmp_path: Path) -> None:
    lock = lock_at(tmp_path / "lock")
    owner = lock.acquire()
    data = json.loads((tmp_path / "lock" / "owner.json").read_text())
    assert data == {"pid": os.getpid(), "startedAt": owner.started_at, "runId": "r"}
    lock.release()
    assert not (tmp_path / "lock").exists()


def test_a_live_owner_in_another_process_is_lock_busy(
    holder: tuple[subprocess.Popen[bytes], Path],
) -> None:
    proc, path = holder
    with pytest.raises(flowcast.LockError, match=f"live process {proc.pid}") as caught:
        lock_at(path).acquire()
    assert caught.value.code == "LOCK_BUSY"


def test_waiting_on_a_live_owner_ends_in_lock_retry_exhausted(
    holder: tuple[subprocess.Popen[bytes], Path],
) -> None:
    _, path = holder
    started = time.monotonic()
    with pytest.raises(flowcast.LockError) as caught:
        lock_at(path, wait=True, retries=3, poll_interval=0.02).acquire()
    assert caught.value.code == "LOCK_RETRY_EXHAUSTED"
    assert time.monotonic() - started < 2


def test_a_dead_owner_is_taken_over(holder: tuple[subprocess.Popen[bytes], Path]) -> None:
    proc, path = holder
    proc.kill()
    proc.wait()
    owner = lock_at(path).acquire()
    assert owner.pid == os.getpid()
    assert json.loads((path / "owner.json").read_text())["pid"] == os.getpid()


def test_waiting_sees_the_owner_leave_and_takes_the_lock(
    holder: tuple[subprocess.Popen[bytes], Path],
) -> None:
    proc, path = holder
    proc.terminate()
    assert lock_at(path, wait=True, retries=200, poll_interval=0.01).acquire().pid == os.getpid()


def test_a_reused_pid_counts_as_a_dead_owner(tmp_path: Path) -> None:
    with subprocess.Popen(["sleep", "30"]) as other:
        try:
            owner_file(tmp_path / "lock", other.pid, "2001-01-01T00:00:00.000Z")
            assert lock_at(tmp_path / "lock").acquire().pid == os.getpid()
        finally:
            other.kill()


def test_a_live_pid_that_started_before_the_lock_is_busy(tmp_path: Path) -> None:
    with subprocess.Popen(["sleep", "30"]) as other:
        try:
            time.sleep(0.05)
            owner_file(tmp_path / "lock", other.pid, "2999-01-01T00:00:00.000Z")
            with pytest.raises(flowcast.LockError) as caught:
                lock_at(tmp_path / "lock").acquire()
            assert caught.value.code == "LOCK_BUSY"
        finally:
            other.kill()


def test_a_zombie_owner_counts_as_dead(tmp_path: Path) -> None:
    other = subprocess.Popen(["true"])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        state = Path(f"/proc/{other.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            break
        time.sleep(0.01)
    try:
        owner_file(tmp_path / "lock", other.pid, "2999-01-01T00:00:00.000Z")
        assert lock_at(tmp_path / "lock").acquire().pid == os.getpid()
    finally:
        other.wait()


def test_a_fresh_lock_without_owner_json_is_lock_owner_pending(tmp_path: Path) -> None:
    (tmp_path / "lock").mkdir()
    started = time.monotonic()
    with pytest.raises(flowcast.LockError) as caught:
        lock_at(tmp_path / "lock", owner_wait=0.2, poll_interval=0.02).acquire()
    assert caught.value.code == "LOCK_OWNER_PENDING"
    assert 0.2 <= time.monotonic() - started < 2


def test_an_owner_json_appearing_while_waiting_is_honoured(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    lock.mkdir()
    writer = subprocess.Popen(  # writes a live owner (the test process) after 0.1 s
        [
            sys.executable,
            "-c",
            "import json, sys, time; time.sleep(0.1); "
            "open(sys.argv[1], 'w').write(json.dumps({'pid': int(sys.argv[2]), "
            "'startedAt': '2999-01-01T00:00:00Z', 'runId': 'r'}))",
            str(lock / "owner.json"),
            str(os.getpid()),
        ]
    )
    with writer, pytest.raises(flowcast.LockError) as caught:
        lock_at(lock, owner_wait=5, poll_interval=0.02).acquire()
    assert caught.value.code == "LOCK_BUSY"


def test_a_stale_lock_without_owner_json_is_taken_over(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    lock.mkdir()
    old = time.time() - 7200
    os.utime(lock, (old, old))
    assert lock_at(lock, owner_wait=0.1).acquire().pid == os.getpid()


def test_a_corrupt_owner_json_is_treated_as_pending(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    lock.mkdir()
    (lock / "owner.json").write_text("{not json")
    with pytest.raises(flowcast.LockError) as caught:
        lock_at(lock, owner_wait=0.05, poll_interval=0.01).acquire()
    assert caught.value.code == "LOCK_OWNER_PENDING"


def test_release_leaves_a_lock_taken_over_by_another_owner(tmp_path: Path) -> None:
    lock = lock_at(tmp_path / "lock")
    lock.acquire()
    (tmp_path / "lock" / "owner.json").write_text(
        json.dumps({"pid": 1, "startedAt": "2000-01-01T00:00:00Z", "runId": "other"})
    )
    lock.release()
    assert (tmp_path / "lock" / "owner.json").exists()


def test_owner_json_follows_its_schema(tmp_path: Path) -> None:
    import jsonschema

    from capability_graph_testing.flowcast_support import SPEC_DIR

    schema = json.loads((SPEC_DIR / "schemas" / "lock-owner.schema.json").read_text())
    with lock_at(tmp_path / "lock"):
        owner = json.loads((tmp_path / "lock" / "owner.json").read_text())
    jsonschema.validate(owner, schema)


def test_two_processes_racing_for_a_dead_owners_lock_end_with_one_winner(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    with subprocess.Popen(["true"]) as gone:
        gone.wait()
    owner_file(lock, gone.pid, "2000-01-01T00:00:00Z")
    racer = (
        "import sys\nimport capability_graph_flowcast as flowcast\n"
        "lock = flowcast.ResumeLock(sys.argv[1], run_id='r', owner_wait=2)\n"
        "try:\n"
        "    lock.acquire()\n"
        "    print('won', flush=True)\n"
        "    sys.stdin.read()  # hold the lock until the test has heard from everyone\n"
        "except flowcast.LockError as e:\n"
        "    print(e.code, flush=True)\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", racer, str(lock)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outcomes = []
    for proc in procs:
        assert proc.stdout is not None
        outcomes.append(proc.stdout.readline().strip())
    for proc in procs:
        proc.communicate(timeout=20)
    assert outcomes.count("won") == 1
    assert set(outcomes) - {"won"} <= {"LOCK_BUSY"}
