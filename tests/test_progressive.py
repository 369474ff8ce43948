"""Progressive analysis: snapshots after each stage, provisional marks, final report unchanged."""

from __future__ import annotations

import json
import time

import pytest
from test_analysis import DOC_MD

from chunkscope.analysis import Resources, Settings, analyze
from chunkscope.analysis.run import AnalysisCancelled
from chunkscope.ingest import load_bytes
from chunkscope.report import Report

CHUNKERS = ("recursive-1100", "recursive-600+pp", "fixed-512", "sentence-5", "semantic")
CANDS = ("recursive-1100", "recursive-600+pp", "fixed-512", "semantic")


@pytest.fixture(scope="module")
def doc():
    return load_bytes(DOC_MD.encode(), "policy.md")


def _values(report: Report) -> str:
    """The report's JSON without what a clock or a cache decides (times, cache statistics)."""
    d = report.to_dict()
    d.pop("timings")
    d["embedder"].pop("stats", None)
    for c in d["chunkings"]:
        c.pop("seconds")
    return json.dumps(d, ensure_ascii=False)


@pytest.fixture(scope="module")
def runs(doc):
    s = Settings(chunkers=CHUNKERS, candidates=CANDS, coref="heuristic")
    snaps: list[tuple[str, Report]] = []
    progressive = analyze(doc, s, resources=Resources(), on_partial=lambda r, st: snaps.append((st, r)))
    plain = analyze(doc, s, resources=Resources())
    return snaps, progressive, plain


def test_final_report_is_identical_to_a_plain_run(runs):
    _, progressive, plain = runs
    assert not progressive.provisional and "provisional" not in progressive.to_dict()
    assert _values(progressive) == _values(plain)


def test_a_snapshot_after_each_stage_with_what_is_pending(runs):
    snaps, final, _ = runs
    # structure twice: first the chunkings that need nothing but the text, then those that need the
    # sentence segmenter (sentence-5); the embeddings end the run (no LLM chunking)
    assert [st for st, _ in snaps] == ["structure", "structure", "coreference"]
    first = snaps[0][1]
    assert first.provisional and first.pending == ["RC", "ICC", "DCC", "sentence-5", "semantic"]
    assert first.get("semantic") is None  # needs the embedder: not run yet
    assert first.get("sentence-5") is None  # needs the sentence segmenter: after the first snapshot
    assert snaps[1][1].pending == ["RC", "ICC", "DCC", "semantic"]
    assert snaps[1][1].get("sentence-5").metrics["SC"] == final.get("sentence-5").metrics["SC"]
    r = first.get("recursive-1100")
    assert r.metrics["SC"] is not None and r.metrics["BI"] is not None
    assert r.metrics["ICC"] is None and r.metric_reasons["ICC"] == "pending: embeddings"
    assert r.metric_reasons["RC"] == "pending: coreference"
    assert "provisional" in first.flags and first.explanation.startswith("Provisional: RC/ICC/DCC pending")
    # said once in the explanation, with why it matters, and not again as a caution below it (the card's header
    # names it too: a new user read it three times in one card)
    from chunkscope.analysis.selection import explain

    ex = explain(first)
    assert first.explanation.split(". ")[0].endswith("the ranking uses the metrics known so far and may change")
    assert not any("pending" in w for w in ex.cautions()) and any("pending" in w for w in ex.warnings)
    assert "metrics-missing" not in first.flags
    # no verdict (clear winner / tie) on partial scores; the final report has one
    assert first.verdict is None and "clear-winner" not in first.flags and "statistical-tie" not in first.flags
    assert final.verdict is not None
    d = first.to_dict()
    assert d["provisional"] is True and d["pending"] == first.pending
    second = snaps[2][1]
    assert second.pending == ["ICC", "DCC", "semantic"]
    assert second.get("recursive-1100").metrics["RC"] == final.get("recursive-1100").metrics["RC"]
    # snapshots are copies: the run went on without changing them
    assert first.get("recursive-1100").metrics["RC"] is None
    for c in first.chunkings:
        if c.ok:
            assert c.metrics["SC"] == final.get(c.id).metrics["SC"]
            assert c.metrics["BI"] == final.get(c.id).metrics["BI"]


def test_a_snapshot_re_ranks_with_other_weights(runs):
    from chunkscope.analysis import rescore

    snap = runs[0][0][1]
    rescore(snap, {"SC": 0.0, "BI": 1.0}, CANDS)
    assert snap.provisional and snap.winner is not None
    assert all(c.score == c.metrics["BI"] for c in snap.chunkings if c.ok)


