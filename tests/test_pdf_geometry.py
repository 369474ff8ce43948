"""Page boxes (chunkscope.geometry) and extraction health on PDFs with text at known coordinates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pdf_factory import (
    make_alternating_header_pdf,
    make_bad_pages_pdf,
    make_framed_pdf,
    make_header_painted_last_pdf,
    make_one_column_pdf,
    make_pdf,
    make_rotated_pdf,
    make_running_header_pdf,
    make_sideways_table_pdf,
    make_spanning_pdf,
    make_table_pdf,
    make_two_column_pdf,
)

from chunkscope.document import Document
from chunkscope.geometry import Geometry, boxes_pages, chunk_boxes, to_display
from chunkscope.ingest import load_bytes

ROOT = Path(__file__).resolve().parents[1]


def _span(doc: Document, needle: str) -> tuple[int, int]:
    i = doc.text.index(needle)
    return i, i + len(needle)


def _inside(box, x0, y0, x1, y1, tol=2.0) -> bool:
    return box[1] >= x0 - tol and box[2] >= y0 - tol and box[3] <= x1 + tol and box[4] <= y1 + tol


def test_one_column_boxes_at_known_coordinates():
    d = load_bytes(make_one_column_pdf(), "one.pdf")
    assert d.geometry is not None and d.geometry.coverage == pytest.approx(1.0, abs=0.02)
    s, e = _span(d, "Retention of signed contracts")
    (box,) = chunk_boxes(d, s, e)
    assert box[0] == 1
    assert box[1] == pytest.approx(72, abs=1)  # insert_text x
    assert 80 < box[2] < 100 < box[4] < 106  # baseline y=100 inside the line box
    # the paragraph: every box inside its text box, several lines merged into few boxes
    s, e = _span(d, "The archive keeps")
    para = chunk_boxes(d, s, d.text.index("<!-- PageBreak"))
    assert para and all(_inside(b, 72, 130, 520, 300) for b in para)
    # a chunk that starts mid-line gets only the rest of that line (x interpolated)
    mid = d.text.index("signed contract for")
    part = chunk_boxes(d, mid, mid + 15)
    assert len(part) == 1 and part[0][1] > 150 and part[0][3] < 400


def test_two_columns_stay_apart():
    d = load_bytes(make_two_column_pdf(), "two.pdf")
    assert d.geometry.coverage >= 0.98
    left = chunk_boxes(d, *_span(d, "Leftcolumn sentence number 3 talks about apples."))
    right = chunk_boxes(d, *_span(d, "Rightcolumn sentence number 3 talks about pears."))
    assert left and right
    assert all(_inside(b, 50, 80, 290, 700) for b in left)
    assert all(_inside(b, 320, 80, 560, 700) for b in right)


def test_table_cells_map_into_the_table():
    d = load_bytes(make_table_pdf(), "table.pdf")
    assert d.geometry.coverage >= 0.98
    assert "|Bolts|" in d.text.replace(" ", "")
    table = next(b for b in d.blocks if "Bolts" in d.text[b.start:b.end])
    # pipes and the separator row have no ink: no box of the table lies outside the ruled grid
    s = d.text.index("|", table.start)
    e = d.text.index("\n", d.text.index("Nuts", s))
    boxes = [b for b in chunk_boxes(d, s, e, merge=False)]
    assert boxes and all(_inside(b, 72, 200, 472, 290, tol=3) for b in boxes)
    assert chunk_boxes(d, *_span(d, "1200"))[0][1] == pytest.approx(210, abs=2)
    h = d.meta["health"]["pages"][0]
    assert h["tables_detected"] == 1 and h["tables_markdown"] == 1


def test_text_painted_out_of_reading_order_maps_to_its_own_occurrence():
    """The running header is painted last but read first, and repeats the heading's words: each must
    get its own line's box (aligned in stream order, the header took the heading's boxes)."""
    d = load_bytes(make_header_painted_last_pdf(), "browser.pdf")
    header = chunk_boxes(d, *_span(d, "The Server Book"))
    heading_at = d.text.index("Moving to a Multithreaded Server", d.text.index("The Server Book"))
    heading = chunk_boxes(d, heading_at, heading_at + len("Moving to a Multithreaded Server"))
    assert header and all(18 <= b[2] and b[4] <= 32 for b in header)
    assert heading and all(80 <= b[2] and b[4] <= 106 for b in heading)
    body = chunk_boxes(d, *_span(d, "A thread pool lets it handle many."))
    assert body and all(_inside(b, 72, 130, 520, 400) for b in body)


def test_paragraph_across_a_page_break_has_boxes_on_both_pages():
    d = load_bytes(make_spanning_pdf(), "span.pdf")
    s = d.text.index("The spanning paragraph")
    e = d.text.index("second page of the document.") + 10
    boxes = chunk_boxes(d, s, e)
    assert boxes_pages(boxes) == [1, 2]
    assert any(b[0] == 1 and b[2] > 700 for b in boxes) and any(b[0] == 2 and b[4] < 80 for b in boxes)
    # the page-break comment alone is inkless markup: no box
    pb = d.text.index("<!-- PageBreak -->")
    assert chunk_boxes(d, pb, pb + len("<!-- PageBreak -->")) == []


def test_rotated_page_keeps_unrotated_boxes_and_warns():
    d = load_bytes(make_rotated_pdf(), "rot.pdf")
    s, e = _span(d, "Rotated landscape page")
    (box,) = chunk_boxes(d, s, e)
    assert box[0] == 2 and box[1] == pytest.approx(72, abs=1) and 85 < box[2] < 100  # as PyMuPDF reports
    x0, y0, x1, y1 = to_display(d.geometry, box)  # on the rendered (rotated) page
    assert d.geometry.page_size(2) == (842.0, 595.0)  # A4 turned landscape
    assert x0 > 600 and y0 == pytest.approx(72, abs=1)
    assert "page 2: rotated 90°" in d.meta["health"]["warnings"]


def test_alternating_headers_of_a_short_paper_are_running_lines():
    """acmart's 6-page sample: the odd-page header is on pages 3 and 5 only, under the 3 pages the rule asked for,
    so it stayed in the text and split a sentence across the page break."""
    d = load_bytes(make_alternating_header_pdf(), "paper.pdf")
    assert d.meta["running_lines"]["by_kind"] == {"header: repeated on alternate pages": 4}
    assert d.text.count("<!-- PageHeader: A Study of Tests Conference 2026, Lisbon, Portugal -->") == 2
    assert d.text.count("<!-- PageHeader: Conference 2026, Lisbon, Portugal Smith et al. -->") == 2
    assert d.text.startswith("# A Study of Tests")  # the title page's title is no header
    assert "\n\nResults of the second study\n\n" in d.text  # a page's first line once, elsewhere a second line


def test_a_table_set_sideways_on_an_upright_page_is_not_lost():
    """The converter keeps only the page's header line of a landscape table (aastex's sample, pages 16-17:
    38 of 3,414 letters); the plain-text fallback ran only for a page with no text at all."""
    d = load_bytes(make_sideways_table_pdf(), "side.pdf")
    for i in range(12):
        assert f"Row {i} sideways cell alpha beta gamma delta {7 * i}" in d.text
    (w,) = [w for w in d.warnings if w.startswith("page 2:")]
    assert "text set sideways" in w and "plain text used" in w
    s, e = _span(d, "Row 3 sideways")
    assert [b[0] for b in chunk_boxes(d, s, e)] == [2]  # the Page view still finds it on its page


def test_text_lost_for_another_reason_keeps_the_pages_markdown(monkeypatch):
    """ufrgscca's manual hides white words behind its pages (PyMuPDF finds them, the converter does not): those
    pages kept their Markdown before, and must not turn into plain text. Only text set sideways does."""
    from chunkscope.ingest.pdf import recover

    monkeypatch.setattr(recover, "sideways", lambda page: False)
    d = load_bytes(make_sideways_table_pdf(), "side.pdf")
    assert "Row 3 sideways" not in d.text and not [w for w in d.warnings if "plain text used" in w]


def test_a_table_caption_without_a_markdown_table_warns():
    """A table without ruled lines (most journal tables) comes out as lines of text: the page's caption says a
    table was there (acmart, revtex and aastex samples: "tables 0 / 0" and no warning)."""
    plain = load_bytes(make_table_pdf(ruled=False, caption="Table 1. Stock by shelf"), "unruled.pdf")
    assert "|---|" not in plain.text and "Bolts" in plain.text
    (w,) = plain.meta["health"]["warnings"]
    assert w.startswith("page 1: 1 table caption(s), 0 Markdown table(s)")
    ruled = load_bytes(make_table_pdf(caption="Table 1. Stock by shelf"), "ruled.pdf")
    assert "|Bolts|1200|Shelf A|" in ruled.text and ruled.meta["health"]["warnings"] == []
    cited = load_bytes(make_table_pdf(ruled=False, caption="Table 1 shows the stock by shelf."), "cited.pdf")
    assert cited.meta["health"]["warnings"] == []  # a sentence about a table is no caption


def test_bad_pages_warn_and_the_rest_works():
    d = load_bytes(make_bad_pages_pdf(), "bad.pdf")
    warns = d.meta["health"]["warnings"]
    assert "page 2: no text layer (scanned?)" in warns
    assert any(w.startswith("page 3: 3,200 text fragments") for w in warns)
    assert d.meta["health"]["pages"][1]["image_coverage"] > 0.5  # a square picture on most of the page
    assert chunk_boxes(d, *_span(d, "The archive keeps"))


def test_text_on_a_page_sized_frame_is_not_dropped():
    """pymupdf4llm takes text on a page-sized filled frame for a picture and drops it (seen on
    HTML pages printed by Chromium): those pages are converted again without vector graphics."""
    d = load_bytes(make_framed_pdf(3), "framed.pdf")
    for k in (1, 2, 3):
        assert f"Packaging policy, part {'ABC'[k - 1]}" in d.text and f"Page {k} ends its first part." in d.text
    assert " ".join(d.text.split()).count("The archive keeps every signed contract") == 3 * 3
    assert [w for w in d.warnings if "converted again ignoring vector graphics" in w] == [
        "pages 1-3: Markdown conversion kept only 0 of " + d.warnings[0].split(" of ")[1]]
    assert d.geometry.coverage > 0.98
    assert not d.meta["health"]["totals"].get("no_text")
    box = chunk_boxes(d, *_span(d, "Section on interpreters"))
    assert box and _inside(box[0], 55, 285, 300, 305)
    # a normal page is converted once, as before: no such warning
    assert not any("vector graphics" in w for w in load_bytes(make_one_column_pdf(), "one.pdf").warnings)


def test_running_headers_that_vary_with_the_chapter():
    d = load_bytes(make_running_header_pdf(), "run.pdf")
    kinds = d.meta["running_lines"]["by_kind"]
    assert sum(kinds.values()) == 8 and not any(k.startswith("footer") for k in kinds)
    assert "<!-- PageHeader: Chapter 3: Repairs and spare parts 17 -->" in d.text
    stripped = load_bytes(make_running_header_pdf(), "run.pdf", running="strip")
    assert "Chapter 3" not in stripped.text and "Body text of page 7" in stripped.text
    assert stripped.fingerprint != d.fingerprint
    assert "<!-- PageHeader: Chapter 3" in d.text  # the first document is untouched
    # the stripped document maps its own text
    assert stripped.geometry.coverage >= 0.98
    assert chunk_boxes(stripped, *_span(stripped, "Body text of page 7"))[0][0] == 7


def test_geometry_survives_json_and_pickle():
    import pickle

    d = load_bytes(make_pdf(4, blank_pages=(3,)), "multi.pdf")
    assert d.geometry.coverage >= 0.98
    d2 = Document.from_dict(json.loads(json.dumps(d.to_dict())))
    assert isinstance(d2.geometry, Geometry)
    s, e = _span(d, "Invoices")
    assert chunk_boxes(d2, s, e) == chunk_boxes(d, s, e) != []
    d3 = pickle.loads(pickle.dumps(d))
    assert chunk_boxes(d3, 0, len(d.text)) == chunk_boxes(d, 0, len(d.text))
    # not a PDF: no geometry, no boxes, no key in the JSON
    md = load_bytes(b"# Title\n\nSome text here for the test.\n", "a.md")
    assert md.geometry is None and md.boxes(0, 5) is None and "geometry" not in md.to_dict()


def test_sample_report_coverage_and_exports():
    from chunkscope.chunkers import registry
    from chunkscope.report import ChunkingResult, ChunkRow, Report, attach_boxes, chunk_records

    d = load_bytes((ROOT / "assets" / "sample_report.pdf").read_bytes(), "sample_report.pdf")
    assert d.geometry.coverage >= 0.98
    spans = registry.run_chunker(d, "sentence-5", {}).spans
    rows = [ChunkRow(s.start, s.end, 1) for s in spans]
    rep = Report(document={"name": d.name, "sha256": d.sha256}, settings={},
                 chunkings=[ChunkingResult("sentence-5", "s5", {}, True, "ok", chunks=rows)],
                 winner="sentence-5", explanation="", timings={})
    attach_boxes(rep, d)
    out = rep.to_dict()["chunkings"][0]["chunks"]
    visible = [c for c in out if any(ch.isalnum() for ch in d.text[c["start"]:c["end"]].replace("PageBreak", ""))]
    assert visible and all(c["boxes"] for c in visible)  # every chunk with visible text has boxes
    assert Report.from_dict(json.loads(json.dumps(rep.to_dict()))).chunkings[0].chunks[0].boxes == out[0]["boxes"]
    recs = list(chunk_records(rep, d.text, boxes=d.boxes))
    assert recs[0]["boxes"] == out[0]["boxes"]
    page, x0, y0, x1, y1 = recs[0]["boxes"][0]
    assert page == 1 and 0 <= x0 < x1 <= 595 and 0 <= y0 < y1 <= 842


@pytest.mark.parametrize("path", ["/usr/share/doc/libtasn1-doc/libtasn1.pdf",
                                  "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"])
def test_real_pdfs_on_this_machine(path):
    """Real multi-page PDFs shipped with system packages (skipped where absent)."""
    p = Path(path)
    if not p.exists():
        pytest.skip(f"{path} not on this machine")
    d = load_bytes(p.read_bytes(), p.name)
    assert d.geometry.coverage >= 0.98
    if p.name == "libtasn1.pdf":  # the manual whose chapter headers carry the page number
        assert "<!-- PageHeader: Appendix A: Copying Information 29 -->" in d.text
        assert d.meta["running_lines"]["by_kind"].get("header: chapter + page number", 0) >= 5


def test_extraction_fixes():
    """© from a LaTeX PDF, CommonMark-only underscores in titles, language not flipped by tables."""
    from chunkscope.ingest.pdf.cleanup.tidy import tidy_page
    from chunkscope.text.blocks import build_blocks
    from chunkscope.text.language import detect_language

    assert tidy_page("Copyright _⃝_ c 2001–2022, c⃝ 2003; cab") == "Copyright © 2001–2022, © 2003; cab"
    # pymupdf4llm closed a code block after the heading that follows it (R-data.pdf, "7.3 Input from connections")
    md = tidy_page("Text.\n\n```\n   zz <- 1\n   ## a comment\n\n### **7.3 Input**\n\n```\n\nThe basic functions")
    assert md == "Text.\n\n```\n   zz <- 1\n   ## a comment\n```\n\n### **7.3 Input**\n\nThe basic functions"
    assert tidy_page("```\n## **A**\n\nx <- 1\n```") == "## **A**\n\n```\nx <- 1\n```"
    assert tidy_page("```\nx <- 1\n\n```") == "```\nx <- 1\n\n```"  # nothing to move: unchanged
    # a heading holding code is not bold: moved out when it is its page's outline title (R-intro.pdf, "4.2")
    fenced = "```\n   > levels(statef)\n\n### 4.2 The function tapply() and ragged arrays\n\n```\n\nTo continue"
    assert tidy_page(fenced, ["thefunctiontapplyandraggedarrays"]) == (
        "```\n   > levels(statef)\n```\n\n### 4.2 The function tapply() and ragged arrays\n\nTo continue")
    assert tidy_page(fenced) == fenced  # without the outline it may be a code comment
    assert tidy_page(fenced, ["raggedarrays"]) == fenced  # a bookmark's title is the whole heading, after its number
    # a styled phrase the converter split word by word is one run (R's manuals), outside fenced code; after the
    # outline split run-together titles at their runs' edges (the Debian Developer's Reference)
    from chunkscope.ingest.outline import apply_outline
    from chunkscope.ingest.pdf.cleanup.tidy import join_split_runs

    assert join_split_runs("8. **Blank** **lines**, _An_ _Introduction_ _to_ _R_, `if(any(x` `<=` `0))` `x`") == (
        "8. **Blank lines**, _An Introduction to R_, `if(any(x <= 0)) x`")
    assert join_split_runs("**a** and **b**, `x`, `y`\n```\n`a` `b`\n```") == "**a** and **b**, `x`, `y`\n```\n`a` `b`\n```"
    # a link cut at a line break into two links to one target is one link (a wrapped URL gets no space)
    url = "https://CRAN.R-project.org/package=MASS"
    assert join_split_runs(f"( `[https://CRAN.R-project.org/]({url})`\n`[package=MASS]({url})` ) provides") == (
        f"( `[{url}]({url})` ) provides")
    assert join_split_runs("see [the full](u)\n[manual](u), or [a](u)\n[b](v)") == "see [the full manual](u), or [a](u)\n[b](v)"
    # the LaTeX logo, its letters raised and lowered, is one word again (LaTeX's own user guide: 174 times)
    from chunkscope.ingest.pdf.cleanup.latex import latex_logos

    assert tidy_page("Welcome to L <sup>A</sup> TEX2 _ε_, the L A TEX system; not L A TEXT.\n\n**4 L** <sup>**A**</sup> "
                 "**TEX 2.09 documents**") == ("Welcome to LaTeX2ε, the LaTeX system; not L A TEXT.\n\n"
                                               "**4 LaTeX 2.09 documents**")
    split_title = "**1.1** **LaTeX 2** **_ε_** **—The** **new**"  # its epsilon waits for the runs to be joined
    assert latex_logos(split_title) == split_title
    assert latex_logos(join_split_runs(split_title)) == "**1.1 LaTeX2ε —The new**"
    # TeX's logo too, in a document that prints LaTeX's (elsewhere "TEX" may be a word in capitals)
    from chunkscope.ingest.pdf.cleanup.latex import prints_latex_logo

    tex = "The TEXbook, the TEX Users Group, SliTEX and BibTEX; set `TEXI2ANY`."
    assert latex_logos(tex, tex=True) == "The TeXbook, the TeX Users Group, SliTeX and BibTeX; set `TEXI2ANY`."
    assert latex_logos(tex) == tex
    assert prints_latex_logo(["x", "the L <sup>A</sup> TEX system"]) and not prints_latex_logo(["TEX WORKS"])
    run_together = ["### **TWO** **APPLYING TO BECOME A MEMBER** **2.1 Getting started**\n\nBody."]
    split, _ = apply_outline(run_together, [[1, "Applying to Become a Member", 1], [2, "Getting started", 1]])
    assert join_split_runs(split[0]).split("\n\n")[:2] == ["## **TWO APPLYING TO BECOME A MEMBER**",
                                                           "### **2.1 Getting started**"]
    # table-of-contents entries the converter wrote as headings are text
    toc = tidy_page("### 5 Binary files . . . . . . . 24\n\n## 6 Images _. . . . ._ 25\n\n## 2024 results\n"
                "\n### 2 Simple manipulations; numbers and vectors . . 8\n")
    assert toc == ("5 Binary files . . . . . . . 24\n\n6 Images _. . . . ._ 25\n\n## 2024 results\n\n"
                   "2 Simple manipulations; numbers and vectors . . 8")
    # ... but not an ellipsis in a heading, nor a comment inside code
    assert tidy_page("## And then... 2") == "## And then... 2"
    assert "# sum over 1, 2, . . . 10" in tidy_page("```\n# sum over 1, 2, . . . 10\nx = 1\n```")
    _, heads = build_blocks("# Setup__guide for my_var\n\nx\n\n## __Bold__ part\n\ny\n", [], markdown=True)
    assert [h.title for h in heads] == ["Setup__guide for my_var", "Bold part"]
    rows = "\n".join(f"| {i} | {i * 3.5} | ok | 2024-01-{i % 28 + 1:02d} | id_{i} |" for i in range(300))
    text = ("# Results\n\n| n | value | status | date | key |\n|---|---|---|---|---|\n" + rows
            + "\n\nThe table above lists the measured values of every run, and the text below explains them.\n")
    assert detect_language(text)[0] == "en"
    # a `#` comment inside a fenced code sample is code, not a heading
    blocks, heads = build_blocks("# T\n\nText.\n\n```\n# install it\npip install x\n```\n", [], markdown=True)
    assert [h.title for h in heads] == ["T"] and any(b.kind == "code" for b in blocks)


def test_language_override_and_artefact_labels():
    from chunkscope.ingest.health import extraction_artefact

    d = load_bytes(b"# Titel\n\nDer Vertrag wird zehn Jahre lang aufbewahrt und danach geloescht.\n", "a.md",
                   language="en")
    assert d.language == "en" and d.meta["language_detected"] == "de"
    t = "Para one.\n\n<!-- PageHeader: Appendix A: Copying Information 29 -->\n\nBody of the paragraph goes on"
    assert extraction_artefact(t, boundary=t.index("Body")) == "extraction: running header"
    assert extraction_artefact(t, block=(0, len(t))) == "extraction: running header"
    assert extraction_artefact(t, block=(0, 9), boundary=t.index("Body") + 5) is None
    # a paragraph that goes on over a page break (one block, footer and header inside): a cut at the
    # break is the chunker's, not the extraction's
    over = ("The upload goes into the workflow and\n\n<!-- PageFooter: 50 -->\n\n<!-- PageBreak -->\n\n"
            "<!-- PageHeader: Manual -->\n\nthus increases the chances.")
    assert extraction_artefact(over, block=(0, len(over)), boundary=over.index("<!-- PageHeader"), joined=True) is None
    # ...only where blocks may go on over a page (a PDF's): elsewhere such a block is glued round page furniture
    assert extraction_artefact(over, block=(0, len(over))) == "extraction: running footer"


def _words(line: str, y: float = 100.0) -> list[tuple]:
    out, x = [], 72.0
    for i, w in enumerate(line.split()):
        out.append((x, y, x + 6 * len(w), y + 10, w, 0, 0, i))
        x += 6 * len(w) + 4
    return out


def test_alignment_masks_mark_tags_and_does_not_scatter_letters():
    from chunkscope.ingest.pdfmap import align_page

    words = _words("the binary package python3 will represent the default")
    text = "the binary package <mark>`python3`</mark> will represent the default"
    cm, mappable = align_page(text, words)
    assert mappable == len("thebinarypackagepython3willrepresentthedefault")
    p = text.index("python3")
    assert all(words[cm[i]][4] == "python3" for i in range(p, p + 7))
    # a sentence the page does not have (the converter made it up or the words were lost) stays
    # unmapped instead of being matched letter by letter to unrelated words around it
    words = (_words("Uses the protocol to resolve addresses") + _words("options retrieves time-to-live records", 300)
             + _words("function will contain an array", 120))
    text = ("Uses the protocol to resolve addresses\n\nQuirky zebras vex jumping foxes daily.\n\n"
            "function will contain an array")
    cm, _ = align_page(text, words)
    extra = range(text.index("Quirky"), text.index("daily.") + 6)
    assert not [i for i in extra if i in cm]
    assert all(text[i].lower() in words[cm[i]][4].lower() for i in cm if text[i].isalnum())


def test_health_counts_text_the_converter_dropped():
    from chunkscope.ingest.health import missing_letters

    words = _words("alpha beta gamma") + _words("delta epsilon", 300)
    runs = [(0, 16, 1, 72.0, 100.0, 170.0, 110.0)]  # only the first line made it into the Markdown
    assert missing_letters(words, runs) == (len("deltaepsilon"), len("alphabetagammadeltaepsilon"))
    assert missing_letters(words, []) == (26, 26) and missing_letters([], runs) == (0, 0)
    d = load_bytes(make_one_column_pdf(), "one.pdf")
    assert d.meta["health"]["totals"]["missing_letters"] == 0 and d.meta["health"]["totals"]["letters"] > 200


def test_health_counts_lines_the_converter_wrote_twice():
    import pymupdf

    from chunkscope.ingest.health import format_health, pdf_health, repeated_lines

    words = _words("E = m c 2 where m is the rest mass") + _words("Each ﬁeld keeps its units here", 300)
    md = "E = m c<sup>2</sup> where m is the rest mass\n\n**Each field** keeps its units here\n\n" \
         "E = m c2 where m is the rest mass\n"
    assert repeated_lines(md, words) == 1  # markup, HTML tags and the ligature do not matter
    assert repeated_lines(md.replace("E = m c2 where", "E = m c3 where"), words) == 0
    assert repeated_lines(md + md, words + words) == 2  # four times in the Markdown, twice on the page
    assert repeated_lines("Figure 1\nFigure 1\n", _words("Figure 1")) == 0  # too short to tell
    back = _words("Back to the table of contents") + _words("Back to the table of contents", 300)
    link = "[Back to the table of contents](https://example.com/manual#top)\n"
    assert repeated_lines(link + link, back) == 0  # twice on the page too: the link's target is not text
    header = "|Col1|Col2|Col3|Col4|Col5|\n|---|---|---|---|---|\n"
    assert repeated_lines(header + "\n" + header, _words("Name Size Kind")) == 0  # the converter's own line
    pdf = pymupdf.open(stream=make_one_column_pdf(), filetype="pdf")
    page_words = [pdf[0].get_text("words")]
    page = "".join(str(w[4]) for w in page_words[0])
    line = next(ln for ln in pdf[0].get_text().splitlines() if len(ln) > 30 and page.count(ln.replace(" ", "")) == 1)
    h = pdf_health(pdf, [line + "\n\n" + line + "\n"], [0], None, None, page_words)
    assert h["pages"][0]["repeated"] == 1 and h["totals"]["repeated"] == 1
    assert any("written twice by the converter" in w for w in h["warnings"])
    assert "repeated    1 line(s)" in format_health(h)
    assert load_bytes(make_one_column_pdf(), "one.pdf").meta["health"]["totals"]["repeated"] == 0


def test_a_template_line_the_converter_drops_on_every_page_is_not_dropped_text():
    """A beamer deck: the navigation bar ("Introduction Results Summary" at the top of every slide) is not in
    the Markdown; 25 of 31 slides warned "17-36% of the page's text is not in the Markdown"."""
    from chunkscope.ingest.health import dropped_furniture, missing_letters

    runs = [(0, 16, 1, 72.0, 100.0, 170.0, 110.0)]  # the body line of each slide made it into the Markdown
    nav = _words("Introduction Results Summary", 4)
    pages = [nav + _words("alpha beta gamma") for _ in range(4)]
    pages[2] = pages[2] + _words("delta epsilon", 300)  # slide 3 also lost a line of its own
    by_page = {k + 1: runs for k in range(4)}
    furniture = dropped_furniture(pages, by_page)
    assert {key[2] for key in furniture} == {"Introduction", "Results", "Summary"}
    assert missing_letters(pages[0], runs, furniture) == (0, len("alphabetagamma"))
    assert missing_letters(pages[2], runs, furniture) == (len("deltaepsilon"), len("alphabetagammadeltaepsilon"))
    assert missing_letters(pages[0], runs)[0] == len("IntroductionResultsSummary")  # without the template rule
    assert dropped_furniture(pages[:2], {1: runs, 2: runs}) == set()  # two pages are too few to tell


def test_a_common_word_stays_on_its_line_when_the_content_stream_is_out_of_order():
    """A heading drawn after a list whose item the converter dropped: when an alignment pass gave
    its word "options" the list item's word further down, the line repair moves it back."""
    from chunkscope.ingest.pdfmap import _key, _repair_lines, markup_mask, md_tokens

    head = _words("dns.resolve4(hostname[, options], callback)", 100)
    words = _words("options Object ttl", 300) + head + _words("Uses the protocol", 330)
    text = "## dns.resolve4(hostname[, options], callback)\n\nUses the protocol\n"
    tokens = md_tokens(text, markup_mask(text))
    wkeys = [_key(str(w[4])) for w in words]
    target = {"dnsresolve4hostname": 3, "options": 0, "callback": 5, "uses": 6, "the": 7, "protocol": 8}
    cm = {i: target[t.key] for t in tokens for i in t.positions}  # "options" matched to the list item
    _repair_lines(text, tokens, words, wkeys, cm)
    i = text.index("options")
    assert {words[cm[j]][4] for j in range(i, i + 7)} == {"options],"}
    assert cm[text.index("Uses")] == 6 and cm[text.index("dns")] == 3
    # a Markdown line that wraps onto the next PDF line keeps its words there (not "repaired")
    words = _words("the archive keeps", 100) + _words("the contract", 114)
    text = "the archive keeps the contract\n"
    tokens = md_tokens(text, markup_mask(text))
    cm = {i: k for k, t in enumerate(tokens) for i in t.positions}
    before = dict(cm)
    _repair_lines(text, tokens, words, [_key(str(w[4])) for w in words], cm)
    assert cm == before


