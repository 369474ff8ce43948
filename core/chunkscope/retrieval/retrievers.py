"""Retrievers: rank a chunking's chunks for every question.

* ``bm25`` (default): ``bm25s`` (Lucene BM25, k1 1.5, b 0.75) over lower-cased word tokens,
  stop words of the document's language removed; a run of Chinese, Japanese or Korean characters (written
  without spaces between words, so one regex "word" is a whole clause) gives its overlapping character pairs,
  as Lucene's CJK analyzer does;
* ``dense``: cosine similarity between the question and the chunk embeddings. Chunk vectors
  come from the run's span embedder (the same composed/exact span embeddings the metrics use);
  the questions are encoded once per question set;
* ``hybrid``: reciprocal rank fusion of the two rankings (``1 / (60 + rank)``, rank from 1).

``rank(...)`` returns, per question, every chunk index in rank order with its score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from chunkscope.retrieval.metrics import Range
from chunkscope.text.language import CJK

RETRIEVERS = ("bm25", "dense", "hybrid")
RRF_K = 60
_WORD = re.compile(r"(?u)\b\w\w+\b")
CJK_RUN = re.compile(f"[{CJK}]+")  # written without spaces between words
_STOP_LANGS = {"en": "STOPWORDS_EN_PLUS", "fr": "STOPWORDS_FRENCH", "de": "STOPWORDS_GERMAN", "es": "STOPWORDS_SPANISH",
               "it": "STOPWORDS_ITALIAN", "pt": "STOPWORDS_PORTUGUESE", "nl": "STOPWORDS_DUTCH"}

Ranking = tuple[np.ndarray, np.ndarray]  # (chunk indices best first, their scores)


@dataclass
class Dense:
    """What the dense retriever needs: chunk vectors from spans, question vectors from texts."""

    embed_spans: Callable[[Sequence[Range]], np.ndarray]
    encode: Callable[[Sequence[str]], np.ndarray]
    name: str = ""


def stopwords(language: str | None) -> set[str]:
    """bm25s's stop-word list for the document's language ("und" and unknown: English)."""
    lang = (language or "en")[:2]
    attr = _STOP_LANGS.get(lang, "STOPWORDS_EN_PLUS" if lang in ("un", "") else None)
    if attr is None:
        return set()
    try:
        import bm25s.stopwords as sw

        return {w.lower() for w in getattr(sw, attr, ())}
    except ImportError:
        return set()


def cjk_split(word: str) -> list[str]:
    """``[word]``, or for a word holding CJK characters: the overlapping character pairs of each CJK run (a lone
    character as it is) and its other parts, in order ("数据控制者ai" -> 数据 据控 控制 制者 ai)."""
    if not CJK_RUN.search(word):
        return [word]
    out: list[str] = []
    pos = 0
    for m in CJK_RUN.finditer(word):
        if m.start() > pos:
            out.append(word[pos:m.start()])
        run = m.group()
        out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        pos = m.end()
    if pos < len(word):
        out.append(word[pos:])
    return out


def tokenize(texts: Sequence[str], stop: set[str]) -> list[list[str]]:
    """Each text's words (CJK runs as character pairs), lower-cased, stop words left out."""
    return [[w for x in _WORD.findall(t.lower()) for w in cjk_split(x) if w not in stop] for t in texts]


class QueryTokens:
    """Questions tokenized once per question set (reused for every chunking)."""

    def __init__(self, questions: Sequence[str], language: str | None = None):
        self.stop = stopwords(language)
        self.tokens = tokenize(questions, self.stop)


def bm25_rank(chunk_texts: Sequence[str], queries: QueryTokens) -> list[Ranking]:
    """Every query's ranking of the chunks by BM25 (bm25s, the ``retrieval`` extra)."""
    from chunkscope.extras import require

    bm25s = require("bm25s", "the retrieval check's BM25 retriever")

    n = len(chunk_texts)
    if n == 0:
        return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)) for _ in queries.tokens]
    corpus = tokenize(chunk_texts, queries.stop)
    if not any(corpus):  # no word at all: every chunk ties
        return [(np.arange(n), np.zeros(n, dtype=np.float32)) for _ in queries.tokens]
    model = bm25s.BM25()
    model.index(corpus, show_progress=False)
    vocab = model.vocab_dict
    out: list[Ranking] = []
    for q in queries.tokens:
        toks = [t for t in q if t in vocab]
        scores = model.get_scores(toks) if toks else np.zeros(n, dtype=np.float32)
        order = np.argsort(-scores, kind="stable")  # ties: document order
        out.append((order, scores[order]))
    return out


def dense_rank(spans: Sequence[Range], qvecs: np.ndarray, dense: Dense) -> list[Ranking]:
    """Every query's ranking of the chunks by cosine similarity of their vectors."""
    if not len(spans):
        return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)) for _ in range(len(qvecs))]
    cvecs = np.asarray(dense.embed_spans(list(spans)), dtype=np.float32)
    sims = qvecs @ cvecs.T
    out = []
    for row in sims:
        order = np.argsort(-row, kind="stable")
        out.append((order, row[order]))
    return out


def rrf(rankings: Sequence[Sequence[Ranking]], k: int = RRF_K) -> list[Ranking]:
    """Reciprocal rank fusion of several retrievers' rankings of the same chunks."""
    out = []
    for per_q in zip(*rankings):
        n = len(per_q[0][0])
        fused = np.zeros(n, dtype=np.float64)
        for order, _ in per_q:
            fused[order] += 1.0 / (k + np.arange(1, n + 1))
        order = np.argsort(-fused, kind="stable")
        out.append((order, fused[order].astype(np.float32)))
    return out


def rank(retriever: str, spans: Sequence[Range], texts: Sequence[str], queries: QueryTokens,
         qvecs: np.ndarray | None, dense: Dense | None) -> list[Ranking]:
    """Every query's ranking of the chunks by ``retriever`` (``RETRIEVERS``)."""
    if retriever not in RETRIEVERS:
        raise ValueError(f"retriever must be one of {', '.join(RETRIEVERS)} (got {retriever!r})")
    if retriever == "bm25":
        return bm25_rank(texts, queries)
    if dense is None or qvecs is None:
        raise ValueError(f"the {retriever} retriever needs an embedding model")
    d = dense_rank(spans, qvecs, dense)
    if retriever == "dense":
        return d
    return rrf([bm25_rank(texts, queries), d])


def dense_from_resources(resources: Any, doc: Any) -> Dense:
    """Dense retrieval with an analysis' embedder: chunk vectors from its span embedder."""
    se = resources.span_embedder(doc)
    emb = resources.embedder()
    return Dense(se.embed, emb.encode, getattr(emb, "name", ""))
