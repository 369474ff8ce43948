"""Small Word (.docx) packages written from a list of paragraphs, for the loader's tests.

Each item of ``body`` is one of:
    ("Heading1", "text")          a paragraph with that style id (``STYLES`` or ``styles=``; "Normal": body text)
    ("ol" | "ul", ["a", "b"])      a numbered or bulleted list (Word numbering, level 0)
    ("table", [["h1", "h2"], ["a", "b"]])   a cell "a||b" holds two paragraphs, "* a||* b" a list
Inside a paragraph's text, ``{page}`` is where Word last ended a page (``<w:lastRenderedPageBreak/>``), ``{br}`` a
page break the author forced, ``{nl}`` a line break, a leading ``{before}`` "page break before", ``{fn1}`` a reference to footnote 1 (``footnotes={1: "text"}``), ``{comment}`` a
comment's anchor (``comment="text"``), ``{img}`` an inline image, ``{link}`` a link field to "guide.html", place "Top", ``{tiplink}`` one with a screen tip.
"""

from __future__ import annotations

import io
import re
import zipfile
from xml.sax.saxutils import escape

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
STYLES = {"Normal": "Normal", "Title": "Title", "Heading1": "heading 1", "Heading2": "heading 2",
          "SourceCode": "Source Code", "Caption": "caption"}
_PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415478"
                     "9c63f8cfc000000301010018dd8db00000000049454e44ae426082")
_DRAWING = ('<w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing">'
            '<wp:extent cx="9525" cy="9525"/><wp:docPr id="1" name="Picture 1" descr="a chart"/>'
            '<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
            '<a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">'
            '<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture">'
            '<pic:nvPicPr><pic:cNvPr id="0" name="x.png"/><pic:cNvPicPr/></pic:nvPicPr>'
            '<pic:blipFill><a:blip r:embed="rIdImg"/></pic:blipFill><pic:spPr/></pic:pic>'
            '</a:graphicData></a:graphic></wp:inline></w:drawing>')
_TOKEN = re.compile(r"\{(page|br|nl|fn\d+|comment|img|link|tiplink)\}")


def _runs(text: str) -> str:
    out = []
    for piece in _TOKEN.split(text):
        if piece == "page":
            out.append("<w:r><w:lastRenderedPageBreak/></w:r>")
        elif piece == "nl":
            out.append("<w:r><w:br/></w:r>")
        elif piece == "br":
            out.append('<w:r><w:br w:type="page"/></w:r>')
        elif piece.startswith("fn") and piece[2:].isdigit():
            out.append(f'<w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:footnoteReference w:id="{piece[2:]}"/></w:r>')
        elif piece == "comment":
            out.append('<w:commentRangeStart w:id="0"/><w:r><w:commentReference w:id="0"/></w:r><w:commentRangeEnd w:id="0"/>')
        elif piece == "link":  # a HYPERLINK field to a place in another file, as LibreOffice writes it
            out.append('<w:r><w:fldChar w:fldCharType="begin"/></w:r>'
                       '<w:r><w:instrText xml:space="preserve"> HYPERLINK "guide.html" \\l "Top" </w:instrText></w:r>'
                       '<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>the guide</w:t></w:r>'
                       '<w:r><w:fldChar w:fldCharType="end"/></w:r>')
        elif piece == "tiplink":  # a link field with a screen tip and a target frame
            out.append('<w:r><w:fldChar w:fldCharType="begin"/></w:r>'
                       '<w:r><w:instrText xml:space="preserve"> HYPERLINK "https://example.org/a" \\o "a tip" '
                       '\\t "_blank" </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>'
                       '<w:r><w:t>the site</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>')
        elif piece == "img":
            out.append(f"<w:r>{_DRAWING}</w:r>")
        elif piece:
            out.append(f'<w:r><w:t xml:space="preserve">{escape(piece)}</w:t></w:r>')
    return "".join(out)


def _para(style: str, text: str, num: int | None = None) -> str:
    props = f'<w:pStyle w:val="{style}"/>'
    if text.startswith("{before}"):  # the paragraph is set to start a page
        props, text = props + "<w:pageBreakBefore/>", text[len("{before}"):]
    if num is not None:
        props += f'<w:numPr><w:ilvl w:val="0"/><w:numId w:val="{num}"/></w:numPr>'
    return f"<w:p><w:pPr>{props}</w:pPr>{_runs(text)}</w:p>"


