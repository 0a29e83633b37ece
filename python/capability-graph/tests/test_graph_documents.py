"""read_document through the graph: roots, approval, references and the document error codes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from capability_graph import BlockingCapabilityGraph, GraphError
from capability_graph_testing.common import (
    capability,
    error_of,
    expected,
    inline,
    provider,
    schema_validator,
)

DOCS = [
    {"id": "guide", "title": "Guide", "path": "knowledge/guide.md"},
    {"id": "notes", "title": "Notes", "path": "knowledge/notes.txt"},
    {"id": "upstream", "title": "Upstream", "url": "https://example.com/x"},
    {"id": "gone", "title": "Gone", "path": "knowledge/gone.md"},
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "guide.md").write_text(
        "# Guide\n\nValidate 输入.\n", encoding="utf-8"
    )
    (tmp_path / "knowledge" / "notes.txt").write_text("plain", encoding="utf-8")
    (tmp_path / "acme.json").write_text(
        json.dumps(provider("acme", capability("a", documents=DOCS))), encoding="utf-8"
    )
    (tmp_path / "secret.json").write_text(
        json.dumps(provider("secret", capability("s", documents=DOCS[:1]))), encoding="utf-8"
    )
    return tmp_path


def config(folder: Path, **extra: Any) -> Path:
    path = folder / "config.json"
    path.write_text(
        json.dumps({"providers": [{"path": "acme.json"}, {"path": "secret.json"}], **extra}),
        encoding="utf-8",
    )
    return path


def read_error(
    graph: BlockingCapabilityGraph, capability_id: str, document_id: str
) -> dict[str, str]:
    with pytest.raises(GraphError) as excinfo:
        graph.read_document(capability_id=capability_id, document_id=document_id)
    return error_of(excinfo)


def test_read_returns_text_bytes_and_sha256(folder: Path) -> None:
    body = (folder / "knowledge" / "guide.md").read_bytes()
    with BlockingCapabilityGraph.open(config(folder)) as graph:
        result = graph.read_document(capability_id="acme::a", document_id="guide").to_json()
    assert result == {
        "capabilityId": "acme::a",
        "documentId": "guide",
        "mediaType": "text/markdown",
        "bytes": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
        "text": body.decode(),
    }
    schema_validator("read-document-result.schema.json").validate(result)


def test_non_markdown_suffix_is_text_plain(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder)) as graph:
        assert (
            graph.read_document(capability_id="acme::a", document_id="notes").media_type
            == "text/plain"
        )


def test_url_document_is_reference_only(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder)) as graph:
        assert read_error(graph, "acme::a", "upstream") == expected(
            "CG_DOCUMENT_REFERENCE_ONLY", "document"
        )


def test_undeclared_document_is_document_not_found(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder)) as graph:
        assert read_error(graph, "acme::a", "nope") == expected("CG_DOCUMENT_NOT_FOUND", "document")


def test_declared_document_whose_file_is_missing_is_document_not_found(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder)) as graph:
        assert read_error(graph, "acme::a", "gone") == expected("CG_DOCUMENT_NOT_FOUND", "document")


def test_missing_capability_is_capability_not_found_in_phase_document(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder)) as graph:
        assert read_error(graph, "acme::zzz", "guide") == expected(
            "CG_CAPABILITY_NOT_FOUND", "document"
        )


def test_capability_out_of_scope_is_access_denied_in_phase_document(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder, scope={"providers": ["acme"]})) as graph:
        assert read_error(graph, "secret::s", "guide") == expected("CG_ACCESS_DENIED", "document")


def test_body_not_approved_is_access_denied_with_the_body_message(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder, documents={"bodies": ["secret"]})) as graph:
        assert read_error(graph, "acme::a", "guide") == expected(
            "CG_ACCESS_DENIED", "document", "Document body is not approved for this provider"
        )
        assert graph.read_document(capability_id="secret::s", document_id="guide").bytes > 0


def test_bodies_none_denies_every_body(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder, documents={"bodies": "none"})) as graph:
        assert read_error(graph, "acme::a", "guide")["code"] == "CG_ACCESS_DENIED"


def test_inline_provider_without_document_root_is_root_required() -> None:
    definition = provider("acme", capability("a", documents=DOCS[:1]))
    with BlockingCapabilityGraph.open({"providers": [{"definition": definition}]}) as graph:
        assert read_error(graph, "acme::a", "guide") == expected(
            "CG_DOCUMENT_ROOT_REQUIRED", "document"
        )


def test_inline_provider_with_document_root_reads_below_it(folder: Path) -> None:
    definition = provider("acme", capability("a", documents=DOCS[:1]))
    source = {"definition": definition, "documentRoot": str(folder)}
    with BlockingCapabilityGraph.open({"providers": [source]}) as graph:
        assert graph.read_document(capability_id="acme::a", document_id="guide").text.startswith(
            "# Guide"
        )


def test_document_over_max_document_bytes_is_document_too_large(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder, budgets={"maxDocumentBytes": 4})) as graph:
        assert read_error(graph, "acme::a", "guide") == expected(
            "CG_DOCUMENT_TOO_LARGE", "document"
        )


def test_document_root_that_is_not_a_directory_is_config_invalid(folder: Path) -> None:
    definition = provider("acme")
    source = {"definition": definition, "documentRoot": str(folder / "acme.json")}
    with pytest.raises(GraphError) as excinfo:
        BlockingCapabilityGraph.open({"providers": [source]})
    assert error_of(excinfo)["code"] == "CG_CONFIG_INVALID"


def test_no_error_or_result_names_the_root(folder: Path) -> None:
    with BlockingCapabilityGraph.open(config(folder)) as graph:
        outputs = [
            json.dumps(graph.read_document(capability_id="acme::a", document_id="guide").to_json())
        ]
        outputs += [
            json.dumps(read_error(graph, "acme::a", d)) for d in ("gone", "upstream", "nope")
        ]
    assert not any(str(folder) in text for text in outputs)


def test_missing_document_root_names_its_provider_field(folder: Path) -> None:
    path = folder / "config.json"
    path.write_text(
        json.dumps(
            {"providers": [{"path": "acme.json"}, {"path": "secret.json", "documentRoot": "no"}]}
        ),
        encoding="utf-8",
    )
    with pytest.raises(GraphError) as excinfo:
        BlockingCapabilityGraph.open(path)
    assert excinfo.value.to_json() == {
        "code": "CG_CONFIG_INVALID",
        "phase": "config",
        "message": "/providers/1/documentRoot must be an existing directory",
        "nextAction": "check_config",
    }


@pytest.mark.parametrize(
    ("url", "media_type"),
    [
        ("https://example.com/guide.md?x=1#top", "text/markdown"),
        ("https://example.com/guide.m%64", "text/plain"),  # escapes are not decoded
        ("https://guide.md", "text/plain"),  # no path: the host name gives no suffix
        ("https://guide.md?a=b.md", "text/plain"),
    ],
)
def test_a_url_documents_media_type_comes_from_its_path_as_written(
    url: str, media_type: str
) -> None:
    document = {"id": "ref", "title": "Ref", "url": url}
    config = inline(provider("acme", capability("a", documents=[document])))
    with BlockingCapabilityGraph.open(config) as graph:
        result = graph.call("resolve_capabilities", {"ids": ["acme::a"]})
    (metadata,) = result["capabilities"][0]["documents"]
    assert metadata["mediaType"] == media_type


def test_a_linked_definition_file_has_the_links_folder_as_its_default_root(
    tmp_path: Path,
) -> None:
    """[CG-CFG-10]: the folder of the configured path, not of the link's target."""
    (tmp_path / "defs").mkdir()
    (tmp_path / "site").mkdir()
    document = {"id": "guide", "title": "Guide", "path": "guide.md"}
    (tmp_path / "defs" / "acme.json").write_text(
        json.dumps(provider("acme", capability("a", documents=[document]))), encoding="utf-8"
    )
    (tmp_path / "defs" / "guide.md").write_text("target folder\n", encoding="utf-8")
    (tmp_path / "site" / "guide.md").write_text("link folder\n", encoding="utf-8")
    (tmp_path / "site" / "acme.json").symlink_to("../defs/acme.json")
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"providers": [{"path": "site/acme.json"}]}), encoding="utf-8")
    with BlockingCapabilityGraph.open(path) as graph:
        result = graph.read_document(capability_id="acme::a", document_id="guide")
    assert result.text == "link folder\n"


