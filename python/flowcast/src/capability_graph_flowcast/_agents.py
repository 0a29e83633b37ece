"""Agent CLIs: executors that turn a prompt into a CLI invocation, agent/provider resolution,
``run_agent`` and ``run_agent_chain`` (fallback along a chain, with cooldowns).

Why one module of this size: the executor table, agent resolution and chains are one
table-driven unit, each step reading the same table.

Executors (``EXECUTORS``), the argv they build (``PROMPT`` on stdin unless said otherwise):

* ``claude``: ``claude -p --output-format text [--model M] [ARGS...]``; a provider sets
  ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_AUTH_TOKEN``.
* ``codex``: ``codex exec --skip-git-repo-check --color never --output-last-message FILE
  [--model M] [ARGS...] -``; the answer is read from FILE (the agent's last message), not from
  the merged stdout/stderr. Manages its own auth: a provider is a ConfigError. Sandbox,
  ``--output-schema``, ``-C DIR`` and the like go in ARGS (Capability Graph's codex executor
  builds its own ``codex exec --sandbox read-only --output-schema FILE ...`` argv and calls
  ``spawn_cli`` directly).
* ``gemini``: ``gemini [--model M] [ARGS...]``; own auth.
* ``cursor``: ``cursor-agent -p --output-format text [--model M] [ARGS...] PROMPT`` (the prompt
  is an argument); own auth.
* ``aider``: ``aider --message-file FILE --yes-always --no-pretty --no-auto-commits
  [--model M] [ARGS...]``; a provider sets ``OPENAI_API_BASE`` / ``OPENAI_API_KEY``.

``FLOWCAST_DRY_RUN`` (or ``dry_run=True``) builds the invocation and runs nothing.
"""

from __future__ import annotations

import os
import random
import re
import shlex
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from ._errors import ConfigError
from ._gates import dry_run_enabled
from ._retry import is_retryable
from ._schema import run_structured
from ._spawn import DEFAULT_KILL_GRACE, spawn_cli
from ._sync import run_blocking

__all__ = [
    "COOLDOWNS",
    "EXECUTORS",
    "Agent",
    "Cooldowns",
    "Executor",
    "Invocation",
    "Provider",
    "resolve_agent",
    "run_agent",
    "run_agent_chain",
    "run_agent_chain_sync",
    "run_agent_sync",
]

StrPath = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class Provider:
    """An API endpoint an agent CLI can be pointed at (for CLIs that accept one)."""

    name: str
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Agent:
    """A runnable agent: an executor (``cli``), optional model, provider, extra args,
    timeout and program path (default: the executor's program, looked up on PATH)."""

    name: str
    cli: str
    model: str | None = None
    provider: Provider | None = None
    args: tuple[str, ...] = ()
    timeout: float | None = None
    program: str | None = None

    @property
    def key(self) -> str:
        """Identity for cooldowns: cli, model and provider."""
        provider = self.provider.name if self.provider else ""
        return f"{self.cli}|{self.model or ''}|{provider}"


@dataclass(frozen=True, slots=True)
class Invocation:
    """A CLI call: argv, text for stdin, environment additions, and the file holding the
    answer when the CLI writes it there instead of stdout."""

    argv: list[str]
    stdin: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    output_file: Path | None = None


Build = Callable[[Agent, str, Path], Invocation]


@dataclass(frozen=True, slots=True)
class Executor:
    """How to run one agent CLI."""

    name: str
    program: str
    manages_own_auth: bool
    build: Build


def _model(agent: Agent) -> list[str]:
    model = agent.model or (agent.provider.model if agent.provider else None)
    return ["--model", model] if model else []


def _provider_env(agent: Agent, url_var: str, key_var: str) -> dict[str, str]:
    if agent.provider is None:
        return {}
    env = dict(agent.provider.env)
    if agent.provider.base_url:
        env[url_var] = agent.provider.base_url
    if agent.provider.api_key:
        env[key_var] = agent.provider.api_key
    return env


def _program(agent: Agent, default: str) -> str:
    return agent.program or default


def _claude(agent: Agent, prompt: str, workdir: Path) -> Invocation:
    argv = [_program(agent, "claude"), "-p", "--output-format", "text", *_model(agent)]
    return Invocation(
        argv=[*argv, *agent.args],
        stdin=prompt,
        env=_provider_env(agent, "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"),
    )


