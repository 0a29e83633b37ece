"""Run every benchmark of the repository (the ``bench`` nox session) and print their ratios.

Each benchmark compares against a baseline measured in the same run. Extra arguments are passed
to every benchmark (e.g. ``nox -s bench -- --json``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    failures = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.stem}", flush=True)
        failures += (
            subprocess.run([sys.executable, str(script), *argv], check=False).returncode != 0
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
