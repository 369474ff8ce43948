"""Stage 7, selection: scores, the adaptive winner, and the one explanation of why it won.

``explain(report)`` is the only place the winner's story is computed (runner-up, margin, the
metrics where it leads and trails, degenerate and fragile wins as flags and warnings, the verdict:
clear winner or tie and the tie-break). The CLI text, the app's winner card, the JSON report's
``flags`` and the HTML report all read it, so they can never disagree.

``rescore`` computes the winner: the best candidate by point score, unless the bootstrap
(``chunkscope.analysis.uncertainty``) cannot separate it from other candidates; then the tie-break
(fewer chunks, or the retrieval check's budgeted recall) picks among them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from chunkscope.analysis import uncertainty
from chunkscope.analysis.settings import DEFAULT_CANDIDATES
from chunkscope.metrics import score as metric_score
from chunkscope.report import METRICS, ChunkingResult, Report

NEAR = 0.01  # a margin below this is a "narrow win"
SAME = 0.0005  # metric differences below this are "the same"
RETRIEVAL_GAP = 0.05  # budgeted recall a rival candidate must gain over the winner for "retrieval disagrees"


@dataclass
class Explanation:
    winner: str | None
    runner: str | None = None
    margin: float | None = None
    leads: list[dict[str, Any]] = field(default_factory=list)  # {"metric", "winner", "runner", "delta"}
    trails: list[dict[str, Any]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the winner card and reports warn about
    text: str = ""
    verdict: dict[str, Any] | None = None  # report.verdict plus "text" (None: not computed)

    def cautions(self) -> list[str]:
        """The warnings a reader has not just read in ``text`` (shown apart, below it)."""
        return [w for w in self.warnings if w not in self.text]

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "runner": self.runner, "margin": self.margin, "leads": self.leads,
                "trails": self.trails, "flags": self.flags, "warnings": self.warnings, "text": self.text,
                "verdict": self.verdict, "cautions": self.cautions()}


def margin_text(margin: float, signed: bool = False, scores: tuple[float, float] | None = None) -> str:
    """A score margin to three decimals, or to two significant digits when three would read 0.000 for a real
    lead ("0.00023 ahead", not "0.000 ahead" next to "Narrow win"). ``scores``: the two scores, shown to three
    decimals beside it; when their shown values differ by another amount than the margin rounds to (0.886 vs
    0.879 for a margin of 0.0078), the margin takes four decimals ("0.0078"), so the figures add up."""
    sign = "+" if signed else ""
    if margin and abs(margin) < 0.0005:  # two significant digits, never in exponent form ("0.000040", not "4e-05")
        return f"{margin:{sign}.{1 - math.floor(math.log10(abs(margin)))}f}"
    if scores is not None and f"{margin:.3f}" != f"{round(scores[0], 3) - round(scores[1], 3):.3f}":
        return f"{margin:{sign}.4f}"
    return f"{margin:{sign}.3f}"


def audit_failure(c: ChunkingResult) -> str:
    """Why ``c`` may not win because it fails the coverage audit (loses text, spans out of order,
    empty or outside the text): the audit's summary; "" when it passes (or was not audited)."""
    a = c.audit or {}
    if a.get("ok", True):
        return ""
    return str(a.get("summary") or "fails the coverage audit")


def excluded(report: Report) -> list[ChunkingResult]:
    """Scored candidates that may not win: they fail the coverage audit (best score first)."""
    return [c for c in report.ranked if c.candidate and audit_failure(c)]


RETRIEVAL = "retrieval"  # the key of the retrieval recall in a score's weighted mean


def rescore(report: Report, weights: dict[str, float] | None = None,
            candidates: Sequence[str] | None = None, retrieval_weight: float | None = None) -> Report:
    """Recompute scores, candidate flags, winner and explanation in place (no re-embedding).

    With a retrieval block in the report and ``retrieval_weight`` > 0 (default: the report's
    setting, else 0), each chunking's budgeted retrieval recall joins the weighted mean of its
    metrics as one more term with that weight (DESIGN section 11)."""
    weights = {m: 1.0 for m in METRICS} | dict(weights or report.settings.get("weights") or {})
    cands = tuple(candidates if candidates is not None else report.settings.get("candidates", DEFAULT_CANDIDATES))
    rw = float(retrieval_weight if retrieval_weight is not None else report.settings.get("retrieval_weight") or 0.0)
    report.settings["weights"] = weights
    report.settings["candidates"] = list(cands)
    report.settings["retrieval_weight"] = rw
    recall = uncertainty.retrieval_recall(report) if rw > 0 else {}
    for c in report.chunkings:
        c.candidate = c.id in cands
        if not c.ok:
            c.score = None
        elif c.id in recall:
            c.score = metric_score({**c.metrics, RETRIEVAL: recall[c.id]}, {**weights, RETRIEVAL: rw})
        else:
            c.score = metric_score(c.metrics, weights)
    pool = [c for c in report.ranked if c.candidate and not audit_failure(c)]  # lost text never wins
    report.winner = pool[0].id if pool else None
    judge(report, weights, pool, {cid: (rw, v) for cid, v in recall.items()})
    ex = explain(report)
    report.explanation, report.flags = ex.text, list(ex.flags)
    return report


