"""What the Office Open XML loaders share (Word ``.docx``, PowerPoint ``.pptx``): opening the zip package with one-line
refusals, a cap on how far its XML unpacks, and page marks carried through HTML into ``<!-- PageBreak -->`` lines.

A loader puts ``MARK`` (a private-use character) where a page ends: in the XML (a Word page break) or in the HTML
it writes (after each slide). The HTML path keeps it as text; ``page_breaks`` then turns it into the Markdown page
marker between blocks, the corpus's own convention (``chunkscope.ingest.markdown``).
"""

from __future__ import annotations

import io
import re
import zipfile

from chunkscope.document import Document
from chunkscope.ingest.errors import IngestError, human_bytes
from chunkscope.ingest.markdown import PAGE_BREAK, document_from_markdown

XML_LIMIT_RATIO = 4  # the text parts may unpack to 4 × the upload limit (a 50 MB limit: 200 MB of XML)
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Office 97–2003 files, and packages protected with a password
MARK = "\ue000"  # stands for a page end through mammoth, the HTML and markdownify
_OPENING_MARKUP = re.compile(r"^[#>|*+\-\s]*(?:\d{1,9}[.)]\s*)?")  # a heading's, quote's, list item's, row's opening


def open_package(data: bytes, filename: str, main_part: str, kind: tuple[str, str, str]) -> zipfile.ZipFile:
    """The zip package of an Office file whose main part is ``main_part``; ``kind`` = (application, extension,
    old format's name), e.g. ("Word", ".docx", "Word 97–2003"). Anything else is an ``IngestError`` saying what
    the file is instead."""
    app, ext, old = kind
    if data.startswith(OLE_MAGIC):
        raise IngestError(f"{filename} is not a {app} {ext} package: it is an old {old} file or one protected "
                          f"with a password. Save it as {ext} without a password (or as PDF)")
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        names = set(package.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        raise IngestError(f"{filename} is not a {app} {ext} file (not a zip package: damaged, or another "
                          f"format saved as {ext})") from None
    if main_part not in names:
        raise IngestError(f"{filename} is a zip package without {main_part}: not a {app} document "
                          "(another Office or OpenDocument file renamed?)")
    return package


def check_unpacked(package: zipfile.ZipFile, filename: str, limit: int) -> None:
    """Refuse a package whose XML parts unpack to more than ``XML_LIMIT_RATIO`` × ``limit`` bytes (a zip bomb)
    before any is parsed."""
    xml = sum(i.file_size for i in package.infolist() if i.filename.endswith((".xml", ".rels")))
    if xml > XML_LIMIT_RATIO * limit:
        raise IngestError(f"{filename}: its text parts unpack to {human_bytes(xml)}, over the "
                          f"{human_bytes(XML_LIMIT_RATIO * limit)} this loader reads ({XML_LIMIT_RATIO} × the size limit)")


def office_document(md: str, name: str, fmt: str, empty: str) -> Document:
    """The Document of an Office file's Markdown (pages from its ``<!-- PageBreak -->`` lines); ``empty``: the
    message when it has no text."""
    if not md.replace(PAGE_BREAK, "").strip().lstrip("#").strip():
        raise IngestError(empty)
    doc = document_from_markdown(md, name)
    doc.source_format = fmt
    doc.meta["converted_from"] = fmt
    return doc


def page_breaks(md: str) -> str:
    """Each ``MARK`` as a ``<!-- PageBreak -->`` line between blocks: before the block it opens (no text before it
    in the block), else after the block it falls in; several between the same two blocks are one, and none
    comes before the first block or after the last. A mark inside fenced code is dropped (a marker there would
    be code)."""
    if MARK not in md:
        return md
    from chunkscope.blocks import code_spans

    for a, b in reversed(code_spans(md)):
        md = md[:a] + md[a:b].replace(MARK, "") + md[b:]
    out: list[str] = []
    pending = False  # a page ended after the last block written
    for block in md.split("\n\n"):
        body = block.replace(MARK, "")
        if not body.strip():  # nothing but marks (a paragraph holding only a page break)
            pending = pending or MARK in block
            continue
        first = block.find(MARK)
        opens = first >= 0 and not _OPENING_MARKUP.sub("", block[:first]).strip()
        if (pending or opens) and out:
            out.append(PAGE_BREAK)
        out.append(body)
        pending = MARK in block.replace(MARK, "", 1) if opens else first >= 0
    return "\n\n".join(out).rstrip() + "\n"
