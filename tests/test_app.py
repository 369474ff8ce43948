"""App smoke tests with streamlit.testing (AppTest): default sample, uploads, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from pdf_factory import make_pdf  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


def metric(at: AppTest, label: str):
    return next(m.value for m in at.metric if m.label == label)


def html_text(at: AppTest) -> str:
    return "".join(h.proto.body for h in at.get("html"))


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_default_sample_loads(app):
    assert not app.error
    assert app.subheader[0].value.replace("\\", "") == "sample_policy"
    assert metric(app, "Format") == "markdown" and metric(app, "Language") == "en"
    assert int(metric(app, "Blocks")) > 3
    body = html_text(app)
    assert "cs-block" in body and "Northwind" in body


def test_large_document_says_the_analysis_takes_minutes(monkeypatch):
    import ui.common

    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not any("large document" in i.value for i in at.info)  # the bundled sample is small
    monkeypatch.setattr(ui.common, "LARGE_TOKENS", 100)
    at.run()
    assert any("large document" in i.value and "Cancel" in i.value for i in at.info)


def test_pick_other_sample(app):
    box = app.sidebar.selectbox[0]
    box.select(next(o for o in box.options if "technical" in o)).run()
    assert not app.exception and app.subheader[0].value.replace("\\", "") == "sample_technical"


def test_upload_markdown_then_bad_pdf_then_recover(app):
    up = app.sidebar.file_uploader[0]
    up.upload("upload.md", b"# Uploaded\n\nA <script>alert(1)</script> paragraph & more.\n", "text/markdown").run()
    assert not app.exception and not app.error
    assert app.subheader[0].value.replace("\\", "") == "upload"
    body = html_text(app)
    assert "&lt;script&gt;" in body and "<script>alert" not in body  # document text is escaped
    # a JSON document names itself: its name is shown as typed, no link or image rendered from it
    from chunkscope.ingest import load_bytes

    doc = load_bytes(b"# Named\n\nSome text here.\n", "named.md").to_dict()
    doc["name"] = "x](https://evil.example) ![t](https://tracker.example/p.png"
    app.sidebar.file_uploader[0].set_value(("named.json", json.dumps(doc).encode(), "application/json")).run()
    assert not app.exception
    shown = app.subheader[0].value
    assert "\\]\\(https" in shown and "\\!\\[t\\]" in shown, shown  # backslash-escaped: shown, not rendered
    app.sidebar.file_uploader[0].set_value(("upload.md", b"# Uploaded\n\nA <script>alert(1)</script> paragraph & more.\n",
                                            "text/markdown")).run()

    app.sidebar.file_uploader[0].set_value(("broken.pdf", b"%PDF-1.7 junk junk", "application/pdf")).run()
    assert not app.exception
    assert len(app.error) == 1 and "\n" not in app.error[0].value and "broken.pdf" in app.error[0].value
    # the rejected file replaces nothing: the uploaded document stays, and the sidebar says so
    assert app.subheader[0].value.replace("\\", "") == "upload"
    assert any("still showing **upload**" in c.value for c in app.sidebar.caption)

    app.sidebar.file_uploader[0].set_value(None).run()  # the rejected file removed: still the upload
    assert not app.exception and not app.error
    assert app.subheader[0].value.replace("\\", "") == "upload"
    app.sidebar.button(key="cs_use_sample").click().run()  # back to the default sample on request
    assert not app.exception and app.subheader[0].value.replace("\\", "") == "sample_policy"


def test_unsupported_file_type_is_named_in_words(app):
    app.sidebar.file_uploader[0].set_value(("notes.doc", b"\xd0\xcf\x11\xe0 junk", "application/msword")).run()
    assert not app.exception
    err = app.error[0].value
    assert len(app.error) == 1 and "unsupported file type '.doc' (a Word 97–2003 file: save it as .docx" in err
    assert ".pdf" in err and ".docx" in err
    app.sidebar.file_uploader[0].set_value(("notes.docx", b"PK\x03\x04 junk", "application/octet-stream")).run()
    assert not app.exception
    assert len(app.error) == 1 and "notes.docx is not a Word .docx file (not a zip package" in app.error[0].value
    assert app.subheader[0].value.replace("\\", "") == "sample_policy"


def test_rejected_upload_keeps_the_sample_and_a_sample_can_still_be_picked(app):
    app.sidebar.file_uploader[0].set_value(("empty.md", b"", "text/markdown")).run()
    assert not app.exception
    assert len(app.error) == 1 and "empty.md" in app.error[0].value
    assert app.subheader[0].value.replace("\\", "") == "sample_policy"  # what was shown before stays
    box = app.sidebar.selectbox(key="cs_sample")
    assert not box.disabled  # the rejected file does not lock the samples
    box.select(next(o for o in box.options if "technical" in o)).run()
    assert not app.exception and not app.error and app.subheader[0].value.replace("\\", "") == "sample_technical"
    app.sidebar.file_uploader[0].set_value(None).run()
    assert not app.exception and app.subheader[0].value.replace("\\", "") == "sample_technical"


def test_upload_pdf_shows_pages(app):
    app.sidebar.file_uploader[0].upload("report.pdf", make_pdf(pages=2), "application/pdf").run()
    assert not app.exception and not app.error
    assert metric(app, "Format") == "pdf" and metric(app, "Pages") == "2"
    assert any("page" in str(o) for s in app.select_slider for o in s.options)


def test_block_tags_read_on_their_colour():
    # white text on the light kind colours (contents entry, layout, list) could hardly be read: the text colour
    # follows the background's luminance
    from chunkscope.document import Block
    from chunkscope.ingest import load_bytes
    from chunkscope.present.highlight import DARK_INK, LIGHT_INK, PAIR_COLORS, ink_on
    from ui.render import KIND_COLORS, block_html, legend_html

    assert [ink_on(c) for c in ("#aec7e8", "#bcbd22", "#17becf", "#ffffff", "#F0E442", "#fff")] == [DARK_INK] * 6
    assert [ink_on(c) for c in ("#1f77b4", "#d62728", "#8c564b", "#000", "#555")] == [LIGHT_INK] * 5
    assert ink_on("red;x") == ink_on("") == LIGHT_INK  # not a colour: the stylesheet's white
    legend = legend_html({"toc": 3, "layout": 2, "list": 1, "heading": 4})
    for kind in ("toc", "layout", "list"):
        assert f"--cs-c: {KIND_COLORS[kind]}; --cs-ink: {DARK_INK}" in legend
    assert f"--cs-c: {KIND_COLORS['heading']}; --cs-ink: {LIGHT_INK}" in legend and "var(--cs-ink" in legend
    doc = load_bytes(b"- one\n- two\n", "l.md")
    assert f"--cs-ink: {DARK_INK}" in block_html(doc, 0, Block(0, len(doc.text), "list"))
    # the split pairs' P-tags on the Compare page follow the same rule
    assert ink_on(PAIR_COLORS[-1]) == DARK_INK and ink_on(PAIR_COLORS[3]) == LIGHT_INK


def test_render_views_and_escaping():
    from chunkscope.ingest import load_bytes
    from ui.render import MAX_BLOCK_CHARS, blocks_html, views

    long_text = "\n\n".join(f"Paragraph {i} " + "<b>x</b> & y. " * 60 for i in range(60))
    doc = load_bytes(long_text.encode(), "long.txt")
    vs = views(doc)
    assert len(vs) > 1 and vs[0].first == 0 and vs[-1].last == len(doc.blocks) - 1
    assert all(a.last + 1 == b.first for a, b in zip(vs, vs[1:]))
    out = blocks_html(doc, vs[0])
    assert "&lt;b&gt;x&lt;/b&gt; &amp; y." in out and "<b>x</b>" not in out

    paged = load_bytes(b"One.\n\n<!-- PageBreak -->\n\nTwo.\n\n<!-- PageBreak -->\n\n", "p.md")
    assert [v.label for v in views(paged)] == ["page 1", "page 2"]

    # a PDF paragraph over three pages is one block: the middle page, where no block starts, is listed too
    import pymupdf

    pdf = pymupdf.open()
    for line in ("The maintainers keep the archive consistent across", "releases and every upload is",
                 "checked before it reaches the mirrors."):
        pdf.new_page().insert_text((72, 700), line, fontsize=11)
    three = load_bytes(pdf.tobytes(), "three.pdf")
    pdf.close()
    assert three.meta["continued_blocks"] == 2
    vs3 = views(three)
    assert [v.label for v in vs3] == ["page 1", "page 2", "page 3"], [v.label for v in vs3]
    assert "releases and every upload" in blocks_html(three, vs3[1], with_tokens=False)

    # ... and a page where a paragraph from the page before ends, then a block starts, lists that paragraph first
    # (acmart's sample: page 5's running header sat in a block listed under page 4 only)
    pdf = pymupdf.open()
    pdf.new_page().insert_text((72, 700), "The maintainers keep the archive consistent across", fontsize=11)
    page = pdf.new_page()
    page.insert_text((72, 80), "releases and every upload is checked.", fontsize=11)
    page.insert_text((72, 130), "A second paragraph starts on this page.", fontsize=11)
    two = load_bytes(pdf.tobytes(), "two.pdf")
    pdf.close()
    assert two.meta["continued_blocks"] == 1
    first, second = views(two)
    assert (first.first, first.last) == (0, 0) and (second.first, second.last) == (0, 1)
    assert "A second paragraph" in blocks_html(two, second, with_tokens=False)

    giant = load_bytes(("word " * (MAX_BLOCK_CHARS // 2)).encode(), "giant.txt")
    assert "more characters in this block" in blocks_html(giant, views(giant)[0], with_tokens=False)


def test_analysis_key_changes_with_the_llm_api_key(monkeypatch):
    """A corrected API key must re-run the analysis (llm-regex), not return the cached failure."""
    from chunkscope.analysis import Settings
    from chunkscope.ingest import load_bytes
    from chunkscope.llm import LLMSettings

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    import ui.analysis as ua

    doc = load_bytes(b"# T\n\nSome text here.", "t.md")
    s = Settings(chunkers=("llm-regex+pp",))
    keys = []
    for key in ("wrong-key", "right-key"):
        monkeypatch.setattr(ua, "llm_settings", lambda key=key: LLMSettings(base_url="http://h/v1", api_key=key))
        keys.append(ua.analysis_key(doc, s))
    assert keys[0] != keys[1]


def test_analysis_key_ignores_candidates_that_add_no_chunking(monkeypatch):
    """Changing which of the run chunkings may win only re-ranks (no re-analysis); a candidate
    that adds a chunking to run is a different analysis."""
    from chunkscope.analysis import Settings
    from chunkscope.ingest import load_bytes

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    import ui.analysis as ua
    from chunkscope.llm import LLMSettings

    monkeypatch.setattr(ua, "llm_settings", lambda: LLMSettings())
    doc = load_bytes(b"# T\n\nSome text here.", "t.md")
    base = Settings(chunkers=("fixed-512", "whole", "page+pp", "recursive-1100+pp", "recursive-600+pp",
                              "llm-regex+pp"))
    k = ua.analysis_key(doc, base)
    assert ua.analysis_key(doc, base.with_(candidates=("fixed-512", "whole"))) == k
    narrow = base.with_(chunkers=("fixed-512",))
    assert ua.analysis_key(doc, narrow.with_(candidates=("fixed-512",))) != ua.analysis_key(
        doc, narrow.with_(candidates=("fixed-512", "whole")))


def test_session_keeps_a_bounded_number_of_reports(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    import ui.analysis as ua

    fake_state: dict = {}
    monkeypatch.setattr(ua.st, "session_state", fake_state)
    for i in range(ua.MAX_REPORTS + 5):
        ua.store_report(f"k{i}", f"report {i}")
    ua.store_report("k6", "report 6 again")  # re-stored: becomes the most recent
    reports = fake_state[ua.REPORTS_KEY]
    assert len(reports) == ua.MAX_REPORTS and list(reports)[-1] == "k6" and "k0" not in reports


def test_counts_read_as_words():
    import sys

    sys.path.insert(0, str(ROOT))
    from ui.common import counted

    assert counted(1, "broken block") == "1 broken block" and counted(0, "split pair") == "0 split pairs"
    assert counted(1200, "chunk") == "1,200 chunks" and counted(2, "entry", "entries") == "2 entries"


def test_the_same_bytes_as_markdown_and_as_text_are_two_documents(app):
    """notes.md and notes.txt with the same bytes are two documents (Markdown has headings and blocks; plain text
    has paragraphs): the summary was cached by the text and the name, so the second upload showed the first's
    format, blocks and headings, and the Markdown's report was shown as the text's last results."""
    body = "".join(f"## Part {k}\n\nA paragraph about part {k}.\n\n" for k in range(4)).encode()
    app.sidebar.file_uploader[0].set_value(("notes.md", body, "text/markdown")).run()
    assert not app.exception
    assert metric(app, "Format") == "markdown" and metric(app, "Headings") == "4"
    app.sidebar.multiselect(key="cs_chunkers").set_value(["fixed-512", "structure"])
    app.sidebar.multiselect(key="cs_candidates").set_value(["fixed-512", "structure"])
    app.sidebar.selectbox(key="cs_coref").set_value("none")
    app.run()
    app.button(key="cs_analyze").click().run(timeout=300)
    assert not app.exception and len(app.session_state["cs_reports"]) == 1
    app.sidebar.file_uploader[0].set_value(("notes.txt", body, "text/plain")).run()
    assert not app.exception
    assert metric(app, "Format") == "text" and metric(app, "Headings") == "0"
    # the Markdown's results are not this document's, not even as "the last results"
    assert not [w for w in app.warning if "Settings changed" in w.value]
    assert any(c.value.startswith("Press Analyze") for c in app.caption)


def test_a_report_saved_without_the_format_still_belongs_to_its_document():
    """Reports written before the document facts held the format (a corpus run's, opened on the Corpus page)
    are matched on their text, as before; with the format, notes.md and notes.txt stay apart."""
    import sys

    sys.path.insert(0, str(ROOT))
    from chunkscope.ingest import load_bytes
    from ui.analysis import same_document

    md = load_bytes(b"## A\n\nText.\n", "notes.md")
    txt = load_bytes(b"## A\n\nText.\n", "notes.txt")
    assert same_document({"sha256": md.sha256}, md) and same_document({"sha256": md.sha256}, txt)
    assert same_document({"sha256": md.sha256, "format": "markdown"}, md)
    assert not same_document({"sha256": md.sha256, "format": "markdown"}, txt)
