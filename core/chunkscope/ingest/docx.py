"""Word documents (``.docx``: Microsoft Word, LibreOffice, Google Docs, pandoc): converted to HTML by mammoth,
then read as any HTML page (``chunkscope.ingest.html``), so both formats give the same Markdown for the same
structure.

mammoth reads the document's meaning, not its looks: a paragraph styled "Heading 1"…"Heading 6" (or "Title") is
a heading, and so is one in a template's own style with an outline level (set or inherited: ``_heading_styles``);
Word's numbered and bulleted paragraphs are lists, tables are tables, footnotes and endnotes come at the end as a
numbered list (their "[1]" marks stay in the text). Added here: code styles ("Source Code", "HTML Preformatted",
"Plain Text", "Code") become fenced code; images are left out (no image data is read; a caption paragraph
stays); comments are not the document's text and are left out. Linked files outside the package are never
opened (mammoth's default).

Pages: Word records where each page ended when it last laid the document out (``<w:lastRenderedPageBreak/>``)
and where the author forced one (a page-break character, a paragraph set to "page break before"). A page ends
after the paragraph in which such a break falls, or before the paragraph it opens; the breaks become
``<!-- PageBreak -->`` lines, the paper corpus's own marker (``chunkscope.ingest.markdown``), so the ``page``
chunker works on a Word file. A file saved by a program that records neither (LibreOffice, pandoc, python-docx)
has no pages, as a web page. Section breaks and a style's own "page break before" are not read.

A table cell of several paragraphs or a list keeps them as its lines, so a Word table stays a table. Equations
(OMML) are left out, as mammoth does. The file's embedded mammoth style map, if any, is ignored.

Refused with one line (``chunkscope.ingest.office``): a file that is not a Word package (an old ``.doc``, a
password-protected file, another zip), a package whose text unpacks past the size limit (a zip bomb, or XML that
would take minutes to read), a broken zip entry. The XML parser (expat ≥ 2.4) refuses entity-expansion bombs itself.
"""

from __future__ import annotations

import io
import re
import zipfile

from chunkscope.document import Document
from chunkscope.ingest.errors import IngestError, read_as
from chunkscope.ingest.office import free_mark, office_document, open_package, page_breaks

_MAIN_PART = "word/document.xml"
_WORD = ("Word", ".docx", "Word 97–2003")
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
# paragraph and run styles mammoth does not map by default; the built-in style names Word stores in English
_STYLE_MAP = "\n".join([
    "p[style-name='Title'] => h1:fresh",
    "p[style-name='Subtitle'] => p:fresh",
    *(f"p[style-name='{s}'] => pre:separator('\\n')"
      for s in ("Source Code", "HTML Preformatted", "Plain Text", "Code")),
    *(f"r[style-name='{s}'] => code" for s in ("Verbatim Char", "HTML Code", "Code Char")),
    "comment-reference => !",
])
# a page break in a run: Word's record of its last layout, or a page-break character the author typed
_RUN_BREAK_XML = re.compile(rb"<w:lastRenderedPageBreak\s*/>|<w:lastRenderedPageBreak\s*>\s*</w:lastRenderedPageBreak>"
                            rb"""|<w:br\b[^>]*\bw:type=["']page["'][^>]*/>""")
# a paragraph set to start a page ("page break before", not switched off): the mark goes at the paragraph's start
_BREAK_BEFORE_XML = re.compile(rb"""(<w:pPr>(?:(?!</w:pPr>).)*?<w:pageBreakBefore(?:\s*/>|\s+w:val=["'](?:1|true|on)["']\s*/>)"""
                               rb"(?:(?!</w:pPr>).)*</w:pPr>)", re.S)
# mammoth's notes that change nothing in the text: unmapped styles (read as paragraphs), pictures (left out), a
# style the document names without defining it (read as unstyled)
_EXPECTED_MESSAGES = ("Unrecognised", "Image of type", "Run style with ID", "Paragraph style with ID",
                      "Table style with ID")
_BACKLINK = re.compile(r'\s*<a href="#(?:foot|end)note-ref-[^"]*">↑</a>')
# a HYPERLINK field's switches that mammoth leaves in the target ('HYPERLINK "a.html" \l "Top" \o "tip"'): the
# target is the file, plus the place (\l) when there is one
_FIELD_TARGET = re.compile(r'href="([^"]*?)&quot;\s*(\\[a-zA-Z][^"]*)"')
_FIELD_PLACE = re.compile(r'\\[lL]\s*&quot;([^&"]*)')


def _field_target(m: re.Match) -> str:
    place = _FIELD_PLACE.search(m[2])
    return f'href="{m[1]}#{place[1]}"' if place else f'href="{m[1]}"'


