"""``structure``: one chunk per heading section, long sections split recursively.

* Sections start at each Markdown heading (``doc.headings`` when the loader found
  them, else lines starting with ``#``); the text before the first heading is a
  section of its own. A heading stays with its body: a section holding nothing but
  its heading is joined to the section after it.
* A section of at most ``chunk_size`` tokens is one chunk.
* A longer section is cut around its tables (``<Table>...</Table>``, HTML
  ``<table>``, runs of ``|`` rows, or blocks of kind ``table``): each table that
  fits becomes a chunk of its own, kept whole; the text between tables (and any
  oversized table) goes through the split-then-merge recursive splitter.
"""

from __future__ import annotations

import re
from typing import Any

from chunkscope.chunkers.base import ChunkerSpec, ChunkResult, ParamSpec
from chunkscope.chunkers.recursive import PAPER_SEPARATORS, RecursiveSplitter
from chunkscope.document import Document, Span
from chunkscope.text.tokens import count_tokens

_HEADING_LINE = re.compile(r"^#+[ \t]+\S.*$", re.MULTILINE)
_PIPE_ROWS = re.compile(r"(?:^[ \t]*\|[^\n]*(?:\n|$))+", re.MULTILINE)
_HTML_TABLE = re.compile(r"<table\b.*?</table>", re.IGNORECASE | re.DOTALL)


def heading_starts(doc: Document) -> list[int]:
    """Offsets where a heading starts (the document's headings, else Markdown heading lines), the first excluded."""
    if doc.headings:
        starts = sorted({h.start for h in doc.headings if 0 < h.start < len(doc.text)})
    else:
        starts = [m.start() for m in _HEADING_LINE.finditer(doc.text) if m.start() > 0]
    return starts


def table_spans(doc: Document, start: int, end: int) -> list[tuple[int, int]]:
    """The table blocks of ``doc`` that meet ``[start, end)``, clipped to it."""
    text = doc.text
    found: list[tuple[int, int]] = []
    for b in doc.blocks:
        if b.kind == "table" and b.start < end and b.end > start:
            found.append((max(b.start, start), min(b.end, end)))
    for rx in (_HTML_TABLE, _PIPE_ROWS):
        for m in rx.finditer(text, start, end):
            if m.end() > m.start():
                found.append(m.span())
    found.sort()
    merged: list[tuple[int, int]] = []
    for s, e in found:
        if merged and s < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def sections(doc: Document) -> list[tuple[int, int]]:
    """Heading sections ``(start, end)`` tiling the text, a heading kept with its body."""
    text = doc.text
    edges = [0, *heading_starts(doc), len(text)]
    secs = [(a, b) for a, b in zip(edges, edges[1:]) if b > a]
    out: list[tuple[int, int]] = []
    heads = set(edges[1:-1])
    carry = -1  # start of heading-only sections waiting for their body
    for i, (a, b) in enumerate(secs):
        s = a if carry < 0 else carry
        nl = text.find("\n", a, b)
        body = "" if nl < 0 else text[nl:b]
        is_heading = a in heads or text.startswith("#", a)
        if is_heading and not body.strip() and i + 1 < len(secs):
            carry = s
            continue
        out.append((s, b))
        carry = -1
    return out


def chunk_structure(doc: Document, params: dict[str, Any], ctx: Any = None) -> ChunkResult:
    """One chunk per heading section; long sections split recursively, tables (optionally) whole on their own."""
    size = int(params["chunk_size"])
    keep_tables = bool(params["keep_tables"])
    text = doc.text
    if not text.strip():
        return ChunkResult(spans=[])
    splitter = RecursiveSplitter(chunk_size=size, separators=PAPER_SEPARATORS)
    spans: list[Span] = []
    n_split = n_tables = 0
    for a, b in sections(doc):
        if count_tokens(text[a:b]) <= size:
            spans.append(Span(a, b))
            continue
        n_split += 1
        pos = a
        segments: list[tuple[int, int, bool]] = []
        if keep_tables:
            for ts, te in table_spans(doc, a, b):
                if ts > pos:
                    segments.append((pos, ts, False))
                segments.append((ts, te, True))
                pos = te
        if pos < b:
            segments.append((pos, b, False))
        pending = -1  # whitespace-only text waits for the next segment
        for s, e, is_table in segments:
            if pending >= 0:
                s, pending = pending, -1
            if not text[s:e].strip():
                pending = s
                continue
            if is_table and count_tokens(text[s:e]) <= size:
                spans.append(Span(s, e))
                n_tables += 1
            else:
                spans.extend(splitter.split(text, s, e))
        if pending >= 0:
            if spans and spans[-1].end == pending:
                spans[-1] = Span(spans[-1].start, b)
            else:
                spans.append(Span(pending, b))
    return ChunkResult(spans=_absorb_blank(text, spans), info={"sections_split": n_split, "tables_kept": n_tables})


def _absorb_blank(text: str, spans: list[Span]) -> list[Span]:
    """Whitespace-only spans joined to the span before them (the first to the one after): the recursive
    split of a long section can end on its blank lines, an empty chunk that failed the coverage audit
    (the gnuplot manual: chunk 540 was "\n\n")."""
    out: list[Span] = []
    lead = -1
    for sp in spans:
        if not text[sp.start:sp.end].strip():
            if out and out[-1].end == sp.start:
                out[-1] = Span(out[-1].start, sp.end)
            elif lead < 0:
                lead = sp.start
            continue
        out.append(Span(lead, sp.end) if lead >= 0 else sp)
        lead = -1
    if lead >= 0:
        out.append(Span(lead, spans[-1].end))  # only whitespace at all: kept, the audit says so
    return out


def specs() -> list[ChunkerSpec]:
    """The structure family's spec (``structure``)."""
    return [ChunkerSpec(
        "structure", "Heading sections",
        "one chunk per Markdown heading section (heading kept with its body); long sections split "
        "recursively, tables kept whole as their own chunks",
        (ParamSpec("chunk_size", int, 1100, "sections above this many tokens are split", min=1, max=1_000_000),
         ParamSpec("keep_tables", bool, True, "in a split section, keep each table whole as its own chunk")),
        chunk_structure, family="structure")]
