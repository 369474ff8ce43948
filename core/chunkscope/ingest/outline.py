"""Heading levels from a PDF's outline (its bookmarks), when it has one.

pymupdf4llm guesses headings from font sizes: in a typical manual, chapters and sections come out
at the same level, sub-sections stay bold paragraphs ("**3.1.1** **Work towards the next**
`stable` **release**"), and a chapter's title is run together with its first section ("### **TWO**
**APPLYING TO BECOME A MEMBER** **2.1 Getting started**"). The outline says which titles are
headings and how deep each is. ``apply_outline`` matches each page's heading lines and bold
standalone lines against the outline entries of that page (letters and digits only, so markup,
spacing and a hyphenated line break do not matter) and:

- gives a matched heading the outline's level (level 1 is written ``##``: ``#`` stays the
  document's title);
- makes a matched bold line standing alone a heading;
- splits a heading that is two outline titles run together (a chapter and its first section) in
  two headings, and joins a title written as two heading lines ("Part I" / "Gnuplot");
- puts a heading that matches no entry one level under the matched heading before it, when it
  would otherwise close that section (``_nest``; headings before the first match stay, except that
  only the title may be ``#``: a "# Contents" becomes a sibling of the chapters, not their parent).

Only ``#`` marks and line breaks are added or removed: every character of the page is kept, so
page boxes still map.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Sequence

from chunkscope.text.markup import TAG, alnum, plain

_HEADING = re.compile(r"(#{1,6}) +(\S.*)$")
# a line made only of bold runs and inline code: a sub-section title the converter did not call a heading
_BOLD = r"\*\*(?:[^*\n]|\*(?!\*))+\*\*"  # "***.eps)**": a "*" inside
_ITALIC = r"_[^_\n]+_|\*[^*\n]+\*"
_CODE = r"`[^`\n]+`"
_BOLD_LINE = re.compile(rf"(?:{_BOLD}|{_CODE}|[ \t])+")
# what may come before an outline title on the page: a section number ("2.1" gives "21", an appendix's
# "D.1" gives "d1"), a chapter or appendix word and its number or letter ("CHAPTER TWO", "Appendix B");
# a lone letter or Roman numeral only with its own punctuation ("B. Title", "IV) Title": see ``_matches``), so that "A note"
# is not the bookmark "Note" nor "Civil Rights" the bookmark "Rights"
_WORDS = r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen" \
         r"|seventeen|eighteen|nineteen|twenty"
_NUMBERING = re.compile(rf"(?:chapter|appendix|part|section)(?:\d+|[a-z]|[ivxlc]+|{_WORDS})?|\d*|[a-z]\d+|{_WORDS}")
_LABEL = re.compile(r"[a-z]|[ivxlc]+")
_NOT_TITLE = ("|", "-", "*", "+", ">", "<", "!", "[", "`")  # a table row, list item, quote, tag, image, link, code
MAX_TITLE = 200  # characters: a longer line is text, whatever it starts with
MIN_KEY = 2  # alphanumerics an outline title needs to be matched ("If", "Cd": gnuplot's commands; exactly then)


def outline_entries(toc: list[list[Any]], pages: int) -> dict[int, list[tuple[int, str]]]:
    """``{page index: [(level, key), ...]}`` from ``doc.get_toc()`` (``[level, title, page]``, pages
    from 1); entries without a page in the document or with a title of fewer than ``MIN_KEY``
    alphanumerics are left out."""
    out: dict[int, list[tuple[int, str]]] = {}
    for item in toc or []:
        try:
            level, title, page = int(item[0]), str(item[1]), int(item[2])
        except (TypeError, ValueError, IndexError):
            continue
        key = alnum(title)
        if 1 <= page <= pages and level >= 1 and len(key) >= MIN_KEY:
            out.setdefault(page - 1, []).append((level, key))
    return out


def _matches(key: str, title: str, body: str = "") -> bool:
    """A line (``key``: its letters and digits; ``body``: as written) is the outline title, perhaps
    after its numbering."""
    if not key.endswith(title):
        return False
    if len(title) < 3:
        return key == title  # a two-letter title is matched alone: "Do" is not the end of "2.1 To do"
    prefix = key[:len(key) - len(title)]
    if _NUMBERING.fullmatch(prefix):
        return True
    if _LABEL.fullmatch(prefix):  # "B. Title", "IV) Title": the label's own punctuation says so
        words = plain(body).split()
        return bool(words) and words[0].lower() in (prefix + ".", prefix + ")", prefix + ":")
    return False


def is_outline_title(line: str, titles: Sequence[str]) -> bool:
    """A heading line ("### 4.2 The function tapply() ...") whose text is one of the outline ``titles``
    (keys, as ``outline_entries`` gives them), perhaps after its numbering."""
    m = _HEADING.match(line)
    if not m or len(m.group(2)) > MAX_TITLE:
        return False
    key = alnum(m.group(2))
    return any(len(t) >= MIN_KEY and _matches(key, t, m.group(2)) for t in titles)


def _marks(level: int) -> str:
    return "#" * min(6, level + 1)


def _split_at(body: str, n: int) -> int:
    """The character index in ``body`` where its ``n``-th alphanumeric (0-based, tags skipped)
    starts, moved back over the markup that opens that run ("**2.1" splits before its "**")."""
    seen, i = 0, 0
    while i < len(body):
        if body[i] == "<":
            m = TAG.match(body, i)
            if m:
                i = m.end()
                continue
        if body[i].isalnum():
            if seen == n:
                break
            seen += 1
        i += 1
    while i > 0 and body[i - 1] in "*_`":
        i -= 1
    return i


def _may_be_title(line: str) -> bool:
    """A stripped line that may be a bookmark's title as written: not a table row, list item, quote, tag, image,
    link or code (a bold run's "**" is no bullet), nor a label ("Examples:")."""
    return (not line.startswith(_NOT_TITLE) or line.startswith("**")) and not line.endswith(":")


def _retitle(line: str, entries: list[tuple[int, str]], stats: dict[str, int], alone: bool,
             plain_line: bool = False) -> str | None:
    """The line rewritten as outline heading(s), or None to keep it. ``alone``: the line is a
    paragraph of its own (blank lines around it); only then may a bold line become a heading, or, with
    ``plain_line`` (the second look at a page, for its bookmarks still unmatched), a line without markup or
    only partly bold ("**2** **Working** **with** **the** llncs **Document** **Class**": the class's name
    set in another font)."""
    stripped = line.strip()
    if not stripped or len(stripped) > MAX_TITLE or stripped.startswith("<!--"):
        return None
    m = _HEADING.match(stripped)
    if m:
        body = m.group(2)
    elif alone and (_BOLD_LINE.fullmatch(stripped) or (plain_line and _may_be_title(stripped))):
        body = stripped
    else:
        return None
    key = alnum(body)
    if not key:
        return None
    for n, (level, title) in enumerate(entries):
        if _matches(key, title, body):
            del entries[n]  # a bookmark is one heading: a later "**Note**" on its page stays a label
            new = f"{_marks(level)} {body}"
            if new != stripped:
                stats["relevelled" if m else "promoted"] += 1
            return new
    if not m:
        return None
    for level2, second in entries:  # a chapter title run together with its first section
        if len(key) <= len(second) or not key.endswith(second):
            continue
        first_key = re.sub(r"\d+$", "", key[:-len(second)])  # without the section's number ("21")
        for level1, first in entries:
            if level1 < level2 and _matches(first_key, first, body):
                cut = _split_at(body, len(first_key))
                if 0 < cut < len(body):
                    entries.remove((level1, first))
                    entries.remove((level2, second))
                    stats["split"] += 1
                    return f"{_marks(level1)} {body[:cut].rstrip()}\n\n{_marks(level2)} {body[cut:].lstrip()}"
    return None


def apply_outline(pages: list[str], toc: list[list[Any]]) -> tuple[list[str], dict[str, int]]:
    """The pages with their headings levelled by the outline (see the module doc), and counts:
    ``entries`` (outline titles on the document's pages), ``relevelled``, ``promoted``, ``split``,
    ``nested`` (headings without a bookmark put under the bookmarked one before them, see ``_nest``),
    ``demoted`` (a ``#`` before the first bookmarked heading that is not the title, made ``##``)."""
    entries = outline_entries(toc, len(pages))
    stats = {"entries": sum(map(len, entries.values())), "relevelled": 0, "promoted": 0, "split": 0, "nested": 0,
             "demoted": 0}
    if not entries:
        return pages, stats
    out: list[list[str]] = []
    matched: set[tuple[int, int]] = set()
    for k, md in enumerate(pages):
        lines = md.split("\n")
        out.append(lines)
        mine = list(entries.get(k) or [])  # a copy: each bookmark claims one line of its page
        if not mine:
            continue
        for plain_line in (False, True):  # headings and bold lines first; then plain lines for what is left
            for i in lines_outside_code(lines):
                if not mine:
                    break
                if (k, i) in matched:
                    continue
                alone = (i == 0 or not lines[i - 1].strip()) and (i + 1 == len(lines) or not lines[i + 1].strip())
                new = _retitle(lines[i], mine, stats, alone, plain_line)
                if new is None and not plain_line:
                    new = _two_lines(lines, i, mine, stats)
                if new is not None:
                    lines[i] = new
                    matched.add((k, i))
    if len(matched) >= MIN_NESTING:
        _nest(out, matched, stats)
    return ["\n".join(lines) for lines in out], stats


def _two_lines(lines: list[str], i: int, entries: list[tuple[int, str]], stats: dict[str, int]) -> str | None:
    """A bookmark's title written as two headings ("## **Part I**" over "# **Gnuplot**" for the bookmark
    "I Gnuplot"), or as a bold paragraph of two lines (a long title wrapped: "**8** **CCS CONCEPTS AND
    USER-DEFINED**" over "**KEYWORDS**"): one heading at the bookmark's level; the second line is emptied (its text
    moves up). A bookmark that is the first line alone ("1.1 LaTeX2ε—The new LaTeX release" over "(well, for more
    than 10 years now)") makes that line the heading, and the second stays as a paragraph under it."""
    first = lines[i].strip()
    m = _HEADING.match(first)
    if m:
        j = next((n for n in range(i + 1, min(len(lines), i + 4)) if lines[n].strip()), -1)
        m2 = _HEADING.match(lines[j].strip()) if j >= 0 else None
        if not m2:
            return None
        body = f"{m.group(2)} {m2.group(2)}"
    else:
        j = i + 1
        paragraph = (i == 0 or not lines[i - 1].strip()) and j < len(lines) and (
            j + 1 == len(lines) or not lines[j + 1].strip())
        if not paragraph or not all(_BOLD_LINE.fullmatch(x) for x in (first, lines[j].strip())):
            return None
        body = f"{first} {lines[j].strip()}"
        if len(body) > MAX_TITLE:
            return None
    key = alnum(body)
    head = alnum(first) if not m else ""  # a bold paragraph's first line: the bookmark may stop there
    for n, (level, title) in enumerate(entries):
        if len(title) >= MIN_KEY + 1 and _matches(key, title, body):
            del entries[n]
            lines[j] = ""
            stats["relevelled" if m else "promoted"] += 1
            return f"{_marks(level)} {body}"
        if len(title) >= MIN_KEY + 1 and head and _matches(head, title, first):
            del entries[n]  # the first line is the heading; the line under it stays, a paragraph of its own
            stats["promoted"] += 1
            return f"{_marks(level)} {first}\n"
    return None


MIN_NESTING = 3  # bookmarked headings a document needs before the others are put under them


def lines_outside_code(lines: list[str]) -> Iterator[int]:
    """The index of each line outside fenced code (the fences themselves excluded)."""
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            yield i


def _nest(pages: list[list[str]], matched: set[tuple[int, int]], stats: dict[str, int]) -> None:
    """A heading the bookmarks do not list, after a bookmarked one, is a part of that section: put
    it one level under it when it would close it (Bash's manual: the index letters "### A", "### B"
    after "### D.1 Index of Shell Builtin Commands" took its place in every heading path). Headings
    before the first bookmarked one (a title page, a table of contents) keep their level, but only the
    document's title may be ``#``, above the bookmarks' top level (``##``): the first heading, on the
    first page with text. Any other ``#`` there becomes ``##`` (``demoted``): GLPK's manuals set
    "Contents" as large as a chapter, and "# Contents" had every chapter under it."""
    last: int | None = None
    first_page = next((k for k, lines in enumerate(pages) if any(alnum(x) for x in lines
                                                                 if not x.lstrip().startswith("<!--"))), 0)
    seen = False  # a heading came before this one
    for k, lines in enumerate(pages):
        for i in lines_outside_code(lines):
            heads = [m for m in (_HEADING.match(part.strip()) for part in lines[i].split("\n\n")) if m]
            if not heads:
                continue
            title = not seen and k == first_page
            seen = True
            if (k, i) in matched:
                last = len(heads[-1].group(1))
            elif last is not None and len(heads[-1].group(1)) <= last:
                lines[i] = f"{'#' * min(6, last + 1)} {heads[-1].group(2)}"
                stats["nested"] += 1
            elif last is None and len(heads[-1].group(1)) == 1 and not title:
                lines[i] = f"## {heads[-1].group(2)}"
                stats["demoted"] += 1


# ------------------------------------------------------------------ slide decks
MIN_SLIDES = 5  # pages a deck needs
SLIDE_WORDS = 150  # a slide holds fewer words than this (median over the pages)


def is_deck(infos: list[tuple[float, ...]], words_per_page: list[int]) -> bool:
    """A slide deck: at least ``MIN_SLIDES`` pages, four in five of them landscape (as displayed: a rotation
    of 90 or 270 degrees swaps the sides), and few words a page (median under ``SLIDE_WORDS``)."""
    if len(infos) < MIN_SLIDES or len(words_per_page) != len(infos):
        return False
    wide = sum(1 for w, h, rot, *_ in infos if (w > h) != (int(rot) % 180 == 90))
    counts = sorted(words_per_page)
    return wide >= 0.8 * len(infos) and counts[len(counts) // 2] < SLIDE_WORDS


def slide_titles(pages: list[str]) -> tuple[list[str], int]:
    """A deck's slide titles as headings: a page's first line (after layout comments), when it stands alone,
    is all bold and short, and is not a heading already, becomes ``##`` (beamer writes its frame titles in bold
    at the size of the text, so the converter makes no heading of them: 2 headings for 31 slides). Only ``#``
    marks change. Returns the pages and how many titles were made."""
    out, made = [], 0
    for md in pages:
        lines = md.split("\n")
        i = next((n for n, x in enumerate(lines) if x.strip() and not x.lstrip().startswith("<!--")), None)
        if i is not None:
            first = lines[i].strip()
            alone = i + 1 == len(lines) or not lines[i + 1].strip()
            if alone and len(first) <= MAX_TITLE // 2 and _BOLD_LINE.fullmatch(first) and alnum(first):
                lines[i] = f"## {first}"
                made += 1
        out.append("\n".join(lines))
    return out, made


# ------------------------------------------------------------------ numbered titles without an outline
# a line made only of italic runs ("_1._ _Wide_ _text_"), as pymupdf4llm writes a sub-section title in italics
_ITALIC_LINE = re.compile(rf"(?:{_ITALIC}|[ \t])+")
_EMPHASIS_LINE = re.compile(rf"(?:{_BOLD}|{_ITALIC}|{_CODE}|[ \t])+")  # bold and italics mixed
# a section number and its title: "I. FIRST-LEVEL", "A. Second-level", "1. Citations", "2.3 Results", "4 Methods";
# or a part of the document and its number, perhaps with a title: "Appendix B: A little more", "CHAPTER 3"
_NUMBERED = re.compile(r"(?P<label>[IVXLC]+\.|[A-Z]\.|\d{1,2}(?:\.\d{1,2})*\.?)\s+(?P<title>\S.*)"
                       r"|(?P<named>(?i:appendix|chapter|part|section)\s+(?:[A-Z]|[IVXLC]+|\d{1,2})\b[.:]?)(?:\s+(?P<rest>\S.*))?")
_PAGE_NUMBER = re.compile(r"\S\s+\d+$")  # "1 Introduction 2": an entry of a table of contents
_ABBREVIATIONS = (" etc.", " vs.", " al.", " inc.", " ltd.")  # a title may end with one's period
MIN_NUMBERED = 3  # numbered titles a document needs before any is taken for a heading


_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}


def _number(label: str, numbering: str) -> tuple[int, ...]:
    """A section label's value, to check that a style's labels run in order ("II." is (2,), "2.3" (2, 3))."""
    if numbering == "roman":
        vals = [_ROMAN[ch] for ch in label]
        return (sum(-v if i + 1 < len(vals) and v < vals[i + 1] else v for i, v in enumerate(vals)),)
    if numbering == "letter":
        return (ord(label) - ord("A") + 1,)
    return tuple(int(x) for x in label.split(".") if x)


def _in_order(values: list[tuple[int, ...]]) -> bool:
    """Section numbers of one style run in order: each is the first of its level (1, A, I, "2.1") or comes
    after the one before ("_J. Smith_", "_A. Jones_": names; "_3 December_": dates, not sections)."""
    prev: tuple[int, ...] | None = None
    for v in values:
        if v[-1] != 1 and (prev is None or v <= prev):
            return False
        prev = v
    return True


# a page's runs of emphasised text: (kind, key, starts), see ``_font_kind``
Runs = Sequence[tuple[str, str, tuple[int, ...]]]


def _font_kind(paragraph: list[str], runs: Runs) -> str:
    """The emphasis ("bold", "italic") of a paragraph the converter wrote without markup, when a run of
    emphasised text on its page (``runs``: ``(kind, key, starts)`` from ``chunkscope.ingest.pdf.fonts.font_emphasis``)
    goes on with it from one of its lines' starts (``starts``: a subsection's title right under its section's,
    both bold, is one run); else ""."""
    if any(ch in x for x in paragraph for ch in "*_`"):
        return ""
    key = alnum(" ".join(paragraph))
    return next((kind for kind, run, starts in runs if key and any(run.startswith(key, k) for k in starts)), "")


def _numbered_style(paragraph: list[str], runs: Runs = ()) -> tuple[tuple[str, str], tuple[int, ...]] | None:
    """``((emphasis, numbering), number)`` when the paragraph (one or two lines) is a numbered title written
    in bold or italics, else None. ``numbering``: "roman", "letter", "digits" and its depth ("digits2"), or
    "named" ("Appendix B", whose number is not checked). A paragraph without markup is in bold or italics
    when the fonts of its page say so (``runs``, see ``_font_kind``)."""
    first = paragraph[0]
    bold = _BOLD_LINE.fullmatch(first) or (first.startswith("**") and _EMPHASIS_LINE.fullmatch(first))  # "_x_" inside
    kind = "bold" if "**" in first and bold else "italic" if _ITALIC_LINE.fullmatch(first) else ""
    if kind and not all(_EMPHASIS_LINE.fullmatch(x) for x in paragraph[1:]):
        return None  # the first line says the style (code alone is none); a wrapped second line may mix them
    kind = kind or _font_kind(paragraph, runs)
    if not kind:
        return None
    text = " ".join(plain(x) for x in paragraph)
    m = _NUMBERED.fullmatch(text)
    if not m or len(text) > MAX_TITLE // 2 or text.endswith((",", ";")) or (
            text.endswith(".") and not text.lower().endswith(_ABBREVIATIONS)):
        return None  # a sentence, not a title ("... VIDEOS, ETC." is one)
    title = (m.group("rest") or "") if m.group("named") else m.group("title")
    if title and (not (title[0].isupper() or title[0] == "(") or _PAGE_NUMBER.search(title)):
        return None
    if m.group("named"):
        return (kind, "named"), ()
    label = m.group("label").rstrip(".")
    if sum(ch.isalpha() for ch in title) < 3:
        return None
    if label[0].isdigit():
        numbering = f"digits{label.count('.') + 1}"
    else:
        numbering = "roman" if label in ("I", "V", "X") or len(label) > 1 else "letter"
    return (kind, numbering), _number(label, numbering)


