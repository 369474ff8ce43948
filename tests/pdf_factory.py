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
