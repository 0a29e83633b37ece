"""Quality gates: a check command that must pass, and what to do when it does not.

A gate is ``Gate(name, cmd, cwd=None, on_fail="rollback", autofix_cmd=None, resume_fix=None,
timeout=None)`` or a mapping with those keys. ``cmd`` is a shell string (run with ``sh -c``) or
an argv list. On a red check:

* ``rollback``: GateError ``quality gate 'NAME' failed (exit N)`` — the caller (typically
  ``with_self_mod_guard``) rolls back;
* ``autofix``: run ``autofix_cmd``, then check again; GateError
  ``quality gate 'NAME': autofix_cmd failed (exit N)`` if the fix fails, or
  ``quality gate 'NAME': still failing after autofix (exit N)``;
* ``resume-fix``: call ``resume_fix(GateFailure)`` (plain or async; e.g. resume the agent's
  session with the failure), then check again; GateError
  ``quality gate 'NAME': still failing after resume-fix (exit N)``.

Configuration problems (an unknown key or ``on_fail``, autofix without a command, resume-fix
without a callback, a ``cwd`` outside the repository, duplicate names) are ConfigErrors raised
before any command runs. A command that cannot start raises SpawnError; one that runs past the
gate's ``timeout`` has its process tree killed and raises TimeoutError. In a dry run (argument
or ``FLOWCAST_DRY_RUN``) nothing runs and every gate reports passed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, get_args

from ._errors import ConfigError, GateError, SpawnError, TimeoutError
from ._parallel import parallel as run_parallel
from ._spawn import DEFAULT_KILL_GRACE, SpawnResult, _describe_spawn_error, spawn_capture
from ._sync import in_thread, maybe_await, run_blocking

__all__ = [
    "Gate",
    "GateFailure",
    "GateResult",
    "dry_run_enabled",
    "run_gate",
    "run_gate_sync",
    "run_gates",
    "run_gates_sync",
]

StrPath = str | os.PathLike[str]
OnFail = Literal["rollback", "autofix", "resume-fix"]
ON_FAIL: Final[tuple[str, ...]] = get_args(OnFail)
Command = str | Sequence[str]
DRY_RUN_ENV: Final = "FLOWCAST_DRY_RUN"
_TRUE_WORDS: Final = frozenset({"1", "true", "yes", "on"})


def dry_run_enabled(dry_run: bool | None = None) -> bool:
    """``dry_run`` if given, else whether ``FLOWCAST_DRY_RUN`` is 1/true/yes/on (any case)."""
    if dry_run is not None:
        return dry_run
    return os.environ.get(DRY_RUN_ENV, "").strip().lower() in _TRUE_WORDS


@dataclass(frozen=True, slots=True)
class GateFailure:
    """What a ``resume_fix`` callback is told about the red check."""

    gate: str
    exit_code: int | None
    output: str


ResumeFix = Callable[[GateFailure], Awaitable[object] | object]


@dataclass(frozen=True, slots=True)
class Gate:
    """A quality gate (see the module documentation)."""

    name: str
    cmd: Command
    cwd: StrPath | None = None
    on_fail: OnFail = "rollback"
    autofix_cmd: Command | None = None
    resume_fix: ResumeFix | None = None
    timeout: float | None = None


@dataclass(frozen=True, slots=True)
class GateResult:
    """A gate that passed: its last check's exit code and output, whether a fix made it pass
    (``fixed_by``: "autofix", "resume-fix" or None) and whether this was a dry run."""

    name: str
    exit_code: int | None
    output: str
    fixed_by: str | None = None
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "exitCode": self.exit_code,
            "output": self.output,
            "fixedBy": self.fixed_by,
            "dryRun": self.dry_run,
        }


_FIELDS: Final = frozenset(f.name for f in dataclasses.fields(Gate))


def _command(value: object, what: str) -> list[str]:
    if isinstance(value, str) and value.strip():
        return ["sh", "-c", value]
    if (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and value
        and all(isinstance(part, str) for part in value)
    ):
        return list(value)
    raise ConfigError(f"{what} must be a non-empty shell string or argv list")


def _coerce(gate: Gate | Mapping[str, Any]) -> Gate:
    if isinstance(gate, Gate):
        return gate
    if not isinstance(gate, Mapping):
        raise ConfigError(f"a gate must be a Gate or a mapping, not {type(gate).__name__}")
    unknown = sorted(set(map(str, gate)) - _FIELDS)
    if unknown:
        raise ConfigError(f"gate has unknown key(s): {', '.join(unknown)}")
    if "name" not in gate or "cmd" not in gate:
        raise ConfigError("a gate needs a name and a cmd")
    return Gate(**gate)


@dataclass(frozen=True, slots=True)
class _Plan:
    gate: Gate
    check: list[str]
    fix: list[str] | None
    cwd: Path


def _plan(raw: Gate | Mapping[str, Any], repo: Path) -> _Plan:
    gate = _coerce(raw)
    if not isinstance(gate.name, str) or not gate.name:
        raise ConfigError("a gate's name must be a non-empty string")
    label = f"quality gate '{gate.name}'"
    check = _command(gate.cmd, f"{label}: cmd")
    if gate.on_fail not in ON_FAIL:
        raise ConfigError(f"{label}: on_fail must be one of {', '.join(ON_FAIL)}")
    fix = None
    if gate.on_fail == "autofix":
        if gate.autofix_cmd is None:
            raise ConfigError(f"{label}: on_fail 'autofix' needs an autofix_cmd")
        fix = _command(gate.autofix_cmd, f"{label}: autofix_cmd")
    if gate.on_fail == "resume-fix" and not callable(gate.resume_fix):
        raise ConfigError(f"{label}: on_fail 'resume-fix' needs a resume_fix callback")
    timeout = gate.timeout
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise ConfigError(f"{label}: timeout must be a positive number of seconds")
    cwd = (repo / gate.cwd).resolve() if gate.cwd is not None else repo
    if cwd != repo and repo not in cwd.parents:
        raise ConfigError(f"{label}: cwd {str(gate.cwd)!r} is outside the repository")
    return _Plan(gate=gate, check=check, fix=fix, cwd=cwd)


def _plans(gates: Iterable[Gate | Mapping[str, Any]], repo: StrPath | None) -> list[_Plan]:
    root = Path(repo if repo is not None else Path.cwd()).resolve()
    plans = [_plan(g, root) for g in gates]
    names = [p.gate.name for p in plans]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"duplicate gate name(s): {', '.join(duplicates)}")
    return plans


async def _run(plan: _Plan, argv: list[str], what: str, kill_grace: float) -> SpawnResult:
    result = await spawn_capture(
        argv[0], argv[1:], cwd=plan.cwd, timeout=plan.gate.timeout, kill_grace=kill_grace
    )
    label = f"quality gate '{plan.gate.name}'"
    if result.spawn_error is not None:
        raise SpawnError(
            f"{label}: cannot start {what} '{argv[0]}': "
            f"{_describe_spawn_error(result.spawn_error)}",
            spawn_error=result.spawn_error,
        )
    if result.timed_out:
        raise TimeoutError(f"{label}: {what} timed out after {plan.gate.timeout:g}s")
    return result


def _fail(plan: _Plan, result: SpawnResult, detail: str | None) -> GateError:
    name = plan.gate.name
    message = (
        f"quality gate '{name}' failed (exit {result.exit_code})"
        if detail is None
        else f"quality gate '{name}': {detail} (exit {result.exit_code})"
    )
    return GateError(message, gate=name, exit_code=result.exit_code, output=result.stdout)


async def _run_plan(plan: _Plan, kill_grace: float) -> GateResult:
    gate = plan.gate
    checked = await _run(plan, plan.check, "cmd", kill_grace)
    if checked.exit_code == 0:
        return GateResult(name=gate.name, exit_code=0, output=checked.stdout)
    if gate.on_fail == "rollback":
        raise _fail(plan, checked, None)
    if gate.on_fail == "autofix":
        assert plan.fix is not None
        fixed = await _run(plan, plan.fix, "autofix_cmd", kill_grace)
        if fixed.exit_code != 0:
            raise _fail(plan, fixed, "autofix_cmd failed")
    else:
        assert gate.resume_fix is not None
        failure = GateFailure(gate=gate.name, exit_code=checked.exit_code, output=checked.stdout)
        await maybe_await(gate.resume_fix(failure))
    rechecked = await _run(plan, plan.check, "cmd", kill_grace)
    if rechecked.exit_code != 0:
        raise _fail(plan, rechecked, f"still failing after {gate.on_fail}")
    return GateResult(name=gate.name, exit_code=0, output=rechecked.stdout, fixed_by=gate.on_fail)


async def run_gate(
    gate: Gate | Mapping[str, Any],
    *,
    repo: StrPath | None = None,
    dry_run: bool | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> GateResult:
    """Run one gate in ``repo`` (default: the current directory); the gate's ``cwd`` is
    relative to it and must stay inside it. Returns the GateResult of a green gate; raises as
    described in the module documentation."""
    (plan,) = _plans([gate], repo)
    if dry_run_enabled(dry_run):
        return GateResult(name=plan.gate.name, exit_code=0, output="", dry_run=True)
    return await _run_plan(plan, kill_grace)


async def run_gates(
    gates: Iterable[Gate | Mapping[str, Any]],
    *,
    repo: StrPath | None = None,
    dry_run: bool | None = None,
    parallel: bool = False,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> list[GateResult]:
    """Run gates after validating all of them. In order, the first red gate raises; with
    ``parallel`` they run at once and failures are collected by ``parallel(strict=True)``:
    ParallelError whose ``failures`` hold the GateErrors (after every gate finished)."""
    plans = _plans(gates, repo)
    if dry_run_enabled(dry_run):
        return [GateResult(name=p.gate.name, exit_code=0, output="", dry_run=True) for p in plans]
    if not parallel:
        return [await _run_plan(plan, kill_grace) for plan in plans]

    def thunk(plan: _Plan) -> Callable[[], Awaitable[GateResult]]:
        return lambda: _run_plan(plan, kill_grace)

    results = await run_parallel([thunk(p) for p in plans], strict=True)
    return [r for r in results if r is not None]


def _threaded(gate: Gate | Mapping[str, Any]) -> Gate | Mapping[str, Any]:
    """The gate with a plain ``resume_fix`` moved to a worker thread (blocking twins)."""
    if isinstance(gate, Gate) and callable(gate.resume_fix):
        return dataclasses.replace(gate, resume_fix=in_thread(gate.resume_fix))
    if isinstance(gate, Mapping) and callable(gate.get("resume_fix")):
        return {**gate, "resume_fix": in_thread(gate["resume_fix"])}
    return gate


def run_gate_sync(
    gate: Gate | Mapping[str, Any],
    *,
    repo: StrPath | None = None,
    dry_run: bool | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> GateResult:
    """Blocking twin of ``run_gate``; a ``resume_fix`` callback runs in a worker thread."""
    return run_blocking(
        run_gate, _threaded(gate), repo=repo, dry_run=dry_run, kill_grace=kill_grace
    )


def run_gates_sync(
    gates: Iterable[Gate | Mapping[str, Any]],
    *,
    repo: StrPath | None = None,
    dry_run: bool | None = None,
    parallel: bool = False,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> list[GateResult]:
    """Blocking twin of ``run_gates``; ``resume_fix`` callbacks run in a worker thread."""
    return run_blocking(
        run_gates,
        [_threaded(g) for g in gates],
        repo=repo,
        dry_run=dry_run,
        parallel=parallel,
        kill_grace=kill_grace,
    )
