"""Loaders on files the tests make themselves: PDF, Markdown, text, JSON."""

from __future__ import annotations

import json
import textwrap

import pytest
from pdf_factory import make_pdf, make_undecodable_pdf, make_underscore_rules_pdf

from chunkscope.document import Document
from chunkscope.ingest import IngestError, load_bytes, load_document
from chunkscope.text.language import strip_markup


@pytest.fixture(scope="module")
def pdf_doc() -> Document:
    return load_bytes(make_pdf(pages=4, blank_pages=(3,)), "report.pdf")


def test_pdf_pages_headings_tables(pdf_doc):
    d = pdf_doc
    d.check_blocks()
    assert d.source_format == "pdf" and d.name == "report" and d.language == "en"
    assert len(d.pages) == 4
    assert [p.start for p in d.pages[1:]] == [p.end for p in d.pages[:-1]]
    assert d.pages[-1].end == len(d.text)
    for k, p in enumerate(d.pages[:2], start=1):
        page_text = d.text[p.start:p.end]
        assert f"page {k}" in page_text  # page k's span holds page k's Markdown
        assert page_text.rstrip().endswith("<!-- PageBreak -->")
    titles = [h.title for h in d.headings]
    assert "Chapter 1: Data retention" in titles and "Retention periods" in titles
    assert all(d.text[h.start:h.end].startswith("#") for h in d.headings)
    flat = d.text.replace(" ", "")
    assert "|Record|Period|\n|---|---|" in flat and "|Accesslogs|90days|" in flat
    table_block = next(b for b in d.blocks if "|Record|" in d.text[b.start:b.end])
    assert table_block.kind in ("table", "heading")  # the table, or the heading that carries it
    assert "Footnote: periods start" in d.text
    kinds = {b.kind for b in d.blocks}
    assert "heading" in kinds and "layout" in kinds
    # blocks never cross a page boundary
    starts = {b.start for b in d.blocks}
    assert all(p.start in starts for p in d.pages)


def test_pdf_running_header_and_footer_become_layout(pdf_doc):
    d = pdf_doc
    assert d.text.count("<!-- PageHeader: Northwind Records - Annual retention report -->") == 3
    assert "<!-- PageFooter: Page 4 of 4 -->" in d.text
    layout = [d.text[b.start:b.end] for b in d.blocks if b.kind == "layout"]
    assert sum("PageHeader" in t for t in layout) == 3 and sum("PageFooter" in t for t in layout) == 3


def mark_running_lines(pages: list[str]) -> list[str]:
    """Running lines found on the pages alone (no ink lines) and turned into layout comments."""
    from chunkscope.ingest.pdf.cleanup.running_lines import apply_running_lines, find_running_lines

    return apply_running_lines(pages, find_running_lines(pages)[1])


def test_mark_running_lines_rules():

    pages = [f"Running title\n\nBody {k}.\n\n{k}" for k in range(1, 5)] + ["", "Other start\n\nText\n\nend"]
    out = mark_running_lines(pages)
    assert out[0] == "<!-- PageHeader: Running title -->\n\nBody 1.\n\n<!-- PageFooter: 1 -->"
    assert out[4] == "" and out[5] == pages[5]
    few = ["Same\n\nA", "Same\n\nB"]
    assert mark_running_lines(few) == few  # fewer than 3 pages with text: unchanged


def test_pdf_image_only_page_warns(pdf_doc):
    assert "page 3 has no extractable text" in pdf_doc.warnings
    # several blank pages (a manual's "intentionally blank" ones): one warning, not one per page
    d = load_bytes(make_pdf(pages=6, blank_pages=(2, 4, 5)), "manual.pdf")
    blank = [w for w in d.warnings if "no extractable text" in w]
    assert blank == ["pages 2, 4-5 have no extractable text (blank, or scanned / images only)"]


def test_glyphs_the_fonts_cannot_decode_are_counted_and_named():
    d = load_bytes(make_undecodable_pdf(), "persian-thesis.pdf")
    assert d.text.count("\ufffd") == 13 and d.meta["undecoded_chars"] == 12  # page 2's single one is not counted
    said = [w for w in d.warnings if "could not be decoded" in w]
    assert len(said) == 1 and said[0].startswith("12 characters on page 1 could not be decoded and read \ufffd")
    assert not any("decoded" in w for w in load_bytes(make_pdf(pages=2), "clean.pdf").warnings)


