"""Heading levels from a PDF's outline (chunkscope.ingest.outline)."""

from __future__ import annotations

import pymupdf

from chunkscope.ingest import load_bytes
from chunkscope.ingest.outline import apply_outline

TOC = [[1, "Applying to Become a Member", 1], [2, "Getting started", 1], [1, "Developer's Duties", 2],
       [2, "Package Maintainer's Duties", 2], [3, "Work towards the next stable release", 2]]


def test_outline_levels_promotes_bold_sub_sections_and_splits_run_together_titles():
    pages = [
        "**CHAPTER**\n\n### **TWO** **APPLYING TO BECOME A MEMBER** **2.1 Getting started**\n\nBody text.",
        "### **THREE** **DEVELOPER'S DUTIES**\n\n### **3.1 Package Maintainer's Duties**\n\n"
        "**3.1.1** **Work towards the next** `stable` **release**\n\nThe release team...\n\n"
        "Text before\n**3.1.1** **Work towards the next** `stable` **release**\ntext after, one paragraph.\n\n"
        "```\n### **3.1 Package Maintainer's Duties**\n```\n\n### **Not in the outline**",
    ]
    out, stats = apply_outline(pages, TOC)
    assert out[0].split("\n\n")[1:3] == ["## **TWO** **APPLYING TO BECOME A MEMBER**", "### **2.1 Getting started**"]
    two = out[1].split("\n\n")
    assert two[:3] == ["## **THREE** **DEVELOPER'S DUTIES**", "### **3.1 Package Maintainer's Duties**",
                       "#### **3.1.1** **Work towards the next** `stable` **release**"]
    assert "Text before\n**3.1.1**" in out[1]  # a bold line inside a paragraph stays text
    assert "```\n### **3.1 Package Maintainer's Duties**\n```" in out[1]  # nothing changes in code
    # no bookmark, after the bookmarked 3.1.1: a part of it, one level under, not its sibling
    assert out[1].endswith("##### **Not in the outline**")
    assert stats == {"entries": 5, "relevelled": 1, "promoted": 1, "split": 1, "nested": 1,
                     "demoted": 0}  # "### 3.1" was right
    # every character of the page is kept: only heading marks and line breaks are added
    strip = lambda s: "".join(ch for ch in s if not ch.isspace() and ch != "#")  # noqa: E731
    assert [strip(a) for a in out] == [strip(b) for b in pages]


def test_a_bookmark_is_one_line_and_only_a_real_label_may_precede_it():
    """"**A note**" is not the bookmark "Note", "## Civil Rights" not the bookmark "Rights"; a
    bookmark that recurs on its page as a bold label becomes one heading, not one per label."""
    toc = [[2, "Note", 1], [1, "Rights", 1], [2, "Appendix title", 1], [2, "Options", 1]]
    page = ("**A note**\n\n## Civil Rights\n\n**B. Appendix title**\n\nText.\n\n**Options**\n\n"
            "The first list.\n\n**Options**\n\nThe second list.")
    out, stats = apply_outline([page], toc)
    lines = out[0].split("\n\n")
    assert lines[0] == "**A note**" and lines[1] == "## Civil Rights"
    assert lines[2] == "### **B. Appendix title**"
    assert lines.count("### **Options**") == 1 and lines.count("**Options**") == 1
    assert stats["promoted"] == 2 and stats["relevelled"] == 0


def test_no_outline_or_a_damaged_one_changes_nothing():
    pages = ["### **1.1 Imports**\n\nText."]
    assert apply_outline(pages, []) == (pages, {"entries": 0, "relevelled": 0, "promoted": 0, "split": 0,
                                                "nested": 0, "demoted": 0})
    assert apply_outline(pages, [["x", None], [1, "Imports", 99], [1, "ab", 1]])[0] == pages


