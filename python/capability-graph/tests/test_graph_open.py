"""open(): configuration (phase config) and provider loading (phase load) errors and successes."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
from pathlib import Path
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, CapabilityGraph, GraphError
from capability_graph_testing.common import capability, error_of, expected, inline, provider


def open_blocking(config: Any) -> BlockingCapabilityGraph:
    return BlockingCapabilityGraph.open(config)


def open_error(config: Any) -> dict[str, str]:
    with pytest.raises(GraphError) as excinfo:
        open_blocking(config).close()
    return error_of(excinfo)


def write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


UNREADABLE = expected(
    "CG_CONFIG_INVALID", "config", "Cannot read a valid bounded JSON configuration file"
)

# -- configuration file --------------------------------------------------------------------


def test_missing_config_file_is_the_seeds_unreadable_config_error(tmp_path: Path) -> None:
    assert open_error(tmp_path / "deliberately-missing-config.json") == UNREADABLE


def test_config_file_that_is_a_directory_is_unreadable(tmp_path: Path) -> None:
    assert open_error(tmp_path) == UNREADABLE


def test_config_fifo_is_unreadable_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    assert open_error(fifo) == UNREADABLE


def test_config_file_over_one_mebibyte_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"providers": []}' + " " * (1024 * 1024), encoding="utf-8")
    assert open_error(path) == UNREADABLE


@pytest.mark.parametrize(
    "content",
    [b"{", b'{"providers": [], "providers": []}', b'{"providers": [NaN]}', b"\xff\xfe"],
    ids=["truncated", "duplicate-key", "nan", "not-utf8"],
)
def test_config_file_that_is_not_pure_json_is_unreadable(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content)
    assert open_error(path) == UNREADABLE


def test_config_file_sources_resolve_against_the_config_folder(tmp_path: Path) -> None:
    write(tmp_path / "providers" / "acme.json", provider("acme", capability("a")))
    config = write(
        tmp_path / "conf" / "capability-graph.json",
        {"providers": [{"path": "../providers/acme.json"}]},
    )
    with open_blocking(config) as graph:
        assert [p.provider_id for p in graph.describe().providers] == ["acme"]


# -- configuration shape -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"providers": [], "extra": 1},
            "/ has a key that is not allowed"
            " (allowed: providers, scope, documents, budgets, model)",
        ),
        ({"providers": [], "scope": None}, "/scope must not be null (omit the key instead)"),
        (
            {"providers": [], "budgets": {"maxCapabilities": 0}},
            "/budgets/maxCapabilities must be at least 1",
        ),
        (
            {"providers": [], "budgets": {"maxResultBytes": 268435457}},
            "/budgets/maxResultBytes must be at most 268435456",
        ),
        (
            {"providers": [], "budgets": {"maxInputBytes": True}},
            "/budgets/maxInputBytes must be an integer",
        ),
        (
            {"providers": [], "budgets": {"maxInputBytes": "5"}},
            "/budgets/maxInputBytes must be an integer",
        ),
        ({"providers": "acme.json"}, "/providers must be an array"),
        ({}, "/ requires the key providers"),
    ],
    ids=[
        "unknown-key",
        "null-optional",
        "zero-budget",
        "budget-over-cap",
        "bool-budget",
        "string-budget",
        "string-for-list",
        "missing-providers",
    ],
)
def test_invalid_config_names_the_pointer_never_the_value(config: Any, message: str) -> None:
    assert open_error(config) == expected("CG_CONFIG_INVALID", "config", message)


def test_source_with_both_path_and_definition_is_config_invalid() -> None:
    config = {"providers": [{"path": "a.json", "definition": provider("acme")}]}
    assert open_error(config)["code"] == "CG_CONFIG_INVALID"


def test_missing_source_file_is_config_invalid(tmp_path: Path) -> None:
    config = write(tmp_path / "c.json", {"providers": [{"path": "nope.json"}]})
    assert open_error(config) == expected(
        "CG_CONFIG_INVALID", "config", "/providers/0/path is not a readable regular file"
    )


def test_duplicate_provider_id_is_config_invalid() -> None:
    assert open_error(inline(provider("acme"), provider("acme"))) == expected(
        "CG_CONFIG_INVALID", "config", "/providers/1 repeats a providerId"
    )


def test_scope_naming_a_provider_that_is_not_loaded_is_config_invalid() -> None:
    config = inline(provider("acme"), scope={"providers": ["acme", "ghost"]})
    assert open_error(config) == expected(
        "CG_CONFIG_INVALID", "config", "/scope/providers/1 names a provider that is not loaded"
    )


def test_unknown_executor_is_config_invalid() -> None:
    assert (
        open_error(inline(provider("acme"), model={"executor": "oracle"}))["code"]
        == "CG_CONFIG_INVALID"
    )


def test_config_that_is_not_an_object_is_config_invalid() -> None:
    assert open_error(42) == expected("CG_CONFIG_INVALID", "config", "/ must be an object")


# -- provider definitions ------------------------------------------------------------------


def test_empty_catalog_opens() -> None:
    with open_blocking(inline(provider("acme"))) as graph:
        assert graph.describe().providers[0].capability_count == 0


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        (
            provider("acme", capability("a", whenToUse=None)),
            "/capabilities/0/whenToUse must not be null (omit the key instead)",
        ),
        (
            provider("acme", capability("a", colour="red")),
            "/capabilities/0 has a key that is not allowed"
            " (allowed: id, name, description, whenToUse, tags, relations, documents)",
        ),
        (provider("acme", capability("a", tags="http")), "/capabilities/0/tags must be an array"),
        (provider("acme", capability("a", name=True)), "/capabilities/0/name must be a string"),
        (
            provider("acme", capability("A")),
            "/capabilities/0/id does not have the required format"
            " (expected: a-z, then up to 127 of a-z 0-9 . _ -)",
        ),
        (
            provider("Acme"),
            "/providerId does not have the required format"
            " (expected: a-z, then up to 63 of a-z 0-9 . _ -)",
        ),
        (
            provider("acme", capability("a"), capability("a")),
            "/capabilities/1/id repeats a capability id",
        ),
        (
            provider(
                "acme",
                capability(
                    "a",
                    documents=[
                        {"id": "d", "title": "D", "path": "x.md"},
                        {"id": "d", "title": "D", "path": "y.md"},
                    ],
                ),
            ),
            "/capabilities/0/documents/1/id repeats a document id",
        ),
    ],
    ids=[
        "null-optional",
        "unknown-key",
        "string-for-list",
        "bool-for-string",
        "bad-id",
        "bad-provider-id",
        "duplicate-capability",
        "duplicate-document",
    ],
)
def test_invalid_inline_definition_is_definition_invalid(definition: Any, message: str) -> None:
    assert open_error(inline(definition)) == expected("CG_DEFINITION_INVALID", "load", message)


@pytest.mark.parametrize(
    "path",
    ["../secret.md", "/etc/passwd", "a\\b.md", "c:x.md", "a/../../b.md", "a\x00b.md", "a\x1fb.md"],
    ids=["dotdot", "absolute", "backslash", "colon", "nested-dotdot", "nul", "control"],
)
def test_static_document_path_rules_are_definition_invalid(path: str) -> None:
    definition = provider(
        "acme", capability("a", documents=[{"id": "d", "title": "D", "path": path}])
    )
    assert open_error(inline(definition))["code"] == "CG_DEFINITION_INVALID"


@pytest.mark.parametrize(
    "value",
    [b"bytes", {"a"}, ("t",), datetime.date(2026, 1, 1), object(), float("nan"), 2**60],
    ids=["bytes", "set", "tuple", "date", "object", "nan", "huge-int"],
)
def test_non_json_python_values_in_inline_definitions_are_definition_invalid(value: Any) -> None:
    definition = provider("acme", capability("a", description=value))
    assert open_error(inline(definition))["code"] == "CG_DEFINITION_INVALID"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"providerId": "acme", "providerId": "acme"}', "/ an object has a duplicate key"),
        (b'{"providerId": NaN}', "/ not well-formed JSON"),
        (b"\xff", "/ not valid UTF-8"),
        (
            b'{"providerId": "\\ud800", "name": "A", "version": "1", "capabilities": []}',
            "/providerId a string has a lone surrogate",
        ),
        # a root that is not an object comes before its depth (CG-MSG-19)
        (b"[" * 100_000 + b"]" * 100_000, "/ must be an object"),
        (
            b'{"capabilities": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "/capabilities" + "/0" * 32 + " nesting deeper than 32",
        ),
        (b"{", "/ not well-formed JSON"),
    ],
    ids=[
        "duplicate-key",
        "nan",
        "invalid-utf8",
        "lone-surrogate",
        "deep-root-array",
        "deep-nesting",
        "truncated",
    ],
)
def test_definition_file_that_is_not_pure_json_is_definition_invalid(
    tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / "acme.json").write_bytes(content)
    config = write(tmp_path / "c.json", {"providers": [{"path": "acme.json"}]})
    assert open_error(config) == expected("CG_DEFINITION_INVALID", "load", message)


def nested_lists(depth: int) -> list[Any]:
    """A list whose innermost list is ``depth`` - 1 levels below it."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [33, 40])
