"""HTML (a saved web page, an exported help page): converted to Markdown, then read as Markdown.

The bytes are decoded as any text file (``text.decode_text``: a byte-order mark, then the page's declared
``<meta charset>``, then detection; binary data is refused) and parsed with lxml, which closes implied end tags
as browsers do. A web page's text is its ``<main>`` (or ``role="main"``, or its one ``<article>``) when that
holds a real share of the page, else its ``<body>``: navigation, header and footer around the main content are
left out, and a warning says how much. Scripts, styles and other non-text elements never count, nor does an
element marked ``hidden``. A table that lays the page out (a cell holds headings, paragraphs, lists or tables; one
``<p>`` alone is a cell's text) is read as the blocks in its cells. markdownify then writes headings as ``#``,
lists, tables as Markdown tables (the first row is the header when none is marked), ``<pre>`` as fenced code,
links out as ``[text](url)`` (a heading's permalink mark goes, an in-page link keeps its text); text that would read as Markdown markup (a line opening with ``#``, a fence, ``<!--``) is escaped.
The page's ``<title>`` heads the text when the content has no level-1 heading. Spans (blocks, chunks) refer to
that Markdown, as a PDF's do to its Markdown. An HTML page has no pages (the ``page`` chunker says so).
"""

from __future__ import annotations

import re
import warnings

from chunkscope.document import Document
from chunkscope.ingest.errors import IngestError, read_as
from chunkscope.ingest.markdown import has_text
from chunkscope.ingest.office import PRIVATE_USE
from chunkscope.ingest.text import decode_text, document_from_decoded
from chunkscope.text.markup import ZERO_WIDTH

# elements whose text is not the page's text
_NOT_TEXT = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head")
_BLOCKS = ("table", "h1", "h2", "h3", "h4", "h5", "h6", "p", "pre", "ul", "ol", "dl", "blockquote")
# where a text's line start is not a Markdown line start (a heading's title, a list item, a cell)
_OWN_LINE = ("h1", "h2", "h3", "h4", "h5", "h6", "li", "td", "th", "dt", "dd", "blockquote", "caption", "pre", "code")
_WRAPPERS = ("div", "span", "section", "font", "center")
_BLOCK_CHILDREN = {"div", "section", "article", "main", "p", "pre", "table", "ul", "ol", "dl", "blockquote",
                   "h1", "h2", "h3", "h4", "h5", "h6", "figure", "header", "footer", "aside", "nav"}
_ANCHOR_MARKS = {"¶", "§", "#", "🔗", "⚓", "∞"}
_MAIN_SHARE = 0.25  # a <main> with less of the page's text than this is not where the content is
_WHITESPACE = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TRAILING = re.compile(r"[ \t]+\n")
# text that would read as Markdown markup at a line start (after an Office loader's page mark, a private-use
# character that goes later: chunkscope.ingest.office), and an HTML comment (a page break marker) anywhere
_LINE_MARKUP = re.compile(r"^(\s*[" + PRIVATE_USE + r"]?\s*)(#{1,6}(?=\s|$)|>|[-+*](?=\s)|\d{1,9}[.)](?=\s)|`{3,}|~{3,}|\|)")


def _text_len(el) -> int:
    return len(el.get_text(" ", strip=True))


def _content(soup):
    """(element holding the page's content, what it is, characters of text outside it): ``<main>``, the one
    ``<article>``, else the body (nothing left out). A candidate with under ``_MAIN_SHARE`` of the body's text
    (an empty ``<main>`` beside the article) is passed."""
    body = soup.body or soup
    whole = _text_len(body)
    candidates = [(soup.find("main"), "<main>"), (soup.find(attrs={"role": "main"}), "<main>")]
    articles = soup.find_all("article")
    if len(articles) == 1:
        candidates.append((articles[0], "<article>"))
    for el, kind in candidates:
        if el is not None and (n := _text_len(el)) >= _MAIN_SHARE * max(1, whole):
            return el, kind, max(0, whole - n)
    return body, "", 0


# class names of navigation bars, whole (a Texinfo node's bar is class="header" or "nav-panel"; "entry-header",
# "card-header", "subheader" and "navigation-guide" are not)
_NAV_CLASSES = frozenset("nav navigation navbar nav-panel breadcrumb breadcrumbs header".split())
_NEVER_NAV = frozenset("tr th thead tbody td dt dd li h1 h2 h3 h4 h5 h6 main article body table".split())
MAX_NAV_CHARS = 400  # a navigation bar is a line of links; a longer element is the page's text


