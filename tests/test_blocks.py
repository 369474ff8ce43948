"""Block builder: the rules of DESIGN section 3 and the tiling invariant."""

from __future__ import annotations

import json

import pytest
from conftest import CORPUS_DIR, corpus_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkscope.document import Span, check_tiling
from chunkscope.text.atoms import read_atoms
from chunkscope.text.blocks import blocks_by_kind, build_blocks
from chunkscope.text.tokens import count_tokens


def kinds_and_texts(text, **kw):
    blocks, headings = build_blocks(text, **kw)
    check_tiling([(b.start, b.end) for b in blocks], len(text))
    return [(b.kind, text[b.start:b.end]) for b in blocks], headings


LONG = " ".join(f"word{i} of a long paragraph that keeps going." for i in range(40))  # > 100 tokens


def test_heading_titles_are_read_without_emphasis_marks():
    """A PDF's italic section title comes as "#### _1._ _Citations_": the inspector's heading path showed the
    underscores. Emphasis goes where CommonMark sees it; underscores inside words stay."""
    text = ("## **I.** **INTRODUCTION**\n\n#### _1._ _Wide_ _text_ _(A_ _level-3_ _head)_\n\n"
            "### *Note* on snake_case_name and x*y*z\n\nBody.\n")
    _, headings = kinds_and_texts(text)
    assert [h.title for h in headings] == ["I. INTRODUCTION", "1. Wide text (A level-3 head)",
                                           "Note on snake_case_name and x*y*z"]
    # a title the PDF wrapped at a hyphen reads whole (Ghostscript's colour manual); a hyphen that stands for a
    # shared part stays
    _, headings = kinds_and_texts("### **8.3 Direct Color Re-** **placement**\n\nBody.\n\n"
                                  "### Pre- and post-processing\n\nBody.\n")
    assert [h.title for h in headings] == ["8.3 Direct Color Replacement", "Pre- and post-processing"]


def test_heading_joins_following_body_and_headings_chain():
    text = f"# Title\n\n## Sub\n\n{LONG}\n\n{LONG}\n"
    blocks, headings = kinds_and_texts(text)
    assert [k for k, _ in blocks] == ["heading", "paragraph"]
    assert blocks[0][1] == f"# Title\n\n## Sub\n\n{LONG}\n\n"
    assert [(h.level, h.title) for h in headings] == [(1, "Title"), (2, "Sub")]
    assert text[headings[0].start:headings[0].end] == "# Title"


def test_short_items_grouped_and_long_paragraph_alone():
    text = f"{LONG}\n\nShort one.\n\nShort two.\n\n- item a\n- item b\n\n{LONG}\n"
    blocks, _ = kinds_and_texts(text)
    assert [k for k, _ in blocks] == ["paragraph", "group", "paragraph"]
    assert blocks[1][1].startswith("Short one.") and blocks[1][1].endswith("- item b\n\n")


def test_a_bold_title_line_starts_a_group_of_its_own():
    """R-data.pdf: "6. **Encodings**" (a heading the converter wrote as text) sat inside a paragraph group with the
    section before it, so a chunk boundary right before it "broke" that group."""
    text = ("Quoted strings are output as they are.\n\nThe second form is the usual escape.\n\n6. **Encodings**\n\n"
            "Text files do not say how they are encoded.\n\n**Blank** **lines**\n\nThey are skipped.\n\n"
            "**Vclear** **235**\n\nLast line.\n")
    blocks, _ = kinds_and_texts(text)
    assert [t.split("\n")[0] for _, t in blocks] == ["Quoted strings are output as they are.", "6. **Encodings**",
                                                      "**Blank** **lines**"], blocks  # a contents line is no title
    assert [k for k, _ in blocks] == ["group", "group", "group"]
    # a list of bold titles stays one block with its lead-in (a title next to a title is an item, not a heading)
    fruits = "Fruits we sell:\n\n1. **Apples**\n\n2. **Pears**\n\n3. **Plums**\n\nWe sell them fresh.\n"
    assert [k for k, _ in kinds_and_texts(fruits)[0]] == ["group"]


