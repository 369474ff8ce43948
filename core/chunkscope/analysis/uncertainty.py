"""How sure is the winner: a 95% interval for every metric and score, and the verdict.

Every metric is a mean over items: chunks (SC, ICC), gold blocks (BI), entity-pronoun pairs (RC)
and (window, chunk) pairs (DCC). Their per-item values are already in each chunking's
diagnostics (``chunkscope.metrics``); this module resamples them, it never re-embeds or re-chunks.

**Resampling unit: the document's gold blocks** (a cluster bootstrap). Each resample draws the
document's M blocks with replacement (``scipy.stats.bootstrap`` over the block indices, seeded
from the document); every item counts as many times as the block holding it was drawn (a
block's own item for BI, a pair by the start of its earlier mention, a chunk by its midpoint, a
DCC (window, chunk) pair by the chunk's midpoint). The same draw serves every chunking and every
metric, so:

* differences between chunkings are *paired*: two chunkings are compared on the same resampled
  document, which is what the verdict needs (shared items -- blocks for BI, pairs for RC -- are
  paired exactly; chunks and windows, which differ between chunkings, are paired through the
  document region they cover);
* the metrics of one chunking keep their correlation within a resample, so the score's interval
  is that of the weighted mean, not of independent metrics;
* nearby items (the pairs of one paragraph, the chunks of one section) move together, as they
  would in "another document like this one".

A resample where none of a metric's items was drawn keeps the metric's point value. ICC and DCC
are clipped to [0, 1] as the metrics are. Intervals are bootstrap percentiles.

**The verdict** (``verdict``): the top candidate (highest point score) is a *clear winner* when
its score is above each other candidate's in at least 95% of resamples (an exact tie counts
half). Otherwise it is *tied* with every candidate it does not beat that often; the tie is
broken by the budgeted retrieval recall when the report has a retrieval check, else by fewer
chunks (cheaper to index and to serve), else by the point score (``tie_break`` setting). The
picked chunking is the report's winner.

The per-metric resamples (B x 5 per chunking) are kept per report object (``metric_resamples``), so new weights
re-rank and re-judge in microseconds (``rescore``); a report read from JSON recomputes them
from its diagnostics (tens of milliseconds).
"""

from __future__ import annotations

import hashlib
import inspect
import weakref
from typing import Any, Sequence

import numpy as np

from chunkscope.caching import BoundedCache
from chunkscope.metrics import BlockDetails, CoherenceDetails, CohesionDetails, ReferenceDetails, SizeDetails
from chunkscope.report import METRICS, ChunkingResult, Report

RESAMPLES = 1000
LEVEL = 0.95  # interval coverage
CLEAR = 0.95  # share of resamples the top candidate must lead each rival in
TIE_BREAKS = ("auto", "chunks", "retrieval", "score")
RULE_WORDS = {"chunks": "fewer chunks", "retrieval": "budgeted retrieval recall", "score": "the highest point score"}
METHOD = "cluster bootstrap over the document's gold blocks (percentile intervals)"

_CLIPPED = {"ICC", "DCC"}


# ------------------------------------------------------------------ items behind each metric

def pair_positions(pairs: Any) -> list[int]:
    """Where each entity-pronoun pair sits: the start of its earlier mention (RC's ``s``)."""
    if pairs is None or not len(pairs):
        return []
    from chunkscope.metrics import pair_table

    tab = pair_table(pairs)
    return np.minimum(tab[:, 0], tab[:, 2]).astype(int).tolist()


def _block_starts(report: Report) -> np.ndarray | None:
    blocks = report.document.get("blocks") or []
    if len(blocks) < 2:
        return None
    return np.asarray([b[0] for b in blocks], dtype=np.int64)


def _block_of(starts: np.ndarray, pos: Any) -> np.ndarray:
    return np.clip(np.searchsorted(starts, np.asarray(pos, dtype=np.int64), side="right") - 1, 0, len(starts) - 1)