def test_a_pdf_with_bookmarks_gets_its_headings_from_them():
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 72), "Developer's Duties", fontsize=20, fontname="hebo")
    page.insert_text((72, 110), "3.1.1 Work towards the next stable release", fontsize=11, fontname="hebo")
    for i, y in enumerate(range(140, 400, 16)):
        page.insert_text((72, y), f"Line {i} of the body text explains what the maintainer does next.", fontsize=11)
    pdf.set_toc([[1, "Developer's Duties", 1], [2, "Work towards the next stable release", 1]])
    doc = load_bytes(pdf.tobytes(), "duties.pdf")
    pdf.close()
    titles = {doc.text[h.start:h.end].strip("# *\n"): h.level for h in doc.headings}
    sub = next(k for k in titles if "Work towards" in k)
    assert titles[sub] == 3 and doc.meta["outline"]["entries"] == 2, (titles, doc.meta["outline"])
    assert [h.title for h in doc.chunk_heading_path(doc.text.index("Line 3"), len(doc.text))][-1].endswith("release")


def test_a_chapter_label_above_its_heading_joins_it():
    from chunkscope.ingest.pdf.cleanup.tidy import tidy_page

    md = "Last words of chapter one.\n\n**CHAPTER**\n\n### **TWO** **APPLYING TO BECOME A MEMBER**\n\nBody."
    assert tidy_page(md) == ("Last words of chapter one.\n\n### **CHAPTER** **TWO** **APPLYING TO BECOME A MEMBER**"
                         "\n\nBody.")
    out, stats = apply_outline([tidy_page(md)], [[1, "Applying to Become a Member", 1]])
    assert "## **CHAPTER** **TWO** **APPLYING TO BECOME A MEMBER**" in out[0] and stats["relevelled"] == 1
    assert tidy_page("The chapter\n\n## Next") == "The chapter\n\n## Next"  # a sentence ending in "chapter" stays


def test_headings_without_a_bookmark_go_under_the_bookmarked_one_before():
    """Bash's manual: the index letters "### A", "### B" after "### D.1 Index of Shell Builtin
    Commands" replaced it in every heading path; a title page's headings before any bookmark stay."""
    toc = [[1, "Introduction", 2], [1, "Indexes", 3], [2, "Index of Shell Builtin Commands", 3],
           [2, "Index of Variables", 4]]
    pages = ["# **Bash Reference Manual**\n\n### **Chet Ramey, Case Western Reserve University**",
             "## **1 Introduction**\n\nText.",
             "## **Appendix D Indexes**\n\n### **D.1 Index of Shell Builtin Commands**\n\n### **A**\n\nalias 3\n\n"
             "### **B**\n\nbind 5",
             "### **D.2 Index of Variables**\n\n```\n### not a heading\n```"]
    out, stats = apply_outline(pages, toc)
    assert out[0] == pages[0]  # before the first bookmarked heading: as the converter wrote it
    assert "#### **A**" in out[2] and "#### **B**" in out[2] and "### **D.1 Index" in out[2]
    assert out[3] == pages[3] and stats["nested"] == 2  # a bookmarked heading and code are left alone


def test_only_the_title_is_above_the_bookmarks_top_level_a_contents_heading_is_not():
    """GLPK's manuals: the converter writes "# **Contents**" (set as large as a chapter) and a smaller
    title; the bookmarks have the chapters at level 1 ("##") and no "Contents", so every heading path
    began "Contents > Chapter 4 ...". A "#" before the first bookmark that is not the title (the first
    heading, on the first page with text) becomes a sibling of the chapters."""
    toc = [[1, "Introduction", 3], [2, "Linear programming problem", 3], [1, "Statements", 4],
           [2, "Display statement", 4]]
    pages = ["## **Modeling Language GNU MathProg**\n\n### Language Reference",
             "# **Contents**\n\n1 Introduction . . . . . 3\n\n# **Preface**\n\nText.",
             "## **Chapter 1** **Introduction**\n\n### **1.1 Linear programming problem**\n\nText.",
             "# **Chapter 4** **Statements**\n\n**4.8 Display statement**\n\nText."]
    out, stats = apply_outline(pages, toc)
    assert out[0] == pages[0]
    assert out[1] == "## **Contents**\n\n1 Introduction . . . . . 3\n\n## **Preface**\n\nText."
    assert out[3].startswith("## **Chapter 4** **Statements**\n\n### **4.8 Display statement**")
    assert stats["demoted"] == 2
    # a title page's "#" (the first heading, first page with text, layout comments aside) stays the title
    titled = ["<!-- PageHeader: draft -->", "# **GNU MathProg**\n\n# **Contents**"] + pages[2:]
    out, stats = apply_outline(titled, toc)
    assert out[1] == "# **GNU MathProg**\n\n## **Contents**" and stats["demoted"] == 1