def test_table_of_contents_entries_are_blocks_of_their_own():
    """A manual's table of contents came out as one paragraph several pages long: every chunk boundary
    in it was a broken block (the winner's five broken blocks on the Debian Developer's Reference)."""
    toc = ("**2** **Applying to Become a Member** **5**\n"
           "2.1 Getting started . . . . . . . . . . . . . . 5\n"
           "2.2 Debian mentors and sponsors . . . . . . . . 6\n"
           "5.9 Moving, removing, renaming, orphaning, adopting, and\n"
           "reintroducing packages ...................... 42\n"
           "Index  . . . . . . . . . . . . . . . . . . . . . . xiv\n")
    text = f"## Contents\n\n{toc}\n{LONG}\n\nThe wait was long . . . . but it ended 3\nand then more text.\n"
    blocks, _ = kinds_and_texts(text)
    assert [k for k, _ in blocks] == ["heading", "toc", "toc", "toc", "toc", "paragraph", "paragraph"]
    # the heading joins the first entry: the chapter's line, bold and without leaders, an entry of its own
    assert blocks[0][1] == "## Contents\n\n**2** **Applying to Become a Member** **5**\n"
    assert blocks[3][1] == "5.9 Moving, removing, renaming, orphaning, adopting, and\nreintroducing packages " \
                           "...................... 42\n"  # an entry wrapped onto two lines is one
    assert blocks[4][1].startswith("Index") and blocks[4][1].rstrip().endswith("xiv")  # a roman page number
    # a numbered contents list (a word processor's): "1." made it one list item of all the lines
    numbered = "1. Introduction ........ 1\n2. Scope ........ 3\n3. Definitions ........ 4\n"
    assert [k for k, _ in kinds_and_texts(numbered)[0]] == ["toc", "toc", "toc"]
    # a chapter's entry standing alone between blank lines is an entry too
    alone = f"{LONG}\n\n4 Shell Builtin Commands . . . . . . . . . 48\n\n{LONG}\n"
    assert [k for k, _ in kinds_and_texts(alone)[0]] == ["paragraph", "toc", "paragraph"]
    # one dotted line in a paragraph is not a table of contents
    assert blocks[-1][0] == "paragraph" and blocks[-1][1].startswith("The wait was long")


def test_list_only_run_is_list_and_group_is_capped():
    items = "".join(f"- item number {i} with a few words in it\n" for i in range(400))
    blocks, _ = kinds_and_texts(items)
    assert all(k == "list" for k, _ in blocks) and len(blocks) > 1
    assert all(count_tokens(t) <= 1000 for _, t in blocks)


def test_footnotes_join_preceding_text():
    text = f"{LONG}\n\n\\* The footnote text.\n\n{LONG}\n\n[^1]: Another note.\n"
    blocks, _ = kinds_and_texts(text)
    assert [k for k, _ in blocks] == ["paragraph", "paragraph"]
    assert "\\* The footnote" in blocks[0][1] and "[^1]:" in blocks[1][1]


def test_tables_figures_code_and_layout():
    text = (
        "Intro.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "<Table>\n| x | y |\n| --- | --- |\n</Table>\n\n"
        "<Figure>\nA chart\n\nwith a blank line\n</Figure>\n\n"
        "```python\nx = 1\n\n# not a heading\n```\n\n"
        "<!-- PageFooter: page 1 -->\n<!-- PageBreak -->\n\n"
        f"{LONG}\n"
    )
    blocks, headings = kinds_and_texts(text)
    assert [k for k, _ in blocks] == [
        "paragraph", "table", "table", "figure", "code", "layout", "layout", "paragraph"
    ]
    assert headings == []
    assert blocks[4][1].startswith("```python") and blocks[4][1].endswith("```\n\n")


