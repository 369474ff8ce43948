"""Chroma's token-level retrieval metrics on character ranges (DESIGN section 11).

Definitions, exactly as the study's code (``chunking_evaluation``, MIT) computes them:

* covered = the union of (evidence range ∩ retrieved chunk) over every pair;
* recall = covered / evidence characters;
* precision = covered / the summed lengths of the retrieved chunks (overlapping chunks count
  twice: the denominator is a sum, not a union);
* IoU = covered / (summed retrieved lengths + evidence characters left uncovered);
* precision Ω (the study's "ideal" precision) = covered / the union of *every* chunk that holds
  evidence, whatever the retriever ranks: the best precision a chunking allows at full recall.

Ranges are half-open ``(start, end)`` character offsets. A question's excerpts are merged
into a union first (they never overlap in Chroma's data, where that changes nothing).

Budgeted retrieval takes chunks in rank order until ``budget`` o200k tokens are used; the chunk
that crosses the budget contributes only its leading tokens up to it (a context window cut).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

Range = tuple[int, int]


def union(ranges: Sequence[Range]) -> list[Range]:
    """Sorted, merged ranges (touching ranges merge; empty ranges drop)."""
    out: list[list[int]] = []
    for s, e in sorted((int(a), int(b)) for a, b in ranges if b > a):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def total(ranges: Sequence[Range]) -> int:
    """The summed length of ``ranges``."""
    return sum(e - s for s, e in ranges)


def subtract(ranges: Sequence[Range], cut: Sequence[Range]) -> list[Range]:
    """``ranges`` minus ``cut`` (both unions)."""
    out: list[Range] = []
    cut = union(cut)
    for s, e in union(ranges):
        pos = s
        for a, b in cut:
            if b <= pos or a >= e:
                continue
            if a > pos:
                out.append((pos, a))
            pos = max(pos, b)
            if pos >= e:
                break
        if pos < e:
            out.append((pos, e))
    return out


def covered(retrieved: Sequence[Range], evidence: Sequence[Range]) -> list[Range]:
    """Union of every (retrieved chunk ∩ evidence range)."""
    hits = []
    for cs, ce in retrieved:
        for es, ee in evidence:
            s, e = max(cs, es), min(ce, ee)
            if e > s:
                hits.append((s, e))
    return union(hits)


@dataclass
class Scores:
    """Recall, precision and IoU of one retrieval, with what it covered and missed."""

    recall: float
    precision: float
    iou: float
    covered: int = 0
    missed: list[Range] = field(default_factory=list)

    def as_dict(self) -> dict[str, float]:
        """The three scores as a dict."""
        return {"recall": self.recall, "precision": self.precision, "iou": self.iou}


def score(retrieved: Sequence[Range], evidence: Sequence[Range]) -> Scores:
    """Recall, precision and IoU of retrieved chunks against a question's evidence."""
    ev = union(evidence)
    n_ev = total(ev)
    if n_ev == 0:
        raise ValueError("a question needs evidence (at least one non-empty range)")
    cov = covered(retrieved, ev)
    num = total(cov)
    summed = sum(max(0, e - s) for s, e in retrieved)  # overlapping chunks count twice
    missed = subtract(ev, cov)
    recall = num / n_ev
    precision = num / summed if summed else 0.0
    denom = summed + total(missed)
    return Scores(recall, precision, num / denom if denom else 0.0, num, missed)


def evidence_chunks(spans: Sequence[Range], evidence: Sequence[Range], bounds: Any = None) -> list[int]:
    """Indices of the chunks that hold any evidence character (``bounds``: the spans' starts and
    ends as numpy arrays, to reuse across questions)."""
    import numpy as np

    starts, ends = bounds if bounds is not None else span_bounds(spans)
    mask = np.zeros(len(starts), dtype=bool)
    for a, b in union(evidence):
        mask |= (starts < b) & (ends > a)
    return [int(i) for i in np.flatnonzero(mask)]


def span_bounds(spans: Sequence[Range]) -> Any:
    """The spans' starts and ends as two numpy arrays."""
    import numpy as np

    arr = np.asarray(list(spans), dtype=np.int64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1]


