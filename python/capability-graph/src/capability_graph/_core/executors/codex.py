"""The ``codex`` executor: the Codex CLI (``codex exec``) in a read-only sandbox, via flowcast.

``{"executor": "codex", "model"?: "NAME", "timeoutMs"?: N}``. Every match:

1. checks the prerequisites, and never falls back to an unsandboxed run when one is missing
   (``CG_MODEL_EXECUTOR_UNSAFE``): the platform is Linux or macOS; ``codex --version`` reports at
   least :data:`MIN_VERSION`; the platform sandbox works (``codex sandbox linux|macos -- true``
   exits 0). A successful check is remembered for the same binary (path, inode, size, mtime).
2. runs, in a fresh temporary folder ``T``::

       codex exec --sandbox read-only --skip-git-repo-check --cd T/work --color never
                  --output-schema T/schema.json --output-last-message T/last-message.json
                  [--model NAME] -

   with ``T/work`` empty, the prompt (instructions + the job as JSON) on stdin (``-``), and the
   final message read from ``T/last-message.json`` (stdout carries progress, not the answer).
3. projects what flowcast raised (CG-MODEL-15): could not start (ENOENT...) -> unavailable +
   check_config; ``TimeoutError`` -> timeout; non-zero exit -> unavailable + retry when
   ``flowcast.is_retryable`` says so (rate limits), check_config when the output talks about
   login/auth, context exceeded when it talks about the context window, else retry; a missing,
   oversized or non-JSON final message -> output too large / invalid.

flowcast kills the whole process tree when the deadline passes or the match is cancelled, and
(``stop_group``) when a run or probe exits, whatever its status: nothing of its group survives.
flowcast (the optional extra ``capability-graph[codex]``, imported as ``capability_graph_flowcast``)
is imported (off the event loop) only when a match runs; without it a match is
``CG_MODEL_UNAVAILABLE`` + ``check_config``, as for the ``openai`` executor without its extra.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any, Final

from ..._generated.taxonomy import REGISTRY, ErrorCode, NextAction, Phase
from ..errors import GraphError
from ..json import NotPureJson, parse_request_text
from .prompt import OUTPUT_SCHEMA, SYSTEM_PROMPT, drop_empty_reasons, payload
from .threads import Preparation

if TYPE_CHECKING:
    from .job import MatchJob

__all__ = ["MIN_VERSION", "CodexExecutor", "parse_version"]

#: The oldest Codex CLI accepted: it has ``exec --output-schema`` and ``codex sandbox``.
MIN_VERSION: Final = (0, 46, 0)
SUPPORTED_PLATFORMS: Final = {"linux": "linux", "darwin": "macos"}

#: Seconds between SIGTERM and SIGKILL when flowcast stops a codex process tree.
KILL_GRACE_S: Final = 1.0
#: The prerequisite probes never get more than this, whatever the deadline.
PROBE_TIMEOUT_S: Final = 15.0

_VERSION: Final = re.compile(r"(?<![\d.])(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?![\d.])")
_AUTH_TEXT: Final = re.compile(
    r"log ?in|logged|auth|unauthori[sz]ed|\b401\b|\b403\b|api[ _-]?key|credential", re.I
)
_CONTEXT_TEXT: Final = re.compile(r"context[ _-]?(length|window)|maximum context", re.I)


def _error(code: ErrorCode, action: NextAction | None = None) -> GraphError:
    default = REGISTRY[code].default_action
    return GraphError(code, Phase.MATCH, None, action if action is not None else default)


def _unsafe() -> GraphError:
    return _error(ErrorCode.CG_MODEL_EXECUTOR_UNSAFE)


def parse_version(output: str) -> tuple[int, int, int] | None:
    """The first ``X.Y.Z`` in ``codex --version`` output (``codex-cli 0.46.0``), else None."""
    found = _VERSION.search(output)
    if found is None:
        return None
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch


#: How long ``aclose`` waits for the flowcast import still running (it cannot be interrupted).
_IMPORT_JOIN_S: Final = 30.0


def _import_flowcast() -> Any:
    """flowcast's module, or None when the ``codex`` extra is not installed."""
    try:
        import capability_graph_flowcast
    except ImportError:
        return None
    return capability_graph_flowcast