def test_rows_of_pipes_without_a_delimiter_row_are_no_table():
    """GLPK's graphs.pdf: the converter wrote its figures (drawn with lines and letters) as lines of pipes,
    "| <sup>|||||||</sup>", "|| 11", and 11 of the document's 12 "table" blocks were that debris. Only rows
    over a delimiter row are a table (GFM); the others are text, and do not cut the paragraph they are in."""
    text = ("| <sup>|||||||</sup>\n\n|| <sup>B</sup>\nmm 5 | 6\n\n"
            f"Text before the figure\n| .|\n| . |\n/ | / |\n\n|Job|Time|\n|---|---|\n|A|3|\n\n{LONG}\n")
    blocks, _ = kinds_and_texts(text)
    assert [k for k, _ in blocks] == ["group", "table", "paragraph"]
    assert blocks[0][1].startswith("| <sup>") and "Text before the figure\n| .|" in blocks[0][1]
    assert blocks[1][1] == "|Job|Time|\n|---|---|\n|A|3|\n\n"


def test_heading_before_table_and_heading_not_joined_across_layout():
    text = "## Rates\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Alone\n\n<!-- PageBreak -->\n\nText.\n"
    blocks, _ = kinds_and_texts(text)
    assert [k for k, _ in blocks] == ["heading", "heading", "layout", "paragraph"]
    assert "| 1 | 2 |" in blocks[0][1]


def test_oversized_table_split_into_sub_tables_at_rows():
    rows = "".join(f"| row {i} | value {i} with several more words in the cell |\n" for i in range(300))
    text = "| name | value |\n|---|---|\n" + rows + "\nAfter.\n"
    blocks, _ = kinds_and_texts(text)
    tables = [t for k, t in blocks if k == "table"]
    assert len(tables) >= 3
    assert tables[0].startswith("| name | value |\n|---|---|\n")
    assert all(t.startswith("| ") for t in tables)
    assert all(count_tokens(t) <= 1000 for t in tables)


def test_blocks_never_cross_pages():
    text = "First page para\ncontinues here\n\fsecond page para.\n\nMore.\n"
    pages = [Span(0, 31), Span(31, len(text))]
    blocks, _ = build_blocks(text, pages, markdown=False)
    assert 31 in [b.start for b in blocks]


def _paged(*pages: str):
    text, spans, pos = "", [], 0
    for body in pages:
        piece = body + "\n\n<!-- PageFooter: 7 -->\n\n<!-- PageBreak -->\n\n<!-- PageHeader: Manual -->\n\n"
        spans.append(Span(pos, pos + len(piece)))
        text += piece
        pos += len(piece)
    return text, spans


