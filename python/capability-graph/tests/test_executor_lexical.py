"""The lexical executor: the tokenization and BM25 ranking of the spec, pinned exactly, and checked
against a plain re-implementation of the spec's formulas on generated catalogs."""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capability_graph import BlockingCapabilityGraph, ErrorCode, GraphError
from capability_graph._core.executors import build_executor, lexical
from capability_graph._core.executors.lexical import _CACHE, rank, tokenize
from capability_graph._core.match import MatchOutcome, run_match
from capability_graph_testing.matching import (
    CATALOG,
    make_job,
    model_error,
    raises_graph_error,
    run,
)


def entry(ident: str, name: str = "", description: str = "", **extra: Any) -> dict[str, Any]:
    provider = ident.split("::")[0]
    return {
        "id": ident,
        "providerId": provider,
        "name": name,
        "description": description,
        "tags": extra.pop("tags", []),
        **extra,
    }


KANA_BIGRAMS = ["ひら", "らが", "がな", "なカ", "カタ", "タカ", "カナ"]


# -- tokenization ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Validate the Request", ["validate", "request"]),
        ("snake_case, kebab-case & dots.too", ["snake", "case", "kebab", "case", "dot", "too"]),
        ("ＡＰＩ　Ｖ２", ["api", "v2"]),  # NFKC folds full-width forms
        ("Café ÉCOLE", ["café", "école"]),
        ("policies queries", ["policy", "query"]),
        ("ties lies", ["tie", "lie"]),  # "ies" -> "y" needs 5+ letters; then the "s" rule
        ("processes classes", ["process", "class"]),
        ("invoices routes caches", ["invoice", "route", "cache"]),
        ("status analysis address", ["status", "analysis", "address"]),
        ("bus gas ads", ["bus", "gas", "ads"]),  # 3 letters or fewer: unchanged
        ("naïves", ["naïves"]),  # the plural rule is for ASCII letters only
        ("v2s 1000s", ["v2s", "1000s"]),
        ("I need to do it with a form", ["form"]),
        ("请求校验", ["请", "求", "校", "验", "请求", "求校", "校验"][1:]),  # 请 is a stopword
        ("API接口v2", ["api", "接", "口", "接口", "v2"]),
        (
            "ひらがなカタカナ",
            [*"ひらがなカタカナ", "ひら", "らが", "がな", "なカ", "カタ", "タカ", "カナ"],
        ),
        ("한국어 검색", ["한국어", "검색"]),  # Hangul words stay whole
        ("", []),
        ("!!! ... ---", []),
    ],
)
def test_tokenize(text: str, terms: list[str]) -> None:
    assert tokenize(text) == terms


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        # [CG-MODEL-16]: lowercasing is per code point, without the final-sigma rule.
        ("ΟΔΟΣ οδος", ["οδοσ", "οδος"]),
        ("ẞ İx", ["ß", "x"]),  # İ -> i + U+0307 (a mark: a separator); "i" is a stopword
        # First assigned in Unicode 15.0 and not NFKC-inert: a space, whatever the runtime.
        ("alpha\U0001e030beta", ["alpha", "beta"]),
        ("e\U0001e4ec\u0301", ["e"]),  # the mark would otherwise let e + U+0301 compose
        # Assigned after Unicode 15.0 (16.0: Cyrillic capital tje): not a letter here.
        ("alpha\u1c89beta", ["alpha", "beta"]),
        # Assigned in 15.0 (CJK Extension H, Kawi): letters, even on a 14.0 runtime.
        ("\U00031350\U00031351", ["\U00031350", "\U00031351", "\U00031350\U00031351"]),
        ("\U00011f04\U00011f05", ["\U00011f04\U00011f05"]),
        ("ﬁle ① ™ Ⓩ", ["file", "1", "tm", "z"]),  # NFKC before the word classes
    ],
)
def test_tokenize_uses_the_contract_unicode_data(text: str, terms: list[str]) -> None:
    assert tokenize(text) == terms


def test_stopwords_are_checked_before_the_plural_rule() -> None:
    assert tokenize("this these uses") == ["use"]  # "uses" -> "use"; "use" itself is a stopword


