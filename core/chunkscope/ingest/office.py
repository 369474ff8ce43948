"""What the Office Open XML loaders share (Word ``.docx``, PowerPoint ``.pptx``): opening the zip package with one-line
refusals, a cap on how far its XML unpacks, and page marks carried through HTML into ``<!-- PageBreak -->`` lines.

A loader puts a mark (a private-use character the document does not use: ``free_mark``) where a page ends: in the
XML (a Word page break) or in the HTML it writes (after each slide). The HTML path keeps it as text;
``page_breaks`` then turns it into the Markdown page marker between blocks, the corpus's own convention
(``chunkscope.ingest.markdown``).
"""

from __future__ import annotations

import io
import re
import zipfile

from chunkscope.document import Document
from chunkscope.ingest.errors import IngestError, human_bytes
from chunkscope.ingest.markdown import PAGE_BREAK, document_from_markdown, has_text

PRIVATE_USE = "\ue000-\uf8ff"  # the Basic Multilingual Plane's private-use characters (as a regex class's body)
_USED_PRIVATE = re.compile(f"[{PRIVATE_USE}]|&#[xX]0*([0-9a-fA-F]{{1,8}});|&#0*([0-9]{{1,10}});")
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Office 97–2003 files, and packages protected with a password
# a heading's, quote's, list item's, row's, link's or emphasis's opening
_OPENING_MARKUP = re.compile(r"^[#>|*+_`\[\-\s]*(?:\d{1,9}[.)]\s*)?")


def open_package(data: bytes, filename: str, main_part: str, kind: tuple[str, str, str],
                 limit: int) -> zipfile.ZipFile:
    """The zip package of an Office file whose main part is ``main_part``; ``kind`` = (application, extension,
    old format's name), e.g. ("Word", ".docx", "Word 97–2003"). Anything else is an ``IngestError`` saying what
    the file is instead, and so is a package whose text unpacks past ``limit`` (``_check_unpacked``)."""
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
    _check_unpacked(package, filename, limit)
    return package


def _check_unpacked(package: zipfile.ZipFile, filename: str, limit: int) -> None:
    """Refuse a package whose text unpacks to more than ``limit`` bytes (a zip bomb, or XML too costly to read)
    before any part is read. Text: XML by name, or any part that deflates more than 2:1 (a parser follows the
    package's relationships, so XML may sit under any name). Reading XML costs about 7 s and 75 MB of memory per
    MB, so an Office file is never dearer to read than a web page of the largest size accepted; pictures barely
    compress, so the upload's own size bounds them."""
    text = sum(i.file_size for i in package.infolist()
               if i.filename.endswith((".xml", ".rels")) or i.file_size > 2 * i.compress_size)
    if text > limit:
        raise IngestError(f"{filename}: its text parts unpack to {human_bytes(text)}, over the {human_bytes(limit)} "
                          "size limit (text this large would take minutes to read)")


def free_mark(text: str) -> str:
    """A private-use character that ``text`` holds neither as itself nor as an XML character reference (an icon
    font's glyphs are private-use characters too; ``&#x0E000;`` is one)."""
    used = set()
    for m in _USED_PRIVATE.finditer(text):
        hex_ref, dec_ref = m.groups()
        used.add(int(hex_ref, 16) if hex_ref else int(dec_ref) if dec_ref else ord(m[0]))
    for code in range(0xE000, 0xF900):
        if code not in used:
            return chr(code)
    raise IngestError("the document uses every private-use character")  # 6,400 of them: never in practice


def office_document(md: str, name: str, fmt: str, empty: str) -> Document:
    """The Document of an Office file's Markdown (pages from its ``<!-- PageBreak -->`` lines); ``empty``: the
    message when it has no text."""
    if not has_text(md):
        raise IngestError(empty)
    doc = document_from_markdown(md, name)
    doc.source_format = fmt
    doc.meta["converted_from"] = fmt
    return doc


def page_breaks(md: str, mark: str) -> str:
    """Each ``mark`` as a ``<!-- PageBreak -->`` line between blocks: before the block it opens (no text before it
    in the block), else after the block it falls in; several between the same two blocks are one, and none
    comes before the first block or after the last. A mark inside fenced code is dropped (a marker there would
    be code); the code's blank lines are kept."""
    if mark not in md:
        return md
    from chunkscope.text.blocks import code_spans

    for a, b in reversed(code_spans(md)):
        md = md[:a] + md[a:b].replace(mark, "") + md[b:]
    out: list[str] = []
    pending = False  # a page ended after the last block written
    for block in md.split("\n\n"):
        body = block.replace(mark, "")
        if not body.strip():
            if mark in block:  # nothing but marks (a paragraph holding only a page break)
                pending = True
            elif out:
                out.append(block)  # a blank-line run (in code): kept as it was
            continue
        first = block.find(mark)
        opens = first >= 0 and not _OPENING_MARKUP.sub("", block[:first]).strip()
        if (pending or opens) and out:  # out opens with text: a blank run is kept only after some
            out.append(PAGE_BREAK)
        out.append(body)
        pending = mark in block.replace(mark, "", 1) if opens else first >= 0
    return "\n\n".join(out).rstrip() + "\n"