def items(report: Report, c: ChunkingResult, starts: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per metric of one chunking: (block of each item, value of each item), from its diagnostics.

    A metric without a value, or whose items the report does not hold, is left out.
    """
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    d = c.diagnostics or {}
    if not c.chunks:
        return out
    mids = _block_of(starts, [(ch.start + ch.end) // 2 for ch in c.chunks])
    sc, bi, rc, icc, dcc = (d.get(m) for m in ("SC", "BI", "RC", "ICC", "DCC"))
    if c.metrics.get("SC") is not None and isinstance(sc, SizeDetails):
        v = np.ones(len(c.chunks))
        v[[o.chunk for o in sc.out_of_size]] = 0.0
        out["SC"] = (mids, v)
    if c.metrics.get("BI") is not None and isinstance(bi, BlockDetails) and bi.blocks == len(starts):
        v = np.ones(len(starts))
        v[[b.index for b in bi.broken if b.index is not None]] = 0.0
        out["BI"] = (np.arange(len(starts)), v)
    pos = (report.uncertainty or {}).get("pair_positions")
    if c.metrics.get("RC") is not None and pos is not None and isinstance(rc, ReferenceDetails) and rc.pairs == len(pos):
        v = np.ones(len(pos))
        v[[s.pair for s in rc.split if s.pair is not None]] = 0.0
        out["RC"] = (_block_of(starts, pos), v)
    if c.metrics.get("ICC") is not None and isinstance(icc, CohesionDetails) and icc.per_chunk:
        pc = icc.per_chunk
        out["ICC"] = (mids[[p.chunk for p in pc]], np.asarray([p.cohesion for p in pc], dtype=float))
    if c.metrics.get("DCC") is not None and isinstance(dcc, CoherenceDetails) and dcc.windows:
        idx: list[int] = []
        val: list[float] = []
        for w in dcc.windows:
            cos = w.chunk_cosines
            idx.extend(range(w.first, w.first + len(cos)))
            val.extend(cos)
        if idx:
            out["DCC"] = (mids[idx], np.asarray(val, dtype=float))
    return out


# ------------------------------------------------------------------ the bootstrap

def seed(report: Report) -> int:
    """The document's seed: same text and blocks, same resamples."""
    d = report.document
    key = f"{d.get('sha256', '')}|{d.get('blocks', [])}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


def _cache_key(report: Report) -> tuple:
    return (seed(report), len((report.uncertainty or {}).get("pair_positions") or []),
            tuple((c.id, len(c.chunks), tuple(c.metrics.get(m) for m in METRICS)) for c in report.chunkings if c.ok))


# report identity and content -> (a weak reference to the report, its resamples): the reference is checked, so an
# entry never serves another report that happens to get a dead one's id
_RESAMPLES: BoundedCache[tuple[int, tuple], tuple[weakref.ref, dict[str, np.ndarray]]] = BoundedCache(16)


def metric_resamples(report: Report) -> dict[str, np.ndarray]:
    """Chunking id -> (B, 5) resampled metric values.

    Columns in ``METRICS`` order; NaN where the metric has no value. Empty when the report cannot be
    resampled (no blocks, no per-item values). Cached per report (the last 16); recomputed when its
    chunkings change.
    """
    key = (id(report), _cache_key(report))
    kept = _RESAMPLES.get(key)
    if kept is not None and kept[0]() is report:
        return kept[1]
    out = _compute(report)
    _RESAMPLES.put(key, (weakref.ref(report), out))
    return out


def _compute(report: Report) -> dict[str, np.ndarray]:
    starts = _block_starts(report)
    ok = [c for c in report.chunkings if c.ok and c.chunks]
    if starts is None or not ok:
        return {}
    nb = len(starts)
    cols: list[tuple[str, str]] = []
    sums, counts, points = [], [], []
    for c in ok:
        for m, (blk, val) in items(report, c, starts).items():
            cols.append((c.id, m))
            sums.append(np.bincount(blk, weights=val, minlength=nb))
            counts.append(np.bincount(blk, minlength=nb).astype(float))
            points.append(float(c.metrics[m]))  # type: ignore[arg-type]  # items() keeps valued metrics only
    if not cols:
        return {}
    S, N, P = np.stack(sums, axis=1), np.stack(counts, axis=1), np.asarray(points)
    clip = np.asarray([m in _CLIPPED for _, m in cols])

    def statistic(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64)
        flat = idx.reshape(-1, idx.shape[-1])
        b = flat.shape[0]
        w = np.bincount((flat + nb * np.arange(b)[:, None]).ravel(), minlength=b * nb).reshape(b, nb).astype(float)
        num, den = w @ S, w @ N
        with np.errstate(invalid="ignore", divide="ignore"):
            v = np.where(den > 0, num / np.where(den > 0, den, 1.0), P)
        v = np.where(clip, np.clip(v, 0.0, 1.0), v)
        return v.T.reshape((len(cols), *idx.shape[:-1]))

    dist = _bootstrap(np.arange(nb), statistic, seed(report))  # (K, B)
    out: dict[str, np.ndarray] = {}
    for k, (cid, m) in enumerate(cols):
        arr = out.setdefault(cid, np.full((dist.shape[1], len(METRICS)), np.nan))
        arr[:, METRICS.index(m)] = dist[k]
    return out


def _bootstrap(blocks: np.ndarray, statistic: Any, seed_value: int) -> np.ndarray:
    """The (K, B) bootstrap distribution of ``statistic`` over resampled block indices (scipy)."""
    from scipy import stats

    rng = np.random.default_rng(seed_value)
    kw: dict[str, Any] = {"rng": rng} if "rng" in inspect.signature(stats.bootstrap).parameters else {
        "random_state": rng}
    res = stats.bootstrap((blocks,), statistic, vectorized=True, n_resamples=RESAMPLES, batch=250,
                          method="percentile", confidence_level=LEVEL, **kw)
    return np.asarray(res.bootstrap_distribution, dtype=float).reshape(-1, RESAMPLES)


def score_resamples(arr: np.ndarray, metrics: dict[str, float | None], weights: dict[str, float],
                    fixed: tuple[float, float] | None = None) -> np.ndarray | None:
    """(B,) scores of the resamples: the weighted mean over the metrics the point score uses
    (``chunkscope.metrics.score``), each resampled metric standing in for its point value. ``fixed``:
    (weight, value) of a term that is not resampled, the retrieval recall when it joins the score (the
    resampling unit is the document's block; the questions are not resampled)."""
    num = np.zeros(arr.shape[0])
    den = 0.0
    if fixed is not None and fixed[0] > 0:
        num += fixed[0] * fixed[1]
        den += fixed[0]
    for j, m in enumerate(METRICS):
        w = float(weights.get(m, 1.0))
        if metrics.get(m) is None or w == 0:
            continue
        col = arr[:, j]
        num += w * np.where(np.isnan(col), float(metrics[m]), col)  # type: ignore[arg-type]
        den += w
    return num / den if den > 0 else None


def intervals(values: np.ndarray) -> np.ndarray:
    """Percentile intervals of the columns of (B, ...) resamples: (2, ...) low and high rows."""
    a = (1 - LEVEL) / 2
    return np.round(np.quantile(values, [a, 1 - a], axis=0), 6)


def fill_intervals(report: Report, weights: dict[str, float],
                   fixed: dict[str, tuple[float, float]] | None = None) -> dict[str, np.ndarray]:
    """Set every OK chunking's ``metric_intervals`` and ``score_interval``; return id -> (B,) scores.
    ``fixed``: id -> (weight, value) of the retrieval recall where it joins the score (``score_resamples``),
    so the intervals and the verdict are about the score the leaderboard shows."""
    res = metric_resamples(report)
    scores: dict[str, np.ndarray] = {}
    for c in report.chunkings:
        arr = res.get(c.id)
        c.metric_intervals, c.score_interval = {}, None
        if arr is None or not c.ok:
            continue
        with np.errstate(invalid="ignore"):
            lo_hi = intervals(arr)  # NaN columns: metrics without resamples
        c.metric_intervals = {m: [float(lo_hi[0, j]), float(lo_hi[1, j])] for j, m in enumerate(METRICS)
                              if c.metrics.get(m) is not None and not np.isnan(lo_hi[0, j])}
        s = score_resamples(arr, c.metrics, weights, (fixed or {}).get(c.id))
        if s is not None:
            scores[c.id] = s
    if scores:
        ids = list(scores)
        lo_hi = intervals(np.stack([scores[i] for i in ids], axis=1))
        for k, cid in enumerate(ids):
            scored = report.get(cid)
            assert scored is not None
            scored.score_interval = [float(lo_hi[0, k]), float(lo_hi[1, k])]
    return scores


# ------------------------------------------------------------------ the verdict

def retrieval_recall(report: Report) -> dict[str, float]:
    """The retrieval check's budgeted recall per chunking id, when the report has one.

    Hook for the retrieval check (issue 14): ``report.retrieval`` (or the report dict's
    ``"retrieval"``) shaped like ``chunkscope.retrieval/1`` -- ``{"chunkings": [{"id",
    "at_budget": {"recall"}}], "budget"}`` -- or simply ``{"recall": {id: value}}``.
    """
    r = getattr(report, "retrieval", None)
    if not isinstance(r, dict):
        return {}
    out: dict[str, float] = {}
    for cid, v in (r.get("recall") or {}).items():
        if isinstance(v, (int, float)):
            out[str(cid)] = float(v)
    for c in r.get("chunkings") or []:
        v = (c.get("at_budget") or {}).get("recall") if isinstance(c, dict) else None
        if isinstance(v, (int, float)):
            out[str(c.get("id"))] = float(v)
    return out


def retrieval_is_proxy(report: Report) -> bool:
    """Whether the report's retrieval check ran on proxy questions (the offline self-test), not real ones."""
    r = getattr(report, "retrieval", None)
    if not isinstance(r, dict):
        return False
    qs = r.get("question_source") or {}
    return isinstance(qs, dict) and (qs.get("source") == "self-test" or bool((qs.get("info") or {}).get("proxy")))


def verdict(report: Report, pool: Sequence[ChunkingResult], scores: dict[str, np.ndarray],
            tie_break: str = "auto") -> dict[str, Any] | None:
    """Clear winner or tie (with the tie-break applied) among ``pool`` (candidates, best point
    score first). None when the report cannot be resampled or there is one candidate."""
    if len(pool) < 2 or any(c.id not in scores for c in pool):
        return None
    top = pool[0]
    s_top = scores[top.id]
    nres = len(s_top)
    stack = np.stack([scores[c.id] for c in pool])  # (n, B)
    best = stack.max(axis=0)
    at_best = stack >= best - 1e-12
    wins = (at_best / at_best.sum(axis=0)).mean(axis=1)  # share of resamples each ranks first (ties split)
    rivals = []
    for c, share in zip(pool[1:], wins[1:]):
        diff = s_top - scores[c.id]
        ahead = float((diff > 1e-12).mean() + 0.5 * (np.abs(diff) <= 1e-12).mean())
        rivals.append({"id": c.id, "score": c.score, "ahead": round(ahead, 4), "first": round(float(share), 4),
                       "tied": ahead < CLEAR, "chunks": len(c.chunks)})
    tied = [r["id"] for r in rivals if r["tied"]]
    v: dict[str, Any] = {
        "kind": "tie" if tied else "clear", "top": top.id, "winner": top.id, "tied": tied,
        "top_first": round(float(wins[0]), 4), "top_chunks": len(top.chunks),
        "rivals": rivals, "resamples": nres, "level": LEVEL, "clear_share": CLEAR, "unit": "block",
        "tie_break": None,
    }
    if tied:
        group = [top] + [c for c in pool[1:] if c.id in tied]
        v["tie_break"] = _break_tie(report, group, tie_break)
        v["winner"] = v["tie_break"]["pick"]
    return v


def _break_tie(report: Report, group: list[ChunkingResult], rule: str) -> dict[str, Any]:
    """The tie-break's pick among ``group``. ``auto`` uses the retrieval check's recall only when its questions
    are real, or when the user's settings put a proxy (self-test) check in the score (a retrieval weight);
    a proxy check run to look never decides the winner unless ``rule`` is ``retrieval``."""
    recall = retrieval_recall(report)
    proxy_ignored = (rule == "auto" and bool(recall) and retrieval_is_proxy(report)
                     and float(report.settings.get("retrieval_weight") or 0.0) <= 0)
    if proxy_ignored:
        recall = {}
    if rule in ("auto", "retrieval") and recall and all(c.id in recall for c in group):
        pick = max(group, key=lambda c: (recall[c.id], -len(c.chunks), c.score or 0.0))
        return {"rule": "retrieval", "pick": pick.id, "values": {c.id: recall[c.id] for c in group},
                "budget": (getattr(report, "retrieval", None) or {}).get("budget")}
    if rule == "score":
        return {"rule": "score", "pick": group[0].id, "values": {c.id: c.score for c in group}}
    pick = min(group, key=lambda c: (len(c.chunks), -(c.score or 0.0), c.id))
    out: dict[str, Any] = {"rule": "chunks", "pick": pick.id, "values": {c.id: len(c.chunks) for c in group}}
    if proxy_ignored:
        out["proxy_ignored"] = True  # a self-test check was there but was not asked to decide
    return out


def share(x: float) -> str:
    """A share of resamples as a percentage, with a decimal where rounding would reach the clear-win line
    (0.946 is "94.6%", not "95%")."""
    return f"{x:.1%}" if x < CLEAR and round(x * 100) >= round(CLEAR * 100) else f"{x:.0%}"


def verdict_text(v: dict[str, Any], report: Report) -> str:
    """The verdict in words a stakeholder reads correctly."""
    n = v["resamples"]
    top = report.get(v["top"])
    assert top is not None
    if v["kind"] == "clear":
        worst = min(v["rivals"], key=lambda r: r["ahead"])
        return (f"{top.id} is a clear winner: its score is above every other candidate's in at least "
                f"{CLEAR:.0%} of {n} resamples of the document (the candidate it beats least often, {worst['id']}, in "
                f"{worst['ahead']:.0%}).")
    tied = [r for r in v["rivals"] if r["tied"]]
    names = [top.id] + [r["id"] for r in tied]
    firsts = ", ".join([f"{top.id} {v['top_first']:.0%}"] + [f"{r['id']} {r['first']:.0%}" for r in tied])
    s = (f"{_join(names)} are too close to call on this document. {top.id} has the highest score, but it is ahead "
         "of " + _join([f"{r['id']} in only {share(r['ahead'])}" for r in tied])
         + f" of {n} resamples (a clear win needs {CLEAR:.0%}; share of resamples each comes first: {firsts}). ")
    tb = v["tie_break"]
    pick = report.get(tb["pick"])
    assert pick is not None
    others = [c for c in (report.get(x) for x in names) if c is not None and c.id != pick.id]
    if tb["rule"] == "chunks":
        fewest = min(len(c.chunks) for c in others)
        vs = _join([f"{len(c.chunks)}" for c in others])
        if len(pick.chunks) < fewest:
            than = "" if len(others) == 1 else " than any of the others"
            s += (f"We pick {pick.id} because it needs {1 - len(pick.chunks) / fewest:.0%} fewer chunks{than} "
                  f"({len(pick.chunks)} vs {vs}): cheaper to index and to serve.")
        else:
            same = [c.id for c in others if len(c.chunks) == len(pick.chunks)]
            better = all((pick.score or 0.0) > (report.get(i).score or 0.0) for i in same)  # type: ignore[union-attr]
            s += (f"We pick {pick.id}: it needs the fewest chunks ({len(pick.chunks)}, as does {_join(same)}) and, "
                  + ("of those, has the highest score." if better else "with the same score, comes first by name."))
        if tb.get("proxy_ignored"):
            s += (" The self-test retrieval check (proxy questions) does not break ties unless asked "
                  "(tie-break `retrieval` or a retrieval weight).")
    elif tb["rule"] == "retrieval":
        s += _retrieval_pick_text(tb, pick, others)
    else:
        s += f"We keep {pick.id}, the highest point score (tie-break: score)."
    return s


def _fmt_pair(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` with two decimals, or three where two would show different values as the same."""
    x, y = f"{a:.2f}", f"{b:.2f}"
    return (x, y) if x != y or a == b else (f"{a:.3f}", f"{b:.3f}")


def _retrieval_pick_text(tb: dict[str, Any], pick: ChunkingResult, others: list[ChunkingResult]) -> str:
    """Why the retrieval tie-break picked ``pick``, each comparison true for the candidate it names: "more of
    the evidence" only against candidates with a lower recall, "as much" against those with the same."""
    vals = tb["values"]
    p = vals[pick.id]
    budget = f" at {tb['budget']} tokens" if tb.get("budget") else ""
    less = [c for c in others if vals[c.id] < p]
    same = [c for c in others if vals[c.id] >= p]  # the pick has the highest recall: >= is ==
    more = ""
    if less:
        more = (f"finds more of the evidence with {pick.id} than with " + _join([c.id for c in less])
                + f" (budgeted recall{budget} " + _join([" vs ".join(_fmt_pair(p, vals[c.id])) for c in less]) + ")")
    if not same:
        return f"We pick {pick.id} because the retrieval check {more}."
    fewer = all(len(pick.chunks) < len(c.chunks) for c in same)
    why = (f"it needs fewer chunks ({len(pick.chunks)} vs " + _join([str(len(c.chunks)) for c in same]) + ")"
           if fewer else f"it needs no more chunks ({len(pick.chunks)}) and, of those, ranks highest on point score")
    equal = (f"as much with {pick.id} as with " + _join([c.id for c in same])
             + f" (budgeted recall{budget} {p:.2f})")
    if less:
        return f"We pick {pick.id}: the retrieval check {more}, and {equal}; of those, {why}."
    return f"The retrieval check finds {equal}; we pick {pick.id} because {why}."


def _join(xs: list[str]) -> str:
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def uncertainty_facts(pairs: Any) -> dict[str, Any]:
    """What a report keeps so its intervals can be recomputed from it alone (the report's
    ``uncertainty``): the method and where each coreference pair sits."""
    return {"method": METHOD, "unit": "block", "resamples": RESAMPLES, "level": LEVEL, "clear_share": CLEAR,
            "pair_positions": pair_positions(pairs)}
