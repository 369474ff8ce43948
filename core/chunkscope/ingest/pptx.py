"""PowerPoint decks (``.pptx``: PowerPoint, LibreOffice Impress, Google Slides, Keynote's export): each slide is a
page, read as HTML written from the deck (python-pptx), then as any web page (``chunkscope.ingest.html``).

A slide's title placeholder is its heading (``#`` on a title slide, ``##`` on the others); its other shapes follow
in reading order (top to bottom, a row of shapes left to right; a group's shapes in place of the group); date,
footer, slide-number and header placeholders are left out. A text frame's paragraphs are a list when they show
bullets, as PowerPoint inherits them (``_Bullets``), nested by their indent level, else paragraphs; tables are Markdown tables (their first row as header); speaker notes follow the
slide as a quote starting "Speaker notes:" (they are often where a deck's explanation is). Pictures, charts and
media are left out (no image is read). Each slide ends a page (``<!-- PageBreak -->``): the ``page`` chunker is one
chunk per slide. A slide without text gives no page, so page numbers count the slides that have text; a hidden
slide is read like the others (its text is in the file); a shape that cannot be read is left out and counted in a
warning.

Refused in one line, as Word files (``chunkscope.ingest.office``): an old ``.ppt`` or a password-protected deck, a
zip that is not a deck, a deck whose XML unpacks past the cap. python-pptx's XML parser resolves no entities.
"""

from __future__ import annotations

import html
from typing import Any

from chunkscope.document import Document, Span
from chunkscope.ingest.errors import IngestError, read_as
from chunkscope.ingest.office import free_mark, office_document, open_package, page_breaks
from chunkscope.text.markup import ZERO_WIDTH

_MAIN_PART = "ppt/presentation.xml"
_POWERPOINT = ("PowerPoint", ".pptx", "PowerPoint 97–2003")
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"


_LEVELS = tuple(f"{_A}lvl{n}pPr" for n in range(1, 10))
_SKIPPED_PLACEHOLDERS = ("DATE", "FOOTER", "SLIDE_NUMBER", "HEADER")  # the slide's furniture, not its text
_ROW_EMU = 180_000  # shapes whose tops are within 0.5 cm read as one row, left to right


def _visible(s: str) -> str:
    return " ".join(s.translate(ZERO_WIDTH).split())


def _text(s: str) -> str:
    """A run of slide text as HTML: escaped, a vertical tab (a line break in the paragraph) as ``<br>``."""
    return html.escape(s).replace("\v", "<br>").replace("\n", "<br>")


def _says_bullet(ppr: Any) -> bool | None:
    """What a paragraph-properties element says of bullets: True (a bullet character or numbering), False
    (``buNone``), None (nothing: ask the style it inherits from)."""
    if ppr is None:
        return None
    if ppr.find(f"{_A}buNone") is not None:
        return False
    if ppr.find(f"{_A}buChar") is not None or ppr.find(f"{_A}buAutoNum") is not None:
        return True
    return None


class _Bullets:
    """Whether a shape's paragraphs show bullets, as PowerPoint inherits it: the paragraph, the shape's list
    style, the layout's placeholder of the same index, the master's placeholder of the same type, the master's
    body text style (placeholders), else none (a text box: the master's "other" style has no bullets)."""

    def __init__(self, slide: Any, shape: Any) -> None:
        self.styles: list[Any] = [_list_style(shape)]
        self.default = False
        if not shape.is_placeholder:
            return
        fmt = shape.placeholder_format
        layout = slide.slide_layout
        self.styles += [_list_style(ph) for ph in layout.placeholders if ph.placeholder_format.idx == fmt.idx]
        self.styles += [_list_style(ph) for ph in layout.slide_master.placeholders
                        if ph.placeholder_format.type == fmt.type]
        body = layout.slide_master.element.find(f"{_P}txStyles/{_P}bodyStyle")
        self.styles.append(body)
        self.default = True

    def __call__(self, paragraph: Any) -> bool:
        level = _LEVELS[min(paragraph.level, 8)]
        for ppr in (paragraph._p.pPr, *(s.find(level) for s in self.styles if s is not None)):
            if (said := _says_bullet(ppr)) is not None:
                return said
        return self.default


def _list_style(shape: Any) -> Any:
    body = shape.element.find(f".//{_P}txBody")
    return body.find(f"{_A}lstStyle") if body is not None else None


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


def _frame_html(frame: Any, bullets: _Bullets) -> list[str]:
    """A text frame's paragraphs as HTML: runs of bulleted ones as nested lists, the others as ``<p>``."""
    out: list[str] = []
    items: list[tuple[int, str]] = []
    for p in frame.paragraphs:
        text = p.text.strip()
        if not _visible(text):
            continue
        if bullets(p):
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
    """A table as HTML, without its blank rows (none at all for a table of blank cells)."""
    rows = []
    for row in table.rows:
        cells = [_visible(cell.text) for cell in row.cells]
        if any(cells):
            rows.append("<tr>" + "".join(f"<td>{_text(c)}</td>" for c in cells) + "</tr>")
    return [f"<table>{''.join(rows)}</table>"] if rows else []