def judge(report: Report, weights: dict[str, float], pool: Sequence[ChunkingResult],
          fixed: dict[str, tuple[float, float]] | None = None) -> None:
    """Intervals of every chunking and the verdict among ``pool`` (candidates, best first); the
    verdict's pick becomes the winner. ``fixed``: id -> (weight, recall) when retrieval recall joins the
    score. Cheap on a report that was judged before (cached resamples)."""
    scores = uncertainty.fill_intervals(report, weights, fixed)
    if report.provisional:  # no verdict on partial scores: "clear winner" would be read as the final word
        report.verdict = None
        return
    v = uncertainty.verdict(report, pool, scores, str(report.settings.get("tie_break") or "auto"))
    if v is not None:
        v["text"] = uncertainty.verdict_text(v, report)
        report.winner = v["winner"]
    report.verdict = v


def explain(report: Report) -> Explanation:
    """Why the report's winner won (or why there is none), from the report alone."""
    weights = {m: 1.0 for m in METRICS} | dict(report.settings.get("weights") or {})
    if report.winner is None:
        return _no_winner(report, weights)
    best = report.get(report.winner)
    assert best is not None and best.score is not None
    pool = [c for c in report.ranked if c.candidate and c.id != best.id and not audit_failure(c)]
    runner = pool[0] if pool else None
    ex = Explanation(winner=best.id, verdict=report.verdict)
    rw = float(report.settings.get("retrieval_weight") or 0.0)
    recall = uncertainty.retrieval_recall(report)  # the score's, the tie-break's and the explanation's: one reading
    v: dict[str, Any] = report.verdict if report.verdict and report.verdict.get("winner") == best.id else {}
    parts = [f"{best.id} wins with a score of {best.score:.3f}{_ci(best)}"]
    tied = bool(v) and v["kind"] == "tie"
    if tied:
        ex.flags += ["statistical-tie", f"tie-break:{v['tie_break']['rule']}"]
        scores = ", ".join(f"{c.id} {c.score:.3f}{_ci(c)}" for c in (report.get(i) for i in [v["top"], *v["tied"]])
                           if c is not None and c.score is not None)
        parts = [v["text"], f"Scores: {scores}."]
    elif v:
        ex.flags.append("clear-winner")
    if runner is None:
        parts[0] += " as the only candidate with a score."
        ex.flags.append("single-candidate")
        ex.warnings.append("Only one candidate produced a score, so there was nothing to compare it with.")
    else:
        ex.runner, ex.margin = runner.id, best.score - (runner.score or 0.0)
        if not tied:
            parts[0] += (f", {margin_text(ex.margin, scores=(best.score, runner.score or 0.0))} ahead of {runner.id} "
                         f"({runner.score:.3f}).")
        if v and not tied:
            parts.append(v["text"])
        if ex.margin == 0 and not tied:
            ex.flags.append("tie")
            said = (f"Tie on score with the runner-up: decided by fewer chunks ({len(best.chunks)} vs "
                    f"{len(runner.chunks)}), then id.")
            parts.append(said)  # said once: in the text, so not again among the cautions below it
            ex.warnings.append(said)
        elif 0 < ex.margin < NEAR and not tied:
            ex.flags.append("narrow-win")
            # with a resampling verdict it is consistently ahead: not a contradiction, so say both
            why = (". It is ahead on nearly every resample of this document, but by so little that a small settings "
                   "change (a weight, the size bounds) can flip it") if v else \
                ", within what a small settings change can flip"
            ex.warnings.append(f"Narrow win: {margin_text(ex.margin, scores=(best.score, runner.score or 0.0))} "
                               f"ahead of {runner.id}{why}. "
                               "Compare the two before deciding.")
        one_sided = _compare(best, runner, weights, ex, recall if rw > 0 else {})
        if ex.leads:
            who = f"Against {runner.id}, {best.id}" if tied else "It"
            parts.append(f"{who} leads on " + ", ".join(_fmt(x) for x in ex.leads) + ".")
        if ex.trails:
            parts.append("It trails on " + ", ".join(_fmt(x) for x in ex.trails) + ".")
        if one_sided:
            parts.append("; ".join(one_sided) + ".")
        if not ex.leads and not ex.trails and not one_sided:
            parts.append("Both score the same on every metric.")
    pending = set(report.pending_metrics) if report.provisional else set()
    missing = missing_metrics(best, weights, pending)
    if report.provisional:
        _provisional(report, ex, parts)
    if missing:
        ex.flags.append("metrics-missing")
        reasons = "; ".join(f"{m}: {best.metric_reasons.get(m, 'not computed')}" for m in missing)
        parts.append(f"Scored without {', '.join(missing)} ({reasons}), so the mean covers fewer metrics.")
        ex.warnings.append(fewer_metrics_warning("The winner's", missing))
    if len(best.chunks) == 1:
        ex.flags.append("single-chunk")
        parts.append("Warning: the winner is a single chunk (the whole document); BI and RC are trivially "
                     "perfect and ICC/DCC may be undefined, so check that this is what you want.")
        ex.warnings.append("Degenerate win: the winner is a single chunk (the whole document). BI and RC are "
                           "trivially perfect; check that this is what you want.")
    sc = best.metrics.get("SC")
    if sc is not None and sc < 0.5:
        ex.warnings.append(f"Most of the winner's chunks are out of the size bounds (SC {sc:.2f}).")
    _explain_excluded(report, ex, parts)
    if rw > 0 and recall:
        parts.append(f"Scores include budgeted retrieval recall with weight {rw:g} (winner {recall.get(best.id, 0.0):.3f}"
                     + (f", {ex.runner} {recall[ex.runner]:.3f}" if ex.runner in recall else "") + ").")
    elif recall:
        _retrieval_disagrees(report, best, recall, ex, parts)
    others = [c for c in report.chunkings if c.ok and not c.candidate and c.score is not None and c.score > best.score]
    if others:
        top = max(others, key=lambda c: c.score or 0.0)
        parts.append(f"(Non-candidate {top.id} scores higher, {top.score:.3f}; add it to the candidates to let it win.)")
    ex.text = " ".join(parts)
    return ex


