"""Every bad input gives an IngestError with one specific line (never a traceback)."""

from __future__ import annotations

import io
import os
import zipfile

import pytest
from pdf_factory import ZERO_PAGE_PDF, make_encrypted_pdf, make_pdf

from chunkscope.ingest import (
    DEFAULT_MAX_BYTES,
    FORMAT_SHORT,
    FORMAT_WORDS,
    FORMATS_IN_BRIEF,
    SUPPORTED_EXTENSIONS,
    IngestError,
    load_bytes,
    load_document,
    resolve_max_bytes,
)


def one_line_error(fn, *args, **kw) -> str:
    with pytest.raises(IngestError) as info:
        fn(*args, **kw)
    msg = str(info.value)
    assert msg and "\n" not in msg and "Traceback" not in msg
    return msg


@pytest.mark.parametrize("filename", ["empty.pdf", "empty.md", "empty.txt", "empty.json"])
def test_empty_file(tmp_path, filename):
    path = tmp_path / filename
    path.write_bytes(b"")
    assert "is empty" in one_line_error(load_document, path)


def test_whitespace_only():
    assert "no text" in one_line_error(load_bytes, b" \n\n\t \n", "blank.txt")


def test_binary_junk():
    junk = os.urandom(4096) + b"\x00\x01\x02"
    assert "binary" in one_line_error(load_bytes, junk, "junk.txt")
    assert "binary" in one_line_error(load_bytes, junk, "junk.md")
    assert "not a PDF" in one_line_error(load_bytes, junk, "junk.pdf")
    assert "not UTF-8" in one_line_error(load_bytes, bytes(range(128, 256)) * 8, "high.txt")
    assert "binary" in one_line_error(load_bytes, b"abc\x01\x02\x03\x04\x05\x06" * 50, "ctl.txt")


def test_utf16_without_a_byte_order_mark_is_named():
    """UTF-16 text without a BOM was refused as 'binary data (NUL bytes)': it says what it is and what to do."""
    text = "Grüße aus Köln.\nA second line of ordinary text.\n" * 20
    for enc in ("utf-16-le", "utf-16-be"):
        msg = one_line_error(load_bytes, text.encode(enc), "notes.txt")
        assert "UTF-16 text without a byte-order mark" in msg and "save it as UTF-8" in msg, msg
    assert load_bytes(text.encode("utf-16"), "bom.txt").text == text  # with a BOM it loads
    assert "binary data (NUL bytes)" in one_line_error(load_bytes, b"PK\x03\x04\x00\x00\x08\x00" * 40, "z.txt")


