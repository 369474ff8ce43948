"""Every page of the inspector with streamlit.testing (AppTest): upload, analyze, re-weight,
compare, next problem, inspect a chunk, exports, page switches, errors, escaping.

Each test builds its own session (an upload of a 5k-character sample with three fast chunkers and
heuristic coreference, analysed when the test needs it): no test depends on another's state or order.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from inspector_sample import sample_markdown  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # a page run on its own imports ui.* from the repository root
APP = str(ROOT / "app.py")
CHUNKERS = ["recursive-1100+pp", "sentence-5", "fixed-512"]
NAME = "policy_injected.md"


def html_text(at: AppTest) -> str:
    return "".join(h.proto.body for h in at.get("html"))


def winner(at: AppTest) -> str:
    m = re.search(r"🏆 <span[^>]*></span>([^<]+)</div>", html_text(at))
    return m.group(1) if m else ""


def no_trouble(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def assert_escaped(body: str) -> None:
    # the app's own script (ui.common.scroll_to_here: fixed text, only numbers put in) is not document text
    body = re.sub(r'<script>\(function \(\) \{\n  var at = "\d+", once = "[\w@-]+", tries = 0;.*?</script>', "", body,
                  flags=re.S)
    assert "<script>" not in body and "<img src=x" not in body and "onerror=" not in body.replace("onerror=&quot;", "")
    assert 'onerror="' not in body


def uploaded() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    no_trouble(at)
    at.sidebar.file_uploader(key="cs_upload").upload(NAME, sample_markdown().encode(), "text/markdown").run()
    no_trouble(at)
    at.sidebar.multiselect(key="cs_chunkers").set_value(CHUNKERS)
    at.sidebar.multiselect(key="cs_candidates").set_value(CHUNKERS)
    at.sidebar.selectbox(key="cs_coref").set_value("heuristic")
    at.run()
    no_trouble(at)
    return at


@pytest.fixture
def fresh() -> AppTest:
    """The sample uploaded with the test's chunkers, not analysed yet."""
    return uploaded()


@pytest.fixture
def at() -> AppTest:
    """The sample uploaded and analysed, on the Overview."""
    at = uploaded()
    at.button(key="cs_analyze").click().run()
    no_trouble(at)
    return at


def test_upload_is_escaped_and_analyze_shows_winner(fresh):
    at = fresh
    assert at.subheader[0].value.replace("\\", "") == "policy_injected"
    body = html_text(at)
    assert "&lt;script&gt;" in body and "&lt;img src=x onerror=" in body
    assert_escaped(body)
    at.button(key="cs_analyze").click().run()
    no_trouble(at)
    assert winner(at) == "recursive-1100+pp"
    labels = [m.label for m in at.metric]
    assert "score" in labels and "chunks" in labels
    # where the winner leads and trails the runner-up
    assert "Leads fixed-512 on" in html_text(at)
    assert len(at.get("plotly_chart")) >= 3  # radar, sizes, runtime
    radar = at.multiselect(key="cs_radar_sel")
    assert radar.value == ["recursive-1100+pp", "fixed-512"]  # winner and runner-up overlaid
    board = at.dataframe[0].value
    assert list(board["chunking"])[:3] == ["recursive-1100+pp", "fixed-512", "sentence-5"]
    assert {"broken blocks", "split pairs", "out-of-size chunks"} <= set(board.columns)
    assert at.dataframe[0].proto.placeholder == "–"  # a missing score reads "–", not Streamlit's "None"


def test_exports_present(at):
    keys = {d.proto.id for d in at.get("download_button")}
    assert len(at.get("download_button")) == 6, keys
    labels = [d.proto.label for d in at.get("download_button")]
    assert any(lb.startswith("All chunks (CSV, ") for lb in labels) and "All chunks (Parquet)" in labels
    assert at.radio(key="cs_embed_text").value == "raw"
    assert any(lb.startswith("Report (JSON)") for lb in labels)
    assert any(lb.startswith("Winning chunks (JSONL") for lb in labels)
    assert any(lb.startswith("HTML report") for lb in labels)
    assert any(lb.startswith("Winner's settings (TOML)") for lb in labels)
    snippet = "".join(c.value for c in at.get("code"))
    assert "ChunkScopeSplitter.from_settings" in snippet and winner(at) in snippet


