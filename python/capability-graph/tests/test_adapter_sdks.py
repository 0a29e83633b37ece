"""The Tool Adapter's exports in the official SDKs (``adapter_user_program.py``): each SDK
serializes the tools exactly as exported, and the model's tool call runs through the adapter.
The typing session checks the same program with ``mypy --strict``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROGRAM = Path(__file__).with_name("adapter_user_program.py")


def test_each_sdk_sends_the_exported_tools_and_the_answered_call_runs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(PROGRAM)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.stderr == ""
    assert done.stdout.splitlines() == [
        "chat.completions: 5 tools sent as exported; list_capabilities -> ok",
        "responses: 5 tools sent as exported; list_capabilities -> ok",
        "messages: 5 tools sent as exported; list_capabilities -> ok",
    ]
