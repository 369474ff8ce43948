"""Stage 6b, retrieval (optional; DESIGN section 11): each chunking scored by the evidence it retrieves.

When questions are given, every OK chunking is scored by how much of their evidence a retriever
brings back (``chunkscope.retrieval``).

Runs after the LLM chunkings (every chunking exists) and before selection, so the budgeted
recall can join the adaptive score with ``Settings.retrieval_weight`` (default 0: off). The
dense and hybrid retrievers use the run's span embedder: chunk vectors are the same composed or
exact span embeddings the metrics use; the questions are encoded once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from chunkscope.document import Document
from chunkscope.report import ChunkingResult

if TYPE_CHECKING:
    from chunkscope.analysis.resources import ResourcesProtocol


@dataclass
class RetrievalRequest:
    """What ``analyze(..., retrieval=...)`` needs: the questions and how to retrieve."""

    questions: Any  # chunkscope.retrieval.QuestionSet
    config: Any = field(default=None)  # chunkscope.retrieval.Config (None: defaults)


def retrieval_stage(doc: Document, results: Sequence[ChunkingResult | None], request: RetrievalRequest,
                    resources: ResourcesProtocol, progress: Callable[[str, float, str], None]) -> tuple[dict[str, Any] | None, str]:
    """(the report's ``retrieval`` block, "") or (None, why it could not run)."""
    from chunkscope.retrieval.retrievers import dense_from_resources
    from chunkscope.retrieval.run import Config, chunkings_from_report, evaluate

    config = request.config or Config()
    chunkings = chunkings_from_report([r for r in results if r is not None])
    progress("selection", 0.0, f"retrieval: {len(request.questions.questions)} questions × {len(chunkings)} chunkings")
    try:
        dense = dense_from_resources(resources, doc) if config.retriever in ("dense", "hybrid") else None
        res = evaluate(doc.text, chunkings, request.questions, config, dense, doc.language)
    except Exception as exc:  # noqa: BLE001 - boundary: the retrieval check (any retriever) must not sink the analysis
        return None, f"retrieval check failed: {type(exc).__name__}: {exc}"
    return res.to_dict(), ""
