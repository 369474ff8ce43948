"""Words of the text that refer to nothing: inside inline code, in quotation marks of their own, or in a Markdown
link's target."""

from __future__ import annotations

import bisect
import re

# inline code: backticks that pair up on a line; an apostrophe inside only within a word ("`\"It's\"`"), so that
# TeX's quotes ("the `ls' and `rm' commands") are not code
_CODE_SPAN = re.compile(r"`(?:[^`'\n]|'(?=[^\W\d_]))+`")


class CodeSpans:
    """The inline code spans of a text (``_CODE_SPAN``: they never cross a line), found in one pass and looked up
    by position (a pronoun or a mention on a long line no longer scans the line again)."""

    def __init__(self, text: str) -> None:
        spans = [m.span() for m in _CODE_SPAN.finditer(text)] if "`" in text else []
        self.starts = [a for a, _ in spans]
        self.ends = [b for _, b in spans]

    def at(self, idx: int) -> tuple[int, int] | None:
        """The span ``idx`` is strictly inside (after its opening backtick, before its end), else None."""
        k = bisect.bisect_right(self.starts, idx) - 1
        return (self.starts[k], self.ends[k]) if k >= 0 and self.starts[k] < idx < self.ends[k] else None


_OPEN_QUOTES, _CLOSE_QUOTES = "\"“‘'«", "\"”’'»"


def quoted_word(text: str, start: int, end: int) -> bool:
    """The word ``text[start:end]`` stands in quotation marks of its own: a word mentioned, not used ('pronouns used
    just like "she", "her" and "herself"'); "it's" and "rock'n'roll" are no quotes."""
    if start < 1 or end >= len(text) or text[start - 1] not in _OPEN_QUOTES or text[end] not in _CLOSE_QUOTES:
        return False
    return not (start >= 2 and text[start - 2].isalnum()) and not (end + 1 < len(text) and text[end + 1].isalnum())


def whole_code(text: str, start: int, end: int, code: CodeSpans, offset: int = 0) -> tuple[int, int]:
    """A mention's ``(start, end)`` in ``text`` (which starts at ``offset`` of the text ``code`` was found in)
    moved so that it holds whole inline code spans: one that starts inside `` `...` `` starts after it
    ("`Microsoft` `Windows` users", not "Microsoft` `Windows` users"; "If `user` is `true` the returned value":
    "the returned value"), and one that ends inside it ends after it ("a variable `b`")."""
    s = code.at(offset + start)
    if s is not None:
        rest = text[s[1] - offset:end]
        start = s[1] - offset + len(rest) - len(rest.lstrip())
    e = code.at(offset + end)
    if e is not None:
        end = e[1] - offset
    return start, end


def in_link_target(text: str, idx: int) -> bool:
    """``idx`` lies in a Markdown link's target: after "](" with no ")" nor space between."""
    j = text.rfind("](", 0, idx)
    return j >= 0 and not any(ch in ")\n \t" for ch in text[j + 2:idx])
