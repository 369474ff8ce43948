"""The Chunk inspector's facts about a chunking's chunks, read from its typed diagnostics (no Streamlit).

A chunk is flagged for a problem whose boundary is one of its edges (its start or its end): a cut
between chunks k - 1 and k shows on both, as the boundary belongs to both.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from chunkscope.chunk_table import chunk_flags
from chunkscope.document import Block, Document
from chunkscope.ingest.health import blame
from chunkscope.metrics import ChunkCohesion, CoherenceDetails, CohesionDetails, SplitPair, WindowCoherence
from chunkscope.present.highlight import Problems
from chunkscope.report import ChunkingResult, ChunkRow


def pages_label(pages: list[int]) -> str:
    """A page range as shown: "–" without pages, "3" for one page, "3–5" for several."""
    if not pages:
        return "–"
    return str(pages[0]) if pages[0] == pages[-1] else f"{pages[0]}–{pages[-1]}"


@dataclass
class InspectorRow:
    """One chunk's line in the Chunk inspector's table."""

    number: int  # 1-based
    chunk: ChunkRow
    pages: str  # pages_label
    heading: str  # the innermost heading of its path ("" before the first heading)
    cohesion: float  # ICC's; NaN where the chunk was not scored
    size: str | None  # "under" | "over" (SC's out-of-size kind), None when in bounds
    blocks_cut: int  # broken blocks whose cut is one of its edges
    cut_by: str | None  # an extraction artefact the cut sits on ("running header" ...), else None
    pairs_split: int  # split pairs whose cut is one of its edges
    starts_with: str  # its first words (80 characters at most)


def cohesion_of(c: ChunkingResult, idx: int) -> ChunkCohesion | None:
    """ICC's record of chunk ``idx``; None when ICC did not score it (one block only, or no embeddings)."""
    icc = c.diagnostics.get("ICC")
    records = icc.per_chunk if isinstance(icc, CohesionDetails) else []
    return next((x for x in records if x.chunk == idx), None)


def windows_of(c: ChunkingResult, idx: int) -> list[WindowCoherence]:
    """DCC's windows holding chunk ``idx``."""
    dcc = c.diagnostics.get("DCC")
    return [w for w in (dcc.windows if isinstance(dcc, CoherenceDetails) else []) if w.first <= idx <= w.last]


def split_at_edges(problems: Problems, ch: ChunkRow) -> list[tuple[int, SplitPair]]:
    """The split pairs cut at an edge of chunk ``ch``, each with its place in the chunking's list (for its tag)."""
    return [(k, x) for k, x in enumerate(problems.split) if x.boundary in (ch.start, ch.end)]


def broken_at_edges(problems: Problems, ch: ChunkRow) -> set[int]:
    """The indexes of the blocks broken at an edge of chunk ``ch``."""
    return {x.index for x in problems.broken if x.boundary in (ch.start, ch.end) and x.index is not None}


def blocks_of(doc: Document, ch: ChunkRow) -> tuple[list[tuple[int, Block]], list[tuple[int, Block]]]:
    """(the blocks inside chunk ``ch``, the blocks its edges cut), each with its index."""
    j0 = max(0, bisect.bisect_right([bl.start for bl in doc.blocks], ch.start) - 1)
    inside: list[tuple[int, Block]] = []
    cut: list[tuple[int, Block]] = []
    for j in range(j0, len(doc.blocks)):
        bl = doc.blocks[j]
        if bl.start >= ch.end:
            break
        if bl.end > ch.start:
            (inside if ch.start <= bl.start and bl.end <= ch.end else cut).append((j, bl))
    return inside, cut


def chunk_rows(doc: Any, c: ChunkingResult) -> list[InspectorRow]:
    """One row per chunk of ``c``: pages, heading, cohesion and its problems (from the diagnostics)."""
    p = Problems.of(c)
    artefact = {x.boundary: why for x in p.broken if (why := blame(doc, x.block, x.boundary))}
    rows = []
    for i, (ch, f) in enumerate(zip(c.chunks, chunk_flags(c))):
        path = doc.chunk_heading_path(ch.start, ch.end)
        rows.append(InspectorRow(
            number=i + 1, chunk=ch, pages=pages_label(doc.pages_of(ch.start, ch.end)),
            heading=path[-1].title[:60] if path else "", cohesion=f.cohesion, size=f.size,
            blocks_cut=f.blocks_cut, cut_by=artefact.get(ch.start) or artefact.get(ch.end),
            pairs_split=f.pairs_split, starts_with=" ".join(doc.text[ch.start:ch.start + 90].split())[:80]))
    return rows