def test_two_letter_bookmarks_and_a_title_over_two_lines():
    """gnuplot's manual: the bookmarks "If", "Cd", "Do" (two letters) kept the converter's "##" and
    owned hundreds of headings after them; "## **Part I**" over "# **Gnuplot**" is the bookmark "I Gnuplot"."""
    toc = [[1, "I Gnuplot", 1], [2, "Commands", 2], [3, "If", 2], [3, "Import", 2]]
    pages = ["## **Part I**\n\n# **Gnuplot**\n\nText.",
             "## **Commands**\n\n## **If**\n\nThe if command.\n\n## **Import**\n\nTo do: more."]
    out, stats = apply_outline(pages, toc)
    assert out[0].startswith("## **Part I** **Gnuplot**") and "# **Gnuplot**" not in out[0]
    assert "#### **If**" in out[1] and "#### **Import**" in out[1] and "### **Commands**" in out[1]
    assert apply_outline(["## **2.1 To do**"], [[2, "Do", 1]])[0] == ["## **2.1 To do**"]  # "do" alone only
    eps = "Text.\n\n**Postscript** **(also** **encapsulated** **postscript** ***.eps)**\n\nMore."
    assert "### **Postscript**" in apply_outline([eps], [[2, "Postscript (also encapsulated postscript *.eps)", 1]])[0][0]


def test_a_bold_title_wrapped_over_two_lines_is_its_bookmark():
    """acmart's sample: the bookmarked "8 CCS Concepts and User-Defined Keywords" wraps, so the converter wrote
    a bold paragraph of two lines; only a paragraph of exactly two bold lines is joined."""
    toc = [[1, "8 CCS Concepts and User-Defined Keywords", 1]]
    page = "Text before.\n\n**8** **CCS CONCEPTS AND USER-DEFINED**\n**KEYWORDS**\n\nTwo more categories."
    out, stats = apply_outline([page], toc)
    assert "## **8** **CCS CONCEPTS AND USER-DEFINED** **KEYWORDS**\n" in out[0] and stats["promoted"] == 1
    assert "Two more categories." in out[0] and out[0].count("KEYWORDS") == 1
    three = "Text.\n\n**8** **CCS CONCEPTS AND**\n**USER-DEFINED**\n**KEYWORDS**\n\nMore."
    assert apply_outline([three], toc)[0] == [three]  # a bold paragraph of three lines is not a wrapped title
    # a bookmark that stops at the title's first line (LaTeX2e for authors: "1.1 LaTeX2ε—The new LaTeX release",
    # printed with "(well, for more than 10 years now)" under it): the heading is both lines
    longer = ("Text.\n\n**1.1 LaTeX2ε —The new LaTeX release**\n**(well, for more than 10 years now)**\n\n"
              "The previous version.")
    out, stats = apply_outline([longer], [[2, "1.1 LaTeX2ε—The new LaTeX release", 1]])
    assert "### **1.1 LaTeX2ε —The new LaTeX release**\n\n**(well, for more than 10 years now)**\n\nThe" in out[0], out
    assert stats["promoted"] == 1
    # ... the line under it stays text, whatever it is (an option's code, a definition's statement)
    code = "**2.3 Options**\n`--verbose`\n\nPrints more."
    assert apply_outline([code], [[2, "Options", 1]])[0] == ["### **2.3 Options**\n\n`--verbose`\n\nPrints more."]
    # ... but not a bold line that a bookmark matches followed by a bold line of text that is a paragraph's start
    assert apply_outline(["**Scope** of it\n**all** of it\n\nText."], [[1, "Scope", 1]])[0] == [
        "**Scope** of it\n**all** of it\n\nText."]


def test_a_plain_title_line_is_its_bookmark_when_nothing_else_on_the_page_is():
    """aastex's sample writes its section titles in plain capitals ("1. INTRODUCTION"): 24 bookmarks, 0 headings.
    A plain line alone is looked at only for the bookmarks a heading or bold line did not take; a label
    ending in ":" stays a label."""
    toc = [[1, "Introduction", 1], [2, "Tables", 1], [1, "Examples", 1]]
    page = ("Intro text.\n\n1. INTRODUCTION\n\nLaTeX is a markup language.\n\nTables\n\n**Tables**\n\nRows.\n\n"
            "Examples:\n\nplot 'file'")
    out, stats = apply_outline([page], toc)
    assert "## 1. INTRODUCTION\n" in out[0] and "### **Tables**" in out[0]
    assert "\n\nTables\n\n" in out[0]  # the bold line took the bookmark first: the plain one stays text
    assert "Examples:" in out[0] and "# Examples:" not in out[0]
    assert stats["promoted"] == 2


