"""The English of the selection: the winner's explanation, its warnings, and the numbers in them.

``selection.decide`` says what holds (the flags, the runner-up, where the winner leads and trails); this
module says it, reading the scores and reasons it quotes from the report. A sentence that is both said in
the text and warned about (a tie on score, a provisional ranking, retrieval that disagrees) is written
once here, so the text and the cautions below it can never word it differently.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

from chunkscope.report import METRICS, ChunkingResult, Report

if TYPE_CHECKING:  # selection imports this module to word its decisions
    from chunkscope.analysis.selection import Explanation


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


def fewer_metrics_warning(whose: str, missing: Sequence[str]) -> str:
    """The one wording of "this score is a mean over fewer metrics" (winner card, reports, Tune)."""
    return f"{whose} score averages fewer than five metrics (missing: {', '.join(missing)})."


def provisional_note(report: Report) -> str:
    """"provisional: ICC/DCC pending" (and the chunkings still to run); "" for a complete report."""
    if not report.provisional:
        return ""
    what = "/".join(report.pending_metrics)
    note = f"provisional: {what} pending" if what else "provisional"
    if report.pending_chunkings:
        note += f"; still to run: {', '.join(report.pending_chunkings)}"
    return note


# ------------------------------------------------------------------ the explanation


def explanation_text(report: Report, ex: Explanation) -> str:
    """The explanation's text: who won and by how much (or why no one did), then every caveat."""
    parts = _winner_sentences(report, ex) if ex.winner is not None else _no_winner_sentences(report, ex)
    if ex.has("provisional"):
        parts.insert(0, _provisional_said(report))
    return " ".join(parts)


def explanation_warnings(report: Report, ex: Explanation) -> list[str]:
    """What the winner card and the reports warn about, in the order the decision raised it."""
    if ex.winner is None:
        return _excluded_warnings(report, ex) + ([_provisional_said(report)] if ex.has("provisional") else [])
    best, runner = _chunking(report, ex.winner), report.get(ex.runner) if ex.runner else None
    out = []
    if runner is None:
        out.append("Only one candidate produced a score, so there was nothing to compare it with.")
    elif ex.has("tie"):
        out.append(_tie_said(best, runner))
    elif ex.has("narrow-win"):
        # with a resampling verdict it is consistently ahead: not a contradiction, so say both
        why = (". It is ahead on nearly every resample of this document, but by so little that a small settings "
               "change (a weight, the size bounds) can flip it") if ex.own_verdict() else \
            ", within what a small settings change can flip"
        out.append(f"Narrow win: {_margin(ex, best, runner)} ahead of {runner.id}{why}. Compare the two before deciding.")
    if ex.has("provisional"):
        out.append(_provisional_said(report))
    if ex.missing:
        out.append(fewer_metrics_warning("The winner's", ex.missing))
    if ex.has("single-chunk"):
        out.append("Degenerate win: the winner is a single chunk (the whole document). BI and RC are "
                   "trivially perfect; check that this is what you want.")
    if ex.out_of_size is not None:
        out.append(f"Most of the winner's chunks are out of the size bounds (SC {ex.out_of_size:.2f}).")
    out += _excluded_warnings(report, ex)
    if ex.rival is not None:
        out.append(_retrieval_disagrees(ex))
    return out


def _winner_sentences(report: Report, ex: Explanation) -> list[str]:
    best, runner = _chunking(report, ex.winner), report.get(ex.runner) if ex.runner else None
    v = ex.own_verdict()
    tied = ex.has("statistical-tie")
    first = v["text"] if tied else f"{best.id} wins with a score of {best.score:.3f}{_ci(best)}"
    if runner is None:
        first += " as the only candidate with a score."
    elif not tied:
        first += f", {_margin(ex, best, runner)} ahead of {runner.id} ({runner.score:.3f})."
    parts = [first]
    if tied:
        scores = ", ".join(f"{c.id} {c.score:.3f}{_ci(c)}" for c in (report.get(i) for i in [v["top"], *v["tied"]])
                           if c is not None and c.score is not None)
        parts.append(f"Scores: {scores}.")
    if runner is not None:
        parts += _against_runner(ex, best, runner, tied)
    return parts + _caveat_sentences(report, ex, best)


def _against_runner(ex: Explanation, best: ChunkingResult, runner: ChunkingResult, tied: bool) -> list[str]:
    """The verdict (when it is not a tie), a tie on score, and the metrics where the two differ."""
    parts = []
    if ex.own_verdict() and not tied:
        parts.append(ex.own_verdict()["text"])
    if ex.has("tie"):
        parts.append(_tie_said(best, runner))  # said once: in the text, so not again among the cautions below it
    if ex.leads:
        who = f"Against {runner.id}, {best.id}" if tied else "It"
        parts.append(f"{who} leads on " + ", ".join(_fmt(x) for x in ex.leads) + ".")
    if ex.trails:
        parts.append("It trails on " + ", ".join(_fmt(x) for x in ex.trails) + ".")
    if ex.one_sided:
        named = {best.id: best, runner.id: runner}
        parts.append("; ".join(f"{m} is scored for {who} ({named[who].metrics[m]:.3f}) but not for {other} "
                               f"({named[other].metric_reasons.get(m, 'not computed')})"
                               for m, who, other in ex.one_sided) + ".")
    if not ex.leads and not ex.trails and not ex.one_sided:
        parts.append("Both score the same on every metric.")
    return parts


