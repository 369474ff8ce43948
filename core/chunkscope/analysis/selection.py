"""Stage 7, selection: scores, the adaptive winner, and the one decision of why it won.

``decide(report)`` is the only place the winner's story is decided (runner-up, margin, the metrics
where it leads and trails, degenerate and fragile wins as flags, the verdict: clear winner or tie and
the tie-break); ``chunkscope.analysis.wording`` says it in English, and ``explain`` does both. The CLI
text, the app's winner card, the JSON report's ``flags`` and the HTML report all read it, so they can
never disagree.

``rescore`` computes the winner: the best candidate by point score, unless the bootstrap
(``chunkscope.analysis.uncertainty``) cannot separate it from other candidates; then the tie-break
(fewer chunks, or the retrieval check's budgeted recall) picks among them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from chunkscope.analysis import uncertainty, wording
from chunkscope.analysis.settings import DEFAULT_CANDIDATES
from chunkscope.metrics import score as metric_score
from chunkscope.report import METRICS, ChunkingResult, Report

NEAR = 0.01  # a margin below this is a "narrow win"
SAME = 0.0005  # metric differences below this are "the same"
RETRIEVAL_GAP = 0.05  # budgeted recall a rival candidate must gain over the winner for "retrieval disagrees"


@dataclass
class Explanation:
    """Why the report's winner won.

    The decision (``decide``: flags, runner-up, leads and trails, the facts behind the flags) and, once worded
    (``explain``), its ``text`` and ``warnings``.
    """

    winner: str | None
    runner: str | None = None
    margin: float | None = None
    leads: list[dict[str, Any]] = field(default_factory=list)  # {"metric", "winner", "runner", "delta"}
    trails: list[dict[str, Any]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the winner card and reports warn about
    text: str = ""
    verdict: dict[str, Any] | None = None  # report.verdict plus "text" (None: not computed)
    # the facts the flags stand for, as the wording needs them (not part of ``to_dict``)
    one_sided: list[tuple[str, str, str]] = field(default_factory=list)  # (metric, scored for, not scored for)
    missing: list[str] = field(default_factory=list)  # weighted metrics left out of the winner's score
    excluded: list[tuple[str, str]] = field(default_factory=list)  # (id, audit failure), best score first
    every_candidate_excluded: bool = False  # no winner because every scored candidate fails the audit
    out_of_size: float | None = None  # the winner's SC, when most of its chunks are out of the size bounds
    recall: dict[str, float] = field(default_factory=dict)  # budgeted retrieval recall per id
    retrieval_weight: float = 0.0
    rival: str | None = None  # the candidate that finds clearly more evidence ("retrieval-disagrees")
    outscored_by: str | None = None  # the best non-candidate that scores above the winner

    def has(self, flag: str) -> bool:
        """Whether ``flag`` was raised."""
        return flag in self.flags

    def own_verdict(self) -> dict[str, Any]:
        """The verdict when it is about this winner ({} when there is none, or it is about another)."""
        v = self.verdict
        return v if v and v.get("winner") == self.winner and self.winner is not None else {}

    def cautions(self) -> list[str]:
        """The warnings a reader has not just read in ``text`` (shown apart, below it)."""
        return [w for w in self.warnings if w not in self.text]

    def to_dict(self) -> dict[str, Any]:
        """What the winner card reads."""
        return {"winner": self.winner, "runner": self.runner, "margin": self.margin, "leads": self.leads,
                "trails": self.trails, "flags": self.flags, "warnings": self.warnings, "text": self.text,
                "verdict": self.verdict, "cautions": self.cautions()}


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
    """Why the report's winner won (or why there is none), from the report alone: ``decide``, worded."""
    ex = decide(report)
    ex.text, ex.warnings = wording.explanation_text(report, ex), wording.explanation_warnings(report, ex)
    return ex


