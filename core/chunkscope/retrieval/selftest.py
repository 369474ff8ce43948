"""The offline self-test: proxy questions made from the document itself, without an LLM.

A *proxy*, labelled as such everywhere. Design (justified and validated in docs/retrieval.md):

* evidence: one sentence (60–400 characters, a CJK character counting 3, at least 8 words or CJK character
  pairs, outside tables and headings),
  or, for every ``multi``-th question, two sentences of the same passage (at most ``span_chars``
  apart) — Chroma's general set has 1.67 excerpts of ~167 characters per question, 40% with
  more than one;
* query: the evidence's most *salient* terms — words weighted by term frequency in the
  excerpt × inverse document frequency over the document's blocks, stop words and numbers
  left out — at most ``terms`` of them in salience order. Never the sentence itself: a query
  that copies the sentence would make every retriever trivially exact and hide the effect of
  where the chunk boundaries fall;
* sampling: candidates are spread evenly over the document (deterministic: the same
  document always gives the same questions); picks that make no question are replaced from the
  candidates left, and pairs give way to single sentences when candidates run short, so ``n``
  questions are made unless the document has too few candidates (one problem line says so).

What it measures: whether a chunking keeps a passage's distinctive vocabulary in one chunk
near its evidence, so a lexical or dense retriever ranks that chunk high, and how much of the
evidence a budget of tokens brings back. What it cannot measure: paraphrase, reasoning or
questions whose words are not in the text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from chunkscope.document import Document
from chunkscope.retrieval.questions import Question, QuestionSet
from chunkscope.retrieval.retrievers import CJK_RUN, cjk_split, stopwords
from chunkscope.text.sentences import SPACED_ENDS, WIDE_ENDS

# a sentence ends at . ! ? (or another script's mark, chunkscope.text.sentences) before a space, at a CJK 。！？, or a line end
_SENT = re.compile(rf"[^\n.!?{WIDE_ENDS}{SPACED_ENDS}]+(?:[.!?{SPACED_ENDS}]+(?=\s|$)|[{WIDE_ENDS}]+|(?=\n)|$)")
_WORD = re.compile(r"(?u)\b[^\W\d_][\w'-]*[^\W_]\b")
_SKIP_KINDS = {"table", "figure", "code", "toc", "layout"}  # a "heading" block holds its section body


def _width(sent: str) -> int:
    """Characters, a CJK character counting 3: it is about a word, an English word about 5 letters and a space
    (so the 60-400 character bounds take Chinese sentences of 20-133 characters)."""
    return len(sent) + 2 * sum(len(m) for m in CJK_RUN.findall(sent))


def _enough_words(sent: str, least: int = 8) -> bool:
    """``least`` words or more, a run of L CJK characters (no spaces between its words) counting as its L - 1
    character pairs."""
    return len(sent.split()) + sum(max(0, len(r) - 2) for r in CJK_RUN.findall(sent)) >= least


def _sentences(text: str, a: int, b: int) -> list[tuple[int, int]]:
    out = []
    for m in _SENT.finditer(text, a, b):
        s, e = m.start(), m.end()
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def _words(t: str, stop: set[str]) -> list[str]:
    """Salient-term candidates: words of 3+ letters, and the character pairs of CJK runs (``cjk_split``, as BM25
    reads them), stop words left out."""
    return [w for x in _WORD.findall(t) for w in cjk_split(x.lower())
            if (len(w) > 2 or (len(w) == 2 and CJK_RUN.fullmatch(w))) and w not in stop]


def self_test(doc: Document | str, n: int = 30, *, terms: int = 6, multi: int = 3, span_chars: int = 600,
              language: str | None = None, name: str = "") -> QuestionSet:
    """``n`` proxy questions for ``doc`` (a Document, or a plain text)."""
    if n < 1:
        raise ValueError(f"self-test needs at least one question (got {n})")
    text = doc.text if isinstance(doc, Document) else doc
    language = language or (doc.language if isinstance(doc, Document) else "en")
    stop = stopwords(language)
    blocks = _blocks(doc, text)
    cands, idf = _candidates(text, blocks, stop)
    qs = QuestionSet([], "self-test", rows=0, info={"n": n, "terms": terms, "multi": multi, "candidates": len(cands),
                                                    "proxy": True})
    if not cands:
        qs.problems.append("self-test: the document has no sentence of 60-400 characters with 8+ words "
                           "outside tables and headings, so no proxy question can be made")
        return qs
    qs.questions = _questions(text, cands, min(n, len(cands)), _Salience(text, stop, idf, terms), multi, span_chars)
    if qs.questions and len(qs.questions) < n:
        qs.problems.append(f"self-test: only {len(qs.questions)} question(s) could be made from the document's "
                           f"{len(cands)} candidate sentence(s), fewer than the {n} asked")
    qs.rows = len(qs.questions)
    if not qs.questions:
        qs.problems.append("self-test: no sentence has two distinctive terms")
    return qs


def _blocks(doc: Document | str, text: str) -> list[tuple[int, int, str]]:
    """The document's blocks as ``(start, end, kind)``.

    For a plain text (or a document without blocks): its paragraphs (runs of lines without a blank line).
    """
    blocks = [(b.start, b.end, b.kind) for b in doc.blocks] if isinstance(doc, Document) and doc.blocks else []
    return blocks or [(m.start(), m.end(), "paragraph") for m in re.finditer(r"\S(?:.|\n(?!\s*\n))*", text)]


def _candidates(text: str, blocks: list[tuple[int, int, str]],
                stop: set[str]) -> tuple[list[tuple[int, int, int]], dict[str, float]]:
    """The candidate evidence sentences, and each word's inverse document frequency over the blocks.

    A candidate is ``(start, end, block index)``.
    """
    df: Counter[str] = Counter()
    cands: list[tuple[int, int, int]] = []
    for bi, (a, b, kind) in enumerate(blocks):
        body = text[a:b]
        df.update(set(_words(body, stop)))
        if kind in _SKIP_KINDS or body.lstrip().startswith(("|", "<Table", "<Figure")):
            continue
        for s, e in _sentences(text, a, b):
            sent = text[s:e]
            if 60 <= _width(sent) <= 400 and _enough_words(sent) and not sent.lstrip().startswith(("#", "|", "<")):
                cands.append((s, e, bi))
    nblocks = max(1, len(blocks))
    return cands, {w: math.log(1 + nblocks / c) for w, c in df.items()}


@dataclass(frozen=True)
class _Salience:
    """How a question's terms are chosen: the evidence's words by tf x idf, at most ``terms`` in all."""

    text: str
    stop: set[str]
    idf: dict[str, float]
    terms: int

    def query_terms(self, excerpts: list[tuple[int, int]]) -> list[str]:
        """The most salient words of each excerpt (an equal share of ``terms`` each), without repeats."""
        per = self.terms if len(excerpts) == 1 else max(2, self.terms // len(excerpts))
        chosen: list[str] = []
        for a, b in excerpts:
            tf = Counter(_words(self.text[a:b], self.stop))
            ranked = sorted(tf, key=lambda w: (-tf[w] * self.idf.get(w, 0.0), self.text.lower().find(w, a)))
            chosen.extend(w for w in ranked[:per] if w not in chosen)
        return chosen


def _questions(text: str, cands: list[tuple[int, int, int]], want: int, salience: _Salience, multi: int,
               span_chars: int) -> list[Question]:
    """Up to ``want`` questions from evenly spread picks among ``cands``.

    Then the same over the candidates left, for any pick that made no question or that a pair took.
    """
    questions: list[Question] = []
    used: set[int] = set()
    while len(questions) < want:
        rest = [c for c in range(len(cands)) if c not in used]
        if not rest:
            break
        m = min(want - len(questions), len(rest))
        picks = sorted({rest[int((i + 0.5) * len(rest) / m)] for i in range(m)})
        for qi, ci in enumerate(picks):
            if ci in used:
                continue
            used.add(ci)
            excerpts = [cands[ci][:2]]
            spare = len(cands) - len(used) > want - len(questions) - 1  # a pair leaves enough for the rest
            if multi and qi % multi == multi - 1 and spare:  # a two-excerpt question: the next sentence of the passage
                excerpts += _partner(cands, ci, used, span_chars)
            chosen = salience.query_terms(excerpts)
            if len(chosen) >= 2:
                questions.append(Question(" ".join(chosen), excerpts, "self-test", f"s{len(questions) + 1}"))
    return questions


def _partner(cands: list[tuple[int, int, int]], ci: int, used: set[int], span_chars: int) -> list[tuple[int, int]]:
    """The second excerpt of a two-excerpt question ([] when there is none), marked used.

    It is the next unused candidate of the same passage: at most ``span_chars`` after candidate ``ci``, in its
    block or the next.
    """
    _, e, bi = cands[ci]
    for cj in range(ci + 1, min(len(cands), ci + 4)):
        s2, e2, bj = cands[cj]
        if cj not in used and s2 - e <= span_chars and abs(bj - bi) <= 1:
            used.add(cj)
            return [(s2, e2)]
    return []
