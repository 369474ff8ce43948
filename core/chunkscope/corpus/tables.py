"""What a corpus run's results hold, and reading them back: the summary, the tidy table, winners.jsonl.

The tidy table (``metrics.parquet``, ``metrics.csv``) has one row per (document, chunking, measure)
(``TIDY_COLUMNS``), keyed by the document key (:func:`chunkscope.corpus.discover.document_keys`); it is
rebuilt from the per-document reports any time (:func:`write_tables`).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any, Iterator

from chunkscope.corpus.discover import document_keys
from chunkscope.corpus.store import ResultStore, as_store
from chunkscope.report import METRICS

SCHEMA = "chunkscope.corpus.run/1"
TIDY_COLUMNS = ("document", "domain", "language", "chunker", "candidate", "winner", "metric", "value")
# the tidy table's "metric" column: METRICS, then score, chunks, tokens_mean, tokens_min, tokens_max, seconds


def not_run(report: dict[str, Any]) -> dict[str, str]:
    """The chunkings of a report that gave no result, with why ("skipped: no LLM endpoint configured")."""
    return {c["id"]: f"{c.get('status', '')}: {c.get('reason', '')}" for c in report.get("chunkings", [])
            if c.get("status") != "ok"}


def not_run_lines(entries: list[dict[str, Any]]) -> list[str]:
    """One line per chunking that gave no result on some documents of a run: how many, and why."""
    counts = Counter(item for e in entries for item in (e.get("not_run") or {}).items())
    return [f"not run: {cid} on {n} document(s) ({why})" for (cid, why), n in counts.items()]


def tidy_rows(report: dict[str, Any], domain: str = "", document: str | None = None) -> list[dict[str, Any]]:
    """Tidy long rows (TIDY_COLUMNS) of one report dict: one row per (chunking, measure).

    ``document``: the document key (:func:`chunkscope.corpus.discover.document_keys`; default: the report's
    document name)."""
    doc = report.get("document", {})
    name = doc.get("name", "") if document is None else document
    rows = []
    for c in report.get("chunkings", []):
        if c.get("status") != "ok":
            continue
        toks = [ch["tokens"] for ch in c.get("chunks", [])]
        base = {"document": name, "domain": domain, "language": doc.get("language", ""), "chunker": c["id"],
                "candidate": bool(c.get("candidate")), "winner": c["id"] == report.get("winner")}
        measures: dict[str, Any] = {m: c.get("metrics", {}).get(m) for m in METRICS}
        measures.update(score=c.get("score"), chunks=len(toks),
                        tokens_mean=(sum(toks) / len(toks)) if toks else None,
                        tokens_min=min(toks) if toks else None, tokens_max=max(toks) if toks else None,
                        seconds=c.get("seconds"))
        for m, v in measures.items():
            rows.append({**base, "metric": m, "value": None if v is None else float(v)})
    return rows


def read_reports(store: ResultStore, entries: list[dict[str, Any]],
                 ) -> Iterator[tuple[dict[str, Any], str, dict[str, Any] | None]]:
    """``(entry, document key, report dict)`` for each summary entry that names a report, read one at a time.

    The report is None when its file cannot be read back (missing, not JSON)."""
    for e, key in zip(entries, document_keys(entries)):
        if not e.get("report"):
            continue
        try:
            yield e, key, json.loads(store.read_text(e["report"]))
        except (OSError, json.JSONDecodeError):
            yield e, key, None


def _winner_lines(store: ResultStore, e: dict[str, Any], key: str, embed_text: str = "raw") -> Iterator[str]:
    """The entry's winning chunks as winners.jsonl lines, keyed by its document key (none when unreadable), each
    marked to embed ``embed_text`` (``chunkscope.report.with_embed_text``)."""
    from chunkscope.report import with_embed_text

    if not e.get("winners"):
        return
    try:
        lines = store.read_text(e["winners"]).splitlines()
    except OSError:
        return
    for line in lines:
        if line.strip():
            rec = with_embed_text(json.loads(line), embed_text)
            rec["document"], rec["domain"] = key, e.get("domain", "")
            yield json.dumps(rec, ensure_ascii=False) + "\n"


def write_tables(out_dir: str | os.PathLike | ResultStore, entries: list[dict[str, Any]],
                 embed_text: str = "raw") -> None:
    """Write metrics.parquet/.csv and winners.jsonl from every entry that has a report (each winning chunk marked
    to embed ``embed_text``: ``raw``, ``clean`` or ``context``).

    One row set per document entry (a document appears once however many times it was tried), keyed by the
    document key (:func:`chunkscope.corpus.discover.document_keys`)."""
    import pandas as pd

    store = as_store(out_dir)
    rows: list[dict[str, Any]] = []
    with store.open_write("winners.jsonl") as wfh:
        for e, key, rep in read_reports(store, entries):
            if rep is None:
                continue
            rows.extend(tidy_rows(rep, e.get("domain", ""), key))
            del rep
            wfh.writelines(_winner_lines(store, e, key, embed_text))
    df = pd.DataFrame(rows, columns=list(TIDY_COLUMNS))
    df["value"] = df["value"].astype("float64")
    store.write_parquet("metrics.parquet", df)
    store.write_text("metrics.csv", df.to_csv(index=False))


def load_summary(results_dir: str | os.PathLike | ResultStore) -> dict[str, Any]:
    """The summary.json of a results directory; ValueError (one line) when there is none or it is not one."""
    store = as_store(results_dir)
    if not store.is_file("summary.json"):
        raise ValueError(f"{store.display()}: no summary.json (not a chunkscope corpus results directory)")
    from chunkscope.ingest.errors import json_error

    try:
        data = json.loads(store.read_text("summary.json"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{store.display('summary.json')}: not valid JSON ({json_error(exc)})") from None
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema != SCHEMA:
        raise ValueError(f"{store.display('summary.json')}: not a corpus summary (schema {schema!r})")
    return data