def test_a_block_that_goes_on_over_a_page_break_is_one_block():
    """A paragraph cut mid-sentence by a page break was two blocks, so the page chunker never broke
    anything: the Debian Developer's Reference's winner won on BI alone (0.993 vs 0.947)."""
    from chunkscope.text.continuation import join_continued

    text, pages = _paged(
        f"{LONG}\n\nThe upload goes into the normal package workflow and",   # no full stop: goes on
        "thus increases the chances of a fix.\n\nA new paragraph starts here.\n\n```\ncode line 1\n```\n\n"
        "(continues on next page)",
        "(continued from previous page)\n\n```\ncode line 2\n```\n\n## 5.4 Layout",  # Sphinx's notes around a listing
        "The source package holds the code. It ends here.",                     # body of a heading at a page foot
        "Closed sentence.",
        "Capitalised start of another paragraph.",
    )
    blocks, _ = build_blocks(text, pages)
    joined, n = join_continued(text, blocks, pages)
    check_tiling([(b.start, b.end) for b in joined], len(text))
    spans = {text[b.start:b.end].split("\n")[0][:20]: (b.kind, text[b.start:b.end]) for b in joined}
    workflow = next(v for k, v in spans.items() if k.startswith("The upload"))
    assert "thus increases the chances" in workflow[1]  # one block over the break, footer and header inside
    assert any(v[0] == "code" and "code line 1" in v[1] and "code line 2" in v[1] for v in spans.values())
    layout_heading = next(v for k, v in spans.items() if k.startswith("## 5.4"))
    assert "The source package holds" in layout_heading[1] and layout_heading[0] == "heading"
    assert not any("Closed sentence" in v[1] and "Capitalised" in v[1] for v in spans.values())
    assert n == 3 and len(joined) < len(blocks)
    assert join_continued(text, blocks, pages[:1])[1] == 0  # one page: nothing to join
    # text that cannot end there goes on whatever the next page starts with (Bash's reference manual)
    for left, right in (("the ranges in these locales", "‘[a-dx-z]’ is typically not equivalent."),
                        ("see Section 6.4 [Bash Conditional", "Expressions], page 96."),
                        ("the sequence begins with a", "Control Sequence Indicator."),
                        ("options, arguments,", "Variables and so on.")):
        t, pg = _paged(left, right)
        assert join_continued(t, build_blocks(t, pg)[0], pg)[1] == 1, (left, right)
    for left, right in (("The sentence ends here.", "the next page starts lower case."),
                        ("A title without a full stop", "Another title"),
                        ("The list follows", "# A heading")):
        t, pg = _paged(left, right)
        assert join_continued(t, build_blocks(t, pg)[0], pg)[1] == 0, (left, right)
    # a page with only its footer and header between the two parts: one join, counted once
    text2, pages2 = _paged("The upload goes into the workflow and", "", "thus increases the chances.")
    blocks2, _ = build_blocks(text2, pages2)
    joined2, n2 = join_continued(text2, blocks2, pages2)
    assert n2 == 1 and sum("thus increases" in text2[b.start:b.end] and "The upload" in text2[b.start:b.end]
                           for b in joined2) == 1


def test_a_pdf_paragraph_over_two_pages_is_broken_by_the_page_chunker():
    import pymupdf

    from chunkscope.ingest import load_bytes
    from chunkscope.metrics import block_integrity

    pdf = pymupdf.open()
    for words in (["The maintainers keep the archive consistent across releases and"] * 1,
                  ["thus every upload is checked before it reaches the mirrors."]):
        page = pdf.new_page()
        page.insert_text((72, 700), words[0], fontsize=11)
    doc = load_bytes(pdf.tobytes(), "two.pdf")
    pdf.close()
    assert doc.meta["continued_blocks"] == 1
    page_chunks = [(p.start, p.end) for p in doc.pages]  # what the page chunker cuts
    assert block_integrity(page_chunks, doc.split_points, len(doc.text)).value < 1.0


def test_plain_text_mode_has_no_markdown_constructs():
    text = "# not a heading\n\n| not | a table |\n\nA paragraph.\n"
    blocks, headings = kinds_and_texts(text, markdown=False)
    assert headings == [] and {k for k, _ in blocks} <= {"paragraph", "group"}


def test_leading_blank_lines_and_whitespace_only():
    blocks, _ = kinds_and_texts("\n\n\nHello.\n")
    assert blocks[0][1] == "\n\n\nHello.\n"
    blocks, _ = kinds_and_texts("   \n\n")
    assert len(blocks) == 1
    assert build_blocks("") == ([], [])


def test_blocks_by_kind_order():
    text = "# H\n\nBody.\n\n<!-- PageBreak -->\n"
    blocks, _ = build_blocks(text)
    assert list(blocks_by_kind(blocks)) == ["heading", "layout"]


