"""Span vectors for ICC and DCC: a ``SpanEmbedder`` embeds document spans in one of two modes.

* ``exact``: each span's text is encoded as is (the paper's way); texts beyond the
  model's maximum length are truncated by the model and a warning is collected.
* ``composed`` (default): the document is split once into *units* (sentences inside
  gold blocks, long ones cut to the model's maximum length), every unit is embedded
  once, and a span's embedding is the normalised token-weighted mean of the units it
  covers, plus its partially covered edge fragments embedded on their own. Weighted
  unit vectors are prefix-summed, so a span costs O(1) plus at most two fragments.

Also here: ``vocabulary_caveat`` (a model that misses part of the text's vocabulary).
The model itself, its loading and its caches are ``chunkscope.embeddings.embedder``.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Sequence

import numpy as np

from chunkscope.document import Span, span_pairs
from chunkscope.embeddings.bundled import EmbedderUnavailable, bundled_model_path
from chunkscope.embeddings.embedder import BUNDLED_NAME, MODES, Embedder, is_bundled
from chunkscope.text.sentences import sentence_boundaries_many


def document_units(text: str, split_points: Sequence[int], embedder: Embedder | None = None,
                   max_chars: int = 1000) -> list[Span]:
    """Units tiling ``[0, len(text))``: sentences inside gold blocks (whitespace attached to the
    preceding unit), each cut to the model's maximum length (model tokens when the embedder has
    a fast tokenizer, else ``max_chars`` characters)."""
    return _units_and_weights(text, split_points, embedder, max_chars)[0]


def _units_and_weights(text: str, split_points: Sequence[int], embedder: Any, max_chars: int = 1000
                       ) -> tuple[list[Span], list[float] | None]:
    """Units and their model-token counts (None without a tokenizer)."""
    n = len(text)
    if n == 0:
        return [], []
    edges = [0, *[p for p in split_points if 0 < p < n], n]
    cuts: set[int] = set(edges)
    for found in sentence_boundaries_many(text, list(zip(edges, edges[1:]))):  # every block's sentences, one batch
        cuts.update(found)
    starts = sorted(c for c in cuts if 0 <= c < n)
    units = [(a, b) for a, b in zip(starts, starts[1:] + [n])]
    limit = embedder.content_limit if embedder is not None else None
    offsets = embedder.token_offsets([text[a:b] for a, b in units]) if embedder is not None else None
    out: list[Span] = []
    weights: list[float] | None = [] if offsets is not None else None
    for i, (a, b) in enumerate(units):
        if offsets is not None and limit is not None and weights is not None:
            offs = offsets[i]
            if len(offs) <= limit:
                out.append(Span(a, b))
                weights.append(float(len(offs)))
                continue
            pos, count = a, 0
            for k in range(limit, len(offs), limit):
                cut = a + offs[k][0]
                if cut > pos:
                    out.append(Span(pos, cut))
                    weights.append(float(k - count))
                    pos, count = cut, k
            out.append(Span(pos, b))
            weights.append(float(len(offs) - count))
        else:
            pos = a
            while b - pos > max_chars:
                cut = text.rfind(" ", pos + max_chars // 2, pos + max_chars)
                cut = pos + max_chars if cut <= pos else cut
                out.append(Span(pos, cut))
                pos = cut
            out.append(Span(pos, b))
    return out, weights


# --------------------------------------------------------------------------- spans
UNKNOWN_WARN = 0.02  # a share of [UNK] tokens this high means the model misses part of the text
# (measured with the bundled model: at most 0.2% on 22 English documents, corpus and PDFs; 15% and 30% on Chinese PDFs)
_VOCAB_SAMPLE = 100_000  # characters read from each of the text's start, middle and end
MULTILINGUAL_EXAMPLE = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"  # loads as any other model


def _is_bundled_model(name: str) -> bool:
    """The bundled MiniLM, by its name or loaded from its folder (no exception when the package is missing)."""
    if is_bundled(name):
        return True
    try:
        return name == str(bundled_model_path().resolve())
    except EmbedderUnavailable:
        return False


def vocabulary_caveat(embedder: Any, text: str, language: str) -> str:
    """Why ICC and DCC mean less on this text with this model, or "": the model's vocabulary cannot spell a
    share of the text (``Embedder.unknown_share`` >= ``UNKNOWN_WARN``), or the bundled model, trained on
    English, reads a document in another language (``language``: an ISO 639-1 code, "und" when unknown)."""
    from chunkscope.text.language import LANGUAGE_NAMES, UNKNOWN, language_name

    n = _VOCAB_SAMPLE
    sample = [text] if len(text) <= 3 * n else [text[:n], text[(len(text) - n) // 2:(len(text) + n) // 2], text[-n:]]
    lines = [line for part in sample for line in part.splitlines() if line.strip()]
    share = getattr(embedder, "unknown_share", lambda _: None)(lines) if lines else None
    name = str(getattr(embedder, "name", "the model"))
    known = language not in (UNKNOWN, "")
    english_only = known and language != "en" and _is_bundled_model(name)
    if share is not None and share < UNKNOWN_WARN:
        share = None
    if share is None and not english_only:
        return ""
    named = language in LANGUAGE_NAMES  # "German (de)"; a code without a name here: "language 'sw'"
    said = []
    if english_only:
        said.append(f"the bundled {BUNDLED_NAME} was trained on English text and this document is "
                    + (language_name(language) if named else f"in language '{language}'"))
    if share is not None:
        whose = "its" if said else "this document's"
        said.append(f"{share:.0%} of {whose} model tokens are unknown to {name} (text the model does not see)")
    choice = ("an embedding model whose vocabulary covers it" if not known else
              f"an embedding model for {language_name(language)} text" if named else
              f"an embedding model for language '{language}'")
    return (f"ICC and DCC are a weak signal here: {', and '.join(said)}. Choose {choice}, e.g. a multilingual one such "
            f"as {MULTILINGUAL_EXAMPLE} (sidebar: Embeddings and coreference, Embedding model; command line: "
            "--embedder).")


class SpanEmbedder:
    """Embeds spans of one document: ``embed(spans) -> (n, dim)`` L2-normalised rows.

    ``doc`` is a ``Document`` (its text and gold ``split_points``) or a plain string (then
    pass ``split_points``). ``units`` overrides the composed-mode units (must tile the text).
    """

    def __init__(self, doc: Any, embedder: Embedder, mode: str = "composed", *,
                 split_points: Sequence[int] | None = None, units: Sequence[Span] | None = None,
                 fragments: str = "auto"):
        if mode not in MODES:
            raise ValueError(f"embedding mode must be one of {', '.join(MODES)} (got {mode!r})")
        if isinstance(doc, str):
            self.text = doc
            self.split_points = list(split_points or [])
        else:
            self.text = doc.text
            self.split_points = list(split_points if split_points is not None else doc.split_points)
        self.language = str(getattr(doc, "language", "") or "und")
        self._caveat: str | None = None  # vocabulary_caveat, found at the first read of warnings
        self.embedder = embedder
        self.mode = mode
        self._units: list[Span] | None = list(units) if units is not None else None
        self._starts: np.ndarray | None = None
        self._prefix: np.ndarray | None = None
        self._unit_vecs: np.ndarray | None = None
        self._weights: np.ndarray | None = None
        self.spans_embedded = 0
        self.fragments = 0
        self.unit_seconds = 0.0
        self._truncated = 0
        self._longest = 0
        self._checked: set[tuple[int, int]] = set()
        # edge fragments (a span's part of a unit it covers partly): "encode" (default, "auto") =
        # each fragment text embedded on its own; "tokens" = pooled from the token states of the
        # unit pass (no model call; ONNX backends only). Measured further from exact mode than
        # "encode" (docs/performance.md), so it is an option, not the default.
        if fragments not in ("auto", "tokens", "encode"):
            raise ValueError(f"fragments must be auto, tokens or encode (got {fragments!r})")
        supports = bool(getattr(embedder, "supports_tokens", False))
        self.fragment_mode = "encode" if fragments == "auto" else fragments
        if self.fragment_mode == "tokens" and not supports:
            raise ValueError("fragments='tokens' needs an embedder that returns token states (an ONNX backend)")
        self._tokens: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # unit index -> (states, char starts)
        self.token_fragments = 0
        self._unit_texts: list[str] | None = None  # composed mode: set with _starts by prepare_units()
        self._lock = threading.RLock()  # one prepare at a time (the analysis runs it in a thread)
        self.prefetched = 0  # edge-fragment texts sent to the model by prefetch()

    # ---------------------------------------------------------------- info
    @property
    def stats(self) -> dict[str, Any]:
        """What the span embedder did (mode, spans, units, fragments, model calls, cache hits) for the report."""
        d = {"mode": self.mode, "spans": self.spans_embedded, **self.embedder.stats.to_dict()}
        if self.mode == "composed":
            d.update(units=len(self._units or []), fragments=self.fragments, fragment_mode=self.fragment_mode,
                     token_fragments=self.token_fragments, prefetched=self.prefetched,
                     unit_seconds=round(self.unit_seconds, 4))
        else:
            d.update(truncated=self._truncated)
        return d

    @property
    def warnings(self) -> list[str]:
        """Caveats about these vectors (a model that misses the text's vocabulary, truncated texts in exact mode)."""
        if self._caveat is None:
            try:
                self._caveat = vocabulary_caveat(self.embedder, self.text, self.language)
            except Exception:  # a caveat about the scores must never cost them (read while embedding)
                self._caveat = ""
        out = [self._caveat] if self._caveat else []
        if self._truncated:
            out.append(f"exact mode: {self._truncated} of {len(self._checked)} texts exceed the model's maximum "
                       f"length ({self.embedder.max_tokens} tokens; longest {self._longest}) and were truncated")
        return out

    @property
    def units(self) -> list[Span]:
        """The document's units (composed mode), prepared on first use."""
        self.prepare()
        return list(self._units or [])

    def _weights_of(self, texts: Sequence[str]) -> np.ndarray:
        offs = self.embedder.token_offsets(texts)
        if offs is not None:
            w = [len(o) for o in offs]
        else:
            w = [len(t.split()) for t in texts]
        return np.asarray([float(x) if not t.isspace() and t else 0.0 for x, t in zip(w, texts)])

    def prepare_units(self) -> None:
        """Composed mode: split the document into units and count their model tokens (no model
        call). ``prepare`` does it first; the analysis calls it alone to know the units early."""
        if self.mode != "composed" or self._unit_texts is not None:
            return
        with self._lock:
            if self._unit_texts is not None:
                return
            t0 = time.perf_counter()
            weights = None
            if self._units is None:
                self._units, weights = _units_and_weights(self.text, self.split_points, self.embedder)
            texts = [self.text[u.start:u.end] for u in self._units]
            w = self._weights_of(texts) if weights is None else np.asarray(weights, dtype=np.float64)
            w[[not t.strip() for t in texts]] = 0.0
            self._weights = w
            self._starts = np.asarray([u.start for u in self._units] + [len(self.text)], dtype=np.int64)
            self._unit_texts = texts
            self.unit_seconds += time.perf_counter() - t0

    def prepare(self) -> None:
        """Composed mode: split the document into units and embed them (once)."""
        if self.mode != "composed" or self._prefix is not None:
            return
        with self._lock:
            if self._prefix is not None:
                return
            self.prepare_units()
            t0 = time.perf_counter()
            texts, w = self._unit_texts, self._weights
            assert texts is not None and w is not None and self._units is not None
            vecs = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
            live = np.flatnonzero(w > 0)
            cached = (self.embedder.lookup([texts[i] for i in live])
                      if len(live) and self.fragment_mode == "tokens" else None)
            if cached is not None:  # a document seen before: token states come when a fragment needs them
                vecs[live] = cached
            elif len(live) and self.fragment_mode == "tokens":
                got, toks = self.embedder.encode_with_tokens([texts[i] for i in live])
                vecs[live] = got
                for i, (states, offs) in zip(live, toks):
                    self._tokens[int(i)] = (states, offs[:, 0] + self._units[i].start)
            elif len(live):
                vecs[live] = self.embedder.encode([texts[i] for i in live])
            self._unit_vecs = vecs
            pre = np.zeros((len(texts) + 1, self.embedder.dim), dtype=np.float64)
            np.cumsum(vecs.astype(np.float64) * w[:, None], axis=0, out=pre[1:])
            self._prefix = pre
            self.unit_seconds += time.perf_counter() - t0

    def prefetch(self, spans: Sequence[Any]) -> int:
        """Embed now, in one deduplicated model call, the edge fragments that ``embed(spans)`` will
        need (composed mode, fragments encoded): they land in the embedder's text cache, so the
        later ``embed`` calls find them there. The same vectors either way (a text's vector does
        not depend on when it is embedded); needs the units only (``prepare_units``), not their
        vectors, so it may run while the unit pass does. Returns the texts sent to the model."""
        if self.mode != "composed" or self.fragment_mode != "encode" or not spans:
            return 0
        self.prepare_units()
        pairs = span_pairs(spans)
        s = np.asarray([a for a, _ in pairs], dtype=np.int64)
        e = np.asarray([b for _, b in pairs], dtype=np.int64)
        # a fragment equal to a unit's text comes with the unit pass (no race for the same text)
        units = set(self._unit_texts or ())
        texts = [t for t in dict.fromkeys(self.text[a:b] for _, a, b in self._edge_fragments(s, e, self._unit_edges(s, e)))
                 if t not in units]
        fw = self._weights_of(texts) if texts else np.zeros(0)
        live = [t for t, w in zip(texts, fw) if w > 0]
        if live:
            self.embedder.encode(live)  # cached texts are not sent again
            self.prefetched += len(live)
        return len(live)

    def _unit_edges(self, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per span: (a unit edge lies inside it, index of the first unit edge >= start, index of
        the last unit edge <= end), the indexes clipped into the edge array."""
        assert self._starts is not None
        bnd = self._starts  # unit starts + [len(text)]
        k0 = np.searchsorted(bnd, s, side="left")
        k1 = np.searchsorted(bnd, e, side="right") - 1
        return k0 <= k1, np.minimum(k0, len(bnd) - 1), np.maximum(k1, 0)

    def _edge_fragments(self, s: np.ndarray, e: np.ndarray,
                        edges: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[tuple[int, int, int]]:
        """(row, start, end) of each span's partly covered units: ``[s, first unit edge)`` and
        ``[last unit edge, e)`` when a unit edge lies inside the span, else ``[s, e)`` itself
        (``edges``: ``_unit_edges(s, e)``)."""
        assert self._starts is not None
        bnd = self._starts
        has_edge, k0c, k1c = edges
        frags: list[tuple[int, int, int]] = []
        for r in range(len(s)):
            a, b = int(s[r]), int(e[r])
            if has_edge[r]:
                left, right = int(bnd[k0c[r]]), int(bnd[k1c[r]])
                if a < left:
                    frags.append((r, a, left))
                if right < b:
                    frags.append((r, right, b))
            elif b > a:
                frags.append((r, a, b))
        return frags

    # ---------------------------------------------------------------- embed
    def embed(self, spans: Sequence[Any]) -> np.ndarray:
        """One normalised vector per span, in the span embedder's mode."""
        pairs = span_pairs(spans)
        self.spans_embedded += len(pairs)
        if not pairs:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        if self.mode == "exact":
            return self._embed_exact(pairs)
        return self._embed_composed(pairs)

    def _token_fragments(self, frags: list[tuple[int, int, int]], acc: np.ndarray) -> list[tuple[int, int, int]]:
        """Add to ``acc`` each fragment pooled from the token states of the unit holding it (tokens
        starting inside the fragment; weight = their count); return the fragments left to encode."""
        assert self._starts is not None and self._units is not None and self._weights is not None
        left = []
        units = np.searchsorted(self._starts, [a for _, a, _ in frags], side="right") - 1
        need = sorted({int(u) for u in units if int(u) not in self._tokens and self._weights[int(u)] > 0})
        if need:  # units whose vectors came from the cache: one model pass over them for their token states
            _, toks = self.embedder.encode_with_tokens([self.text[self._units[u].start:self._units[u].end]
                                                        for u in need])
            for u, (states, offs) in zip(need, toks):
                self._tokens[u] = (states, offs[:, 0] + self._units[u].start)
        for (r, a, b), u in zip(frags, units):
            tok = self._tokens.get(int(u))
            if tok is None or b > int(self._starts[u + 1]):
                left.append((r, a, b))
                continue
            states, starts = tok
            lo, hi = np.searchsorted(starts, [a, b], side="left")
            if hi <= lo:
                if self.text[a:b].strip():
                    left.append((r, a, b))
                continue
            v = states[lo:hi].astype(np.float64).mean(axis=0)
            norm = np.linalg.norm(v)
            if norm > 0:
                acc[r] += (hi - lo) * (v / norm)
                self.token_fragments += 1
        return left

    def _embed_exact(self, pairs: list[tuple[int, int]]) -> np.ndarray:
        texts = [self.text[a:b] for a, b in pairs]
        new = [(p, t) for p, t in zip(pairs, texts) if p not in self._checked]
        if new:
            lens = self.embedder.model_tokens([t for _, t in new])
            long = [n for n in lens if n > self.embedder.max_tokens]
            self._checked.update(p for p, _ in new)
            if long:
                self._truncated += len(long)
                self._longest = max(self._longest, max(long))
        return self.embedder.encode(texts)

    def _embed_composed(self, pairs: list[tuple[int, int]]) -> np.ndarray:
        self.prepare()
        assert self._starts is not None and self._prefix is not None
        s = np.asarray([a for a, _ in pairs], dtype=np.int64)
        e = np.asarray([b for _, b in pairs], dtype=np.int64)
        edges = self._unit_edges(s, e)
        has_edge, k0c, k1c = edges
        acc = np.where(has_edge[:, None], self._prefix[np.maximum(k1c, k0c)] - self._prefix[k0c], 0.0)
        # fragments: [s, first edge) and [last edge, e) when an edge lies inside; [s, e) otherwise
        frags = self._edge_fragments(s, e, edges)
        if frags and self.fragment_mode == "tokens":
            frags = self._token_fragments(frags, acc)
        if frags:
            ftexts = [self.text[a:b] for _, a, b in frags]
            fw = self._weights_of(ftexts)
            live = [i for i in range(len(frags)) if fw[i] > 0]
            if live:
                self.fragments += len(live)
                fv = self.embedder.encode([ftexts[i] for i in live]).astype(np.float64)
                for j, i in enumerate(live):
                    acc[frags[i][0]] += fw[i] * fv[j]
        norms = np.linalg.norm(acc, axis=1)
        out = np.zeros_like(acc)
        ok = norms > 0
        out[ok] = acc[ok] / norms[ok, None]
        if not ok.all():  # whitespace-only spans: embed the text itself, as exact mode would
            bad = np.flatnonzero(~ok)
            out[bad] = self.embedder.encode([self.text[pairs[i][0]:pairs[i][1]] for i in bad])
        return out.astype(np.float32)