def test_a_bookmarked_line_only_partly_bold_is_its_heading():
    """Springer's llncs guide sets the class's name in another font inside a bold section title: the converter wrote
    "**2** **Working** **with** **the** llncs **Document** **Class**", no bold line, so the bookmark was lost and
    "2.1 General Information" went under "1 Installation". A line alone that matches a bookmark (markup ignored) is
    its heading even when part of it is not bold; a bullet, a line inside a paragraph, a partly bold line that is no
    bookmark stay as they are."""
    toc = [[1, "1 Installation", 1], [1, "2 Working with the llncs Document Class", 1],
           [2, "2.1 General Information", 1], [2, "Item text", 1], [2, "Inside text", 1]]
    title = "**2** **Working** **with** **the** llncs **Document** **Class**"
    page = (f"**1** **Installation**\n\nCopy the class.\n\n{title}\n\n**2.1** **General** **Information**\n\n"
            "Text.\n\n* **Item** text\n\nBefore\n**Inside** text\n\n**Not** a bookmark")
    out, stats = apply_outline([page], toc)
    lines = out[0].split("\n\n")
    assert lines[:5] == ["## **1** **Installation**", "Copy the class.", f"## {title}",
                         "### **2.1** **General** **Information**", "Text."], lines
    assert lines[5:] == ["* **Item** text", "Before\n**Inside** text", "**Not** a bookmark"]
    assert stats["promoted"] == 3


def test_a_pdf_bookmark_whose_title_is_partly_in_another_font_is_a_heading():
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 60), "1 Installation", fontsize=12, fontname="hebo")
    page.insert_text((72, 90), "Copy the class to a directory that is searched.", fontsize=10)
    x = 72.0
    for text, font in (("2 Working with the ", "hebo"), ("llncs ", "tiro"), ("Document Class", "hebo")):
        page.insert_text((x, 130), text, fontsize=12, fontname=font)
        x += pymupdf.get_text_length(text, fontname=font, fontsize=12)
    page.insert_text((72, 160), "2.1 General Information", fontsize=12, fontname="hebo")
    page.insert_text((72, 190), "The class is an extension of the article class.", fontsize=10)
    pdf.set_toc([[1, "1 Installation", 1], [1, "2 Working with the llncs Document Class", 1],
                 [2, "2.1 General Information", 1]])
    doc = load_bytes(pdf.tobytes(), "guide.pdf")
    pdf.close()
    assert [(h.level, h.title) for h in doc.headings] == [
        (2, "1 Installation"), (2, "2 Working with the llncs Document Class"), (3, "2.1 General Information")]


def test_a_slide_decks_bold_frame_titles_are_headings():
    """beamer writes frame titles in bold at the size of the text: 2 headings for 31 slides, so a chunker cutting
    at headings cut mid-slide. A deck (landscape pages, few words) gets ``##`` for each slide's bold first line;
    a portrait document, or a landscape one full of text, does not."""
    from chunkscope.ingest import load_bytes
    from chunkscope.ingest.outline import is_deck

    titles = ["Why haplotyping matters", "The formal model", "Blocks help", "Hardness results", "Tractable cases",
              "Summary and outlook"]
    pdf = pymupdf.open()
    for k, title in enumerate(titles):
        page = pdf.new_page(width=364, height=273)
        page.insert_text((20, 30), title, fontsize=11, fontname="hebo")
        page.insert_text((20, 70), f"A point about topic {k + 1} that the talk makes.", fontsize=9)
    deck = load_bytes(pdf.tobytes(), "deck.pdf")
    assert deck.meta["outline"]["slide_titles"] == 6
    assert [x for x in deck.text.split("\n") if x.startswith("#")] == [f"## **{t}**" for t in titles]
    assert not is_deck([(595.0, 842.0, 0.0)] * 6, [40] * 6)  # portrait pages
    assert is_deck([(595.0, 842.0, 90.0)] * 6, [40] * 6)  # portrait pages shown turned: landscape
    assert not is_deck([(842.0, 595.0, 0.0)] * 6, [400] * 6)  # a landscape report full of text
    assert not is_deck([(364.0, 273.0, 0.0)] * 4, [40] * 4)  # too few pages to tell


