"""The five intrinsic chunking metrics of the Adaptive Chunking paper (section 2.3).

Pure functions over chunk spans and document facts; each returns a ``MetricResult``
with the score (or None and the reason) and JSON-serialisable diagnostics that the app
highlights. Definitions follow ``DESIGN.md`` section 6 exactly:

* interior boundaries ``B``: every chunk start except the first chunk's and every
  chunk end except the last chunk's (chunks in the given order; overlaps allowed);
* SC: fraction of chunks with ``min_tokens <= tokens <= max_tokens``;
* BI: gold boundaries ``0, d1..dM, L``; block ``[dj, dj+1)`` is broken when some
  ``b`` in ``B`` has ``dj + tol < b < dj+1 - tol``; BI = intact / blocks;
* RC: pair missing when some ``b`` in ``B`` has ``s < b < t`` (s = start of the
  earlier mention, t = end of the later one); RC = 1 - missing / pairs;
* ICC: chunks cut at the gold boundaries strictly inside them; for chunks with >= 2
  pieces, cohesion = mean cos(piece, chunk); ICC = mean over those chunks, clipped;
* DCC: token-budgeted windows of consecutive chunks; mean over every (window, chunk in
  window) of cos(window, chunk), clipped.

SC, BI and RC use sorted boundaries and binary search (numpy ``searchsorted``), so
scoring a chunking costs microseconds to a few milliseconds even on long documents.
ICC and DCC take an ``embed(spans) -> ndarray`` callable returning L2-normalised rows
(``chunkscope.embeddings.spans.SpanEmbedder.embed`` in either mode), so the same code serves both
embedding modes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from chunkscope.document import Span, span_pairs

SpanLike = Any  # Span or (start, end)
EmbedFn = Callable[[list[Span]], np.ndarray]


@dataclass
class MetricResult:
    name: str
    value: float | None
    reason: str = ""  # why value is None ("" otherwise)
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _boundary_table(pairs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, "_Owners"]:
    """Sorted unique interior boundaries and, for each, (chunk index, "start"|"end").

    A boundary that is both a chunk's start and another's end is attributed to the
    chunk that starts there (the first such chunk).
    """
    k = len(pairs)
    if k < 2:
        return np.zeros(0, dtype=np.int64), _Owners(np.zeros(0, np.int64), np.zeros(0, np.int64))
    arr = np.asarray(pairs, dtype=np.int64)
    vals = np.concatenate([arr[1:, 0], arr[:-1, 1]])
    kind = np.concatenate([np.zeros(k - 1, np.int64), np.ones(k - 1, np.int64)])  # 0 start, 1 end
    chunk = np.concatenate([np.arange(1, k), np.arange(0, k - 1)])
    order = np.lexsort((chunk, kind, vals))
    vals, kind, chunk = vals[order], kind[order], chunk[order]
    first = np.ones(len(vals), dtype=bool)
    first[1:] = vals[1:] != vals[:-1]
    return vals[first], _Owners(chunk[first], kind[first])


class _Owners:
    def __init__(self, chunk: np.ndarray, kind: np.ndarray):
        self.chunk, self.kind = chunk, kind

    def __getitem__(self, i: int) -> tuple[int, str]:
        return int(self.chunk[i]), ("start" if self.kind[i] == 0 else "end")


def _overlapping(chunks: Sequence[tuple[int, int]]) -> bool:
    """Some chunk starts before the previous one ends (an overlap setting)."""
    return any(b[0] < a[1] for a, b in zip(chunks, chunks[1:]))


def _no_chunks(name: str) -> MetricResult:
    return MetricResult(name, None, "no chunks", {})


# --------------------------------------------------------------------------- SC
def size_compliance(token_counts: Sequence[int], *, min_tokens: int = 100, max_tokens: int = 1100) -> MetricResult:
    """SC = fraction of chunks whose token count lies in ``[min_tokens, max_tokens]``."""
    n = len(token_counts)
    if n == 0:
        return _no_chunks("SC")
    out = []
    ok = 0
    for i, t in enumerate(token_counts):
        if t < min_tokens:
            out.append({"chunk": i, "tokens": int(t), "kind": "under"})
        elif t > max_tokens:
            out.append({"chunk": i, "tokens": int(t), "kind": "over"})
        else:
            ok += 1
    return MetricResult(
        "SC", ok / n, "",
        {"chunks": n, "compliant": ok, "min_tokens": min_tokens, "max_tokens": max_tokens, "out_of_size": out},
    )


def _cut_inside(bounds: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each open interval (lo, hi): is some boundary strictly inside it, and which is the first?

    Returns (indexes of the cut intervals, index into ``bounds`` of the first boundary inside each).
    BI (blocks) and RC (entity-pronoun extents) are both this question.
    """
    if not len(bounds):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    idx = np.searchsorted(bounds, lo, side="right")  # first b > lo
    cand = bounds[np.minimum(idx, len(bounds) - 1)]
    js = np.flatnonzero((idx < len(bounds)) & (cand < hi))
    return js, idx[js]


