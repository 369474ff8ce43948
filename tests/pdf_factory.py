"""PDFs made on the fly with PyMuPDF for the loader tests (no binary fixtures in git)."""

from __future__ import annotations

import pymupdf

CSS = (
    "body {font-family: sans-serif; font-size: 11px;} "
    "table, th, td {border: 1px solid black; border-collapse: collapse; padding: 3px;}"
)


def page_html(k: int) -> str:
    return f"""<h1>Chapter {k}: Data retention</h1>
<p>The controller keeps records for a limited time. It reviews them every year and deletes
what is no longer needed. This paragraph belongs to page {k}.</p>
<h2>Retention periods</h2>
<table><tr><th>Record</th><th>Period</th></tr>
<tr><td>Invoices</td><td>10 years</td></tr><tr><td>Access logs</td><td>90 days</td></tr></table>
<ul><li>First rule of page {k}</li><li>Second rule of page {k}</li></ul>
<p style="font-size:7px">1 Footnote: periods start when the contract ends.</p>"""


def make_pdf(pages: int = 3, blank_pages: tuple[int, ...] = ()) -> bytes:
    """A multi-page PDF with headings, a table, a list, a footnote and a running header/footer.

    ``blank_pages``: 1-based page numbers left without any text (like a scanned page).
    """
    doc = pymupdf.open()
    for k in range(1, pages + 1):
        page = doc.new_page()
        if k in blank_pages:
            page.draw_rect(pymupdf.Rect(100, 100, 300, 300), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))
            continue
        page.insert_text((50, 30), "Northwind Records - Annual retention report", fontsize=8)
        page.insert_text((280, 825), f"Page {k} of {pages}", fontsize=8)
        page.insert_htmlbox(pymupdf.Rect(50, 50, 550, 800), page_html(k), css=CSS)
    data = doc.tobytes()
    doc.close()
    return data


def make_encrypted_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Secret text")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")
    doc.close()
    return data


ZERO_PAGE_PDF = (
    b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
    b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"
)


# --- PDFs with text at known coordinates (page boxes, extraction health) ---

LOREM = ("The archive keeps every signed contract for ten years after it ends. Each year the records "
         "office reviews the list and removes what the law no longer requires. ")


def _save(doc) -> bytes:
    data = doc.tobytes()
    doc.close()
    return data


def make_one_column_pdf() -> bytes:
    """Page 1: a heading line at baseline y=100 (x from 72) and a paragraph box (72, 130, 520, 300)."""
    doc = pymupdf.open()
    page = doc.new_page()  # 612 x 792
    page.insert_text((72, 100), "Retention of signed contracts", fontsize=16)
    page.insert_textbox(pymupdf.Rect(72, 130, 520, 300), LOREM * 2, fontsize=11)
    return _save(doc)


def make_two_column_pdf() -> bytes:
    """Two columns: left text in (50, 80, 290, 700) says LEFT..., right text in (320, 80, 560, 700) says RIGHT..."""
    doc = pymupdf.open()
    page = doc.new_page()
    left = " ".join(f"Leftcolumn sentence number {i} talks about apples." for i in range(12))
    right = " ".join(f"Rightcolumn sentence number {i} talks about pears." for i in range(12))
    page.insert_textbox(pymupdf.Rect(50, 80, 290, 700), left, fontsize=10)
    page.insert_textbox(pymupdf.Rect(320, 80, 560, 700), right, fontsize=10)
    return _save(doc)


def make_table_pdf(ruled: bool = True, caption: str = "") -> bytes:
    """A ruled 3 x 3 table in (72, 200, 472, 290) (30 pt rows, cell text at known places); ``ruled=False``:
    the same cells without lines (what the converter does not detect); ``caption`` above the table."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Quarterly figures of the warehouse", fontsize=14)
    if caption:
        page.insert_text((72, 194), caption, fontsize=10)
    page.insert_textbox(pymupdf.Rect(72, 120, 520, 180), LOREM, fontsize=10)
    x = [72, 205, 338, 472]
    y = [200, 230, 260, 290]
    for xx in x if ruled else ():
        page.draw_line((xx, y[0]), (xx, y[-1]))
    for yy in y if ruled else ():
        page.draw_line((x[0], yy), (x[-1], yy))
    cells = [["Item", "Count", "Place"], ["Bolts", "1200", "Shelf A"], ["Nuts", "800", "Shelf B"]]
    for r, row in enumerate(cells):
        for c, val in enumerate(row):
            page.insert_text((x[c] + 5, y[r] + 20), val, fontsize=10)
    page.insert_textbox(pymupdf.Rect(72, 320, 520, 400), LOREM, fontsize=10)
    return _save(doc)


def make_spanning_pdf() -> bytes:
    """A paragraph that starts at the bottom of page 1 and ends at the top of page 2."""
    doc = pymupdf.open()
    p1 = doc.new_page()
    p1.insert_textbox(pymupdf.Rect(72, 80, 520, 200), LOREM, fontsize=11)
    p1.insert_text((72, 740), "The spanning paragraph begins near the bottom of the first page and", fontsize=11)
    p1.insert_text((72, 755), "continues for one more line before the page ends", fontsize=11)
    p2 = doc.new_page()
    p2.insert_text((72, 60), "and it finishes here on the second page of the document.", fontsize=11)
    p2.insert_textbox(pymupdf.Rect(72, 100, 520, 200), LOREM, fontsize=11)
    return _save(doc)


def make_rotated_pdf() -> bytes:
    """Page 2 rotated by 90 degrees; its text at unrotated baseline (72, 100)."""
    doc = pymupdf.open()
    doc.new_page().insert_textbox(pymupdf.Rect(72, 80, 520, 200), LOREM, fontsize=11)
    p2 = doc.new_page()
    p2.insert_text((72, 100), "Rotated landscape page with a wide table", fontsize=12)
    p2.set_rotation(90)
    return _save(doc)


def make_sideways_table_pdf() -> bytes:
    """Page 2 upright, with a one-line header and a table set sideways (text rotated 90 degrees, as LaTeX's
    landscape tables are): the Markdown converter keeps the header and drops the table."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "An upright page of the report with ordinary body text in it.", fontsize=11)
    p2 = doc.new_page()
    p2.insert_text((72, 50), "Quarterly report, page two", fontsize=9)
    for i in range(12):
        p2.insert_text((100 + 30 * i, 700), f"Row {i} sideways cell alpha beta gamma delta {7 * i}", fontsize=10,
                       rotate=90)
    return _save(doc)


