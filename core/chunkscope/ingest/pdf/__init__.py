"""PDF -> Markdown Document with PyMuPDF and pymupdf4llm.

Each page is converted to Markdown (headings from font sizes, tables as Markdown pipe
tables, lists), tidied (trailing spaces, runs of blank lines) and closed with
``<!-- PageBreak -->`` like the paper's parsed corpus; page k's span is exactly where
its Markdown sits in ``Document.text``. Blocks are built page by page, then a block that goes on
over a page break (a sentence, a list, a code listing) is joined (``chunkscope.text.continuation.join_continued``).

Refused with an ``IngestError``: not a PDF, damaged beyond repair, truncated (no end
marker and repaired), encrypted with a password, no pages, no extractable text at all.
Pages without text (scans, images) give one warning: "page 3 has no extractable text", "pages 8, 12-13
have no extractable text (blank, or scanned / images only)".

The package reads top-down as the stages it runs: ``open`` (open or refuse the file), ``convert`` (each page's
Markdown from pymupdf4llm), ``recover`` (text the converter lost), ``cleanup/`` (one module per kind of damage:
``tidy``, ``latex``, ``line_numbers``, ``margins``, ``running_lines``), ``fonts`` (emphasis for numbered titles),
and ``load`` (``load_pdf_bytes``), which runs them in order (``load.PASSES``).
"""