def test_running_header_that_changes_with_the_chapter_is_marked():
    """A LaTeX book's header: "CHAPTER 3. TITLE ... 3.1. SECTION ..." changes on every page, but
    starts alike; marked on every page, while headings and list items at a page top are not."""
    chapters = ["DEFINITIONS AND OVERVIEW", "GETTING AND INSTALLING", "CHOOSING A DEBIAN", "COMPATIBILITY"]
    pages = []
    for k in range(8):
        c = k // 2 + 1
        head = f"_<u>CHAPTER {c}.</u>_ _<u>{chapters[c - 1]}</u>_ _<u>{c}.{k % 2 + 1}.</u>_ _<u>SECTION {'ABCDEFGH'[k]}</u>_"
        body = "## Chapter 9\n\nA heading starts this page." if k == 3 else f"Body text of page {k} goes on."
        pages.append(f"{head}\n\n{body}\n\n(a) the last item of page {k} ends here")
    pages += [f"({x}) the {w} of the list\n\nMore text.\n\nend {k}"
              for k, (x, w) in enumerate([("a", "controller"), ("b", "processor"), ("c", "recipient")])]
    from chunkscope.ingest.pdf.cleanup.running_lines import find_running_lines

    _, found = find_running_lines(pages)
    heads = {k for k, items in found.found.items() for _, edge, why in items if edge == "header"}
    assert heads == set(range(8))
    assert {why for items in found.found.values() for _, edge, why in items if edge == "header"} == {"same start"}
    out = mark_running_lines(pages)
    assert out[1].startswith("<!-- PageHeader: _<u>CHAPTER 1.</u>_") and "Body text of page 1" in out[1]
    assert out[8].startswith("(a) the controller")  # list items at the page top stay text


def test_bold_footer_with_page_number_and_chapter_is_marked_but_a_bullet_is_not():
    """A Sphinx manual's footers, in bold: "**6** **Chapter 2.** **Applying ...**" (even pages) and
    "**2.3.** **Registering ...** **7**" (odd ones). The leading "**" was read as a list bullet, so 89
    of 114 footers stayed in the text; a real bullet ("* item 9") at the page bottom stays text."""
    from chunkscope.ingest.pdf.cleanup.running_lines import find_running_lines

    pages = []
    for k in range(8):
        n = k + 3
        title = ["Scope", "Applying to Become a Member", "Debian Developer's Duties", "Resources", "Packages",
                 "Best Packaging Practices", "Beyond Packaging", "Internationalization"][k]  # one per page
        foot = (f"**{n}** **Chapter {k + 1}.** **{title}**" if n % 2 == 0
                else f"**{k + 1}.{k % 3 + 1}.** **{title}** **{n}**")
        pages.append(f"Body text of page {n} goes on here.\n\n{foot}")
    _, found = find_running_lines(pages)
    foots = {k: why for k, items in found.found.items() for _, edge, why in items if edge == "footer"}
    assert foots == {k: "chapter + page number" for k in range(8)}
    words = ["apples", "pears", "plums", "figs", "dates", "limes", "kiwis", "grapes"]
    bullets = [f"The {w} come first.\n\n* {w} in crate {k + 3}" for k, w in enumerate(words)]
    assert not find_running_lines(bullets)[1].found


def test_an_underlined_page_number_in_a_header_is_read():
    """gnuplot's manual: "<u>CONTENTS</u> <u>gnuplot</u> <u>5.4</u> <u>3</u>" — the "</u>" after the number
    hid it, so the odd pages' headers stayed in the text."""
    from chunkscope.ingest.pdf.cleanup.running_lines import find_running_lines

    words = ["Canvas", "Plotting", "Commands", "Terminals", "Bugs", "Index", "Styles", "Fonts"]
    pages = [f"<u>{w.upper()}</u> <u>gnuplot</u> <u>5.4</u> <u>{k + 3}</u>\n\nThe {w} section goes on {k}."
             for k, w in enumerate(words)]
    _, found = find_running_lines(pages)
    heads = {k: why for k, items in found.found.items() for _, edge, why in items if edge == "header"}
    assert heads == {k: "chapter + page number" for k in range(8)}, heads


def test_roman_page_numbers_of_the_front_matter_are_marked():
    """Contents pages numbered i, ii, iii... are too few for a quarter of the pages: three in sequence do."""
    from chunkscope.ingest.pdf.cleanup.running_lines import find_running_lines

    front = [f"Contents line {k} . . . . 4\n\n**{r}**" for k, r in enumerate(["i", "ii", "iii", "iv"])]
    body = [f"Body text of page {k} goes on here, long enough.\n\nAnd one more paragraph {k}." for k in range(12)]
    _, found = find_running_lines(front + body)
    foots = {k for k, items in found.found.items() for _, edge, why in items if edge == "footer" and why == "page number"}
    assert foots == {0, 1, 2, 3}
    # a lone "v" ending one page is no page number
    assert not find_running_lines(["Text.\n\nv", "More text.\n\nOther end", "Third.\n\nEnd"])[1].found


def test_a_blank_verso_with_only_its_running_lines_is_no_warning():
    """A book's blank page still carries its running header and page number: once those are marked,
    it has no text, which is right, not a problem to warn about (9 such warnings on one manual)."""
    import pymupdf

    pdf = pymupdf.open()
    for k in range(6):
        page = pdf.new_page()
        page.insert_text((72, 40), "Developer's Reference, Release 12", fontsize=9)
        if k != 3:
            page.insert_text((72, 300), f"Body text of page {k + 1} with enough words to be a paragraph.", fontsize=11)
        page.insert_text((300, 810), str(k + 1), fontsize=9)
    pdf.new_page()  # a truly empty page: still said
    doc = load_bytes(pdf.tobytes(), "book.pdf")
    pdf.close()
    warned = [w for w in doc.meta["health"]["warnings"] if "no text" in w]
    assert warned == ["page 7: no text"], warned