# -- ranking, pinned ---------------------------------------------------------------------------


def test_ranking_of_the_example_catalog_is_pinned() -> None:
    assert rank(CATALOG, "validate the request body", 5) == {
        "status": "matched",
        "candidates": [
            {"id": "acme::schema.request", "confidence": 0.3472},
            {"id": "acme::route.validation", "confidence": 0.3055},
        ],
    }
    assert rank(CATALOG, "create an invoice", 5) == {
        "status": "matched",
        "candidates": [{"id": "billing::invoice.create", "confidence": 0.8258}],
    }
    assert rank(CATALOG, "schema for request", 1) == {
        "status": "matched",
        "candidates": [{"id": "acme::schema.request", "confidence": 0.8291}],
    }


def test_unrelated_request_is_no_match() -> None:
    assert rank(CATALOG, "what is the weather in Paris", 5) == {
        "status": "no_match",
        "candidates": [],
    }


def test_weak_overlap_below_threshold_is_no_match() -> None:
    catalog = [entry("a::x", "alpha", "zeta"), entry("a::y", "beta", "gamma")]
    request = "alpha " + " ".join(f"w{i}" for i in range(40))
    assert rank(catalog, request, 5)["status"] == "no_match"
    assert rank(catalog, "alpha", 5)["status"] == "matched"


@pytest.mark.parametrize("request_text", ["the and of", "!!!", "   ", "I want to do it"])
def test_request_without_terms_is_unknown(request_text: str) -> None:
    assert rank(CATALOG, request_text, 5) == {"status": "unknown", "candidates": []}


def test_empty_catalog_is_no_match() -> None:
    assert rank([], "validate", 5) == {"status": "no_match", "candidates": []}


@pytest.mark.parametrize("request_text", ["the and of", "!!!"])
def test_request_without_terms_over_an_empty_catalog_is_unknown(request_text: str) -> None:
    # [CG-MODEL-17]: the request is judged before the catalog.
    assert rank([], request_text, 5) == {"status": "unknown", "candidates": []}


@pytest.mark.parametrize(
    ("value", "rounded"),
    [(0.15625, 0.1563), (0.09375, 0.0938), (0.96875, 0.9688), (0.123449999, 0.1234)],
)
def test_confidence_exactly_halfway_rounds_up(value: float, rounded: float) -> None:
    # [CG-MODEL-14]: round() would give 0.1562 for 0.15625 (half to even).
    assert lexical._round(value) == rounded


def test_entries_without_text_never_match() -> None:
    catalog = [entry("a::x"), entry("a::y")]
    assert rank(catalog, "validate", 5) == {"status": "no_match", "candidates": []}


def test_ties_are_broken_by_id_and_limit_cuts_after_sorting() -> None:
    catalog = [entry(f"p::c{i}", "Upload file", "Store an upload.") for i in (3, 1, 2)]
    result = rank(catalog, "upload", 2)
    assert [c["id"] for c in result["candidates"]] == ["p::c1", "p::c2"]
    assert len({c["confidence"] for c in result["candidates"]}) == 1


def test_field_weights_rank_name_over_tags_over_when_to_use_over_description() -> None:
    catalog = [
        entry("p::desc", "x", "refund"),
        entry("p::when", "x", "y", whenToUse="refund"),
        entry("p::tags", "x", "y", tags=["refund"]),
        entry("p::name", "refund", "y"),
    ]
    ranked = [c["id"] for c in rank(catalog, "refund", 5)["candidates"]]
    assert ranked == ["p::name", "p::tags", "p::when", "p::desc"]


def test_confidences_are_rounded_to_four_decimals_and_within_unit_interval() -> None:
    for request in ("validate request", "http schema", "invoice customer send"):
        for candidate in rank(CATALOG, request, 20)["candidates"]:
            confidence = candidate["confidence"]
            assert 0.05 <= confidence < 1
            assert confidence == round(confidence, 4)


# -- ranking, against a plain re-implementation of the spec ------------------------------------