def _codex(agent: Agent, prompt: str, workdir: Path) -> Invocation:
    last = workdir / "last-message.txt"
    argv = [
        _program(agent, "codex"),
        "exec",
        "--skip-git-repo-check",
        "--color",
        "never",
        "--output-last-message",
        os.fspath(last),
        *_model(agent),
        *agent.args,
        "-",
    ]
    return Invocation(argv=argv, stdin=prompt, output_file=last)


def _gemini(agent: Agent, prompt: str, workdir: Path) -> Invocation:
    return Invocation(argv=[_program(agent, "gemini"), *_model(agent), *agent.args], stdin=prompt)


def _cursor(agent: Agent, prompt: str, workdir: Path) -> Invocation:
    argv = [_program(agent, "cursor-agent"), "-p", "--output-format", "text", *_model(agent)]
    return Invocation(argv=[*argv, *agent.args, prompt])


def _aider(agent: Agent, prompt: str, workdir: Path) -> Invocation:
    message = workdir / "message.txt"
    message.write_text(prompt, encoding="utf-8")
    argv = [
        _program(agent, "aider"),
        "--message-file",
        os.fspath(message),
        "--yes-always",
        "--no-pretty",
        "--no-auto-commits",
        *_model(agent),
        *agent.args,
    ]
    return Invocation(argv=argv, env=_provider_env(agent, "OPENAI_API_BASE", "OPENAI_API_KEY"))


EXECUTORS: Final[Mapping[str, Executor]] = {
    "aider": Executor("aider", "aider", manages_own_auth=False, build=_aider),
    "claude": Executor("claude", "claude", manages_own_auth=False, build=_claude),
    "codex": Executor("codex", "codex", manages_own_auth=True, build=_codex),
    "cursor": Executor("cursor", "cursor-agent", manages_own_auth=True, build=_cursor),
    "gemini": Executor("gemini", "gemini", manages_own_auth=True, build=_gemini),
}


def _executor(agent: Agent) -> Executor:
    executor = EXECUTORS.get(agent.cli)
    if executor is None:
        raise ConfigError(
            f"agent '{agent.name}': unknown cli {agent.cli!r} "
            f"(known: {', '.join(sorted(EXECUTORS))})"
        )
    if agent.provider is not None and executor.manages_own_auth:
        raise ConfigError(
            f"agent '{agent.name}': the {agent.cli} CLI manages its own auth; "
            f"provider '{agent.provider.name}' cannot be used with it"
        )
    return executor


# -- resolution ------------------------------------------------------------------------

_VARIABLE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_AGENT_KEYS: Final = frozenset({"cli", "model", "provider", "args", "timeout", "program"})
_PROVIDER_KEYS: Final = frozenset({"base_url", "api_key", "model", "env"})


def _interpolate(value: object, where: str, env: Mapping[str, str]) -> Any:
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise ConfigError(f"{where}: environment variable {name} is not set")
            return env[name]

        return _VARIABLE.sub(substitute, value)
    if isinstance(value, Mapping):
        return {k: _interpolate(v, f"{where}.{k}", env) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_interpolate(v, where, env) for v in value]
    return value


def _optional_str(value: object, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ConfigError(f"{where} must be a string")


def _check_keys(entry: object, allowed: frozenset[str], where: str) -> Mapping[str, Any]:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where} must be a mapping")
    unknown = sorted(set(map(str, entry)) - allowed)
    if unknown:
        raise ConfigError(f"{where} has unknown key(s): {', '.join(unknown)}")
    return entry


def _provider(name: str, providers: Mapping[str, Any], env: Mapping[str, str]) -> Provider:
    if name not in providers:
        raise ConfigError(f"unknown provider {name!r}")
    where = f"provider '{name}'"
    raw = _interpolate(_check_keys(providers[name], _PROVIDER_KEYS, where), where, env)
    extra = raw.get("env", {})
    if not isinstance(extra, Mapping) or not all(isinstance(v, str) for v in extra.values()):
        raise ConfigError(f"{where}.env must map names to strings")
    return Provider(
        name=name,
        base_url=_optional_str(raw.get("base_url"), f"{where}.base_url"),
        api_key=_optional_str(raw.get("api_key"), f"{where}.api_key"),
        model=_optional_str(raw.get("model"), f"{where}.model"),
        env=dict(extra),
    )


