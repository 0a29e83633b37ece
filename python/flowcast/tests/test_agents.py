"""Agent CLIs: executors (argv, stdin, env), resolution, run_agent, run_agent_chain, cooldowns.
Every CLI here is a small fake shell script on PATH that records how it was called."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import capability_graph_flowcast as flowcast
from capability_graph_testing.flowcast_support import FakeBin, Twin

RECORDER = """
log="$FLOWCAST_FAKE_LOG/{name}"
mkdir -p "$log"
: > "$log/argv"
for arg in "$@"; do printf '%s\\n' "$arg" >> "$log/argv"; done
cat > "$log/stdin"
pwd > "$log/cwd"
env > "$log/env"
"""


class Fakes:
    def __init__(self, bin_: FakeBin, log: Path) -> None:
        self.bin = bin_
        self.log = log

    def cli(self, name: str, then: str = "printf 'answer from {name}'") -> None:
        self.bin.add(name, RECORDER.format(name=name) + then.replace("{name}", name) + "\n")

    def argv(self, name: str) -> list[str]:
        return (self.log / name / "argv").read_text().splitlines()

    def stdin(self, name: str) -> str:
        return (self.log / name / "stdin").read_text()

    def env(self, name: str) -> dict[str, str]:
        lines = (self.log / name / "env").read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line)

    def ran(self, name: str) -> bool:
        return (self.log / name).exists()


@pytest.fixture
def fakes(fake_bin: FakeBin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    log = tmp_path / "calls"
    log.mkdir()
    monkeypatch.setenv("FLOWCAST_FAKE_LOG", str(log))
    return Fakes(fake_bin, log)


def test_claude_gets_the_prompt_on_stdin_in_print_mode(twin: Twin, fakes: Fakes) -> None:
    fakes.cli("claude")
    assert twin("run_agent", "fix the bug", cli="claude") == "answer from claude"
    assert fakes.argv("claude") == ["-p", "--output-format", "text"]
    assert fakes.stdin("claude") == "fix the bug"


def test_model_and_extra_args_are_passed(fakes: Fakes) -> None:
    fakes.cli("claude")
    flowcast.run_agent_sync("p", cli="claude", model="haiku", args=["--max-turns", "3"])
    assert fakes.argv("claude") == [
        "-p",
        "--output-format",
        "text",
        "--model",
        "haiku",
        "--max-turns",
        "3",
    ]


def test_codex_runs_exec_and_answers_with_its_last_message(twin: Twin, fakes: Fakes) -> None:
    fakes.cli(
        "codex",
        'shift 5; printf "final answer" > "$1"; echo "progress noise"; echo "tokens used" >&2',
    )
    answer = twin(
        "run_agent", "review this", cli="codex", model="gpt-5", args=["--sandbox", "read-only"]
    )
    assert answer == "final answer"
    argv = fakes.argv("codex")
    assert argv[:5] == [
        "exec",
        "--skip-git-repo-check",
        "--color",
        "never",
        "--output-last-message",
    ]
    assert argv[6:] == ["--model", "gpt-5", "--sandbox", "read-only", "-"]
    assert fakes.stdin("codex") == "review this"


def test_codex_without_a_last_message_file_answers_with_its_output(fakes: Fakes) -> None:
    fakes.cli("codex", "printf 'only stdout'")
    assert flowcast.run_agent_sync("p", cli="codex") == "only stdout"


def test_gemini_gets_the_prompt_on_stdin(fakes: Fakes) -> None:
    fakes.cli("gemini")
    assert flowcast.run_agent_sync("hello", cli="gemini", model="pro") == "answer from gemini"
    assert (fakes.argv("gemini"), fakes.stdin("gemini")) == (["--model", "pro"], "hello")


def test_cursor_runs_cursor_agent_with_the_prompt_as_last_argument(fakes: Fakes) -> None:
    fakes.cli("cursor-agent")
    flowcast.run_agent_sync("do it", cli="cursor")
    assert fakes.argv("cursor-agent") == ["-p", "--output-format", "text", "do it"]


def test_aider_reads_the_prompt_from_a_message_file(fakes: Fakes) -> None:
    fakes.cli("aider", 'cat "$2"')
    assert flowcast.run_agent_sync("edit main.py", cli="aider") == "edit main.py"
    argv = fakes.argv("aider")
    assert argv[0] == "--message-file"
    assert argv[2:] == ["--yes-always", "--no-pretty", "--no-auto-commits"]


def test_an_agent_program_override_is_used(fakes: Fakes) -> None:
    fakes.cli("my-claude")
    agent = flowcast.Agent(name="custom", cli="claude", program="my-claude")
    assert flowcast.run_agent_sync("p", cli=agent) == "answer from my-claude"


def test_a_schema_returns_the_parsed_json(twin: Twin, fakes: Fakes) -> None:
    fakes.cli("claude", """printf 'Here:\\n```json\\n{"ok": true}\\n```'""")
    schema = {"type": "object", "required": ["ok"]}
    assert twin("run_agent", "p", cli="claude", schema=schema) == {"ok": True}
    assert '"required": ["ok"]' in fakes.stdin("claude")


def test_a_schema_never_satisfied_is_schema_error(fakes: Fakes) -> None:
    fakes.cli("claude", "printf 'no json here'")
    with pytest.raises(flowcast.SchemaError):
        flowcast.run_agent_sync("p", cli="claude", schema={"type": "object"}, retries=1)


def test_a_missing_cli_is_spawn_error_enoent(twin: Twin, fake_bin: FakeBin) -> None:
    with pytest.raises(flowcast.SpawnError) as caught:
        twin("run_agent", "p", cli="gemini", env={"PATH": str(fake_bin.path)})
    assert caught.value.spawn_error == "ENOENT"


def test_a_failing_cli_is_spawn_error_with_its_output(fakes: Fakes) -> None:
    fakes.cli("claude", "echo 'invalid api key' >&2; exit 1")
    with pytest.raises(flowcast.SpawnError) as caught:
        flowcast.run_agent_sync("p", cli="claude")
    assert (caught.value.exit_code, caught.value.output) == (1, "invalid api key\n")


def test_a_hanging_cli_is_timeout_error_and_its_tree_is_killed(fakes: Fakes) -> None:
    fakes.cli("claude", "sleep 30")
    with pytest.raises(flowcast.TimeoutError):
        flowcast.run_agent_sync("p", cli="claude", timeout=0.3, kill_grace=0.2)


def test_env_replaces_the_environment_and_provider_variables_are_added(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.cli("claude")
    monkeypatch.setenv("OUTER_SECRET", "x")
    provider = flowcast.Provider(name="proxy", base_url="https://proxy.invalid", api_key="k-1")
    env = {"PATH": str(fakes.bin.path) + ":/usr/bin:/bin", "FLOWCAST_FAKE_LOG": str(fakes.log)}
    flowcast.run_agent_sync("p", cli="claude", provider=provider, env=env)
    seen = fakes.env("claude")
    assert (seen["ANTHROPIC_BASE_URL"], seen["ANTHROPIC_AUTH_TOKEN"]) == (
        "https://proxy.invalid",
        "k-1",
    )
    assert "OUTER_SECRET" not in seen


def test_aider_with_a_provider_gets_openai_variables(fakes: Fakes) -> None:
    fakes.cli("aider")
    provider = flowcast.Provider(
        name="p", base_url="http://llm.invalid/v1", api_key="s", model="m1"
    )
    flowcast.run_agent_sync("x", cli="aider", provider=provider)
    seen = fakes.env("aider")
    assert (seen["OPENAI_API_BASE"], seen["OPENAI_API_KEY"]) == ("http://llm.invalid/v1", "s")
    assert fakes.argv("aider")[-2:] == ["--model", "m1"]


@pytest.mark.parametrize("cli", ["codex", "gemini", "cursor"])
def test_a_provider_on_a_cli_with_its_own_auth_is_config_error(fakes: Fakes, cli: str) -> None:
    fakes.cli("codex")
    with pytest.raises(flowcast.ConfigError, match="manages its own auth"):
        flowcast.run_agent_sync("p", cli=cli, provider=flowcast.Provider(name="x"))
    assert not fakes.ran("codex")


def test_an_unknown_cli_is_config_error(twin: Twin) -> None:
    with pytest.raises(flowcast.ConfigError, match="unknown cli 'copilot'"):
        twin("run_agent", "p", cli="copilot")


def test_the_agent_runs_in_cwd(fakes: Fakes, tmp_path: Path) -> None:
    fakes.cli("claude")
    flowcast.run_agent_sync("p", cli="claude", cwd=tmp_path)
    assert (fakes.log / "claude" / "cwd").read_text().strip() == str(tmp_path.resolve())


def test_dry_run_builds_the_call_and_runs_nothing(
    twin: Twin, fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.cli("claude")
    monkeypatch.setenv("FLOWCAST_DRY_RUN", "1")
    assert twin("run_agent", "p", cli="claude", model="m") == (
        "[dry-run] claude -p --output-format text --model m"
    )
    assert twin("run_agent", "p", cli="claude", schema={"type": "object"}) is None
    assert not fakes.ran("claude")


# -- resolve_agent ------------------------------------------------------------------------

AGENTS = {
    "fast": {
        "cli": "claude",
        "model": "haiku",
        "provider": "router",
        "args": ["--x"],
        "timeout": 60,
    },
    "deep": {"cli": "codex", "model": "${DEEP_MODEL}"},
    "bad-auth": {"cli": "codex", "provider": "router"},
}
PROVIDERS = {"router": {"base_url": "https://${ROUTER_HOST}/v1", "api_key": "${ROUTER_KEY}"}}


def test_resolve_agent_interpolates_environment_variables() -> None:
    env = {"ROUTER_HOST": "r.invalid", "ROUTER_KEY": "secret"}
    agent = flowcast.resolve_agent("fast", AGENTS, PROVIDERS, env=env)
    assert agent == flowcast.Agent(
        name="fast",
        cli="claude",
        model="haiku",
        provider=flowcast.Provider(
            name="router", base_url="https://r.invalid/v1", api_key="secret"
        ),
        args=("--x",),
        timeout=60,
    )


def test_resolve_agent_reads_the_process_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEEP_MODEL", "gpt-5-codex")
    assert flowcast.resolve_agent("deep", AGENTS, PROVIDERS).model == "gpt-5-codex"


def test_a_missing_variable_is_config_error_naming_it_not_the_values() -> None:
    with pytest.raises(flowcast.ConfigError) as caught:
        flowcast.resolve_agent("fast", AGENTS, PROVIDERS, env={"ROUTER_HOST": "h"})
    assert "ROUTER_KEY" in str(caught.value)
    assert "provider 'router'" in str(caught.value)


def test_an_unknown_agent_is_config_error() -> None:
    with pytest.raises(flowcast.ConfigError, match="unknown agent 'nope'"):
        flowcast.resolve_agent("nope", AGENTS, PROVIDERS)


def test_an_unknown_provider_is_config_error() -> None:
    with pytest.raises(flowcast.ConfigError, match="unknown provider 'ghost'"):
        flowcast.resolve_agent("a", {"a": {"cli": "claude", "provider": "ghost"}}, {})


def test_a_provider_on_codex_is_config_error_at_resolution() -> None:
    env = {"ROUTER_HOST": "h", "ROUTER_KEY": "k"}
    with pytest.raises(flowcast.ConfigError, match="manages its own auth"):
        flowcast.resolve_agent("bad-auth", AGENTS, PROVIDERS, env=env)


@pytest.mark.parametrize(
    "entry",
    [
        {"cli": "claude", "color": "blue"},
        {"model": "m"},
        {"cli": "claude", "args": "--x"},
        {"cli": "claude", "timeout": 0},
        {"cli": "claude", "model": 5},
        "claude",
    ],
)
def test_malformed_agent_entries_are_config_errors(entry: Any) -> None:
    with pytest.raises(flowcast.ConfigError):
        flowcast.resolve_agent("a", {"a": entry}, {})


# -- run_agent_chain ----------------------------------------------------------------------


def rate_limited(fakes: Fakes, name: str) -> None:
    fakes.cli(name, "echo 'Error: rate limit exceeded' >&2; exit 1")


def test_a_retryable_failure_falls_back_to_the_next_entry(twin: Twin, fakes: Fakes) -> None:
    rate_limited(fakes, "claude")
    fakes.cli("gemini")
    cooldowns = flowcast.Cooldowns()
    assert (
        twin("run_agent_chain", "p", ["claude", "gemini"], cooldowns=cooldowns)
        == "answer from gemini"
    )
    assert cooldowns.cooling("claude||")
    assert not cooldowns.cooling("gemini||")


def test_a_timeout_falls_back_to_the_next_entry(fakes: Fakes) -> None:
    fakes.cli("claude", "sleep 30")
    fakes.cli("codex", "printf 'from codex'")
    result = flowcast.run_agent_chain_sync(
        "p", ["claude", "codex"], timeout=0.3, kill_grace=0.1, cooldowns=flowcast.Cooldowns()
    )
    assert result == "from codex"


def test_a_non_retryable_failure_is_raised_without_trying_the_next(fakes: Fakes) -> None:
    fakes.cli("claude", "echo 'syntax error in prompt' >&2; exit 2")
    fakes.cli("gemini")
    with pytest.raises(flowcast.SpawnError, match="syntax error"):
        flowcast.run_agent_chain_sync("p", ["claude", "gemini"], cooldowns=flowcast.Cooldowns())
    assert not fakes.ran("gemini")


def test_the_last_entry_failing_raises_its_original_error(fakes: Fakes) -> None:
    rate_limited(fakes, "claude")
    rate_limited(fakes, "gemini")
    with pytest.raises(flowcast.SpawnError) as caught:
        flowcast.run_agent_chain_sync("p", ["claude", "gemini"], cooldowns=flowcast.Cooldowns())
    assert flowcast.is_retryable(caught.value)
    assert fakes.ran("gemini")


def test_an_entry_on_cooldown_is_skipped_by_the_next_call(fakes: Fakes) -> None:
    rate_limited(fakes, "claude")
    fakes.cli("gemini")
    cooldowns = flowcast.Cooldowns()
    flowcast.run_agent_chain_sync("p", ["claude", "gemini"], cooldowns=cooldowns)
    (fakes.log / "claude").rename(fakes.log / "claude-first")
    assert flowcast.run_agent_chain_sync("p", ["claude", "gemini"], cooldowns=cooldowns) == (
        "answer from gemini"
    )
    assert not fakes.ran("claude")


def test_when_every_entry_cools_down_the_chain_is_tried_anyway(fakes: Fakes) -> None:
    fakes.cli("claude")
    cooldowns = flowcast.Cooldowns()
    cooldowns.trip("claude||")
    assert (
        flowcast.run_agent_chain_sync("p", ["claude"], cooldowns=cooldowns) == "answer from claude"
    )
    assert not cooldowns.cooling("claude||")  # a success resets it


def test_a_schema_error_is_not_retryable_in_a_chain(fakes: Fakes) -> None:
    fakes.cli("claude", "printf 'not json'")
    fakes.cli("gemini")
    with pytest.raises(flowcast.SchemaError):
        flowcast.run_agent_chain_sync(
            "p",
            ["claude", "gemini"],
            schema={"type": "object"},
            retries=0,
            cooldowns=flowcast.Cooldowns(),
        )
    assert not fakes.ran("gemini")


def test_an_empty_chain_is_config_error() -> None:
    with pytest.raises(flowcast.ConfigError):
        asyncio.run(flowcast.run_agent_chain("p", []))


def test_a_chain_of_resolved_agents_with_models(fakes: Fakes) -> None:
    rate_limited(fakes, "claude")
    fakes.cli("codex", "printf ok")
    chain = [
        flowcast.Agent(name="big", cli="claude", model="opus"),
        flowcast.Agent(name="backup", cli="codex", model="gpt-5"),
    ]
    cooldowns = flowcast.Cooldowns()
    assert flowcast.run_agent_chain_sync("p", chain, cooldowns=cooldowns) == "ok"
    assert cooldowns.cooling("claude|opus|")


def test_cooldowns_double_from_base_to_cap_with_jitter() -> None:
    now = [1000.0]
    cooldowns = flowcast.Cooldowns(base=30, cap=480, jitter=0.1, clock=lambda: now[0])
    delays = [cooldowns.trip("k") for _ in range(7)]
    for delay, nominal in zip(delays, [30, 60, 120, 240, 480, 480, 480], strict=True):
        assert nominal * 0.9 <= delay <= nominal * 1.1
    assert cooldowns.remaining("k") == pytest.approx(delays[-1])
    now[0] += 600
    assert not cooldowns.cooling("k")
    cooldowns.reset("k")
    assert 27 <= cooldowns.trip("k") <= 33
