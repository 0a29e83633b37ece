"""The base class of every model generated from ``spec/capability-graph/schemas``.

The models themselves are generated (``tools/codegen.py``): snake_case attributes, the schema's
camelCase names as aliases (a model is built from either), frozen, unknown keys refused. This
base adds what every one of them shares and no schema can say: the JSON form is the contract's
(aliases, omitted fields left out), which ``to_json()`` returns, and a repr that stays short
for a page of a hundred items or a document body.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import Any

from pydantic import MISSING, BaseModel, ConfigDict

__all__ = ["ContractModel"]

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
        for name, value in super().__repr_args__():
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
