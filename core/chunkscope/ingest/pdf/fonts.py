"""The emphasis (bold, italic) of a page's runs of text, by the spans' flags or their fonts' names."""

from __future__ import annotations

import re
import unicodedata

from chunkscope.ingest.pdf.open import PDF_READ_ERRORS
from chunkscope.text.markup import alnum

# the emphasis a font's name says, where its flags do not: TeX's Type 1 fonts (revtex's section titles in CMBX9 and
# CMTI9; with T1 fontenc, cm-super's SFBX1000 / SFTI1000 and the EC fonts' ECBX1000 / ECTI1000) carry no bold or italic
# flag, so the converter writes them as plain text
# (Nimbus's "-Medi" is its bold, "-Medium" elsewhere (Roboto, HelveticaNeue) is not; "Ital" with its capital:
# "Digital" is no italic; math italic, CMMI, is variables)
_BOLD_FONT = re.compile(r"(?i:bold)|Black|Heavy|Demi|-Medi(?!um)"
                        r"|(?i:^cm(?:bx(?:ti|sl)?|b|ssbx)\d)|(?i:^(?:ec|sf)(?:bx|bi|bl|rb|sx)\d)")
_ITALIC_FONT = re.compile(r"Ital|Oblique|(?i:^cm(?:ti|sl|ssi|u)\d)|(?i:^(?:ec|sf)(?:ti|sl|si|ui)\d)")
_FONT_BOLD, _FONT_ITALIC = 16, 2  # PyMuPDF's span flags


def font_emphasis(page) -> list[tuple[str, str, tuple[int, ...]]]:
    """The page's runs of emphasised text in the order of its content stream (PyMuPDF's blocks and lines unsorted:
    not necessarily reading order), as ``(kind, key, starts)``: ``kind`` "bold" or "italic" (by the span's flags or
    its font's name), ``key`` the run's letters and digits (``alnum``; ligatures unfolded), ``starts`` 0 and the
    offsets in ``key`` where a later line of the page starts. A run is the longest stretch of spans with one emphasis
    (spaces and line ends do not break it: a title wrapped over two lines is one run), so a title in bold right under
    another ("II. THEORY" / "A. The model") starts at one of its ``starts``, not at 0. [] when the page cannot be
    read."""
    try:
        blocks = page.get_text("dict")["blocks"]
    except PDF_READ_ERRORS:
        return []
    out: list[tuple[str, str, tuple[int, ...]]] = []
    kind = ""
    run: list[str] = []  # each span's letters and digits
    starts: list[int] = []
    size = 0  # letters and digits in ``run`` so far

    def close() -> None:
        if kind:
            key = "".join(run)
            out.append((kind, key, tuple(dict.fromkeys(x for x in starts if x < len(key)))))

    for line in (x for b in blocks for x in b.get("lines", ())):
        first = True
        for span in line.get("spans", ()):
            text = unicodedata.normalize("NFKC", str(span.get("text", "")))
            if not text.strip():
                continue
            font, flags = str(span.get("font", "")).split("+")[-1], int(span.get("flags", 0))
            now = ("bold" if flags & _FONT_BOLD or _BOLD_FONT.search(font)
                   else "italic" if flags & _FONT_ITALIC or _ITALIC_FONT.search(font) else "")
            if now != kind:
                close()
                kind, run, starts, size = now, [], [0], 0
            if first:
                starts.append(size)
                first = False
            run.append(alnum(text))
            size += len(run[-1])
    close()
    return out