def missing_metrics(c: ChunkingResult, weights: dict[str, float] | None = None,
                    pending: Sequence[str] | set[str] = ()) -> list[str]:
    """The weighted metrics left out of ``c``'s score because they were not computed for it
    (``pending``: not computed *yet*, which a provisional report says on its own)."""
    w = {m: 1.0 for m in METRICS} | dict(weights or {})
    return [m for m in METRICS if c.metrics.get(m) is None and w.get(m, 0) > 0 and m not in pending]


def fewer_metrics_warning(whose: str, missing: Sequence[str]) -> str:
    """The one wording of "this score is a mean over fewer metrics" (winner card, reports, Tune)."""
    return f"{whose} score averages fewer than five metrics (missing: {', '.join(missing)})."


def _explain_excluded(report: Report, ex: Explanation, parts: list[str]) -> None:
    """Candidates kept from winning by the coverage audit: a flag, a warning each, a sentence."""
    out = excluded(report)
    if not out:
        return
    ex.flags.append("excluded-coverage")
    best = report.get(report.winner) if report.winner else None
    for c in out:
        above = best is not None and best.score is not None and (c.score or 0.0) > best.score
        ex.warnings.append(f"{c.id} was excluded from winning: it fails the coverage audit ({audit_failure(c)})"
                           + (f", although it scores higher ({c.score:.3f})." if above else "."))
    parts.append("Excluded from winning because they fail the coverage audit (they lose text): "
                 + "; ".join(f"{c.id} ({audit_failure(c)})" for c in out) + ".")


def provisional_note(report: Report) -> str:
    """"provisional: ICC/DCC pending" (and the chunkings still to run); "" for a complete report."""
    if not report.provisional:
        return ""
    what = "/".join(report.pending_metrics)
    note = f"provisional: {what} pending" if what else "provisional"
    if report.pending_chunkings:
        note += f"; still to run: {', '.join(report.pending_chunkings)}"
    return note


def _provisional(report: Report, ex: Explanation, parts: list[str]) -> None:
    ex.flags.append("provisional")
    note = provisional_note(report)
    said = f"{note[0].upper() + note[1:]}: the ranking uses the metrics known so far and may change."
    parts.insert(0, said)  # said once: in the text, so not again among the cautions shown below it
    ex.warnings.append(said)


def _retrieval_disagrees(report: Report, best: ChunkingResult, recall: dict[str, float], ex: Explanation,
                         parts: list[str]) -> None:
    """With a retrieval check that is not in the score (weight 0): say so when another candidate finds clearly
    more of the evidence than the winner (``RETRIEVAL_GAP`` budgeted recall or more)."""
    if best.id not in recall:
        return
    rivals = [c for c in report.ranked if c.candidate and c.id != best.id and c.id in recall and not audit_failure(c)]
    if not rivals:
        return
    top = max(rivals, key=lambda c: recall[c.id])
    gap = recall[top.id] - recall[best.id]
    if gap < RETRIEVAL_GAP:
        return
    ex.flags.append("retrieval-disagrees")
    msg = (f"Retrieval disagrees: {top.id} finds more of the evidence (budgeted recall {recall[top.id]:.3f} vs "
           f"{recall[best.id]:.3f}). The scores leave retrieval out (weight 0); give it a weight to let it count.")
    ex.warnings.append(msg)
    parts.append(msg)


