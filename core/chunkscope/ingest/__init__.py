"""Load a document from a file or uploaded bytes: one loader per format -> ``Document``.

Public API::

    load_document(path, *, name=None, max_bytes=None) -> Document
    load_bytes(data, filename, max_bytes=None, *, name=None) -> Document
    IngestError           # bad input; str(err) is one specific line
    SUPPORTED_EXTENSIONS  # {".pdf": "pdf", ".md": "markdown", ...}
    resolve_max_bytes(max_bytes=None) -> int   # argument > $CHUNKSCOPE_MAX_BYTES > 50 MB

The format follows the file extension (``.pdf``, ``.md``/``.markdown``, ``.txt``/``.text``,
``.html``/``.htm``, ``.docx``, ``.pptx``, ``.json``); bytes starting with ``%PDF-`` are read as a PDF whatever the extension. A
``.json`` file is either a reference JSON (the paper's parsed corpus: kept exactly) or a
Document written by ``chunkscope ingest --json``. Every Document gets a detected language.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from chunkscope.document import Document
from chunkscope.ingest.errors import IngestError, human_bytes, json_error
from chunkscope.text.language import detect_language

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMAT_WORDS",
    "FORMATS_IN_BRIEF",
    "FORMAT_SHORT",
    "IngestError",
    "SUPPORTED_EXTENSIONS",
    "load_bytes",
    "load_document",
    "resolve_max_bytes",
    "with_language",
]

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
MAX_BYTES_ENV = "CHUNKSCOPE_MAX_BYTES"
SUPPORTED_EXTENSIONS = {
    ".pdf": "pdf",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".json": "json",
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
    ".pptx": "pptx",
}
# each format in words ("loaded from a Word file")
FORMAT_WORDS = {"pdf": "a PDF", "markdown": "Markdown", "text": "plain text", "json": "JSON", "html": "a web page",
                "docx": "a Word file", "pptx": "a PowerPoint deck"}
# each format as a help text lists it; FORMATS_IN_BRIEF is the list ("PDF, Word (.docx), ... or JSON")
FORMAT_SHORT = {"pdf": "PDF", "docx": "Word (.docx)", "pptx": "PowerPoint (.pptx)", "markdown": "Markdown",
                "html": "HTML", "text": "plain text", "json": "JSON"}
FORMATS_IN_BRIEF = ", ".join(list(FORMAT_SHORT.values())[:-1]) + " or " + list(FORMAT_SHORT.values())[-1]
# formats a user can save as one that is read, and how
_SAVE_AS = {".doc": "a Word 97–2003 file: save it as .docx or PDF",
            ".ppt": "a PowerPoint 97–2003 deck: save it as .pptx or PDF",
            ".odp": "an OpenDocument presentation: save it as .pptx or PDF",
            ".odt": "an OpenDocument text: save it as .docx or PDF",
            ".rtf": "rich text: save it as .docx or PDF"}


def resolve_max_bytes(max_bytes: int | None = None) -> int:
    """The size limit in bytes: the argument, else ``$CHUNKSCOPE_MAX_BYTES``, else 50 MB."""
    if max_bytes is not None:
        if int(max_bytes) <= 0:
            raise IngestError(f"the size limit must be a positive number of bytes (got {max_bytes})")
        return int(max_bytes)
    env = os.environ.get(MAX_BYTES_ENV, "").strip()
    if env:
        try:
            value = int(float(env))
        except ValueError:
            raise IngestError(f"{MAX_BYTES_ENV} must be a number of bytes (got {env!r})") from None
        if value <= 0:
            raise IngestError(f"{MAX_BYTES_ENV} must be a positive number of bytes (got {env!r})")
        return value
    return DEFAULT_MAX_BYTES


def _check_size(size: int, filename: str, limit: int) -> None:
    from chunkscope.sharing import served_shared

    if size > limit:  # a shared server's users cannot raise its limit: no hint at the operator's setting
        raise IngestError(
            f"{filename} is {human_bytes(size)}, over "
            + (f"this server's {human_bytes(limit)} size limit" if served_shared() else
               f"the {human_bytes(limit)} size limit (raise it with {MAX_BYTES_ENV} or --max-bytes)")
        )


DEFAULT_MAX_PAGES = 10_000
MAX_PAGES_ENV = "CHUNKSCOPE_MAX_PAGES"  # also the shared-mode page limit (chunkscope.sharing)


def _check_pages(data: bytes, filename: str) -> None:
    """Refuse a PDF with more pages than ``$CHUNKSCOPE_MAX_PAGES`` (default 10,000) before parsing any."""
    try:
        limit = int(os.environ.get(MAX_PAGES_ENV, "").strip() or DEFAULT_MAX_PAGES)
    except ValueError:
        limit = DEFAULT_MAX_PAGES
    try:
        import pymupdf

        with pymupdf.open(stream=data, filetype="pdf") as d:
            n = d.page_count
    except Exception:  # noqa: BLE001 - a damaged file: the loader gives the specific message
        return
    if n > limit:
        from chunkscope.sharing import served_shared

        raise IngestError(f"{filename} has {n:,} pages; "
                          + (f"this server takes at most {limit:,}" if served_shared() else
                             f"the limit is {limit:,} ({MAX_PAGES_ENV})"))


def _format_of(filename: str, data: bytes | None = None) -> str:
    ext = Path(filename).suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        shown = f"'{ext}'" if ext else "(no extension)"
        hint = f" ({_SAVE_AS[ext]})" if ext in _SAVE_AS else ""
        raise IngestError(
            f"{filename}: unsupported file type {shown}{hint}; supported: {', '.join(SUPPORTED_EXTENSIONS)}"
        )
    if data is not None and data[:1024].lstrip().startswith(b"%PDF-"):
        return "pdf"  # a PDF saved under another supported extension
    return SUPPORTED_EXTENSIONS[ext]


def _load_json(data: bytes, filename: str, name: str | None) -> Document:
    from chunkscope.ingest.reference import ReferenceFormatError, document_from_reference, is_reference_json
    from chunkscope.ingest.text import decode_text

    text, _ = decode_text(data, filename)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{filename}: invalid JSON ({json_error(exc)})") from None
    except RecursionError:
        raise IngestError(f"{filename}: JSON nested too deeply to be a document") from None
    try:
        if is_reference_json(obj):
            doc = document_from_reference(obj, name=name or (None if obj.get("document_name") else Path(filename).stem))
            _label_gold_blocks(doc)
            return doc
        if isinstance(obj, dict) and isinstance(obj.get("text"), str) and "blocks" in obj and "name" in obj:
            doc = Document.from_dict(obj)
            doc.check_blocks()
            if name:
                doc.name = name
            return doc
    except ReferenceFormatError as exc:
        raise IngestError(f"{filename}: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise IngestError(f"{filename}: not a valid ChunkScope document JSON ({exc})") from None
    raise IngestError(
        f"{filename}: JSON is neither a reference document (full_text, split_points) "
        "nor a ChunkScope document (name, text, blocks)"
    )


def _label_gold_blocks(doc: Document) -> None:
    """Give a reference document's gold blocks their kinds (heading, table, layout...).

    The gold boundaries are never changed: kinds are copied from ``chunkscope.text.blocks`` only when
    its boundaries are exactly the gold ones (true for all seven dev-corpus documents);
    otherwise the blocks keep the kind ``gold``.
    """
    from chunkscope.text.blocks import build_blocks

    try:
        built, _ = build_blocks(doc.text, doc.pages)
    except ValueError:
        return
    if [(b.start, b.end) for b in built] == [(b.start, b.end) for b in doc.blocks]:
        doc.blocks = built
        doc.meta["block_kinds"] = "chunkscope.text.blocks (boundaries identical to split_points)"
    else:
        doc.meta["block_kinds"] = "gold (chunkscope.text.blocks disagrees with split_points)"


def _set_language(doc: Document, language: str | None) -> None:
    detected = doc.meta.get("language_detected", doc.language)
    code = (language or "").strip().lower()
    if code and code != detected:
        doc.meta["language_detected"] = detected
        doc.language = code
    else:  # back to the detected language
        doc.meta.pop("language_detected", None)
        doc.language = detected


def with_language(doc: Document, language: str | None) -> Document:
    """A copy of ``doc`` whose language is ``language`` (ISO 639-1 code, set by hand) or, with
    None / "" / the detected code, the detected one again. ``doc`` is not changed.

    The detected language is kept in ``meta["language_detected"]`` while an override is in force
    and its probability stays in ``meta["language_probability"]``. The language is part of
    ``Document.fingerprint``, so every cached result of the old language (an analysis, RC) is
    recomputed, never reused. What depends on it: References Completeness (the coreference
    models are English: RC is not computed for another language) and the retrieval check's
    BM25 stop words; blocks, sentences and chunks do not."""
    import copy

    out = copy.copy(doc)
    out.meta = dict(doc.meta)
    _set_language(out, language)
    return out


def load_bytes(data: bytes, filename: str, max_bytes: int | None = None, *, name: str | None = None,
               running: str = "mark", language: str | None = None) -> Document:
    """Load an uploaded file's bytes. ``filename`` decides the format (see module doc).

    ``language``: an ISO 639-1 code that overrides the detected language (kept in
    ``meta["language_detected"]``).

    ``running`` (PDF only): running page headers/footers are kept as layout comments (``"mark"``)
    or removed (``"strip"``: another text, hence another Document and fingerprint)."""
    filename = Path(str(filename)).name or "document"
    limit = resolve_max_bytes(max_bytes)
    _check_size(len(data), filename, limit)
    fmt = _format_of(filename, data)
    if not data:
        raise IngestError(f"{filename} is empty")
    stem = name or Path(filename).stem or filename
    t0 = time.perf_counter()
    if fmt == "pdf":
        from chunkscope.ingest.pdf.load import load_pdf_bytes

        _check_pages(data, filename)
        doc = load_pdf_bytes(data, filename, stem, running=running)
    elif fmt == "markdown":
        from chunkscope.ingest.markdown import load_markdown_bytes

        doc = load_markdown_bytes(data, filename, stem)
    elif fmt == "text":
        from chunkscope.ingest.text import load_text_bytes

        doc = load_text_bytes(data, filename, stem)
    elif fmt == "html":
        from chunkscope.ingest.html import load_html_bytes

        doc = load_html_bytes(data, filename, stem)
    elif fmt == "docx":
        from chunkscope.ingest.docx import load_docx_bytes

        doc = load_docx_bytes(data, filename, stem, limit)
    elif fmt == "pptx":
        from chunkscope.ingest.pptx import load_pptx_bytes

        doc = load_pptx_bytes(data, filename, stem, limit)
    else:
        doc = _load_json(data, filename, name)
    if not doc.text.strip():
        raise IngestError(f"{filename} contains no text")
    if doc.language in ("", "und"):
        lang, prob = detect_language(doc.text, plain=doc.source_format == "text")
        doc.language = lang
        doc.meta["language_probability"] = round(prob, 4)
    if language:
        _set_language(doc, language)
    doc.meta.setdefault("bytes", len(data))
    doc.meta["filename"] = filename
    doc.meta["parse_seconds"] = round(time.perf_counter() - t0, 4)
    return doc


def load_document(path: str | os.PathLike, *, name: str | None = None, max_bytes: int | None = None,
                  running: str = "mark", language: str | None = None) -> Document:
    """Load a file from disk (size checked before reading)."""
    p = Path(path)
    if not p.exists():
        raise IngestError(f"{p}: no such file")
    if p.is_dir():
        raise IngestError(f"{p} is a directory, not a document")
    limit = resolve_max_bytes(max_bytes)
    _check_size(p.stat().st_size, p.name, limit)
    _format_of(p.name)  # refuse an unsupported extension before reading
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise IngestError(f"{p.name}: cannot read ({exc.strerror or exc})") from None
    return load_bytes(data, p.name, limit, name=name, running=running, language=language)