def test_pdf_without_any_text_is_refused():
    with pytest.raises(IngestError, match="no extractable text"):
        load_bytes(make_pdf(pages=2, blank_pages=(1, 2)), "scan.pdf")


def test_pdf_from_disk_and_custom_name(tmp_path):
    path = tmp_path / "multi.pdf"
    path.write_bytes(make_pdf(pages=2))
    d = load_document(path, name="Custom")
    assert d.name == "Custom" and len(d.pages) == 2 and d.warnings == []
    assert d.meta["page_count"] == 2 and d.meta["parse_seconds"] >= 0


MARKDOWN = """# Policy

Intro paragraph that is short.

## Table

| Item | Value |
|------|-------|
| a    | 1     |

```python
# a comment, not a heading
x = 1
```

- first
- second
  continued

\\* A footnote.

<!-- PageBreak -->

## Next page

Text on page two.
"""


def test_markdown_kept_exactly_with_pages_and_code(tmp_path):
    path = tmp_path / "policy.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    d = load_document(path)
    d.check_blocks()
    assert d.text == MARKDOWN and d.source_format == "markdown"
    assert [h.title for h in d.headings] == ["Policy", "Table", "Next page"]
    assert len(d.pages) == 2 and d.text[d.pages[1].start:].startswith("## Next page")
    kinds = [b.kind for b in d.blocks]
    assert kinds.count("layout") == 1 and "code" in kinds
    code = next(b for b in d.blocks if b.kind == "code")
    assert "# a comment" in d.text[code.start:code.end]
    table_block = next(b for b in d.blocks if "| a " in d.text[b.start:b.end])
    assert d.text[table_block.start:table_block.end].startswith("## Table")


def test_markdown_crlf_and_bom_normalised():
    d = load_bytes(b"\xef\xbb\xbf# T\r\n\r\nBody line.\r\n", "x.markdown")
    assert d.text == "# T\n\nBody line.\n" and d.headings[0].title == "T"


TRICKY = (
    "Zeile mit Umlauten: Straße, Größe, naïve café — “quotes” and emoji 🙂.\n\n"
    "# not a heading in plain text\n\n"
    "Tabs\tand    spaces   \n\n\n\n"
    "Right-to-left: שלום עולם. CJK: 数据保护.\n\f"
    "Second page after a form feed.\n"
)


def test_text_paragraphs_and_form_feed_pages():
    d = load_bytes(TRICKY.encode("utf-8"), "notes.txt")
    d.check_blocks()
    assert d.text == TRICKY and d.source_format == "text"
    assert d.headings == []
    assert len(d.pages) == 2 and d.text[d.pages[1].start:].startswith("Second page")
    assert all(b.kind in ("paragraph", "group") for b in d.blocks)


def test_text_without_form_feed_has_no_pages():
    d = load_bytes(("Para one. " * 80 + "\n\n" + "Para two. " * 80).encode(), "a.txt")
    assert d.pages == [] and [b.kind for b in d.blocks] == ["paragraph", "paragraph"]


def test_text_other_encodings_detected():
    fr = "Le responsable du traitement conserve les données très longtemps, à Noël comme en été.\n" * 8
    d = load_bytes(fr.encode("cp1252"), "fr.txt")
    assert d.text == fr and d.language == "fr"
    assert any("not UTF-8" in w for w in d.warnings)
    d16 = load_bytes("Hello UTF-16 world, with a BOM.\n".encode("utf-16"), "u16.txt")
    assert d16.text.startswith("Hello UTF-16")


def test_language_detection():
    en = load_bytes(b"The controller shall protect personal data and inform the data subject.", "en.txt")
    fr = load_bytes("Le responsable du traitement protège les données personnelles.".encode(), "fr.md")
    assert en.language == "en" and fr.language == "fr"
    tiny = load_bytes(b"| 1 | 2 |", "t.md")
    assert tiny.language == "und"
    # Chinese has no spaces between words: a number in a clause ("第12条") once took the whole clause with it,
    # and a numbered legal text was left with too few letters ("und", then RC with English rules)
    zh = "".join(f"数据控制者应当保存第{i}条规定的处理活动记录。这些记录必须在监管机构要求时提供。" for i in range(20))
    assert load_bytes(zh.encode(), "zh.md").language == "zh"
    ja = "".join(f"第{i}条：管理者は処理の記録を保存しなければならない。" for i in range(20))
    assert load_bytes(ja.encode(), "ja.md").language == "ja"


