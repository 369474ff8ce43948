"""The data model: a document is Markdown text plus spans into it.

Every offset is a half-open character range ``[start, end)`` into ``Document.text``.
Chunkers return spans, never rewritten text; metrics and views read the same spans.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterable


@dataclass(frozen=True, order=True)
class Span:
    """Half-open character offsets ``[start, end)`` into a document's text."""
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid span [{self.start}, {self.end})")

    def __len__(self) -> int:
        return self.end - self.start

    def text(self, doc_text: str) -> str:
        """The spanned part of ``doc_text``."""
        return doc_text[self.start:self.end]


def span_pairs(spans: Iterable[Any]) -> list[tuple[int, int]]:
    """(start, end) of each span: a ``Span`` or any (start, end) pair."""
    try:
        return [(s.start, s.end) for s in spans]  # fast path: Span objects
    except AttributeError:
        pass
    return [(s.start, s.end) if isinstance(s, Span) else (int(s[0]), int(s[1])) for s in spans]


@dataclass(frozen=True)
class Block:
    """A structural unit that should not be cut (paragraph, table, heading+body, ...)."""

    start: int
    end: int
    kind: str

    @property
    def span(self) -> Span:
        """The block's extent as a ``Span``."""
        return Span(self.start, self.end)


@dataclass(frozen=True)
class Heading:
    """A heading line ``[start, end)`` with its Markdown level and title text."""

    start: int
    end: int
    level: int
    title: str