def test_definition_file_too_deep_is_the_depth_fault_at_the_first_deep_container(
    tmp_path: Path, depth: int
) -> None:
    # /capabilities is at depth 1; two items, both too deep and both schema faults: the depth
    # rule comes first, at the first container at depth 33 in document order.
    branch = nested_lists(depth - 1)
    write(tmp_path / "acme.json", {**provider("acme"), "capabilities": [branch, branch]})
    config = write(tmp_path / "c.json", {"providers": [{"path": "acme.json"}]})
    assert open_error(config) == expected(
        "CG_DEFINITION_INVALID", "load", "/capabilities" + "/0" * 32 + " nesting deeper than 32"
    )


def test_definition_file_over_max_definition_bytes_is_definition_invalid(tmp_path: Path) -> None:
    write(tmp_path / "acme.json", provider("acme", capability("a")))
    config = write(
        tmp_path / "c.json",
        {"providers": [{"path": "acme.json"}], "budgets": {"maxDefinitionBytes": 20}},
    )
    assert open_error(config) == expected(
        "CG_DEFINITION_INVALID", "load", "/ exceeds budgets.maxDefinitionBytes"
    )


def test_capabilities_over_max_capabilities_is_catalog_too_large_at_load() -> None:
    config = inline(
        provider("acme", capability("a"), capability("b")), budgets={"maxCapabilities": 1}
    )
    assert open_error(config) == expected("CG_CATALOG_TOO_LARGE", "load")


