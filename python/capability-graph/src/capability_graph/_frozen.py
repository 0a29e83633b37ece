"""Read-only JSON containers, for result parts shared with an immutable snapshot.

A snapshot never changes, so the JSON form of a capability's detail never does either: it is
built once and shared by every result that contains it. Sharing a *mutable* dict would let one
caller's edit leak into every later result, so shared parts are frozen: ``FrozenDict`` and
``FrozenList`` are real ``dict``/``list`` subclasses (they serialize, compare and validate like
JSON objects and arrays) whose mutating methods raise ``TypeError``. ``copy.deepcopy`` (or
``json.loads(json.dumps(x))``) gives a caller a mutable copy.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "freeze"]


def _read_only(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError("this part of a result is shared with the graph snapshot and is read-only")


class FrozenDict(dict[str, Any]):
    """A read-only JSON object."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}


class FrozenList(list[Any]):
    """A read-only JSON array."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = remove = pop = clear = sort = reverse = _read_only

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(value, memo) for value in self]


def freeze(value: Any) -> Any:
    """``value`` with every dict and list replaced by its frozen twin (scalars unchanged)."""
    if isinstance(value, dict):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return FrozenList(freeze(item) for item in value)
    return value