def sha256_text(text: str) -> str:
    """Hex SHA-256 of the text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Document:
    """A document: Markdown text plus spans (pages, blocks, headings), its format, language and source facts."""
    name: str
    text: str
    source_format: str  # pdf | markdown | text | reference
    language: str = "und"  # ISO 639-1 code, "und" when unknown
    pages: list[Span] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # PDF only: where the text sits on the pages (chunkscope.geometry.Geometry); None otherwise
    geometry: Any = field(default=None, repr=False, compare=False)
    _sha: str | None = field(default=None, repr=False, compare=False)
    _starts: tuple[int, int, list[int]] | None = field(default=None, repr=False, compare=False)

    @property
    def sha256(self) -> str:
        """SHA-256 of the text (computed once)."""
        if self._sha is None:
            self._sha = sha256_text(self.text)
        return self._sha

    @property
    def fingerprint(self) -> str:
        """Identity of the text *and* everything a result may depend on besides it: source format
        (``structure`` chunks Markdown and plain text differently), pages, blocks and headings. The
        cache key for anything derived from the document (chunkings, units, BI, ICC, reports);
        ``sha256`` covers the text only."""
        parts = [self.sha256, self.source_format, self.language, repr([(p.start, p.end) for p in self.pages]),
                 repr([(b.start, b.end, b.kind) for b in self.blocks]),
                 repr([(h.start, h.end, h.level, h.title) for h in self.headings])]
        return sha256_text("\n".join(parts))

    @property
    def split_points(self) -> list[int]:
        """Gold block boundaries: the inner edges of the block tiling (0 and len excluded)."""
        return [b.start for b in self.blocks[1:]]

    def check_blocks(self) -> None:
        """Raise ValueError unless blocks tile the text exactly (consecutive, no gap, no overlap)."""
        check_tiling([(b.start, b.end) for b in self.blocks], len(self.text), what="blocks")

    def heading_path(self, pos: int) -> list[Heading]:
        """Headings whose section contains ``pos`` (outermost first)."""
        path: list[Heading] = []
        for h in self.headings:
            if h.start > pos:
                break
            while path and path[-1].level >= h.level:
                path.pop()
            path.append(h)
        return path

    def content_start(self, start: int, end: int) -> int:
        """Where the content of ``[start, end)`` begins: past the layout blocks (page headers and
        footers, page breaks) and the whitespace it opens with; ``start`` when there is none."""
        import bisect

        pos = start
        if self.blocks:
            i = max(0, bisect.bisect_right(self._block_starts(), start) - 1)
            while i < len(self.blocks) and self.blocks[i].kind == "layout" and self.blocks[i].end < end:
                pos = self.blocks[i].end
                i += 1
        while pos < end and self.text[pos].isspace():
            pos += 1
        return pos if pos < end else start

    def _block_starts(self) -> list[int]:
        """The blocks' starts, kept while ``blocks`` is the same list (every chunk of a big document asks)."""
        key = (id(self.blocks), len(self.blocks))
        if self._starts is None or self._starts[:2] != key:
            self._starts = (*key, [b.start for b in self.blocks])
        return self._starts[2]

    def chunk_heading_path(self, start: int, end: int) -> list[Heading]:
        """The section a chunk ``[start, end)`` belongs to: the heading path where its content
        begins (a chunk that opens with a page header and then a new heading is in that heading's
        section, not the one the page header follows)."""
        return self.heading_path(self.content_start(start, end))

    def page_of(self, pos: int) -> int | None:
        """1-based page number holding character ``pos``, or None without pages."""
        for i, p in enumerate(self.pages):
            if p.start <= pos < p.end:
                return i + 1
        return len(self.pages) if self.pages and pos >= self.pages[-1].end else None

    def pages_of(self, start: int, end: int) -> list[int]:
        """The 1-based pages a span ``[start, end)`` lies on, first to last; empty without pages."""
        first, last = self.page_of(start), self.page_of(max(start, end - 1))
        return [] if first is None else list(range(first, (last or first) + 1))

    def boxes(self, start: int, end: int) -> list[list[float]] | None:
        """Page boxes of ``[start, end)`` (``chunkscope.geometry.chunk_boxes``); None without geometry."""
        if self.geometry is None:
            return None
        from chunkscope.geometry import chunk_boxes

        return chunk_boxes(self, start, end)

    # --- stable JSON shape (documented in the README) ---
    def to_dict(self) -> dict[str, Any]:
        """The document as JSON (text, pages, blocks, headings, facts)."""
        return {
            "name": self.name,
            "format": self.source_format,
            "language": self.language,
            "sha256": self.sha256,
            "text": self.text,
            "pages": [[p.start, p.end] for p in self.pages],
            "blocks": [{"start": b.start, "end": b.end, "kind": b.kind} for b in self.blocks],
            "headings": [
                {"start": h.start, "end": h.end, "level": h.level, "title": h.title}
                for h in self.headings
            ],
            "warnings": list(self.warnings),
            **({"geometry": self.geometry.to_dict()} if self.geometry is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Document":
        """A document from :meth:`to_dict`'s JSON."""
        doc = cls(
            name=d["name"],
            text=d["text"],
            source_format=d.get("format", "markdown"),
            language=d.get("language", "und"),
            pages=[Span(s, e) for s, e in d.get("pages", [])],
            blocks=[Block(b["start"], b["end"], b["kind"]) for b in d.get("blocks", [])],
            headings=[Heading(h["start"], h["end"], h["level"], h["title"]) for h in d.get("headings", [])],
            warnings=list(d.get("warnings", [])),
        )
        if d.get("geometry"):
            from chunkscope.geometry import Geometry

            doc.geometry = Geometry.from_dict(d["geometry"])
        if d.get("sha256") and d["sha256"] != doc.sha256:
            raise ValueError("document JSON: sha256 does not match its text")
        return doc


def check_tiling(spans: Iterable[tuple[int, int]], length: int, what: str = "spans") -> None:
    """Raise ``ValueError`` unless ``spans`` tile ``[0, length)``: consecutive, non-empty, no gap, no overlap."""
    pos = 0
    for i, (s, e) in enumerate(spans):
        if s != pos:
            raise ValueError(f"{what} do not tile the text: item {i} starts at {s}, expected {pos}")
        if e <= s:
            raise ValueError(f"{what}: item {i} is empty or reversed [{s}, {e})")
        pos = e
    if pos != length:
        raise ValueError(f"{what} do not tile the text: they end at {pos}, text length is {length}")
