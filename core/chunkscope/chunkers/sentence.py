"""``sentence-5``: groups of N consecutive sentences (see chunkscope.text.sentences for the segmenter)."""

from __future__ import annotations

from typing import Any

from chunkscope.chunkers.base import ChunkerSpec, ChunkResult, ParamSpec
from chunkscope.document import Document, Span
from chunkscope.text.sentences import segmenter_name, sentence_spans


def chunk_sentences(doc: Document, params: dict[str, Any], ctx: Any = None) -> ChunkResult:
    """Groups of ``sentences`` consecutive sentences (the offline, Markdown-aware sentence recogniser)."""
    k = int(params["sentences"])
    sents = sentence_spans(doc.text)
    if not sents:
        return ChunkResult(spans=[])
    starts = [sents[i].start for i in range(0, len(sents), k)]
    starts[0] = 0  # leading whitespace goes to the first chunk
    ends = starts[1:] + [len(doc.text)]
    return ChunkResult(spans=[Span(a, b) for a, b in zip(starts, ends)],
                       info={"sentences": len(sents), "segmenter": segmenter_name()})


def specs() -> list[ChunkerSpec]:
    """The sentence family's spec (``sentence-5``)."""
    return [ChunkerSpec(
        "sentence-5", "Sentences (5)",
        "groups of N consecutive sentences (offline spaCy sentence recogniser, Markdown-aware)",
        (ParamSpec("sentences", int, 5, "sentences per chunk", min=1, max=100_000),),
        chunk_sentences, family="sentence", uses_sentences=True)]