def _drop_navigation(root) -> int:
    """Remove the page's navigation bars (each node of a Texinfo manual opens with "Next: …, Previous: …, Up: …
    [Contents][Index]"; a site's menu and breadcrumbs): ``<nav>``, ``role="navigation"``, and an element whose class
    is one of ``_NAV_CLASSES`` (whole names), of at most ``MAX_NAV_CHARS`` characters, with two links or more making
    at least half of its text; never a table's row or cell, a list item, a definition term, a heading or an element
    holding one (an article's title in its "header"). Returns how many went."""
    gone = 0
    for el in list(root.find_all(True)):
        if el.decomposed or el.name in _NEVER_NAV:
            continue
        classes = {c.lower() for c in el.get("class") or []}
        if not (el.name == "nav" or el.get("role") == "navigation" or classes & _NAV_CLASSES):
            continue
        if el.find(("h1", "h2", "h3", "h4", "h5", "h6")) is not None:
            continue
        text = el.get_text(" ", strip=True)
        anchors = el.find_all("a")
        links = sum(len(a.get_text(" ", strip=True)) for a in anchors)
        if len(anchors) >= 2 and len(text) <= MAX_NAV_CHARS and links * 2 >= len(text):
            el.decompose()
            gone += 1
    return gone


def _flatten_wrappers(root) -> None:
    """A ``<div>``/``<span>``/``<section>``/``<font>`` holding nothing but one block element is dropped for that
    element (the Markdown is the same): generated pages nest such wrappers hundreds deep, past what the
    converter's recursion takes."""
    from bs4 import NavigableString

    for _ in range(4):  # a wrapper whose child was a wrapper is seen on the next pass
        dropped = 0
        for el in root.find_all(_WRAPPERS):
            kids = [c for c in el.contents if not (isinstance(c, NavigableString) and not c.strip())]
            if len(kids) == 1 and getattr(kids[0], "name", None) in _BLOCK_CHILDREN:
                el.unwrap()
                dropped += 1
        if not dropped:
            break


def _drop_anchors(root) -> None:
    """Links within the page: a permalink mark (Sphinx's "¶", MkDocs' "#", Docusaurus's zero-width space) goes,
    another in-page link ("1. Copyright" in a contents list, an image) keeps its content without its target.
    Links out stay links."""
    for a in root.find_all("a"):
        href = (a.get("href") or "").strip()
        if not href.startswith("#"):
            continue
        text = a.get_text("", strip=True).translate(ZERO_WIDTH).strip()
        if (not text or text in _ANCHOR_MARKS) and a.find("img") is None:
            a.decompose()
        else:
            a.unwrap()


def _holds_blocks(cell) -> bool:
    """A cell holds blocks: a heading, list, code, another table, or paragraphs (one ``<p>`` alone is a cell's
    text: a Word table's every cell is one)."""
    found = cell.find_all(_BLOCKS, limit=2)
    return bool(found) and (len(found) > 1 or found[0].name != "p")


def _cells_as_text(soup, root) -> None:
    """A cell holding only paragraphs and lists (a Word table's notes column) keeps them as its lines ("• " before
    a list item), so the table stays a table; a cell with a heading, code or a table inside is left to
    ``_unwrap_layout_tables``."""
    for cell in root.find_all(["td", "th"]):
        if cell.find(("h1", "h2", "h3", "h4", "h5", "h6", "table", "pre", "blockquote")) is not None:
            continue
        lines = cell.find_all(("p", "li"))
        if len(lines) < 2 and cell.find(("ul", "ol")) is None:
            continue
        for li in cell.find_all("li"):
            li.insert(0, "• ")
        for line in lines[:-1]:
            line.append(soup.new_tag("br"))
        for tag in cell.find_all(("p", "li", "ul", "ol")):
            tag.unwrap()


def _unwrap_layout_tables(root) -> None:
    """A table used for layout (a cell holds a heading, paragraphs, a list, code or another table) is read as the
    blocks of its cells in order; a data table stays a table. Innermost first, so a data table inside a layout
    table survives."""
    for table in reversed(root.find_all("table")):
        if table.find(_BLOCKS) is None:  # nothing but text in its cells: a data table (most tables: one search)
            continue
        cells = table.find_all(["td", "th"])
        if not any(_holds_blocks(c) for c in cells):
            continue
        for cell in cells:
            if cell.find_parent("table") is table:
                cell.name = "div"  # each cell its own block
        for tag in table.find_all(["tr", "tbody", "thead", "tfoot", "caption", "colgroup", "col"]):
            if tag.find_parent("table") is not table:
                continue
            if tag.name in ("colgroup", "col"):
                tag.decompose()
            else:
                tag.unwrap()
        table.name = "div"


def _prepare_text(root) -> None:
    """Each text node as a browser shows it: whitespace runs are one space (the source's line breaks are not the
    page's; the splitters would cut where the source wraps), except in ``<pre>``, ``<code>``, ``<textarea>``;
    zero-width marks go; text that would read as Markdown markup is escaped."""
    from bs4 import NavigableString

    for br in root.select("pre br"):  # a line break in code is the code's (markdownify writes a Markdown one)
        br.replace_with("\n")
    verbatim = {id(s) for el in root.find_all(("pre", "code", "textarea")) for s in el.find_all(string=True)}
    for node in root.find_all(string=True):
        if type(node) is not NavigableString or id(node) in verbatim:
            continue  # comments and the like are not text; code keeps its lines
        text = _WHITESPACE.sub(" ", str(node)).translate(ZERO_WIDTH).replace("<!--", "<\\!--")
        starts_line = node.previous_sibling is None or getattr(node.previous_sibling, "name", None) == "br"
        if starts_line and _LINE_MARKUP.match(text) and node.find_parent(_OWN_LINE) is None:
            text = _LINE_MARKUP.sub(lambda m: m.group(1) + "\\" + m.group(2), text, count=1)
        if "|" in text and node.find_parent(("td", "th")) is not None:
            text = text.replace("|", "\\|")  # a bar in a cell is text, not the table's next column
        if text != node:
            node.replace_with(text)


