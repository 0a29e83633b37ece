"""The error of a ``model`` section the executors refuse: ``CG_CONFIG_INVALID`` in phase
``config`` with a JSON-pointer message. The schema of the configuration words every other
refusal of the section (:mod:`..schemas`); this is for the one rule it cannot say (the nesting of
scripted steps, [CG-MSG-18]).
"""

from __future__ import annotations

from ..._generated.taxonomy import ErrorCode, Phase
from ..errors import GraphError

__all__ = ["config_error"]


def config_error(message: str) -> GraphError:
    return GraphError(ErrorCode.CG_CONFIG_INVALID, Phase.CONFIG, message)