# -- relations -----------------------------------------------------------------------------


def rel(kind: str, target: str) -> dict[str, str]:
    return {"kind": kind, "target": target}


@pytest.mark.parametrize(
    "definition",
    [
        provider("acme", capability("a", relations=[rel("requires", "missing")])),
        provider("acme", capability("a", relations=[rel("requires", "a")])),
        provider("acme", capability("a", relations=[rel("requires", "acme::a")])),
        provider(
            "acme",
            capability("a", relations=[rel("related", "b"), rel("related", "b")]),
            capability("b"),
        ),
        provider("acme", capability("a", relations=[rel("depends", "b")]), capability("b")),
        provider("acme", capability("a", relations=[rel("requires", "acme::")]), capability("b")),
        provider("acme", capability("a", relations=[rel("requires", "acme::missing")])),
    ],
    ids=[
        "missing-local",
        "self",
        "self-full-id",
        "duplicate-edge",
        "unknown-kind",
        "malformed-target",
        "missing-same-provider-full-id",
    ],
)
def test_invalid_relation_is_relation_invalid(definition: Any) -> None:
    assert open_error(inline(definition)) == expected("CG_RELATION_INVALID", "load")


@pytest.mark.parametrize("kind", ["requires", "parent", "specializes"])
def test_cycle_in_an_acyclic_kind_is_relation_cycle(kind: str) -> None:
    definition = provider(
        "acme",
        capability("a", relations=[rel(kind, "b")]),
        capability("b", relations=[rel(kind, "c")]),
        capability("c", relations=[rel(kind, "a")]),
    )
    assert open_error(inline(definition)) == expected("CG_RELATION_CYCLE", "load")