def _alone(lines: list[str], i: int) -> bool:
    """Line ``i`` exists, has text and is a paragraph of its own (blank or nothing after it)."""
    return i < len(lines) and bool(lines[i].strip()) and (i + 1 == len(lines) or not lines[i + 1].strip())


def _heading_number(body: str) -> tuple[int, ...]:
    """The section number in digits a converter's heading starts with ("**4.11 Interleaved CRC**" is (4, 11)),
    or () when it has none."""
    m = _NUMBERED.fullmatch(plain(body))
    label = (m.group("label") or "") if m else ""
    return _number(label, "digits") if label[:1].isdigit() else ()


def _extends(number: tuple[int, ...], section: tuple[int, ...]) -> bool:
    """``number`` is a part of ``section``: "4.11.2" of "4.11" and of "4", not of "4.1" nor of "4.11" itself."""
    return len(number) > len(section) and number[:len(section)] == section


Found = tuple[int, int, int, tuple[str, str], tuple[int, ...]]  # page, line, lines, style, number


def _styles_in_order(found: list[Found]) -> list[Found]:
    """The titles whose style's numbers run in order (``_in_order``); "Appendix B" and the like are not checked."""
    numbers: dict[tuple[str, str], list[tuple[int, ...]]] = {}
    for *_, style, number in found:
        if style[1] != "named":
            numbers.setdefault(style, []).append(number)
    return [f for f in found if f[3][1] == "named" or _in_order(numbers[f[3]])]