def test_language_of_indented_prose_and_of_markdown_with_indented_code():
    """A man page or memo indents its prose throughout: that is the text, not code blocks to be ignored
    (the ssh manual was taken for Nigerian Pidgin from its section titles alone)."""
    body = ("The program connects and logs into the specified destination, which may be given as a host "
            "name or a network address. The user must prove their identity to the remote machine using "
            "one of several methods, and the session is then opened for the commands that follow.")
    man = "NAME\n       ssh - remote login program\n\nDESCRIPTION\n" + "\n".join(
        "       " + line for line in textwrap.wrap(body, 70)) + "\n\nOPTIONS\n       -v     Verbose mode.\n"
    assert "The user must prove their identity" in strip_markup(man, plain=True)  # the prose is what is classified
    assert load_bytes(man.encode(), "ssh.1.txt").language == "en"
    # Markdown always writes code indented: a short German page with a longer indented English listing is German
    de = ("Dieses Programm liest eine Datei und schreibt die Ergebnisse in eine Tabelle. "
          "Die Konfiguration wird beim Start geladen, und der Benutzer kann sie jederzeit ändern.")
    listing = "\n".join("    " + line for line in [
        "# read the configuration file and return the settings for the current user",
        "def load settings from the file and check that every value is valid before using it",
        "    return the settings that were read from the file in the home directory"] * 3)
    assert "configuration file" not in strip_markup(f"# Anleitung\n\n{de}\n\n{listing}\n")
    assert load_bytes(f"# Anleitung\n\n{de}\n\n{listing}\n".encode(), "anleitung.md").language == "de"
    # a French page with an indented English code listing: the listing is still left out
    fr = ("Le responsable du traitement protège les données personnelles des personnes concernées. "
          "Il informe chaque personne de ses droits et tient un registre des activités de traitement.")
    code = "\n".join("    " + line for line in ["def print the value of the thing", "return the result of it"])
    assert "print the value" not in strip_markup(f"# Titre\n\n{fr}\n\n{code}\n")
    assert load_bytes(f"# Titre\n\n{fr}\n\n{code}\n".encode(), "fr.md").language == "fr"


def test_document_json_round_trip_through_loader(tmp_path):
    d = load_bytes(MARKDOWN.encode(), "policy.md")
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(d.to_dict()), encoding="utf-8")
    back = load_document(path)
    assert back.to_dict() == d.to_dict()


def test_underline_and_highlight_tags_are_not_text():
    """The converter writes underlined text as <u>…</u> and highlighted text (a slide title on a coloured
    band) as <mark>…</mark>: tags in the chunks' text and tokens, none of the document's words."""
    import pymupdf

    from chunkscope.ingest.pdf.cleanup.tidy import tidy_page

    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 140), "Underlined words here", fontsize=11)
    page.draw_line((72, 142), (190, 142))
    page.insert_text((72, 180), "Plain body text of the page goes on for a while.", fontsize=11)
    doc = load_bytes(pdf.tobytes(), "underlined.pdf")
    assert "Underlined words here" in doc.text and "<u>" not in doc.text
    assert tidy_page("**<mark>What</mark>** **<mark>is</mark>** x<sup>2</sup>") == "**What** **is** x<sup>2</sup>"


def test_underscores_drawn_as_rules_are_underscores_not_strike_through():
    """LaTeX's ``\\_`` is a rule on the baseline, not a character: the text layer has a gap there, and the
    converter struck out the letter the rule touched (GLPK's graphs.pdf: "glp ~~c~~ reate ~~g~~ raph", 677
    "~~"). The identifier reads as printed; a real line through a heading is kept in the text, left out of
    its title, and the health report says so."""
    doc = load_bytes(make_underscore_rules_pdf(), "underscores.pdf")
    assert "Call glp_create_graph first, then add vertices." in doc.text
    assert doc.headings[0].title == "1.2.1 glp_create_graph creates a graph"
    assert doc.text.count("~~") == 2 and "~~Legacy routines~~" in doc.text  # the real one stays in the text
    assert [h.title for h in doc.headings] == ["1.2.1 glp_create_graph creates a graph", "Legacy routines"]
    health = doc.meta["health"]
    assert health["pages"][0]["struck"] == 1 and health["totals"]["struck"] == 1
    assert any("struck through" in w for w in health["warnings"])
    # the "_" has no ink of its own: every word still gets its box on the page
    assert health["coverage"] == 1.0


def test_underscore_restore_fills_only_the_rules_gaps():
    from chunkscope.ingest.underscores import restore

    box = (0, 0, 1, 1)
    rules = [("glp", "vertex", box, 0), ("(glp", "create", box, 0), ("create", "graph);", box, 0),
             ("v", "size", box, 0), ("no", "match", box, 0)]
    md = "**Structure** **glp** **vertex** and (glp create graph); 0 _≤_ _v_ _size_; no  match, glp vertex"
    assert restore(md, rules) == (
        "**Structure** **glp_vertex** and (glp_create_graph); 0 _≤_ _v_size_; no  match, glp vertex", 4)
    assert restore("glpx create", [("glp", "create", box, 0)]) == ("glpx create", 0)  # whole words only
    # the gap filled is the rule's own: the second "set name" of the page, not the first
    assert restore("Call set name.\n\nThen call set name.", [("set", "name.", box, 1)]) == (
        "Call set name.\n\nThen call set_name.", 1)
    assert restore("set name, set name", [("set", "name", box, 1), ("set", "name,", box, 0)])[0] == "set_name, set_name"
    assert restore("set name", [("set", "name", box, 3)]) == ("set name", 0)  # a gap the page does not have