def test_cycle_across_providers_is_relation_cycle() -> None:
    acme = provider("acme", capability("a", relations=[rel("requires", "billing::b")]))
    billing = provider("billing", capability("b", relations=[rel("requires", "acme::a")]))
    assert open_error(inline(acme, billing)) == expected("CG_RELATION_CYCLE", "load")


def test_related_cycles_are_allowed() -> None:
    definition = provider(
        "acme",
        capability("a", relations=[rel("related", "b")]),
        capability("b", relations=[rel("related", "a")]),
    )
    open_blocking(inline(definition)).close()


def test_cross_provider_target_of_an_unloaded_provider_is_not_a_load_error() -> None:
    open_blocking(
        inline(provider("acme", capability("a", relations=[rel("requires", "ghost::x")])))
    ).close()


# -- revisions -----------------------------------------------------------------------------


def test_revision_does_not_depend_on_key_order_or_whitespace(tmp_path: Path) -> None:
    definition = provider("acme", capability("a", tags=["x"]))
    (tmp_path / "a.json").write_text(json.dumps(definition, indent=4), encoding="utf-8")
    (tmp_path / "b.json").write_text(
        json.dumps(dict(reversed(definition.items()))), encoding="utf-8"
    )
    revisions = []
    for name in ("a.json", "b.json"):
        with open_blocking(write(tmp_path / f"c-{name}", {"providers": [{"path": name}]})) as graph:
            revisions.append(graph.describe().providers[0].revision)
    assert revisions[0] == revisions[1]


def test_revision_is_r_colon_and_sixteen_hex_of_the_sha256_of_the_rfc8785_bytes() -> None:
    import hashlib

    import rfc8785

    definition = provider("acme", capability("a", whenToUse="Use it for 𝄞 music."))
    with open_blocking(inline(definition)) as graph:
        described = graph.describe()
    provider_revision = "r:" + hashlib.sha256(rfc8785.dumps(definition)).hexdigest()[:16]
    assert described.providers[0].revision == provider_revision
    graph_object = rfc8785.dumps({"acme": provider_revision})
    assert described.revision == "r:" + hashlib.sha256(graph_object).hexdigest()[:16]


def test_golden_revisions_of_a_small_definition() -> None:
    definition = {"providerId": "a", "name": "A", "version": "1", "capabilities": []}
    with open_blocking(inline(definition)) as graph:
        described = graph.describe()
    assert described.providers[0].revision == "r:a04a4be6b823c567"
    assert described.revision == "r:21bc338358ac32b0"


def test_graph_revision_covers_only_the_providers_in_scope() -> None:
    acme, billing = provider("acme", capability("a")), provider("billing", capability("b"))
    changed_billing = provider("billing", capability("b"), capability("c"))
    scoped = {"scope": {"providers": ["acme"]}}
    revisions = []
    for definitions in ((acme, billing), (acme, changed_billing), (acme,)):
        with open_blocking(inline(*definitions, **scoped if len(definitions) > 1 else {})) as g:
            revisions.append(g.describe().revision)
    # a change outside the scope is invisible; the scoped graph reads like acme alone
    assert revisions[0] == revisions[1] == revisions[2]


def test_graph_revision_changes_with_a_provider_in_scope() -> None:
    scoped = {"scope": {"providers": ["acme"]}}
    revisions = set()
    for acme in (provider("acme", capability("a")), provider("acme", capability("z"))):
        with open_blocking(inline(acme, provider("billing"), **scoped)) as graph:
            revisions.add(graph.describe().revision)
    assert len(revisions) == 2


def test_async_open_rejects_and_leaves_nothing_open() -> None:
    async def scenario() -> dict[str, str]:
        with pytest.raises(GraphError) as excinfo:
            await CapabilityGraph.open(inline(provider("acme"), provider("acme")))
        return error_of(excinfo)

    assert asyncio.run(scenario())["code"] == "CG_CONFIG_INVALID"