def test_weights_rerank_without_reanalysis(at):
    total = at.session_state["cs_last_analysis_s"]
    for m in ("RC", "DCC", "BI", "SC"):
        at.sidebar.slider(key=f"cs_w_{m}").set_value(0.0)
    at.run()
    no_trouble(at)
    assert winner(at) == "sentence-5"  # the most cohesive chunking wins on ICC alone
    assert at.dataframe[0].value["chunking"].iloc[0] == "sentence-5"
    assert at.session_state["cs_last_analysis_s"] == total  # nothing was recomputed
    assert not [w for w in at.warning if "Settings changed" in w.value]
    for m in ("RC", "DCC", "BI", "SC"):
        at.sidebar.slider(key=f"cs_w_{m}").set_value(1.0)
    at.run()
    assert winner(at) == "recursive-1100+pp"


def test_compare_select_and_next_problem(at):
    at.switch_page("pages/1_Compare.py").run()
    no_trouble(at)
    assert at.multiselect(key="cs_cmp_sel").value == ["recursive-1100+pp", "fixed-512"]
    info = at.info[0].value
    assert info.startswith("Problem 1 of 2") and "fixed\\-512" in info and "table block" in info
    assert "holds it whole" not in info  # no chunk holds the table whole
    body = html_text(at)
    assert "cs-broken" in body and "✂ broken table" in body and 'id="cs-here"' in body
    # the "▶ here" tag (and the scroll) goes to the cut, not to the block's start a screen above
    cut = int(re.search(r"at character ([\d,]+)", info).group(1).replace(",", ""))
    assert f'data-at="{cut}"' in body and f'id="cs-here" data-at="{cut}">▶ here</span>' in body
    assert_escaped(body)
    coverage = [c.value for c in at.caption if c.value.startswith("Coverage:")]
    assert len(coverage) == 2 and all("all text covered" in c for c in coverage)
    at.button(key="cs_next_problem").click().run()
    no_trouble(at)
    assert at.info[0].value.startswith("Problem 2 of 2")
    # fixed-512 overlaps its chunks: the block its next chunk's start cuts is whole in chunk 3, and still counted
    assert "chunk #3 holds it whole thanks to the overlap" in at.info[0].value
    at.button(key="cs_next_problem").click().run()
    assert at.info[0].value.startswith("Problem 1 of 2")  # wraps around

    at.radio(key="cs_cmp_kind").set_value("split pairs").run()
    no_trouble(at)
    info = at.info[0].value
    tag = re.search(r"splits pair \*\*(P\d+)\*\*", info)
    assert tag and "Northwind Gateway" in info, info
    body = html_text(at)
    assert body.count(f">{tag[1]}</span>") >= 2  # entity and pronoun carry the same tag
    # the tag is the pair's number among the document's pairs: the same in every column that splits it
    from chunkscope.present import highlight
    from ui.analysis import REPORTS_KEY

    report = list(at.session_state[REPORTS_KEY].values())[-1]
    split = highlight.Problems.of(report.get("fixed-512")).split
    assert split[0].pair is not None and tag[1] == f"P{split[0].pair + 1}"
    assert "cs-ent" in body and "cs-pro" in body

    at.multiselect(key="cs_cmp_sel").set_value(CHUNKERS).run()
    no_trouble(at)
    assert at.info[0].value.startswith("Problem 1 of 4")  # 3 pairs split by sentence-5, 1 by fixed-512
    at.radio(key="cs_cmp_mode").set_value("a whole page / part").run()
    no_trouble(at)
    assert at.selectbox(key="cs_cmp_view").value == 0
    assert len(at.get("plotly_chart")) == 1  # the boundary-agreement strip


def _here_marks(at: AppTest) -> list[list[str]]:
    """Per Compare column (its highlighted text), the offsets its "here" markers stand at."""
    return [re.findall(r'data-cs-here="(\d+)"', h.proto.body) for h in at.get("html") if 'class="cs-hl"' in h.proto.body]


