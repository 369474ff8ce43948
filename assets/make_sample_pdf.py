"""Generate ``assets/sample_report.pdf`` from ``sample_technical.md`` with PyMuPDF (Story).

Run: ``.venv/bin/python assets/make_sample_pdf.py [OUT.pdf] [--repeat N]``. ``--repeat`` makes
a longer PDF (used to measure ingest time on a 20+ page document). The Markdown -> HTML
conversion here is deliberately tiny: headings, paragraphs, lists, pipe tables, code.
"""

from __future__ import annotations

import argparse
import html
import re
from pathlib import Path

import pymupdf

HERE = Path(__file__).resolve().parent
CSS = """
body {font-family: sans-serif; font-size: 10pt; line-height: 1.3;}
h1 {font-size: 18pt;} h2 {font-size: 14pt;} h3 {font-size: 12pt;}
table {border-collapse: collapse;} th, td {border: 1px solid #444; padding: 2px 4px; font-size: 9pt;}
pre {font-family: monospace; font-size: 8pt;}
"""


_ITEM = re.compile(r"^(- |\d+\. )")


def _inline(s: str) -> str:
    s = html.escape(s)
    s = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", s)
    s = re.sub(r"`(.+?)`", r"<code>\1</code>", s)
    return re.sub(r"(?<!\w)\*(.+?)\*(?!\w)", r"<i>\1</i>", s)


def markdown_to_html(md: str) -> str:
    out: list[str] = []
    blocks = re.split(r"\n{2,}", md.strip())
    for b in blocks:
        lines = b.splitlines()
        if b.startswith("```"):
            code = "\n".join(lines[1:-1] if lines[-1].startswith("```") else lines[1:])
            out.append(f"<pre>{html.escape(code)}</pre>")
        elif m := re.match(r"(#+)\s+(.*)", b):
            k = min(len(m.group(1)), 6)
            out.append(f"<h{k}>{_inline(m.group(2))}</h{k}>")
        elif lines[0].startswith("|"):
            rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines if not re.match(r"^\|[-| :]+\|$", ln)]
            head = "".join(f"<th>{_inline(c)}</th>" for c in rows[0])
            body = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
            out.append(f"<table><tr>{head}</tr>{body}</table>")
        elif re.match(r"^(- |\d+\. )", lines[0]):
            tag = "ol" if lines[0][0].isdigit() else "ul"
            items = "".join("<li>" + _inline(_ITEM.sub("", ln)) + "</li>" for ln in lines)
            out.append(f"<{tag}>{items}</{tag}>")
        else:
            out.append(f"<p>{_inline(' '.join(lines))}</p>")
    return "\n".join(out)


def write_pdf(md: str, out: Path) -> int:
    story = pymupdf.Story(html=markdown_to_html(md), user_css=CSS)
    mediabox = pymupdf.paper_rect("a4")
    where = mediabox + (56, 56, -56, -56)
    writer = pymupdf.DocumentWriter(str(out))
    pages, more = 0, True
    while more:
        device = writer.begin_page(mediabox)
        more, _ = story.place(where)
        story.draw(device)
        writer.end_page()
        pages += 1
    writer.close()
    doc = pymupdf.open(str(out))  # keep the file small: subset the embedded fonts
    doc.subset_fonts()
    doc.ez_save(str(out) + ".tmp")
    doc.close()
    Path(str(out) + ".tmp").replace(out)
    return pages


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=str(HERE / "sample_report.pdf"))
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    md = (HERE / "sample_technical.md").read_text(encoding="utf-8")
    if args.repeat > 1:
        parts = [md] + [re.sub(r"^# .*", f"# Part {k}: appendix copy", md, count=1) for k in range(2, args.repeat + 1)]
        md = "\n\n".join(parts)
    n = write_pdf(md, Path(args.out))
    print(f"wrote {args.out}: {n} pages")


if __name__ == "__main__":
    main()
