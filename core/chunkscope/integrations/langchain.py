"""``ChunkScopeSplitter``: a LangChain ``TextSplitter`` that cuts with any ChunkScope chunking.

    splitter = ChunkScopeSplitter("recursive-1100+pp", chunk_size=800)
    splitter = ChunkScopeSplitter.from_settings("chunkscope-winner.toml")  # the app's export
    docs = splitter.create_documents([markdown_text])          # metadata: start_index, tokens, ...
    docs = splitter.split_chunkscope_document(chunkscope.load("a.pdf"))   # pages known: `page` works

``split_text`` reads its text as Markdown (blocks and headings as the Markdown loader finds
them; pages from ``<!-- PageBreak -->`` markers or form feeds). Chunkings that need more than
text get it where ChunkScope can (``semantic``: the bundled embedder; ``llm-regex``: the endpoint
configured in the environment) or raise ValueError saying what is missing and pointing to
``split_chunkscope_document`` over a ``chunkscope.load``ed document (e.g. ``page`` on text
without page markers). Chunks are the exact spans ``chunkscope.chunk`` returns: ``start_index``
is the chunk's offset in the text given, never a ``str.find`` guess.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chunkscope.extras import require

require("langchain_text_splitters", "chunkscope.integrations.langchain", ImportError)  # one line if missing

from langchain_core.documents import Document as LCDocument  # noqa: E402 (after the check above)
from langchain_text_splitters import TextSplitter  # noqa: E402

from chunkscope.api import Chunk, chunk  # noqa: E402
from chunkscope.chunkers import registry  # noqa: E402
from chunkscope.document import Document  # noqa: E402


class ChunkScopeSplitter(TextSplitter):
    """A LangChain ``TextSplitter`` that cuts with a ChunkScope chunker: exact spans, ``start_index`` in metadata."""
    def __init__(self, chunker: str = "recursive-1100+pp", resources: Any = None, **params: Any):
        super().__init__(chunk_size=1, chunk_overlap=0, add_start_index=True, strip_whitespace=False)
        self.chunker = chunker
        self.params = dict(params)
        self._resources = resources
        registry.get(chunker).resolve_params(self.params)  # unknown chunker or bad parameter: now, not later

    @classmethod
    def from_settings(cls, path: str | Path, chunker: str | None = None, resources: Any = None) -> "ChunkScopeSplitter":
        """The chunking a settings file names (``[tune] chunker``, else its single candidate)."""
        from chunkscope.analysis.settings import Settings, read_config

        body, tune = read_config(path)
        settings = Settings.from_dict(body)
        cid = chunker or tune.get("chunker") or (settings.candidates[0] if len(settings.candidates) == 1 else None)
        if not cid:
            raise ValueError(f"{Path(path).name}: name the chunking ([tune] chunker = ID, or chunker=...)")
        v = settings.variants.get(cid)
        if v is not None:
            return cls(v["chunker"], resources, **dict(v.get("params") or {}))
        return cls(cid, resources, **settings.params.get(cid, {}))

    # --- LangChain's interface ----------------------------------------------------------------
    def split_text(self, text: str) -> list[str]:
        """The chunk texts of ``text``."""
        return [c.text for c in self._chunks(self._document(text))]

    def create_documents(self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None) -> list[LCDocument]:
        """LangChain documents of the chunks of each text, with its metadata and the chunk's span, pages and headings."""
        metas = metadatas or [{}] * len(texts)
        out: list[LCDocument] = []
        for text, meta in zip(texts, metas, strict=True):
            out.extend(self._lc_documents(self._document(text), meta))
        return out

    # --- ChunkScope documents (PDFs, pages) ---------------------------------------------------
    def split_chunkscope_document(self, doc: Document, metadata: dict[str, Any] | None = None) -> list[LCDocument]:
        """Chunk a ``chunkscope.load``ed Document (PDF pages and boxes known)."""
        return self._lc_documents(doc, metadata or {"source": doc.meta.get("filename", doc.name)})

    def _document(self, text: str) -> Document:
        from chunkscope.ingest.markdown import document_from_markdown

        return document_from_markdown(text, "text")

    def _chunks(self, doc: Document) -> list[Chunk]:
        if not doc.text.strip():
            return []
        try:
            return chunk(doc, self.chunker, self._resources, **self.params)
        except ValueError as exc:
            raise ValueError(f"{exc} — for chunkings that need pages or other structure, load the file with "
                             "chunkscope.load(path) and call split_chunkscope_document(doc)") from None

    def _lc_documents(self, doc: Document, meta: dict[str, Any]) -> list[LCDocument]:
        out = []
        for c in self._chunks(doc):
            m = copy.deepcopy(meta)
            m.update({"start_index": c.start, "end_index": c.end, "tokens": c.tokens, "chunker": self.chunker})
            if c.pages:
                m["pages"] = list(c.pages)
            if c.heading_path:
                m["heading_path"] = list(c.heading_path)
            out.append(LCDocument(page_content=c.text, metadata=m))
        return out

    def split_documents(self, documents: Iterable[LCDocument]) -> list[LCDocument]:
        """Re-split LangChain documents, keeping each one's metadata."""
        texts, metas = [], []
        for d in documents:
            texts.append(d.page_content)
            metas.append(d.metadata)
        return self.create_documents(texts, metas)