# ---- property: blocks tile any Markdown-ish text -------------------------------------------
_word = st.text(alphabet="abc xyz|#*-_`<>!\\[]()\t.:é∑", min_size=0, max_size=30)
_piece = st.one_of(
    _word,
    st.builds(lambda w, n: "#" * n + " " + w, _word, st.integers(1, 8)),
    st.builds(lambda w: "- " + w, _word),
    st.builds(lambda w: "1. " + w, _word),
    st.builds(lambda w: "\\* " + w, _word),
    st.builds(lambda w: "[^2]: " + w, _word),
    st.builds(lambda a, b: f"| {a} | {b} |\n|---|---|\n| {b} | {a} |", _word, _word),
    st.builds(lambda w: f"```\n{w}\n", _word),  # possibly unclosed fence
    st.just("```"),
    st.builds(lambda w: f"<Table>\n{w}", _word),  # possibly unclosed tag
    st.just("</Table>"),
    st.builds(lambda w: f"<Figure>{w}</Figure>", _word),
    st.just("<!-- PageBreak -->"),
    st.builds(lambda w: f"<!-- {w}", _word),  # unclosed comment
    st.just("\f"),
    st.just("\r\n"),
    st.text(max_size=20),
)
_doc = st.lists(st.tuples(_piece, st.sampled_from(["\n", "\n\n", "", " ", "\n\n\n"])), max_size=25).map(
    lambda parts: "".join(p + sep for p, sep in parts)
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_doc, st.booleans())
def test_blocks_tile_any_text(text, markdown):
    blocks, headings = build_blocks(text, markdown=markdown)
    check_tiling([(b.start, b.end) for b in blocks], len(text))
    for h in headings:
        assert 0 <= h.start <= h.end <= len(text)
        assert text[h.start:h.end].lstrip().startswith("#")


@settings(max_examples=60, deadline=None)
@given(_doc, st.lists(st.integers(0, 400), max_size=5))
def test_blocks_tile_with_pages(text, cuts):
    edges = sorted({0, len(text), *[c for c in cuts if 0 < c < len(text)]})
    pages = [Span(a, b) for a, b in zip(edges, edges[1:])]
    blocks, _ = build_blocks(text, pages)
    check_tiling([(b.start, b.end) for b in blocks], len(text))
    starts = {b.start for b in blocks}
    assert all(p.start in starts for p in pages)


# ---- the paper's own block boundaries --------------------------------------------------------
def _train_files() -> list:
    d = CORPUS_DIR.parent / "clair-train" / "parsed"
    return sorted(d.glob("*.json")) if d.is_dir() else []


# clair-train documents whose gold boundaries the builder does not reproduce (before and after
# layout comments were narrowed to page breaks/headers/footers/numbers, with identical blocks):
# footnotes without the ``\\*`` marker that the paper's parser split apart, reference-list entries and
# page breaks it kept with the text before. (Loading them keeps the gold blocks: chunkscope.ingest.)
# Strict: a fix makes these tests fail until the entry is removed.
TRAIN_KNOWN_MISMATCH = ("EDPB statement", "Provider Guidelines", "The AI Act", "Verification for Internati",
                        "AI & Algorith")


def _gold_params() -> list:
    out = [pytest.param(p, id="clair-dev:" + p.stem[:40]) for p in corpus_files()]
    for p in _train_files():
        known = any(k in p.stem for k in TRAIN_KNOWN_MISMATCH)
        out.append(pytest.param(p, id="clair-train:" + p.stem[:40], marks=[pytest.mark.xfail(
            strict=True, reason="known mismatch with the paper's parser (footnotes, reference lists, page breaks)")] if known else []))
    return out


