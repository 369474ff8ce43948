"""LaTeX and TeX logos as the converter writes them ("L <sup>A</sup> TEX", "TEX"), written "LaTeX" / "TeX"."""

from __future__ import annotations

import re
from typing import Sequence

from chunkscope.ingest.outline import lines_outside_code

# the LaTeX logo (its "A" raised, its "E" lowered) comes out as "L <sup>A</sup> TEX", "L A TEX" or, in bold,
# "**L** <sup>**A**</sup> **TEX" (174 times in LaTeX's own user guide); LaTeX2e's epsilon as "LaTeX2 _ε_"
_LATEX_LOGO = re.compile(r"(?<![A-Za-z0-9])L(?P<m>[*_]*)(?:[ \t]*<sup>(?P=m)A(?P=m)</sup>[ \t]*|[ \t]+A[ \t]+)(?P=m)TEX"
                         r"(?![A-Za-z])")  # not "LATEX" written in capitals (the rubber: "NATURAL RUBBER LATEX")
_LATEX2E = re.compile(r"\bLaTeX[ \t]*2(?P<g>[*_ \t]*)ε(?P<h>[*_]*)")


def _latex2e(m: re.Match[str]) -> str:
    """"LaTeX2ε" where the markup between "2" and "ε" and after it pairs up (an italic's two ends: "2 _ε_"), so
    that dropping it leaves the styled runs whole; run after the split runs are joined ("2** **_ε_**" is not)."""
    marks = (m["g"] + m["h"]).replace(" ", "").replace("\t", "")
    if marks.count("**") % 2 or marks.replace("**", "").count("*") % 2 or marks.count("_") % 2:
        return m[0]
    return "LaTeX2ε"


# TeX's own logo (its "E" lowered) comes out as "TEX": "TEX Users Group", "SliTEX", "The TEXbook"
_TEX_LOGO = re.compile(r"(?<![A-Z0-9_$])TEX(?![A-Z0-9_=])")  # not "TEXI2ANY", "MY_TEX_VAR", "TEX=pdftex"


def latex_logos(md: str, tex: bool = False) -> str:
    """``md`` with the LaTeX logo written "LaTeX" (and "LaTeX2ε"); with ``tex`` (a document that prints the LaTeX
    logo, so typeset with TeX's logos) "TEX" is "TeX" too. Elsewhere "TEX" may be a word in capitals."""
    if "TEX" in md:
        md = _LATEX_LOGO.sub("LaTeX", md)
        if tex and "TEX" in md:
            lines = md.split("\n")
            for i in lines_outside_code(lines):  # outside fenced code, and outside inline code on the line
                parts = lines[i].split("`")
                lines[i] = "`".join(_TEX_LOGO.sub("TeX", x) if k % 2 == 0 else x for k, x in enumerate(parts))
            md = "\n".join(lines)
    return _LATEX2E.sub(_latex2e, md) if "ε" in md else md


def prints_latex_logo(pages: Sequence[str]) -> bool:
    """Whether the converter's pages print the LaTeX logo (then "TEX" is TeX's logo: ``latex_logos``)."""
    return any("TEX" in md and _LATEX_LOGO.search(md) for md in pages)