def spec_rank(catalog: Sequence[Mapping[str, Any]], request: str, limit: int) -> dict[str, Any]:
    """executors.md "The lexical executor", written as plainly as possible."""
    query = list(dict.fromkeys(tokenize(request)))
    if not query:  # before the empty catalog ([CG-MODEL-17])
        return {"status": "unknown", "candidates": []}
    if not catalog:
        return {"status": "no_match", "candidates": []}
    weights = {"name": 3.0, "tags": 2.0, "whenToUse": 1.5, "description": 1.0}
    docs = []
    for item in catalog:
        tf: dict[str, float] = {}
        length = 0.0
        for field, weight in weights.items():
            value = item.get(field)
            texts = value if isinstance(value, list) else [value] if isinstance(value, str) else []
            for text in texts:
                for term in tokenize(text):
                    tf[term] = tf.get(term, 0.0) + weight
                    length += weight
        docs.append((tf, length))
    n = len(docs)
    avgdl = sum(length for _, length in docs) / n or 1.0
    idf = {
        t: math.log(
            1 + (n - sum(t in d for d, _ in docs) + 0.5) / (sum(t in d for d, _ in docs) + 0.5)
        )
        for t in query
    }
    ranked = []
    for item, (tf, length) in zip(catalog, docs, strict=True):
        score = 0.0
        for t in query:
            if t in tf:
                score += idf[t] * tf[t] * 2.2 / (tf[t] + 1.2 * (1 - 0.75 + 0.75 * length / avgdl))
        idf_sum = 0.0
        for t in query:  # left to right, never compensated (sum() is, from Python 3.12)
            idf_sum += idf[t]
        exact = Decimal(score / (2.2 * idf_sum))
        confidence = float(exact.quantize(Decimal("0.0001"), ROUND_HALF_UP))
        if confidence >= 0.05:
            ranked.append((-confidence, item["id"]))
    ranked.sort()
    if not ranked:
        return {"status": "no_match", "candidates": []}
    return {
        "status": "matched",
        "candidates": [{"id": i, "confidence": -c} for c, i in ranked[:limit]],
    }


WORDS = ["upload", "uploads", "file", "image", "resize", "cache", "caches", "token", "login", "the"]
text = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)


@st.composite
def catalogs(draw: st.DrawFn) -> list[dict[str, Any]]:
    size = draw(st.integers(0, 16))
    result = []
    for i in range(size):
        extra: dict[str, Any] = {"tags": draw(st.lists(text, max_size=3))}
        if draw(st.booleans()):
            extra["whenToUse"] = draw(text)
        result.append(entry(f"p::c{draw(st.integers(0, 5))}.{i}", draw(text), draw(text), **extra))
    return result


@settings(max_examples=60, deadline=None)
@given(catalog=catalogs(), request_text=text, limit=st.integers(1, 20))
def test_ranking_equals_the_spec_formula(
    catalog: list[dict[str, Any]], request_text: str, limit: int
) -> None:
    assert rank(catalog, request_text, limit) == spec_rank(catalog, request_text, limit)


# -- caching and the worker thread -------------------------------------------------------------


def test_cached_index_follows_content_changes() -> None:
    catalog = [entry("p::a", "upload"), entry("p::b", "resize")]
    assert rank(catalog, "resize", 5)["candidates"][0]["id"] == "p::b"
    catalog[0]["description"] = "resize resize"
    assert rank(catalog, "resize", 5) == spec_rank(catalog, "resize", 5)
    frozen = tuple(catalog)
    assert rank(frozen, "resize", 5) == rank(frozen, "resize", 5) == spec_rank(catalog, "resize", 5)


def big_catalog(size: int) -> tuple[dict[str, Any], ...]:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    return tuple(
        entry(f"p::c{i}", f"{words[i % 9]} {words[(i * 7) % 9]} n{i}", f"item {i} {words[i % 5]}")
        for i in range(size)
    )