def test_underlined_words_are_not_joined_by_underscores():
    """ulem's ``\\uline`` draws a rule under every word and under every space between them: the short rule under
    a space touches both words like a ``\\_``, but the words are underlined too, so nothing is joined."""
    import pymupdf

    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_textbox(pymupdf.Rect(72, 60, 520, 200), "Lorem ipsum dolor sit amet, consectetur elit. " * 12,
                        fontsize=10)
    x, y = 72.0, 230.0
    page.insert_text((x, y), "Please", fontsize=10)
    x += pymupdf.get_text_length("Please ", fontsize=10)
    words = "see the user manual".split()
    for n, w in enumerate(words):  # a rule under the word, then one under the space after it
        page.insert_text((x, y), w, fontsize=10)
        for part in [w] + ([" "] if n + 1 < len(words) else []):
            width = pymupdf.get_text_length(part, fontsize=10)
            page.draw_rect(pymupdf.Rect(x, y + 1.8, x + width, y + 2.2), color=None, fill=(0, 0, 0), width=0)
            x += width
    page.insert_text((x, y), " for details.", fontsize=10)
    doc = load_bytes(pdf.tobytes(), "underlined.pdf")
    assert "Please see the user manual for details." in doc.text


def test_a_page_number_the_converter_put_between_the_columns_is_a_running_line():
    """A two-column paper (revtex's sample) prints its page number at the top; the converter writes it between
    the columns ("... {key-list}. ⏎ 2 ⏎ 2. Example citations"), so it was left in the text."""
    from chunkscope.ingest.pdf.cleanup.running_lines import find_running_lines

    pages = ["# A two-column paper\n\nThe first page has no number.\n\nIt ends here."]
    fruit = ["apples", "pears", "plums", "figs", "dates", "limes", "kiwis"]
    for k in range(2, 7):
        pages.append(f"The {fruit[k - 1]} of the left column.\n\n{k}\n\nRight column of page {k} starts here.\n\n"
                     f"And goes on with {k + 10} items.\n\n{k + 10}\n\nNothing but {fruit[k]}.")
    edges = [("atwocolumnpaper", "itendshere")] + [(str(k), f"nothingbut{fruit[k]}") for k in range(2, 7)]
    _, found = find_running_lines(pages, edges)
    assert sorted(found.found) == [1, 2, 3, 4, 5]
    for k in range(1, 6):
        (item,) = found.found[k]
        assert item == (2, "header", "page number inside the page") and found.texts[k] == [str(k + 1)]
    assert not find_running_lines(pages)[1].found  # without the page's ink, a number inside a page is text
    odd = list(pages)
    odd[3] = odd[3].replace("\n\n4\n\n", "\n\n9\n\n")  # another number than the page's: not its page number
    assert 3 not in find_running_lines(odd, edges)[1].found


def _line_words(lines: list[str], number_x: float) -> list[tuple]:
    """PyMuPDF-like words of ``lines`` (12 pt apart): a leading number at ``number_x``, the text from x 86."""
    out = []
    for k, line in enumerate(lines):
        y = 100.0 + 12 * k
        head, _, rest = line.partition(" ")
        if head.isdigit():
            out.append((number_x, y, number_x + 6 * len(head), y + 10, head))
        else:
            rest = line
        x = 86.0
        for w in rest.split():
            out.append((x, y, x + 6 * len(w), y + 10, w))
            x += 6 * len(w) + 4
    return out


def test_a_manuscripts_margin_line_numbers_are_removed():
    """aastex's review copy: "38 In 1996 Maxim …", a number alone where it cut a sentence ("Vikhlinin ⏎⏎ 40 ⏎⏎ took
    over"); 344 numbers through the text, and no heading found behind them. Numbers that are the text's own
    (years opening lines, a listing numbered in the text column) stay."""
    from chunkscope.ingest.pdf.cleanup.line_numbers import MIN_LINE_NUMBERS, strip_line_numbers

    body = [f"{n} Line {n} of the text goes on" for n in range(38, 60) if n not in (40, 45, 52)]
    lines = ["<!-- PageHeader: 2 Schwarz et al. -->", ""] + body[:2] + ["", "40", "", "took over the work."] + body[2:]
    page = "\n".join(lines + ["", "```", "1 first line of code", "2 second", "```"])
    words = _line_words(body + ["40"], 20.0)  # the numbers in the margin, the text from x 86
    out, n = strip_line_numbers(page, words)
    assert n == len(body) + 1  # 52 was lost by the converter: a step of 2 goes on
    assert "Line 38 of the text goes on\nLine 39 of the text goes on\ntook over the work.\nLine 41" in out
    assert "\n40\n" not in out and "2 Schwarz" in out and "1 first line of code" in out
    assert strip_line_numbers(page, None) == (page, 0)  # without the page's words, no evidence
    # a number of the text between two numbered lines (an equation "0 = x + y") neither ends the run nor goes
    jumbled = page.replace("\n49 Line 49", "\n0 = x + y\n49 Line 49")
    out2, n2 = strip_line_numbers(jumbled, words)
    assert n2 == n and "\n0 = x + y\nLine 49 of the text" in out2
    assert strip_line_numbers("007 a\n" + page, words)[0].startswith("007 a")  # not in the run: untouched
    years = [f"{1990 + i} was the year of event {i}." for i in range(12)]
    assert strip_line_numbers("\n".join(years), _line_words(years, 60.0))[1] == 0  # a space before the text
    short = [f"{k} apples" for k in range(1, MIN_LINE_NUMBERS)]
    assert strip_line_numbers("\n".join(short), _line_words(short, 20.0))[1] == 0  # a short numbered list


