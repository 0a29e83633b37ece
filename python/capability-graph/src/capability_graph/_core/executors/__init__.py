"""The model executor protocol (spec/capability-graph/executors.md, CG-MODEL-11).

An executor gets one :class:`MatchJob` (in ``job.py``: only a match makes one) — the request, the
validated context, the authorized catalog (capability summaries), the limit and an absolute
deadline — and returns the *raw* output ``{status, candidates: [{id, confidence, reason?}]}`` or
raises. It is never trusted: the match runner (``capability_graph._core.match.run_match``)
enforces the deadline, cancellation and close, validates the output against the catalog, and
projects every failure into a ``CG_MODEL_*`` GraphError (CG-MODEL-5). An executor error is any
exception with a ``code`` attribute (and optionally ``next_action`` / ``nextAction``); the
built-in executors raise :class:`GraphError` with the code and action they mean, and the runner
projects those the same way as a foreign executor's.

Built-in executors are configured under ``model`` in the host configuration and built by
:func:`build_executor`; their modules (and the optional packages ``openai`` and
``capability_graph_flowcast``) are imported only when that executor is built or used, to keep the
CLI's cold start small (the imports are written out in :mod:`..lazy`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from ..._generated.defaults import DEFAULT_BUDGETS, MODEL_TIMEOUT_MS

if TYPE_CHECKING:
    from .job import MatchJob

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_TIMEOUT_MS",
    "Executor",
    "build_executor",
    "configured_timeout_ms",
    "describe_executor",
]

#: ``model.timeoutMs`` when the configuration does not set it; a request's ``timeoutMs`` wins.
DEFAULT_TIMEOUT_MS: Final = MODEL_TIMEOUT_MS
#: The default of ``budgets.maxModelOutputBytes``.
DEFAULT_MAX_OUTPUT_BYTES: Final = DEFAULT_BUDGETS["maxModelOutputBytes"]


_SAFE_NAME: Final = re.compile(r"[a-z][a-z0-9._-]{0,63}")  # ids.schema.json#/$defs/ExecutorName


@runtime_checkable
class Executor(Protocol):
    """What ``match`` needs from a model executor (built-in or an SDK user's object).

    ``match`` returns the raw output or raises; it may be cancelled at any await point (deadline,
    caller cancellation, ``close()``) and must then stop its work (kill subprocesses, close
    connections). An optional ``async def aclose()`` is called when the graph closes.
    """

    name: str

    async def match(self, job: MatchJob) -> object:
        """Return the raw output ``{status, candidates: [{id, confidence, reason?}]}`` for
        ``job``, or raise (an exception with a ``code`` attribute names a ``CG_MODEL_*`` code)."""
        ...


def build_executor(model: Mapping[str, Any]) -> Executor:
    """Build the built-in executor that ``model`` (the host config's ``model`` object) names.

    ``model`` is the section of a configuration that passed the configuration's schema
    (``config.schema.json#/$defs/ModelConfig``, checked by the one validation path of
    :mod:`..schemas` when the configuration loads): an executor reads its options as given and
    re-checks nothing the schema says. Secrets are never configured here, only the *name* of an
    environment variable (``apiKeyEnv``); they are read at match time.
    """
    from ..lazy import executor_class

    executor: Executor = executor_class(model["executor"]).from_config(model, "/model")
    return executor


def configured_timeout_ms(model: Mapping[str, Any] | None) -> int:
    """``model.timeoutMs`` of an already validated ``model`` section, else the default."""
    if model is None:
        return DEFAULT_TIMEOUT_MS
    value = model.get("timeoutMs", DEFAULT_TIMEOUT_MS)
    return int(value)


def describe_executor(executor: object) -> str:
    """The executor name shown in ``describe`` and in match results.

    A built-in executor's name, or a custom executor's ``name`` when it is a plain identifier
    (``^[a-z][a-z0-9._-]{0,63}$``, the ExecutorName pattern); anything else is reported as
    ``custom`` so that a foreign object cannot put arbitrary text into a result.
    """
    try:
        name = getattr(executor, "name", None)
    except Exception:  # noqa: BLE001 -- a foreign object's property may raise
        return "custom"
    if isinstance(name, str) and _SAFE_NAME.fullmatch(name):
        return str.__str__(name)
    return "custom"
