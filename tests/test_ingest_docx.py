"""Word (.docx) files: read through mammoth and the HTML path into Markdown, with pages where Word recorded them."""

from __future__ import annotations

import io
import zipfile

import pytest
from docx_factory import make_docx

from chunkscope.chunkers import registry
from chunkscope.ingest import SUPPORTED_EXTENSIONS, IngestError, load_bytes, load_document
from chunkscope.ingest.office import free_mark

POLICY = [
    ("Title", "Retention policy"),
    ("Heading1", "Scope"),
    ("Normal", "This policy covers all records.{fn1} It applies to staff and contractors.{comment}"),
    ("Heading2", "Rules"),
    ("ol", ["Keep invoices for seven years.", "Delete drafts after a year."]),
    ("ul", ["Legal holds override both (see {link}, {tiplink})."]),
    ("table", [["Record", "Keep"], ["Invoice", "7 years"], ["Draft", "1 year"]]),
    ("Caption", "Figure 1: the review flow{img}"),
    ("SourceCode", "retain(invoice, years=7)"),
    ("SourceCode", "if draft:{nl}    delete(draft)"),
]


def error(data: bytes, filename: str = "policy.docx", **kw) -> str:
    with pytest.raises(IngestError) as info:
        load_bytes(data, filename, **kw)
    msg = str(info.value)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


def test_a_word_document_reads_as_markdown_with_its_structure():
    doc = load_bytes(make_docx(POLICY, footnotes={1: "Records include email."}, comment="Check with legal"),
                     "policy.docx")
    assert doc.source_format == "docx" and doc.language == "en" and doc.meta["converted_from"] == "docx"
    text = doc.text
    assert [(h.level, h.title) for h in doc.headings] == [(1, "Retention policy"), (1, "Scope"), (2, "Rules")]
    assert "1. Keep invoices for seven years.\n2. Delete drafts after a year." in text
    assert "- Legal holds override both (see [the guide](guide.html#Top), [the site](https://example.org/a))." in text
    # a Word table has no header row marked: its first row is the header, every cell's paragraph its text
    assert "| Record | Keep |\n| --- | --- |\n| Invoice | 7 years |\n| Draft | 1 year |" in text
    # consecutive code paragraphs are one block; a line break in code is the code's, not a Markdown break
    assert "```\nretain(invoice, years=7)\nif draft:\n    delete(draft)\n```" in text
    assert "records.[1] It applies" in text and text.rstrip().endswith("1. Records include email.")  # no "↑"
    assert "Check with legal" not in text  # a comment is not the document's text
    assert "Figure 1: the review flow" in text and "data:image" not in text and "![" not in text
    kinds = {b.kind for b in doc.blocks}
    assert {"table", "list", "code"} <= kinds
    assert not doc.pages and doc.warnings == []
    skipped = registry.run_chunker(doc, "page", {})  # nothing says where pages ended
    assert skipped.status == "skipped" and "Word recorded its page ends" in skipped.reason


def test_custom_heading_styles_are_headings_by_their_outline_level():
    styles = {"ReportHeading": ("Report Heading", "Heading2", None),  # based on heading 2: level 2
              "Chapter": ("Chapter", None, 0),                         # outline level 0: level 1
              "DeepNote": ("Deep Note", "ReportHeading", None),       # inherits level 2 through its base
              "Tiny": ("Tiny", None, 7),                               # level 8: the deepest Markdown heading
              "Plain": ("Plain", None, 9),                             # outline level 9 is body text
              "Bobs-Heading": ("Bob's Heading", None, 1),              # an id with "-", a name with a quote
              "Odd": ("Odd", None, "²")}                               # not a level: body text, no error
    body = [("Chapter", "Overview"), ("ReportHeading", "Findings"), ("DeepNote", "Detail"), ("Tiny", "Fine print"),
            ("Plain", "Body text in its own style."), ("Normal", "Ordinary text."), ("Bobs-Heading", "Appendix"),
            ("Odd", "Odd text.")]
    doc = load_bytes(make_docx(body, styles=styles), "custom.docx")
    assert [(h.level, h.title) for h in doc.headings] == [(1, "Overview"), (2, "Findings"), (2, "Detail"),
                                                          (6, "Fine print"), (2, "Appendix")]
    assert "\n\nBody text in its own style.\n\nOrdinary text." in doc.text


def test_pages_end_where_word_last_ended_them():
    body = [
        ("Heading1", "One"),
        ("Normal", "The first page ends inside this paragraph{page} and the paragraph goes on."),
        ("Heading1", "{page}Two"),  # the same break recorded twice (a paragraph's end, the next one's start)
        ("Normal", "Page two text."),
        ("Normal", "{br}"),  # a paragraph holding only a forced page break
        ("Heading1", "Three"),
        ("Normal", "Page three text."),
        ("SourceCode", "code{page}line"),  # a break inside code is no marker inside the fence
        ("Heading1", "{before}Four"),  # "page break before"
        ("Normal", "Page four text."),
    ]
    doc = load_bytes(make_docx(body), "paged.docx")
    text = doc.text
    assert text.count("<!-- PageBreak -->") == 3 and "\ue000" not in text
    assert [text[p.start:p.end].split("\n")[0] for p in doc.pages] == ["# One", "# Two", "# Three", "# Four"]
    assert "paragraph goes on.\n\n<!-- PageBreak -->\n\n# Two" in text
    assert "```\ncodeline\n```" in text
    res = registry.run_chunker(doc, "page", {})
    assert res.status == "ok" and len(res.spans) == 4


