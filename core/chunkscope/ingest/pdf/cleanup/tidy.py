"""The converter's Markdown of one page tidied: markup that is the page's look, not its words, headings moved out
of code blocks, table-of-contents entries that are no headings, styled phrases and links it split."""

from __future__ import annotations

import re
from typing import Sequence

from chunkscope.ingest.outline import is_outline_title, lines_outside_code
from chunkscope.ingest.pdf.cleanup.latex import latex_logos

# what the converter writes for a picture ("**==> picture [...] intentionally omitted <==**", an image link): no ink text
PLACEHOLDER = re.compile(r"\*{0,2}==>.*?<==\*{0,2}|!\[[^\]]*\]\([^)]*\)")


# "©" typeset as "c" + COMBINING ENCLOSING CIRCLE (LaTeX \textcopyright) comes out as "_⃝_ c" or "c⃝"
# the converter's <u>/<mark> (underlined, highlighted text): a slide deck's titles came out as
# "**<mark>What</mark>** **<mark>is</mark>**", a fifth of its tokens; <sup>/<sub> are kept (x<sup>2</sup>)
_STYLE_TAG = re.compile(r"</?(?:u|mark)>")
_COPYRIGHT = re.compile(r"[_*]*\u20dd[_*]*\s?c(?![a-z])|c\u20dd")


# a heading the converter wrote (bold, at the start of its line), not code that starts with "#"
_BOLD_HEADING = re.compile(r"#{1,6} \*\*\S.*\*\*")
# a table-of-contents entry the converter took for a heading: "### 5 Binary files . . . . . 24" (dot leaders, not an
# ellipsis: "## And then... 2" stays a heading; spaced dots count from two: "### 2 Simple manipulations . . 8");
# only a line up to MAX_TOC_HEADING characters is tried (the lookahead backtracks over a long line's dots)
MAX_TOC_HEADING = 400
_TOC_HEADING = re.compile(r"#{1,6} (?=.*(?:(?: \.){2,}|(?:\. ){2,}\.|\.{4,})[_*]*\s*\d+\s*$)")


def _unfence_headings(md: str, titles: Sequence[str] = ()) -> str:
    """Move the converter's headings out of the code block they were put in: pymupdf4llm can close a
    code block after the heading that follows it ("```" code / "### **7.3 Input**" / "```"), or open
    it before the heading that precedes it. A heading there is a bold one (code may start with "#"), or
    one that is an outline title of its page (``titles``: their keys, ``outline.outline_entries``): a
    title holding code is not bold ("### 4.2 The function tapply() and ragged arrays"). Outside code, a
    table-of-contents entry it wrote as a heading becomes text."""

    def heading(line: str) -> bool:
        return bool(_BOLD_HEADING.fullmatch(line) or (titles and is_outline_title(line, titles)))

    lines = md.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            toc = _TOC_HEADING.match(lines[i]) if len(lines[i]) <= MAX_TOC_HEADING else None
            out.append(lines[i][toc.end():] if toc else lines[i])
            i += 1
            continue
        j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("```")), None)
        if j is None:
            out.extend(lines[i:])
            break
        body = lines[i + 1:j]
        lo, hi = 0, len(body)
        while lo < hi and (not body[lo].strip() or heading(body[lo].strip())):
            lo += 1
        while hi > lo and (not body[hi - 1].strip() or heading(body[hi - 1].strip())):
            hi -= 1
        head, code, tail = body[:lo], body[lo:hi], body[hi:]  # (headings moved out are not ToC entries)
        if not any(x.strip() for x in head + tail):
            out.extend(lines[i:j + 1])  # nothing to move: the block as it was
            i = j + 1
            continue
        out.extend([*head, ""] if any(x.strip() for x in head) else [])
        if code:
            out.extend([lines[i], *code, lines[j]])
        out.extend(["", *tail] if any(x.strip() for x in tail) else [])
        i = j + 1
    return "\n".join(out)


# a chapter's label alone on the line above its heading (Sphinx's LaTeX: "CHAPTER" / "ONE" / title): it was a
# paragraph of its own, filed under the chapter before and often left at the end of that chapter's last chunk
_CHAPTER_WORD = re.compile(r"(?m)^([*_]*(?:chapter|appendix|part)[*_]*)[ \t]*\n\n(#{1,6}) ", re.IGNORECASE)


# the converter writes a styled phrase word by word ("**Blank** **lines**", "_An_ _Introduction_ _to_ _R_",
# "`if(any(x` `<=` `0))`"): the markup between two runs of one style, a space apart, goes
_SPLIT_RUNS = re.compile(r"(?<=[^\s*])\*\* \*\*(?=[^\s*])|(?<=[^\s_])_ _(?=[^\s_])|(?<=[^\s`])` `(?=[^\s`])")


# a link the converter cut at a line break into two links to one target ("[https://CRAN.R-project.org/](U)`" over
# "`[package=MASS](U)"), each perhaps in its own code span
_SPLIT_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)(`?)\n(`?)\[([^\]\n]+)\]\(\2\)")


def _join_link(m: re.Match[str]) -> str:
    if m[3] != m[4]:
        return m[0]
    glue = "" if " " not in m[1] and ("/" in m[1] or "." in m[1]) else " "  # a wrapped URL has no space
    return f"[{m[1]}{glue}{m[5]}]({m[2]})"


def join_split_runs(md: str) -> str:
    """``md`` with each styled phrase the converter split word by word written as one run, and each link it cut
    at a line break as one link, outside fenced code (only markup and that line break go: the words stay, so
    page boxes still map)."""
    if "](" not in md and "** **" not in md and "_ _" not in md and "` `" not in md:
        return md
    lines = md.split("\n")
    outside = set(lines_outside_code(lines))
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and j in outside:  # a stretch of lines outside code, fixed as one text
            j += 1
        if j > i:
            out.append(_SPLIT_RUNS.sub(" ", _SPLIT_LINK.sub(_join_link, "\n".join(lines[i:j]))))
        else:
            out.append(lines[i])  # a fence, or a line of code
            j = i + 1
        i = j
    return "\n".join(out)


def tidy_page(md: str, titles: Sequence[str] = (), tex: bool = False) -> str:
    """One page's converter Markdown tidied (see the module doc); ``titles``: its outline titles' keys, ``tex``:
    the document prints the LaTeX logo."""
    md = _COPYRIGHT.sub("©", md)
    md = _STYLE_TAG.sub("", md)  # underline and highlight are the page's look, not its words
    md = latex_logos(md, tex)
    md = md.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n").replace("\x00", "")
    md = re.sub(r"[ \t]+\n", "\n", md)
    md = _unfence_headings(md, titles) if "#" in md else md
    md = re.sub(r"(?<=[^\n])\n(?=#{1,6} )", "\n\n", md)  # a blank line before each heading
    md = _CHAPTER_WORD.sub(r"\2 \1 ", md)  # "**CHAPTER**" above "## **TWO** **…**" belongs to that heading
    md = re.sub(r"\n{3,}", "\n\n", md)
    return md.strip()


def has_words(md: str) -> bool:
    """Whether the page's Markdown holds a letter or digit outside image placeholders."""
    return any(ch.isalnum() for ch in PLACEHOLDER.sub("", md))