def _caveat_sentences(report: Report, ex: Explanation, best: ChunkingResult) -> list[str]:
    """Missing metrics, a single-chunk win, excluded candidates, retrieval, a non-candidate scoring higher."""
    parts = []
    if ex.missing:
        reasons = "; ".join(f"{m}: {best.metric_reasons.get(m, 'not computed')}" for m in ex.missing)
        parts.append(f"Scored without {', '.join(ex.missing)} ({reasons}), so the mean covers fewer metrics.")
    if ex.has("single-chunk"):
        parts.append("Warning: the winner is a single chunk (the whole document); BI and RC are trivially "
                     "perfect and ICC/DCC may be undefined, so check that this is what you want.")
    if ex.excluded:
        parts.append(_excluded_said(ex))
    recall = ex.recall
    if ex.retrieval_weight > 0 and recall:
        parts.append(f"Scores include budgeted retrieval recall with weight {ex.retrieval_weight:g} (winner "
                     f"{recall.get(best.id, 0.0):.3f}"
                     + (f", {ex.runner} {recall[ex.runner]:.3f}" if ex.runner in recall else "") + ").")
    elif ex.rival is not None:
        parts.append(_retrieval_disagrees(ex))
    if ex.outscored_by is not None:
        top = _chunking(report, ex.outscored_by)
        parts.append(f"(Non-candidate {top.id} scores higher, {top.score:.3f}; add it to the candidates to let it win.)")
    return parts


def _no_winner_sentences(report: Report, ex: Explanation) -> list[str]:
    if ex.every_candidate_excluded:
        parts = ["Every scored candidate fails the coverage audit, so there is no adaptive winner."]
    else:
        why = _why_no_score(report)
        parts = ["No candidate chunking produced a score, so there is no adaptive winner" + (f" ({why})." if why else ".")]
    return parts + ([_excluded_said(ex)] if ex.excluded else [])


def _why_no_score(report: Report) -> str:
    """Why no candidate has a score.

    The candidates that did not run (and why), and the weighted metrics missing for those that did.
    """
    cands = list(report.settings.get("candidates") or [])
    weights = {m: 1.0 for m in METRICS} | dict(report.settings.get("weights") or {})
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
    return why


def _excluded_said(ex: Explanation) -> str:
    return ("Excluded from winning because they fail the coverage audit (they lose text): "
            + "; ".join(f"{cid} ({why})" for cid, why in ex.excluded) + ".")


def _excluded_warnings(report: Report, ex: Explanation) -> list[str]:
    """One warning per candidate kept from winning by the coverage audit (saying so when it scores higher)."""
    best = report.get(ex.winner) if ex.winner else None
    out = []
    for cid, why in ex.excluded:
        c = _chunking(report, cid)
        above = best is not None and best.score is not None and (c.score or 0.0) > best.score
        out.append(f"{cid} was excluded from winning: it fails the coverage audit ({why})"
                   + (f", although it scores higher ({c.score:.3f})." if above else "."))
    return out


def _provisional_said(report: Report) -> str:
    note = provisional_note(report)
    return f"{note[0].upper() + note[1:]}: the ranking uses the metrics known so far and may change."


def _tie_said(best: ChunkingResult, runner: ChunkingResult) -> str:
    return (f"Tie on score with the runner-up: decided by fewer chunks ({len(best.chunks)} vs "
            f"{len(runner.chunks)}), then id.")


def _retrieval_disagrees(ex: Explanation) -> str:
    top, best, recall = str(ex.rival), str(ex.winner), ex.recall  # both named when "retrieval-disagrees" is raised
    return (f"Retrieval disagrees: {top} finds more of the evidence (budgeted recall {recall[top]:.3f} vs "
            f"{recall[best]:.3f}). The scores leave retrieval out (weight 0); give it a weight to let it count.")


def _margin(ex: Explanation, best: ChunkingResult, runner: ChunkingResult) -> str:
    return margin_text(ex.margin or 0.0, scores=(best.score or 0.0, runner.score or 0.0))


def _chunking(report: Report, cid: str | None) -> ChunkingResult:
    c = report.get(cid) if cid is not None else None
    assert c is not None, f"the decision names a chunking the report lacks: {cid}"
    return c


def _ci(c: ChunkingResult) -> str:
    lo_hi = c.score_interval
    return f" (95% interval {lo_hi[0]:.3f}–{lo_hi[1]:.3f})" if lo_hi else ""


def _fmt(x: dict[str, Any]) -> str:
    a, b, _ = apart(x["winner"], x["runner"])
    return f"{x['metric']} {a} vs {b}"
