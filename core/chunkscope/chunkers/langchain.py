"""LangChain's ``RecursiveCharacterTextSplitter`` baselines, mapped back to spans.

``langchain-default`` is the splitter as shipped (4000 characters, 200 overlap);
``langchain-1100`` uses the paper's separators (regex, kept at the start), o200k
token length, 1100 tokens, no overlap. LangChain returns *strings* (stripped of
surrounding whitespace), so :func:`map_chunks` locates each one in the document:
it searches forward from where the previous chunk could start to overlap it
(repeated passages therefore resolve to the right occurrence), tolerates
whitespace differences as a fallback, and gives every uncovered gap (the stripped
whitespace) to the following chunk, as the paper's code does, so coverage holds.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Sequence

from chunkscope.chunkers.base import ChunkerSpec, ChunkResult, ParamError, ParamSpec, overlap_below
from chunkscope.chunkers.recursive import MAX_TOKEN_CHARS, PAPER_SEPARATORS
from chunkscope.document import Document, Span
from chunkscope.text.tokens import count_tokens


class MappingError(RuntimeError):
    """A LangChain chunk could not be found back in the document's text (spans are required)."""
    pass


def _relaxed(chunk: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in chunk.split()]
    return re.compile(r"\s+".join(parts))


def map_chunks(text: str, chunks: Sequence[str], max_overlap_chars: int = 0) -> list[Span]:
    """Spans of ``chunks`` (in order) in ``text``, gaps given to the following chunk.

    ``max_overlap_chars`` bounds how far a chunk may start before the previous
    chunk's end (0 for splitters without overlap).
    """
    found: list[tuple[int, int]] = []
    prev_start, prev_end, prev_len = -1, 0, 0
    for ch in chunks:
        if not ch or not ch.strip():
            continue
        lo = max(prev_start + 1, prev_end - max_overlap_chars)
        if prev_start >= 0 and len(ch) > prev_len and text.startswith(ch, prev_start):
            idx = prev_start  # the overlap repeats the previous chunk whole and goes on ("<Table>", "<Table>\n| ...")
        else:
            idx = text.find(ch, lo)
        end = idx + len(ch)
        if idx < 0 and prev_start + 1 < lo:
            idx = text.find(ch, prev_start + 1)
            end = idx + len(ch)
        if idx < 0:
            m = _relaxed(ch).search(text, max(0, prev_start))
            if m is None:
                raise MappingError(f"chunk {len(found)} not found in the document text")
            idx, end = m.span()
        found.append((idx, end))
        prev_start, prev_end, prev_len = idx, max(prev_end, end), len(ch)
    if not found:
        return []
    spans: list[Span] = []
    reach = 0
    for i, (s, e) in enumerate(found):
        if i == 0 or s > reach:
            s = reach  # the gap before this chunk (stripped whitespace) belongs to it
        spans.append(Span(s, max(e, s)))
        reach = max(reach, e)
    last = spans[-1]
    if reach < len(text):
        spans[-1] = Span(last.start, len(text))
    return spans


def _splitter(kind: str, chunk_size: int, chunk_overlap: int):
    from chunkscope.extras import require

    RecursiveCharacterTextSplitter = require("langchain_text_splitters", "the langchain chunkers"
                                             ).RecursiveCharacterTextSplitter

    if chunk_overlap >= chunk_size:
        raise ParamError(f"chunk_overlap ({chunk_overlap}) must be smaller than chunk_size ({chunk_size})")
    if kind == "default":
        return RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    return RecursiveCharacterTextSplitter(
        separators=list(PAPER_SEPARATORS),
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        is_separator_regex=True,
        keep_separator="start",
        length_function=count_tokens,
    )


def _run(kind: str, doc: Document, params: dict[str, Any]) -> ChunkResult:
    size, overlap = int(params["chunk_size"]), int(params["chunk_overlap"])
    try:
        splitter = _splitter(kind, size, overlap)
    except ImportError:
        return ChunkResult.failed("langchain-text-splitters is not installed (pip install langchain-text-splitters)")
    if not doc.text.strip():
        return ChunkResult(spans=[])
    lc_logger = logging.getLogger("langchain_text_splitters.base")
    old = lc_logger.level
    lc_logger.setLevel(logging.ERROR)  # "Created a chunk of size ..." warnings
    try:
        chunks = splitter.split_text(doc.text)
    finally:
        lc_logger.setLevel(old)
    max_back = overlap if kind == "default" else MAX_TOKEN_CHARS * overlap
    try:
        spans = map_chunks(doc.text, chunks, max_overlap_chars=max_back)
    except MappingError as exc:
        return ChunkResult.failed(f"could not map LangChain's output back to the text: {exc}")
    return ChunkResult(spans=spans, info={"strings": len(chunks)})


def chunk_langchain_default(doc: Document, params: dict[str, Any], ctx: Any = None) -> ChunkResult:
    """LangChain's RecursiveCharacterTextSplitter as shipped (characters), mapped to spans."""
    return _run("default", doc, params)


def chunk_langchain_1100(doc: Document, params: dict[str, Any], ctx: Any = None) -> ChunkResult:
    """LangChain's recursive splitter with the paper's separators and o200k sizes, mapped to spans."""
    return _run("paper", doc, params)


def specs() -> list[ChunkerSpec]:
    """The LangChain family's specs (``langchain-default``, ``langchain-1100``)."""
    return [
        ChunkerSpec(
            "langchain-default", "LangChain recursive (default)",
            "LangChain RecursiveCharacterTextSplitter() as shipped: 4000 characters, 200 overlap",
            (ParamSpec("chunk_size", int, 4000, "maximum characters per chunk", min=1, max=10_000_000),
             ParamSpec("chunk_overlap", int, 200, "characters of overlap (< chunk_size)", min=0, max=10_000_000)),
            chunk_langchain_default, family="langchain", validate=overlap_below(unit="characters")),
        ChunkerSpec(
            "langchain-1100", "LangChain recursive (paper separators, 1100)",
            "LangChain RecursiveCharacterTextSplitter with the paper's separators, o200k tokens, 1100, no overlap",
            (ParamSpec("chunk_size", int, 1100, "maximum tokens per chunk (o200k)", min=1, max=1_000_000),
             ParamSpec("chunk_overlap", int, 0, "tokens of overlap (< chunk_size)", min=0, max=1_000_000)),
            chunk_langchain_1100, family="langchain", validate=overlap_below()),
    ]