def _held_by(chunks: Sequence[tuple[int, int]], lo: Sequence[int], hi: Sequence[int]) -> list[int | None]:
    """For each stretch ``[lo, hi)``: a chunk that holds it whole (overlapping chunkings can hold a cut block or
    a split pair in the next chunk), else None. The metrics still count the cut, as the paper does: this only
    says where the whole stretch can be read."""
    if not len(lo):
        return []
    arr = np.asarray(chunks, dtype=np.int64)
    order = np.argsort(arr[:, 0], kind="stable")
    starts, ends = arr[order, 0], arr[order, 1]
    best = np.maximum.accumulate(ends)  # the farthest end among the chunks starting at or before each start
    arg = np.maximum.accumulate(np.where(ends == best, np.arange(len(ends)), 0))  # ... and which chunk that is
    idx = np.searchsorted(starts, np.asarray(lo, dtype=np.int64), side="right") - 1
    out: list[int | None] = []
    for i, h in zip(idx.tolist(), np.asarray(hi, dtype=np.int64).tolist()):
        out.append(int(order[arg[i]]) if i >= 0 and best[i] >= h else None)
    return out


# --------------------------------------------------------------------------- BI
def block_integrity(
    spans: Sequence[SpanLike], split_points: Sequence[int], text_length: int, *, tolerance: int = 5
) -> MetricResult:
    """BI = intact gold blocks / all gold blocks (a chunking of one chunk scores 1.0)."""
    pairs = span_pairs(spans)
    if not pairs:
        return _no_chunks("BI")
    edges = np.asarray([0, *split_points, text_length], dtype=np.int64)
    lo = edges[:-1] + tolerance  # broken iff some b with lo < b < hi
    hi = edges[1:] - tolerance
    nblocks = len(lo)
    bounds, owners = _boundary_table(pairs)
    broken: list[dict[str, Any]] = []
    js, first = _cut_inside(bounds, lo, hi)
    if len(js):
        inside = (np.searchsorted(bounds, hi[js], side="left") - first).tolist()
        ed, bl = edges.tolist(), bounds.tolist()
        held = _held_by(pairs, lo[js], hi[js]) if _overlapping(pairs) else [None] * len(js)  # as BI sees it
        for j, i, n_inside, whole in zip(js.tolist(), first.tolist(), inside, held):
            chunk, side = owners[i]
            broken.append({
                "block": [ed[j], ed[j + 1]], "index": j, "boundary": bl[i],
                "chunk": chunk, "side": side, "boundaries_inside": n_inside,
            } | ({"held_by": whole} if whole is not None else {}))
    intact = nblocks - len(broken)
    return MetricResult(
        "BI", intact / nblocks, "",
        {"blocks": nblocks, "intact": intact, "tolerance": tolerance, "broken": broken},
    )


# --------------------------------------------------------------------------- RC
def pair_table(pairs: Any) -> np.ndarray:
    """Entity-pronoun pairs as an (N, 4) int64 array: entity start, end, pronoun start, end.

    Accepts ``((es, ee), (ps, pe))`` tuples, Span pairs or an (N, 4) array; convert once and
    pass the array to ``references_completeness`` when scoring many chunkings.
    """
    if isinstance(pairs, np.ndarray) and pairs.ndim == 2 and pairs.shape[1] == 4:
        return pairs.astype(np.int64, copy=False)
    try:
        arr = np.asarray(pairs, dtype=np.int64)
    except (TypeError, ValueError):
        arr = np.asarray([[x for span in span_pairs(p) for x in span] for p in pairs], dtype=np.int64)
    return arr.reshape(-1, 4)


