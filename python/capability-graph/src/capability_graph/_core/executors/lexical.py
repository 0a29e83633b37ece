"""The ``lexical`` executor: offline, deterministic BM25 ranking of the authorized catalog.

Why one module of this size: the ranking is one algorithm (tokenize, index, score) specified
as a whole; its parts are private to it and cached together.

The ranking is specified in spec/capability-graph/executors.md ("The lexical executor") precisely
enough that another implementation returns the same candidates in the same order with the same
confidences (to 4 decimals). In short: the Unicode 15.0 character data of the contract's
``lexical-unicode.json`` ([CG-MODEL-16]), not this runtime's ``unicodedata``, decides what NFKC
sees, how text lowercases and what a letter or number is; tokens are runs of letters and
numbers, with CJK runs split into characters and adjacent-character bigrams; a fixed stopword list;
a tiny plural rule; fields name x3, tags x2, whenToUse x1.5, description x1 folded into one
weighted term frequency; BM25 with k1 = 1.2, b = 0.75 and idf = ln(1 + (N - n + 0.5)/(n + 0.5));
confidence = score / ((k1 + 1) * sum of the query terms' idf), rounded to 4 decimals (halves up);
candidates at or above 0.05, best first, ties by id; no query term -> ``unknown`` (even over an
empty catalog, [CG-MODEL-17]); nothing above the threshold -> ``no_match``. The request's
``context`` is not used.

The index of a catalog is cached (a few catalogs, keyed by the content of their ranked fields).
Indexing (999 long texts take seconds) and ranking run on the event loop in time slices of a few
milliseconds, so the loop keeps serving every other request and the deadline fires on time; a
worker thread would not do better, since the GIL lets only one of them run Python at a time.
"""

from __future__ import annotations

import heapq
import json
import re
import sys
import threading
import unicodedata
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from ..schemas import contract_files
from ..slices import SharedSteps, Slicer, Steps, run_in_slices, run_to_end
from .fdlibm import ln

if TYPE_CHECKING:
    from .job import MatchJob

__all__ = ["LexicalExecutor", "rank", "tokenize"]


K1: Final = 1.2
B: Final = 0.75
THRESHOLD: Final = 0.05
DECIMALS: Final = 4
#: (summary key, weight); ``tags`` is a list of strings, the others are strings.
FIELDS: Final = (("name", 3.0), ("tags", 2.0), ("whenToUse", 1.5), ("description", 1.0))

STOPWORDS: Final = frozenset(
    (
        "a", "about", "an", "and", "any", "are", "as", "at", "be", "but", "by", "can", "could",
        "do", "does", "for", "from", "get", "how", "i", "if", "in", "into", "is", "it", "its",
        "me", "my", "need", "of", "on", "or", "our", "please", "should", "so", "some", "that",
        "the", "their", "them", "then", "there", "these", "this", "to", "use", "using", "want",
        "was", "we", "what", "when", "where", "which", "who", "why", "will", "with", "would",
        "you", "your",
        "的", "了", "和", "是", "在", "我", "你", "要", "把", "吗", "呢", "请", "一", "个",
    )
)  # fmt: skip

_CJK_RANGES: Final = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0003ffff"  # CJK Extensions B.. (planes 2 and 3)
)
_ASCII_WORD: Final = re.compile(r"[a-z]+")
_ASCII_WORDS: Final = re.compile(r"[a-z0-9]+")


_ASTRAL: Final = "\U00010000"
_CAPITAL_SIGMA: Final = "\u03a3"


def _class(ranges: Iterable[Sequence[int]]) -> str:
    """A regular-expression character class body matching the code points of ``ranges``."""
    return "".join(f"\\U{first:08x}-\\U{last:08x}" for first, last in ranges)


def _text_of(ranges: Iterable[Sequence[int]]) -> str:
    """Every code point of ``ranges`` (no surrogates), in one string."""
    code_points = array("I")
    for first, last in ranges:
        code_points.extend(range(first, last + 1))
    return code_points.tobytes().decode("utf-32-le" if sys.byteorder == "little" else "utf-32-be")


def _without(ranges: Sequence[Sequence[int]], holes: Iterable[int]) -> list[tuple[int, int]]:
    """``ranges`` (sorted, disjoint) minus the code points ``holes``."""
    sorted_holes = sorted(set(holes))
    pieces: list[tuple[int, int]] = []
    index = 0
    for first, last in ranges:
        start = first
        while index < len(sorted_holes) and sorted_holes[index] <= last:
            hole = sorted_holes[index]
            index += 1
            if hole >= start:
                if hole > start:
                    pieces.append((start, hole - 1))
                start = hole + 1
        if start <= last:
            pieces.append((start, last))
    return pieces