def test_compare_every_column_marks_and_scrolls_to_the_problem(at):
    # every column carries a marker at the problem's place (not only the column holding the problem), and the
    # scroll script waits for one per column: stepping through problems, the columns show the same stretch
    at.switch_page("pages/1_Compare.py").run()
    at.multiselect(key="cs_cmp_sel").set_value(CHUNKERS).run()
    no_trouble(at)
    seen = set()
    for mode in ("around the current problem", "a whole page / part"):
        for _ in range(2):
            at.radio(key="cs_cmp_mode").set_value(mode).run()
            info = at.info[0].value  # the problem line, in the whole page too
            body = html_text(at)
            marks = _here_marks(at)
            assert len(marks) == 3 and all(len(m) == 1 for m in marks), marks
            place = marks[0][0]
            assert all(m == [place] for m in marks), marks  # the same character in every column
            if info:
                cut = re.search(r"at character ([\d,]+)", info).group(1).replace(",", "")
                assert place == cut, (place, info)
            assert body.count(">▶ here</span>") == 1 and body.count(">▷ here</span>") == 2
            assert "var want = 3;" in body and "querySelectorAll('[data-cs-here=" in body
            seen.add(place)
            at.button(key="cs_next_problem").click().run()
            no_trouble(at)
            assert at.radio(key="cs_cmp_mode").value == mode  # ▶ stays in the view shown (page by page)
    assert len(seen) >= 2  # the markers moved with the problem