def _reading_order(shapes: Any) -> list[Any]:
    """Top to bottom; shapes whose tops are within ``_ROW_EMU`` of a row's first one are that row, left to right."""
    rows: list[list[Any]] = []
    for shape in sorted(shapes, key=lambda s: s.top or 0):
        if rows and (shape.top or 0) - (rows[-1][0].top or 0) <= _ROW_EMU:
            rows[-1].append(shape)
        else:
            rows.append([shape])
    return [s for row in rows for s in sorted(row, key=lambda s: s.left or 0)]


def _shape_html(slide: Any, shape: Any) -> list[str]:
    from pptx.shapes.group import GroupShape

    if isinstance(shape, GroupShape):
        return _shapes_html(slide, shape.shapes, None)
    if getattr(shape, "has_table", False) and shape.has_table:
        return _table_html(shape.table)
    if not (getattr(shape, "has_text_frame", False) and shape.has_text_frame):
        return []  # a picture, a chart, media
    if shape.is_placeholder and shape.placeholder_format.type is not None \
            and shape.placeholder_format.type.name in _SKIPPED_PLACEHOLDERS:
        return []
    return _frame_html(shape.text_frame, _Bullets(slide, shape))


def _shapes_html(slide: Any, shapes: Any, title_id: int | None, skipped: list[int] | None = None) -> list[str]:
    """The shapes' HTML in reading order; a shape that cannot be read (an ink stroke, a damaged attribute) is
    counted in ``skipped`` and left out, not the deck."""
    out: list[str] = []
    try:
        ordered = _reading_order(shapes)
    except (ValueError, TypeError, AttributeError, NotImplementedError):
        ordered = list(shapes)  # a position that is not a number: the file's order
    for shape in ordered:
        try:
            if shape.shape_id == title_id:
                continue
            out += _shape_html(slide, shape)
        except RecursionError:
            raise
        except Exception:  # noqa: BLE001 - one odd shape: left out and counted, never the whole deck
            if skipped is not None:
                skipped.append(1)
    return out


def _slide_html(slide: Any, skipped: list[int]) -> list[str]:
    from pptx.enum.shapes import PP_PLACEHOLDER

    out: list[str] = []
    title_id = None
    try:
        title = slide.shapes.title
        heading = _visible(title.text_frame.text) if title is not None and title.has_text_frame else ""
        if heading:
            tag = "h1" if title.placeholder_format.type == PP_PLACEHOLDER.CENTER_TITLE else "h2"
            out.append(f"<{tag}>{_text(heading)}</{tag}>")
            title_id = title.shape_id
    except (ValueError, KeyError, AttributeError, NotImplementedError):
        skipped.append(1)
    out += _shapes_html(slide, slide.shapes, title_id, skipped)
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = [p.text.strip() for p in slide.notes_slide.notes_text_frame.paragraphs if _visible(p.text)]
        if notes:
            notes[0] = f"Speaker notes: {notes[0]}"
            out.append("<blockquote>" + "".join(f"<p>{_text(n)}</p>" for n in notes) + "</blockquote>")
    return out


def pptx_to_markdown(data: bytes, filename: str, limit: int) -> tuple[str, dict]:
    """(Markdown, facts) of a deck's bytes. Facts: ``slides`` (in the deck), ``slides_with_text``, ``skipped``
    (shapes that could not be read)."""
    import io

    from chunkscope.extras import require
    from chunkscope.ingest.html import html_to_markdown

    Presentation = require("pptx", "reading a PowerPoint deck", IngestError).Presentation

    open_package(data, filename, _MAIN_PART, _POWERPOINT, limit)
    skipped: list[int] = []
    with read_as(filename, "a PowerPoint deck", "nests too deeply to read (groups inside groups hundreds of "
                 "times); save it as PDF"):
        slides = [_slide_html(slide, skipped) for slide in Presentation(io.BytesIO(data)).slides]
        mark = free_mark("".join("".join(s) for s in slides))  # a slide's text may hold private-use characters
        body = "".join("".join(s) + f"<p>{mark}</p>" for s in slides)
        md, _ = html_to_markdown(f"<html><body>{body}</body></html>")
    facts = {"slides": len(slides), "slides_with_text": sum(bool(s) for s in slides), "skipped": len(skipped)}
    return page_breaks(md, mark), facts


def load_pptx_bytes(data: bytes, filename: str, name: str, limit: int) -> Document:
    """Load a PowerPoint (.pptx) deck's bytes; ``limit``: the most bytes its text parts may unpack to."""
    md, facts = pptx_to_markdown(data, filename, limit)
    doc = office_document(md, name, "pptx", f"{filename} has no text on any of its {facts['slides']} slide(s) "
                          "(pictures or charts only?)")
    doc.meta["slides"] = facts["slides"]
    if not doc.pages:  # one slide with text: one page
        doc.pages = [Span(0, len(doc.text))]
    if facts["slides_with_text"] < facts["slides"]:
        n = facts["slides"] - facts["slides_with_text"]
        doc.warnings.append(f"{n} of {facts['slides']} slides have no text (blank, or pictures and charts only): they "
                            "are no pages, so page k is the k-th slide with text")
    if facts["skipped"]:
        doc.warnings.append(f"{facts['skipped']} shape(s) could not be read (damaged, or a kind this reader does not "
                            "know, such as ink) and are left out")
    return doc
