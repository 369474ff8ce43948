"""What a new user tripped over (issue 17), in the app (AppTest): the navigation names the first
page Overview, the metric legend, leaderboard columns, radar selection, timings that add up,
Compare's whole page, the inspector's position, chunks against the user's embedding model.

One analysis of the bundled PDF (three fast chunkers, heuristic coreference) is shared by the
tests of this module, which run in file order on the same AppTest session.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
APP = str(ROOT / "app.py")
CHUNKERS = ["recursive-1100+pp", "fixed-512", "sentence-5"]


def html_text(at: AppTest) -> str:
    return "".join(h.proto.body for h in at.get("html"))


def no_trouble(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def winner(at: AppTest) -> str:
    m = re.search(r"🏆 <span[^>]*></span>([^<]+)</div>", html_text(at))
    return m.group(1) if m else ""


def chart_traces(at: AppTest, key: str) -> list[str]:
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(key) or key in c.proto.id)
    return [t.get("name") for t in json.loads(chart.proto.spec)["data"]
            if not str(t.get("name") or "").endswith(" 95%")]  # not the radar's interval bands


@pytest.fixture
def at() -> AppTest:
    """A fresh session on the Overview (each test builds its own state: no test depends on another)."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    no_trouble(at)
    return at


def analyze_pdf(at: AppTest, chunkers: list[str] = CHUNKERS) -> AppTest:
    """The bundled PDF analysed with a few fast chunkers and the user's model set to MiniLM."""
    pdf = (ROOT / "assets" / "sample_report.pdf").read_bytes()
    at.sidebar.file_uploader(key="cs_upload").upload("sample_report.pdf", pdf, "application/pdf").run()
    at.sidebar.multiselect(key="cs_chunkers").set_value(chunkers)
    at.sidebar.multiselect(key="cs_candidates").set_value(chunkers)
    at.sidebar.selectbox(key="cs_coref").set_value("heuristic")
    at.sidebar.selectbox(key="cs_target_model").set_value("all-MiniLM-L6-v2")
    at.run()
    no_trouble(at)
    at.button(key="cs_analyze").click().run()
    no_trouble(at)
    return at


def test_navigation_calls_the_first_page_overview(at):
    pages = list(at._registered_pages.values())
    assert [p.get("page_name") for p in pages][:1] == ["Overview"]
    assert Path(str(pages[0]["script_path"])).name == "app.py"
    assert [p.get("page_name") for p in pages][1:3] == ["Compare", "Chunk inspector"]
    assert "app" not in [p.get("page_name") for p in pages]


def test_metric_legend_is_visible_in_plain_words(at):
    body = html_text(at)
    for name in ("References Completeness", "Intrachunk Cohesion", "Document Contextual Coherence",
                 "Block Integrity", "Size Compliance"):
        assert name in body
    assert "pronoun" in body and "tables" in body  # plain sentences, not only names


def test_analysis_board_timings_and_model_limit(at):
    analyze_pdf(at)
    assert winner(at) == "recursive-1100+pp"
    board = next(d.value for d in at.dataframe if "score" in d.value.columns and "chunking" in d.value.columns)
    cols = list(board.columns)
    # the problem counts sit next to the metrics, not off-screen after sizes, time and notes
    for c in ("broken blocks", "split pairs", "out-of-size chunks", "over model limit"):
        assert cols.index(c) < cols.index("chunks") < cols.index("seconds"), cols
    assert cols.index("out-of-size chunks") <= 12
    over = dict(zip(board["chunking"], board["over model limit"]))
    assert over["recursive-1100+pp"] > 0 and over["sentence-5"] == 0  # ~1100-token chunks vs 256 word pieces
    assert str(board["over model limit"].dtype) == "Int64"  # counts, never "66.000000"
    assert any("over model limit" in c.value and "word pieces" in c.value for c in at.caption)
    # the stage timings add up to the total shown
    line = next(c.value for c in at.caption if c.value.startswith("Whole analysis:"))
    parts = [float(x) for x in re.findall(r"(\d+\.\d+) s", line.split("=")[0])]
    total = float(re.search(r"= (\d+\.\d+) s in all", line).group(1))
    assert len(parts) >= 3 and abs(sum(parts) - total) <= 0.01 * len(parts), line


def test_leaderboard_problem_counts_fit_a_1500px_window_and_the_caption_names_the_columns_further_right():
    """At 1500 px the table is ~1,040 px wide: the problem counts and "over model limit" were cut off
    or off-screen (auto widths and long headers); now they have fixed widths and short labels (the
    full name as help), and the caption names the columns reached by scrolling sideways."""

    def board():
        from test_ux import narrow_report

        from ui.overview import leaderboard

        leaderboard(narrow_report())

    at = AppTest.from_function(board, default_timeout=60).run()
    no_trouble(at)
    cfg = json.loads(at.dataframe[0].proto.columns)
    first = ["", "●", "score", "RC", "ICC", "DCC", "BI", "SC", "broken blocks", "split pairs", "out-of-size chunks"]
    widths = {c: cfg.get(c, {}).get("width") for c in first}
    assert all(isinstance(w, int) for w in widths.values()), widths
    # with ~125 px for the chunking's name and ~75 for "over model limit" (not shown here: no document)
    assert 125 + sum(widths.values()) + 75 <= 1040, widths
    for col in ("broken blocks", "split pairs", "out-of-size chunks"):
        assert len(cfg[col]["label"]) <= 11 and cfg[col]["help"].startswith(col + ":")
    assert any("scroll the table sideways for mean tokens, min, max" in c.value for c in at.caption)

    from ui import overview

    cols = ["", "●", *overview.column_order(
        ["chunking", "winner", "candidate", "status", "chunks", "mean tokens", "min", "max", "RC", "ICC", "DCC", "BI",
         "SC", "score", "seconds", "note", "broken blocks", "split pairs", "out-of-size chunks", "over model limit"])]
    shown = cols[:cols.index("over model limit") + 1]
    assert overview.BOARD_CHUNKING_PX + sum(overview.BOARD_WIDTHS[c] for c in shown if c != "chunking") \
        <= overview.BOARD_TABLE_PX
    assert overview.columns_to_the_right(cols)[0] == "chunks"

