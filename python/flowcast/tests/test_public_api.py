"""The flat public API of flowcast."""

from __future__ import annotations

import inspect

import capability_graph_flowcast as flowcast

EXPECTED = [
    "COOLDOWNS",
    "DEFAULT_KILL_GRACE",
    "EXECUTORS",
    "MAX_OUTPUT_BYTES",
    "SAFE_IDENT_PATTERN",
    "TRUNCATION_MARKER",
    "Agent",
    "Baseline",
    "Checkpoint",
    "ConfigError",
    "Cooldowns",
    "Executor",
    "FlowcastError",
    "Gate",
    "GateError",
    "GateFailure",
    "GateResult",
    "GitError",
    "GuardError",
    "GuardOutcome",
    "Invocation",
    "LockError",
    "LockOwner",
    "ParallelError",
    "ParallelFailure",
    "PathError",
    "PauseSignal",
    "PipelineResult",
    "Provider",
    "ResumeLock",
    "SchemaError",
    "SpawnError",
    "SpawnResult",
    "TimeoutError",
    "Verdict",
    "VerifyError",
    "VerifyResult",
    "Vote",
    "VoterError",
    "assert_safe_ident",
    "capture_baseline",
    "error_to_dict",
    "extract_json",
    "git_commit_all",
    "git_create_branch",
    "git_current_branch",
    "git_diff",
    "git_head",
    "git_status",
    "git_worktree_add",
    "git_worktree_remove",
    "is_retryable",
    "parallel",
    "pipeline",
    "resolve_agent",
    "run_agent",
    "run_agent_chain",
    "run_agent_chain_sync",
    "run_agent_sync",
    "run_gate",
    "run_gate_sync",
    "run_gates",
    "run_gates_sync",
    "run_structured",
    "run_structured_sync",
    "spawn_capture",
    "spawn_capture_sync",
    "spawn_cli",
    "spawn_cli_sync",
    "validate_schema",
    "verify_adversarial",
    "with_self_mod_guard",
    "with_self_mod_guard_sync",
]


def _isort_key(name: str) -> tuple[int, str]:
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return (kind, name)


def test_all_is_pinned() -> None:
    assert flowcast.__all__ == EXPECTED


def test_all_is_sorted_constants_classes_functions() -> None:
    assert flowcast.__all__ == sorted(flowcast.__all__, key=_isort_key)


def test_every_public_name_resolves() -> None:
    missing = [name for name in flowcast.__all__ if not hasattr(flowcast, name)]
    assert missing == []


def test_public_classes_and_functions_present_themselves_as_the_package() -> None:
    for name in flowcast.__all__:
        obj = getattr(flowcast, name)
        if isinstance(obj, type) or inspect.isfunction(obj):
            assert obj.__module__ == "capability_graph_flowcast", name


def test_every_sync_twin_mirrors_its_coroutine_signature() -> None:
    twins = [name for name in flowcast.__all__ if name.endswith("_sync")]
    assert twins
    for twin in twins:
        original = getattr(flowcast, twin.removesuffix("_sync"))
        assert inspect.iscoroutinefunction(original), twin
        assert not inspect.iscoroutinefunction(getattr(flowcast, twin)), twin
        expected = list(inspect.signature(original).parameters)
        assert list(inspect.signature(getattr(flowcast, twin)).parameters) == expected, twin


def test_checkpoint_step_has_a_blocking_twin_with_the_same_parameters() -> None:
    step = inspect.signature(flowcast.Checkpoint.step).parameters
    assert list(inspect.signature(flowcast.Checkpoint.step_sync).parameters) == list(step)