def test_truncated_pdf():
    data = make_pdf(pages=2)
    assert "truncated" in one_line_error(load_bytes, data[: len(data) // 2], "cut.pdf")
    assert "truncated" in one_line_error(load_bytes, data[:-40], "cut2.pdf")


def test_damaged_pdf():
    msg = one_line_error(load_bytes, b"%PDF-1.7\n" + b"garbage " * 200 + b"\n%%EOF\n", "bad.pdf")
    assert "damaged" in msg or "no pages" in msg


def test_pdf_cut_off_before_its_page_tree():
    # the first part of a PDF given an end-of-file marker: it opens (repaired) with no pages, and the user is told it
    # is damaged, not that the document has none (a PDF whose page tree is there and empty has none: below)
    cut = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n%%EOF\n"
    msg = one_line_error(load_bytes, cut, "cut.pdf")
    assert "damaged or cut-off" in msg and "no pages" not in msg, msg


def test_encrypted_pdf():
    assert "encrypted" in one_line_error(load_bytes, make_encrypted_pdf(), "secret.pdf")


def test_zero_page_pdf():
    assert "no pages" in one_line_error(load_bytes, ZERO_PAGE_PDF, "zero.pdf")


@pytest.mark.parametrize("filename", ["sheet.xlsx", "image.png", "README", "data.csv"])
def test_unsupported_extension(tmp_path, filename):
    path = tmp_path / filename
    path.write_bytes(b"some content")
    msg = one_line_error(load_document, path)
    assert "unsupported file type" in msg and ".pdf" in msg
    assert "unsupported file type" in one_line_error(load_bytes, b"x", filename)


def test_every_supported_format_is_named_in_words_and_in_the_help_texts():
    import argparse

    from chunkscope.cli import build_parser

    formats = set(SUPPORTED_EXTENSIONS.values())
    assert set(FORMAT_WORDS) == formats and set(FORMAT_SHORT) == formats
    subs = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    file_help = next(a.help for a in subs["ingest"]._actions if a.dest == "file")
    assert FORMATS_IN_BRIEF in file_help and "Word (.docx)" in FORMATS_IN_BRIEF  # what the CLI's help says
    assert FORMATS_IN_BRIEF in subs["corpus"].description


def test_missing_file_and_directory(tmp_path):
    assert "no such file" in one_line_error(load_document, tmp_path / "nope.pdf")
    assert "directory" in one_line_error(load_document, tmp_path)


def test_size_limit_argument_env_and_default(tmp_path, monkeypatch):
    path = tmp_path / "big.txt"
    path.write_bytes(b"word " * 1000)  # 5000 bytes
    msg = one_line_error(load_document, path, max_bytes=1000)
    assert "over the" in msg and "limit" in msg and "CHUNKSCOPE_MAX_BYTES" in msg
    assert "over the" in one_line_error(load_bytes, path.read_bytes(), "big.txt", 1000)
    monkeypatch.setenv("CHUNKSCOPE_MAX_BYTES", "2000")
    assert resolve_max_bytes() == 2000
    assert "over the" in one_line_error(load_document, path)
    assert load_document(path, max_bytes=10_000).text.startswith("word")  # argument wins
    monkeypatch.setenv("CHUNKSCOPE_MAX_BYTES", "lots")
    assert "CHUNKSCOPE_MAX_BYTES" in one_line_error(load_document, path)
    monkeypatch.delenv("CHUNKSCOPE_MAX_BYTES")
    assert resolve_max_bytes() == DEFAULT_MAX_BYTES == 50 * 1024 * 1024


def test_bad_json(tmp_path):
    assert "invalid JSON" in one_line_error(load_bytes, b"{not json", "x.json")
    # a truncated file: json's message ends with "at"; where follows it once ("starting at: line 2 column 17")
    cut = b'{"full_text": "abc",\n "pages": {"1": "ab'
    assert one_line_error(load_bytes, cut, "cut.json") == (
        "cut.json: invalid JSON (Unterminated string starting at: line 2 column 17)")
    from chunkscope.ingest.reference import ReferenceFormatError, load_reference

    (tmp_path / "cut.json").write_bytes(cut)
    with pytest.raises(ReferenceFormatError, match=r"^cut\.json: invalid JSON \(Unterminated string starting at: line 2 "):
        load_reference(tmp_path / "cut.json")
    assert "neither" in one_line_error(load_bytes, b'{"a": 1}', "x.json")
    msg = one_line_error(load_bytes, b'{"full_text": "abc", "split_points": [5]}', "ref.json")
    assert "split_points" in msg


@pytest.mark.parametrize(("filename", "app", "main_part"), [("minutes.docx", "Word", "word/document.xml"),
                                                           ("deck.pptx", "PowerPoint", "ppt/presentation.xml")])
def test_office_files_that_are_not_their_package_are_refused_in_one_line(filename, app, main_part):
    ext = filename[filename.index("."):]
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600  # an old binary file, or a password-protected one
    assert f"old {app} 97–2003 file or one protected with a password" in one_line_error(load_bytes, ole, filename)
    assert f"is not a {app} {ext} file (not a zip package" in one_line_error(load_bytes, b"PK\x03\x04 junk", filename)
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("content.xml", "<office:document/>")
    assert f"without {main_part}: not a {app} document" in one_line_error(load_bytes, other.getvalue(), filename)