def test_a_title_over_overlay_slides_is_not_an_alternating_header():
    """A frame title repeated over three overlay slides (pages 7-9) tops pages of both sides: two of them were
    taken for an odd-page header. And a superscript digit at a page's edge ("²".isdigit()) is no page number."""
    from chunkscope.ingest.pdf.cleanup.running_lines import find_running_lines

    titles = ["Why this question matters", "Earlier work on haplotypes", "The formal model today",
              "Blocks help the search", "Hardness of the general case", "Tractable special cases"]
    titles[6:6] = ["Results of the experiment"] * 3
    titles += ["Closing words of the talk", "Open problems we see", "Questions from the floor", "Backup material",
               "More data in a table", "Proof of the lemma", "Acknowledgements and thanks"]  # 16 slides
    pages = [f"{t}\n\nBody of slide {k}: {w}." for k, (t, w) in enumerate(zip(titles, "abcdefghijklmnop"))]
    edges = [(t.lower().replace(" ", ""), f"bodyofslide{k}{w}") for k, (t, w) in enumerate(zip(titles, "abcdefghijklmnop"))]
    assert not find_running_lines(pages, edges)[1].found
    words = ("alpha", "beta", "gamma", "delta")
    sup = [f"{w} leads this page\n\nbody a\n\n²\n\nmore body\n\n{w} ends it" for w in words]
    assert not find_running_lines(sup, [(f"{w}leadsthispage", "²") for w in words])[1].found  # and no ValueError


def test_a_page_number_between_the_columns_under_a_running_title():
    """The number the converter wrote between the columns is found on a page whose running footer (a title)
    was found too; an edge that already has its running line is not given a second one."""
    from chunkscope.ingest.pdf.cleanup.running_lines import find_running_lines

    fruit = ["apples", "pears", "plums", "figs", "dates", "limes", "kiwis"]
    pages = []
    for k in range(1, 7):
        pages.append(f"The {fruit[k]} of the left column.\n\n{k}\n\nRight column {fruit[k - 1]} starts.\n\n"
                     f"{k}\n\nA Journal of Fruit, volume nine")
    edges = [(str(k), "ajournaloffruitvolumenine") for k in range(1, 7)]
    _, found = find_running_lines(pages, edges)
    for k in range(6):
        assert sorted(found.found[k]) == [(2, "header", "page number inside the page"), (8, "footer", "repeated")]


def test_a_reference_list_with_hanging_indents_loads_one_paragraph_per_entry():
    """A bibliography's hanging indent made pymupdf4llm cut each entry after its first line ("…Quantum Fields
    in" / blank line / "Curved Space …"), so blocks started mid-reference."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    y = 72
    page.insert_text((50, y), "References", fontsize=14)
    refs = [("[1] N. D. Birell and P. C. W. Davies, Quantum Fields in", ["Curved Space (Cambridge University Press)."]),
            ("[2] D. E. Knuth, Seminumerical Algorithms, 2nd ed., The",
             ["Art of Computer Programming, Vol. 2 (Addison-Wesley,", "Reading, Massachusetts, 1981)."]),
            ("[3] J. M. Smith, Molecular Dynamics (Academic, New York, 1980).", [])]
    y += 24
    for first, rest in refs:
        page.insert_text((50, y), first, fontsize=10)
        y += 12
        for line in rest:
            page.insert_text((62, y), line, fontsize=10)  # the hanging indent
            y += 12
    loaded = load_bytes(doc.tobytes(), "refs.pdf")
    doc.close()
    assert "Quantum Fields in\nCurved Space" in loaded.text and "2nd ed., The\nArt of Computer" in loaded.text
    assert loaded.meta["rejoined_entries"] == 2
    starts = [loaded.text[b.start:b.end].lstrip()[:3] for b in loaded.blocks if b.kind != "layout"]
    assert all(s.startswith(("#", "[")) for s in starts), starts


# ----------------------------------------------------------------------------- HTML
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Retention policy</title>
<style>p { color: red }</style><script>var tracking = "do not read me";</script></head><body>
<nav><a href="/">Home</a> | <a href="/about">About the Northwind library and its reading rooms</a></nav>
<main><h2>Periods</h2><p>The controller keeps records for <b>ten</b> years. It deletes them after_that, and the
archive checks it every year.</p>
<table><tr><th>Record</th><th>Period</th></tr><tr><td>Invoices</td><td>10 years</td></tr></table>
<ul><li>First rule</li><li>Second rule with <code>x*y</code></li></ul>
<pre><code class="language-python">def keep(x):
    return x * 2
</code></pre><p>See <a href="https://example.com/guide">the guide</a>. Caf\u00e9 hours vary.</p></main>
<footer>&copy; 2025 Northwind</footer></body></html>"""


