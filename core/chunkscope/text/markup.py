"""The converter's Markdown as plain text, for matching lines (running headers, bookmarks); the invisible marks
(zero-width spaces and joiners, a stray byte-order mark) that HTML and slide text carry; the layout comments
(``LAYOUT_COMMENT``) and a chunk's text made ready to embed (:func:`clean_text`, :func:`contextualize`).

pymupdf4llm writes emphasis (``**``, ``_``, backticks) and inline HTML (``<u>``, ``<sup>``) into the
text; a page number, a running header or a bookmark's title is compared without them.
"""

from __future__ import annotations

import re

ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))  # str.translate table: invisible marks go
TAG = re.compile(r"</?[A-Za-z][\w-]*[^<>]*>")  # inline HTML (<u>, <sup>) that pymupdf4llm writes
LINK_TARGET = re.compile(r"\]\([^)\s]*\)")  # a Markdown link's target, "](https://…)": not text on the page
# a layout comment: a page break, a running header/footer or a page number as converters write
# them (pymupdf4llm and our PDF loader: ``<!-- PageBreak -->``, ``<!-- PageHeader: … -->``; Azure
# Document Intelligence, the paper's corpus: ``<!-- PageFooter="…" -->``, ``<!-- PageNumber="3" -->``;
# ``<!-- page 12 -->``, ``<!-- 12 of 40 -->``). Any other ``<!-- … -->`` (an XML or HTML sample in
# the text, an author's note) is document content. ``LAYOUT_OPEN``: how one starts (the block builder's
# test of a line); ``LAYOUT_COMMENT``: a whole one, to its ``-->``.
_LAYOUT_NAMED = r"page[ _-]?(?:break|header|footer|number)\b"
_LAYOUT_NUMBER = r"(?:page\s*)?[-–]?\s*\d{1,5}\s*[-–]?\s*(?:(?:of|/)\s*\d{1,5}\s*)?-->"
LAYOUT_OPEN = re.compile(rf"^\s*<!--\s*(?:{_LAYOUT_NAMED}|{_LAYOUT_NUMBER})", re.IGNORECASE)
LAYOUT_COMMENT = re.compile(rf"<!--\s*(?:{_LAYOUT_NAMED}(?:(?!<!--).)*?-->|{_LAYOUT_NUMBER})", re.IGNORECASE | re.DOTALL)
# inline HTML that holds nothing but white space ("<sup></sup>", "<u> </u>"), and emphasis around nothing ("** **")
_EMPTY_TAG = re.compile(r"<([A-Za-z][\w-]*)\b[^<>]*>\s*</\1\s*>")
_EMPTY_EMPHASIS = re.compile(r"(?<![*_\w])(\*\*|__)[ \t]*\1(?![*_\w])")
EMBED_TEXTS = ("raw", "clean", "context")  # what of a chunk is embedded: its span's text, clean_text, contextualize


def alnum(s: str) -> str:
    """Letters and digits only, lower case, inline HTML left out ("**2.1** Getting <u>started</u>" gives
    "21gettingstarted")."""
    return "".join(ch for ch in TAG.sub("", s).lower() if ch.isalnum())


def plain(line: str) -> str:
    """A line without its emphasis marks, heading marks and inline HTML (``<u>3</u>``: an underlined
    page number), stripped."""
    return re.sub(r"[*_`#]", "", TAG.sub("", line)).strip()


def clean_text(text: str) -> str:
    """A chunk's text as one embeds it: layout comments (``<!-- PageFooter: 3 -->``, ``<!-- PageBreak -->``),
    form feeds, invisible marks and empty markup (``<sup></sup>``, ``** **``) removed; spaces and tabs run
    together, lines stripped at their end, at most one blank line in a row, no blank edges.

    Only the text changes: a chunk's span (``start``, ``end``) still names the document's characters."""
    s = LAYOUT_COMMENT.sub("", text.translate(ZERO_WIDTH)).replace("\f", "\n")
    while True:  # "<sup><u></u></sup>": empty once the inner one is gone
        t = _EMPTY_EMPHASIS.sub("", _EMPTY_TAG.sub("", s))
        if t == s:
            break
        s = t
    lines = [re.sub(r"[ \t\u00a0]+", " ", ln).rstrip() for ln in s.replace("\r\n", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def contextualize(text: str, heading_path: list[str] | tuple[str, ...]) -> str:
    """``clean_text(text)`` after the chunk's heading path, as Docling's ``contextualize`` writes it:
    ``"Title > Section\n\n" + clean text`` (the clean text alone without headings)."""
    body = clean_text(text)
    titles = [" ".join(t.split()) for t in heading_path if t and t.strip()]
    return " > ".join(titles) + "\n\n" + body if titles else body


def embedding_text(raw: str, heading_path: list[str] | tuple[str, ...], mode: str) -> str:
    """The text of a chunk to embed for ``mode`` (``EMBED_TEXTS``): ``raw`` its span's text as is, ``clean``
    :func:`clean_text`, ``context`` :func:`contextualize`. An unknown mode is a ValueError naming the choices."""
    if mode == "raw":
        return raw
    if mode == "clean":
        return clean_text(raw)
    if mode == "context":
        return contextualize(raw, heading_path)
    raise ValueError(check_embed_text(mode))


def check_embed_text(mode: str) -> str:
    """"" when ``mode`` is one of ``EMBED_TEXTS``, else the one-line problem."""
    return "" if mode in EMBED_TEXTS else f"embed text {mode!r}: choose one of {', '.join(EMBED_TEXTS)}"