JOURNAL = """# **A Study of Things**

**I.** **INTRODUCTION:**
**WHY THINGS** _matter_

Things are studied here at length, and the study is long.

**A.** **Earlier work**

Many have looked at things before.

_1._ _Surveys_

A survey of the surveys.

**II.** **METHODS**

We measure things.

**III.** **FLOATS:** **FIGURES,** **TABLES,**

**ETC.**

Figures float.

**1.** **The provider shall measure things.**

**Appendix** **A:** **Proofs**

**1.** **A lemma**
"""


def test_numbered_bold_or_italic_paragraphs_are_headings_when_a_pdf_has_no_outline():
    """A journal paper (revtex, elsarticle) sets its section titles in bold or italics at the size of the text and
    has no bookmarks: the converter made no heading of "**I.** **INTRODUCTION**", so Block Integrity, the heading
    paths and the structure chunker saw one flat text. Numbered bold or italic paragraphs become headings, levelled
    by their numbering (Roman numerals first, then each style one under the title before it where it first
    appears); a title wrapped over two lines, or over two paragraphs after a ",", is one heading; a numbered
    sentence is not a title."""
    from chunkscope.ingest.outline import numbered_titles
    from chunkscope.text.markup import alnum

    out, made = numbered_titles([JOURNAL])
    heads = [x for x in out[0].split("\n") if x.startswith("#")]
    assert heads == ["# **A Study of Things**",
                     "## **I.** **INTRODUCTION:** **WHY THINGS** _matter_",
                     "### **A.** **Earlier work**",
                     "#### _1._ _Surveys_",
                     "## **II.** **METHODS**",
                     "## **III.** **FLOATS:** **FIGURES,** **TABLES,** **ETC.**",
                     "## **Appendix** **A:** **Proofs**",
                     "### **1.** **A lemma**"], heads
    assert made == 7
    assert alnum(out[0]) == alnum(JOURNAL)  # only "#" marks and line breaks change: page boxes still map


def test_numbered_titles_need_a_document_without_headings_and_several_titles():
    from chunkscope.ingest.outline import numbered_titles

    few = "**1.** **Introduction**\n\ntext\n\n**2.** **Results**\n\nmore text\n"
    assert numbered_titles([few]) == ([few], 0)  # two are not enough to tell a document's numbering
    three = few + "\n**3.** **Discussion**\n\nthe end\n"
    assert numbered_titles([three])[1] == 3
    assert numbered_titles(["# Title\n\n" + three])[1] == 3  # the converter found the title only
    found = "# Title\n\n## Converter's heading\n\n" + three
    assert numbered_titles([found]) == ([found], 0)  # the converter's headings are the document's
    contents = "".join(f"**{k}** **Chapter title {k}** **{k * 7}**\n\n" for k in range(1, 6))
    assert numbered_titles([contents])[1] == 0  # a table of contents: each entry ends with its page number
    chapters = "".join(f"**CHAPTER {k}**\n\nText of chapter {k}.\n\n" for k in range(1, 4))
    assert numbered_titles([chapters])[1] == 3  # a chapter's number is not a contents entry's page number
    names = "".join(f"_{a}. {b}_\n\nSome text.\n\n" for a, b in (("J", "Smith"), ("A", "Jones"), ("B", "Brown")))
    dates = "".join(f"_{d} December_\n\nWent out.\n\n" for d in (3, 4, 5))
    code = "".join(f"`{k} Foo`\n\nx\n\n" for k in (1, 2, 3))
    for text in (names, dates, code):  # not numbered in order, or no emphasis at all: not titles
        assert numbered_titles([text])[1] == 0, text
    steps = "".join(f"**{k}.** **Step {k}:**\n\n`run step {k}`\n\n" for k in (1, 2, 3))
    out, made = numbered_titles([steps])
    assert made == 3 and "\n\n`run step 1`\n\n" in out[0]  # a title's ":" does not take the code after it
    lowercase = "".join(f"**{k}.** **then** **we** **go**\n\n" for k in range(1, 6))
    assert numbered_titles([lowercase])[1] == 0  # a numbered list in bold is not a list of titles


