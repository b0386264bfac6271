"""Retrieving a role's demonstrations: BM25+ over the prompts of its dialogue pairs, named and deterministic.

The paper does not state its retriever (PAPER_PROMPTS.md 1.4.3); this one is `RETRIEVER`: rank_bm25's
`BM25Plus` (k1 1.5, b 0.75, delta 1; its idf stays positive in the small corpus of one role's script,
where Okapi's is zero or floored) over retrieval words (lower-cased `\\w+` runs for English, jieba
words for Chinese), the query being the question stripped; ties keep file order. One implementation
serves `rolebench evaluate --elicitation few-shot-*`, the lm-eval task files' few-shot sampler and the
RoleGPT recipe.

Speed: rank_bm25 scores a query by walking every document in Python for every query word (about
1 ms a query on a 1,000-pair script). The index here keeps rank_bm25's own statistics (idf, document
lengths, parameters) and adds postings (for each word, the documents holding it), so a query costs a
few numpy operations per word; the scores are rank_bm25's `get_scores`, float for float (tested).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from rolebench.errors import MissingDependency

_WORD = re.compile(r"\w+", re.UNICODE)
RETRIEVER = "bm25plus-v1"  # the name recorded in results and cache keys: bump it when rankings change


def words(text: str, language: str) -> list[str]:
    """Retrieval tokens: jieba words for Chinese, lower-cased word characters for English."""
    if language == "zh":
        import jieba

        jieba.setLogLevel(60)
        return [w for w in jieba.lcut(text) if _WORD.search(w)]
    return _WORD.findall(text.lower())


def describe_retriever() -> dict[str, Any]:
    """What a result records about the retriever."""
    try:
        library = f"rank_bm25 {version('rank_bm25')}"
    except PackageNotFoundError:  # pragma: no cover - a core dependency
        library = "rank_bm25"
    return {
        "name": RETRIEVER,
        "scorer": f"BM25Plus (k1 1.5, b 0.75, delta 1; {library})",
        "query": "the question, stripped",
        "documents": "the prompt side of each of the role's dialogue pairs",
        "tokens": "English: lower-cased \\w+ runs; Chinese: jieba words holding a word character",
        "ties": "file order",
    }


class DemonstrationRetriever:
    """The k dialogue pairs of one role whose prompts best match a query (BM25+, see the module docstring)."""

    def __init__(self, pairs: Sequence[tuple[str, str]], language: str) -> None:
        try:
            from rank_bm25 import BM25Plus
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise MissingDependency("retrieving demonstrations", "rank_bm25", "train") from exc

        self.pairs, self.language = list(pairs), language
        corpus = [words(q, language) or ["_"] for q, _ in self.pairs]
        self.bm25 = BM25Plus(corpus) if corpus else None
        self._vocabulary: dict[str, int] = {}
        if self.bm25 is not None:
            self._index(self.bm25, corpus)

    def _index(self, bm25: Any, corpus: list[list[str]]) -> None:
        """Postings from rank_bm25's own counts: for each word, the documents holding it and how often."""
        n, frequencies = len(corpus), bm25.doc_freqs
        self._vocabulary = {word: i for i, word in enumerate(bm25.idf)}  # every word of the corpus
        ids = np.array([self._vocabulary[w] for f in frequencies for w in f], dtype=np.int64)
        counts = np.array([c for f in frequencies for c in f.values()], dtype=np.int64)
        keys = ids * n + np.repeat(np.arange(n), [len(f) for f in frequencies])
        order = np.argsort(keys, kind="stable")
        self._docs, self._counts = keys[order] % n, counts[order]
        self._starts = np.searchsorted(keys[order] // n, np.arange(len(self._vocabulary) + 1))
        # rank_bm25's own expression, evaluated once: the same floats as its get_scores
        self._norm = bm25.k1 * (1 - bm25.b + bm25.b * np.array(bm25.doc_len) / bm25.avgdl)

    def scores(self, query: str) -> np.ndarray[Any, Any]:
        """BM25+ scores of every pair for `query`: `BM25Plus.get_scores(words(query))`, from postings."""
        bm25 = self.bm25
        if bm25 is None:
            return np.zeros(0)
        total = np.zeros(len(self.pairs))
        for word in words(query, self.language) or ["_"]:
            index = self._vocabulary.get(word)
            if index is None:
                continue  # rank_bm25 adds 0 to every score
            idf = bm25.idf[word]
            docs = self._docs[self._starts[index] : self._starts[index + 1]]
            counts = self._counts[self._starts[index] : self._starts[index + 1]]
            part = np.full(len(self.pairs), idf * (bm25.delta + 0.0))
            part[docs] = idf * (bm25.delta + (counts * (bm25.k1 + 1)) / (self._norm[docs] + counts))
            total += part
        return total

    def top(self, query: str, k: int) -> list[tuple[str, str]]:
        """The k best pairs for `query`, best first (ties in file order); all of them when fewer than k."""
        if self.bm25 is None or k <= 0:
            return []
        scores = self.scores(query)
        if k < len(scores):  # only the candidates at or above the k-th best score are sorted
            threshold = np.partition(scores, len(scores) - k)[len(scores) - k]
            candidates = np.flatnonzero(scores >= threshold)
        else:
            candidates = np.arange(len(scores))
        order = candidates[np.lexsort((candidates, -scores[candidates]))][:k]
        return [self.pairs[i] for i in order]