@pytest.mark.corpus
@pytest.mark.parametrize("path", _gold_params())
def test_builder_reproduces_reference_split_points(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    text = data["full_text"]
    pos, pages = 0, []
    for k in sorted(data["pages"], key=int):
        pages.append(Span(pos, pos + len(data["pages"][k])))
        pos += len(data["pages"][k])
    blocks, headings = build_blocks(text, pages)
    assert [b.start for b in blocks[1:]] == data["split_points"]
    assert {h.start for h in headings} >= {t["start"] for t in data["titles"]}


def test_only_layout_comments_are_layout_blocks():
    """Page breaks, running headers/footers and page numbers (as pymupdf4llm, our PDF loader and
    Azure DI write them) are layout; an XML/HTML comment that is document content is not."""
    layout = ["<!-- PageBreak -->", "<!-- PageHeader: Appendix A: Copying Information 29 -->",
              "<!-- PageFooter: page 3 -->", '<!-- PageHeader="EN OJ L, 12.7.2024" -->', '<!-- PageNumber="3" -->',
              "<!-- page 12 -->", "<!-- 12 of 40 -->", "<!-- 7 -->", "<!-- pagebreak -->"]
    for c in layout:
        blocks, _ = kinds_and_texts(f"Before.\n\n{c}\n\n{LONG}\n")
        assert [k for k, _ in blocks] == ["paragraph", "layout", "paragraph"], c
    content = ["<!-- the listener of the admin console -->\n<listener port=\"8443\" secure=\"true\"/>",
               "<!-- TODO: page through the results -->", "<!-- Pages are cached for 12 hours -->",
               "<!--\n  version 1.2\n-->"]
    for c in content:
        blocks, _ = kinds_and_texts(f"## Config\n\n{c}\n\n{LONG}\n")
        assert "layout" not in [k for k, _ in blocks], c
        assert any(c in t for _, t in blocks)
    # a paragraph runs on through a content comment line, but a layout comment still ends it
    blocks, _ = kinds_and_texts(f"Set the port:\n<!-- default 80 -->\n<port>80</port>\n\n{LONG}\n")
    assert blocks[0] == ("paragraph", "Set the port:\n<!-- default 80 -->\n<port>80</port>\n\n")
    blocks, _ = kinds_and_texts(f"Text goes\n<!-- PageBreak -->\n\n{LONG}\n")
    assert [k for k, _ in blocks][:2] == ["paragraph", "layout"]
    # inside a code fence nothing is layout (the fence is one code block)
    blocks, _ = kinds_and_texts("```xml\n<!-- PageBreak -->\n<a/>\n```\n")
    assert [k for k, _ in blocks] == ["code"]


def test_contents_lines_without_dot_leaders_are_entries_inside_a_table_of_contents():
    """gnuplot's contents: "**Update** **235**", "**IV** **Terminal** **types** **237**" (bold, no leaders), one
    paragraph each between dotted entries, were one "paragraph group": a boundary before part IV broke it."""
    dotted = "Terminal . . . . . . . . . . . . . . . . . . . . 235\n\n"
    bold = "**Update** **235**\n\n**Vclear** **235**\n\n**IV** **Terminal** **types** **237**\n\n"
    text = (f"## **Contents**\n\n{dotted}{bold}<!-- PageFooter: 17 -->\n\n"
            "**Complete** **list** **of** **terminals** **237**\nAifm 237\n\n"  # two lines, one paragraph
            "Aqua . . . . . . . . . . . . . . . . . . . . 238\n\n"
            f"{LONG}\n\nVersion 5\n\nborn in 1921\n\n{LONG}\n")
    blocks, _ = kinds_and_texts(text)
    kinds = [k for k, _ in blocks]
    assert kinds == ["heading", "toc", "toc", "toc", "layout", "toc", "toc", "toc", "paragraph", "group", "paragraph"]
    assert [b for _, b in blocks[1:4]] == ["**Update** **235**\n\n", "**Vclear** **235**\n\n",
                                          "**IV** **Terminal** **types** **237**\n\n"]
    assert blocks[5][1] == "**Complete** **list** **of** **terminals** **237**\n" and blocks[6][1] == "Aifm 237\n\n"
    # away from a table of contents, a line ending on a number is text ("Version 5" above is a short paragraph)
    alone = f"{LONG}\n\n**Update** **235**\n\n**Vclear** **235**\n\n{LONG}\n"
    assert [k for k, _ in kinds_and_texts(alone)[0]] == ["paragraph", "group", "paragraph"]
    # a sentence ending on a number next to the contents stays text
    prose = f"{dotted}In that year the rate rose to 12\nand it fell again in 1999.\n"
    assert [k for k, _ in kinds_and_texts(prose)[0]] == ["toc", "paragraph"]


def test_reference_entries_cut_after_their_first_line_are_joined_again():
    """A hanging indent puts a reference's first line in a PyMuPDF block of its own, and pymupdf4llm writes
    "[4] N. D. Birell and P. C. W. Davies, Quantum Fields in" / blank line / "Curved Space (…)": every entry was
    two paragraphs, and blocks started mid-reference (APS and ACM two-column samples)."""
    from chunkscope.text.continuation import rejoin_entries

    text = ("## References\n\n"
            "[3] E. Beutler, in Williams Hematology, Vol. 2, edited by\n\n"
            "E. Beutler, M. A. Lichtman, B. W. Coller, and T. S.\nKipps (McGraw-Hill, New York, 1994).\n\n"
            "[4] David A. Anisi. 2003. _Optimal Motion Control_ . Master's thesis.\n\n"   # a first line ending on "."
            "Royal Institute of Technology (KTH), Stockholm, Sweden.\n\n"
            "[5] J. Smith, Proc. SPIE 124, 367 (2007).\n"
            "[6] Sam Anzaroot. 2013. _UMass Citation Field Extraction_\n\n"
            "[Retrieved May 27, 2019 from http://www.iesl.cs.umass.edu](http://www.iesl.cs.umass.edu)\n\n"
            "[7] R. Smith, J. Appl. Phys. (these proceedings) (2001),\n\nabstract No. DA-01.\n\n"
            "Copyright (c) 2021, Artifex Software Inc. All rights reserved.\n")
    out, n = rejoin_entries(text)
    assert n == 4
    assert "edited by\nE. Beutler, M. A." in out  # initials that look like a lettered item
    assert "Master's thesis.\nRoyal Institute" in out and "Extraction_\n[Retrieved May" in out
    assert "(2001),\nabstract No. DA-01.\n\nCopyright" in out  # after the last entry: only while it goes on
    paragraphs = [p for p in out.split("\n\n") if p.strip()]
    assert all(p.startswith(("## ", "[", "Copyright")) for p in paragraphs), paragraphs  # one per entry
    assert "[5] J. Smith, Proc. SPIE 124, 367 (2007).\n[6] Sam" in out  # the converter's own line break stays
    # the page's last entry, going on over the page, keeps its continuation
    assert rejoin_entries("[1] A. First, Title.\n\n[2] B. Second, A Long Title.\n\nGrundlehren der Principles of\n"
                          "\n<!-- PageFooter: 3 -->")[1] == 1
    # separate paragraphs, items, titles and headings between entries stay; one entry alone is no list
    kept = ("[1] A. Author, first entry of\n\n- a bullet item\n\n**A Bold Title**\n\n### Heading\n\n"
            "[2] B. Author, second entry.\n\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n[3] C. Author, third.\n")
    assert rejoin_entries(kept) == (kept, 0)
    alone = "[1] A lone bracketed line that stops in\n\nthe middle.\n"
    assert rejoin_entries(alone) == (alone, 0)
    link = "[Read the manual](https://example.org) for the details of\n\n[the setup](x) and more in\n\nthe text.\n"
    assert rejoin_entries(link) == (link, 0)  # links are not entry labels


def test_labelled_paragraphs_that_are_no_reference_list_are_not_joined():
    """rejoin_entries joined every paragraph between any two "[..] text" paragraphs of a page: prose citing [3]
    and [7] three paragraphs apart, numbered instructions, task lists and numbered judgments were one paragraph."""
    from chunkscope.text.continuation import rejoin_entries

    kept = [
        # labels out of sequence, three paragraphs apart, the first entry a whole sentence
        "## 2 Related work\n\n[3] showed that chunk size matters for retrieval.\n\nLater studies looked at overlap.\n\n"
        "A second line of work studies semantic chunking.\n\nTable 1: Recall at 5 for each chunker.\n\n"
        "[7] argued the opposite on long documents.\n\nWe follow [7] in what follows.\n",
        # in sequence, but each "entry" a short sentence and not cut mid-entry
        "[1] Open the box.\n\nCheck that every part is there. Call us if one is missing.\n\n[2] Mount the base.\n\n"
        "Use the short screws.\n",
        # task lists: "[x]" is no label of a reference list
        "[x] Install the package\n\nThe package needs Python 3.10.\n\n[x] Run the tests\n",
        # a short title after a paragraph that ends its sentence
        "[23] The judge held that the contract was void.\n\nThe appeal\n\n[24] We disagree.\n",
    ]
    for text in kept:
        assert rejoin_entries(text) == (text, 0), text
    # in sequence, but more paragraphs between than a hanging indent's cut makes: only the sentence going on joins
    far = "[1] A. Author, a title that goes\n\non here.\n\nA paragraph.\n\nAnother paragraph.\n\n[2] B. Author, x.\n"
    assert rejoin_entries(far) == (far.replace("goes\n\non", "goes\non"), 1)
    # key labels on consecutive entries are a reference list ("[Knu73]", "[GJ79]")
    keyed = "[Knu73] D. E. Knuth, The Art of\n\nComputer Programming (1973).\n\n[GJ79] M. Garey and D. Johnson, x.\n"
    assert rejoin_entries(keyed)[1] == 1


def test_an_entry_going_on_in_an_italic_line_is_joined():
    """ACM entries go on with the proceedings' title in italics: the all-italic first line of the continuation
    was taken for a title, so the entry stayed cut."""
    from chunkscope.text.continuation import rejoin_entries

    text = ("[1] Ann Author and Bob Builder. 2019. Chunking for retrieval. In\n\n"
            "_Proceedings of the 42nd International Conference on Things_\n(ICT '19). ACM, New York, NY, USA, 1-10.\n\n"
            "[2] Carl Coder. 2020. Another paper. _J. Chunks_ 3, 4 (2020), 5-9.\n")
    out, n = rejoin_entries(text)
    assert n == 1 and "retrieval. In\n_Proceedings" in out
    # a one-line italic title after an entry that ends its sentence stays apart
    title = "[1] A. Author, A title.\n\n_An Italic Title_\n\n[2] B. Author, Another.\n"
    assert rejoin_entries(title) == (title, 0)


def test_an_entry_after_a_whitespace_only_first_line_is_seen():
    from chunkscope.text.continuation import rejoin_entries

    for lead in ("\n", " \n", "\t \n\n"):
        text = lead + "[1] A. First, Some Title of\n\nthe first paper, 2001.\n\n[2] B. Second, Another title of\n\n" \
                      "the second paper, 2002.\n"
        out, n = rejoin_entries(text)
        assert n == 2 and "Title of\nthe first" in out, repr(lead)


def test_prose_ending_on_a_number_after_a_table_of_contents_stays_text():
    """_toc_neighbours made every paragraph whose lines end on a number, next to contents entries, entries
    too, and the run chained on: "The project began in 1998", "Our team has 12"."""
    toc = "Contents\n\n1 Introduction . . . . . . . . 3\n2 Methods . . . . . . . . 5\n3 Results . . . . . . . . 9\n\n"
    text = toc + "The project began in 1998\nand the first release came out in 2001\n\nOur team has 12\n"
    kinds = [a.kind for a in read_atoms(text)]
    assert kinds == ["paragraph", "toc", "toc", "toc", "paragraph", "paragraph"], kinds
    # a plain title and page number that goes on from the entries' numbers is an entry; one going back is not
    assert [a.kind for a in read_atoms(toc + "Discussion 12\n\nAppendix 15\n")][-2:] == ["toc", "toc"]
    assert [a.kind for a in read_atoms(toc + "Chapter 4\n")][-1] == "paragraph"
    # bold lines are entries whatever their numbers (gnuplot's "**Vclear** **235**")
    assert [a.kind for a in read_atoms(toc + "**Vclear** **2**\n")][-1] == "toc"