def _code_language(pre) -> str | None:
    """A ``<pre>``'s language from its or its ``<code>``'s class ("language-python", "lang-sh")."""
    for el in (pre, pre.find("code")):
        for cls in (el.get("class") or []) if el is not None else []:
            for prefix in ("language-", "lang-"):
                if cls.startswith(prefix) and len(cls) > len(prefix):
                    return cls[len(prefix):]
    return None


def _converter():
    """markdownify's converter, with a code fence longer than any backtick run in the code (a ``<pre>`` that
    shows a Markdown fence would otherwise close its own block)."""
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):
        """markdownify's converter with code blocks fenced longer than any run of backticks inside."""

        def convert_pre(self, el, text, parent_tags):
            """A ``<pre>`` block fenced with more backticks than its text holds in a row."""
            out = super().convert_pre(el, text, parent_tags)
            runs = [len(r) for r in re.findall(r"`{3,}", text)]
            if not runs or not out.strip():
                return out
            lines = out.strip("\n").split("\n")
            fence = "`" * (max(runs) + 1)
            lines[0], lines[-1] = fence + lines[0][3:], fence
            return "\n\n" + "\n".join(lines) + "\n\n"

    return Converter


def _tidy(md: str) -> str:
    """Blank-line runs to one and trailing spaces off, outside fenced code (whose lines are the code's)."""
    from chunkscope.text.blocks import code_spans

    out, pos = [], 0
    for a, b in [*code_spans(md), (len(md), len(md))]:
        out.append(_BLANK_LINES.sub("\n\n", _TRAILING.sub("\n", md[pos:a])) + md[a:b])
        pos = b
    return "".join(out).strip()


def html_to_markdown(text: str, cells_as_text: bool = False) -> tuple[str, dict]:
    """(Markdown, facts) of an HTML page's text. Facts: ``content`` ("<main>", "<article>" or "") and
    ``left_out`` (characters of visible text outside it). ``cells_as_text``: a table cell of paragraphs and lists
    is a cell of lines (Word's tables), not a layout cell."""
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    with warnings.catch_warnings():  # an XHTML page read as HTML is what we want: no advice on stderr
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(text, "lxml")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_NOT_TEXT):
        tag.decompose()
    for tag in soup.find_all(hidden=True):
        tag.decompose()
    for h in soup.find_all(("h1", "h2", "h3", "h4", "h5", "h6")):
        if not h.get_text("", strip=True).translate(ZERO_WIDTH).strip() and h.find("img") is None:
            h.decompose()  # an empty heading would be an empty "#" line
    root, kind, left_out = _content(soup)
    navigation = _drop_navigation(root)
    _flatten_wrappers(root)
    _drop_anchors(root)
    if cells_as_text:
        _cells_as_text(soup, root)
    _unwrap_layout_tables(root)
    _prepare_text(root)
    has_h1 = root.find("h1") is not None
    conv = _converter()(heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False,
                        escape_misc=False, code_language_callback=_code_language,
                        table_infer_header=True)
    md = _tidy(conv.convert_soup(root))
    if title and not has_h1:
        md = f"# {title}\n\n{md}"
    return md + "\n", {"content": kind, "left_out": left_out, "navigation": navigation}


def load_html_bytes(data: bytes, filename: str, name: str) -> Document:
    """Load a web page's bytes (its declared or detected encoding) as Markdown."""
    from bs4.dammit import EncodingDetector

    declared = EncodingDetector.find_declared_encoding(data[:65536], is_html=True)
    text, encoding = decode_text(data, filename, declared=declared)
    with read_as(filename, "HTML", "its HTML nests too deeply to read (hundreds of elements inside each other); "
                 "save the page again from a browser, or as text"):
        md, facts = html_to_markdown(text)
    if not has_text(md):
        raise IngestError(f"{filename} has no text (an empty page, or one whose text a script writes)")
    doc = document_from_decoded(md, name, encoding, "html", [], markdown=True)
    doc.meta.update(converted_from="html", html_content=facts["content"] or "body")
    if facts["left_out"]:
        doc.warnings.append(f"read the page's {facts['content']} only: {facts['left_out']:,} characters of "
                            "navigation, header and footer around it are left out")
    if facts["navigation"]:
        doc.warnings.append(f"{facts['navigation']:,} navigation bar(s) (lines of links such as \"Next: …, Previous: "
                            "…\" or a site's menu) left out of the text")
    return doc