def _top_down(found: list[Found]) -> list[tuple[Found, int]]:
    """The numbered titles of a document without headings, with their ``#`` marks: Roman numerals and
    "Appendix ..." are ``##``; any other style keeps the level it gets where it first appears."""
    found = _styles_in_order(found)
    levels: dict[tuple[str, str], int] = {}
    level = 1 if any(f[3][1] == "roman" for f in found) else 0  # Roman numerals number the top level
    out = []
    for f in found:
        style = f[3]
        level = 1 if style[1] in ("named", "roman") else levels.setdefault(style, min(5, level + 1))
        out.append((f, level + 1))
    return out


def _under_headings(found: list[Found], heads: list[tuple[int, int, int, tuple[int, ...]]]) -> list[tuple[Found, int]]:
    """The numbered titles whose numbers extend the number of a converter's heading whose section they are in
    ("**3.1**" after "## 3 ...", "**4.11.2**" after "## 4 ..."), with their ``#`` marks: that heading's and one
    more for each number after its own. ``heads``: page, line, ``#`` marks and number of each converter
    heading, in order. A numbered heading closes the sections whose numbers it does not extend; one without
    a number ("References") those of its level and deeper."""
    made: list[tuple[Found, int]] = []
    open_: list[tuple[tuple[int, ...], int]] = []  # the numbered sections open here, outermost first
    at = 0
    for f in found:
        while at < len(heads) and heads[at][:2] < f[:2]:
            _, _, marks, number = heads[at]
            at += 1
            while open_ and not (_extends(number, open_[-1][0]) if number else open_[-1][1] < marks):
                open_.pop()
            if number:
                open_.append((number, marks))
        section = next((s for s in reversed(open_) if _extends(f[4], s[0])), None)
        if section and f[3][1].startswith("digits"):
            made.append((f, min(6, section[1] + len(f[4]) - len(section[0]))))
    ordered = set(_styles_in_order([f for f, _ in made]))
    return [m for m in made if m[0] in ordered]


