"""The facts shown about a loaded document (CLI ``chunkscope ingest`` and the app agree)."""

from __future__ import annotations

from typing import Any

from chunkscope.document import Document
from chunkscope.text.blocks import blocks_by_kind, kind_word
from chunkscope.text.tokens import count_tokens


def document_summary(doc: Document) -> dict[str, Any]:
    """name, format, language, characters, tokens (o200k), pages, blocks by kind, headings, warnings."""
    return {
        "name": doc.name,
        "format": doc.source_format,
        "language": doc.language,
        "characters": len(doc.text),
        "tokens": count_tokens(doc.text),
        "pages": len(doc.pages),
        "blocks": len(doc.blocks),
        "blocks_by_kind": blocks_by_kind(doc.blocks),
        "headings": len(doc.headings),
        "warnings": list(doc.warnings),
        "sha256": doc.sha256,
    }


def format_summary(doc: Document, summary: dict[str, Any] | None = None, max_headings: int = 40) -> str:
    """Human-readable multi-line summary (what ``chunkscope ingest`` prints)."""
    s = summary or document_summary(doc)
    kinds = ", ".join(f"{kind_word(k)} {n}" for k, n in s["blocks_by_kind"].items())  # the app's words
    lang = s["language"]
    p = doc.meta.get("language_probability")
    if "language_detected" in doc.meta:
        det = doc.meta["language_detected"]
        lang += f" (set by hand; detected {det}" + (f", p={p:.2f})" if p is not None and det != "und" else ")")
    elif p is not None and lang != "und":
        lang += f" (p={p:.2f})"
    lines = [
        f"name        {s['name']}",
        f"format      {s['format']}",
        f"language    {lang}",
        f"characters  {s['characters']:,}",
        f"tokens      {s['tokens']:,} (o200k_base)",
        f"pages       {s['pages'] or 'none'}",
        f"blocks      {s['blocks']:,}" + (f"  ({kinds})" if kinds else ""),
        f"headings    {s['headings']:,}",
    ]
    for h in doc.headings[:max_headings]:
        title = h.title if len(h.title) <= 90 else h.title[:87] + "..."
        lines.append(f"  {'  ' * (min(h.level, 6) - 1)}{'#' * h.level} {title}")
    if len(doc.headings) > max_headings:
        lines.append(f"  ... and {len(doc.headings) - max_headings} more")
    for w in s["warnings"]:
        lines.append(f"warning     {w}")
    return "\n".join(lines)