def _compare(best: ChunkingResult, runner: ChunkingResult, weights: dict[str, float], ex: Explanation,
             recall: dict[str, float] | None = None) -> list[str]:
    """Fill leads/trails (weighted metrics that differ, and the retrieval recall when it is in the score:
    ``recall``); return the metrics scored for one side only."""
    one_sided: list[str] = []
    if recall and best.id in recall and runner.id in recall and abs(recall[best.id] - recall[runner.id]) > SAME:
        ra, rb = recall[best.id], recall[runner.id]
        (ex.leads if ra > rb else ex.trails).append({"metric": "retrieval recall", "winner": ra, "runner": rb,
                                                     "delta": ra - rb})
    for m in METRICS:
        a, b = best.metrics.get(m), runner.metrics.get(m)
        if weights.get(m, 0) <= 0 or (a is None and b is None):
            continue
        if a is None or b is None:
            who, other = (runner, best) if a is None else (best, runner)
            one_sided.append(f"{m} is scored for {who.id} ({who.metrics[m]:.3f}) but not for {other.id} "
                             f"({other.metric_reasons.get(m, 'not computed')})")
            continue
        if abs(a - b) > SAME:
            (ex.leads if a > b else ex.trails).append({"metric": m, "winner": a, "runner": b, "delta": a - b})
    ex.leads.sort(key=lambda x: -x["delta"])
    ex.trails.sort(key=lambda x: x["delta"])
    return one_sided


def _ci(c: ChunkingResult) -> str:
    lo_hi = c.score_interval
    return f" (95% interval {lo_hi[0]:.3f}–{lo_hi[1]:.3f})" if lo_hi else ""


def apart(a: float, b: float) -> tuple[str, str, str]:
    """``a``, ``b`` and ``a - b`` with the fewest decimals (3 to 5) that show them apart: a lead of 0.0006 reads
    "0.9962 vs 0.9956", not "0.996 vs 0.996". The difference takes one decimal more when the shown values differ
    by another amount than it rounds to ("0.590 vs 0.593 (-0.0025)", not "(-0.002)"), as ``margin_text`` does."""
    d = 3
    while d < 5 and f"{a:.{d}f}" == f"{b:.{d}f}":
        d += 1
    diff = f"{a - b:+.{d}f}"
    if abs(float(diff) - (round(a, d) - round(b, d))) > 0.5 * 10 ** -d:
        diff = f"{a - b:+.{d + 1}f}"
    return f"{a:.{d}f}", f"{b:.{d}f}", diff


def _fmt(x: dict[str, Any]) -> str:
    a, b, _ = apart(x["winner"], x["runner"])
    return f"{x['metric']} {a} vs {b}"


def _no_winner(report: Report, weights: dict[str, float]) -> Explanation:
    cands = list(report.settings.get("candidates") or [])
    ran = {c.id: c for c in report.chunkings}
    missing = [c for c in cands if c not in ran or not ran[c].ok]
    why = "; ".join(f"{cid}: {ran[cid].reason if cid in ran else 'not run'}" for cid in missing)
    scoreless = [c for c in report.chunkings if c.id in cands and c.ok]
    if scoreless:  # they ran, but every metric with a positive weight is missing for them
        used = [m for m in METRICS if weights.get(m, 0) > 0]
        c0 = scoreless[0]
        reasons = ", ".join(f"{m}: {c0.metric_reasons.get(m) or 'not computed'}" for m in used)
        why = "; ".join(filter(None, [why, f"no metric with a positive weight ({', '.join(used)}) is "
                                           f"available for the candidates ({reasons})"]))
    ex = Explanation(winner=None, flags=["no-winner"])
    out = excluded(report)
    if out and len(out) == len([c for c in report.ranked if c.candidate]):
        parts = ["Every scored candidate fails the coverage audit, so there is no adaptive winner."]
    else:
        parts = ["No candidate chunking produced a score, so there is no adaptive winner" + (f" ({why})." if why else ".")]
    _explain_excluded(report, ex, parts)
    if report.provisional:
        _provisional(report, ex, parts)
    ex.text = " ".join(parts)
    return ex


def winner_summary(report: Report) -> dict[str, Any]:
    """What the winner card shows: ``explain(report)`` as a dict."""
    return explain(report).to_dict()