def test_a_large_catalog_ranked_in_slices_on_the_loop_gives_the_same_result() -> None:
    catalog = big_catalog(3000)
    executor = build_executor({"executor": "lexical"})
    job = make_job("gamma n42 delta", catalog=catalog, limit=5)
    outcome = run(run_match(executor, job, cancel=None, max_output_bytes=65536))
    expected = rank(list(catalog), "gamma n42 delta", 5)
    assert outcome == MatchOutcome(expected["status"], expected["candidates"])
    assert outcome.candidates[0]["id"] == "p::c42"


def test_timeout_fires_while_a_large_catalog_is_being_indexed() -> None:
    catalog = big_catalog(40_000)  # a cold index takes far longer than the deadline
    executor = build_executor({"executor": "lexical"})
    job = make_job("gamma", catalog=catalog, timeout_s=0.05)
    error = run(raises_graph_error(run_match(executor, job, cancel=None, max_output_bytes=65536)))
    assert error.to_json() == model_error(ErrorCode.CG_MODEL_TIMEOUT)
    # The deadline came first: the indexing stopped at its next slice and was never finished.
    assert _CACHE.cached(catalog) is None
    assert not [t for t in threading.enumerate() if t.name.startswith("cg-")]


def test_lexical_through_run_match_validates_and_names_itself() -> None:
    executor = build_executor({"executor": "lexical", "timeoutMs": 1000})
    assert executor.name == "lexical"
    outcome = run(
        run_match(executor, make_job("create invoice"), cancel=None, max_output_bytes=65536)
    )
    assert outcome.status == "matched"
    assert outcome.candidates[0]["id"] == "billing::invoice.create"


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            {"executor": "lexical", "threshold": 0.1},
            "/model has a key that is not allowed (allowed: executor, timeoutMs)",
        ),
        (
            {"executor": "lexical", "timeoutMs": None},
            "/model/timeoutMs must not be null (omit the key instead)",
        ),
    ],
)
def test_bad_lexical_config(model: dict[str, Any], message: str) -> None:
    with pytest.raises(GraphError) as info:
        BlockingCapabilityGraph.open({"providers": [], "model": model})
    assert info.value.to_json() == {
        "code": "CG_CONFIG_INVALID",
        "phase": "config",
        "message": message,
        "nextAction": "check_config",
    }


def test_lexical_module_is_not_imported_until_built() -> None:
    import subprocess
    import sys

    # The match runner imports the job it hands to an executor (executors/job.py), no executor.
    code = (
        "import sys, capability_graph._core.executors as e, capability_graph._core.match;"
        "print(sorted(m for m in sys.modules if m.startswith(('capability_graph._core.executors.',"
        " 'openai', 'capability_graph_flowcast')) and m != 'capability_graph._core.executors.job'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert lexical.THRESHOLD == 0.05


def test_spec_page_lists_exactly_the_stopwords_and_parameters_of_the_code() -> None:
    import re

    from capability_graph_testing.common import SPEC

    page = (SPEC / "executors.md").read_text(encoding="utf-8")
    found = re.search(r"4\. Drop stopwords.*?:\n(.*?)`\.\n", page, re.S)
    assert found is not None
    assert set(re.sub(r"[`\n]", " ", found.group(1)).split()) == lexical.STOPWORDS
    assert "k1 = 1.2, b = 0.75" in page
    assert "≥ **0.05**" in page
    weights = ", ".join(f"`{key}` {weight}" for key, weight in lexical.FIELDS)
    flat = " ".join(page.split())
    assert weights.replace("`tags` 2.0", "`tags` 2.0 (each tag tokenized separately)") in flat


def test_runtime_lowercasing_is_used_only_where_it_equals_the_contract_tables() -> None:
    # [CG-MODEL-16]: str.lower (fast) stands in for the tables only on a runtime where it gives
    # the same text; every mapped code point, and capital sigma in each context, agree.
    data = lexical._unicode()
    assert data.runtime_lower_agrees  # Python 3.11 to 3.13 all agree
    mapped = "".join(map(chr, data.lowercase))
    for text in (mapped, "ΑΣ ΣΑ Σ aΣ. ΑΣΣ", "İ ẞ K"):
        assert data.lower(text) == text.translate(data.lowercase)
