"""Page lists as warnings word them."""

from __future__ import annotations


def page_list(pages: list[int]) -> str:
    """"page 3" / "pages 1-4, 7" (consecutive pages as ranges)."""
    spans: list[list[int]] = []
    for p in pages:
        if spans and p == spans[-1][1] + 1:
            spans[-1][1] = p
        else:
            spans.append([p, p])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)
    return ("pages " if len(pages) > 1 else "page ") + text