class _UnicodeData:
    """The tokenizer's character data, read from the contract's ``lexical-unicode.json``
    ([CG-MODEL-16]) rather than from this runtime's ``unicodedata``, whose Unicode version
    differs from one Python to the next."""

    def __init__(self) -> None:
        data = json.loads(contract_files().joinpath("lexical-unicode.json").read_text("utf-8"))
        normalizable = data["normalizable"]
        #: A code point NFKC is not given as it is (unassigned, or first assigned in 15.0 and
        #: not NFKC-inert): it becomes a space first, so that any runtime's NFKC (14.0 on)
        #: gives the same text.
        self.not_normalizable = re.compile(f"[^{_class(normalizable)}]")
        #: Words: maximal runs of letters and numbers (general categories L* and N*). A class
        #: with ranges beyond U+FFFF is slow to miss in ``re``; text without such code points
        #: (nearly all) uses the class of the others.
        self.words = re.compile(f"[{_class(data['word'])}]+")
        bmp = [(first, min(last, 0xFFFF)) for first, last in data["word"] if first <= 0xFFFF]
        self.bmp_words = re.compile(f"[{_class(bmp)}]+")
        lowercase: dict[int, str] = {}
        for first, last, step, delta in data["lowercase"]:
            for cp in range(first, last + 1, step):
                lowercase[cp] = chr(cp + delta)
        for cp, mapped in data["lowercaseSpecial"]:
            lowercase[cp] = "".join(map(chr, mapped))
        #: Per code point, without context (no final-sigma rule): a ``str.translate`` table.
        self.lowercase = lowercase
        #: ``str.lower`` is far faster than ``translate``; it gives the same text, once capital
        #: sigma (its one context rule) is replaced, when this runtime lowercases every code
        #: point that can reach it as the file says -- checked here, once.
        unmapped = _text_of(_without(normalizable, [*lowercase, ord(_CAPITAL_SIGMA)]))
        self.runtime_lower_agrees = unmapped.lower() == unmapped and all(
            chr(cp).lower() == mapped for cp, mapped in lowercase.items()
        )
        #: CJK runs, split into characters and bigrams. Compiled here, with the rest of what
        #: text that is not ASCII needs: compiling them costs more than the rest of this
        #: module's import, which a graph that never matches such text should not pay.
        self.cjk_any = re.compile(f"[{_CJK_RANGES}]")
        self.cjk_split = re.compile(f"([{_CJK_RANGES}]+)")

    def lower(self, text: str) -> str:
        if self.runtime_lower_agrees:
            return text.replace(_CAPITAL_SIGMA, "\u03c3").lower()
        return text.translate(self.lowercase)

    def word_runs(self, text: str) -> list[str]:
        words = self.bmp_words if max(text, default="") < _ASTRAL else self.words
        found: list[str] = words.findall(text)
        return found


@cache
def _unicode() -> _UnicodeData:
    """Read on first use: importing the package stays cheap."""
    return _UnicodeData()


#: Postings scored between two looks at the clock.
_CHUNK: Final = 2048
_CACHE_SIZE: Final = 4


# word -> index term, or "" for a stopword (a bounded memo: tokenizing is the hot path).
_TERMS: dict[str, str] = {}
_TERMS_MAX: Final = 262_144


def _term(word: str) -> str:
    """A word (lowercase) -> its index term, or "" for a stopword."""
    term = _TERMS.get(word)
    if term is not None:
        return term
    term = word
    if word in STOPWORDS:
        term = ""
    elif len(word) > 3 and _ASCII_WORD.fullmatch(word):
        if word.endswith("ies") and len(word) > 4:
            term = word[:-3] + "y"
        elif word.endswith("sses"):
            term = word[:-2]
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
            term = word[:-1]
    if len(_TERMS) >= _TERMS_MAX:
        _TERMS.clear()
    _TERMS[word] = term
    return term


def _words(text: str) -> list[str]:
    if text.isascii():  # ASCII is NFKC-stable, lowercases as ASCII and has no CJK
        words: list[str] = _ASCII_WORDS.findall(text.lower())
        return words
    data = _unicode()
    normalized = unicodedata.normalize("NFKC", data.not_normalizable.sub(" ", text))
    words = []
    cjk_any = data.cjk_any
    for run in data.word_runs(data.lower(normalized)):
        if cjk_any.search(run) is None:
            words.append(run)
            continue
        for part in data.cjk_split.split(run):
            if not part:
                continue
            if cjk_any.match(part) is None:
                words.append(part)
            else:
                words.extend(part)
                words.extend(part[i : i + 2] for i in range(len(part) - 1))
    return words


def tokenize(text: str) -> list[str]:
    """The index terms of ``text`` in order (duplicates kept, stopwords dropped)."""
    get = _TERMS.get
    terms = []
    for word in _words(text):
        term = get(word)
        if term is None:
            term = _term(word)
        if term:
            terms.append(term)
    return terms