def _with_page_marks(data: bytes, package: zipfile.ZipFile) -> tuple[io.BytesIO, int, str]:
    """The package with a mark character at each page break of its main part, how many, and the mark: the file
    itself when there is none, else a copy (images stored as they are, not compressed again)."""
    xml = package.read(_MAIN_PART)
    notes = [package.read(n) for n in ("word/footnotes.xml", "word/endnotes.xml") if n in package.namelist()]
    mark = free_mark(b"".join([xml, *notes]).decode("utf-8", "replace"))  # not a character the text uses
    run = f"<w:r><w:t>{mark}</w:t></w:r>".encode()
    marked, n = _RUN_BREAK_XML.subn(f"<w:t>{mark}</w:t>".encode(), xml)
    marked, before = _BREAK_BEFORE_XML.subn(lambda m: m[1] + run, marked)
    n += before
    if not n:
        return io.BytesIO(data), 0, mark
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as copy:
        for info in package.infolist():
            body = marked if info.filename == _MAIN_PART else package.read(info)
            text_part = info.filename.endswith((".xml", ".rels"))
            copy.writestr(info.filename, body, zipfile.ZIP_DEFLATED if text_part else zipfile.ZIP_STORED)
    out.seek(0)
    return out, n, mark


def _heading_styles(package: zipfile.ZipFile) -> dict[str, int]:
    """Paragraph styles that are headings without a built-in heading's name (style name -> level 1–6): Word's own
    test of a heading is its outline level (the navigation pane lists it), set on the style or inherited from
    the style it is based on ("Report Heading" based on "heading 2" is level 2). Built-in headings are mapped
    already. (A strict-format file's styles, in another namespace, are not read: its headings are the built-in
    ones.)"""
    from xml.etree import ElementTree

    try:
        root = ElementTree.fromstring(package.read("word/styles.xml"))
    except (KeyError, ElementTree.ParseError):
        return {}
    styles: dict[str, tuple[str, str | None, str | None]] = {}
    for st in root.iter(f"{_W}style"):
        if st.get(f"{_W}type") != "paragraph" or not st.get(f"{_W}styleId"):
            continue
        name, based, outline = st.find(f"{_W}name"), st.find(f"{_W}basedOn"), st.find(f"{_W}pPr/{_W}outlineLvl")
        styles[st.get(f"{_W}styleId", "")] = (
            (name.get(f"{_W}val") or "") if name is not None else "",
            based.get(f"{_W}val") if based is not None else None,
            outline.get(f"{_W}val") if outline is not None else None)

    def level(sid: str, depth: int = 0) -> int | None:
        """The heading level of style ``sid``: by its name ("heading 2"), its outline level, else its base style's."""
        name, based, outline = styles[sid]
        if (m := re.fullmatch(r"heading ([1-9])", name.strip().lower())) is not None:
            return int(m[1])
        if outline is not None:
            return int(outline) + 1 if outline in tuple("012345678") else None  # 9: body text
        return level(based, depth + 1) if based in styles and depth < 20 else None

    found = {}
    for sid, (style_name, _, _) in styles.items():
        n = level(sid)
        if n is not None and style_name and not re.fullmatch(r"heading [1-6]", style_name.lower()):
            found[style_name] = min(n, 6)
    return found


def docx_to_markdown(data: bytes, filename: str, limit: int) -> tuple[str, dict]:
    """(Markdown, facts) of a Word file's bytes. Facts: ``page_breaks`` (marks found), ``messages`` (mammoth's
    warnings other than unmapped styles)."""
    from chunkscope.extras import require
    from chunkscope.ingest.html import html_to_markdown

    mammoth = require("mammoth", "reading a Word file", IngestError)

    package = open_package(data, filename, _MAIN_PART, _WORD, limit)
    # a damaged part or a broken zip entry (bad CRC, encrypted, unknown compression): one line, no traceback
    with read_as(filename, "a Word document", "nests too deeply to read (tables or lists inside each other "
                 "hundreds of times); save it as PDF"):
        marked, breaks, mark = _with_page_marks(data, package)
        headings = "".join(f"\np[style-name='{_quoted(name)}'] => h{n}:fresh"
                           for name, n in _heading_styles(package).items())
        # the file's own embedded style map is not used: it could hide text or point mammoth at another part
        result = mammoth.convert_to_html(marked, style_map=_STYLE_MAP + headings, include_embedded_style_map=False,
                                         convert_image=lambda image: [])
        html = _FIELD_TARGET.sub(_field_target, _BACKLINK.sub("", result.value))
        md, _ = html_to_markdown(f"<html><body>{html}</body></html>", cells_as_text=True)
    messages = [m.message for m in result.messages if not m.message.startswith(_EXPECTED_MESSAGES)]
    return page_breaks(md, mark), {"page_breaks": breaks, "messages": messages}


def _quoted(name: str) -> str:
    """A style name inside a style map's quotes."""
    return name.replace("\\", "\\\\").replace("'", "\\'")


def load_docx_bytes(data: bytes, filename: str, name: str, limit: int) -> Document:
    """Load a Word (.docx) file's bytes; ``limit``: the most bytes its text parts may unpack to."""
    md, facts = docx_to_markdown(data, filename, limit)
    doc = office_document(md, name, "docx", f"{filename} has no text (an empty document, or one of images only)")
    if facts["messages"]:
        doc.warnings.append(f"the Word reader reported {len(facts['messages'])} problem(s), first: "
                            f"{facts['messages'][0][:160]}")
    return doc
