"""The compiled validators (the fast path of every request check), the generated models (the
host configuration, definitions and the SDK's types) and the JSON Schemas (the contract) accept
the same inputs.

The core checks requests, configurations and definitions with fast validators generated from
the schemas and asks the schema only to explain a failure; if a fast validator accepted what the
schema rejects, the reference would accept invalid input. Hypothesis builds JSON values from
each schema's own vocabulary (its keys and values near its bounds) and every validator must
agree on every one.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capability_graph._core.json import whole_numbers_as_integers
from capability_graph._core.schemas import compiled_accepts, compiled_validator
from capability_graph_testing.common import schema_validator

SHAPES = [  # schema, compiled validator, generated model (module.Class) where the runtime has one
    ("describe-request.schema.json", "describe_request", None),
    ("list-request.schema.json", "list_request", None),
    ("resolve-request.schema.json", "resolve_request", "resolve_request.ResolveRequest"),
    ("match-request.schema.json", "match_request", None),
    ("read-document-request.schema.json", "read_document_request", None),
    ("config.schema.json", "config", "config.HostConfig"),
    ("definition.schema.json", "definition", "definition.ProviderDefinition"),
]

KEYS = [
    "ids", "relations", "kinds", "depth", "providers", "tags", "limit", "cursor", "request",
    "context", "timeoutMs", "capabilityId", "documentId", "path", "definition", "documentRoot",
    "scope", "documents", "bodies", "budgets", "maxCapabilities", "maxInputBytes", "model",
    "executor", "steps", "return", "raise", "code", "sleepMs", "then", "providerId", "name",
    "version", "capabilities", "id", "description", "whenToUse", "title", "url", "kind", "target",
    "x",
]  # fmt: skip
STRINGS = [
    "", "acme", "acme::a", "acme::route.validation", "Acme", "a b", "all", "none", "requires",
    "related", "scripted", "lexical", "openai", "codex", "guide", "x.md", "../x", "https://e.com/x",
    "r:0123456789abcdef", "CG_MODEL_REFUSED", "retry", "5", "A" * 70, "\x00", "é",
]  # fmt: skip
SCALARS = st.one_of(
    st.sampled_from(STRINGS),
    st.sampled_from([0, 1, 2, 5, 8, 9, 20, 21, 100, 500, 501, 600000, 600001, -1, 2**31]),
    st.sampled_from([0.5, 1.5, -0.0]),
    st.booleans(),
)


def json_values() -> st.SearchStrategy[Any]:
    return st.recursive(
        SCALARS,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.sampled_from(KEYS), children, max_size=5),
        ),
        max_leaves=12,
    )


def model_for(path: str) -> Any:
    module, _, name = path.partition(".")
    return getattr(importlib.import_module(f"capability_graph._generated.models.{module}"), name)


def model_accepts(model: Any, value: Any) -> bool:
    try:
        model.model_validate(value)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(("schema", "compiled", "model"), SHAPES, ids=[s for s, _, _ in SHAPES])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.dictionaries(st.sampled_from(KEYS), json_values(), max_size=5))
def test_model_compiled_validator_and_schema_agree(
    schema: str, compiled: str, model: str | None, value: Any
) -> None:
    # The core hands the fast validators whole numbers as integers (JSON's 5.0 is 5), as here.
    by_schema = schema_validator(schema).is_valid(value)
    normalized = whole_numbers_as_integers(value)
    if model is not None:
        assert model_accepts(model_for(model), normalized) == by_schema
    assert compiled_accepts(compiled_validator(compiled), normalized) == by_schema