def _field_texts(entry: Mapping[str, Any]) -> Iterable[tuple[float, str]]:
    for key, weight in FIELDS:
        value = entry.get(key)
        if isinstance(value, str):
            yield weight, value
        elif isinstance(value, list | tuple):
            for item in value:
                if isinstance(item, str):
                    yield weight, item


class _Index:
    """An inverted index of one catalog: term -> entry indexes and BM25 weights.

    A posting's BM25 contribution ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``
    depends only on the catalog, so it is computed once per term (on first use) and cached.
    Build it with :func:`_build_index` (in slices).
    """

    __slots__ = ("entries", "ids", "norms", "postings", "weights")

    def __init__(
        self,
        entries: tuple[Mapping[str, Any], ...],
        postings: dict[str, tuple[array[int], array[float]]],
        lengths: list[float],
    ) -> None:
        self.entries = entries
        self.ids = [str(entry["id"]) for entry in entries]
        self.postings = postings
        total = 0.0
        for length in lengths:  # left to right, never compensated (executors.md 8.2)
            total += length
        avgdl = total / len(lengths) if lengths else 0.0
        avgdl = avgdl or 1.0  # every entry is empty: no term can match anyway
        self.norms = [K1 * (1 - B + B * length / avgdl) for length in lengths]
        self.weights: dict[str, array[float]] = {}

    def _idf(self, term: str) -> float:
        n = len(self.entries)
        df = len(self.postings[term][0]) if term in self.postings else 0
        return ln(1 + (n - df + 0.5) / (df + 0.5))  # fdlibm's, not the platform's ([CG-MODEL-20])

    def _weights(self, term: str, slicer: Slicer) -> Steps[array[float]]:
        weights = self.weights.get(term)
        if weights is None:
            docs, tfs = self.postings[term]
            idf, norms = self._idf(term), self.norms
            weights = array("d")
            for start in range(0, len(docs), _CHUNK):
                weights.extend(
                    idf * tf * (K1 + 1) / (tf + norms[doc])
                    for doc, tf in zip(
                        docs[start : start + _CHUNK], tfs[start : start + _CHUNK], strict=True
                    )
                )
                if slicer.due():
                    yield
            self.weights[term] = weights
        return weights

    def postings_touched(self, request: str) -> int:
        """How many postings ranking ``request`` walks (the cost of :meth:`rank`)."""
        return sum(
            len(self.postings[term][0])
            for term in dict.fromkeys(tokenize(request))
            if term in self.postings
        )

    def rank(self, request: str, limit: int, slicer: Slicer) -> Steps[dict[str, Any]]:
        query = list(dict.fromkeys(tokenize(request)))
        if not query:
            return {"status": "unknown", "candidates": []}
        # Summed left to right in query order, as every implementation does ([CG-MODEL-14]).
        idf_sum = 0.0
        for term in query:
            idf_sum += self._idf(term)
        scale = (K1 + 1) * idf_sum
        scores = [0.0] * len(self.entries)
        touched: set[int] = set()
        for term in query:
            if term not in self.postings:
                continue
            docs = self.postings[term][0]
            weights = yield from self._weights(term, slicer)
            for start in range(0, len(docs), _CHUNK):
                chunk = docs[start : start + _CHUNK]
                touched.update(chunk)
                for doc, weight in zip(chunk, weights[start : start + _CHUNK], strict=True):
                    scores[doc] += weight
                if slicer.due():
                    yield
        if not touched:
            return {"status": "no_match", "candidates": []}
        # The best `limit` by raw score, widened to every entry that could round to the same
        # confidence as the last of them (ties are broken by id after rounding).
        best = heapq.nlargest(limit, touched, key=scores.__getitem__)
        floor = max(
            (_round(scores[best[-1]] / scale) - 2 * 10**-DECIMALS) * scale,
            (THRESHOLD - 2 * 10**-DECIMALS) * scale,
        )
        ranked = []
        for doc in touched if len(best) < len(touched) else best:
            if scores[doc] >= floor:
                confidence = _round(scores[doc] / scale)
                if confidence >= THRESHOLD:
                    ranked.append((-confidence, self.ids[doc]))
        if not ranked:
            return {"status": "no_match", "candidates": []}
        ranked.sort()
        return {
            "status": "matched",
            "candidates": [{"id": ident, "confidence": -neg} for neg, ident in ranked[:limit]],
        }


_TIE: Final = 2 * 10**DECIMALS