def test_inspector_selection(at):
    at.switch_page("pages/2_Chunk_inspector.py").run()
    no_trouble(at)
    assert at.selectbox(key="cs_insp_chunking").value == "recursive-1100+pp"
    at.selectbox(key="cs_insp_chunking").set_value("sentence-5").run()
    no_trouble(at)
    table = at.dataframe[0].value
    assert list(table["#"]) == list(range(1, len(table) + 1)) and len(table) == 16  # shown 1-based, as blocks are
    assert table["flags"].str.contains("✂").any() and table["flags"].str.contains("⛓").any()
    for flag in table["flags"]:  # counted words: "✂ 1 block cut", "⛓ 2 pairs split"
        for n, word in re.findall(r"[✂⛓] (\d+) (\w+)", flag):
            assert word == {"1": "block" if "block" in word else "pair"}.get(n, "blocks" if "block" in word else "pairs")
    at.number_input(key="cs_insp_no").set_value(4).run()  # the table's row 3
    no_trouble(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["tokens"] == str(table["tokens"][3]) and "span" not in metrics  # cut off as a metric
    assert any(c.value.startswith(f"Characters {table['start'][3]:,}–{table['end'][3]:,}") for c in at.caption)
    assert table["cohesion"].dtype.kind == "f"  # no value is NaN (a blank cell), not the word "None"
    assert "Heading path:" in html_text(at)
    at.button(key="cs_insp_next").click().run()
    assert at.number_input(key="cs_insp_no").value == 5
    # jump to the chunk holding a character offset
    at.number_input(key="cs_insp_offset").set_value(int(table["start"][7]) + 1).run()
    no_trouble(at)
    assert at.number_input(key="cs_insp_no").value == 8
    assert_escaped(html_text(at))


def test_compare_keeps_its_chunkings_problem_kind_and_problem(at, caplog):
    at.switch_page("pages/1_Compare.py").run()
    at.multiselect(key="cs_cmp_sel").set_value(["sentence-5", "fixed-512"]).run()
    at.radio(key="cs_cmp_kind").set_value("split pairs").run()
    at.button(key="cs_next_problem").click().run()
    info = at.info[0].value
    assert info.startswith("Problem 2 of")
    at.switch_page("app.py").run()
    at.switch_page("pages/1_Compare.py").run()
    no_trouble(at)
    assert at.multiselect(key="cs_cmp_sel").value == ["sentence-5", "fixed-512"]
    assert at.radio(key="cs_cmp_kind").value == "split pairs" and at.info[0].value == info
    # a kept value and a default together make Streamlit warn (and log a stack trace)
    assert not [r for r in caplog.records if "created with a default value" in r.getMessage()]


def test_a_new_document_opens_compare_and_the_inspector_on_its_own_places(at):
    at.switch_page("pages/1_Compare.py").run()
    default = at.multiselect(key="cs_cmp_sel").value  # the winner and the runner-up
    at.multiselect(key="cs_cmp_sel").set_value(["sentence-5"]).run()
    at.switch_page("pages/2_Chunk_inspector.py").run()
    at.number_input(key="cs_insp_no").set_value(3).run()
    at.switch_page("app.py").run()
    other = sample_markdown().replace("policy", "guideline").replace("data", "records")
    at.sidebar.file_uploader(key="cs_upload").upload("other.md", other.encode(), "text/markdown").run()
    at.button(key="cs_analyze").click().run()
    no_trouble(at)
    at.switch_page("pages/1_Compare.py").run()
    no_trouble(at)
    assert at.multiselect(key="cs_cmp_sel").value == default  # not the last document's pick
    at.switch_page("pages/2_Chunk_inspector.py").run()
    assert at.number_input(key="cs_insp_no").value == 1


def test_inspector_keeps_its_chunk_and_the_offset_jumped_to(at):
    at.switch_page("pages/2_Chunk_inspector.py").run()
    rec = at.dataframe[0].value  # the winner's chunks (recursive-1100+pp)
    at.selectbox(key="cs_insp_chunking").set_value("sentence-5").run()
    at.number_input(key="cs_insp_no").set_value(7).run()
    no_trouble(at)
    # another page and back: the same chunking and chunk, not the winner's chunk #1
    at.switch_page("app.py").run()
    at.switch_page("pages/2_Chunk_inspector.py").run()
    no_trouble(at)
    assert at.selectbox(key="cs_insp_chunking").value == "sentence-5" and at.number_input(key="cs_insp_no").value == 7
    assert "chunk #7 of" in html_text(at)
    # jump to an offset, then switch chunking: the chunk holding that offset opens (not the one holding the
    # start of the chunk the jump showed)
    sen = at.dataframe[0].value
    rec_at = [max(i for i, s in enumerate(rec["start"]) if s <= pos) for pos in range(int(rec["end"].iloc[-1]))]
    k = next(k for k in range(len(sen)) if rec_at[int(sen["start"][k])] != rec_at[int(sen["end"][k]) - 1])
    off = int(sen["end"][k]) - 1
    at.number_input(key="cs_insp_offset").set_value(off).run()
    assert at.number_input(key="cs_insp_no").value == k + 1
    at.selectbox(key="cs_insp_chunking").set_value("recursive-1100+pp").run()
    no_trouble(at)
    assert at.number_input(key="cs_insp_no").value == rec_at[off] + 1


def test_uploaded_document_survives_page_switches(at):
    at.switch_page("pages/2_Chunk_inspector.py").run()
    no_trouble(at)
    at.switch_page("app.py").run()
    no_trouble(at)
    assert at.subheader[0].value.replace("\\", "") == "policy_injected"  # not the bundled sample
    assert winner(at) == "recursive-1100+pp"  # and its analysis is still there
    assert at.sidebar.multiselect(key="cs_chunkers").value == CHUNKERS  # settings kept
    at.sidebar.button(key="cs_use_sample").click().run()
    no_trouble(at)
    assert at.subheader[0].value.replace("\\", "") == "sample_policy"


def test_pages_without_a_document_or_report():
    for page in ("pages/1_Compare.py", "pages/2_Chunk_inspector.py"):
        at = AppTest.from_file(str(ROOT / page), default_timeout=60).run()
        no_trouble(at)
        assert "No document yet" in at.info[0].value
        from chunkscope.ingest import load_bytes

        at.session_state["document"] = load_bytes(b"# T\n\nSome text.\n", "t.md")
        at.run()
        no_trouble(at)
        assert "has not been analyzed yet" in at.info[0].value


def test_a_broken_report_is_a_message_not_a_traceback():
    """Damaged diagnostics (e.g. a report from another version) fail one section, not the page."""
    from chunkscope.analysis import Settings, analyze
    from chunkscope.ingest import load_bytes
    from chunkscope.metrics import diagnostics_from_dict

    doc = load_bytes(b"# T\n\n" + b"A sentence about the gateway. It works. " * 60 + b"\n", "t.md")
    report = analyze(doc, Settings(chunkers=("fixed-512", "sentence-5"), candidates=("fixed-512", "sentence-5"),
                                   coref="none"))
    for c in report.chunkings:
        c.diagnostics.update(diagnostics_from_dict({"BI": {"broken": [{"block": "garbage"}]},
                                                    "DCC": {"windows": [{"first": 0}]}}))
    for c in report.chunkings:
        c.chunks[0].start = None  # breaks the columns and tables that read it
    for page in ("pages/1_Compare.py", "pages/2_Chunk_inspector.py"):
        at = AppTest.from_file(str(ROOT / page), default_timeout=60)
        at.session_state["document"] = doc
        at.session_state["cs_reports"] = {"x": report}
        at.run()
        assert not at.exception, at.exception
        assert at.error and all("failed:" in e.value and "Traceback" not in e.value for e in at.error)
        assert at.title and len(at.error) < 6  # the page is still there, the failures are local


# ---------------------------------------------------------------- pure view helpers (chunkscope.viz)

def test_windows_tile_the_document_and_views_carry_blocks():
    from chunkscope.ingest import load_bytes
    from chunkscope.present import paging

    assert paging.windows(0, []) == []
    w = paging.windows(50_000, [], max_chars=12_000, cuts=range(0, 50_000, 1000))
    assert w[0][0] == 0 and w[-1][1] == 50_000 and all(a[1] == b[0] for a, b in zip(w, w[1:]))
    assert all(b - a <= 12_000 for a, b in w) and all(b % 1000 == 0 for _, b in w[:-1])  # ends on cuts
    paged = paging.windows(100, [[10, 40], [40, 100]])
    assert paged == [(0, 40), (40, 100)]  # text before the first page joins it
    long_page = paging.windows(60_000, [[0, 60_000]], max_chars=10_000)
    assert len(long_page) == 6  # a page over twice max_chars is split

    doc = load_bytes(sample_markdown().encode(), "s.md")
    vs = paging.document_views(doc, max_chars=1500)
    assert len(vs) > 2 and vs[0].start == 0 and vs[-1].end == len(doc.text)
    covered = [i for v in vs for i in range(v.first, v.last + 1)]
    assert covered == list(range(len(doc.blocks)))  # every block in exactly one view, in order
    assert paging.view_index(vs, 0) == 0 and paging.view_index(vs, len(doc.text) + 5) == len(vs) - 1


def test_highlight_escapes_and_marks_problems():
    from chunkscope.metrics import SplitPair, diagnostics_from_dict
    from chunkscope.present import highlight
    from chunkscope.report import ChunkingResult, ChunkRow

    text = 'A <script>x()</script> table. <img src=x onerror="y()"> It works.'
    c = ChunkingResult("fixed-512", "f", {}, True, "ok", chunks=[ChunkRow(0, 20, 5), ChunkRow(20, len(text), 900)],
                       diagnostics=diagnostics_from_dict({
                           "BI": {"broken": [{"block": [2, 40], "index": 0, "boundary": 20, "chunk": 1,
                                              "side": "start"}]},
                           "RC": {"split": [{"entity": [0, 1], "pronoun": [56, 58], "boundary": 20,
                                             "chunk": 1, "side": "start"}]},
                           "SC": {"out_of_size": [{"chunk": 1, "kind": "over"}]}}))
    out = highlight.highlight_html(text, c, block_kinds=["table"], focus=(2, 40), color="#E69F00")
    assert "<script>" not in out and "<img" not in out and "&lt;script&gt;" in out
    assert "✂ broken table" in out and 'class="cs-cut"' in out and "#2 ✂ ⛓ ⚠" in out
    assert "chunk 1: 5 tokens" in out and "chunk 2: 900 tokens" in out  # numbered from 1, as blocks and pairs are
    assert out.count(">P1</span>") == 2 and 'id="cs-here" data-at="2"' in out  # the focus starts at 2
    # a pair's tag is its number among the document's pairs (RC's "pair"), so every chunking's view agrees
    c.diagnostics["RC"].split[0].pair = 6
    numbered = highlight.highlight_html(text, c, block_kinds=["table"])
    assert numbered.count(">P7</span>") == 2 and ">P1</span>" not in numbered
    six, unnumbered = (SplitPair(pair=j, entity=[0, 1], pronoun=[2, 3], boundary=1) for j in (6, None))
    assert highlight.pair_color(six, 0) == highlight.pair_color(six, 3) == highlight.pair_color(unnumbered, 6)
    cut = highlight.highlight_html(text, c, block_kinds=["table"], focus=(2, 40), here=20)
    assert 'data-at="20">▶ here</span>' in cut and cut.index("▶ here") > cut.index("x()")
    # without the focus (the problem is another chunking's) the same place still gets a marker, hollow
    other = highlight.highlight_html(text, c, block_kinds=["table"], here=20)
    assert "▶ here" not in other and 'data-cs-here="20"' in other and ">▷ here</span>" in other
    assert other.index("▷ here") > other.index("x()") and 'data-cs-here="20"' in cut
    assert "▷ here" not in highlight.highlight_html(text, c, 30, 50, here=20)  # not in the text shown
    # a "heading" block is the heading and the text under it: the tag says section, not heading
    as_heading = highlight.highlight_html(text, c, block_kinds=["heading"])
    assert "✂ broken section" in as_heading and "a heading and the text under it" in as_heading
    # a "group" block is a run of short paragraphs: the tag and its title say so (a new user's tour found no word on it)
    as_group = highlight.highlight_html(text, c, block_kinds=["group"])
    assert "✂ broken paragraph group" in as_group and "short paragraphs and list items in a row" in as_group
    only_pairs = highlight.highlight_html(text, c, show=("split",))
    assert "✂ broken" not in only_pairs and "cs-ent" in only_pairs
    assert 'style="--cs-bc:' not in highlight.highlight_html(text, c, color="red;background:url(x)")  # colours checked
    # a damaged or foreign report's malformed entries are left out when it is read
    damaged = ChunkingResult.from_dict({"id": "x", "chunks": [{"start": 0, "end": 5, "tokens": 1}],
                                        "diagnostics": {"BI": {"broken": [{"block": "?"}, 3]}, "RC": "junk"}})
    p = highlight.Problems.of(damaged)
    assert p.broken == [] and p.split == [] and p.positions("size", damaged) == []
    # a "held_by" that names no chunk of the chunking (-1, out of range, not a number) is dropped, not shown
    odd = ChunkingResult.from_dict({"id": "x", "chunks": [{"start": 0, "end": 5, "tokens": 1},
                                                          {"start": 3, "end": 9, "tokens": 1}], "diagnostics": {
        "BI": {"broken": [{"block": [0, 9], "boundary": 3, "held_by": h} for h in (-1, 2, "1", True, 1)]}}})
    assert [x.held_by for x in highlight.Problems.of(odd).broken] == [None, None, None, None, 1]


def test_winner_summary_warns_on_degenerate_wins():
    from chunkscope.analysis import rescore, selection
    from chunkscope.report import ChunkingResult, ChunkRow, Report

    def res(cid, n, m):
        return ChunkingResult(cid, cid, {}, True, "ok", chunks=[ChunkRow(i, i + 1, 10) for i in range(n)],
                              metrics=dict(zip(("RC", "ICC", "DCC", "BI", "SC"), m)))

    r = Report({"sha256": "x"}, {}, [res("whole", 1, (1, 0.5, None, 1, 0.2)), res("page+pp", 9, (0.9, 0.6, 0.7, 0.8, 1))],
               None, "", timings={})
    rescore(r, None, ("whole", "page+pp"))
    ws = selection.winner_summary(r)
    assert ws["winner"] == r.winner and ws["runner"] in ("whole", "page+pp") and ws["margin"] >= 0
    assert {x["metric"] for x in ws["leads"]} | {x["metric"] for x in ws["trails"]} <= {"RC", "ICC", "BI", "SC"}
    r2 = Report({"sha256": "x"}, {}, [res("whole", 1, (1, 1, 1, 1, 1))], None, "", timings={})
    rescore(r2, None, ("whole",))
    warns = " ".join(selection.winner_summary(r2)["warnings"])
    assert "single chunk" in warns and "Only one candidate" in warns


def test_mentions_file_survives_page_switches():
    at = AppTest.from_file(APP, default_timeout=60).run()
    text = b"The Commission shall publish the list. It shall keep it up to date.\n"
    at.sidebar.file_uploader(key="cs_upload").upload("commission.txt", text, "text/plain").run()
    pairs = (ROOT / "tests" / "fixtures" / "coref_pairs.json").read_bytes()
    at.sidebar.selectbox(key="cs_coref").set_value("precomputed")
    at.sidebar.file_uploader(key="cs_mentions").upload("pairs.json", pairs, "application/json").run()
    no_trouble(at)
    at.switch_page("pages/1_Compare.py").run()
    at.switch_page("app.py").run()
    no_trouble(at)  # no "the precomputed backend needs a mentions file"
    assert at.subheader[0].value.replace("\\", "") == "commission"
    assert any("Using mentions" in c.value for c in at.sidebar.caption)
    assert at.button(key="cs_analyze").disabled is False
    at.sidebar.button(key="cs_mentions_drop").click().run()
    assert any("needs a mentions file" in e.value for e in at.error)


def test_settings_from_the_page_address():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["chunkers"] = "fixed-512,recursive-1100 pp,bogus"  # an unencoded + arrives as a space
    at.query_params["coref"] = "none"
    at.run()
    assert not at.exception
    assert at.sidebar.multiselect(key="cs_chunkers").value == ["fixed-512", "recursive-1100+pp"]
    assert at.sidebar.selectbox(key="cs_coref").value == "none"
    assert any("bogus" in w.value for w in at.sidebar.warning)


def test_pdf_upload_to_the_broken_table_on_compare():
    """The issue's 'done when': upload a PDF, then on Compare point at the table the loser breaks
    and the pronoun it splits from its antecedent."""
    at = AppTest.from_file(APP, default_timeout=240).run()
    pdf = (ROOT / "assets" / "sample_report.pdf").read_bytes()
    at.sidebar.file_uploader(key="cs_upload").upload("sample_report.pdf", pdf, "application/pdf").run()
    at.sidebar.multiselect(key="cs_chunkers").set_value(["recursive-1100+pp", "fixed-512"])
    at.sidebar.multiselect(key="cs_candidates").set_value(["recursive-1100+pp", "fixed-512"])
    at.sidebar.selectbox(key="cs_coref").set_value("heuristic")
    at.run()
    at.button(key="cs_analyze").click().run()
    no_trouble(at)
    at.switch_page("pages/1_Compare.py").run()
    no_trouble(at)
    for _ in range(20):  # step through the broken blocks until the table
        if "cuts table block" in at.info[0].value:
            break
        at.button(key="cs_next_problem").click().run()
    info = at.info[0].value
    assert "fixed\\-512" in info and "cuts table block" in info and "page " in info
    assert "✂ broken table" in html_text(at)
    at.radio(key="cs_cmp_kind").set_value("split pairs").run()
    no_trouble(at)
    tag = re.search(r"splits pair \*\*(P\d+)\*\*", at.info[0].value)
    assert tag and html_text(at).count(f">{tag[1]}</span>") >= 2


def test_bad_mentions_file_is_reported_under_its_uploader():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.sidebar.selectbox(key="cs_coref").set_value("precomputed")
    at.sidebar.file_uploader(key="cs_mentions").upload("pairs.json", b"{not json", "application/json").run()
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert any(e.startswith("Mentions file pairs") and "valid JSON" in e and "92072" not in e for e in errors), errors
    assert any("needs a mentions file" in e.value for e in at.error)


def test_inspector_table_follows_the_settings_not_only_the_spans():
    """Same spans scored under other settings (coref off): the inspector's flags must not be stale."""
    at = AppTest.from_file(APP, default_timeout=240).run()
    at.sidebar.file_uploader(key="cs_upload").upload(NAME, sample_markdown().encode(), "text/markdown").run()
    at.sidebar.multiselect(key="cs_chunkers").set_value(["sentence-5"])
    at.sidebar.multiselect(key="cs_candidates").set_value(["sentence-5"])
    at.sidebar.selectbox(key="cs_coref").set_value("heuristic")
    at.run()
    at.button(key="cs_analyze").click().run()
    no_trouble(at)
    at.switch_page("pages/2_Chunk_inspector.py").run()
    no_trouble(at)
    assert at.dataframe[0].value["flags"].str.contains("⛓").any()
    at.switch_page("app.py").run()
    at.sidebar.selectbox(key="cs_coref").set_value("none").run()
    at.button(key="cs_analyze").click().run()
    no_trouble(at)
    at.switch_page("pages/2_Chunk_inspector.py").run()
    no_trouble(at)
    assert not at.dataframe[0].value["flags"].str.contains("⛓").any()