def references_completeness(spans: Sequence[SpanLike], pairs: Any) -> MetricResult:
    """RC = 1 - missing / pairs; a pair is missing when an interior boundary lies in (s, t).

    ``s`` = start of the earlier mention (the one that starts first; on equal starts, the
    shorter), ``t`` = end of the other one.
    """
    chunks = span_pairs(spans)
    if not chunks:
        return _no_chunks("RC")
    tab = pair_table(pairs) if len(pairs) else np.zeros((0, 4), dtype=np.int64)
    if not len(tab):
        return MetricResult("RC", None, "no entity-pronoun pairs", {"pairs": 0, "split": []})
    es, ee, ps, pe = tab[:, 0], tab[:, 1], tab[:, 2], tab[:, 3]
    ent_first = (es < ps) | ((es == ps) & (ee <= pe))
    s = np.where(ent_first, es, ps)
    t = np.where(ent_first, pe, ee)
    bounds, owners = _boundary_table(chunks)
    split: list[dict[str, Any]] = []
    js, first = _cut_inside(bounds, s, t)
    if len(js):
        bl = bounds.tolist()
        held = (_held_by(chunks, np.minimum(es, ps)[js], np.maximum(ee, pe)[js]) if _overlapping(chunks)
                else [None] * len(js))  # both mentions whole
        for j, i, row, whole in zip(js.tolist(), first.tolist(), tab[js].tolist(), held):
            chunk, side = owners[i]
            split.append({
                "pair": j, "entity": row[:2], "pronoun": row[2:], "boundary": bl[i], "chunk": chunk, "side": side,
            } | ({"held_by": whole} if whole is not None else {}))
    n = len(tab)
    return MetricResult("RC", 1 - len(split) / n, "", {"pairs": n, "missing": len(split), "split": split})


# --------------------------------------------------------------------------- ICC
def _clip01(x: float) -> float:
    return float(min(1.0, max(0.0, x)))


def chunk_pieces(spans: Sequence[SpanLike], split_points: Sequence[int]) -> list[list[tuple[int, int]]]:
    """Each chunk cut at the gold boundaries strictly inside it (edge pieces included).

    Every non-empty piece counts, whitespace-only ones too: the paper's code embeds every piece
    between gold boundaries (DESIGN section 6).
    """
    sp = np.asarray(sorted(split_points), dtype=np.int64)
    out = []
    for a, b in span_pairs(spans):
        i = int(np.searchsorted(sp, a, side="right"))
        j = int(np.searchsorted(sp, b, side="left"))
        cuts = [a, *sp[i:j].tolist(), b]
        out.append([(x, y) for x, y in zip(cuts, cuts[1:]) if y > x])
    return out


def _icc_request(chunks: list[tuple[int, int]], split_points: Sequence[int]
                 ) -> tuple[list[int], list[list[tuple[int, int]]], list[Span]]:
    """(chunks with >= 2 pieces, every chunk's pieces, the spans ICC embeds: each such chunk, then its pieces)."""
    pieces = chunk_pieces(chunks, split_points)
    valid = [k for k, p in enumerate(pieces) if len(p) >= 2]
    req: list[Span] = []
    for k in valid:
        req.append(Span(*chunks[k]))
        req.extend(Span(x, y) for x, y in pieces[k])
    return valid, pieces, req


def _dcc_request(chunks: list[tuple[int, int]], wins: list[dict[str, Any]]) -> tuple[list[int], list[Span]]:
    """(the chunks in some window, the spans DCC embeds: those chunks, then the windows)."""
    used = sorted({c for w in wins for c in range(w["first"], w["last"] + 1)})
    return used, [Span(*chunks[c]) for c in used] + [Span(*w["span"]) for w in wins]


def embedding_requests(spans: Sequence[SpanLike], token_counts: Sequence[int], split_points: Sequence[int], *,
                       window_tokens: int = 3000, window_step: int = 1, text: str | None = None) -> list[Span]:
    """Every span ICC and DCC will ask ``embed`` for on this chunking (so that a caller can embed
    them ahead, e.g. all chunkings' edge fragments in one call); none for DCC when its windows
    cannot be built (DCC itself says why)."""
    chunks = span_pairs(spans)
    if not chunks:
        return []
    req = _icc_request(chunks, split_points)[2]
    try:
        wins = dcc_windows(chunks, token_counts, window_tokens=window_tokens, window_step=window_step, text=text)
    except ValueError:
        wins = []
    return req + _dcc_request(chunks, wins)[1]


def intrachunk_cohesion(spans: Sequence[SpanLike], split_points: Sequence[int], embed: EmbedFn) -> MetricResult:
    """ICC = mean over chunks with >= 2 pieces of mean cos(piece, chunk), clipped to [0, 1]."""
    chunks = span_pairs(spans)
    if not chunks:
        return _no_chunks("ICC")
    valid, pieces, req = _icc_request(chunks, split_points)
    if not valid:
        return MetricResult("ICC", None, "no chunk spans two or more gold blocks", {"per_chunk": []})
    vecs = np.asarray(embed(req), dtype=np.float64)
    per_chunk = []
    pos = 0
    for k in valid:
        n = len(pieces[k])
        cv = vecs[pos]
        cos = vecs[pos + 1:pos + 1 + n] @ cv
        pos += 1 + n
        per_chunk.append({"chunk": k, "pieces": n, "cohesion": float(cos.mean()),
                          "piece_cosines": [float(c) for c in cos]})
    raw = float(np.mean([c["cohesion"] for c in per_chunk]))
    return MetricResult("ICC", _clip01(raw), "", {"raw": raw, "chunks_scored": len(valid), "per_chunk": per_chunk})


