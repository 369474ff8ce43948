"""Escaped HTML highlighting of a chunking's boundaries and problems in the document text.

Every piece of document text that ends up in HTML goes through ``html.escape``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace
from typing import Sequence, TypeVar

from chunkscope.metrics import BlockDetails, BrokenBlock, OutOfSize, ReferenceDetails, SizeDetails, SplitPair
from chunkscope.report import ChunkingResult
from chunkscope.text.blocks import KIND_NOTES, kind_word

# ------------------------------------------------------------------ highlighted text

@dataclass
class Problems:
    """What to highlight for one chunking: a view over its typed diagnostics (BI's broken blocks, RC's split pairs,
    SC's out-of-size chunks)."""

    broken: list[BrokenBlock]
    split: list[SplitPair]
    out_of_size: dict[int, OutOfSize]
    pairs_checked: bool = True  # False: RC was not computed (no coreference: a non-English document, --coref none)

    @classmethod
    def of(cls, c: ChunkingResult) -> "Problems":
        """From the diagnostics (a report read from JSON lost its malformed entries on loading); a ``held_by`` or an
        out-of-size chunk that names no chunk of ``c`` is left out (the report itself is not changed)."""
        d, n = c.diagnostics, len(c.chunks)
        bi, rc, sc = d.get("BI"), d.get("RC"), d.get("SC")
        return cls(broken=[_held_checked(x, n) for x in bi.broken] if isinstance(bi, BlockDetails) else [],
                   split=[_held_checked(x, n) for x in rc.split] if isinstance(rc, ReferenceDetails) else [],
                   out_of_size={o.chunk: o for o in sc.out_of_size if 0 <= o.chunk < n}
                   if isinstance(sc, SizeDetails) else {},
                   pairs_checked="RC" in d)

    def split_count(self) -> int | None:
        """How many pairs the chunking splits; None when no pairs were looked for (not "none found")."""
        return len(self.split) if self.pairs_checked else None

    def positions(self, kind: str, c: ChunkingResult | None = None) -> list[int]:
        """Document offsets of each problem of ``kind`` (broken | split | size), for navigation.

        ``size`` needs the chunking ``c`` (the offsets are its out-of-size chunks' starts)."""
        return [a for a, _ in self.spans(kind, c)]

    def spans(self, kind: str, c: ChunkingResult | None = None) -> list[tuple[int, int]]:
        """(start, end) of each problem of ``kind``: the broken block, the pair from its first
        mention to the end of its last, or the out-of-size chunk."""
        if kind == "broken":
            return [(b.block[0], b.block[1]) for b in self.broken]
        if kind == "split":
            return [(p.start, p.end) for p in self.split]
        if kind == "size" and c is not None:
            return [(c.chunks[i].start, c.chunks[i].end) for i in sorted(self.out_of_size)]
        return []


P = TypeVar("P", BrokenBlock, SplitPair)


def _held_checked(x: P, n: int) -> P:
    """``x`` without its ``held_by`` when that names no chunk of a chunking of ``n`` chunks."""
    return x if x.held_by is None or x.held_by < n else replace(x, held_by=None)


BROKEN_COLOR = "#D55E00"  # marks a broken block (outline, cut, tag) in CSS below
SPLIT_COLOR = "#A0407F"  # marks a cut that splits an entity–pronoun pair


# split pairs cycle through these, so that a pair's two ends share a colour and a P-tag
PAIR_COLORS = ["#CC79A7", "#9467BD", "#E377C2", "#8C564B", "#17BECF", "#BCBD22"]


def _pair_index(x: SplitPair, n: int) -> int:
    """A split pair's index among the document's pairs (RC's ``pair``), or, in a report without it, its place ``n``
    in this chunking's list."""
    return x.pair if x.pair is not None else n


def pair_tag(x: SplitPair, n: int) -> str:
    """A split pair's tag, the same in every chunking's view: "P" and its number (from 1)."""
    return f"P{_pair_index(x, n) + 1}"


def pair_color(x: SplitPair, n: int) -> str:
    """The colour of a split pair's two ends (``PAIR_COLORS`` by its number, so the same pair in every view)."""
    return PAIR_COLORS[_pair_index(x, n) % len(PAIR_COLORS)]

HIGHLIGHT_CSS = """
<style>
.cs-hl{white-space:pre-wrap;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px;
  line-height:1.6;border:1px solid rgba(128,128,128,.35);border-radius:6px;padding:10px;overflow-x:auto;
  word-wrap:break-word}
.cs-c0{background:rgba(0,114,178,.10)} .cs-c1{background:rgba(230,159,0,.14)}
.cs-ov{background:rgba(128,128,128,.30)}
.cs-dim{opacity:.45}
.cs-b{display:inline-block;border-left:3px solid var(--cs-bc,#0072B2);margin:0 1px;height:1.15em;vertical-align:middle}
.cs-cut{display:inline-block;border-left:4px solid #D55E00;margin:0 1px;height:1.5em;vertical-align:middle;
  box-shadow:0 0 0 1px rgba(213,94,0,.35)}
.cs-lbl{font:600 10px sans-serif;color:#fff;background:#555;border-radius:3px;padding:0 3px;margin-right:2px;
  vertical-align:top}
.cs-lbl.cs-bad{background:#D55E00} .cs-lbl.cs-pbad{background:#A0407F}
.cs-pcut{border-left-color:#A0407F;box-shadow:0 0 0 1px rgba(160,64,127,.35)}
.cs-broken{outline:2px dashed #D55E00;outline-offset:1px;
  background-image:repeating-linear-gradient(135deg,rgba(213,94,0,.16) 0 6px,transparent 6px 12px)}
.cs-btag{font:700 10px sans-serif;color:#fff;background:#D55E00;border-radius:3px;padding:0 4px;margin-right:3px;
  vertical-align:top}
.cs-ent,.cs-pro{border-radius:2px;font-weight:700;background:color-mix(in srgb,var(--cs-pc) 35%,transparent);
  box-shadow:0 0 0 1px var(--cs-pc)}
.cs-pro{box-shadow:0 0 0 2px var(--cs-pc)}
.cs-ptag{font:700 10px sans-serif;color:var(--cs-pair-ink,#fff);background:var(--cs-pc);border-radius:3px;padding:0 3px;margin:0 2px;
  vertical-align:super}
.cs-focus{box-shadow:0 0 0 3px #F0E442}
.cs-here{font:700 10px sans-serif;white-space:nowrap;color:#111;background:#F0E442;border-radius:3px;padding:0 4px;margin-right:3px;
  vertical-align:top}
.cs-here.cs-here-same{color:inherit;background:transparent;box-shadow:inset 0 0 0 1.5px #F0E442}
</style>
"""


Mark = tuple[int, int, str, str, str]  # a class over text[a:b]: (a, b, class, title, style)
_BREAKS = " — this boundary breaks a block"
_SPLITS = " — this boundary splits an entity–pronoun pair"


def highlight_html(text: str, c: ChunkingResult, start: int = 0, end: int | None = None,
                   problems: Problems | None = None, show: Sequence[str] = ("broken", "split", "size"),
                   block_kinds: Sequence[str] | None = None, focus: tuple[int, int] | None = None,
                   color: str | None = None, dim_outside: tuple[int, int] | None = None,
                   here: int | None = None) -> str:
    """Escaped HTML of ``text[start:end]`` with chunk colours, boundaries and problems marked.

    Chunks alternate two tints; each boundary is a bar with the chunk number (in ``color``, the
    chunker's colour; red and taller when it breaks a block; tooltip with tokens). A broken block
    is outlined and hatched in red, tagged ``✂ <kind>`` where it starts. The entity and pronoun of
    each split pair share a colour and a ``P<n>`` tag (``pair_tag``: n = the pair's number among the document's pairs).
    ``focus`` (start, end) is ringed in yellow and tagged "▶ here" at ``here`` (default: where it
    starts; a broken block's tag goes where it is cut); without ``focus`` (the problem is another
    chunking's), ``here`` still gets a hollow "▷ here" tag: the same place in every column. Both
    tags carry ``data-cs-here`` (the offset), which ``ui.common.scroll_to_here`` scrolls to. Text
    outside ``dim_outside`` is dimmed (context around one chunk). Nothing from ``text`` reaches
    the HTML unescaped.
    """
    end = len(text) if end is None else min(end, len(text))
    start = max(0, min(start, end))
    problems = problems or Problems.of(c)
    broken = problems.broken if "broken" in show else []
    split = problems.split if "split" in show else []
    oos = problems.out_of_size if "size" in show else {}
    classes = _chunk_marks(c, start, end) + _dim_marks(dim_outside, start, end)
    heads: dict[int, list[str]] = {}
    focus_classes, focus_tag = _focus_mark(focus, here, start, end)
    if focus_tag:
        heads[focus_tag[0]] = [focus_tag[1]]
    classes += focus_classes
    broken_classes, broken_tags = _broken_marks(broken, start, end, block_kinds)
    classes += broken_classes
    for at, tag in broken_tags:
        heads.setdefault(at, []).append(tag)
    split_classes, pair_tags = _split_marks(split, start, end)
    classes += split_classes
    cuts, pair_cuts = {x.boundary for x in broken}, {x.boundary for x in split}
    bar = f' style="--cs-bc:{color}"' if color and _is_hex(color) else ""
    inserts = _joined(_end_marks(c, start, end, cuts, pair_cuts), _start_marks(c, start, end, oos, cuts, pair_cuts, bar),
                      _grouped(pair_tags), {k: "".join(v) for k, v in heads.items()})
    return _render(text, start, end, classes, inserts)


def _chunk_marks(c: ChunkingResult, start: int, end: int) -> list[Mark]:
    """Each chunk's tint (two alternating) and each overlap of two chunks, within ``[start, end)``."""
    out: list[Mark] = []
    for i, ch in enumerate(c.chunks):
        if ch.end <= start or ch.start >= end:
            continue
        a, b = max(ch.start, start), min(ch.end, end)
        if a < b:
            out.append((a, b, f"cs-c{i % 2}", f"chunk {i + 1}: {ch.tokens} tokens", ""))
        if i and c.chunks[i - 1].end > ch.start:  # overlap with the previous chunk
            oa, ob = max(ch.start, start), min(c.chunks[i - 1].end, end)
            if oa < ob:
                out.append((oa, ob, "cs-ov", f"overlap of chunks {i} and {i + 1}", ""))
    return out


def _dim_marks(dim_outside: tuple[int, int] | None, start: int, end: int) -> list[Mark]:
    """The context outside ``dim_outside``, dimmed."""
    if dim_outside is None:
        return []
    spans = ((max(a, start), min(b, end)) for a, b in ((start, dim_outside[0]), (dim_outside[1], end)))
    return [(a, b, "cs-dim", "context outside the chunk", "") for a, b in spans if a < b]


def _focus_mark(focus: tuple[int, int] | None, here: int | None, start: int, end: int
                ) -> tuple[list[Mark], tuple[int, str] | None]:
    """The current problem's ring and its "▶ here" tag; without ``focus`` in view, the hollow "▷ here" tag."""
    a, b = (max(focus[0], start), min(focus[1], end)) if focus is not None else (0, 0)
    if a < b:
        at = here if here is not None and a <= here < b else a
        return [(a, b, "cs-focus", "the current problem", "")], (
            at, f'<span class="cs-here" data-cs-here="{int(at)}" id="cs-here" data-at="{int(at)}">▶ here</span>')
    if here is not None and start <= here < end:
        return [], (here, f'<span class="cs-here cs-here-same" data-cs-here="{int(here)}" title="the current '
                          'problem\'s place (the problem is in another chunking)">▷ here</span>')
    return [], None


def _broken_marks(broken: list[BrokenBlock], start: int, end: int, block_kinds: Sequence[str] | None
                  ) -> tuple[list[Mark], list[tuple[int, str]]]:
    """Each broken block's outline and, where it starts, its "✂ broken <kind>" tag."""
    classes: list[Mark] = []
    tags: list[tuple[int, str]] = []
    for bb in broken:
        a, b = max(bb.block[0], start), min(bb.block[1], end)
        if a >= b:
            continue
        j = bb.index
        kind = block_kinds[j] if block_kinds is not None and j is not None and 0 <= j < len(block_kinds) else "block"
        title = (f"{kind_word(kind)} block #{(j or 0) + 1} [{bb.block[0]}, {bb.block[1]}) broken at "
                 f"{bb.boundary}" + (f" ({KIND_NOTES[kind]})" if kind in KIND_NOTES else ""))
        classes.append((a, b, "cs-broken", title, ""))
        if a == bb.block[0]:
            tags.append((a, f'<span class="cs-btag" title="{html.escape(title)}">✂ broken '
                            f'{html.escape(kind_word(kind))}</span>'))
    return classes, tags


def _split_marks(split: list[SplitPair], start: int, end: int) -> tuple[list[Mark], list[tuple[int, str]]]:
    """Each split pair's two mentions in the pair's colour and, where each ends, its ``P<n>`` tag."""
    classes: list[Mark] = []
    tags: list[tuple[int, str]] = []
    for n, p in enumerate(split):
        pc, tag = pair_color(p, n), pair_tag(p, n)
        for key, cls, span in (("entity", "cs-ent", p.entity), ("pronoun", "cs-pro", p.pronoun)):
            a, b = max(span[0], start), min(span[1], end)
            if a < b:
                classes.append((a, b, cls, f"{tag} {key}: split at {p.boundary}", f"--cs-pc:{pc}"))
                if b == span[1]:
                    tags.append((b, f'<span class="cs-ptag" style="--cs-pc:{pc};--cs-pair-ink:{ink_on(pc)}" '
                                    f'title="pair {tag} ({key})">{tag}</span>'))
    return classes, tags


def _start_marks(c: ChunkingResult, start: int, end: int, oos: dict[int, OutOfSize], cuts: set[int],
                 pair_cuts: set[int], bar: str) -> dict[int, str]:
    """The bar and ``#n`` label where each chunk starts (red ✂ when it breaks a block, purple ⛓ when it splits
    a pair, ⚠ when the chunk is out of size)."""
    marks: dict[int, str] = {}
    for i, ch in enumerate(c.chunks):
        if not (start <= ch.start < end or (i == 0 and ch.start == start)):
            continue
        o = oos.get(i)
        bad, splits = ch.start in cuts, ch.start in pair_cuts
        cls = "cs-cut" if bad else ("cs-cut cs-pcut" if splits else "cs-b")
        title = (f"chunk {i + 1} starts: {ch.tokens} tokens" + (f" ({o.kind}-size)" if o else "")
                 + (_BREAKS if bad else "") + (_SPLITS if splits else ""))
        lbl_cls = "cs-lbl cs-bad" if (bad or o) else ("cs-lbl cs-pbad" if splits else "cs-lbl")
        marks[ch.start] = (f'<span class="{cls}"{bar if not (bad or splits) else ""} '
                           f'title="{html.escape(title)}"></span>'
                           f'<span class="{lbl_cls}" title="{html.escape(title)}">#{i + 1}'
                           f'{" ✂" if bad else ""}{" ⛓" if splits else ""}{" ⚠" if o else ""}</span>')
    return marks


def _end_marks(c: ChunkingResult, start: int, end: int, cuts: set[int], pair_cuts: set[int]) -> dict[int, str]:
    """With overlapping chunks a chunk's end is a boundary of its own (BI / RC count it): its ``#n⟧`` label."""
    ends: dict[int, str] = {}
    for i, ch in enumerate(c.chunks[:-1]):
        if c.chunks[i + 1].start != ch.end and start < ch.end <= end:
            bad, splits = ch.end in cuts, ch.end in pair_cuts
            lbl_cls = "cs-lbl cs-bad" if bad else ("cs-lbl cs-pbad" if splits else "cs-lbl")
            title = f"chunk {i + 1} ends (the chunks overlap)" + (_BREAKS if bad else "") + (_SPLITS if splits else "")
            ends[ch.end] = (f'<span class="{lbl_cls}" title="{html.escape(title)}">#{i + 1}⟧'
                            f'{" ✂" if bad else ""}{" ⛓" if splits else ""}</span>')
    return ends


def _grouped(tags: list[tuple[int, str]]) -> dict[int, str]:
    """Tags at the same offset, joined in order."""
    out: dict[int, str] = {}
    for at, tag in tags:
        out[at] = out.get(at, "") + tag
    return out


def _joined(*layers: dict[int, str]) -> dict[int, str]:
    """The HTML inserted at each offset: the layers' pieces in the order given."""
    out: dict[int, str] = {}
    for layer in layers:
        for at, piece in layer.items():
            out[at] = out.get(at, "") + piece
    return out


def _render(text: str, start: int, end: int, classes: list[Mark], inserts: dict[int, str]) -> str:
    """``text[start:end]`` escaped, each stretch in a span with the classes over it, ``inserts`` at their offsets."""
    edges = {start, end, *inserts}
    for a, b, *_ in classes:
        edges.update((a, b))
    points: list = sorted(p for p in edges if start <= p <= end)
    classes = sorted(classes)
    out = [HIGHLIGHT_CSS, '<div class="cs-hl">']
    for a, b in zip(points, points[1:] + [None]):
        out.append(inserts.get(a, ""))
        if b is None or a >= b:
            continue
        active = [(cls, title, style) for (x, y, cls, title, style) in classes if x <= a and b <= y]
        seg = html.escape(text[a:b])
        if active:
            cls = " ".join(dict.fromkeys(k for k, _, _ in active))
            title = " | ".join(dict.fromkeys(t for _, t, _ in active))
            style = ";".join(s for _, _, s in active if s)
            style_attr = f' style="{style}"' if style else ""
            out.append(f'<span class="{cls}"{style_attr} title="{html.escape(title)}">{seg}</span>')
        else:
            out.append(seg)
    out.append("</div>")
    return "".join(out)


def _is_hex(color: str) -> bool:
    h = color.lstrip("#")
    return color.startswith("#") and len(h) in (3, 6) and all(ch in "0123456789abcdefABCDEF" for ch in h)


DARK_INK, LIGHT_INK = "#111", "#fff"


def ink_on(color: str) -> str:
    """The text colour for a label on background ``color`` (``#rgb`` / ``#rrggbb``): dark on a light
    colour, white on a dark one, whichever contrasts more by the WCAG relative luminance (white on
    #17becf or #bcbd22 is hard to read). White for anything that is not a hex colour."""
    if not _is_hex(color):
        return LIGHT_INK
    h = color.lstrip("#")
    h = "".join(ch * 2 for ch in h) if len(h) == 3 else h
    lin = [(v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4)
           for v in (int(h[i:i + 2], 16) / 255 for i in (0, 2, 4))]
    lum = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    # contrast with black (lum + .05) / .05 against with white 1.05 / (lum + .05): equal at lum ≈ 0.179
    return DARK_INK if (lum + 0.05) ** 2 > 0.05 * 1.05 else LIGHT_INK


def problem_counts(c: ChunkingResult) -> dict[str, int | None]:
    """The leaderboard's problem columns; "split pairs" is None when RC was not computed, every
    count None for a chunking that did not run (skipped, failed): nothing was counted, not zero."""
    if not c.ok:
        return {"broken blocks": None, "split pairs": None, "out-of-size chunks": None}
    p = Problems.of(c)
    return {"broken blocks": len(p.broken), "split pairs": p.split_count(), "out-of-size chunks": len(p.out_of_size)}
