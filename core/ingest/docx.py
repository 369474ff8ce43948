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
and where the author forced a page break. A page ends after the paragraph in which such a break falls, or
before the paragraph it opens; the breaks become ``<!-- PageBreak -->`` lines, the paper corpus's own marker
(``chunkscope.ingest.markdown``), so the ``page`` chunker works on a Word file. A file saved by a program that
records neither (pandoc, python-docx) has no pages, as a web page.

Refused with one line: a file that is not a Word package (an old ``.doc``, a password-protected file, another
zip), and a package whose text parts unpack to more than ``office.XML_LIMIT_RATIO`` times the upload size limit (a zip
bomb would otherwise fill memory). The XML parser (expat ≥ 2.4) refuses entity-expansion bombs itself.
"""

from __future__ import annotations

import io
import re
import zipfile

from chunkscope.document import Document
from chunkscope.ingest.errors import unreadable
from chunkscope.ingest.office import MARK, check_unpacked, office_document, open_package, page_breaks

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
# a page break: Word's record of its last layout, or a break the author forced (a run child either way)
_PAGE_BREAK_XML = re.compile(rb'<w:lastRenderedPageBreak\s*/>|<w:br\b[^>]*\bw:type="page"[^>]*/>')
_MARK_RUN = f"<w:t>{MARK}</w:t>".encode()
_BACKLINK = re.compile(r'\s*<a href="#(?:foot|end)note-ref-[^"]*">↑</a>')
# a HYPERLINK field with a file and a place in it ('HYPERLINK "a.html" \l "Top"', LibreOffice): mammoth keeps the
# switch in the target
_FIELD_ANCHOR = re.compile(r'href="([^"]*?)&quot; \\l &quot;([^"]*)"')


def _with_page_marks(data: bytes, package: zipfile.ZipFile) -> tuple[io.BytesIO, int]:
    """The package with a ``MARK`` character at each page break of its main part, and how many: the file itself
    when there is none, else a copy (images stored as they are, not compressed again)."""
    marked, n = _PAGE_BREAK_XML.subn(_MARK_RUN, package.read(_MAIN_PART))
    if not n:
        return io.BytesIO(data), 0
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as copy:
        for info in package.infolist():
            body = marked if info.filename == _MAIN_PART else package.read(info)
            xml = info.filename.endswith((".xml", ".rels"))
            copy.writestr(info.filename, body, zipfile.ZIP_DEFLATED if xml else zipfile.ZIP_STORED)
    out.seek(0)
    return out, n


def _heading_styles(package: zipfile.ZipFile) -> dict[str, int]:
    """Paragraph styles that are headings without a built-in heading's name (style id -> level 1–6): Word's own
    test of a heading is its outline level (the navigation pane lists it), set on the style or inherited from
    the style it is based on ("Report Heading" based on "heading 2" is level 2). Built-in headings are mapped
    already, and so are styles mammoth cannot name in a style map (an id that is not plain letters and digits)."""
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
            (name.get(f"{_W}val") or "").strip().lower() if name is not None else "",
            based.get(f"{_W}val") if based is not None else None,
            outline.get(f"{_W}val") if outline is not None else None)

    def level(sid: str, depth: int = 0) -> int | None:
        name, based, outline = styles[sid]
        if (m := re.fullmatch(r"heading ([1-9])", name)) is not None:
            return int(m[1])
        if outline is not None:
            return int(outline) + 1 if outline.isdigit() and int(outline) < 9 else None  # 9: body text
        return level(based, depth + 1) if based in styles and depth < 20 else None

    found = {}
    for sid, (style_name, _, _) in styles.items():
        n = level(sid)
        if n is not None and re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", sid) and not re.fullmatch(r"heading [1-6]", style_name):
            found[sid] = min(n, 6)
    return found


def docx_to_markdown(data: bytes, filename: str, limit: int) -> tuple[str, dict]:
    """(Markdown, facts) of a Word file's bytes. Facts: ``page_breaks`` (marks found), ``messages`` (mammoth's
    warnings other than unmapped styles)."""
    import mammoth

    from chunkscope.ingest.html import html_to_markdown

    package = open_package(data, filename, _MAIN_PART, _WORD)
    check_unpacked(package, filename, limit)
    marked, breaks = _with_page_marks(data, package)
    try:
        headings = "".join(f"\np.{sid} => h{n}:fresh" for sid, n in _heading_styles(package).items())
        result = mammoth.convert_to_html(marked, style_map=_STYLE_MAP + headings, convert_image=lambda image: [])
    except Exception as exc:  # a damaged part: one line, never a traceback
        raise unreadable(filename, "a Word document", exc) from None
    html = _FIELD_ANCHOR.sub(r'href="\1#\2"', _BACKLINK.sub("", result.value))
    md, _ = html_to_markdown(f"<html><body>{html}</body></html>")
    messages = [m.message for m in result.messages if not m.message.startswith("Unrecognised")]
    return page_breaks(md), {"page_breaks": breaks, "messages": messages}


def load_docx_bytes(data: bytes, filename: str, name: str, limit: int) -> Document:
    md, facts = docx_to_markdown(data, filename, limit)
    doc = office_document(md, name, "docx", f"{filename} has no text (an empty document, or one of images only)")
    if facts["messages"]:
        doc.warnings.append(f"the Word reader reported {len(facts['messages'])} problem(s), first: "
                            f"{facts['messages'][0][:160]}")
    return doc