def test_an_html_page_is_read_as_markdown_from_its_main_content():
    d = load_bytes(PAGE.encode("utf-8"), "policy.html")
    assert d.source_format == "html" and d.language == "en" and d.meta["html_content"] == "<main>"
    assert d.text.startswith("# Retention policy\n\n## Periods\n\nThe controller keeps records for **ten** years.")
    assert "after_that" in d.text and "`x*y`" in d.text  # no Markdown escapes added to the text
    assert "after_that, and the archive checks it every year." in d.text  # the source's line break is a space
    assert "```python\ndef keep(x):\n    return x * 2\n```" in d.text and "[the guide](https://example.com/guide)" in d.text
    assert "Café" in d.text
    for gone in ("tracking", "color: red", "Home", "reading rooms", "2025 Northwind"):
        assert gone not in d.text  # scripts and styles never; navigation and footer outside <main>
    assert [w for w in d.warnings if "<main> only" in w] == [
        "read the page's <main> only: 74 characters of navigation, header and footer around it are left out"]
    kinds = [b.kind for b in d.blocks]
    assert {"table", "list", "code"} <= set(kinds)
    assert [(h.level, h.title) for h in d.headings] == [(1, "Retention policy"), (2, "Periods")]
    # chunkers and metrics run on it as on Markdown; a page has no pages
    from chunkscope.chunkers.registry import run_chunker

    assert run_chunker(d, "recursive-1100+pp").status == "ok"
    assert run_chunker(d, "page").reason == "the document has no pages (a web page has none)"


def test_html_without_main_keeps_the_body_and_its_charset():
    latin = "<html><head><meta charset='iso-8859-1'></head><body><h1>Caf\xe9</h1><p>Le caf\xe9 ouvre \xe0 huit heures.</p></body></html>"
    d = load_bytes(latin.encode("iso-8859-1"), "cafe.htm")
    assert d.text == "# Café\n\nLe café ouvre à huit heures.\n" and d.meta["html_content"] == "body"
    assert not any("only:" in w for w in d.warnings)
    with pytest.raises(IngestError, match="has no text"):
        load_bytes(b"<html><body><script>document.write('hi')</script></body></html>", "app.html")


def test_html_permalinks_go_and_in_page_links_keep_their_text():
    page = ('<body><ul><li><a href="#intro">1. Introduction</a></li></ul>'
            '<h1 id="intro">1. Introduction<a class="headerlink" href="#intro" title="Permalink">¶</a></h1>'
            '<h2>Scope<a href="#scope">#</a></h2><p>Read <a href="https://example.org/spec">the spec</a> and '
            '<a href="#intro">the introduction</a>.</p></body>')
    d = load_bytes(page.encode(), "sphinx.html")
    assert d.text == ("- 1. Introduction\n\n# 1. Introduction\n\n## Scope\n\n"
                      "Read [the spec](https://example.org/spec) and the introduction.\n")
    assert [h.title for h in d.headings] == ["1. Introduction", "Scope"]


def test_html_navigation_bars_are_left_out_and_said_so():
    # a Texinfo manual (GNU's maintainers' guide, a tour page) opens every node with a bar of links, 70 in all
    bar = ('<div class="{cls}"><p>Next: <a href="#b" rel="next">Getting Help</a>, Previous: <a href="#a">Version</a>, '
           'Up: <a href="#top">Top</a> &nbsp; [<a href="#toc">Contents</a>][<a href="#ix">Index</a>]</p></div>')
    page = (f"<body>{bar.format(cls='header')}<h1>Getting Help</h1><p>Write to the list when you are stuck.</p>"
            f"{bar.format(cls='nav-panel')}<h2>Resources</h2><p>The list is read daily.</p>"
            '<nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>'
            '<div class="header"><p>By the GNU Project, updated 2024, <a href="/x">x</a></p></div></body>')
    d = load_bytes(page.encode(), "maintain.html")
    assert "Next:" not in d.text and "Home" not in d.text and "Contents" not in d.text, d.text
    assert "Write to the list when you are stuck." in d.text and "The list is read daily." in d.text
    assert "By the GNU Project, updated 2024" in d.text  # a "header" that is mostly text, not links, stays
    assert any(w.startswith("3 navigation bar(s)") for w in d.warnings), d.warnings
    # ... but not an article's header, a table's header row, a term, nor a class that only contains "header"/"nav"
    kept = ('<body><header class="entry-header"><h1><a href="/p">The title</a></h1>Posted on <a href="/d">May 2</a> '
            'by <a href="/a">Ann</a></header><p>Body text of the post.</p>'
            '<table><tr class="header"><th><a href="?s=n">Name</a></th><th><a href="?s=s">Size</a></th></tr>'
            '<tr><td>a.txt</td><td>4 KB</td></tr></table>'
            '<dl><dt class="header"><a href="#v">--verbose</a> <a href="#q">--quiet</a></dt><dd>Say more.</dd></dl>'
            '<div class="navigation-guide"><a href="/1">Step one</a> <a href="/2">Step two</a></div></body>')
    k = load_bytes(kept.encode(), "post.html")
    for words in ("The title", "Posted on", "| [Name](?s=n) | [Size](?s=s) |", "--verbose", "Step one"):
        assert words in k.text, (words, k.text)
    assert not any("navigation bar" in w for w in k.warnings)