def make_header_painted_last_pdf() -> bytes:
    """Like a browser's "print to PDF": the body first, then a running header at the top of the page
    (y 20-30) painted last, repeating the words of the page's heading (at y 80-100) -- so the
    content stream's order is not the reading order, and the header's words also occur in the body."""
    doc = pymupdf.open()
    page = doc.new_page()  # 612 x 792
    page.insert_text((72, 100), "Moving to a Multithreaded Server", fontsize=16)
    page.insert_textbox(pymupdf.Rect(72, 130, 520, 400),
                        ("The server handles one request at a time. A thread pool lets it handle many. "
                         "The Multithreaded Server keeps a fixed number of threads. ") * 3, fontsize=11)
    page.insert_text((200, 28), "Moving to a Multithreaded Server - The Server Book", fontsize=8)
    return _save(doc)


def make_running_header_pdf(pages: int = 8) -> bytes:
    """Headers that vary with the chapter and carry the page number ("Chapter 2: Setup 5")."""
    doc = pymupdf.open()
    for k in range(1, pages + 1):
        page = doc.new_page()
        chapter = 1 + (k - 1) // 3
        title = ["Setup", "Daily use", "Repairs and spare parts"][(chapter - 1) % 3]
        page.insert_text((72, 40), f"Chapter {chapter}: {title}", fontsize=8)
        page.insert_text((500, 40), str(k + 10), fontsize=8)
        page.insert_textbox(pymupdf.Rect(72, 80, 520, 300), LOREM + f"Body text of page {k} ends on word{k}.",
                            fontsize=11)
    return _save(doc)


def make_alternating_header_pdf(pages: int = 6) -> bytes:
    """A short paper: page 1 has the title; even pages the header "Conference 2026, Lisbon, Portugal Smith et
    al.", odd pages "A Study of Tests Conference 2026, Lisbon, Portugal" (twice in six pages); pages 2 and 4 both
    start a section "Results of the second study" at the top, without a header above it on page 4."""
    doc = pymupdf.open()
    for k in range(1, pages + 1):
        page = doc.new_page()
        if k == 1:
            page.insert_text((72, 60), "A Study of Tests", fontsize=16)
        elif k == 4:
            page.insert_text((72, 40), "Results of the second study", fontsize=8)
        else:
            page.insert_text((72, 40), "Conference 2026, Lisbon, Portugal Smith et al." if k % 2 == 0 else
                             "A Study of Tests Conference 2026, Lisbon, Portugal", fontsize=8)
        if k == 2:
            page.insert_text((72, 62), "Results of the second study", fontsize=8)
        page.insert_textbox(pymupdf.Rect(72, 80, 520, 300), LOREM + f"Body text of page {k} ends on word{k}.",
                            fontsize=11)
    return _save(doc)


