"""PowerPoint (.pptx) decks: a slide per page, titles as headings, bullets as lists, notes as a quote."""

from __future__ import annotations

import io
import zipfile

import pytest
from pptx import Presentation
from pptx.oxml.ns import qn
from pptx.util import Inches

from chunkscope.chunkers import registry
from chunkscope.ingest import SUPPORTED_EXTENSIONS, IngestError, load_bytes

TITLE, CONTENT, TITLE_ONLY, BLANK = 0, 1, 5, 6  # the default template's layouts


def saved(prs) -> bytes:
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue()


def bullet(paragraph, on: bool) -> None:
    """Set a paragraph's bullet explicitly (python-pptx has no API for it)."""
    ppr = paragraph._p.get_or_add_pPr()
    ppr.append(ppr.makeelement(qn("a:buChar" if on else "a:buNone"), {"char": "•"} if on else {}))


def review_deck() -> bytes:
    prs = Presentation()
    s = prs.slides.add_slide(prs.slide_layouts[TITLE])
    s.shapes.title.text = "Quarterly review"
    s.placeholders[1].text = "Northwind Gateway team"
    s = prs.slides.add_slide(prs.slide_layouts[CONTENT])
    s.shapes.title.text = "Findings"
    tf = s.placeholders[1].text_frame
    tf.text = "Latency fell by 30%"
    for text, level in (("after the cache change", 1), ("measured at p95", 2), ("Errors stayed flat", 0)):
        p = tf.add_paragraph()
        p.text, p.level = text, level
    p = tf.add_paragraph()
    p.text = "Both hold for May."
    bullet(p, on=False)  # a body paragraph whose bullet is turned off
    s.notes_slide.notes_text_frame.text = "Say that the cache was the main change.\nIt shipped in May."
    s = prs.slides.add_slide(prs.slide_layouts[BLANK])  # nothing on it
    s = prs.slides.add_slide(prs.slide_layouts[TITLE_ONLY])
    s.shapes.title.text = "Numbers"
    table = s.shapes.add_table(3, 2, Inches(1), Inches(1.5), Inches(6), Inches(1.5)).table
    for r, row in enumerate([["Metric", "Value"], ["p95 ms", "120"], ["errors", "0.1%"]]):
        for c, v in enumerate(row):
            table.cell(r, c).text = v
    # added in the wrong order: reading order is top to bottom, then left to right
    low = s.shapes.add_textbox(Inches(1), Inches(6), Inches(4), Inches(0.5))
    low.text_frame.text = "# Source: internal dashboards"
    right = s.shapes.add_textbox(Inches(5), Inches(4), Inches(3), Inches(0.5))
    right.text_frame.text = "Right column."
    left = s.shapes.add_textbox(Inches(1), Inches(4), Inches(3), Inches(0.5))
    left.text_frame.text = "Left column."
    tf = left.text_frame
    p = tf.add_paragraph()
    p.text = "a bullet in a text box"
    bullet(p, on=True)
    return saved(prs)


def error(data: bytes, filename: str = "deck.pptx") -> str:
    with pytest.raises(IngestError) as info:
        load_bytes(data, filename)
    msg = str(info.value)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


def test_a_deck_reads_as_a_page_per_slide():
    doc = load_bytes(review_deck(), "review.pptx")
    assert SUPPORTED_EXTENSIONS[".pptx"] == "pptx"
    assert doc.source_format == "pptx" and doc.language == "en" and doc.meta["slides"] == 4
    text = doc.text
    assert [(h.level, h.title) for h in doc.headings] == [(1, "Quarterly review"), (2, "Findings"), (2, "Numbers")]
    assert ("- Latency fell by 30%\n  - after the cache change\n    - measured at p95\n- Errors stayed flat\n\n"
            "Both hold for May.") in text
    assert "> Speaker notes: Say that the cache was the main change.\n>\n> It shipped in May." in text
    assert "| Metric | Value |\n| --- | --- |\n| p95 ms | 120 |\n| errors | 0.1% |" in text
    order = [text.index(s) for s in ("Left column.", "Right column.", "Source: internal dashboards")]
    assert order == sorted(order)
    assert "- a bullet in a text box" in text and "\\# Source" in text  # "#" typed on a slide is no heading
    # three slides with text, three pages; the blank slide is said, not silently renumbered
    assert len(doc.pages) == 3 and text.count("<!-- PageBreak -->") == 2
    assert [text[p.start:p.end].split("\n")[0] for p in doc.pages] == ["# Quarterly review", "## Findings", "## Numbers"]
    assert doc.warnings == ["1 of 4 slides have no text (blank, or pictures and charts only): they are no pages, "
                            "so page k is the k-th slide with text"]
    res = registry.run_chunker(doc, "page", {})
    assert res.status == "ok" and len(res.spans) == 3


