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

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, TypeVar

import numpy as np

from chunkscope.document import Span, span_pairs
from chunkscope.records import Record, json_field

R = TypeVar("R", bound=Record)

SpanLike = Any  # Span or (start, end)
EmbedFn = Callable[[list[Span]], np.ndarray]


def _int(v: Any) -> int:
    """A JSON integer, checked (a damaged or foreign report's entry is refused with TypeError)."""
    if not isinstance(v, int):
        raise TypeError(f"not an integer: {v!r}")
    return v


def _span(v: Any) -> list[int]:
    """A JSON ``[start, end]``, checked (TypeError or ValueError otherwise)."""
    if not (isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, int) for x in v)):
        raise TypeError(f"not a span: {v!r}")
    if v[0] > v[1]:
        raise ValueError(f"reversed span: {v!r}")
    return list(v)


def _index(v: Any) -> int | None:
    """A JSON index (an ``int``, not a bool, >= 0), else None: a damaged optional index is dropped."""
    return v if type(v) is int and v >= 0 else None


def _valid(cls: type[R]) -> Callable[[Any], list[R]]:
    """A ``load`` for a list of diagnostic records that leaves out the malformed entries."""
    def load(items: Any) -> list[R]:
        """The well-formed records of ``items``."""
        out = []
        for x in items if isinstance(items, list) else []:
            try:
                out.append(cls.from_dict(x))
            except (KeyError, TypeError, ValueError):
                continue
        return out
    return load


def _opt(**kw: Any) -> Any:
    """An optional field, left out of the JSON when None."""
    return json_field(None, omit="none", **kw)


# --------------------------------------------------------------------------- diagnostic records
@dataclass(kw_only=True)
class OutOfSize(Record):
    """SC: a chunk under ``min_tokens`` (kind ``under``) or over ``max_tokens`` (``over``)."""

    chunk: int = json_field(load=_int)
    tokens: int | None = _opt()
    kind: str | None = _opt()


@dataclass(kw_only=True)
class BrokenBlock(Record):
    """BI: gold block ``index`` (``block`` = [start, end]) broken at ``boundary``, chunk ``chunk``'s ``side``.

    ``held_by``: a chunk holding the whole block (overlapping chunkings), else None.
    """

    block: list[int] = json_field(load=_span)
    index: int | None = _opt()
    boundary: int = json_field(load=_int)
    chunk: int | None = _opt()
    side: str | None = _opt()
    boundaries_inside: int | None = _opt()
    held_by: int | None = _opt(load=_index)


@dataclass(kw_only=True)
class SplitPair(Record):
    """RC: entity-pronoun pair ``pair`` split at ``boundary`` (chunk ``chunk``'s ``side``); ``held_by`` as BI's."""

    pair: int | None = _opt(load=_index)
    entity: list[int] = json_field(load=_span)
    pronoun: list[int] = json_field(load=_span)
    boundary: int = json_field(load=_int)
    chunk: int | None = _opt()
    side: str | None = _opt()
    held_by: int | None = _opt(load=_index)

    @property
    def start(self) -> int:
        """Where the pair starts: its first mention's start."""
        return min(self.entity[0], self.pronoun[0])

    @property
    def end(self) -> int:
        """Where the pair ends: the end of its mention that ends last."""
        return max(self.entity[1], self.pronoun[1])


@dataclass(kw_only=True)
class ChunkCohesion(Record):
    """ICC: one chunk's cohesion (mean of the cosines of its ``pieces`` with the chunk)."""

    chunk: int
    pieces: int
    cohesion: float
    piece_cosines: list[float]


@dataclass(kw_only=True)
class Window(Record):
    """A DCC window: chunks ``first``..``last`` (inclusive), their ``span`` and new-text ``tokens``."""

    first: int
    last: int
    span: list[int]
    tokens: int | None = _opt()


@dataclass(kw_only=True)
class WindowCoherence(Window):
    """DCC: a window's coherence (mean cosine of its chunks with it) and each chunk's cosine."""

    coherence: float
    chunk_cosines: list[float]


@dataclass
class NoDetails(Record):
    """The diagnostics of a metric over no chunks (``{}``)."""


@dataclass(kw_only=True)
class SizeDetails(Record):
    """SC's diagnostics."""

    chunks: int | None = _opt()
    compliant: int | None = _opt()
    min_tokens: int | None = _opt()
    max_tokens: int | None = _opt()
    out_of_size: list[OutOfSize] = json_field(default_factory=list, load=_valid(OutOfSize))