class CodexExecutor:
    """Thread-safe; holds no process between matches."""

    name: Final = "codex"

    def __init__(self, model: str | None = None) -> None:
        self.model = model
        self._checked: set[tuple[Any, ...]] = set()
        self._lock = threading.Lock()
        self._flowcast = Preparation(_import_flowcast, "cg-codex")

    @classmethod
    def from_config(cls, model: Mapping[str, Any], where: str) -> CodexExecutor:
        name = model.get("model")
        return cls(name)

    async def match(self, job: MatchJob) -> object:
        platform = SUPPORTED_PLATFORMS.get(sys.platform)
        if platform is None:
            raise _unsafe()
        binary = shutil.which("codex")
        if binary is None:
            raise _error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG)
        flowcast = await self._flowcast.get()
        if flowcast is None:
            raise _error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG)
        try:
            await self._check_prerequisites(flowcast, binary, platform, job.deadline)
            with tempfile.TemporaryDirectory(prefix="cg-codex-") as root:
                return await self._exec(flowcast, binary, Path(root), job)
        except GraphError:
            raise
        except (flowcast.SpawnError, flowcast.TimeoutError, flowcast.SchemaError) as exc:
            raise _project_flowcast_error(flowcast, exc) from None

    async def aclose(self) -> None:
        """Wait (bounded) for the flowcast import if it is still running: no thread outlives
        the graph."""
        await self._flowcast.join(_IMPORT_JOIN_S)

    async def _check_prerequisites(
        self, flowcast: Any, binary: str, platform: str, deadline: float
    ) -> None:
        identity = _binary_identity(binary, platform)
        with self._lock:
            if identity is not None and identity in self._checked:
                return
        with tempfile.TemporaryDirectory(prefix="cg-codex-probe-") as empty:
            version = await _probe(flowcast, binary, ["--version"], empty, deadline)
            found = parse_version(version.stdout) if version.exit_code == 0 else None
            if found is None or found < MIN_VERSION:
                raise _unsafe()  # too old, or a version we cannot verify
            sandbox = await _probe(
                flowcast, binary, ["sandbox", platform, "--", "true"], empty, deadline
            )
            if sandbox.exit_code != 0:
                raise _unsafe()  # the platform sandbox does not work here
        if identity is not None:
            with self._lock:
                self._checked.add(identity)

    async def _exec(self, flowcast: Any, binary: str, root: Path, job: MatchJob) -> object:
        work = root / "work"
        work.mkdir()
        schema = root / "schema.json"
        schema.write_text(json.dumps(OUTPUT_SCHEMA), encoding="utf-8")
        last_message = root / "last-message.json"
        args = [
            "exec",
            "--sandbox",
            "read-only",
            "--skip-git-repo-check",
            "--cd",
            str(work),
            "--color",
            "never",
            "--output-schema",
            str(schema),
            "--output-last-message",
            str(last_message),
        ]
        if self.model is not None:
            args += ["--model", self.model]
        args.append("-")
        remaining = job.deadline - time.monotonic()
        if remaining <= 0:
            raise _error(ErrorCode.CG_MODEL_TIMEOUT)
        await flowcast.spawn_cli(
            binary,
            args,
            cwd=str(work),
            timeout=remaining,
            stdin=f"{SYSTEM_PROMPT}\n\n{payload(job)}\n",
            kill_grace=KILL_GRACE_S,
            # executors.md 10: a run, successful or not, leaves no process of its group behind
            # (a background child holding stdout would otherwise stall the match to its deadline).
            stop_group=True,
        )
        return _read_answer(last_message, job.max_output_bytes)


async def _probe(flowcast: Any, binary: str, args: list[str], cwd: str, deadline: float) -> Any:
    """Run a prerequisite probe; return flowcast's SpawnResult of a process that ran."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _error(ErrorCode.CG_MODEL_TIMEOUT)
    result = await flowcast.spawn_capture(
        binary,
        args,
        cwd=cwd,
        timeout=min(remaining, PROBE_TIMEOUT_S),
        kill_grace=KILL_GRACE_S,
        stop_group=True,
    )
    if result.spawn_error is not None:
        raise _error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG)
    if result.timed_out:
        raise _error(ErrorCode.CG_MODEL_TIMEOUT)
    return result


def _binary_identity(binary: str, platform: str) -> tuple[Any, ...] | None:
    try:
        real = os.path.realpath(binary)
        stat = os.stat(real)
    except OSError:
        return None
    return (real, stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, platform)


def _read_answer(path: Path, max_output_bytes: int) -> object:
    invalid = _error(ErrorCode.CG_MODEL_OUTPUT_INVALID)
    # Only a regular file the run wrote: a link or a fifo planted in the folder is neither
    # followed nor waited on (executors.md section 10).
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        raise invalid from None
    try:
        with os.fdopen(fd, "rb") as handle:
            if not S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise invalid
            data = handle.read(max_output_bytes + 1)
    except OSError:
        raise invalid from None
    if len(data) > max_output_bytes:
        raise _error(ErrorCode.CG_MODEL_OUTPUT_TOO_LARGE)
    try:  # by the rules of a request text, as the openai executor's content (CG-MODEL-26)
        output = parse_request_text(data)
    except NotPureJson:
        raise invalid from None
    return drop_empty_reasons(output)


def _project_flowcast_error(flowcast: Any, exc: BaseException) -> GraphError:
    """THE mapping of flowcast's errors for the codex executor (CG-MODEL-15)."""
    if isinstance(exc, flowcast.TimeoutError):
        return _error(ErrorCode.CG_MODEL_TIMEOUT)
    if isinstance(exc, flowcast.SchemaError):
        return _error(ErrorCode.CG_MODEL_OUTPUT_INVALID)
    if isinstance(exc, flowcast.SpawnError):
        if exc.spawn_error is not None:  # could not start: ENOENT, EACCES...
            return _error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG)
        if flowcast.is_retryable(exc):  # rate limit, quota, overloaded
            return _error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)
        output = exc.output if isinstance(exc.output, str) else ""
        if _AUTH_TEXT.search(output):
            return _error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.CHECK_CONFIG)
        if _CONTEXT_TEXT.search(output):
            return _error(ErrorCode.CG_MODEL_CONTEXT_EXCEEDED)
    return _error(ErrorCode.CG_MODEL_UNAVAILABLE, NextAction.RETRY)