def test_margin_notes_are_not_woven_into_the_text():
    """LaTeX's own user guides (tour PDFs) print "New feature" over a date in the margin beside a paragraph; the
    converter appended them to the text lines ("... needed in a LaTeX class New feature"), cutting sentences. They
    are removed and the user is told; a number far right (a contents list's page) stays."""
    from pdf_factory import make_margin_notes_pdf

    from chunkscope.ingest.pdf.cleanup.margins import strip_margin_notes

    doc = load_bytes(make_margin_notes_pdf(), "guide.pdf")
    assert "New feature" not in doc.text and "1991/12/01" not in doc.text, doc.text[:600]
    assert "the height of the page and the commands that\nevery document needs" in doc.text
    assert "this short guide 11" in doc.text.replace("\n", " ")  # a page number is no note
    assert any("8 margin notes" in w and "pages 1-2" in w for w in doc.warnings), doc.warnings
    # where the converter put them: a line's end (right), its start (left), a line of its own; in order
    md = "text that New feature\nnext 1994/12/01\n1994/12/02\n```\ncode New\n```\nNew more"
    got, gone = strip_margin_notes(md, [("right", "New feature", []), ("right", "1994/12/01", []),
                                        ("right", "1994/12/02", []), ("left", "Old", []), ("left", "New", [])])
    # a note on a line of its own takes the line with it, not leaving a blank one (that split the paragraph)
    assert (got, gone) == ("text that\nnext\n```\ncode New\n```\nmore", [0, 1, 2, 4])  # no "Old" in it
    assert doc.meta["health"]["totals"].get("missing_letters", 0) == 0  # left out on purpose: no letter lost


