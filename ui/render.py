"""HTML for the document view with blocks outlined. Pure functions (no Streamlit), so tests can call them.

All document text goes through ``html.escape`` before it is placed in HTML.
"""

from __future__ import annotations

import bisect
import html
import re

from chunkscope.document import Block, Document
from chunkscope.present.highlight import ink_on
from chunkscope.present.paging import View, document_views
from chunkscope.text.blocks import kind_word

KIND_COLORS = {
    "heading": "#1f77b4",
    "paragraph": "#7f7f7f",
    "group": "#2ca02c",
    "list": "#17becf",
    "table": "#ff7f0e",
    "figure": "#9467bd",
    "code": "#8c564b",
    "footnote": "#e377c2",
    "toc": "#aec7e8",
    "layout": "#bcbd22",
    "gold": "#d62728",
}
MAX_BLOCK_CHARS = 20_000  # a single giant block is shown truncated
WINDOW_CHARS = 12_000  # documents without pages are shown in windows of about this size

CSS = """<style>
.cs-doc {font-size: 0.9rem; line-height: 1.35;}
.cs-block {border: 1px solid var(--cs-c); border-left: 5px solid var(--cs-c); border-radius: 4px;
  margin: 0 0 6px 0; padding: 4px 8px 6px 8px;}
.cs-tag {display: inline-block; font: 600 0.72rem sans-serif; color: var(--cs-ink, #fff); background: var(--cs-c);
  border-radius: 3px; padding: 0 5px; margin-bottom: 3px;}
.cs-text {white-space: pre-wrap; word-wrap: break-word; font-family: ui-monospace, Menlo, Consolas, monospace;
  font-size: 0.82rem; margin: 0;}
.cs-more {color: #888; font-style: italic;}
</style>"""


def views(doc: Document, window_chars: int = WINDOW_CHARS) -> list[View]:
    """The block view's pieces: ``chunkscope.paging.document_views`` (pages, or windows of about
    ``window_chars`` ending on a block boundary) that hold a block start, or text of a block that
    started before (a PDF paragraph going on over a page: that block is shown there too, first)."""
    starts = [b.start for b in doc.blocks]
    out = []
    for v in document_views(doc, window_chars):
        if v.has_blocks:
            before = doc.blocks[v.first - 1] if v.first > 0 else None
            if before is not None and before.end > v.start and _words(doc.text[v.start:before.end]):
                v = View(v.label, v.start, v.end, v.first - 1, v.last)  # a block going on from the page before
            out.append(v)
        elif starts and doc.text[v.start:v.end].strip():
            i = max(0, bisect.bisect_right(starts, v.start) - 1)
            out.append(View(v.label, v.start, v.end, i, i))
    return out


def _words(text: str) -> bool:
    """Text with words outside layout comments (a page break, a running header)."""
    return any(ch.isalnum() for ch in re.sub(r"<!--.*?-->", "", text, flags=re.S))


def _colors(color: str) -> str:
    """A kind's colour and the text colour its tag needs on it (dark on light colours)."""
    return f"--cs-c: {color}; --cs-ink: {ink_on(color)}"


def block_html(doc: Document, index: int, block: Block, tokens: int | None = None) -> str:
    text = doc.text[block.start:block.end]
    more = ""
    if len(text) > MAX_BLOCK_CHARS:
        more = f'<div class="cs-more">... {len(text) - MAX_BLOCK_CHARS:,} more characters in this block</div>'
        text = text[:MAX_BLOCK_CHARS]
    color = KIND_COLORS.get(block.kind, "#444")
    tag = f"#{index + 1} {html.escape(kind_word(block.kind))} · chars {block.start:,}–{block.end:,}"
    if tokens is not None:
        tag += f" · {tokens:,} tokens"
    return (
        f'<div class="cs-block" style="{_colors(color)}"><span class="cs-tag">{tag}</span>'
        f'<pre class="cs-text">{html.escape(text.rstrip())}</pre>{more}</div>'
    )


def blocks_html(doc: Document, view: View, with_tokens: bool = True) -> str:
    """HTML for the blocks of one view, each outlined and labelled with its kind."""
    from chunkscope.text.tokens import count_many

    blocks = doc.blocks[view.first:view.last + 1]
    counts = count_many([doc.text[b.start:b.end] for b in blocks]) if with_tokens else [None] * len(blocks)
    parts = [block_html(doc, view.first + i, b, t) for i, (b, t) in enumerate(zip(blocks, counts))]
    return CSS + '<div class="cs-doc">' + "".join(parts) + "</div>"


def legend_html(kinds: dict[str, int]) -> str:
    items = [
        f'<span class="cs-tag" style="{_colors(KIND_COLORS.get(k, "#444"))}">{html.escape(kind_word(k))} {n}</span>'
        for k, n in kinds.items()
    ]
    return CSS + " ".join(items)
