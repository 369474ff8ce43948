"""Reference JSON (the paper's parsed corpus format) -> Document, kept exactly.

``full_text`` is the text; ``pages`` (keys "1".."n") are consecutive slices of it in
key order; ``split_points`` are the gold block boundaries; ``titles`` the headings.
Nothing is re-derived, so metrics can be compared with the published values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chunkscope.document import Block, Document, Heading, Span
from chunkscope.ingest.build import make_document
from chunkscope.ingest.errors import json_error


class ReferenceFormatError(ValueError):
    """A JSON that is not a valid reference document (the message says why)."""


def is_reference_json(data: Any) -> bool:
    """Whether ``data`` is a reference JSON (it has ``full_text`` and ``split_points``)."""
    return isinstance(data, dict) and "full_text" in data and "split_points" in data


def document_from_reference(data: dict[str, Any], name: str | None = None) -> Document:
    """A reference JSON -> Document, kept exactly: its ``split_points`` are the gold block boundaries, its
    pages consecutive slices of ``full_text`` in key order, its ``titles`` the headings."""
    if not is_reference_json(data):
        raise ReferenceFormatError("not a reference JSON: expected keys 'full_text' and 'split_points'")
    text = data["full_text"]
    if not isinstance(text, str):
        raise ReferenceFormatError("reference JSON: 'full_text' must be a string")
    n = len(text)
    warnings: list[str] = []

    pages: list[Span] = []
    raw_pages = data.get("pages") or {}
    if isinstance(raw_pages, dict) and raw_pages:
        try:
            keys = sorted(raw_pages, key=lambda k: int(k))
        except ValueError as exc:
            raise ReferenceFormatError("reference JSON: page keys must be page numbers") from exc
        pos = 0
        for k in keys:
            pages.append(Span(pos, pos + len(raw_pages[k])))
            pos += len(raw_pages[k])
        if pos != n or "".join(raw_pages[k] for k in keys) != text:
            warnings.append("pages do not concatenate to full_text; page spans ignored")
            pages = []

    points = data.get("split_points") or []
    try:
        cuts = [int(p) for p in points]
    except (TypeError, ValueError) as exc:
        raise ReferenceFormatError("reference JSON: split_points must be integers") from exc
    if cuts != sorted(set(cuts)) or any(not 0 < c < n for c in cuts):
        raise ReferenceFormatError("reference JSON: split_points must be increasing offsets inside the text")
    edges = [0, *cuts, n] if n else [0]
    blocks = [Block(a, b, "gold") for a, b in zip(edges, edges[1:])]

    headings: list[Heading] = []
    for t in data.get("titles") or []:
        title = str(t.get("title", ""))
        start = int(t.get("start", 0))
        level = int(t.get("level") or (len(title) - len(title.lstrip("#"))) or 1)
        # the reference's `end` is where the section ends; our heading span is the heading line
        line_end = text.find("\n", start)
        line_end = n if line_end < 0 else line_end
        headings.append(Heading(start, line_end, level, title.lstrip("#").strip()))
    headings.sort(key=lambda h: h.start)

    return make_document(name or str(data.get("document_name") or "reference"), text, "reference", pages,
                         structure=(blocks, headings), warnings=warnings,
                         meta={"section_ends": [int(t.get("end", 0)) for t in data.get("titles") or []]})


def load_reference(path: str | Path) -> Document:
    """Load a reference JSON file."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReferenceFormatError(f"{p.name}: invalid JSON ({json_error(exc)})") from exc
    return document_from_reference(data, name=p.stem if "document_name" not in data else None)
