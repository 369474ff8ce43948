"""HTML (a saved web page, an exported help page): converted to Markdown, then read as Markdown.

A web page's text is its ``<main>`` (or its one ``<article>``) when it has one, else its ``<body>``: navigation,
header and footer around the main content are left out, and a warning says how much. Scripts, styles and other
non-text elements never count. The conversion (``markdownify`` over BeautifulSoup's stdlib parser) writes
headings as ``#``, lists, tables as Markdown tables, ``<pre>`` as fenced code, links out as ``[text](url)`` (a
heading's permalink mark goes, an in-page link keeps its text); the
page's ``<title>`` heads the text when the content has no ``<h1>``. Spans (blocks, chunks) refer to that
Markdown, as a PDF's do to its Markdown. An HTML page has no pages (the ``page`` chunker says so).
"""

from __future__ import annotations

import re

from chunkscope.document import Document
from chunkscope.ingest.errors import IngestError
from chunkscope.ingest.text import document_from_decoded

# elements whose text is not the page's text
_NOT_TEXT = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head")
_ANCHOR_MARKS = {"¶", "§", "#", "🔗", "⚓", "∞"}
_ANCHOR_CLASSES = {"headerlink", "anchor", "anchorjs-link", "permalink", "header-anchor", "heading-anchor"}
_WHITESPACE = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TRAILING = re.compile(r"[ \t]+\n")


def _content(soup):
    """(element holding the page's content, what it is): ``<main>``, the one ``<article>``, else the body."""
    main = soup.find("main") or soup.find(attrs={"role": "main"})
    if main is not None:
        return main, "<main>"
    articles = soup.find_all("article")
    if len(articles) == 1:
        return articles[0], "<article>"
    return (soup.body or soup), ""


def _drop_anchors(root) -> None:
    """Links within the page: a heading's permalink mark (Sphinx's "¶", MkDocs' "#") goes, another in-page link
    ("1. Copyright" in a contents list) keeps its text without its "#copyright" target. Links out stay links."""
    for a in root.find_all("a"):
        href = (a.get("href") or "").strip()
        if not href.startswith("#"):
            continue
        text = a.get_text("", strip=True)
        if not text or text in _ANCHOR_MARKS or set(a.get("class") or []) & _ANCHOR_CLASSES:
            a.decompose()
        else:
            a.unwrap()


def _collapse_whitespace(root) -> None:
    """Line breaks in the page's source are not the page's (a browser shows a space): one space for each run
    of whitespace, except in ``<pre>``, ``<code>`` and ``<textarea>``. Otherwise the splitters would cut a
    paragraph where its source happens to wrap rather than at a sentence end."""
    from bs4 import NavigableString

    for node in root.find_all(string=True):
        if type(node) is not NavigableString or node.find_parent(("pre", "code", "textarea")) is not None:
            continue  # comments and the like are not text; code keeps its lines
        text = _WHITESPACE.sub(" ", str(node))
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


def html_to_markdown(data: bytes | str) -> tuple[str, str, dict]:
    """(Markdown, encoding, facts) of an HTML page. Facts: ``content`` ("<main>", "<article>" or "") and
    ``left_out`` (characters of visible text outside it)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(data, "html.parser")
    encoding = getattr(soup, "original_encoding", None) or "utf-8"
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_NOT_TEXT):
        tag.decompose()
    root, kind = _content(soup)
    _drop_anchors(root)
    _collapse_whitespace(root)
    whole = len((soup.body or soup).get_text(" ", strip=True))
    kept = len(root.get_text(" ", strip=True))
    conv = MarkdownConverter(heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False,
                             escape_misc=False, code_language_callback=_code_language)
    md = conv.convert_soup(root)
    md = _BLANK_LINES.sub("\n\n", _TRAILING.sub("\n", md)).strip()
    if title and not re.search(r"(?m)^# ", md):
        md = f"# {title}\n\n{md}"
    return md + "\n", encoding, {"content": kind, "left_out": max(0, whole - kept) if kind else 0}


def load_html_bytes(data: bytes, filename: str, name: str) -> Document:
    try:
        md, encoding, facts = html_to_markdown(data)
    except Exception as exc:  # a parser that gives up on broken markup: one line, never a traceback
        raise IngestError(f"{filename}: could not be read as HTML ({type(exc).__name__}: "
                          f"{' '.join(str(exc).split())[:160]})") from None
    if not md.strip().lstrip("#").strip():
        raise IngestError(f"{filename} has no text (an empty page, or one whose text a script writes)")
    from chunkscope.ingest.markdown import page_break_pages

    doc = document_from_decoded(md, name, encoding, "html", page_break_pages(md), markdown=True)
    doc.meta.update(converted_from="html", html_content=facts["content"] or "body")
    if facts["left_out"]:
        doc.warnings.append(f"read the page's {facts['content']} only: {facts['left_out']:,} characters of "
                            "navigation, header and footer around it are left out")
    return doc
