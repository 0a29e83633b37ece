"""A fake ``codex`` in ``sh``: cheap to start, many at once.

``exec`` spawns a child, records both pids, sleeps, then writes an ``unknown`` answer; optionally
it ignores SIGTERM. The concurrency and resource checks count what it started and what is still
alive.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

FAKE_CODEX = r"""#!/bin/sh
here=$(dirname "$0")
case "$1" in
  --version) echo "codex-cli 0.50.0"; exit 0 ;;
  sandbox) exit 0 ;;
  exec) ;;
  *) exit 2 ;;
esac
[ -f "$here/ignore-term" ] && trap '' TERM
cat > /dev/null
sleep 120 &
echo "$$ $!" > "$here/pids/$$"
sleep "$(cat "$here/sleep")"
last=""
previous=""
for argument in "$@"; do
  [ "$previous" = "--output-last-message" ] && last="$argument"
  previous="$argument"
done
printf '%s' '{"status":"unknown","candidates":[]}' > "$last"
: > "$here/done/$$"
"""


@dataclass
class ShCodex:
    """A fake ``codex`` on PATH: ``exec`` spawns a child, records both pids, then sleeps."""

    folder: Path

    @classmethod
    def install(cls, folder: Path, *, sleep_s: float = 60, ignore_term: bool = False) -> ShCodex:
        for sub in ("pids", "done"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        script = folder / "codex"
        script.write_text(FAKE_CODEX, encoding="utf-8")
        script.chmod(0o755)
        (folder / "sleep").write_text(f"{sleep_s}", encoding="utf-8")
        if ignore_term:
            (folder / "ignore-term").write_text("", encoding="utf-8")
        return cls(folder)

    def path_env(self) -> str:
        return f"{self.folder}{os.pathsep}{os.environ.get('PATH', '')}"

    def pids(self) -> list[int]:
        found: list[int] = []
        for entry in (self.folder / "pids").iterdir():
            with contextlib.suppress(ValueError, OSError):
                found += [int(p) for p in entry.read_text(encoding="ascii").split()]
        return found

    def started(self) -> int:
        return len(list((self.folder / "pids").iterdir()))

    def finished(self) -> int:
        return len(list((self.folder / "done").iterdir()))