def test_a_group_and_a_hidden_slide_are_read():
    prs = Presentation()
    s = prs.slides.add_slide(prs.slide_layouts[TITLE_ONLY])
    s.shapes.title.text = "Architecture"
    group = s.shapes.add_group_shape()
    box = group.shapes.add_textbox(Inches(1), Inches(2), Inches(3), Inches(1))
    box.text_frame.text = "The gateway forwards each request."
    s2 = prs.slides.add_slide(prs.slide_layouts[TITLE_ONLY])
    s2.shapes.title.text = "Backup plan"
    s2._element.set("show", "0")  # hidden in the slide show; its text is still the deck's
    doc = load_bytes(saved(prs), "arch.pptx")
    assert "## Architecture\n\nThe gateway forwards each request." in doc.text and "## Backup plan" in doc.text
    assert len(doc.pages) == 2 and doc.warnings == []


def test_decks_without_text_or_with_broken_xml_are_refused_in_one_line():
    prs = Presentation()
    prs.slides.add_slide(prs.slide_layouts[BLANK])
    assert "has no text on any of its 1 slide(s)" in error(saved(prs))
    broken = io.BytesIO()
    with zipfile.ZipFile(broken, "w") as z:
        z.writestr("ppt/presentation.xml", "<p:presentation><unclosed>")
    assert "could not be read as a PowerPoint deck" in error(broken.getvalue())
    assert "(a PowerPoint 97–2003 deck: save it as .pptx or PDF)" in error(b"\xd0\xcf\x11\xe0", "old.ppt")


def test_slide_furniture_and_unbulleted_layouts_are_read_as_the_slide_shows_them():
    prs = Presentation()
    s = prs.slides.add_slide(prs.slide_layouts[2])  # "Section Header": its text placeholder shows no bullets
    s.shapes.title.text = "Part two"
    s.placeholders[1].text = "What changed since May"
    layout = prs.slide_layouts[CONTENT]
    s2 = prs.slides.add_slide(layout)
    s2.shapes.title.text = "Results"
    s2.placeholders[1].text = "Latency fell | errors flat"
    for ph in layout.placeholders:  # the date, footer and slide number the layout puts on every slide
        if ph.placeholder_format.type.name in ("DATE", "FOOTER", "SLIDE_NUMBER"):
            s2.shapes.clone_placeholder(ph)
    for ph in s2.placeholders:
        if ph.placeholder_format.type.name in ("DATE", "FOOTER", "SLIDE_NUMBER"):
            ph.text = {"DATE": "5/3/2024", "FOOTER": "Confidential - Acme", "SLIDE_NUMBER": "2"}[
                ph.placeholder_format.type.name]
    table = s2.shapes.add_table(2, 2, Inches(1), Inches(5), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "Metric", "a|b"
    blank = s2.shapes.add_table(2, 2, Inches(1), Inches(6.5), Inches(4), Inches(1))  # no text in any cell
    assert blank.has_table
    # two columns whose tops differ by half a millimetre are one row: left before right
    right = s2.shapes.add_textbox(Inches(5), Inches(4) + 18_000, Inches(3), Inches(0.5))
    right.text_frame.text = "Right column."
    left = s2.shapes.add_textbox(Inches(1), Inches(4), Inches(3), Inches(0.5))
    left.text_frame.text = "Left column."
    doc = load_bytes(saved(prs), "talk.pptx")
    text = doc.text
    assert "## Part two\n\nWhat changed since May" in text  # a paragraph, not "- What changed"
    assert "- Latency fell | errors flat" in text  # the content layout's body shows bullets
    for furniture in ("5/3/2024", "Confidential", "\n\n2\n"):
        assert furniture not in text
    assert "| Metric | a\\|b |" in text and text.count("| --- |") == 1  # the blank table gives nothing
    assert text.index("Left column.") < text.index("Right column.")


def test_a_one_slide_deck_is_one_page_and_an_unreadable_shape_is_left_out_and_said():
    prs = Presentation()
    s = prs.slides.add_slide(prs.slide_layouts[TITLE_ONLY])
    s.shapes.title.text = "Only slide"
    box = s.shapes.add_textbox(Inches(1), Inches(2), Inches(3), Inches(1))
    box.text_frame.text = "Its text."
    odd = s.shapes.add_textbox(Inches(1), Inches(3), Inches(3), Inches(1))
    odd.text_frame.text = "Odd shape."
    odd.text_frame.paragraphs[0]._p.get_or_add_pPr().set("lvl", "x")  # a damaged attribute
    doc = load_bytes(saved(prs), "one.pptx")
    assert doc.pages and len(doc.pages) == 1 and doc.pages[0].end == len(doc.text)
    assert registry.run_chunker(doc, "page", {}).status == "ok"
    assert "Its text." in doc.text and "Odd shape." not in doc.text
    assert doc.warnings == ["1 shape(s) could not be read (damaged, or a kind this reader does not know, such as "
                            "ink) and are left out"]