def make_bad_pages_pdf() -> bytes:
    """Page 1 normal, page 2 image-only (a picture, no text), page 3 thousands of tiny fragments."""
    doc = pymupdf.open()
    doc.new_page().insert_textbox(pymupdf.Rect(72, 80, 520, 300), LOREM * 2, fontsize=11)
    p2 = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 40), False)
    pix.clear_with(200)
    p2.insert_image(pymupdf.Rect(20, 20, 592, 772), pixmap=pix)
    p3 = doc.new_page()
    for i in range(3200):
        p3.insert_text((20 + (i % 80) * 7, 30 + (i // 80) * 18), "x", fontsize=4)
    return _save(doc)


def make_framed_pdf(pages: int = 2) -> bytes:
    """Text on a page-sized grey frame with shaded boxes in it (an HTML page printed with a
    background, like Chromium's print of a Sphinx page): pymupdf4llm takes the text area for a
    picture unless told to ignore vector graphics."""
    doc = pymupdf.open()
    for k in range(1, pages + 1):
        page = doc.new_page()
        page.draw_rect(pymupdf.Rect(28, 28, 584, 764), color=None, fill=(0.93, 0.93, 0.93))
        page.draw_rect(pymupdf.Rect(28, 28, 583, 763), color=None, fill=(1, 1, 1))
        page.draw_rect(pymupdf.Rect(50, 280, 560, 306), color=None, fill=(0.85, 0.87, 0.89))
        page.draw_rect(pymupdf.Rect(120, 600, 220, 612), color=None, fill=(0.92, 0.94, 0.95))
        page.draw_rect(pymupdf.Rect(60, 640, 300, 656), color=None, fill=(0.92, 0.94, 0.95))
        page.insert_text((60, 100), f"Packaging policy, part {'ABCDEFGH'[k - 1]}", fontsize=14)
        page.insert_textbox(pymupdf.Rect(60, 120, 550, 270), LOREM + f"Page {k} ends its first part.", fontsize=11)
        page.insert_text((60, 298), "Section on interpreters", fontsize=12)
        page.insert_textbox(pymupdf.Rect(60, 320, 550, 560), LOREM * 2, fontsize=11)
    return _save(doc)


def make_underscore_rules_pdf() -> bytes:
    """LaTeX's ``\\_`` (OT1): identifiers whose underscores are short rules on the baseline between the words
    ("glp", rule, "create", rule, "graph"; in the body at y=140 and in a heading at y=100); and a heading,
    "Legacy routines", with a real line drawn through its middle (struck through)."""
    doc = pymupdf.open()
    page = doc.new_page()

    def identifier(x: float, y: float, parts: list[str], size: float) -> float:
        rule = 0.33 * size
        for n, part in enumerate(parts):
            page.insert_text((x, y), part, fontsize=size)
            x += pymupdf.get_text_length(part, fontsize=size)
            if n + 1 < len(parts):
                page.draw_line((x, y - 0.2), (x + rule, y - 0.2), width=0.4)
                x += rule
        return x

    x = identifier(72, 100, ["1.2.1 glp", "create", "graph"], 16)
    page.insert_text((x + 4, 100), "creates a graph", fontsize=16)
    x = identifier(72, 140, ["Call glp", "create", "graph"], 10)
    page.insert_text((x + 3, 140), "first, then add vertices.", fontsize=10)
    page.insert_textbox(pymupdf.Rect(72, 150, 520, 300), LOREM * 3, fontsize=10)
    page.insert_text((72, 330), "Legacy routines", fontsize=16)
    width = pymupdf.get_text_length("Legacy routines", fontsize=16)
    page.draw_line((72, 330 - 0.3 * 16), (72 + width, 330 - 0.3 * 16), width=1)
    page.insert_textbox(pymupdf.Rect(72, 345, 520, 500), LOREM * 3, fontsize=10)
    return _save(doc)


def make_undecodable_pdf() -> bytes:
    """A page whose font maps some glyphs to no character (the converter writes U+FFFD for them, as for a
    Persian thesis whose fonts lack the Unicode map of a few letters)."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_htmlbox(pymupdf.Rect(50, 50, 550, 800),
                        "<p>" + (LOREM + "The Stra\ufffde office keeps the Gr\ufffd\ufffde list. ") * 4 + "</p>")
    page = doc.new_page()  # one stray glyph only: not worth a warning
    page.insert_htmlbox(pymupdf.Rect(50, 50, 550, 800), "<p>" + LOREM * 3 + "A stray \ufffd glyph.</p>")
    return _save(doc)


def make_margin_notes_pdf(pages: int = 2) -> bytes:
    """Pages of prose with LaTeX-style margin notes ("New feature" over a date) right of the text column, beside
    the first line of two paragraphs, and a contents-like line whose page number sits far right (not a note)."""
    doc = pymupdf.open()
    prose = ("The class defines the text width and the height of the page and the commands that",
             "every document needs, so that a writer can start with a small file and then add the",
             "packages that the work asks for, one after the other, as the chapters grow longer.")
    for k in range(1, pages + 1):
        page = doc.new_page()
        y = 80
        for para in range(2):
            for n, line in enumerate(prose):
                page.insert_text((72, y), line, fontsize=10)
                if n == 0:  # the note beside the paragraph's first two lines
                    page.insert_text((470, y), "New feature", fontsize=8)
                    page.insert_text((470, y + 12), f"199{k}/12/0{para + 1}", fontsize=8)
                y += 12
            y += 12
        page.insert_text((72, y + 20), "Contents of the next part of this short guide", fontsize=10)
        page.insert_text((500, y + 20), f"{k + 10}", fontsize=10)
    return _save(doc)
