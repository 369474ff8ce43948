"""The public API a pipeline calls: ``load``, ``chunk``, ``analyze`` (re-exported by ``chunkscope``).

Each is a thin, documented entry over the same engine the CLI and the app use, so a pipeline
gets the very chunks and numbers the app shows: ``analyze`` *is* ``chunkscope.analysis.run.analyze``,
the one entry point the CLI, corpus mode and the app call too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from chunkscope.analysis.resources import ResourcesProtocol, shared_resources
from chunkscope.analysis.run import analyze
from chunkscope.analysis.structure import chunk_one
from chunkscope.document import Document

__all__ = ["Chunk", "analyze", "chunk", "load"]


@dataclass(frozen=True)
class Chunk:
    """One chunk: ``text == document.text[start:end]``.

    o200k ``tokens``; 1-based ``pages`` (empty without pages); ``heading_path``: the titles of the
    headings that contain its start. ``text_clean``: the text without layout comments, page marks and empty
    markup (``chunkscope.text.markup.clean_text``); ``text_context``: the heading path, then the clean text;
    ``embed_text``: which of the three ``embedding_text`` gives (``raw``, ``clean`` or ``context``).
    """

    start: int
    end: int
    text: str
    tokens: int
    pages: tuple[int, ...]
    heading_path: tuple[str, ...]
    text_clean: str = ""
    text_context: str = ""
    embed_text: str = "raw"

    @property
    def embedding_text(self) -> str:
        """The text to embed, as ``embed_text`` chose: ``text``, ``text_clean`` or ``text_context``."""
        return {"clean": self.text_clean, "context": self.text_context}.get(self.embed_text, self.text)


def load(source: str | os.PathLike | bytes, name: str | None = None, max_bytes: int | None = None) -> Document:
    """A Document from a path, or from bytes (then ``name``, e.g. ``"a.pdf"``, decides the format).

    Raises ``chunkscope.ingest.IngestError`` (a ValueError) with one clear line on bad input.
    """
    from chunkscope.ingest import load_bytes, load_document

    if isinstance(source, (bytes, bytearray)):
        if not name:
            raise ValueError("chunkscope.load(bytes): give name= with the file name (it decides the format)")
        return load_bytes(bytes(source), name, max_bytes)
    return load_document(source, name=name, max_bytes=max_bytes)


def chunk(doc: Document, chunker: str, resources: ResourcesProtocol | None = None, embed_text: str = "raw",
          **params: Any) -> list[Chunk]:
    """Chunk ``doc`` with one chunker id (``chunkscope chunkers`` lists them) and parameters.

    ``embed_text`` (``raw``, ``clean`` or ``context``): which text each chunk's ``embedding_text`` gives.
    Raises ValueError with the reason when the chunker fails, skips or rejects a parameter, or for a bad
    ``embed_text``.
    """
    from chunkscope.text.markup import check_embed_text, clean_text, contextualize

    if problem := check_embed_text(embed_text):
        raise ValueError(problem)
    res = resources if resources is not None else shared_resources(None)
    cr = chunk_one(doc, chunker, chunker, params, res)
    if not cr.ok:
        raise ValueError(f"{chunker}: {cr.status}: {cr.reason}")
    out = []
    for c in cr.chunks:
        pages = tuple(doc.pages_of(c.start, c.end))
        body, path = doc.text[c.start:c.end], tuple(h.title for h in doc.chunk_heading_path(c.start, c.end))
        out.append(Chunk(c.start, c.end, body, c.tokens, pages, path, clean_text(body), contextualize(body, path),
                         embed_text))
    return out
