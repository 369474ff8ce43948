"""Escaped HTML highlighting of a chunking's boundaries and problems in the document text.

Every piece of document text that ends up in HTML goes through ``html.escape``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Sequence

from chunkscope.report import ChunkingResult
from chunkscope.text.blocks import KIND_NOTES, kind_word

# ------------------------------------------------------------------ highlighted text

@dataclass
class Problems:
    """What to highlight for one chunking, taken from its metric diagnostics."""

    broken: list[dict[str, Any]]
    split: list[dict[str, Any]]
    out_of_size: dict[int, dict[str, Any]]
    pairs_checked: bool = True  # False: RC was not computed (no coreference: a non-English document, --coref none)

    @classmethod
    def of(cls, c: ChunkingResult) -> "Problems":
        """From the diagnostics; malformed entries (a damaged or foreign report) are left out."""
        d = c.diagnostics if isinstance(c.diagnostics, dict) else {}

        def entries(metric: str, key: str, ok) -> list[dict[str, Any]]:
            got = (d.get(metric) or {}).get(key, []) if isinstance(d.get(metric) or {}, dict) else []
            return [x for x in (got if isinstance(got, list) else []) if isinstance(x, dict) and _safe(ok, x)]

        broken = entries("BI", "broken", lambda x: _span(x["block"]) and isinstance(x["boundary"], int))
        split = entries("RC", "split", lambda x: _span(x["entity"]) and _span(x["pronoun"])
                        and isinstance(x["boundary"], int))
        oos = entries("SC", "out_of_size", lambda x: isinstance(x["chunk"], int) and 0 <= x["chunk"] < len(c.chunks))
        def held_checked(x: dict[str, Any]) -> dict[str, Any]:  # "held_by" names a chunk of this chunking, or goes
            h = x.get("held_by")
            ok = h is None or (type(h) is int and 0 <= h < len(c.chunks))
            return x if ok else {k: v for k, v in x.items() if k != "held_by"}  # the report itself is not changed

        broken, split = [held_checked(x) for x in broken], [held_checked(x) for x in split]
        return cls(broken=broken, split=split, out_of_size={o["chunk"]: o for o in oos},
                   pairs_checked=isinstance(d.get("RC"), dict))

    def split_count(self) -> int | None:
        """How many pairs the chunking splits; None when no pairs were looked for (not "none found")."""
        return len(self.split) if self.pairs_checked else None

    def positions(self, kind: str, c: ChunkingResult | None = None) -> list[int]:
        """Document offsets of each problem of ``kind`` (broken | split | size), for navigation.

        ``size`` needs the chunking ``c`` (the offsets are its out-of-size chunks' starts)."""
        if kind == "broken":
            return [b["block"][0] for b in self.broken]
        if kind == "split":
            return [min(p["entity"][0], p["pronoun"][0]) for p in self.split]
        if kind == "size" and c is not None:
            return [c.chunks[i].start for i in sorted(self.out_of_size) if i < len(c.chunks)]
        return []

    def spans(self, kind: str, c: ChunkingResult | None = None) -> list[tuple[int, int]]:
        """(start, end) of each problem of ``kind``: the broken block, the pair from its first
        mention to the end of its last, or the out-of-size chunk."""
        if kind == "broken":
            return [(b["block"][0], b["block"][1]) for b in self.broken]
        if kind == "split":
            return [(min(p["entity"][0], p["pronoun"][0]), max(p["entity"][1], p["pronoun"][1])) for p in self.split]
        if kind == "size" and c is not None:
            return [(c.chunks[i].start, c.chunks[i].end) for i in sorted(self.out_of_size) if i < len(c.chunks)]
        return []


BROKEN_COLOR = "#D55E00"  # marks a broken block (outline, cut, tag) in CSS below
SPLIT_COLOR = "#A0407F"  # marks a cut that splits an entity–pronoun pair


def _span(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, int) for x in v) and v[0] <= v[1]


def _safe(check, x: dict[str, Any]) -> bool:
    try:
        return bool(check(x))
    except (KeyError, TypeError, IndexError):
        return False


# split pairs cycle through these, so that a pair's two ends share a colour and a P-tag
PAIR_COLORS = ["#CC79A7", "#9467BD", "#E377C2", "#8C564B", "#17BECF", "#BCBD22"]


def _pair_index(x: dict[str, Any], n: int) -> int:
    """A split pair's index among the document's pairs (RC's ``pair``), or, in a report without it, its place ``n``
    in this chunking's list."""
    j = x.get("pair")
    return j if type(j) is int and j >= 0 else n


def pair_tag(x: dict[str, Any], n: int) -> str:
    """A split pair's tag, the same in every chunking's view: "P" and its number (from 1)."""
    return f"P{_pair_index(x, n) + 1}"


