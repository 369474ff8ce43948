"""A chunking that loses text (fails the coverage audit) cannot win, however well it scores: the
leaderboard flags it and the winner card says why it was excluded."""

from __future__ import annotations

from chunkscope.analysis.selection import rescore, winner_summary
from chunkscope.chunkers.audit import audit
from chunkscope.document import Document, Span
from chunkscope.present.html_report import leaderboard_rows
from chunkscope.report import METRICS, ChunkingResult, ChunkRow, Report

DOC = Document(name="d", text="First paragraph here.\n\nSecond paragraph here.\n\nThird one, the last.\n",
               source_format="text")


def _chunking(cid: str, spans: list[Span], sc: float) -> ChunkingResult:
    return ChunkingResult(id=cid, label=cid, params={}, candidate=True, status="ok",
                          chunks=[ChunkRow(s.start, s.end, 5) for s in spans],
                          metrics={m: (sc if m == "SC" else None) for m in METRICS},
                          audit=audit(DOC, spans).to_dict())


def _report() -> Report:
    full = [Span(0, 23), Span(23, 47), Span(47, len(DOC.text))]
    lossy = [Span(0, 23), Span(47, len(DOC.text))]  # drops the second paragraph
    return Report(document={"name": "d", "sha256": DOC.sha256}, settings={"candidates": ["lossy", "full"]},
                  chunkings=[_chunking("lossy", lossy, 1.0), _chunking("full", full, 0.6)],
                  winner=None, explanation="", timings={})


def test_lost_text_chunking_is_not_selected_and_the_card_says_why():
    r = rescore(_report())
    assert r.get("lossy").score > r.get("full").score  # it would have won on score
    assert r.winner == "full"
    assert "excluded-coverage" in r.flags
    assert "lossy" in r.explanation and "coverage audit" in r.explanation
    ws = winner_summary(r)
    assert ws["runner"] is None  # an excluded chunking is no runner-up either
    assert any(w.startswith("lossy was excluded from winning") and "characters missing" in w
               and "scores higher" in w for w in ws["warnings"])
    rows = {row["chunking"]: row for row in leaderboard_rows(r)}
    assert rows["lossy"]["note"].startswith("excluded from winning: fails the coverage audit")
    assert rows["full"]["note"] == ""


def test_only_lost_text_candidates_means_no_winner():
    r = _report()
    r.settings["candidates"] = ["lossy"]
    rescore(r, candidates=["lossy"])
    assert r.winner is None
    assert "fails the coverage audit" in r.explanation
