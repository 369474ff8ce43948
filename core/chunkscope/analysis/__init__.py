"""The analysis, one module per stage (DESIGN section 12), run top-down by ``run.analyze``.

- ``settings``: ``Settings`` and the one settings-file reader/writer;
- ``resources``: the model, span embedders and LLM client shared across runs (``ResourcesProtocol``: what a run uses);
- ``structure``: the chunking plan, ``chunk_one``, SC and BI;
- ``coreference``: entity–pronoun pairs and RC;
- ``embedding``: units embedded once, ICC and DCC;
- ``selection``: scores, the winner and the one explanation;
- ``run``: ``analyze()`` runs the stages in order (``AnalysisRun``: one method per stage);
- ``background``: coreference and the unit embedding pass, in threads beside the stages;
- ``timings``: the report's disjoint stage timings.
"""

from chunkscope.analysis.resources import Resources, ResourcesProtocol
from chunkscope.analysis.run import STAGES, analyze, document_facts, fill_metrics
from chunkscope.analysis.selection import explain, rescore
from chunkscope.analysis.settings import DEFAULT_CANDIDATES, Settings
from chunkscope.analysis.structure import chunk_one, chunking_plan, default_chunker_ids

__all__ = [
    "DEFAULT_CANDIDATES", "STAGES", "Resources", "ResourcesProtocol", "Settings", "analyze", "chunk_one", "chunking_plan",
    "default_chunker_ids", "document_facts", "explain", "rescore", "fill_metrics",
]
