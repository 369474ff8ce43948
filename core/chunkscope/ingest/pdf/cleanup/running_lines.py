"""Running page headers and footers: found on the pages' first and last lines, then marked as layout comments
(``<!-- PageHeader: ... -->``) or removed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from chunkscope.text.markup import alnum, plain


def _line_key(line: str) -> str:
    """A running header/footer line with its numbers and emphasis removed."""
    return re.sub(r"\d+", "#", re.sub(r"[*_`]", "", line)).strip().lower()


def _start_key(line: str) -> str | None:
    """The first two words of a running header whose title changes with the chapter ("CHAPTER 3.
    CHOOSING A DEBIAN ... 3.1. WHICH ..." gives "chapter #."): None for a heading, a list item, a line
    of fewer than three words or a long one, and a start without a word of three letters."""
    stripped = line.strip()
    if stripped.startswith(("#", "-", "*", "+", "(", "|", ">")) or stripped[:1].isdigit():
        return None
    key = _line_key(stripped)
    toks = key.split()
    if len(toks) < 3 or len(key) > 150:
        return None
    start = " ".join(toks[:2])
    return start if re.search(r"[^\W\d_]{3}", start) else None


_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-\u2013\u2014(]?\s*(\d{1,4})\s*[-\u2013\u2014)]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)
_LIST_ITEM = re.compile(r"^\s*[-*+]\s")
_EDGE_NUMBER = re.compile(r"^(\d{1,4})\s+\S|\S\s+(\d{1,4})$")


@dataclass
class RunningLines:
    """Running headers/footers found: ``found[page_index] = [(line_index, "header"|"footer", reason)]``.
    ``reason``: "repeated" (same line, numbers aside), "page number" (a page number alone),
    "chapter + page number" (a short line that varies with the chapter and carries the page number),
    "same start" (a header that varies with the chapter and section but always starts alike)."""

    found: dict[int, list[tuple[int, str, str]]] = field(default_factory=dict)
    texts: dict[int, list[str]] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Pages with running lines, their count by kind, and up to five examples (JSON)."""
        by: dict[str, int] = {}
        for items in self.found.values():
            for _, edge, reason in items:
                by[f"{edge}: {reason}"] = by.get(f"{edge}: {reason}", 0) + 1
        examples = [t for ts in self.texts.values() for t in ts][:5]
        return {"pages": len(self.found), "by_kind": by, "examples": examples}


def edge_lines(words: list, info: tuple = (), band: float = 0.15) -> tuple[str, str]:
    """Alphanumerics of the top-most and bottom-most text line of a page (words on one baseline);
    "" for a line outside the top (bottom) ``band`` of the page height: no running line there."""
    if not words:
        return "", ""
    height = float(info[1]) if len(info) > 1 and info[1] > 0 else 0.0
    top = min(w[1] for w in words)
    bottom = max(w[3] for w in words)
    t = sorted((w for w in words if w[1] <= top + 2.0), key=lambda w: w[0])
    b = sorted((w for w in words if w[3] >= bottom - 2.0), key=lambda w: w[0])
    tk = alnum("".join(str(w[4]) for w in t))
    bk = alnum("".join(str(w[4]) for w in b))
    if height:
        tk = tk if top <= height * band else ""
        bk = bk if bottom >= height * (1 - band) else ""
    return tk, bk


def _page_number(line: str) -> int | None:
    m = _PAGE_NUMBER.match(plain(line))
    return int(m.group(1)) if m else None


_ROMAN = re.compile(r"^(?=[ivxlc])(x{0,3})(ix|iv|v?i{0,3})$", re.IGNORECASE)
ROMAN_NEED = 3  # front-matter pages numbered i, ii, iii...: too few for the quarter of pages, so at least this many


def _roman_number(line: str) -> int | None:
    """The value of a line that is a Roman page number alone ("**iv**"), up to 39; None otherwise."""
    m = _ROMAN.match(plain(line))
    if not m:
        return None
    tens, ones = m.group(1).lower(), m.group(2).lower()
    values = {"": 0, "i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9}
    return 10 * len(tens) + values[ones]


def _edge_number(line: str) -> int | None:
    text = plain(line)
    if len(text) > 100:
        return None
    m = _EDGE_NUMBER.search(text)
    if not m:
        return None
    return int(m.group(1) or m.group(2))


def find_running_lines(pages: list[str], edges: list[tuple[str, str]] | None = None,
                       min_share: float = 0.25) -> tuple[list[str], RunningLines]:
    """Find running page headers / footers (see ``RunningLines``); pages are returned unchanged.

    The first (last) line of a page is a header (footer) when, on at least a quarter of the pages
    with text and at least 3 of them: the same line (numbers aside) starts (ends) the page; or the
    line is a page number alone; or it is a short line whose leading/trailing number follows the
    page index (the same offset on those pages: "Appendix A: Copying Information 29"); or, for a
    header, its first two words (numbers aside) start the page ("CHAPTER 3. CHOOSING A DEBIAN ...
    3.1. WHICH ...", see ``_start_key``; never a heading or a list item). With
    ``edges`` (the top/bottom ink lines of each page) a page-number line must also be the page's
    top (bottom) line, so a numbered heading or list item is never taken for one; and a line of three
    words or more (not a heading, a table row or a list item) that is the top (bottom) ink line of at
    least a quarter of the pages of one side, odd or even, and at least 2 of them, and that never starts
    (ends) a page of the other side, is a running line too (alternating headers: a 6-page paper's "Title …
    Conference" on pages 3 and 5; not a slide title repeated over three overlay slides, 7 to 9).
    """
    found = RunningLines()
    with_text = [i for i, md in enumerate(pages) if md.strip()]
    if len(with_text) < 3:
        return pages, found
    need = max(3, int(len(with_text) * min_share + 0.999))
    # the same share of the pages of one side (odd or even), at least 2: "Title ... Conference" on pages 3 and 5 of 6
    need_side = [max(2, int(sum(1 for k in with_text if k % 2 == side) * min_share + 0.999)) for side in (0, 1)]
    tally = _Tally(edges, need, need_side)
    info = {}
    for k in with_text:
        i, j, lines = _ends(pages[k])
        if i >= 0:
            info[k] = (i, j, lines)
            tally.count(k, lines[i], lines[j])
    inner = _inner_page_numbers(info, edges)  # a page number the converter put between two columns
    for k, (at_edge, number, _) in inner.items():
        tally.offsets[(at_edge, number - k)] = tally.offsets.get((at_edge, number - k), 0) + 1
    for k, (i, j, lines) in info.items():
        items = tally.page_items(k, i, j, lines, inner.get(k))
        if items:
            found.found[k] = items
            found.texts[k] = [lines[n].strip() for n, _, _ in items]
    return pages, found


def _ends(md: str) -> tuple[int, int, list[str]]:
    """The page's lines and the indices of its first and last line with text ((-1, -1) for fewer than two)."""
    lines = md.split("\n")
    idx = [i for i, ln in enumerate(lines) if ln.strip()]
    return (idx[0], idx[-1], lines) if len(idx) >= 2 else (-1, -1, lines)


@dataclass
class _Tally:
    """What the first and last lines of the pages with text have in common, counted, and the rules of
    ``find_running_lines`` that read the counts."""

    edges: list[tuple[str, str]] | None
    need: int
    need_side: list[int]
    by_side: dict[tuple[str, int, str], int] = field(default_factory=dict)  # (edge, page parity, key): count
    starts: dict[str, int] = field(default_factory=dict)
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)  # (edge, page number - page index): count
    romans: dict[tuple[str, int], int] = field(default_factory=dict)

    def count(self, k: int, first: str, last: str) -> None:
        """Count page ``k``'s first and last lines."""
        for edge, n in (("header", first), ("footer", last)):
            side = (edge, k % 2, _line_key(n))
            self.by_side[side] = self.by_side.get(side, 0) + 1
        sk = _start_key(first)
        if sk is not None:
            self.starts[sk] = self.starts.get(sk, 0) + 1
        for edge, n in (("header", first), ("footer", last)):
            num = _edge_number(n) if _page_number(n) is None else _page_number(n)
            if num is not None:
                self.offsets[(edge, num - k)] = self.offsets.get((edge, num - k), 0) + 1
            roman = _roman_number(n)
            if roman is not None:
                self.romans[(edge, roman - k)] = self.romans.get((edge, roman - k), 0) + 1

    def page_items(self, k: int, i: int, j: int, lines: list[str],
                   inner: tuple[str, int, int] | None) -> list[tuple[int, str, str]]:
        """Page ``k``'s running lines: ``(line index, edge, reason)``, its footer first."""
        items = []
        r = self.reason(k, lines[j], "footer")
        if r:
            items.append((j, "footer", r))
        r = self.reason(k, lines[i], "header")
        if r:
            items.append((i, "header", r))
        if inner is not None:  # also on a page whose running line of the other edge was found (its running title)
            at_edge, number, at = inner
            if self.offsets[(at_edge, number - k)] >= self.need and all(e != at_edge for _, e, _ in items):
                items.append((at, at_edge, "page number inside the page"))
        return items

    def on_edge(self, k: int, line: str, edge: str) -> bool:
        """Whether ``line`` is page ``k``'s top (bottom) ink line (always, without ``edges``)."""
        if self.edges is None or k >= len(self.edges):
            return True
        ink = self.edges[k][0 if edge == "header" else 1]
        a = alnum(line)
        return bool(a) and bool(ink) and (a == ink or (len(ink) >= 1 and (ink in a or a in ink)))

    def reason(self, k: int, line: str, edge: str) -> str | None:
        """Why ``line``, page ``k``'s first (``edge`` "header") or last line, is a running line; None if it is not."""
        key = _line_key(line)
        if not key or key.startswith("|") or len(key) > 200:
            return None
        if self.by_side.get((edge, 0, key), 0) + self.by_side.get((edge, 1, key), 0) >= self.need:  # both sides
            return "repeated" if self.on_edge(k, line, edge) else None
        return self._numbered(k, line, edge) if _page_number(line) is not None or _roman_number(line) is not None \
            else self._other(k, line, edge, key)

    def _numbered(self, k: int, line: str, edge: str) -> str | None:
        """A page number alone (Arabic, or Roman with its offset to the page index shared by 3 pages)."""
        num = _page_number(line)
        if num is not None:
            return "page number" if self.offsets.get((edge, num - k), 0) >= self.need and self.on_edge(k, line, edge) \
                else None
        roman = _roman_number(line)
        if roman is not None and self.romans.get((edge, roman - k), 0) >= ROMAN_NEED and self.on_edge(k, line, edge):
            return "page number"
        return None

    def _other(self, k: int, line: str, edge: str, key: str) -> str | None:
        """A chapter title with the page number, a header that starts alike, or one repeated on alternate pages."""
        num = _edge_number(line)
        if num is not None and self.offsets.get((edge, num - k), 0) >= self.need and self.on_edge(k, line, edge) \
                and not _LIST_ITEM.match(line):  # a bullet, not bold markup: "**6** **Chapter 2.**" is a footer
            return "chapter + page number"
        sk = _start_key(line) if edge == "header" else None
        if sk is not None and self.starts.get(sk, 0) >= self.need and self.on_edge(k, line, edge):
            return "same start"
        if self.edges is not None and self.by_side.get((edge, k % 2, key), 0) >= self.need_side[k % 2] \
                and not self.by_side.get((edge, 1 - k % 2, key)) and len(key.split()) >= 3 \
                and not line.lstrip().startswith(("#", "|")) and not _LIST_ITEM.match(line) \
                and self.on_edge(k, line, edge):
            return "repeated on alternate pages"  # a book's or a paper's odd-page header: too few pages for the first rule
        return None


def _inner_page_numbers(info: dict[int, tuple[int, int, list[str]]], edges: list[tuple[str, str]] | None
                        ) -> dict[int, tuple[str, int, int]]:
    """Pages whose top (bottom) ink line is a number alone that the Markdown has as a line of its own, but
    not first (last): a two-column page's number, which the converter writes between the columns.
    ``{page: (edge, number, line index)}``."""
    out: dict[int, tuple[str, int, int]] = {}
    if edges is None:
        return out
    for k, (i, j, lines) in info.items():
        if k >= len(edges):
            continue
        for edge, ink in (("header", edges[k][0]), ("footer", edges[k][1])):
            if not re.fullmatch(r"[0-9]{1,4}", ink):  # "²".isdigit() is true, and int("²") fails
                continue
            at = [n for n in range(i + 1, j) if plain(lines[n]) == ink]
            if at:
                out[k] = (edge, int(ink), at[0] if edge == "header" else at[-1])
                break
    return out


def apply_running_lines(pages: list[str], found: RunningLines, strip: bool = False) -> list[str]:
    """Pages with their running lines turned into ``<!-- PageHeader: ... -->`` / ``PageFooter``
    layout comments (or removed with ``strip``)."""
    out = []
    for k, md in enumerate(pages):
        items = found.found.get(k)
        if not items:
            out.append(md)
            continue
        lines = md.split("\n")
        for n, edge, _ in items:
            if strip:
                lines[n] = ""
            elif edge == "footer":
                lines[n] = "\n<!-- PageFooter: " + lines[n].strip().replace("-->", "->") + " -->"
            else:
                lines[n] = "<!-- PageHeader: " + lines[n].strip().replace("-->", "->") + " -->\n"
        out.append(re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip())
    return out