def numbered_titles(pages: list[str], emphasis: Sequence[Runs] = ()) -> tuple[list[str], int]:
    """Section titles in a PDF without an outline (a journal's "**I.** **INTRODUCTION**", "**A.**
    **Formatting**", "_1._ _Citations_", a report's "**3.1** **Incremental** **CRC** **computation**": bold
    or italic paragraphs at the size of the text, so the converter made no heading of them) as headings.

    A paragraph of one or two lines is a title when it is all bold (italic words inside allowed: "**of**
    _D_ **-normalized**") or all italic, starts with a section number (Roman, capital letter or digits;
    or "Appendix B", "Chapter 3") and reads as a title (capitalised, not a sentence, not a contents entry
    ending with its page number); a document needs ``MIN_NUMBERED`` of them, and a style's numbers must
    run in order (names "_J. Smith_" and dates "_3 December_" do not). ``emphasis``: each page's runs of bold
    or italic text by its fonts (``chunkscope.ingest.pdf.fonts.font_emphasis``), for the titles the converter wrote
    without markup (revtex's CMBX9 and CMTI9 carry no bold or italic flag: "I. FIRST-LEVEL HEADING" was plain
    text): a plain paragraph is bold or italic when such a run goes on with it from a line's start (``_font_kind``).

    When the converter found at most one heading (a title), every such title is a heading: Roman numerals
    and "Appendix ..." are the top level, ``##`` (``#`` stays the document's title); any other style
    (emphasis and kind of number) keeps the level it gets where it first appears: one under the title
    before it. When it found more, they are the document's top levels: only a title in digits whose
    number extends the number of the heading whose section it is in ("3.1" after "## 3 CRC tricks",
    "4.11.2" after "## 4 ...") becomes a heading, one level under that heading for each number after its
    own (see ``_under_headings``).

    A title wrapped over two lines, or whose line ends with "," and goes on in the next paragraph ("**IV.**
    **FLOATS:** **FIGURES,** **VIDEOS,**" / "**ETC.**"), becomes one heading (the later line is emptied,
    its text moves up); only ``#`` marks and line breaks change. Returns the pages and how many titles
    were made."""
    lines_of = [md.split("\n") for md in pages]
    found: list[Found] = []
    heads: list[tuple[int, int, int, tuple[int, ...]]] = []  # page, line, "#" marks, number of the converter's
    for k, lines in enumerate(lines_of):
        for i in lines_outside_code(lines):
            m = _HEADING.match(lines[i].strip())
            if m:
                heads.append((k, i, len(m.group(1)), _heading_number(m.group(2))))
                continue
            if not lines[i].strip() or (i and lines[i - 1].strip()):
                continue
            for n in (1, 2):
                end = i + n
                if end < len(lines) and lines[end].strip():
                    continue
                para = [x.strip() for x in lines[i:end]]
                runs = emphasis[k] if k < len(emphasis) else ()
                if plain(para[-1]).endswith(",") and _alone(lines, end + 1) and "`" not in lines[end + 1] \
                        and (runs or _EMPHASIS_LINE.fullmatch(lines[end + 1].strip())):
                    para, end = para + [lines[end + 1].strip()], end + 2  # "... VIDEOS," / "**ETC.**": wrapped
                got = _numbered_style(para, runs)
                if got:
                    found.append((k, i, end - i, got[0], got[1]))
                break
    made = _under_headings(found, heads) if len(heads) > 1 else _top_down(found)
    if len(made) < MIN_NUMBERED:
        return pages, 0
    for (k, i, n, _, _), marks in made:
        lines = lines_of[k]
        lines[i] = f"{'#' * marks} {' '.join(x.strip() for x in lines[i:i + n] if x.strip())}"
        for j in range(i + 1, i + n):
            lines[j] = ""
    return ["\n".join(lines) for lines in lines_of], len(made)
