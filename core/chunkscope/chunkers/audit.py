"""Coverage audit of a chunking: is every visible character in some chunk, in order?

``audit(doc, spans)`` returns data for the app, the CLI and the report: the covered
fraction of non-whitespace characters, whether spans are ordered, the gaps
(uncovered non-whitespace text, trimmed to it), total overlap, empty chunks, chunks
over a hard token ceiling, and a one-line summary such as
"all text covered, 0 gaps, 0 overlaps".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from chunkscope.caching import BoundedCache
from chunkscope.document import Document, Span
from chunkscope.text.tokens import count_many

_WS = re.compile(r"\s+")
# visible characters of the latest few documents' texts (every chunking of a document audits it)
_visible: BoundedCache[str, int] = BoundedCache(8)


@dataclass
class Audit:
    """Does a chunking cover every non-whitespace character, in order, within the text? With what gaps and overlap."""
    chunks: int
    covered: float  # fraction of non-whitespace characters inside some chunk (1.0 for blank text)
    ordered: bool  # starts and ends never go backwards
    gaps: list[Span] = field(default_factory=list)  # uncovered non-whitespace text
    overlap_chars: int = 0  # characters covered more than once (counted once per extra cover)
    overlaps: int = 0  # chunks that start before the previous chunks' reach
    empty: list[int] = field(default_factory=list)  # indices of chunks with no visible text
    out_of_bounds: list[int] = field(default_factory=list)  # indices of spans outside the text
    ceiling: int | None = None
    over_ceiling: list[int] = field(default_factory=list)  # indices of chunks above the ceiling
    tokens: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is uncovered, nothing goes backwards, no chunk is empty or out of the text."""
        return not self.gaps and self.ordered and not self.empty and not self.out_of_bounds

    @property
    def summary(self) -> str:
        """One line for people: "all text covered, in order" or what is wrong."""
        if self.chunks == 0:
            return "no chunks" + ("" if self.covered >= 1.0 else ", text not covered")
        parts = []
        if not self.gaps:
            parts.append("all text covered")
        else:
            missing = sum(len(g) for g in self.gaps)
            parts.append(f"{self.covered:.1%} of text covered ({missing} characters missing)")
        parts.append(f"{len(self.gaps)} gap{'s' if len(self.gaps) != 1 else ''}")
        parts.append(f"{self.overlaps} overlap{'s' if self.overlaps != 1 else ''}"
                     + (f" ({self.overlap_chars} chars)" if self.overlap_chars else ""))
        if not self.ordered:
            parts.append("chunks out of order")
        if self.empty:
            parts.append(f"{len(self.empty)} empty chunk{'s' if len(self.empty) != 1 else ''}")
        if self.out_of_bounds:
            parts.append(f"{len(self.out_of_bounds)} span(s) outside the text")
        if self.ceiling is not None and self.over_ceiling:
            parts.append(f"{len(self.over_ceiling)} over {self.ceiling} tokens")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The audit as JSON (the report's ``audit`` entry)."""
        return {
            "chunks": self.chunks,
            "covered": round(self.covered, 6),
            "ordered": self.ordered,
            "gaps": [[g.start, g.end] for g in self.gaps],
            "overlap_chars": self.overlap_chars,
            "overlaps": self.overlaps,
            "empty": list(self.empty),
            "out_of_bounds": list(self.out_of_bounds),
            "ceiling": self.ceiling,
            "over_ceiling": list(self.over_ceiling),
            "ok": self.ok,
            "summary": self.summary,
        }


def _gap(text: str, a: int, b: int) -> Span | None:
    """The uncovered interval [a, b) trimmed to its visible text, or None if blank."""
    seg = text[a:b]
    stripped = seg.strip()
    if not stripped:
        return None
    lead = len(seg) - len(seg.lstrip())
    return Span(a + lead, a + lead + len(stripped))


def audit(doc: Document | str, spans: Sequence[Span], ceiling: int | None = None,
          tokens: Sequence[int] | None = None) -> Audit:
    """Audit ``spans`` against ``doc`` (a Document or its text)."""
    text = doc if isinstance(doc, str) else doc.text
    n = len(text)
    out_of_bounds = [i for i, s in enumerate(spans) if s.start < 0 or s.end > n or s.end < s.start]
    ordered = all(b.start >= a.start and b.end >= a.end for a, b in zip(spans, spans[1:]))
    empty = [i for i, s in enumerate(spans) if not text[s.start:s.end].strip()]

    # sweep in start order (independent of `ordered`, so gaps are still right)
    gaps: list[Span] = []
    overlap_chars = overlaps = 0
    reach = 0
    for s in sorted((s for s in spans if s.end <= n), key=lambda s: (s.start, s.end)):
        if s.start > reach:
            g = _gap(text, reach, s.start)
            if g is not None:
                gaps.append(g)
        elif s.start < reach and s.end > s.start:
            overlaps += 1
            overlap_chars += min(reach, s.end) - s.start
        reach = max(reach, s.end)
    g = _gap(text, reach, n)
    if g is not None:
        gaps.append(g)
    total_visible = _count_visible(text)
    missing = sum(_count_visible(text[g.start:g.end]) for g in gaps)
    covered = 1.0 if total_visible == 0 else (total_visible - missing) / total_visible

    toks: list[int] = list(tokens) if tokens is not None else []
    over: list[int] = []
    if ceiling is not None:
        if tokens is None:
            toks = count_many([text[s.start:s.end] for s in spans])
        over = [i for i, t in enumerate(toks) if t > ceiling]
    return Audit(chunks=len(spans), covered=covered, ordered=ordered, gaps=gaps,
                 overlap_chars=overlap_chars, overlaps=overlaps, empty=empty,
                 out_of_bounds=out_of_bounds, ceiling=ceiling, over_ceiling=over, tokens=toks)


def _count_visible(text: str) -> int:
    """Non-whitespace characters of ``text`` (cached for long texts: a document's whole text)."""
    if len(text) < 10_000:
        return len(_WS.sub("", text))
    n = _visible.get(text)
    if n is None:
        n = _visible.put(text, len(_WS.sub("", text)))
    return n