def test_a_journal_pdf_without_bookmarks_gets_its_numbered_section_titles():
    from chunkscope.ingest import load_bytes

    pdf = pymupdf.open()
    titles = ["I. INTRODUCTION", "A. Earlier work", "II. METHODS", "III. RESULTS"]
    page = pdf.new_page()
    y = 72
    for title in titles:
        page.insert_text((72, y), title, fontsize=10, fontname="hebo")
        page.insert_text((72, y + 24), "Body text of the section, at the same size as its title.", fontsize=10)
        y += 72
    doc = load_bytes(pdf.tobytes(), "paper.pdf")
    assert doc.meta["outline"]["numbered_titles"] == 4
    assert [x for x in doc.text.split("\n") if x.startswith("#")] == [
        "## **I. INTRODUCTION**", "### **A. Earlier work**", "## **II. METHODS**", "## **III. RESULTS**"]


def test_numbered_titles_without_markup_are_titles_when_their_fonts_are_bold_or_italic():
    """revtex's Type 1 fonts (CMBX9, CMTI9) carry no bold or italic flag, so the converter wrote "I. FIRST-LEVEL
    HEADING" and "2. Example citations" as plain text: no heading in the whole paper, and the level-3 titles typed as
    a list. A paragraph without markup is bold or italic when a run of emphasised text on its page (its fonts, see
    ``chunkscope.ingest.pdf.fonts.font_emphasis``) starts with it; plain numbered items and sentences stay text."""
    from chunkscope.ingest.outline import numbered_titles

    page = ("I. INTRODUCTION:\nWHY THINGS MATTER\n\nText.\n\nA. Earlier work\n\nA. Smith and B. Jones\n\n"
            "1. Surveys\n\n1. Apples\n\n2. Pears\n\nII. METHODS, TOOLS,\n\nETC.\n\nWe measure.\n")
    runs = [("bold", "iintroductionwhythingsmatter", (0, 13)), ("bold", "aearlierwork", (0,)),
            ("italic", "1surveys", (0,)), ("italic", "apples", (0,)), ("bold", "iimethodstoolsetc", (0, 14))]
    out, made = numbered_titles([page], [runs])
    assert [x for x in out[0].split("\n") if x.startswith("#")] == [
        "## I. INTRODUCTION: WHY THINGS MATTER", "### A. Earlier work", "#### 1. Surveys",
        "## II. METHODS, TOOLS, ETC."]
    assert made == 4 and "\n\nA. Smith and B. Jones\n\n" in out[0] and "\n\n1. Apples\n\n2. Pears\n\n" in out[0]
    assert numbered_titles([page]) == ([page], 0)  # without the fonts: plain text, not titles


def test_a_revtex_pdf_whose_title_fonts_carry_no_emphasis_flag_gets_its_numbered_titles():
    from chunkscope.ingest import load_bytes

    pdf = pymupdf.open()
    page = pdf.new_page()
    body = "Body text of the section, at the size of its title."
    items = [("tibo", "I. INTRODUCTION"), ("tiro", body), ("tibo", "A. Earlier work"),
             ("tiro", "A. Smith and B. Jones surveyed the things first"), ("tiit", "1. Surveys"),
             ("tiro", "The surveys we read:"), ("tiro", "1. Apples"), ("tiro", "2. Pears"), ("tiro", "3. Plums"),
             ("tibo", "B. Our aim"), ("tiro", body), ("tibo", "II. METHODS"), ("tiro", body)]
    for n, (font, text) in enumerate(items):
        page.insert_text((72, 60 + 30 * n), text, fontsize=10, fontname=font)
    for xref, _, _, base, *_ in page.get_fonts():  # TeX's names, without the bold or italic flag
        if base in ("Times-Bold", "Times-Italic"):
            pdf.xref_set_key(xref, "BaseFont", "/CMBX10" if base == "Times-Bold" else "/CMTI10")
    doc = load_bytes(pdf.tobytes(), "paper.pdf")
    pdf.close()
    assert [(h.level, h.title) for h in doc.headings] == [
        (2, "I. INTRODUCTION"), (3, "A. Earlier work"), (4, "1. Surveys"), (3, "B. Our aim"), (2, "II. METHODS")]
    assert "\n\nA. Smith and B. Jones surveyed the things first\n\n" in doc.text
    assert "\n\n1. Apples\n\n2. Pears\n\n3. Plums\n\n" in doc.text