def pair_color(x: dict[str, Any], n: int) -> str:
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
    cuts = {b["boundary"] for b in problems.broken} if "broken" in show else set()
    pair_cuts = {p["boundary"] for p in problems.split} if "split" in show else set()
    classes_at: list[tuple[int, int, str, str, str]] = []  # (a, b, class, title, style)
    for i, ch in enumerate(c.chunks):
        if ch.end <= start or ch.start >= end:
            continue
        a, b = max(ch.start, start), min(ch.end, end)
        if a < b:
            classes_at.append((a, b, f"cs-c{i % 2}", f"chunk {i + 1}: {ch.tokens} tokens", ""))
        if i and c.chunks[i - 1].end > ch.start:  # overlap with the previous chunk
            oa, ob = max(ch.start, start), min(c.chunks[i - 1].end, end)
            if oa < ob:
                classes_at.append((oa, ob, "cs-ov", f"overlap of chunks {i} and {i + 1}", ""))
    tags: dict[int, list[str]] = {}
    heads: dict[int, list[str]] = {}
    if "broken" in show:
        for bb in problems.broken:
            a, b = max(bb["block"][0], start), min(bb["block"][1], end)
            if a < b:
                j = bb.get("index")
                kind = block_kinds[j] if block_kinds is not None and j is not None and 0 <= j < len(block_kinds) else "block"
                title = (f"{kind_word(kind)} block #{(j or 0) + 1} [{bb['block'][0]}, {bb['block'][1]}) broken at "
                         f"{bb['boundary']}" + (f" ({KIND_NOTES[kind]})" if kind in KIND_NOTES else ""))
                classes_at.append((a, b, "cs-broken", title, ""))
                if a == bb["block"][0]:
                    heads.setdefault(a, []).append(
                        f'<span class="cs-btag" title="{html.escape(title)}">✂ broken {html.escape(kind_word(kind))}</span>')
    if "split" in show:
        for n, p in enumerate(problems.split):
            pc, tag = pair_color(p, n), pair_tag(p, n)
            for key, cls in (("entity", "cs-ent"), ("pronoun", "cs-pro")):
                a, b = max(p[key][0], start), min(p[key][1], end)
                if a < b:
                    classes_at.append((a, b, cls, f"{tag} {key}: split at {p['boundary']}", f"--cs-pc:{pc}"))
                    if b == p[key][1]:
                        tags.setdefault(b, []).append(
                            f'<span class="cs-ptag" style="--cs-pc:{pc};--cs-pair-ink:{ink_on(pc)}" '
                            f'title="pair {tag} ({key})">{tag}</span>')
    a, b = (max(focus[0], start), min(focus[1], end)) if focus is not None else (0, 0)
    if a < b:
        classes_at.append((a, b, "cs-focus", "the current problem", ""))
        at = here if here is not None and a <= here < b else a
        heads.setdefault(at, []).insert(0, f'<span class="cs-here" data-cs-here="{int(at)}" id="cs-here" '
                                           f'data-at="{int(at)}">▶ here</span>')
    elif here is not None and start <= here < end:
        heads.setdefault(here, []).insert(0, f'<span class="cs-here cs-here-same" data-cs-here="{int(here)}" '
                                             'title="the current problem\'s place (the problem is in another '
                                             f'chunking)">▷ here</span>')
    if dim_outside is not None:
        for a, b in ((start, dim_outside[0]), (dim_outside[1], end)):
            a, b = max(a, start), min(b, end)
            if a < b:
                classes_at.append((a, b, "cs-dim", "context outside the chunk", ""))
    bar = f' style="--cs-bc:{color}"' if color and _is_hex(color) else ""
    marks: dict[int, str] = {}
    for i, ch in enumerate(c.chunks):
        if start <= ch.start < end or (i == 0 and ch.start == start):
            oos = problems.out_of_size.get(i) if "size" in show else None
            bad = ch.start in cuts
            splits = ch.start in pair_cuts
            cls = "cs-cut" if bad else ("cs-cut cs-pcut" if splits else "cs-b")
            title = f"chunk {i + 1} starts: {ch.tokens} tokens"
            if oos:
                title += f" ({oos['kind']}-size)"
            if bad:
                title += " — this boundary breaks a block"
            if splits:
                title += " — this boundary splits an entity–pronoun pair"
            lbl_cls = "cs-lbl cs-bad" if (bad or oos) else ("cs-lbl cs-pbad" if splits else "cs-lbl")
            marks[ch.start] = (f'<span class="{cls}"{bar if not (bad or splits) else ""} '
                               f'title="{html.escape(title)}"></span>'
                               f'<span class="{lbl_cls}" title="{html.escape(title)}">#{i + 1}'
                               f'{" ✂" if bad else ""}{" ⛓" if splits else ""}{" ⚠" if oos else ""}</span>')
    # with overlapping chunks a chunk's end is a boundary of its own (BI / RC count it): mark it
    ends: dict[int, str] = {}
    for i, ch in enumerate(c.chunks):
        nxt = c.chunks[i + 1].start if i + 1 < len(c.chunks) else None
        if nxt is not None and nxt != ch.end and start < ch.end <= end:
            bad, splits = ch.end in cuts, ch.end in pair_cuts
            lbl_cls = "cs-lbl cs-bad" if bad else ("cs-lbl cs-pbad" if splits else "cs-lbl")
            title = f"chunk {i + 1} ends (the chunks overlap)" + (" — this boundary breaks a block" if bad else "") + (
                " — this boundary splits an entity–pronoun pair" if splits else "")
            ends[ch.end] = (f'<span class="{lbl_cls}" title="{html.escape(title)}">#{i + 1}⟧'
                            f'{" ✂" if bad else ""}{" ⛓" if splits else ""}</span>')
    edges = {start, end, *marks, *tags, *heads, *ends}
    for a, b, *_ in classes_at:
        edges.update((a, b))
    points: list = sorted(p for p in edges if start <= p <= end)
    classes_at.sort()
    out = [HIGHLIGHT_CSS, '<div class="cs-hl">']
    for a, b in zip(points, points[1:] + [None]):
        if a in ends:
            out.append(ends[a])
        if a in marks:
            out.append(marks[a])
        if a in tags:
            out.append("".join(tags[a]))
        if a in heads:
            out.append("".join(heads[a]))
        if b is None or a >= b:
            continue
        active = [(cls, title, style) for (x, y, cls, title, style) in classes_at if x <= a and b <= y]
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
