"""Read-only JSON containers, for result parts shared with an immutable snapshot.

A snapshot never changes, so the JSON form of a capability's detail never does either: it is
built once and shared by every result that contains it. Sharing a *mutable* dict would let one
caller's edit leak into every later result, so shared parts are frozen: ``FrozenDict`` and
``FrozenList`` are real ``dict``/``list`` subclasses (they serialize, compare and validate like
JSON objects and arrays) whose mutating methods raise ``TypeError``. ``copy.deepcopy`` (or
``json.loads(json.dumps(x))``) gives a caller a mutable copy.

Because a frozen part never changes, neither does the length of its serialization: each part
remembers it, and :func:`serialized_size` adds up those lengths instead of serializing a result
again for its size check (a resolve result is mostly shared details).
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn

from .json import dump_bytes

__all__ = ["FrozenDict", "FrozenList", "freeze", "serialized_size"]


def _read_only(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError("this part of a result is shared with the graph snapshot and is read-only")


class FrozenDict(dict[str, Any]):
    """A read-only JSON object."""

    __slots__ = ("_size",)
    _size: int  # the length of its serialization, once measured
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

    __slots__ = ("_size",)
    _size: int  # the length of its serialization, once measured
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


_FROZEN = (FrozenDict, FrozenList)


def _frozen_size(value: FrozenDict | FrozenList) -> int:
    try:
        return value._size
    except AttributeError:
        value._size = size = len(dump_bytes(value))
        return size


def serialized_size(value: Any) -> int:
    """``len(dump_bytes(value))``, with the size of every frozen part remembered.

    Exact, because the compact serialization of an object or array is its members' serializations
    joined by one comma between brackets: a container holding frozen parts is measured as the
    sum of its parts, and whatever is not frozen (an edge, a status) is serialized for real.
    """
    if isinstance(value, _FROZEN):
        return _frozen_size(value)
    if isinstance(value, dict):
        # The members holding a container are measured one by one (a frozen part remembers its
        # size); the others are serialized together, in one call: the serialization of that
        # object without its braces and the commas between its members is the sum of theirs.
        scalars: dict[str, Any] = {}
        nested = 0
        for key, item in value.items():
            if isinstance(item, dict | list):
                nested += len(dump_bytes(key)) + 1 + serialized_size(item)
            else:
                scalars[key] = item
        scalar_size = len(dump_bytes(scalars)) - 2 - max(len(scalars) - 1, 0) if scalars else 0
        return 2 + max(len(value) - 1, 0) + scalar_size + nested
    if isinstance(value, list):
        plain = [item for item in value if not isinstance(item, _FROZEN)]
        if len(plain) == len(value):
            return len(dump_bytes(value))
        # The plain items are serialized together (one call): their serialization without the
        # brackets and the commas between them is the sum of their own.
        plain_size = len(dump_bytes(plain)) - 2 - max(len(plain) - 1, 0) if plain else 0
        frozen_size = sum(_frozen_size(item) for item in value if isinstance(item, _FROZEN))
        return 2 + max(len(value) - 1, 0) + plain_size + frozen_size
    return len(dump_bytes(value))