def test_radar_follows_a_weight_change(at):
    analyze_pdf(at)
    assert at.multiselect(key="cs_radar_sel").value == chart_traces(at, "cs_radar")
    first = at.multiselect(key="cs_radar_sel").value
    for m in ("RC", "DCC", "BI", "SC"):
        at.sidebar.slider(key=f"cs_w_{m}").set_value(0.0)
    at.run()
    no_trouble(at)
    now = at.multiselect(key="cs_radar_sel").value
    assert now != first and now[0] == winner(at)  # the new winner and its runner-up ...
    assert chart_traces(at, "cs_radar") == now  # ... listed and plotted alike
    for m in ("RC", "DCC", "BI", "SC"):
        at.sidebar.slider(key=f"cs_w_{m}").set_value(1.0)
    at.run()
    assert at.multiselect(key="cs_radar_sel").value == first


def test_compare_whole_page_opens_the_current_problems_page(at):
    analyze_pdf(at)
    at.switch_page("pages/1_Compare.py").run()
    no_trouble(at)
    for _ in range(12):  # step to a problem past page 1
        if re.search(r"page [2-9]", at.info[0].value):
            break
        at.button(key="cs_next_problem").click().run()
    page = int(re.search(r"page (\d+)", at.info[0].value).group(1))
    assert page >= 2
    at.radio(key="cs_cmp_mode").set_value("a whole page / part").run()
    no_trouble(at)
    assert at.selectbox(key="cs_cmp_view").value == page - 1  # page N, not page 1
    # the columns say which chunks the user's model would cut off
    texts = [w.value for w in at.warning] + [c.value for c in at.caption]
    assert any("over the 256\\-token limit" in t or "over the 256-token limit" in t for t in texts), texts


def test_a_chunking_that_did_not_run_is_listed_not_ranked(at, monkeypatch):
    """The paper's llm-regex+pp without an LLM endpoint: no row of "None" and zero counts, one line under the table."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CHUNKSCOPE_LLM_BASE_URL", "CHUNKSCOPE_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    analyze_pdf(at, [*CHUNKERS, "llm-regex+pp"])
    board = next(d.value for d in at.dataframe if "score" in d.value.columns and "chunking" in d.value.columns)
    assert set(board["chunking"]) == set(CHUNKERS)
    assert board[["score", "RC", "BI", "SC"]].notna().all().all()
    note = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("Not run, so not ranked:")]
    assert len(note) == 1 and "llm-regex" in note[0] and "endpoint" in note[0], note


def test_inspector_keeps_the_place_in_the_document(at):
    analyze_pdf(at)
    at.switch_page("pages/2_Chunk_inspector.py").run()
    no_trouble(at)
    at.selectbox(key="cs_insp_chunking").set_value("sentence-5").run()
    table = at.dataframe[0].value
    k = len(table) // 2
    at.number_input(key="cs_insp_no").set_value(k + 1).run()
    no_trouble(at)
    pos = int(table["start"][k])
    at.selectbox(key="cs_insp_chunking").set_value("recursive-1100+pp").run()
    no_trouble(at)
    other = at.dataframe[0].value
    idx = at.number_input(key="cs_insp_no").value - 1
    assert other["start"][idx] <= pos < other["end"][idx]  # the chunk holding the same text, not chunk #k
    assert idx != k
    # chunks over the user's model limit: counted in its tokens and flagged
    assert "model tokens" in other.columns and other["flags"].str.contains("⛔").any()
    assert any("Over the input limit" in w.value for w in at.warning) or any("Fits" in c.value for c in at.caption)


def test_health_warnings_show_markup_as_typed():
    """A health warning that quotes the converter's markup ("~~…~~", "**", "<sup>") shows it as typed: it was
    rendered as Markdown, so "~~…~~" drew a strike-through line (issue 42)."""

    def panel():
        from chunkscope.document import Document
        from ui.pdfview import render_health

        doc = Document(name="struck.pdf", text="Some text.", source_format="pdf")
        doc.meta["health"] = {"totals": {}, "pages": [],
                              "warnings": ["2 run(s) of text marked struck through (~~…~~): check **bold** <sup>"]}
        doc.warnings.append("page 3 read as plain text: ~~struck~~ lines")
        render_health(doc, expanded=True)

    at = AppTest.from_function(panel, default_timeout=60).run()
    no_trouble(at)
    shown = [c.value for c in at.caption if "struck" in c.value]
    assert len(shown) == 2, shown
    for source in shown:  # every Markdown character escaped: "\~\~…\~\~" renders as "~~…~~"
        assert "~~" not in source and "\\~\\~" in source, source
    health = next(s for s in shown if "bold" in s)
    assert "\\*\\*bold\\*\\*" in health and "\\<sup\\>" in health