def test_docx_is_a_supported_type_and_loads_from_disk(tmp_path):
    assert SUPPORTED_EXTENSIONS[".docx"] == "docx"
    path = tmp_path / "Minutes.docx"
    path.write_bytes(make_docx([("Heading1", "Minutes"), ("Normal", "The board met on Monday and agreed the plan.")]))
    doc = load_document(path)
    assert doc.name == "Minutes" and doc.text.startswith("# Minutes\n\nThe board met")


def test_word_files_without_text_or_with_broken_xml_are_refused_in_one_line():
    # (an old or protected file, a zip that is not a package: test_ingest_errors, for Word and PowerPoint alike)
    assert "has no text" in error(make_docx([("Normal", "{img}")]))
    broken = io.BytesIO()
    with zipfile.ZipFile(broken, "w") as z:
        z.writestr("word/document.xml", "<w:document><unclosed>")
    assert "could not be read as a Word document" in error(broken.getvalue())


def test_an_old_doc_file_is_told_how_to_convert():
    msg = error(b"\xd0\xcf\x11\xe0 junk", "minutes.doc")
    assert "unsupported file type '.doc' (a Word 97–2003 file: save it as .docx or PDF)" in msg


def test_a_package_that_unpacks_past_the_caps_is_refused_before_reading():
    paragraph = ("Normal", "word " * 2000)
    data = make_docx([paragraph] * 40)  # about 400 KB of XML that deflates to a few KB
    limit = 50_000
    assert len(data) < limit
    assert "its text parts unpack to 3" in error(data, max_bytes=limit)  # the XML: at most the size limit
    assert load_bytes(data, "policy.docx").text.count("word") == 80_000  # under the default limit it is read
    # any part counts, whatever its name (a renamed main part, an embedded style map, XML under media/: anything
    # that deflates as text does)
    for name in ("word/document2.dat", "mammoth/style-map", "word/media/document.xml", "word/media/main.bin"):
        bomb = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(make_docx([("Normal", "Short.")]))) as src, \
                zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
            for info in src.infolist():
                z.writestr(info.filename, src.read(info))
            z.writestr(name, b"p => p\n" * 40_000)
        assert "its text parts unpack to" in error(bomb.getvalue(), max_bytes=limit)


def test_a_broken_zip_entry_is_one_line_with_or_without_page_breaks():
    for body in ([("Normal", "Some text.")], [("Normal", "Some{page} text.")]):
        good = make_docx(body)
        at = good.index(b"word/document.xml") + len("word/document.xml") + 40  # inside the entry's data
        bad = good[:at] + bytes([good[at] ^ 0xFF]) + good[at + 1:]
        assert "could not be read as a Word document" in error(bad)


def test_typed_markup_and_private_use_characters_stay_text():
    body = [("Normal", "Intro."), ("Normal", "{page}# not a heading"), ("Normal", "{page}1. not a list"),
            ("Normal", "An icon \ue000 in the text, and \ue001 too."), ("Normal", "{page}Last page.")]
    doc = load_bytes(make_docx(body), "typed.docx")
    assert doc.headings == [] and "\\# not a heading" in doc.text and "\\1. not a list" in doc.text
    assert "An icon \ue000 in the text, and \ue001 too." in doc.text and len(doc.pages) == 4
    # the mark is a private-use character the file does not use, however it writes it
    assert free_mark("&#x0E000; &#57345; \ue002 &#Xe003;") == "\ue004"
    # a private-use character in a footnote is text too, not the page mark
    noted = load_bytes(make_docx([("Normal", "Intro.{fn1}"), ("Normal", "{page}Next page.")],
                                 footnotes={1: "See \ue000 icon."}), "noted.docx")
    assert len(noted.pages) == 2 and "See \ue000 icon." in noted.text
    plain = load_bytes(make_docx([("Normal", "No breaks, an icon \ue000 here.")]), "icon.docx")
    assert plain.pages == [] and "icon \ue000 here" in plain.text


def test_word_table_cells_keep_paragraphs_and_lists_as_lines():
    rows = [["Name", "Notes"], ["Alice", "line one||line two"], ["Bob", "* first||* second"]]
    doc = load_bytes(make_docx([("table", rows)]), "t.docx")
    assert "| Name | Notes |\n| --- | --- |\n| Alice | line one line two |\n| Bob | • first • second |" in doc.text
