"""Load a document from a file or uploaded bytes: one loader per format -> ``Document``.

Public API::

    load_document(path, *, name=None, max_bytes=None, limits=None) -> Document
    load_bytes(data, filename, max_bytes=None, *, name=None, limits=None) -> Document
    IngestError           # bad input; str(err) is one specific line
    SUPPORTED_EXTENSIONS  # {".pdf": "pdf", ".md": "markdown", ...}
    resolve_max_bytes(max_bytes=None) -> int   # argument > $CHUNKSCOPE_MAX_BYTES > 50 MB
    Limits(max_bytes, max_pages, shared)       # what to read; Limits.from_env() at the edges

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
from chunkscope.ingest.errors import IngestError, json_error
from chunkscope.ingest.limits import DEFAULT_MAX_BYTES, Limits, resolve_max_bytes
from chunkscope.text.language import detect_language

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMAT_WORDS",
    "FORMATS_IN_BRIEF",
    "FORMAT_SHORT",
    "IngestError",
    "Limits",
    "SUPPORTED_EXTENSIONS",
    "load_bytes",
    "load_document",
    "resolve_max_bytes",
    "with_language",
]

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
               running: str = "mark", language: str | None = None, limits: Limits | None = None) -> Document:
    """Load an uploaded file's bytes. ``filename`` decides the format (see module doc).

    ``limits``: the largest document to read (default: ``Limits.from_env(max_bytes)``; give one or the other).
    ``language``: an ISO 639-1 code that overrides the detected language (kept in
    ``meta["language_detected"]``).

    ``running`` (PDF only): running page headers/footers are kept as layout comments (``"mark"``)
    or removed (``"strip"``: another text, hence another Document and fingerprint)."""
    filename = Path(str(filename)).name or "document"
    limits = _limits(max_bytes, limits)
    limits.check_size(len(data), filename)
    fmt = _format_of(filename, data)
    if not data:
        raise IngestError(f"{filename} is empty")
    stem = name or Path(filename).stem or filename
    t0 = time.perf_counter()
    doc = _decode(fmt, data, filename, stem, name, running, limits)
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


def _decode(fmt: str, data: bytes, filename: str, stem: str, name: str | None, running: str,
            limits: Limits) -> Document:
    """The Document of ``data`` read as format ``fmt`` by its loader (a PDF's pages counted first)."""
    if fmt == "pdf":
        from chunkscope.ingest.pdf.load import load_pdf_bytes
        from chunkscope.ingest.pdf.open import page_count

        pages = page_count(data)  # refused before any page is parsed
        if pages is not None:
            limits.check_pages(pages, filename)
        return load_pdf_bytes(data, filename, stem, running=running)
    if fmt == "json":
        return _load_json(data, filename, name)
    if fmt == "docx":
        from chunkscope.ingest.docx import load_docx_bytes

        return load_docx_bytes(data, filename, stem, limits.max_bytes)
    if fmt == "pptx":
        from chunkscope.ingest.pptx import load_pptx_bytes

        return load_pptx_bytes(data, filename, stem, limits.max_bytes)
    if fmt == "html":
        from chunkscope.ingest.html import load_html_bytes as load
    elif fmt == "markdown":
        from chunkscope.ingest.markdown import load_markdown_bytes as load
    else:
        from chunkscope.ingest.text import load_text_bytes as load
    return load(data, filename, stem)

def load_document(path: str | os.PathLike, *, name: str | None = None, max_bytes: int | None = None,
                  running: str = "mark", language: str | None = None, limits: Limits | None = None) -> Document:
    """Load a file from disk (size checked before reading; ``limits`` as for ``load_bytes``)."""
    p = Path(path)
    if not p.exists():
        raise IngestError(f"{p}: no such file")
    if p.is_dir():
        raise IngestError(f"{p} is a directory, not a document")
    limits = _limits(max_bytes, limits)
    limits.check_size(p.stat().st_size, p.name)
    _format_of(p.name)  # refuse an unsupported extension before reading
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise IngestError(f"{p.name}: cannot read ({exc.strerror or exc})") from None
    return load_bytes(data, p.name, name=name, running=running, language=language, limits=limits)


def _limits(max_bytes: int | None, limits: Limits | None) -> Limits:
    """The limits given, else those of the environment with ``max_bytes``."""
    if limits is None:
        return Limits.from_env(max_bytes)
    if max_bytes is not None:
        raise ValueError("give max_bytes or limits, not both")
    return limits