def test_a_dagger_or_pilcrow_in_the_text_is_not_a_list_bullet():
    """LaTeX's font guide lists its symbols in a table ("\\textdagger †"); pymupdf4llm takes any span starting with
    one of its bullets for a list item and wrote "\\textdagger -". Daggers, pilcrows, a minus and ">" are the text's."""
    from chunkscope.ingest.pdf.convert import NOT_BULLETS, converter

    rag = converter()
    assert all(not rag.startswith_bullet(f"{ch} 132") and not rag.startswith_bullet(ch) for ch in NOT_BULLETS)
    assert rag.startswith_bullet("• first item") and rag.startswith_bullet("- first item")  # real bullets stay
    assert converter().startswith_bullet is rag.startswith_bullet  # wrapped once


def test_short_lines_in_body_type_beside_the_text_are_text_not_notes():
    """A review found a borderless table's last column ("High", "Low") and a CV's dates taken for margin notes and
    removed. Notes are set smaller than the body; these are not."""
    import pymupdf

    pdf = pymupdf.open()
    page = pdf.new_page()
    for k in range(8):
        page.insert_text((72, 80 + 14 * k), f"Row {k} of the regional results: sales grew in the north office", fontsize=10)
        page.insert_text((480, 80 + 14 * k), ("High", "Low", "Medium", "12%")[k % 4], fontsize=10)
    doc = load_bytes(pdf.tobytes(), "table.pdf")
    assert doc.text.count("High") == 2 and "Medium" in doc.text and "12%" in doc.text, doc.text
    assert not any("margin notes" in w for w in doc.warnings)
    # LaTeX written in capitals (the rubber) is no logo, and TeX's logo is never changed inside code
    from chunkscope.ingest.pdf.cleanup.latex import latex_logos

    assert latex_logos("NATURAL RUBBER LATEX. LATEX ALLERGY", tex=True) == "NATURAL RUBBER LATEX. LATEX ALLERGY"
    code = "```\nexport TEX=pdftex\n```\nrun `TEX` or MY_TEX_VAR with TEX2; the TEX book"
    assert latex_logos(code, tex=True) == "```\nexport TEX=pdftex\n```\nrun `TEX` or MY_TEX_VAR with TEX2; the TeX book"