@dataclass(kw_only=True)
class BlockDetails(Record):
    """BI's diagnostics."""

    blocks: int | None = _opt()
    intact: int | None = _opt()
    tolerance: int | None = _opt()
    broken: list[BrokenBlock] = json_field(default_factory=list, load=_valid(BrokenBlock))


@dataclass(kw_only=True)
class ReferenceDetails(Record):
    """RC's diagnostics (``missing`` absent when there are no pairs)."""

    pairs: int | None = _opt()
    missing: int | None = _opt()
    split: list[SplitPair] = json_field(default_factory=list, load=_valid(SplitPair))


@dataclass(kw_only=True)
class CohesionDetails(Record):
    """ICC's diagnostics (``raw``: the mean before clipping)."""

    raw: float | None = _opt()
    chunks_scored: int | None = _opt()
    per_chunk: list[ChunkCohesion] = json_field(default_factory=list, load=_valid(ChunkCohesion))


@dataclass(kw_only=True)
class CoherenceDetails(Record):
    """DCC's diagnostics (``raw``: the mean before clipping; ``pairs``: the (window, chunk) pairs)."""

    raw: float | None = _opt()
    pairs: int | None = _opt()
    window_tokens: int | None = _opt()
    window_step: int | None = _opt()
    windows: list[WindowCoherence] = json_field(default_factory=list, load=_valid(WindowCoherence))


Details = NoDetails | SizeDetails | BlockDetails | ReferenceDetails | CohesionDetails | CoherenceDetails
DETAILS: dict[str, type[Details]] = {"SC": SizeDetails, "BI": BlockDetails, "RC": ReferenceDetails,
                                     "ICC": CohesionDetails, "DCC": CoherenceDetails}


def diagnostics_from_dict(d: Any) -> dict[str, Details]:
    """The typed diagnostics of a report's chunking; a metric whose entry is not an object is left out, and so
    are malformed items (a damaged or foreign report)."""
    out: dict[str, Details] = {}
    for name, v in (d.items() if isinstance(d, dict) else ()):
        if name in DETAILS and isinstance(v, dict):
            out[name] = DETAILS[name].from_dict(v) if v else NoDetails()
    return out