# --------------------------------------------------------------------------- DCC
def dcc_windows(
    spans: Sequence[SpanLike],
    token_counts: Sequence[int],
    *,
    window_tokens: int = 3000,
    window_step: int = 1,
    text: str | None = None,
    count_tokens: Callable[[str], int] | None = None,
) -> list[dict[str, Any]]:
    """The kept DCC windows: ``{"first", "last", "span": [s, e], "tokens"}`` (chunk indexes inclusive).

    A window starts at chunk i and takes chunks i+1, i+2, ... while the tokens of its new
    text (the part of each chunk not already in the window) keep the total <= budget.
    """
    if window_step < 1:
        raise ValueError("window_step must be >= 1")
    chunks = span_pairs(spans)
    k = len(chunks)
    if len(token_counts) != k:
        raise ValueError("token_counts and spans differ in length")
    if count_tokens is None:
        from chunkscope.text.tokens import count_tokens as default_count

        count_tokens = default_count
    count = count_tokens

    def tail_tokens(j: int, covered_end: int) -> int:
        a, b = chunks[j]
        if a >= covered_end:
            return int(token_counts[j])
        if b <= covered_end:
            return 0
        if text is None:
            raise ValueError("overlapping chunks: DCC needs the document text to count new tokens")
        return count(text[covered_end:b])

    kept: list[dict[str, Any]] = []
    last_kept = -1
    for i in range(0, k, window_step):
        total = int(token_counts[i])
        end = chunks[i][1]
        j = i
        while j + 1 < k:
            add = tail_tokens(j + 1, end)
            if total + add > window_tokens:
                break
            total += add
            j += 1
            end = max(end, chunks[j][1])
        if j > i and j != last_kept:
            kept.append({"first": i, "last": j, "span": [chunks[i][0], end], "tokens": total})
            last_kept = j
    return kept


def document_contextual_coherence(
    spans: Sequence[SpanLike],
    token_counts: Sequence[int],
    embed: EmbedFn,
    *,
    window_tokens: int = 3000,
    window_step: int = 1,
    text: str | None = None,
    count_tokens: Callable[[str], int] | None = None,
) -> MetricResult:
    """DCC = mean over every (window, chunk in window) of cos(window, chunk), clipped to [0, 1].

    ``text`` is needed only when chunks overlap (to count the tokens of a chunk's new tail).
    """
    chunks = span_pairs(spans)
    if not chunks:
        return _no_chunks("DCC")
    wins = dcc_windows(chunks, token_counts, window_tokens=window_tokens, window_step=window_step,
                       text=text, count_tokens=count_tokens)
    if not wins:
        reason = "one chunk only" if len(chunks) == 1 else f"no window of >= 2 chunks fits {window_tokens} tokens"
        return MetricResult("DCC", None, reason, {"windows": []})
    used, req = _dcc_request(chunks, wins)
    row = {c: r for r, c in enumerate(used)}
    vecs = np.asarray(embed(req), dtype=np.float64)
    cvec, wvec = vecs[:len(used)], vecs[len(used):]
    total, n = 0.0, 0
    details = []
    for m, w in enumerate(wins):
        idx = [row[c] for c in range(w["first"], w["last"] + 1)]
        cos = cvec[idx] @ wvec[m]
        total += float(cos.sum())
        n += len(idx)
        details.append({**w, "coherence": float(cos.mean()), "chunk_cosines": [float(c) for c in cos]})
    raw = total / n
    return MetricResult("DCC", _clip01(raw), "",
                        {"raw": raw, "pairs": n, "window_tokens": window_tokens, "window_step": window_step,
                         "windows": details})


# --------------------------------------------------------------------------- score
def score(metrics: Mapping[str, float | None], weights: Mapping[str, float] | None = None) -> float | None:
    """Weighted mean of the available (non-None) metrics, weights renormalised over them.

    Missing weights default to 1.0; a weight of 0 leaves the metric out. None when no
    metric with positive weight is available.
    """
    num = den = 0.0
    for name, v in metrics.items():
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        if w < 0:
            raise ValueError(f"negative weight for {name}")
        if v is None or w == 0:
            continue
        num += w * float(v)
        den += w
    return num / den if den > 0 else None