def decide(report: Report) -> Explanation:
    """The decision behind the report's winner, as data (no text, no warnings: ``explain`` adds them)."""
    ex = Explanation(winner=report.winner, excluded=[(c.id, audit_failure(c)) for c in excluded(report)])
    if report.winner is None:
        ex.flags.append("no-winner")
        ex.every_candidate_excluded = bool(ex.excluded) and len(ex.excluded) == len(
            [c for c in report.ranked if c.candidate])
        if ex.excluded:
            ex.flags.append("excluded-coverage")
        if report.provisional:
            ex.flags.append("provisional")
        return ex
    best = report.get(report.winner)
    assert best is not None and best.score is not None
    weights = {m: 1.0 for m in METRICS} | dict(report.settings.get("weights") or {})
    ex.verdict = report.verdict
    ex.retrieval_weight = float(report.settings.get("retrieval_weight") or 0.0)
    ex.recall = uncertainty.retrieval_recall(report)  # the score's, the tie-break's and the explanation's: one reading
    _decide_against_runner(report, best, weights, ex)
    ex.missing = missing_metrics(best, weights, set(report.pending_metrics) if report.provisional else set())
    for flag, raised in (("provisional", report.provisional), ("metrics-missing", bool(ex.missing)),
                         ("single-chunk", len(best.chunks) == 1), ("excluded-coverage", bool(ex.excluded))):
        if raised:
            ex.flags.append(flag)
    sc = best.metrics.get("SC")
    ex.out_of_size = sc if sc is not None and sc < 0.5 else None
    if ex.retrieval_weight <= 0 and ex.recall:
        ex.rival = _retrieval_rival(report, best, ex.recall)
        if ex.rival is not None:
            ex.flags.append("retrieval-disagrees")
    others = [c for c in report.chunkings if c.ok and not c.candidate and c.score is not None and c.score > best.score]
    ex.outscored_by = max(others, key=lambda c: c.score or 0.0).id if others else None
    return ex


def _decide_against_runner(report: Report, best: ChunkingResult, weights: dict[str, float], ex: Explanation) -> None:
    """The verdict's flags, the runner-up and the margin, tie or narrow win, leads and trails."""
    v = ex.own_verdict()
    tied = bool(v) and v["kind"] == "tie"
    if tied:
        ex.flags += ["statistical-tie", f"tie-break:{v['tie_break']['rule']}"]
    elif v:
        ex.flags.append("clear-winner")
    pool = [c for c in report.ranked if c.candidate and c.id != best.id and not audit_failure(c)]
    if not pool:
        ex.flags.append("single-candidate")
        return
    runner = pool[0]
    ex.runner, ex.margin = runner.id, (best.score or 0.0) - (runner.score or 0.0)
    if ex.margin == 0 and not tied:
        ex.flags.append("tie")
    elif 0 < ex.margin < NEAR and not tied:
        ex.flags.append("narrow-win")
    _compare(best, runner, weights, ex, ex.recall if ex.retrieval_weight > 0 else {})


def missing_metrics(c: ChunkingResult, weights: dict[str, float] | None = None,
                    pending: Sequence[str] | set[str] = ()) -> list[str]:
    """The weighted metrics left out of ``c``'s score because they were not computed for it
    (``pending``: not computed *yet*, which a provisional report says on its own)."""
    w = {m: 1.0 for m in METRICS} | dict(weights or {})
    return [m for m in METRICS if c.metrics.get(m) is None and w.get(m, 0) > 0 and m not in pending]


def _retrieval_rival(report: Report, best: ChunkingResult, recall: dict[str, float]) -> str | None:
    """The candidate that finds clearly more of the evidence than the winner; None when none does.

    Clearly: ``RETRIEVAL_GAP`` budgeted recall or more. Asked when the retrieval check is not in the score.
    """
    if best.id not in recall:
        return None
    rivals = [c for c in report.ranked if c.candidate and c.id != best.id and c.id in recall and not audit_failure(c)]
    if not rivals:
        return None
    top = max(rivals, key=lambda c: recall[c.id])
    return top.id if recall[top.id] - recall[best.id] >= RETRIEVAL_GAP else None


def _compare(best: ChunkingResult, runner: ChunkingResult, weights: dict[str, float], ex: Explanation,
             recall: dict[str, float] | None = None) -> None:
    """Fill leads, trails and the metrics scored for one side only.

    Leads and trails: the weighted metrics that differ, and the retrieval recall when it is in the score
    (``recall``).
    """
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
            ex.one_sided.append((m, who.id, other.id))
            continue
        if abs(a - b) > SAME:
            (ex.leads if a > b else ex.trails).append({"metric": m, "winner": a, "runner": b, "delta": a - b})
    ex.leads.sort(key=lambda x: -x["delta"])
    ex.trails.sort(key=lambda x: x["delta"])


def winner_summary(report: Report) -> dict[str, Any]:
    """What the winner card shows: ``explain(report)`` as a dict."""
    return explain(report).to_dict()