def test_a_subsection_title_right_under_its_section_title_is_a_title_too():
    """revtex sets "II. THEORY" and "A. The model" in one bold font, one line under the other: one run of bold spans
    on the page, which starts with "II. THEORY" only. A title may start at any of a run's line starts, so "A. The
    model" is a title, and "B. Its limits" after it still runs in order; a title wrapped over two lines is still one
    run. cm-super's and the EC fonts' names (revtex with T1 fontenc: SFBX1000, ECTI1000) say bold and italic too."""
    from chunkscope.ingest import load_bytes
    from chunkscope.ingest.pdf.fonts import font_emphasis

    pdf = pymupdf.open()
    page = pdf.new_page()
    body = "Body text of the section, at the size of its title."
    items = [("tibo", "I. INTRODUCTION"), ("tiro", body), ("tibo", "II. THEORY"), ("tibo", "A. The model"),
             ("tiro", body), ("tibo", "B. Its limits"), ("tiit", "1. Bounds"), ("tiro", body),
             ("tibo", "III. FLOATS: FIGURES, TABLES, VIDEOS,"), ("tibo", "ETC."), ("tiro", body)]
    for n, (font, text) in enumerate(items):
        page.insert_text((72, 60 + 30 * n), text, fontsize=10, fontname=font)
    for xref, _, _, base, *_ in page.get_fonts():  # T1 fontenc's names, without the bold or italic flag
        if base in ("Times-Bold", "Times-Italic"):
            pdf.xref_set_key(xref, "BaseFont", "/SFBX1000" if base == "Times-Bold" else "/ECTI1000")
    data = pdf.tobytes()
    pdf.close()
    with pymupdf.open(stream=data) as again:
        runs = font_emphasis(again[0])
    assert ("bold", "iitheoryathemodel", (0, 8)) in runs and ("italic", "1bounds", (0,)) in runs
    doc = load_bytes(data, "paper.pdf")
    assert [(h.level, h.title) for h in doc.headings] == [
        (2, "I. INTRODUCTION"), (2, "II. THEORY"), (3, "A. The model"), (3, "B. Its limits"), (4, "1. Bounds"),
        (2, "III. FLOATS: FIGURES, TABLES, VIDEOS, ETC.")]


def test_font_names_that_say_bold_or_italic():
    from chunkscope.ingest.pdf.fonts import _BOLD_FONT, _ITALIC_FONT

    bold = ["CMBX10", "CMBX9", "CMB10", "CMBXTI10", "CMSSBX10", "SFBX1000", "SFBX0900", "ECBX1000", "ECRB1000",
            "SFBI1000", "ECSX1000", "NimbusRomNo9L-Medi", "NimbusRomNo9L-MediItal", "Times-Bold", "Arial,Bold",
            "Helvetica-Black", "Lato-Heavy", "Futura-DemiBold"]
    italic = ["CMTI10", "CMSL10", "CMU10", "SFTI1000", "ECTI1000", "SFSL1000", "ECSI1000", "SFUI1000",
              "NimbusRomNo9L-ReguItal", "Times-Italic", "Helvetica-Oblique"]
    plain_fonts = ["CMR10", "CMMI10", "SFRM1000", "ECRM1000", "ECSS1000", "ECTT1000", "Roboto-Medium",
                   "HelveticaNeue-Medium", "Digital-Regular", "SFProText-Regular"]
    assert [f for f in bold if not _BOLD_FONT.search(f)] == []
    assert [f for f in italic if _BOLD_FONT.search(f) or not _ITALIC_FONT.search(f)] == []
    assert [f for f in plain_fonts if _BOLD_FONT.search(f) or _ITALIC_FONT.search(f)] == []


REPORT = """# Everything We Know About Things

## **Contents**

**1** **Introduction** **2**

**2** **Methods** **3**

## **1 Introduction**

**1.1** **Background**

Things were studied before.

**1.2** **Scope** **of** **this** **report**

Only some things.

## **2 Methods**

**2.1** **Measuring** **powers** **of** _x_

We measure.

**2.1.1** **By hand**

```
**2.1.2** **Not a title in code**
```

**2.2** **By** **machine**

**3.1** **A number that is not in section 2**

## **References**

**2.3** **After the references**
"""