def test_a_byte_order_mark_and_upper_case_suffixes_are_kept_as_they_are(tmp_path: Path) -> None:
    """[CG-DOC-11]: the mark stays in the text; [CG-DEF-7]: suffixes in any ASCII case."""
    documents = [
        {"id": "bom", "title": "Bom", "path": "bom.MD"},
        {"id": "mixed", "title": "Mixed", "path": "notes.Mdx"},
        {"id": "data", "title": "Data", "path": "data.Json"},
    ]
    (tmp_path / "acme.json").write_text(
        json.dumps(provider("acme", capability("a", documents=documents))), encoding="utf-8"
    )
    body = b"\xef\xbb\xbf# Title\r\n"
    (tmp_path / "bom.MD").write_bytes(body)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"providers": [{"path": "acme.json"}]}), encoding="utf-8")
    with BlockingCapabilityGraph.open(path) as graph:
        read = graph.read_document(capability_id="acme::a", document_id="bom").to_json()
        detail = graph.resolve(ids=["acme::a"]).to_json()["capabilities"][0]
    assert read["text"] == "\ufeff# Title\r\n"
    assert (read["bytes"], read["sha256"]) == (len(body), hashlib.sha256(body).hexdigest())
    assert [(d["id"], d["mediaType"]) for d in detail["documents"]] == [
        ("bom", "text/markdown"),
        ("mixed", "text/markdown"),
        ("data", "text/plain"),
    ]
