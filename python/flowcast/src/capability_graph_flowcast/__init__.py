"""flowcast: workflow primitives for coding-agent CLIs, with one machine-readable error
contract. Distribution ``capability-graph-flowcast``, imported as ``capability_graph_flowcast``
(``import capability_graph_flowcast as flowcast``): the name ``flowcast`` on the package index
belongs to an unrelated project.

Spawn CLIs with whole-tree timeouts, run quality gates, get schema-checked JSON out of model
text, guard self-modifying changes with git, verify claims adversarially, run tasks in
parallel, checkpoint resumable runs, and drive agent CLIs (claude, codex, gemini, cursor,
aider) with provider fallback. Every failure is a FlowcastError subclass with a ``code``
(see ``capability_graph_flowcast._errors`` for the hierarchy and ``spec/flowcast/`` for the
contract);
``is_retryable`` is the single test for falling back to another provider.

Coroutines have blocking twins named ``<name>_sync``.
"""

from ._agents import (
    COOLDOWNS,
    EXECUTORS,
    Agent,
    Cooldowns,
    Executor,
    Invocation,
    Provider,
    resolve_agent,
    run_agent,
    run_agent_chain,
    run_agent_chain_sync,
    run_agent_sync,
)
from ._checkpoint import Checkpoint
from ._errors import (
    ConfigError,
    FlowcastError,
    GateError,
    GitError,
    GuardError,
    LockError,
    ParallelError,
    ParallelFailure,
    PathError,
    PauseSignal,
    SchemaError,
    SpawnError,
    TimeoutError,
    VerifyError,
    VoterError,
    error_to_dict,
)
from ._gates import (
    Gate,
    GateFailure,
    GateResult,
    run_gate,
    run_gate_sync,
    run_gates,
    run_gates_sync,
)
from ._git import (
    git_commit_all,
    git_create_branch,
    git_current_branch,
    git_diff,
    git_head,
    git_status,
    git_worktree_add,
    git_worktree_remove,
)
from ._guard import (
    Baseline,
    GuardOutcome,
    Verdict,
    capture_baseline,
    with_self_mod_guard,
    with_self_mod_guard_sync,
)
from ._lock import LockOwner, ResumeLock
from ._parallel import PipelineResult, parallel, pipeline
from ._paths import SAFE_IDENT_PATTERN, assert_safe_ident
from ._retry import is_retryable
from ._schema import extract_json, run_structured, run_structured_sync, validate_schema
from ._spawn import (
    DEFAULT_KILL_GRACE,
    MAX_OUTPUT_BYTES,
    TRUNCATION_MARKER,
    SpawnResult,
    spawn_capture,
    spawn_capture_sync,
    spawn_cli,
    spawn_cli_sync,
)
from ._verify import VerifyResult, Vote, verify_adversarial

#: The distribution's version; the single source (the build backend reads it from here).
__version__ = "0.1.0"

__all__ = [
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


def _publish() -> None:
    """Show public classes and functions as ``capability_graph_flowcast.X`` (reprs, tracebacks,
    pickles), like httpx does; the private module layout is not part of the API."""
    namespace = globals()
    for name in __all__:
        obj = namespace[name]
        if isinstance(obj, type) or (callable(obj) and hasattr(obj, "__code__")):
            obj.__module__ = __name__


_publish()