def test_numbered_bold_titles_under_the_converters_numbered_headings_are_sub_headings():
    """zlib's CRC notes: the converter made "## **4 Efficient software implementation**" a heading from its font size
    but left the sub-sections "**4.11.2** **Combining** **individual** **CRCs**" bold paragraphs, so every chunk of
    pages 7-22 had that one heading path. A numbered bold title whose number extends the number of the converter's
    heading whose section it is in becomes a heading, one level under it for each number after its own."""
    from chunkscope.ingest.outline import numbered_titles
    from chunkscope.text.markup import alnum

    out, made = numbered_titles([REPORT])
    heads = [x for x in out[0].split("\n") if x.startswith("#")]
    assert heads == ["# Everything We Know About Things",
                     "## **Contents**",
                     "## **1 Introduction**",
                     "### **1.1** **Background**",
                     "### **1.2** **Scope** **of** **this** **report**",
                     "## **2 Methods**",
                     "### **2.1** **Measuring** **powers** **of** _x_",  # an italic symbol in a bold title
                     "#### **2.1.1** **By hand**",
                     "### **2.2** **By** **machine**",
                     "## **References**"], heads
    assert made == 5
    assert "\n**3.1** **A number that is not in section 2**\n" in out[0]  # not a part of the open section
    assert "\n**2.3** **After the references**\n" in out[0]  # "References" closed section 2
    assert "```\n**2.1.2** **Not a title in code**\n```" in out[0]
    assert alnum(out[0]) == alnum(REPORT)  # only "#" marks change


def test_numbered_bold_sentences_under_numbered_headings_stay_paragraphs():
    """A numbered list of bold sentences (a specification's requirements) numbered under its section is not a list of
    sub-section titles; nor are lower-case items, nor fewer than three titles."""
    from chunkscope.ingest.outline import numbered_titles

    rules = ("## **1 Requirements**\n\n**1.1** **The provider shall measure things.**\n\n"
             "**1.2** **The provider shall keep the records.**\n\n**1.3** **Records are kept for ten years.**\n\n"
             "## **2 Steps**\n\n**2.1** **then** **we** **go**\n\n**2.2** **and** **we** **stop**\n\n"
             "**2.3** **and** **we** **rest**\n")
    assert numbered_titles([rules]) == ([rules], 0)
    two = "## **1 Introduction**\n\n**1.1** **Background**\n\ntext\n\n**1.2** **Scope**\n\n## **2 Methods**\n"
    assert numbered_titles([two]) == ([two], 0)  # two are not enough to tell a document's numbering
    unordered = "## **1 Dates**\n\n" + "".join(f"**1.{d}** **December**\n\nWent out.\n\n" for d in (3, 3, 2))
    assert numbered_titles([unordered]) == ([unordered], 0)  # numbers not in order: not sections


def test_a_pdf_whose_converter_found_the_sections_gets_its_bold_sub_sections():
    from chunkscope.ingest import load_bytes

    pdf = pymupdf.open()
    page = pdf.new_page()
    y = 72
    for title in ["1 Introduction", "1.1 Earlier work", "1.2 Our aim", "2 Methods", "2.1 Measuring things",
                  "2.1.1 By hand", "3 Results"]:
        page.insert_text((72, y), title, fontsize=10 if "." in title else 14, fontname="hebo")
        page.insert_text((72, y + 20), "Body text of the section, at the size of the text.", fontsize=10)
        y += 60
    doc = load_bytes(pdf.tobytes(), "report.pdf")
    assert doc.meta["outline"]["numbered_titles"] == 4
    assert [x for x in doc.text.split("\n") if x.startswith("#")] == [
        "# **1 Introduction**", "## **1.1 Earlier work**", "## **1.2 Our aim**", "# **2 Methods**",
        "## **2.1 Measuring things**", "### **2.1.1 By hand**", "# **3 Results**"]
    path = [h.title for h in doc.chunk_heading_path(doc.text.index("By hand") + 20, len(doc.text))]
    assert path[-1].endswith("By hand") and len(path) == 3, path
