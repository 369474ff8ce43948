"""The converter's Markdown as plain text, for matching lines (running headers, bookmarks); the invisible marks
(zero-width spaces and joiners, a stray byte-order mark) that HTML and slide text carry.

pymupdf4llm writes emphasis (``**``, ``_``, backticks) and inline HTML (``<u>``, ``<sup>``) into the
text; a page number, a running header or a bookmark's title is compared without them.
"""

from __future__ import annotations

import re

ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))  # str.translate table: invisible marks go
TAG = re.compile(r"</?[A-Za-z][\w-]*[^<>]*>")  # inline HTML (<u>, <sup>) that pymupdf4llm writes
LINK_TARGET = re.compile(r"\]\([^)\s]*\)")  # a Markdown link's target, "](https://…)": not text on the page


def alnum(s: str) -> str:
    """Letters and digits only, lower case, inline HTML left out ("**2.1** Getting <u>started</u>" gives
    "21gettingstarted")."""
    return "".join(ch for ch in TAG.sub("", s).lower() if ch.isalnum())


def plain(line: str) -> str:
    """A line without its emphasis marks, heading marks and inline HTML (``<u>3</u>``: an underlined
    page number), stripped."""
    return re.sub(r"[*_`#]", "", TAG.sub("", line)).strip()
