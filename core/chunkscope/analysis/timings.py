"""The report's stage timings: disjoint seconds that add up to the total.

Time inside the embedding model (loading, encoding) is "embed" wherever it happens (the semantic
chunker embeds while chunking, exact mode while scoring), so "chunk" and "metrics" exclude it;
"other" is the rest (bookkeeping). The CLI and corpus mode add "parse" to the record and to "total".
"""

from __future__ import annotations

# Report.timings keys, in the JSON's order. Kept for the schema: chunk, coref, embed, metrics, total; added: other.
TIMING_KEYS = ("chunk", "coref", "embed", "metrics", "other", "total")
STAGE_KEYS = ("chunk", "coref", "embed", "metrics")  # the disjoint stages; "other" is what they leave of the total


class Timings:
    """Seconds per stage of one analysis; ``seconds`` is the dict the report holds."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {k: 0.0 for k in TIMING_KEYS if k != "total"}

    def add(self, stage: str, seconds: float, model_seconds: float = 0.0) -> None:
        """Add ``seconds`` to ``stage``, less the ``model_seconds`` of them spent in the embedding model ("embed")."""
        self.seconds[stage] += max(0.0, seconds - model_seconds)

    def finish(self, total: float) -> dict[str, float]:
        """Set the ``total`` and the ``other`` seconds the stages leave of it; the record."""
        self.seconds["total"] = total
        self.seconds["other"] = max(0.0, total - sum(self.seconds[k] for k in STAGE_KEYS))
        return self.seconds