@dataclass
class MetricResult:
    """One metric's value (None with the ``reason``) and its diagnostics."""

    name: str
    value: float | None
    reason: str = ""  # why value is None ("" otherwise)
    details: Details = field(default_factory=NoDetails)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON types."""
        return {"name": self.name, "value": self.value, "reason": self.reason, "details": self.details.to_dict()}


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
    return MetricResult(name, None, "no chunks", NoDetails())


# --------------------------------------------------------------------------- SC
def size_compliance(token_counts: Sequence[int], *, min_tokens: int = 100, max_tokens: int = 1100) -> MetricResult:
    """SC = fraction of chunks whose token count lies in ``[min_tokens, max_tokens]``."""
    n = len(token_counts)
    if n == 0:
        return _no_chunks("SC")
    out = [OutOfSize(chunk=i, tokens=int(t), kind="under" if t < min_tokens else "over")
           for i, t in enumerate(token_counts) if not min_tokens <= t <= max_tokens]
    ok = n - len(out)
    return MetricResult("SC", ok / n, "", SizeDetails(chunks=n, compliant=ok, min_tokens=min_tokens,
                                                      max_tokens=max_tokens, out_of_size=out))


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
    broken: list[BrokenBlock] = []
    js, first = _cut_inside(bounds, lo, hi)
    if len(js):
        inside = (np.searchsorted(bounds, hi[js], side="left") - first).tolist()
        ed, bl = edges.tolist(), bounds.tolist()
        held = _held_by(pairs, lo[js], hi[js]) if _overlapping(pairs) else [None] * len(js)  # as BI sees it
        for j, i, n_inside, whole in zip(js.tolist(), first.tolist(), inside, held):
            chunk, side = owners[i]
            broken.append(BrokenBlock(block=[ed[j], ed[j + 1]], index=j, boundary=bl[i], chunk=chunk, side=side,
                                      boundaries_inside=n_inside, held_by=whole))
    intact = nblocks - len(broken)
    return MetricResult("BI", intact / nblocks, "",
                        BlockDetails(blocks=nblocks, intact=intact, tolerance=tolerance, broken=broken))


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
        return MetricResult("RC", None, "no entity-pronoun pairs", ReferenceDetails(pairs=0))
    es, ee, ps, pe = tab[:, 0], tab[:, 1], tab[:, 2], tab[:, 3]
    ent_first = (es < ps) | ((es == ps) & (ee <= pe))
    s = np.where(ent_first, es, ps)
    t = np.where(ent_first, pe, ee)
    bounds, owners = _boundary_table(chunks)
    split: list[SplitPair] = []
    js, first = _cut_inside(bounds, s, t)
    if len(js):
        bl = bounds.tolist()
        held = (_held_by(chunks, np.minimum(es, ps)[js], np.maximum(ee, pe)[js]) if _overlapping(chunks)
                else [None] * len(js))  # both mentions whole
        for j, i, row, whole in zip(js.tolist(), first.tolist(), tab[js].tolist(), held):
            chunk, side = owners[i]
            split.append(SplitPair(pair=j, entity=row[:2], pronoun=row[2:], boundary=bl[i], chunk=chunk, side=side,
                                   held_by=whole))
    n = len(tab)
    return MetricResult("RC", 1 - len(split) / n, "", ReferenceDetails(pairs=n, missing=len(split), split=split))


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


def _dcc_request(chunks: list[tuple[int, int]], wins: list[Window]) -> tuple[list[int], list[Span]]:
    """(the chunks in some window, the spans DCC embeds: those chunks, then the windows)."""
    used = sorted({c for w in wins for c in range(w.first, w.last + 1)})
    return used, [Span(*chunks[c]) for c in used] + [Span(*w.span) for w in wins]


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
        return MetricResult("ICC", None, "no chunk spans two or more gold blocks", CohesionDetails())
    vecs = np.asarray(embed(req), dtype=np.float64)
    per_chunk = []
    pos = 0
    for k in valid:
        n = len(pieces[k])
        cv = vecs[pos]
        cos = vecs[pos + 1:pos + 1 + n] @ cv
        pos += 1 + n
        per_chunk.append(ChunkCohesion(chunk=k, pieces=n, cohesion=float(cos.mean()),
                                       piece_cosines=[float(c) for c in cos]))
    raw = float(np.mean([c.cohesion for c in per_chunk]))
    return MetricResult("ICC", _clip01(raw), "", CohesionDetails(raw=raw, chunks_scored=len(valid), per_chunk=per_chunk))


# --------------------------------------------------------------------------- DCC
def dcc_windows(
    spans: Sequence[SpanLike],
    token_counts: Sequence[int],
    *,
    window_tokens: int = 3000,
    window_step: int = 1,
    text: str | None = None,
    count_tokens: Callable[[str], int] | None = None,
) -> list[Window]:
    """The kept DCC windows (chunk indexes inclusive).

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
        """Tokens chunk ``j`` adds to a window covering up to ``covered_end``."""
        a, b = chunks[j]
        if a >= covered_end:
            return int(token_counts[j])
        if b <= covered_end:
            return 0
        if text is None:
            raise ValueError("overlapping chunks: DCC needs the document text to count new tokens")
        return count(text[covered_end:b])

    kept: list[Window] = []
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
            kept.append(Window(first=i, last=j, span=[chunks[i][0], end], tokens=total))
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
        return MetricResult("DCC", None, reason, CoherenceDetails())
    used, req = _dcc_request(chunks, wins)
    row = {c: r for r, c in enumerate(used)}
    vecs = np.asarray(embed(req), dtype=np.float64)
    cvec, wvec = vecs[:len(used)], vecs[len(used):]
    total, n = 0.0, 0
    details = []
    for m, w in enumerate(wins):
        idx = [row[c] for c in range(w.first, w.last + 1)]
        cos = cvec[idx] @ wvec[m]
        total += float(cos.sum())
        n += len(idx)
        details.append(WindowCoherence(first=w.first, last=w.last, span=w.span, tokens=w.tokens,
                                       coherence=float(cos.mean()), chunk_cosines=[float(c) for c in cos]))
    raw = total / n
    return MetricResult("DCC", _clip01(raw), "",
                        CoherenceDetails(raw=raw, pairs=n, window_tokens=window_tokens, window_step=window_step,
                                         windows=details))


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
