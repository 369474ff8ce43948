"""The document language in the app (AppTest): shown with how sure detection is, set by hand,
and the analysis re-run with it (RC depends on it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
APP = str(ROOT / "app.py")
CHUNKERS = ["fixed-512", "sentence-5"]
ENGLISH = ("# Retention\n\n" + "\n\n".join(
    f"## Part {i}\n\nThe controller keeps the contract for ten years. After that it deletes it, and the company "
    "checks it every year. She writes a report about it for the board." for i in range(8))).encode()


def _ok(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def _lang_box(at: AppTest):
    return next(s for s in at.selectbox if s.label == "Document language")


def _captions(at: AppTest) -> list[str]:
    return [c.value.replace("\\", "") for c in at.caption]  # Markdown escapes off


def _report(at: AppTest):
    reps = list(at.session_state["cs_reports"].values())
    return reps[-1]


def test_language_shown_overridden_and_analysis_rerun():
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.sidebar.file_uploader(key="cs_upload").upload("retention.md", ENGLISH, "text/markdown").run()
    _ok(at)
    box = _lang_box(at)
    assert box.value == "auto" and box.format_func("auto").startswith("detected: English (en), ")
    assert "% sure" in box.format_func("auto")
    assert any("RC) is computed" in c for c in _captions(at))
    assert next(m.value for m in at.metric if m.label == "Language") == "en"

    at.sidebar.multiselect(key="cs_chunkers").set_value(CHUNKERS)
    at.sidebar.multiselect(key="cs_candidates").set_value(CHUNKERS)
    at.sidebar.selectbox(key="cs_coref").set_value("heuristic")
    at.run()
    at.button(key="cs_analyze").click().run()
    _ok(at)
    first = _report(at)
    assert first.document["language"] == "en"
    assert all(c.metrics.get("RC") is not None for c in first.ranked)
    assert not [w.value for w in at.warning if "weak signal" in w.value]

    # set it by hand to German: the document (on every page) says so, the analysis re-runs, RC is off
    _lang_box(at).set_value("de").run()
    _ok(at)
    doc = at.session_state["document"]
    assert doc.language == "de" and doc.meta["language_detected"] == "en"
    assert next(m.value for m in at.metric if m.label == "Language") == "de"
    assert any("re-running the analysis" in i.value for i in at.info)
    assert any("Set by hand" in c and "English" in c and "not computed" in c for c in _captions(at))
    second = _report(at)
    assert second is not first and second.document["language"] == "de"
    assert all(c.metrics.get("RC") is None for c in second.ranked)
    assert "non-English" in str(second.coref)
    # the bundled embedding model reads English: the Overview says what that means for ICC and DCC
    weak = [w.value.replace("\\", "") for w in at.warning if "weak signal" in w.value]
    assert len(weak) == 1 and "trained on English text and this document is German (de)" in weak[0], weak
    assert weak[0] in second.warnings
    # no pair was looked for: the problem counts say so rather than "0 split pairs" (checked, none found)
    board = at.dataframe[0].value
    assert board["split pairs"].isna().all() and (board["broken blocks"] >= 0).all()
    # RC is not known: the radar's title stays short (a long one was cut off under the toolbar), a
    # caption under it says what the dashes mean
    radar = next(c for c in at.get("plotly_chart") if "cs_radar" in c.proto.id)
    assert json.loads(radar.proto.spec)["layout"]["title"]["text"] == "Metrics per chunking"
    assert any(c.startswith("Shaded: each metric's 95% interval; dashed: a metric not known") for c in _captions(at))
    at.switch_page("pages/1_Compare.py").run()
    _ok(at)
    assert at.radio(key="cs_cmp_kind").format_func("split pairs") == "split pairs (not computed)"
    columns = [c for c in _captions(at) if " broken block" in c and c[0].isdigit()]
    assert len(columns) == 2 and all("· split pairs not computed ·" in c for c in columns), columns
    shown = [e.label for e in at.expander if e.label.startswith("Problems shown here")]
    assert shown and all(x.endswith("split pairs not computed") for x in shown), shown
    at.radio(key="cs_cmp_kind").set_value("split pairs").run()
    _ok(at)
    assert any(c.startswith("Split pairs are not computed for this document: non-English") for c in _captions(at))
    # Tune's command line reproduces the language set by hand (``--language``), not the detected one
    at.switch_page("pages/3_Tune.py").run()
    _ok(at)
    reproduce = next(c for c in _captions(at) if c.startswith("Reproduce:"))
    assert "--config retention.tune.toml --language de`" in reproduce, reproduce
    at.switch_page("app.py").run()

    # back to the detected language: the earlier analysis is reused, nothing re-runs
    n = len(at.session_state["cs_reports"])
    _lang_box(at).set_value("auto").run()
    _ok(at)
    doc = at.session_state["document"]
    assert doc.language == "en" and "language_detected" not in doc.meta
    assert len(at.session_state["cs_reports"]) == n
    assert any("already made with it" in i.value for i in at.info)


def test_provisional_card_of_a_german_document_does_not_wait_for_rc():
    """RC is never computed for a non-English document: the first answer's banner said "RC/ICC/DCC
    pending" and its score "on RC, BI, SC so far" after coreference; neither lists RC."""
    from chunkscope.analysis import Resources, Settings, analyze
    from chunkscope.ingest import load_bytes

    german = ("# Aufbewahrung\n\n" + "\n\n".join(
        f"## Teil {i}\n\nDer Verantwortliche bewahrt den Vertrag zehn Jahre lang auf. Danach löscht er ihn, und "
        "die Firma prüft ihn jedes Jahr. Sie schreibt darüber einen Bericht für den Vorstand." for i in range(8)))
    doc = load_bytes(german.encode(), "aufbewahrung.md")
    snaps = []
    analyze(doc, Settings(chunkers=CHUNKERS, candidates=CHUNKERS, coref="heuristic"), resources=Resources(),
            on_partial=lambda r, st: snaps.append(r))

    def card(report):
        from ui.overview import provisional_view

        provisional_view(report)

    for snap in snaps:
        at = AppTest.from_function(card, args=(snap,), default_timeout=60).run()
        _ok(at)
        banner = "".join(h.proto.body for h in at.get("html"))
        assert "⏳ provisional: ICC/DCC pending" in banner and "RC/" not in banner
        score = next(m.label for m in at.metric if m.label.startswith("score"))
        assert score == "score on BI, SC so far", score