def test_html_text_that_looks_like_markdown_stays_text():
    page = ("<body><p># not a heading</p><p>```</p><p>&lt;!-- PageBreak --&gt; in the text</p>"
            "<h2>Next section</h2><p>Its text.</p><pre><code>```\nshown fence\n```\n</code></pre><p>after</p></body>")
    d = load_bytes(page.encode(), "md-like.html")
    assert [h.title for h in d.headings] == ["Next section"]  # "#" text is no heading, "```" no code fence
    assert d.pages == [] and "<!-- PageBreak -->" not in d.text  # and a comment in the text no page break
    assert [b.kind for b in d.blocks if b.kind == "code"] == ["code"]  # the <pre> showing a fence: one block
    assert "````\n```\nshown fence\n```\n````" in d.text


def test_html_layout_tables_read_as_their_blocks_and_main_only_when_it_holds_the_content():
    page = ("<body><table><tr><td><h1>Guide</h1><p>The guide explains the rules.</p>"
            "<table><tr><th>Rule</th><th>Days</th></tr><tr><td>Keep</td><td>30</td></tr></table></td>"
            "<td><h2>Notes</h2><ul><li>One note</li></ul></td></tr></table>"
            "<main></main></body>")  # an empty <main> beside the content: not where the content is
    d = load_bytes(page.encode(), "layout.html")
    assert [(h.level, h.title) for h in d.headings] == [(1, "Guide"), (2, "Notes")]
    assert "| Rule | Days |\n| --- | --- |\n| Keep | 30 |" in d.text and d.meta["html_content"] == "body"
    assert "table" in {b.kind for b in d.blocks} and "\n- One note\n" in d.text
    # an anchor class on a heading's own link keeps the heading's text; a zero-width mark goes
    d2 = load_bytes(('<body><h2><a class="anchor" href="#i">Installing</a></h2><h2>Usage<a class="hash-link" '
                     'href="#usage">\u200b</a></h2><p>Run it.</p></body>').encode(), "docs.html")
    assert [h.title for h in d2.headings] == ["Installing", "Usage"]


def test_html_data_tables_keep_their_rows_when_cells_wrap_text_in_one_paragraph():
    # Confluence and Word exports put every cell's text in a <p>: still a data table; two paragraphs in a
    # cell make it a layout cell. A table with no <th> takes its first row as the header.
    page = ("<body><table><tr><td><p>Record</p></td><td><p>Keep</p></td></tr>"
            "<tr><td><p>Invoice</p></td><td><p>7 <b>years</b></p></td></tr></table>"
            "<table><tr><td><p>Left column.</p><p>Its second paragraph.</p></td><td><p>Right.</p></td></tr></table>"
            "</body>")
    d = load_bytes(page.encode(), "export.html")
    assert "| Record | Keep |\n| --- | --- |\n| Invoice | 7 **years** |" in d.text
    assert "Left column.\n\nIts second paragraph.\n\nRight." in d.text and d.text.count("| --- |") == 1


def test_html_bytes_are_decoded_as_text_files_are():
    with pytest.raises(IngestError, match="binary data"):
        load_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, "image.html")
    # wrappers nested hundreds deep (generated pages) and 500 list items left open, as browsers read them
    deep = "<body>" + "<div><span>" * 300 + "<p>The deep text.</p>" + "</span></div>" * 300 + "</body>"
    assert load_bytes(deep.encode(), "deep.html").text == "The deep text.\n"
    items = "<body><ul>" + "".join(f"<li>item {i}" for i in range(500)) + "</ul></body>"
    assert load_bytes(items.encode(), "items.html").text.count("\n- item ") == 499
    # declared UTF-8 but written in Latin-1: the declaration does not decode, detection does
    wrong = "<html><head><meta charset='utf-8'></head><body><p>Le café ouvre à huit heures, déjà.</p></body></html>"
    d = load_bytes(wrong.encode("latin-1"), "wrong.html")
    assert "Le café ouvre à huit heures, déjà." in d.text and any("not UTF-8" in w for w in d.warnings)