def test_null_in_a_config_file_is_config_invalid_naming_the_pointer(tmp_path: Path) -> None:
    config = write(tmp_path / "c.json", {"providers": [], "scope": None})
    assert open_error(config) == expected(
        "CG_CONFIG_INVALID", "config", "/scope must not be null (omit the key instead)"
    )


def test_null_in_an_inline_definition_of_a_config_file_is_definition_invalid(
    tmp_path: Path,
) -> None:
    definition = provider("acme", capability("a", whenToUse=None))
    config = write(tmp_path / "c.json", {"providers": [{"definition": definition}]})
    assert open_error(config) == expected(
        "CG_DEFINITION_INVALID",
        "load",
        "/capabilities/0/whenToUse must not be null (omit the key instead)",
    )


def test_open_accepts_the_generated_host_config_model() -> None:
    from capability_graph import HostConfig

    model = HostConfig.model_validate(inline(provider("acme", capability("a"))))
    with open_blocking(model) as graph:
        assert [i.id for i in graph.list().items] == ["acme::a"]


# -- integer literals in files (CG-CONV-13) -------------------------------------------------


@pytest.mark.parametrize("digits", [20, 401, 5000])
def test_a_definition_file_integer_beyond_2_53_is_the_range_fault_before_the_schema(
    tmp_path: Path, digits: int
) -> None:
    literal = "9" * digits
    (tmp_path / "acme.json").write_text(
        '{"providerId": "acme", "name": "A", "version": ' + literal + ', "capabilities": []}',
        encoding="utf-8",
    )
    config = write(tmp_path / "c.json", {"providers": [{"path": "acme.json"}]})
    assert open_error(config) == expected(
        "CG_DEFINITION_INVALID", "load", "/version integers must stay within +/-2^53"
    )


@pytest.mark.parametrize("sign", ["", "-"])
def test_a_configuration_file_integer_of_thousands_of_digits_is_the_range_fault(
    tmp_path: Path, sign: str
) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        '{"providers": [], "budgets": {"maxInputBytes": ' + sign + "7" * 5000 + "}}",
        encoding="utf-8",
    )
    assert open_error(path) == expected(
        "CG_CONFIG_INVALID", "config", "/budgets/maxInputBytes integers must stay within +/-2^53"
    )


def _deep_definition_text(depth: int) -> str:
    return (
        '{"providerId": "deep", "name": "Deep", "version": "1", "capabilities": [{"id": "a",'
        ' "name": "A", "description": "An a.", "tags": ' + "[" * depth + "]" * depth + "}]}"
    )


@pytest.mark.parametrize("depth", [31, 1000, 100_000])
def test_an_inline_definition_of_a_configuration_file_is_too_deep_at_any_depth(
    tmp_path: Path, depth: int
) -> None:
    # CG-CONV-15: its containers at depth 33 (36 of the file) are passed over, then judged at load
    # from the definition's own root; 31 levels under tags (depth 3) reach depth 33.
    config = tmp_path / "c.json"
    config.write_text('{"providers": [{"definition": ' + _deep_definition_text(depth) + "}]}")
    assert open_error(config) == expected(
        "CG_DEFINITION_INVALID",
        "load",
        "/capabilities/0/tags" + "/0" * 30 + " nesting deeper than 32",
    )


def test_a_configuration_fault_wins_over_a_deep_inline_definition(tmp_path: Path) -> None:
    # CG-OPEN-1: reading the file does not stop at the deep definition; step 2 comes first.
    config = tmp_path / "c.json"
    config.write_text(
        '{"providers": [{"definition": '
        + _deep_definition_text(100_000)
        + '}], "budgets": {"maxInputBytes": 0}}'
    )
    assert open_error(config) == expected(
        "CG_CONFIG_INVALID", "config", "/budgets/maxInputBytes must be at least 1"
    )


def test_a_configuration_whose_deep_brackets_do_not_close_is_unreadable(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"providers": [{"definition": ' + "[" * 100_000 + "}]}")
    assert open_error(config) == UNREADABLE
