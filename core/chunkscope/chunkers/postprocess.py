"""The paper's post-processing (DESIGN section 5), on spans.

1. Oversized re-split: every chunk above ``max_tokens`` is re-split with the
   split-then-merge recursive splitter (``recursive-1100``'s separators, chunk size
   ``max_tokens``); well-sized chunks are untouched.
2. Tiny-chunk merge: repeatedly, a chunk under ``min_tokens`` is merged with the next
   chunk if the two total <= ``merge_max`` tokens, else with the previous one if that
   fits, else left alone (the paper's ``merge_to="next"``).

Merged spans are the union of the two spans (for overlapping chunkers the shared
text is not duplicated); the merged size is re-counted on the merged text.
On a chunking whose chunks are all within [min_tokens, max_tokens] nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from chunkscope.chunkers.base import ParamError, ParamSpec
from chunkscope.chunkers.recursive import PAPER_SEPARATORS, RecursiveSplitter
from chunkscope.document import Span
from chunkscope.text.tokens import count_many, count_tokens

PP_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("pp_max_tokens", int, 1100, "post-processing: chunks above this are re-split", min=1, max=1_000_000),
    ParamSpec("pp_min_tokens", int, 100, "post-processing: chunks below this are merged with a neighbour", min=0, max=1_000_000),
    ParamSpec("pp_merge_max", int, 1150, "post-processing: a merge may not exceed this many tokens", min=1, max=1_000_000),
)


def validate_pp(params: dict) -> list[str]:
    """The post-processing bounds must be consistent (checked before anything runs)."""
    out = []
    mx, mn, mm = params.get("pp_max_tokens"), params.get("pp_min_tokens"), params.get("pp_merge_max")
    if mx is not None and mn is not None and mn > mx:
        out.append(f"pp_min_tokens ({mn}) must be <= pp_max_tokens ({mx})")
    if mx is not None and mm is not None and mm < mx:
        out.append(f"pp_merge_max ({mm}) must be >= pp_max_tokens ({mx})")
    return out


@dataclass
class PostprocessStats:
    """What post-processing did to one chunking: re-splits, the pieces they made, merges, chunks left small."""
    resplit: int = 0  # oversized chunks re-split
    pieces: int = 0  # chunks they became
    merged: int = 0  # merges performed
    still_small: list[int] = field(default_factory=list)  # indices of chunks left under min_tokens

    def to_dict(self) -> dict:
        """The stats as JSON."""
        return {"resplit": self.resplit, "pieces": self.pieces, "merged": self.merged,
                "still_small": list(self.still_small)}


def resplit_oversized(text: str, spans: Sequence[Span], max_tokens: int = 1100,
                      stats: PostprocessStats | None = None) -> list[Span]:
    """Re-split each chunk above ``max_tokens`` with the paper's recursive splitter; other chunks are untouched."""
    splitter = RecursiveSplitter(chunk_size=max_tokens, separators=PAPER_SEPARATORS)
    sizes = count_many([text[s.start:s.end] for s in spans])
    out: list[Span] = []

    def push(q: Span) -> None:
        # overlapping chunkers: drop pieces made redundant by an overlapping neighbour
        while out and q.start <= out[-1].start and out[-1].end <= q.end:
            out.pop()
        if out and out[-1].start <= q.start and q.end <= out[-1].end:
            return
        out.append(q)

    for sp, n in zip(spans, sizes):
        if n > max_tokens:
            parts = splitter.split(text, sp.start, sp.end) or [sp]
            if stats is not None:
                stats.resplit += 1
                stats.pieces += len(parts)
            for q in parts:
                push(q)
        else:
            push(sp)
    return out


def merge_tiny(text: str, spans: Sequence[Span], min_tokens: int = 100, merge_max: int = 1150,
               stats: PostprocessStats | None = None) -> list[Span]:
    """Merge each chunk under ``min_tokens`` with the next (else the previous) when the two fit in ``merge_max``."""
    chunks = list(spans)
    if len(chunks) < 2:
        return chunks
    sizes = count_many([text[s.start:s.end] for s in chunks])

    def join(i: int) -> None:  # merge chunk i+1 into chunk i
        a, b = chunks[i], chunks[i + 1]
        chunks[i] = Span(a.start, max(a.end, b.end))
        sizes[i] = count_tokens(text[chunks[i].start:chunks[i].end])
        del chunks[i + 1]
        del sizes[i + 1]
        if stats is not None:
            stats.merged += 1

    changed = True
    while changed:
        changed = False
        i = 0
        while i < len(chunks):
            if sizes[i] < min_tokens:
                if i + 1 < len(chunks) and sizes[i] + sizes[i + 1] <= merge_max:
                    join(i)
                    changed = True
                    continue
                if i > 0 and sizes[i - 1] + sizes[i] <= merge_max:
                    join(i - 1)
                    changed = True
                    continue
            i += 1
    if stats is not None:
        stats.still_small = [i for i, n in enumerate(sizes) if n < min_tokens]
    return chunks


def postprocess(text: str, spans: Sequence[Span], max_tokens: int = 1100, min_tokens: int = 100,
                merge_max: int = 1150, stats: PostprocessStats | None = None) -> list[Span]:
    """Oversized re-split, then tiny-chunk merge (the paper's order)."""
    if merge_max < max_tokens:
        raise ParamError(f"pp_merge_max ({merge_max}) must be >= pp_max_tokens ({max_tokens})")
    if min_tokens > max_tokens:
        raise ParamError(f"pp_min_tokens ({min_tokens}) must be <= pp_max_tokens ({max_tokens})")
    out = resplit_oversized(text, spans, max_tokens, stats)
    return merge_tiny(text, out, min_tokens, merge_max, stats)
