"""The base classes of the types generated from ``spec/capability-graph/schemas``.

The types themselves are generated (``tools/codegen.py``), and read the same way: snake_case
attributes, an omitted member ``pydantic.MISSING``, ``to_json()`` for the contract's JSON form,
a repr that stays short for a page of a hundred items or a document body. Two kinds:

- ``ContractModel``: a Pydantic model, validated when built (from either spelling of a member),
  frozen, unknown keys refused; the configuration, definitions and most results.
- ``ContractView``: a read-only view over a JSON result the graph produced, built in constant
  time without validation or copy; the results too large to validate on every call (resolve).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import Enum
from typing import Any, ClassVar

from pydantic import MISSING, BaseModel, ConfigDict

__all__ = ["ContractModel", "ContractView"]

# A repr shows a list by its length and a document body by its length: a page of items or a
# document would otherwise fill the screen. An omitted member is left out; everything else (a
# cursor included) is shown whole.
_BODY = "text"


class _Shown(str):
    """Text a repr prints as it is (``[3 items]``, not ``'[3 items]'``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


class ContractModel(BaseModel):
    """A value of the contract, as one of its JSON Schemas describes it.

    Attributes are the schema's members in snake_case (``provider_id``); the model is built from
    either spelling, and ``to_json()`` (or ``model_dump(mode="json")``) returns the JSON form
    every surface emits, in camelCase. A member the schema lets a value omit is
    ``pydantic.MISSING`` when omitted (never ``None``: ``null`` is not omission in the
    contract) and is left out of the JSON form.
    """

    model_config = ConfigDict(serialize_by_alias=True)

    def to_json(self) -> dict[str, Any]:
        """The contract's JSON form of this value, exactly as the other surfaces emit it."""
        data: dict[str, Any] = self.model_dump(mode="json", by_alias=True)
        return data

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        return _shown(super().__repr_args__())


def _shown(members: Iterable[tuple[str | None, Any]]) -> Iterator[tuple[str | None, Any]]:
    """The members a repr shows, and how."""
    for name, value in members:
        if value is MISSING:
            continue  # omitted, as in the JSON form
        if isinstance(value, list):
            yield name, _Shown(f"[{len(value)} item{'' if len(value) == 1 else 's'}]")
        elif name == _BODY and isinstance(value, str):
            yield name, _Shown(f"<{len(value)} characters>")
        elif isinstance(value, Enum):
            yield name, value.value
        else:
            yield name, value


def _copied(value: Any) -> Any:
    """A copy of a JSON value: new dicts and lists, the same strings and numbers."""
    if isinstance(value, dict):
        return {key: _copied(member) for key, member in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


class ContractView:
    """A read-only view of a JSON result, as one of the contract's JSON Schemas describes it.

    Attributes are the schema's members in snake_case, computed when read: an object member is
    a view, an array a new list, an omitted member ``pydantic.MISSING``. ``to_json()`` returns a
    copy of the JSON form. The view holds the result the graph returned, shared with the graph:
    it is neither copied nor validated when the view is built, which is what makes the view cheap.
    Two views are equal when they are of the same type and their JSON forms are equal.
    """

    __slots__ = ("_json",)
    #: The members' attribute names and JSON names, in schema order (for the repr).
    _members: ClassVar[tuple[tuple[str, ...], tuple[str, ...]]] = ((), ())

    def __init__(self, json: dict[str, Any]) -> None:
        self._json = json

    def to_json(self) -> dict[str, Any]:
        """A copy of the contract's JSON form of this value, as the other surfaces emit it."""
        copied: dict[str, Any] = _copied(self._json)
        return copied

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return bool(self._json == other._json)

    __hash__ = None  # type: ignore[assignment]  # the JSON form is a dict

    def __repr__(self) -> str:
        names, _ = self._members
        shown = _shown((name, getattr(self, name)) for name in names)
        return f"{type(self).__name__}({', '.join(f'{name}={value!r}' for name, value in shown)})"