def resolve_agent(
    name: str,
    agents: Mapping[str, Any],
    providers: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> Agent:
    """Build the Agent called ``name`` from configuration mappings.

    ``agents[name]`` holds ``cli`` and optionally ``model``, ``provider`` (a key of
    ``providers``), ``args``, ``timeout``, ``program``; ``providers[p]`` optionally
    ``base_url``, ``api_key``, ``model``, ``env``. Every string may use ``${VAR}``, read from
    ``env`` (default: the process environment). ConfigError, naming the place (never a value),
    for an unknown agent, provider, key or cli, a missing variable, a provider on a CLI that
    manages its own auth.
    """
    variables = os.environ if env is None else env
    if name not in agents:
        raise ConfigError(f"unknown agent {name!r}")
    where = f"agent '{name}'"
    raw = _interpolate(_check_keys(agents[name], _AGENT_KEYS, where), where, variables)
    cli = raw.get("cli")
    if not isinstance(cli, str):
        raise ConfigError(f"{where} needs a cli")
    provider_name = _optional_str(raw.get("provider"), f"{where}.provider")
    provider = (
        _provider(provider_name, providers or {}, variables) if provider_name is not None else None
    )
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{where}.args must be a list of strings")
    timeout = raw.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise ConfigError(f"{where}.timeout must be a positive number of seconds")
    agent = Agent(
        name=name,
        cli=cli,
        model=_optional_str(raw.get("model"), f"{where}.model"),
        provider=provider,
        args=tuple(args),
        timeout=timeout,
        program=_optional_str(raw.get("program"), f"{where}.program"),
    )
    _executor(agent)
    return agent


# -- running ---------------------------------------------------------------------------


def _agent(
    cli: str | Agent,
    model: str | None,
    provider: Provider | None,
    args: Sequence[str],
    timeout: float | None,
) -> Agent:
    if isinstance(cli, Agent):
        agent = cli
    elif isinstance(cli, str):
        agent = Agent(name=cli, cli=cli)
    else:
        raise ConfigError(f"cli must be an executor name or an Agent, not {type(cli).__name__}")
    overrides: dict[str, Any] = {}
    if model is not None:
        overrides["model"] = model
    if provider is not None:
        overrides["provider"] = provider
    if args:
        overrides["args"] = (*agent.args, *args)
    if timeout is not None:
        overrides["timeout"] = timeout
    agent = replace(agent, **overrides) if overrides else agent
    _executor(agent)
    return agent


async def _run_once(
    agent: Agent,
    prompt: str,
    *,
    cwd: StrPath | None,
    env: Mapping[str, str] | None,
    kill_grace: float,
) -> str:
    executor = _executor(agent)
    with tempfile.TemporaryDirectory(prefix="flowcast-agent-") as tmp:
        invocation = executor.build(agent, prompt, Path(tmp))
        base = dict(os.environ) if env is None else dict(env)
        output = await spawn_cli(
            invocation.argv[0],
            invocation.argv[1:],
            cwd=cwd,
            timeout=agent.timeout,
            env=base | dict(invocation.env),
            stdin=invocation.stdin,
            kill_grace=kill_grace,
        )
        if invocation.output_file is not None and invocation.output_file.exists():
            return invocation.output_file.read_text(encoding="utf-8", errors="replace")
        return output


def _dry_run_text(agent: Agent, prompt: str) -> str:
    with tempfile.TemporaryDirectory(prefix="flowcast-agent-") as tmp:
        invocation = _executor(agent).build(agent, prompt, Path(tmp))
    return f"[dry-run] {shlex.join(invocation.argv)}"


async def run_agent(
    prompt: str,
    *,
    cli: str | Agent = "claude",
    schema: Mapping[str, Any] | bool | None = None,
    model: str | None = None,
    provider: Provider | None = None,
    args: Sequence[str] = (),
    cwd: StrPath | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    retries: int = 1,
    dry_run: bool | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> Any:
    """Run ``prompt`` through an agent CLI and return its answer.

    ``cli`` is an executor name or a resolved Agent (``model``, ``provider``, ``args``,
    ``timeout`` override or extend it). Without ``schema`` the answer text is returned; with
    one, the answer goes through ``run_structured`` (``retries``) and the parsed JSON value is
    returned. ``env`` replaces the process environment for the CLI (provider variables are
    added to it). Errors: ConfigError (bad cli/provider), SpawnError (missing CLI or non-zero
    exit, message ending with the CLI's last output), TimeoutError, SchemaError. In a dry run
    nothing runs: the result is ``"[dry-run] <argv>"`` (None with a schema).
    """
    agent = _agent(cli, model, provider, args, timeout)
    if dry_run_enabled(dry_run):
        return _dry_run_text(agent, prompt) if schema is None else None

    async def once(text: str) -> str:
        return await _run_once(agent, text, cwd=cwd, env=env, kill_grace=kill_grace)

    if schema is None:
        return await once(prompt)
    return await run_structured(once, prompt, schema=schema, retries=retries)


class Cooldowns:
    """Which chain entries are resting after a retryable failure, and until when.

    Each consecutive failure of the same key doubles its cooldown, from ``base`` seconds up to
    ``cap``, with ±``jitter`` (a fraction) of random spread; a success resets it.
    """

    def __init__(
        self,
        *,
        base: float = 30.0,
        cap: float = 480.0,
        jitter: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base = base
        self.cap = cap
        self.jitter = jitter
        self._clock = clock
        self._until: dict[str, float] = {}
        self._strikes: dict[str, int] = {}

    def remaining(self, key: str) -> float:
        """Seconds of cooldown left for ``key`` (0 when it may run)."""
        return max(0.0, self._until.get(key, 0.0) - self._clock())

    def cooling(self, key: str) -> bool:
        return self.remaining(key) > 0

    def trip(self, key: str) -> float:
        """Start (or lengthen) the cooldown of ``key``; return its length in seconds."""
        strikes = self._strikes.get(key, 0)
        self._strikes[key] = strikes + 1
        delay = min(self.cap, self.base * 2.0**strikes)
        delay *= 1 + random.uniform(-self.jitter, self.jitter)  # noqa: S311 - not crypto
        self._until[key] = self._clock() + delay
        return delay

    def reset(self, key: str) -> None:
        self._until.pop(key, None)
        self._strikes.pop(key, None)


COOLDOWNS: Final = Cooldowns()
"""The process-wide cooldowns ``run_agent_chain`` uses unless given its own."""


async def run_agent_chain(
    prompt: str,
    chain: Sequence[str | Agent],
    *,
    schema: Mapping[str, Any] | bool | None = None,
    cwd: StrPath | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    retries: int = 1,
    dry_run: bool | None = None,
    cooldowns: Cooldowns | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> Any:
    """``run_agent`` along ``chain`` (executor names or Agents) until one answers.

    Entries on cooldown are skipped (all of them cooling: the chain is tried anyway, in order).
    A failure that ``is_retryable`` puts its entry on cooldown and moves on to the next; any
    other failure, or a failure of the last entry, is re-raised as it is. A success resets the
    entry's cooldown.
    """
    if not chain:
        raise ConfigError("an agent chain needs at least one entry")
    rests = COOLDOWNS if cooldowns is None else cooldowns
    agents = [_agent(entry, None, None, (), None) for entry in chain]
    ready = [a for a in agents if not rests.cooling(a.key)] or agents
    for position, agent in enumerate(ready):
        try:
            result = await run_agent(
                prompt,
                cli=agent,
                schema=schema,
                cwd=cwd,
                timeout=timeout,
                env=env,
                retries=retries,
                dry_run=dry_run,
                kill_grace=kill_grace,
            )
        except Exception as exc:
            if position == len(ready) - 1 or not is_retryable(exc):
                raise
            rests.trip(agent.key)
            continue
        rests.reset(agent.key)
        return result
    raise AssertionError("unreachable")  # pragma: no cover


def run_agent_sync(
    prompt: str,
    *,
    cli: str | Agent = "claude",
    schema: Mapping[str, Any] | bool | None = None,
    model: str | None = None,
    provider: Provider | None = None,
    args: Sequence[str] = (),
    cwd: StrPath | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    retries: int = 1,
    dry_run: bool | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> Any:
    """Blocking twin of ``run_agent``."""
    return run_blocking(
        run_agent,
        prompt,
        cli=cli,
        schema=schema,
        model=model,
        provider=provider,
        args=args,
        cwd=cwd,
        timeout=timeout,
        env=env,
        retries=retries,
        dry_run=dry_run,
        kill_grace=kill_grace,
    )


def run_agent_chain_sync(
    prompt: str,
    chain: Sequence[str | Agent],
    *,
    schema: Mapping[str, Any] | bool | None = None,
    cwd: StrPath | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    retries: int = 1,
    dry_run: bool | None = None,
    cooldowns: Cooldowns | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> Any:
    """Blocking twin of ``run_agent_chain``."""
    return run_blocking(
        run_agent_chain,
        prompt,
        chain,
        schema=schema,
        cwd=cwd,
        timeout=timeout,
        env=env,
        retries=retries,
        dry_run=dry_run,
        cooldowns=cooldowns,
        kill_grace=kill_grace,
    )
