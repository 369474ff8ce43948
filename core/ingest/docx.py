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
zip), and a package whose text parts unpack to more than ``XML_LIMIT_RATIO`` times the upload size limit (a zip
bomb would otherwise fill memory). The XML parser (expat ≥ 2.4) refuses entity-expansion bombs itself.
"""

from __future__ import annotations

import io
import re
import zipfile

from chunkscope.document import Document
from chunkscope.ingest.errors import IngestError, human_bytes
from chunkscope.ingest.markdown import PAGE_BREAK, document_from_markdown

XML_LIMIT_RATIO = 4  # the text parts may unpack to 4 × the upload limit (a 50 MB limit: 200 MB of XML)
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Word 97–2003 files and password-protected packages
_MAIN_PART = "word/document.xml"
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
_MARK = "\ue000"  # a private-use character standing for a page break through mammoth and markdownify
_MARK_RUN = f"<w:t>{_MARK}</w:t>".encode()
_OPENING_MARKUP = re.compile(r"^[#>|*+\-\s]*(?:\d{1,9}[.)]\s*)?")  # a heading's, quote's, list item's, row's opening
_BACKLINK = re.compile(r'\s*<a href="#(?:foot|end)note-ref-[^"]*">↑</a>')
# a HYPERLINK field with a file and a place in it ('HYPERLINK "a.html" \l "Top"', LibreOffice): mammoth keeps the
# switch in the target
_FIELD_ANCHOR = re.compile(r'href="([^"]*?)&quot; \\l &quot;([^"]*)"')


def _package(data: bytes, filename: str) -> zipfile.ZipFile:
    if data.startswith(_OLE_MAGIC):
        raise IngestError(f"{filename} is not a Word .docx package: it is an old Word 97–2003 file or one "
                          "protected with a password. Save it as .docx without a password (or as PDF)")
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        names = set(package.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        raise IngestError(f"{filename} is not a Word .docx file (not a zip package: damaged, or another "
                          "format saved as .docx)") from None
    if _MAIN_PART not in names:
        raise IngestError(f"{filename} is a zip package without {_MAIN_PART}: not a Word document "
                          "(an .odt, .xlsx or .pptx file renamed?)")
    return package


def _check_unpacked(package: zipfile.ZipFile, filename: str, limit: int) -> None:
    xml = sum(i.file_size for i in package.infolist() if i.filename.endswith((".xml", ".rels")))
    if xml > XML_LIMIT_RATIO * limit:
        raise IngestError(f"{filename}: its text parts unpack to {human_bytes(xml)}, over the "
                          f"{human_bytes(XML_LIMIT_RATIO * limit)} this loader reads ({XML_LIMIT_RATIO} × the size limit)")


def _with_page_marks(data: bytes, package: zipfile.ZipFile) -> tuple[io.BytesIO, int]:
    """The package with a ``_MARK`` character at each page break of its main part, and how many: the file itself
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


def _page_breaks(md: str) -> str:
    """Each page-break mark as a ``<!-- PageBreak -->`` line between blocks: before the block it opens (no text
    before it in the block), else after the block it falls in; several between the same two blocks are one. A
    mark inside fenced code is dropped (a marker there would be code)."""
    if _MARK not in md:
        return md
    from chunkscope.blocks import code_spans

    for a, b in reversed(code_spans(md)):
        md = md[:a] + md[a:b].replace(_MARK, "") + md[b:]
    out: list[str] = []
    pending = False  # a page ended after the last block written
    for block in md.split("\n\n"):
        body = block.replace(_MARK, "")
        if not body.strip():  # nothing but marks (a paragraph holding only a page break)
            pending = pending or _MARK in block
            continue
        first = block.find(_MARK)
        opens = first >= 0 and not _OPENING_MARKUP.sub("", block[:first]).strip()
        if (pending or opens) and out:
            out.append(PAGE_BREAK)
        out.append(body)
        pending = _MARK in block.replace(_MARK, "", 1) if opens else first >= 0
    return "\n\n".join(out).rstrip() + "\n"


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

    package = _package(data, filename)
    _check_unpacked(package, filename, limit)
    marked, breaks = _with_page_marks(data, package)
    try:
        headings = "".join(f"\np.{sid} => h{n}:fresh" for sid, n in _heading_styles(package).items())
        result = mammoth.convert_to_html(marked, style_map=_STYLE_MAP + headings, convert_image=lambda image: [])
    except Exception as exc:  # a damaged part: one line, never a traceback
        raise IngestError(f"{filename}: could not be read as a Word document ({type(exc).__name__}: "
                          f"{' '.join(str(exc).split())[:160]})") from None
    html = _FIELD_ANCHOR.sub(r'href="\1#\2"', _BACKLINK.sub("", result.value))
    md, _ = html_to_markdown(f"<html><body>{html}</body></html>")
    messages = [m.message for m in result.messages if not m.message.startswith("Unrecognised")]
    return _page_breaks(md), {"page_breaks": breaks, "messages": messages}


def load_docx_bytes(data: bytes, filename: str, name: str, limit: int) -> Document:
    md, facts = docx_to_markdown(data, filename, limit)
    if not md.replace(PAGE_BREAK, "").strip().lstrip("#").strip():
        raise IngestError(f"{filename} has no text (an empty document, or one of images only)")
    doc = document_from_markdown(md, name)
    doc.source_format = "docx"
    doc.meta.update(converted_from="docx")
    if facts["messages"]:
        doc.warnings.append(f"the Word reader reported {len(facts['messages'])} problem(s), first: "
                            f"{facts['messages'][0][:160]}")
    return doc