def _cell(text: str) -> str:
    """A table cell: "a||b" is two paragraphs, "* a||* b" a bulleted list."""
    return "".join(_para("Normal", t[2:], num=2) if t.startswith("* ") else _para("Normal", t) for t in text.split("||"))


def _body(items) -> str:
    out = []
    for kind, content in items:
        if kind in ("ol", "ul"):
            out.extend(_para("Normal", t, num=1 if kind == "ol" else 2) for t in content)
        elif kind == "table":
            rows = "".join("<w:tr>" + "".join(f"<w:tc>{_cell(c)}</w:tc>" for c in row) + "</w:tr>" for row in content)
            out.append(f"<w:tbl>{rows}</w:tbl>")
        else:
            out.append(_para(kind, content))
    return "".join(out)


def _numbering() -> str:
    def abstract(i: int, fmt: str, text: str) -> str:
        return (f'<w:abstractNum w:abstractNumId="{i}"><w:lvl w:ilvl="0"><w:start w:val="1"/>'
                f'<w:numFmt w:val="{fmt}"/><w:lvlText w:val="{text}"/></w:lvl></w:abstractNum>')

    return (f"<w:numbering {W}>{abstract(0, 'decimal', '%1.')}{abstract(1, 'bullet', '•')}"
            '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
            '<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num></w:numbering>')


def _style(sid: str, name: str, based: str | None = None, outline: int | str | None = None) -> str:
    return (f'<w:style w:type="paragraph" w:styleId="{sid}"><w:name w:val="{name}"/>'
            + (f'<w:basedOn w:val="{based}"/>' if based else "")
            + (f'<w:pPr><w:outlineLvl w:val="{outline}"/></w:pPr>' if outline is not None else "") + "</w:style>")


def make_docx(body, *, footnotes: dict[int, str] | None = None, comment: str | None = None,
              styles: dict[str, tuple[str, str | None, int | str | None]] | None = None) -> bytes:
    """``styles``: more paragraph styles, id -> (name, id of the style it is based on, outline level)."""
    styles_xml = "".join(_style(sid, name) for sid, name in STYLES.items()) + "".join(
        _style(sid, *spec) for sid, spec in (styles or {}).items())
    parts = {
        "word/document.xml": f'<?xml version="1.0" encoding="UTF-8"?><w:document {W} {R}><w:body>{_body(body)}'
                             "</w:body></w:document>",
        "word/styles.xml": f"<w:styles {W}>{styles_xml}</w:styles>",
        "word/numbering.xml": _numbering(),
        "word/footnotes.xml": f"<w:footnotes {W}>"
                              + "".join(f'<w:footnote w:id="{k}">{_para("Normal", v)}</w:footnote>'
                                        for k, v in (footnotes or {}).items()) + "</w:footnotes>",
        "word/comments.xml": f"<w:comments {W}>"
                             + (f'<w:comment w:id="0" w:author="A">{_para("Normal", comment)}</w:comment>'
                                if comment else "") + "</w:comments>",
    }
    rels = {"rIdS": ("styles", "styles.xml"), "rIdN": ("numbering", "numbering.xml"),
            "rIdF": ("footnotes", "footnotes.xml"), "rIdC": ("comments", "comments.xml"),
            "rIdImg": ("image", "media/x.png")}
    doc_rels = "".join(f'<Relationship Id="{i}" Type="{_REL}/{t}" Target="{target}"/>' for i, (t, target) in rels.items())
    ctype = "application/vnd.openxmlformats-officedocument.wordprocessingml"
    overrides = {"document": "document.main", "styles": "styles", "numbering": "numbering",
                 "footnotes": "footnotes", "comments": "comments"}
    content_types = ('<?xml version="1.0" encoding="UTF-8"?>'
                     '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                     '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                     '<Default Extension="xml" ContentType="application/xml"/>'
                     '<Default Extension="png" ContentType="image/png"/>'
                     + "".join(f'<Override PartName="/word/{p}.xml" ContentType="{ctype}.{t}+xml"/>'
                               for p, t in overrides.items()) + "</Types>")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", content_types)
        z.writestr("_rels/.rels", '<?xml version="1.0" encoding="UTF-8"?>'
                   '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                   f'<Relationship Id="rId1" Type="{_REL}/officeDocument" Target="word/document.xml"/></Relationships>')
        z.writestr("word/_rels/document.xml.rels", '<?xml version="1.0" encoding="UTF-8"?>'
                   f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{doc_rels}'
                   "</Relationships>")
        for name, xml in parts.items():
            z.writestr(name, xml)
        z.writestr("word/media/x.png", _PNG)
    return buf.getvalue()
