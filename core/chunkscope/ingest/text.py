"""Plain text (and the decoding shared with Markdown) -> Document.

UTF-8 is expected (a BOM is accepted, UTF-16 with a BOM too); other encodings are
detected with charset-normalizer, and text that cannot be decoded confidently is
refused with a clear message. Line endings become ``\\n``. Plain text has no pages
unless it contains form feeds (``\\f``): page k ends just after its form feed.
"""

from __future__ import annotations

import codecs

from chunkscope.document import Document, Span
from chunkscope.ingest.build import make_document
from chunkscope.ingest.errors import IngestError

# C0 control characters other than tab, newline, carriage return, form feed and ESC (ANSI colours)
_CONTROL = {chr(c) for c in range(32)} - {"\t", "\n", "\r", "\f", "\x1b"}


def decode_text(data: bytes, filename: str, declared: str | None = None) -> tuple[str, str]:
    """Decode bytes to text; return (text with ``\\n`` line endings, encoding name). ``declared``: the encoding
    the file names for itself (an HTML page's ``<meta charset>``), tried after a byte-order mark and before
    detection; bytes it does not decode are detected as any others."""
    if not data:
        raise IngestError(f"{filename} is empty")
    encoding = "utf-8"
    if data.startswith(codecs.BOM_UTF8):
        data, encoding = data[len(codecs.BOM_UTF8):], "utf-8-sig"
        text = _strict(data, "utf-8", filename)
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
        text = _strict(data, "utf-16", filename)
    else:
        if b"\x00" in data[:65536]:
            if _utf16_without_bom(data[:65536]):
                raise IngestError(f"{filename} looks like UTF-16 text without a byte-order mark (every other byte "
                                  "is NUL): save it as UTF-8, or as UTF-16 with a byte-order mark")
            raise IngestError(f"{filename} looks like binary data (NUL bytes), not text")
        found = _declared(data, declared) if declared else None
        if found is not None:
            text, encoding = found
        else:
            text, encoding = _detected(data, filename)
    sample = text[:65536]
    if sample and sum(ch in _CONTROL for ch in sample) > max(2, len(sample) // 100):
        raise IngestError(f"{filename} looks like binary data (control characters), not text")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise IngestError(f"{filename} contains no text (only whitespace)")
    return text, encoding


def _detected(data: bytes, filename: str) -> tuple[str, str]:
    """(text, encoding) of bytes without a byte-order mark: UTF-8, else what charset-normalizer finds."""
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = from_bytes(data)
    best = matches.best()
    # single-byte Latin codepages often tie; prefer the most common one (Windows-1252)
    if best is not None:
        for m in matches:
            if m.encoding in ("cp1252", "latin_1") and m.chaos <= best.chaos + 0.1:
                best = m
                break
    if best is None or best.encoding is None:
        raise IngestError(f"{filename} is not UTF-8 and its encoding could not be detected; save it as UTF-8")
    return str(best), best.encoding


def _declared(data: bytes, declared: str) -> tuple[str, str] | None:
    """(text, encoding) when ``data`` (no byte-order mark, no NUL bytes) decodes in the encoding it declares, else
    None. "iso-8859-1" and "ascii" are read as windows-1252, as browsers do (the WHATWG Encoding Standard)."""
    try:
        name = codecs.lookup(declared).name
    except LookupError:
        return None
    for enc in (["cp1252", name] if name in ("latin-1", "iso8859-1", "ascii") else [name]):
        try:
            return data.decode(enc), enc
        except UnicodeDecodeError:
            continue
    return None


def _utf16_without_bom(sample: bytes) -> bool:
    """NUL bytes that alternate: most bytes at even (UTF-16-BE) or at odd (UTF-16-LE) offsets are NUL, almost
    none at the others, as in UTF-16 text of Latin script."""
    even, odd = sample[0::2], sample[1::2]
    if len(odd) < 2:
        return False
    ne, no = even.count(0), odd.count(0)
    return max(ne, no) >= 0.5 * len(odd) and min(ne, no) <= 0.05 * len(odd)


def _strict(data: bytes, encoding: str, filename: str) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise IngestError(f"{filename}: invalid {encoding.upper()} at byte {exc.start}") from None


def form_feed_pages(text: str) -> list[Span]:
    """Pages split at form feeds (each page ends after its ``\\f``); [] without form feeds."""
    if "\f" not in text:
        return []
    pages: list[Span] = []
    pos = 0
    while True:
        ff = text.find("\f", pos)
        if ff < 0:
            break
        pages.append(Span(pos, ff + 1))
        pos = ff + 1
    if pos < len(text):
        if text[pos:].strip() or not pages:
            pages.append(Span(pos, len(text)))
        else:  # trailing whitespace after the last form feed belongs to the last page
            pages[-1] = Span(pages[-1].start, len(text))
    return pages


def document_from_decoded(text: str, name: str, encoding: str, source_format: str,
                          pages: list[Span], markdown: bool) -> Document:
    """Decoded text (Markdown or plain) -> Document, through the shared block builder."""
    warnings = []
    if encoding not in ("utf-8", "utf-8-sig", "ascii"):
        warnings.append(f"decoded as {encoding} (not UTF-8)")
    return make_document(name, text, source_format, pages, markdown=markdown, warnings=warnings,
                         meta={"encoding": encoding})


def document_from_text(text: str, name: str, encoding: str = "utf-8") -> Document:
    """Plain text -> Document (pages from form feeds)."""
    return document_from_decoded(text, name, encoding, "text", form_feed_pages(text), markdown=False)


def load_text_bytes(data: bytes, filename: str, name: str) -> Document:
    """Load a plain-text file's bytes."""
    text, encoding = decode_text(data, filename)
    return document_from_text(text, name, encoding)