def test_cancel_keeps_the_last_snapshot(doc):
    s = Settings(chunkers=CHUNKERS, candidates=CANDS, coref="heuristic")
    seen: list[str] = []
    with pytest.raises(AnalysisCancelled) as exc:
        analyze(doc, s, resources=Resources(), on_partial=lambda r, st: seen.append(st), cancel=lambda: "coreference" in seen)
    assert exc.value.partial is not None and exc.value.partial.provisional
    assert exc.value.partial.pending[:2] == ["ICC", "DCC"]


def test_llm_chunkings_without_an_endpoint_are_skipped_at_once_not_pending(doc, monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    s = Settings(chunkers=("recursive-1100", "llm-regex"), candidates=("recursive-1100", "llm-regex"), coref="none")
    snaps: list[Report] = []
    final = analyze(doc, s, resources=Resources(), on_partial=lambda r, st: snaps.append(r))
    first = snaps[0]
    assert "llm-regex" not in first.pending
    skipped = first.get("llm-regex")
    assert skipped is not None and skipped.status == "skipped" and "no LLM endpoint" in skipped.reason
    assert final.get("llm-regex").status == "skipped" and final.get("llm-regex").reason == skipped.reason


GERMAN = ("# Aufbewahrung\n\n" + "\n\n".join(
    f"## Teil {i}\n\nDer Verantwortliche bewahrt den Vertrag zehn Jahre lang auf. Danach löscht er ihn, und die "
    "Firma prüft ihn jedes Jahr. Sie schreibt darüber einen Bericht für den Vorstand." for i in range(8)))


@pytest.mark.parametrize("coref", ["heuristic", "none"])
def test_rc_that_will_not_be_computed_is_never_pending(coref):
    """A non-English document (coreference is English only) or coreference off: RC never comes, so the
    first snapshot says "ICC/DCC pending", not "RC/ICC/DCC pending"; RC's reason is the final one."""
    doc = load_bytes(GERMAN.encode(), "aufbewahrung.md")
    assert doc.language == "de"
    s = Settings(chunkers=("recursive-1100", "fixed-512"), candidates=("recursive-1100", "fixed-512"), coref=coref)
    snaps: list[Report] = []
    final = analyze(doc, s, resources=Resources(), on_partial=lambda r, st: snaps.append(r))
    first = snaps[0]
    assert first.provisional and first.pending_metrics == ["ICC", "DCC"]
    assert first.explanation.startswith("Provisional: ICC/DCC pending")
    r = first.get("recursive-1100")
    assert r.metrics["RC"] is None and r.metric_reasons["RC"] == final.get("recursive-1100").metric_reasons["RC"]
    assert ("non-English" if coref == "heuristic" else "disabled") in r.metric_reasons["RC"]
    assert _values(final) == _values(analyze(doc, s, resources=Resources()))


def test_a_hold_keeps_the_unit_pass_until_released(doc):
    """``analyze(hold=...)``: the unit embedding pass starts only when the hold returns (the browser test holds
    it to look at the provisional view); the run waits for it and ends as without a hold."""
    import threading

    s = Settings(chunkers=("recursive-1100", "whole"), candidates=("recursive-1100", "whole"), coref="none")
    seen: list[str] = []
    released = threading.Event()
    held: list[list[str]] = []

    def on_partial(report: Report, stage: str) -> None:
        seen.append(stage)
        if stage == "coreference":
            released.set()

    def hold(stop) -> None:
        assert released.wait(60) and not stop()
        held.append(list(seen))

    final = analyze(doc, s, resources=Resources(), on_partial=on_partial, hold=hold)
    assert held == [["structure", "coreference"]]  # the pass waited for the snapshots before it
    assert _values(final) == _values(analyze(doc, s, resources=Resources()))


def test_a_hold_ends_when_the_run_is_cancelled(doc):
    s = Settings(chunkers=("recursive-1100", "whole"), candidates=("recursive-1100", "whole"), coref="none")
    seen: list[str] = []

    def hold(stop) -> None:  # never released: only the cancelled run ends it
        while not stop():
            time.sleep(0.01)

    with pytest.raises(AnalysisCancelled) as exc:
        analyze(doc, s, resources=Resources(), on_partial=lambda r, st: seen.append(st), hold=hold,
                cancel=lambda: "coreference" in seen)
    assert exc.value.stage == "embeddings" and exc.value.partial is not None
