"""Every chunk of every chunking of a report as one table (a row per chunk), for pandas or a spreadsheet.

The flags come from each chunking's typed diagnostics (``chunkscope.metrics``), as the Chunk inspector reads
them: a chunk is flagged for a problem whose boundary is one of its edges (a cut between chunks k - 1 and k
counts on both). ``write_chunk_table`` writes it as CSV or Parquet, by the file's extension.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chunkscope.document import Document
from chunkscope.metrics import BlockDetails, CohesionDetails, ReferenceDetails, SizeDetails
from chunkscope.report import ChunkingResult, Report

COLUMNS = ("id", "document", "chunking", "winner", "chunk", "start", "end", "tokens", "first_page", "last_page",
           "heading_path", "out_of_size", "size", "breaks_block", "blocks_cut", "splits_pair", "pairs_split",
           "cohesion")
TABLE_FORMATS = (".csv", ".parquet")


@dataclass(frozen=True)
class ChunkFlags:
    """One chunk's problems as its chunking's diagnostics give them (the table's and the Chunk inspector's)."""

    size: str | None  # SC's out-of-size kind ("under" | "over"), None when in bounds
    blocks_cut: int  # BI: broken blocks whose cut is one of its edges
    pairs_split: int  # RC: split pairs whose cut is one of its edges
    cohesion: float  # ICC's; NaN where the chunk was not scored


def chunk_flags(c: ChunkingResult) -> list[ChunkFlags]:
    """The flags of each chunk of ``c``, in order, read from its typed diagnostics: a problem counts for a chunk
    when its boundary is one of the chunk's edges (a cut between chunks k - 1 and k counts on both)."""
    d, n = c.diagnostics, len(c.chunks)
    bi, rc, sc, icc = d.get("BI"), d.get("RC"), d.get("SC"), d.get("ICC")
    cuts = Counter(x.boundary for x in bi.broken) if isinstance(bi, BlockDetails) else Counter()
    splits = Counter(x.boundary for x in rc.split) if isinstance(rc, ReferenceDetails) else Counter()
    size = {o.chunk: o.kind or "out" for o in sc.out_of_size if 0 <= o.chunk < n} if isinstance(sc, SizeDetails) \
        else {}
    cohesion = {x.chunk: x.cohesion for x in icc.per_chunk} if isinstance(icc, CohesionDetails) else {}
    return [ChunkFlags(size.get(i), cuts[ch.start] + cuts[ch.end], splits[ch.start] + splits[ch.end],
                       cohesion.get(i, float("nan"))) for i, ch in enumerate(c.chunks)]


def _rows_of(report: Report, doc: Document, c: ChunkingResult) -> list[dict[str, Any]]:
    """The rows of one chunking (``chunk_table``'s columns)."""
    sha = str(report.document.get("sha256") or "")[:12]
    rows = []
    for i, (ch, f) in enumerate(zip(c.chunks, chunk_flags(c))):
        pages = doc.pages_of(ch.start, ch.end)
        rows.append({
            "id": f"{sha}-{c.id}-{i:05d}", "document": report.document.get("name"), "chunking": c.id,
            "winner": c.id == report.winner, "chunk": i, "start": ch.start, "end": ch.end, "tokens": ch.tokens,
            "first_page": pages[0] if pages else None, "last_page": pages[-1] if pages else None,
            "heading_path": " > ".join(h.title for h in doc.chunk_heading_path(ch.start, ch.end)),
            "out_of_size": f.size is not None, "size": f.size or "", "breaks_block": f.blocks_cut > 0,
            "blocks_cut": f.blocks_cut, "splits_pair": f.pairs_split > 0, "pairs_split": f.pairs_split,
            "cohesion": f.cohesion,
        })
    return rows


def chunk_table(report: Report, doc: Document) -> list[dict[str, Any]]:
    """One row per chunk of every chunking of ``report`` that ran (``COLUMNS``), in the report's order.

    ``id`` is the export records' id (``chunk_records``); ``chunk`` counts from 0; pages are 1-based (None
    without pages); ``out_of_size``/``size`` from SC ("under" or "over"), ``breaks_block``/``blocks_cut`` from
    BI, ``splits_pair``/``pairs_split`` from RC (never set when RC did not run), ``cohesion``: ICC's per-chunk
    value (NaN where it did not score the chunk)."""
    return [row for c in report.chunkings if c.ok for row in _rows_of(report, doc, c)]


def chunk_frame(report: Report, doc: Document) -> Any:
    """``chunk_table`` as a pandas DataFrame (pages as nullable integers)."""
    import pandas as pd

    df = pd.DataFrame(chunk_table(report, doc), columns=list(COLUMNS))
    for col in ("first_page", "last_page"):
        df[col] = df[col].astype("Int64")
    return df.astype({"cohesion": "float64"})


def check_table_path(path: str | Path) -> str:
    """"" when ``path`` ends in .csv or .parquet, else the one-line problem."""
    suffix = Path(path).suffix.lower()
    return "" if suffix in TABLE_FORMATS else f"{path}: a chunk table is written as .csv or .parquet, not {suffix or 'no extension'!r}"


def table_bytes(report: Report, doc: Document, fmt: str) -> bytes:
    """The table as a file's bytes: ``fmt`` is "csv" (UTF-8) or "parquet"."""
    import io

    df = chunk_frame(report, doc)
    if fmt == "csv":
        return df.to_csv(index=False).encode("utf-8")
    if fmt == "parquet":
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        return buf.getvalue()
    raise ValueError(f"chunk table format {fmt!r}: choose csv or parquet")


def write_chunk_table(report: Report, doc: Document, path: str | Path) -> int:
    """Write the table to ``path`` (CSV or Parquet by its extension); returns the number of rows.

    A path with another extension is a ValueError."""
    if problem := check_table_path(path):
        raise ValueError(problem)
    data = table_bytes(report, doc, Path(path).suffix.lower().lstrip("."))
    Path(path).write_bytes(data)
    return sum(len(c.chunks) for c in report.chunkings if c.ok)