def precision_omega_ideal(spans: Sequence[Range], evidence: Sequence[Range], holders: Sequence[int] | None = None
                          ) -> float:
    """The study's precision Ω: covered / union of every chunk holding evidence (0 when none)."""
    idx = evidence_chunks(spans, evidence) if holders is None else holders
    if not idx:
        return 0.0
    chunks = union([spans[i] for i in idx])
    return total(covered(chunks, evidence)) / total(chunks)


def take_budget(order: Sequence[int], spans: Sequence[Range], tokens: Sequence[int], budget: int,
                lead_chars: Callable[[int, int], int]) -> list[tuple[int, int, int]]:
    """Chunks in rank order until ``budget`` tokens: ``(index, start, end)``; the crossing chunk
    is cut to its leading ``budget - used`` tokens (``lead_chars(i, m)`` = characters of the
    first m tokens of chunk i)."""
    out: list[tuple[int, int, int]] = []
    used = 0
    for i in order:
        if used >= budget:
            break
        s, e = spans[i]
        t = int(tokens[i])
        if used + t <= budget:
            out.append((i, s, e))
            used += t
            continue
        rest = budget - used
        cut = s + max(0, min(e - s, lead_chars(i, rest)))
        if cut > s:
            out.append((i, s, cut))
        break
    return out


def mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and population standard deviation of ``values`` (None, None when empty)."""
    if not values:
        return None, None
    m = sum(values) / len(values)
    var = sum((v - m) ** 2 for v in values) / len(values)
    return m, var ** 0.5


def walk(order: Sequence[int], spans: Sequence[Range], tokens: Sequence[int], evidence: Sequence[Range],
         ks: Sequence[int], budgets: Sequence[int], lead: Callable[[int, int], int]
         ) -> tuple[dict[int, tuple[float, float, float]], dict[int, tuple[float, float, float]]]:
    """Recall, precision and IoU at every k of ``ks`` and every token budget of ``budgets`` in ONE
    pass down the ranking (same definitions as ``score`` and ``take_budget``): the covered
    evidence grows chunk by chunk; a budget's crossing chunk adds only its leading tokens."""
    ev = union(evidence)
    n_ev = total(ev)
    if n_ev == 0:
        raise ValueError("a question needs evidence (at least one non-empty range)")
    kset, bset = sorted(set(ks)), sorted(set(budgets))
    at_k: dict[int, tuple[float, float, float]] = {}
    at_b: dict[int, tuple[float, float, float]] = {}
    cov: list[Range] = []
    cov_len = summed = used = 0
    ki = bi = 0

    def triple(c: int, sm: int) -> tuple[float, float, float]:
        denom = sm + n_ev - c
        return c / n_ev, (c / sm if sm else 0.0), (c / denom if denom else 0.0)

    for rank, i in enumerate(order):
        if ki >= len(kset) and bi >= len(bset):
            break
        s, e = spans[i]
        t = int(tokens[i])
        while bi < len(bset) and used + t > bset[bi]:  # this chunk crosses budget bset[bi]
            cut = s + max(0, min(e - s, lead(i, bset[bi] - used))) if bset[bi] > used else s
            part = [(max(s, a), min(cut, b)) for a, b in ev if min(cut, b) > max(s, a)]
            c = total(union(cov + part)) if part else cov_len
            at_b[bset[bi]] = triple(c, summed + (cut - s))
            bi += 1
        part = [(max(s, a), min(e, b)) for a, b in ev if min(e, b) > max(s, a)]
        if part:
            cov = union(cov + part)
            cov_len = total(cov)
        summed += e - s
        used += t
        while ki < len(kset) and kset[ki] <= rank + 1:
            at_k[kset[ki]] = triple(cov_len, summed)
            ki += 1
    for k in kset[ki:]:  # k beyond the number of chunks: every chunk
        at_k[k] = triple(cov_len, summed)
    for b in bset[bi:]:  # budget never reached: every chunk
        at_b[b] = triple(cov_len, summed)
    return at_k, at_b
