"""PowerPoint decks (``.pptx``: PowerPoint, LibreOffice Impress, Google Slides, Keynote's export): each slide is a
page, read as HTML written from the deck (python-pptx), then as any web page (``chunkscope.ingest.html``).

A slide's title placeholder is its heading (``#`` on a title slide, ``##`` on the others); its other shapes follow
in reading order (top to bottom, then left to right; a group's shapes in place of the group). A text frame's
paragraphs are a list when they show bullets (a body or content placeholder, whose bullets come from the slide
master, unless a paragraph turns them off; a text box only where a paragraph sets a bullet), nested by their
indent level, else paragraphs; tables are Markdown tables (their first row as header); speaker notes follow the
slide as a quote starting "Speaker notes:" (they are often where a deck's explanation is). Pictures, charts and
media are left out (no image is read). Each slide ends a page (``<!-- PageBreak -->``): the ``page`` chunker is one
chunk per slide. A slide without text gives no page, so page numbers count the slides that have text; a hidden
slide is read like the others (its text is in the file).

Refused in one line, as Word files (``chunkscope.ingest.office``): an old ``.ppt`` or a password-protected deck, a
zip that is not a deck, a deck whose XML unpacks past the cap. python-pptx's XML parser resolves no entities.
"""

from __future__ import annotations

import html
from typing import Any

from chunkscope.document import Document
from chunkscope.ingest.errors import IngestError, unreadable
from chunkscope.ingest.office import check_unpacked, free_mark, office_document, open_package, page_breaks

_MAIN_PART = "ppt/presentation.xml"
_POWERPOINT = ("PowerPoint", ".pptx", "PowerPoint 97–2003")
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def _text(s: str) -> str:
    """A run of slide text as HTML: escaped, a vertical tab (a line break in the paragraph) as ``<br>``."""
    return html.escape(s).replace("\v", "<br>").replace("\n", "<br>")


def _bullets(paragraph: Any, placeholder_body: bool) -> bool:
    ppr = paragraph._p.pPr
    if ppr is not None:
        if ppr.find(f"{_A}buNone") is not None:
            return False
        if ppr.find(f"{_A}buChar") is not None or ppr.find(f"{_A}buAutoNum") is not None:
            return True
    return placeholder_body


def _list_html(items: list[tuple[int, str]]) -> str:
    """Bulleted paragraphs (indent level, HTML text) as a nested list: an item holds the deeper ones after it."""
    out, i = ["<ul>"], 0
    while i < len(items):
        level, text = items[i]
        j = i + 1
        while j < len(items) and items[j][0] > level:
            j += 1
        out.append(f"<li>{text}{_list_html(items[i + 1:j]) if j > i + 1 else ''}</li>")
        i = j
    return "".join(out) + "</ul>"


def _frame_html(frame: Any, placeholder_body: bool) -> list[str]:
    """A text frame's paragraphs as HTML: runs of bulleted ones as nested lists, the others as ``<p>``."""
    out: list[str] = []
    items: list[tuple[int, str]] = []
    for p in frame.paragraphs:
        text = p.text.strip()
        if not text:
            continue
        if _bullets(p, placeholder_body):
            items.append((p.level, _text(text)))
            continue
        if items:
            out.append(_list_html(items))
            items = []
        out.append(f"<p>{_text(text)}</p>")
    if items:
        out.append(_list_html(items))
    return out


def _table_html(table: Any) -> list[str]:
    rows = []
    for row in table.rows:
        cells = "".join(f"<td>{_text(' '.join(cell.text.split()))}</td>" for cell in row.cells)
        rows.append(f"<tr>{cells}</tr>")
    return [f"<table>{''.join(rows)}</table>"]


def _reading_order(shapes: Any) -> list[Any]:
    return sorted(shapes, key=lambda s: ((s.top or 0) // 10_000, s.left or 0))  # rows within ~1 mm: left first


def _shapes_html(shapes: Any, title_id: int | None) -> list[str]:
    from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER

    out: list[str] = []
    for shape in _reading_order(shapes):
        if shape.shape_id == title_id:
            continue
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            out += _shapes_html(shape.shapes, None)
        elif getattr(shape, "has_table", False) and shape.has_table:
            out += _table_html(shape.table)
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            body = shape.is_placeholder and shape.placeholder_format.type in (
                PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT, None)
            out += _frame_html(shape.text_frame, bool(body))
    return out


def _slide_html(slide: Any) -> list[str]:
    from pptx.enum.shapes import PP_PLACEHOLDER

    out: list[str] = []
    title = slide.shapes.title
    title_id = None
    if title is not None and title.has_text_frame and " ".join(title.text_frame.text.split()):
        tag = "h1" if title.placeholder_format.type == PP_PLACEHOLDER.CENTER_TITLE else "h2"
        out.append(f"<{tag}>{_text(' '.join(title.text_frame.text.split()))}</{tag}>")
        title_id = title.shape_id
    out += _shapes_html(slide.shapes, title_id)
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = [p.text.strip() for p in slide.notes_slide.notes_text_frame.paragraphs if p.text.strip()]
        if notes:
            notes[0] = f"Speaker notes: {notes[0]}"
            out.append("<blockquote>" + "".join(f"<p>{_text(n)}</p>" for n in notes) + "</blockquote>")
    return out


def pptx_to_markdown(data: bytes, filename: str, limit: int) -> tuple[str, dict]:
    """(Markdown, facts) of a deck's bytes. Facts: ``slides`` (in the deck), ``slides_with_text``."""
    import io

    from pptx import Presentation

    from chunkscope.ingest.html import html_to_markdown

    check_unpacked(open_package(data, filename, _MAIN_PART, _POWERPOINT), filename, limit)
    try:  # a damaged part or a broken zip entry: one line, never a traceback
        slides = [_slide_html(slide) for slide in Presentation(io.BytesIO(data)).slides]
        mark = free_mark("".join("".join(s) for s in slides))  # a slide's text may hold private-use characters
        html = "".join("".join(s) + f"<p>{mark}</p>" for s in slides)
        md, _ = html_to_markdown(f"<html><body>{html}</body></html>")
    except RecursionError:
        raise IngestError(f"{filename}: nests too deeply to read (groups inside groups hundreds of times); "
                          "save it as PDF") from None
    except Exception as exc:
        raise unreadable(filename, "a PowerPoint deck", exc) from None
    return page_breaks(md, mark), {"slides": len(slides), "slides_with_text": sum(bool(s) for s in slides)}


def load_pptx_bytes(data: bytes, filename: str, name: str, limit: int) -> Document:
    md, facts = pptx_to_markdown(data, filename, limit)
    doc = office_document(md, name, "pptx", f"{filename} has no text on any of its {facts['slides']} slide(s) "
                          "(pictures or charts only?)")
    doc.meta["slides"] = facts["slides"]
    if facts["slides_with_text"] < facts["slides"]:
        n = facts["slides"] - facts["slides_with_text"]
        doc.warnings.append(f"{n} of {facts['slides']} slides have no text (blank, or pictures and charts only): they "
                            "are no pages, so page k is the k-th slide with text")
    return doc