def _round(value: float) -> float:
    """``value`` rounded to 4 decimals from the exact value of the double, a value exactly
    halfway rounding up ([CG-MODEL-14]); ``round`` would round it to even."""
    if (value * _TIE).is_integer():  # exactly halfway is possible only then (value = k/32)
        return float(Decimal(value).quantize(Decimal(1).scaleb(-DECIMALS), ROUND_HALF_UP))
    return round(value, DECIMALS)


def _build_index(catalog: Sequence[Mapping[str, Any]], slicer: Slicer) -> Steps[_Index]:
    entries = tuple(catalog)
    postings: dict[str, tuple[array[int], array[float]]] = {}
    lengths = []
    for index, entry in enumerate(entries):
        counts: dict[str, float] = {}
        length = 0.0
        for weight, text in _field_texts(entry):
            if slicer.due():
                yield
            terms = tokenize(text)
            length += weight * len(terms)
            for term in terms:
                counts[term] = counts.get(term, 0.0) + weight
        lengths.append(length)
        for term, tf in counts.items():
            posting = postings.get(term)
            if posting is None:
                posting = postings[term] = (array("l"), array("d"))
            posting[0].append(index)
            posting[1].append(tf)
    return _Index(entries, postings, lengths)


class _IndexCache:
    """A small LRU of indexes keyed by the *content* of a catalog's ranked fields, and the
    builds in progress (at most as many), keyed by the catalog object.

    Building the key costs a pass over the catalog (string hashes are cached by Python, and
    equal keys compare by identity first), far less than indexing it again; the same tuple
    object as a cached index's catalog is recognized without even that pass.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[Any, ...], _Index] = OrderedDict()
        self._building: OrderedDict[int, tuple[Sequence[Any], SharedSteps[_Index]]]
        self._building = OrderedDict()

    def cached(self, catalog: Sequence[Mapping[str, Any]]) -> _Index | None:
        """The index of this very catalog object, if cached (no pass over the catalog)."""
        with self._lock:
            for index in self._items.values():
                if index.entries is catalog:  # the very same tuple: immutable
                    return index
        return None

    def get(self, catalog: Sequence[Mapping[str, Any]]) -> Steps[_Index]:
        cached = self.cached(catalog)
        if cached is not None:
            return cached
        with self._lock:
            building = self._building.get(id(catalog))
            if building is None or building[0] is not catalog:
                building = (catalog, SharedSteps(self._indexed(catalog, Slicer())))
                self._building[id(catalog)] = building
                while len(self._building) > self._size:
                    self._building.popitem(last=False)
        index = yield from building[1].wait()
        with self._lock:
            if self._building.get(id(catalog)) is building:
                del self._building[id(catalog)]
        return index

    def _indexed(self, catalog: Sequence[Mapping[str, Any]], slicer: Slicer) -> Steps[_Index]:
        keys = []
        for entry in catalog:
            key = _content_key(entry)
            hash(key)  # hashes (and caches the hashes of) the long texts within this slice
            keys.append(key)
            if slicer.due():
                yield
        content = tuple(keys)
        with self._lock:
            index = self._items.get(content)
            if index is not None:
                self._items.move_to_end(content)
                return index
        index = yield from _build_index(catalog, slicer)
        with self._lock:
            self._items[content] = index
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return index


def _content_key(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    tags = entry.get("tags")
    return (
        entry["id"],
        entry.get("name"),
        entry.get("description"),
        entry.get("whenToUse"),
        tuple(tags) if isinstance(tags, list | tuple) else tags,
    )


_CACHE: Final = _IndexCache(_CACHE_SIZE)


def _rank_steps(
    catalog: Sequence[Mapping[str, Any]], request: str, limit: int
) -> Steps[dict[str, Any]]:
    if not catalog:  # a request without terms is unknown even then ([CG-MODEL-17])
        status = "no_match" if tokenize(request) else "unknown"
        return {"status": status, "candidates": []}
    index = yield from _CACHE.get(catalog)
    result = yield from index.rank(request, limit, Slicer())
    return result


def rank(catalog: Sequence[Mapping[str, Any]], request: str, limit: int) -> dict[str, Any]:
    """The lexical executor's raw output for ``request`` over ``catalog`` (synchronous)."""
    return run_to_end(_rank_steps(catalog, request, limit))


class LexicalExecutor:
    """``{"executor": "lexical"}``: no options besides ``timeoutMs``."""

    name: Final = "lexical"

    @classmethod
    def from_config(cls, model: Mapping[str, Any], where: str) -> LexicalExecutor:
        return cls()

    async def match(self, job: MatchJob) -> object:
        """Index (once per catalog) and rank on the event loop, in slices of at most
        ``_SLICE_S`` with the loop serving in between: other requests and the deadline never
        wait for more than a slice, and a cancelled match stops at the next slice."""
        return await run_in_slices(_rank_steps(job.catalog, job.request, job.limit))
