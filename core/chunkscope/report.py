"""The analysis report: one document, every chunking, its metrics, the adaptive winner.

``Report.to_dict()`` is the stable JSON schema ``chunkscope.report/1`` (DESIGN section 10),
read by other tools (corpus mode, the app, pipelines). Fields are only ever added, never
renamed. Extra keys beyond DESIGN's list: ``explanation``, ``warnings``, ``coref``,
``embedder``, and per chunking ``audit``, ``info``, ``diagnostics`` and ``mean_tokens``...
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from chunkscope.metrics import Details, diagnostics_from_dict
from chunkscope.records import Record, json_field, list_of

SCHEMA = "chunkscope.report/1"

_SCALAR = r"(?:-?\d[\d.eE+-]*|true|false|null)"
_FLAT_ARRAY = re.compile(r"\[\n\s*(" + _SCALAR + r"(?:,\n\s*" + _SCALAR + r")*)\n\s*\]")


def dumps(obj: Any) -> str:
    """JSON as ChunkScope writes reports and tables: indented, but an array of numbers stays on one line (a
    chunk's span, a page box): one number per line made a 2,415-page PDF's report 162 MB instead of 93."""
    text = json.dumps(obj, ensure_ascii=False, indent=1)
    return _FLAT_ARRAY.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text)


METRICS = ("RC", "ICC", "DCC", "BI", "SC")
# What each metric means, for readers of the app and the reports: (full name, one plain sentence).
METRIC_GUIDE: dict[str, tuple[str, str]] = {
    "RC": ("References Completeness",
           "A pronoun stays in the same chunk as the name it refers to (“it” with “the Northwind Gateway”), "
           "so a retrieved chunk still says who or what it is about."),
    "ICC": ("Intrachunk Cohesion",
            "Each chunk sticks to one subject: its parts say related things, so the chunk answers the questions "
            "it is retrieved for."),
    "DCC": ("Document Contextual Coherence",
            "Neighbouring chunks follow on from each other like the document does, instead of jumping between "
            "unrelated topics."),
    "BI": ("Block Integrity",
           "Paragraphs, tables, lists and code blocks are kept whole rather than cut in the middle "
           "(short paragraphs in a row count as one block)."),
    "SC": ("Size Compliance",
           "Chunks are neither too short nor too long: the share of chunks between the minimum and maximum "
           "size in tokens."),
}


def _jsonable(x: Any) -> Any:
    """Best-effort conversion of diagnostics (numpy, tuples, dataclasses) to JSON types."""
    if x is None or isinstance(x, (str, bool, int)):
        return x
    if isinstance(x, float):
        return x if x == x and x not in (float("inf"), float("-inf")) else None
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "tolist"):
        return _jsonable(x.tolist())
    if hasattr(x, "item"):
        return _jsonable(x.item())
    if hasattr(x, "to_dict"):
        return _jsonable(x.to_dict())
    if hasattr(x, "__dataclass_fields__"):
        from dataclasses import asdict

        return _jsonable(asdict(x))
    return str(x)


def _round4(x: float) -> float:
    return round(x, 4)


def _metrics_of(d: dict[str, Any]) -> dict[str, float | None]:
    """Every metric of ``METRICS``, in that order (None where ``d`` has none)."""
    return {m: d.get(m) for m in METRICS}


@dataclass
class ChunkRow(Record):
    """One chunk of a chunking: its span, its tokens and, for PDF sources, its page boxes."""

    start: int
    end: int
    tokens: int
    boxes: list | None = json_field(None, omit="none")  # PDF sources: [[page, x0, y0, x1, y1], ...] (chunkscope.geometry)


@dataclass
class ChunkingResult(Record):
    """One chunking of the document: its chunks, metrics, diagnostics and score (or why it did not run)."""

    id: str
    label: str = json_field(missing=lambda d: d["id"])
    params: dict[str, Any] = field(default_factory=dict)
    candidate: bool = json_field(False, load=bool)
    status: str = "ok"  # ok | failed | skipped
    reason: str = ""
    chunks: list[ChunkRow] = json_field(default_factory=list, load=list_of(ChunkRow), copy="share")
    metrics: dict[str, float | None] = json_field(default_factory=lambda: {m: None for m in METRICS},
                                                  dump=_metrics_of, load=_metrics_of)
    metric_reasons: dict[str, str] = field(default_factory=dict)
    score: float | None = None
    seconds: float = json_field(0.0, dump=_round4, then=("stats", lambda c: c.token_stats()))
    audit: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = json_field(default_factory=dict, dump=_jsonable)
    diagnostics: dict[str, Details] = json_field(default_factory=dict, dump=_jsonable,
                                                 load=diagnostics_from_dict)
    # 95% bootstrap intervals (chunkscope.analysis.uncertainty); empty/None when not computed
    score_interval: list[float] | None = json_field(None, omit="none")
    metric_intervals: dict[str, list[float]] = json_field(default_factory=dict, omit="empty", load=lambda v: v or {})

    @property
    def ok(self) -> bool:
        """Whether the chunking ran (status ``ok``)."""
        return self.status == "ok"

    def token_stats(self) -> dict[str, float]:
        """Count, mean, min, max and total of the chunks' tokens."""
        toks = [c.tokens for c in self.chunks]
        if not toks:
            return {"chunks": 0, "mean": 0.0, "min": 0, "max": 0, "total": 0}
        return {
            "chunks": len(toks),
            "mean": sum(toks) / len(toks),
            "min": min(toks),
            "max": max(toks),
            "total": sum(toks),
        }


@dataclass
class Report(Record):
    """The analysis of one document: every chunking, the winner and why; ``to_dict`` is ``chunkscope.report/1``."""

    document: dict[str, Any]
    settings: dict[str, Any] = json_field(default_factory=dict, dump=_jsonable, copy="deep")
    chunkings: list[ChunkingResult] = json_field(default_factory=list, load=list_of(ChunkingResult))
    winner: str | None = None
    explanation: str = ""
    _: KW_ONLY
    flags: list[str] = field(default_factory=list)
    timings: dict[str, float] = json_field(default_factory=dict, dump=lambda t: {k: round(v, 4) for k, v in t.items()})
    warnings: list[str] = field(default_factory=list)
    coref: dict[str, Any] = json_field(default_factory=dict, dump=_jsonable, copy="deep")
    embedder: dict[str, Any] = json_field(default_factory=dict, dump=_jsonable, copy="deep")
    # what produced the numbers (chunkscope.provenance)
    provenance: dict[str, Any] = json_field(default_factory=dict, dump=_jsonable, copy="deep")
    # the verdict on the winner (clear or tie, the tie-break) and what the bootstrap resampled
    # (chunkscope.analysis.uncertainty); optional: empty when not computed
    verdict: dict[str, Any] | None = json_field(None, omit="empty", dump=_jsonable, copy="share")
    uncertainty: dict[str, Any] = json_field(default_factory=dict, omit="empty", dump=_jsonable,
                                             load=lambda v: v or {}, copy="share")
    # optional: the retrieval check (chunkscope.retrieval/1 block; an added field: the schema stays chunkscope.report/1)
    retrieval: dict[str, Any] | None = json_field(None, omit="none", dump=_jsonable, copy="share")
    # a snapshot of a progressive analysis (``analyze(on_partial=...)``): the metrics and
    # chunkings still to come; absent from the JSON of a complete report
    provisional: bool = json_field(False, omit="empty", load=bool)
    pending: list[str] = json_field(default_factory=list, omit=lambda r: not r.provisional, load=list)

    def get(self, chunking_id: str) -> ChunkingResult | None:
        """The chunking ``chunking_id``, or None."""
        for c in self.chunkings:
            if c.id == chunking_id:
                return c
        return None

    def ok_chunkings(self, ids: Sequence[str]) -> list[ChunkingResult]:
        """The chunkings of ``ids`` that ran (``ok``), in the order of ``ids``; unknown ids are left out."""
        found = (self.get(cid) for cid in ids)
        return [c for c in found if c is not None and c.ok]

    @property
    def ranked(self) -> list[ChunkingResult]:
        """OK chunkings by score (best first), ties by fewer chunks, then candidates first (a chunking that cannot
        win is never listed above the winner it ties with: recursive-1100 and recursive-1100+pp), then id."""
        ok = [c for c in self.chunkings if c.ok and c.score is not None]
        return sorted(ok, key=lambda c: (-(c.score or 0.0), len(c.chunks), not c.candidate, c.id))

    @property
    def leaderboard(self) -> list[ChunkingResult]:
        """Every chunking in leaderboard order: the ranked ones (``ranked``), then the others (failed, skipped,
        scoreless) as listed."""
        ranked = self.ranked
        return ranked + [c for c in self.chunkings if c not in ranked]

    def same_chunks(self) -> dict[str, str]:
        """``{chunking id: the id of the chunking above it in the leaderboard with exactly the same chunks}``
        (a "+pp" post-processing that changed nothing: recursive-1100 and recursive-1100+pp)."""
        first: dict[tuple[tuple[int, int], ...], str] = {}
        out: dict[str, str] = {}
        for c in self.leaderboard:
            if not c.ok or not c.chunks:
                continue
            key = tuple((ch.start, ch.end) for ch in c.chunks)
            if key in first:
                out[c.id] = first[key]
            else:
                first[key] = c.id
        return out

    @property
    def pending_metrics(self) -> list[str]:
        """The metrics still to come (a progressive analysis's snapshot)."""
        return [m for m in self.pending if m in METRICS]

    @property
    def pending_chunkings(self) -> list[str]:
        """The chunkings still to come (a progressive analysis's snapshot)."""
        return [p for p in self.pending if p not in METRICS]

    def to_dict(self) -> dict[str, Any]:
        """The report as the JSON object of ``chunkscope.report/1``."""
        return {"schema": SCHEMA, **super().to_dict()}

    def to_json(self) -> str:
        """The report's JSON text (``dumps``)."""
        return dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Report":
        """The report written as ``d``; ValueError when it is not a ``chunkscope.report/1`` object."""
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a ChunkScope report (schema {d.get('schema')!r}, expected {SCHEMA!r})")
        return super().from_dict(d)

    @classmethod
    def load(cls, path: str | Path) -> "Report":
        """The report saved at ``path``."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def save(self, path: str | Path) -> None:
        """Write the report's JSON to ``path``."""
        Path(path).write_text(self.to_json(), encoding="utf-8")


def attach_boxes(report: Report, doc: Any) -> None:
    """Give every chunk of ``report`` its page boxes when ``doc`` is a PDF with geometry."""
    from chunkscope.geometry import chunk_boxes

    if getattr(doc, "geometry", None) is None:
        return
    for c in report.chunkings:
        for row in c.chunks:
            row.boxes = chunk_boxes(doc, row.start, row.end)


def chunk_records(report: Report, text: str, chunking_id: str | None = None,
                  heading_path=None, pages_of=None, boxes=None, embed_text: str = "raw") -> Iterable[dict[str, Any]]:
    """The chunks of one chunking (default: the winner) as export records (JSONL rows).

    ``heading_path(start, end)`` (a chunk's section: ``Document.chunk_heading_path``), ``pages_of(start, end)`` (``Document.pages_of``) and ``boxes(start, end)`` (PDF sources:
    ``[[page, x0, y0, x1, y1], ...]``) come from the Document when available; without
    ``boxes``, boxes already in the report are used.

    Each record holds ``text`` (the span's characters, ``start``/``end`` unchanged), ``text_clean``
    (``chunkscope.text.markup.clean_text``), ``text_context`` (its heading path before the clean text) and
    ``embed_text``, which of the three is meant to be embedded (``raw``, ``clean`` or ``context``; read it with
    :func:`text_to_embed`). A bad ``embed_text`` is a ValueError naming the choices.
    """
    from chunkscope.text.markup import check_embed_text, clean_text, contextualize

    if problem := check_embed_text(embed_text):
        raise ValueError(problem)
    cid = chunking_id or report.winner
    ch = report.get(cid) if cid else None
    if ch is None:
        return []
    out = []
    for i, c in enumerate(ch.chunks):
        body = text[c.start:c.end]
        titles = [h.title for h in heading_path(c.start, c.end)] if heading_path is not None else []
        rec: dict[str, Any] = {
            "id": f"{report.document.get('sha256', '')[:12]}-{cid}-{i:05d}",
            "text": body,
            "text_clean": clean_text(body),
            "text_context": contextualize(body, titles),
            "embed_text": embed_text,
            "start": c.start,
            "end": c.end,
            "tokens": c.tokens,
            "chunker": cid,
            "document": report.document.get("name"),
            "document_sha256": report.document.get("sha256"),
            "checksum": hashlib.sha256(body.encode("utf-8")).hexdigest(),
        }
        if pages_of is not None:
            rec["pages"] = pages_of(c.start, c.end)
        if heading_path is not None:
            rec["heading_path"] = titles
        bx = boxes(c.start, c.end) if boxes is not None else c.boxes
        if bx is not None:
            rec["boxes"] = bx
        out.append(rec)
    return out


EMBED_FIELDS = {"raw": "text", "clean": "text_clean", "context": "text_context"}  # embed_text -> the record's key


def text_to_embed(record: dict[str, Any]) -> str:
    """The text of an export record (``chunk_records``) its ``embed_text`` names (``text`` when it names none)."""
    return record[EMBED_FIELDS.get(record.get("embed_text", "raw"), "text")]


def with_embed_text(record: dict[str, Any], embed_text: str) -> dict[str, Any]:
    """An export record (``chunk_records``) marked to embed ``embed_text`` (``raw``, ``clean``, ``context``); a record
    written before ``text_clean`` existed gets its clean and contextualised texts from ``text`` and ``heading_path``."""
    from chunkscope.text.markup import check_embed_text, clean_text, contextualize

    if problem := check_embed_text(embed_text):
        raise ValueError(problem)
    out = dict(record)
    out.setdefault("text_clean", clean_text(out.get("text", "")))
    out.setdefault("text_context", contextualize(out.get("text", ""), out.get("heading_path") or []))
    out["embed_text"] = embed_text
    return out


def record_embed_text(report: Report, embed_text: str) -> None:
    """Note in ``report.provenance["embed_text"]`` which text of a chunk its exports embed (``raw``, ``clean``,
    ``context``); the metrics always score the spans, so no number depends on it. A bad value is a ValueError."""
    from chunkscope.text.markup import check_embed_text

    if problem := check_embed_text(embed_text):
        raise ValueError(problem)
    report.provenance["embed_text"] = embed_text
