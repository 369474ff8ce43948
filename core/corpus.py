"""Corpus mode: adaptive chunking over many documents (no Streamlit here).

Pieces, each usable on its own::

    discover(inputs, exclude=()) -> (list[CorpusItem], list[ignored dict])
    find_mentions(path) -> Path | None
    domain_of(path, root) -> str
    analyze_file(path, settings_dict) -> result dict     # the pure per-document task
    run_corpus(inputs, out_dir, settings, jobs=1, progress=None) -> summary dict

**The per-document task** ``analyze_file`` is a pure function of (file, settings): it loads
the document, runs :func:`chunkscope.analysis.analyze` and returns plain JSON-able data (the report
and the winning chunks). The only process state it touches is a cache of the embedding
model (read-only once loaded; it never changes a result), so any engine that can call a
Python function on (path, settings dict) -- a process pool here, Ray / Dask / Spark / a job
queue elsewhere -- can run it. ``run_corpus`` only plans (discovery, resume keys), fans the
task out, and writes the results.

**Results directory**::

    reports/<stem>-<key16>.json           one chunkscope.report/1 per document
    reports/<stem>-<key16>.winners.jsonl  its winning chunks (chunk_records)
    metrics.parquet, metrics.csv          tidy long table (see TIDY_COLUMNS)
    winners.jsonl                         every document's winning chunks, concatenated
    summary.json                          schema chunkscope.corpus/1: documents ok/skipped/failed

``key`` = sha256 of (file sha256, mentions file sha256, settings, LLM endpoint): a document
already analyzed with the same settings and the same bytes is skipped (resume); change
either and it is analyzed again. A failing document is recorded (status ``failed`` with a
one-line reason) and the run goes on.

**Mentions pickup**: for ``.../X/parsed/STEM.json`` the file ``.../X/mentions/STEM.parquet``
(or ``.json``), as in the reference data; or ``STEM.mentions.parquet|json`` beside the
file. When found and the coreference backend is ``heuristic`` or ``precomputed``, that
document is scored with the precomputed pairs.

**Domain**: a reference-style stem ``"Persona (label)_title"`` gives ``label`` (``légal`` ->
legal, ``technique`` -> technical, ``sciences sociales`` -> social, anything else lowercased);
otherwise the name of the folder holding the file when it is below the input root and not a
generic name (parsed, docs, data...); otherwise ``""`` (no domain).
"""

from __future__ import annotations

import glob as _glob
import hashlib
import json
import os
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from chunkscope.report import METRICS

SCHEMA = "chunkscope.corpus/1"
DOC_EXTENSIONS = (".pdf", ".md", ".markdown", ".txt", ".json")
MENTIONS_DIR = "mentions"
GENERIC_FOLDERS = {"parsed", "docs", "doc", "documents", "data", "files", "input", "inputs", "corpus", "raw", "text", "texts"}
DOMAIN_ALIASES = {
    "légal": "legal", "legal": "legal", "juridique": "legal", "law": "legal",
    "technique": "technical", "technical": "technical", "tech": "technical",
    "sciences sociales": "social", "social": "social", "social science": "social", "social sciences": "social",
}
TIDY_COLUMNS = ("document", "domain", "language", "chunker", "candidate", "winner", "metric", "value")
# metric names in the tidy table besides METRICS
EXTRA_MEASURES = ("score", "chunks", "tokens_mean", "tokens_min", "tokens_max", "seconds")

Progress = Callable[[int, int, dict[str, Any]], None]  # (done, total, last document entry)


# ------------------------------------------------------------------------------ discovery
@dataclass
class CorpusItem:
    path: Path
    root: Path
    mentions: Path | None = None
    domain: str = ""
    sha256: str = ""
    mentions_sha256: str = ""

    @property
    def rel(self) -> str:
        try:
            return str(self.path.relative_to(self.root))
        except ValueError:
            return str(self.path)


def _is_hidden(p: Path, root: Path) -> bool:
    try:
        parts = p.relative_to(root).parts
    except ValueError:
        parts = p.parts
    return any(x.startswith(".") for x in parts)


def _is_mentions_file(p: Path, root: Path) -> bool:
    name = p.name.lower()
    if name.endswith(".mentions.json") or name.endswith(".mentions.parquet"):
        return True
    try:
        parts = p.relative_to(root).parts[:-1]
    except ValueError:
        parts = p.parent.parts[-1:]
    return MENTIONS_DIR in [x.lower() for x in parts] or p.parent.name.lower() == MENTIONS_DIR


def _json_kind(p: Path) -> str:
    """'document' (reference or ChunkScope document JSON), 'other' (valid JSON, not a document)
    or 'invalid' (not JSON: left to the loader, which reports it)."""
    try:
        obj = json.loads(p.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return "invalid"
    if isinstance(obj, dict) and (("full_text" in obj and "split_points" in obj)
                                  or ("text" in obj and "blocks" in obj and "name" in obj)):
        return "document"
    return "other"


def _glob_root(pattern: str) -> Path:
    parts = Path(pattern).parts
    fixed = []
    for part in parts:
        if any(ch in part for ch in "*?["):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def discover(inputs: str | os.PathLike | Iterable[str | os.PathLike],
             exclude: Iterable[str | os.PathLike] = ()) -> tuple[list["CorpusItem"], list[dict[str, str]]]:
    """Documents under each input (a directory, searched recursively; a glob; or a file).

    Returns (items sorted by path, ignored) where ignored lists files that are not documents
    (mentions files, JSON that is neither a reference nor a ChunkScope document) with why.
    Raises ``ValueError`` when an input matches nothing at all.
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    excluded = [Path(e).resolve() for e in exclude]
    items: dict[Path, CorpusItem] = {}
    ignored: list[dict[str, str]] = []
    for inp in inputs:
        s = str(inp)
        p = Path(s).expanduser()
        if p.is_dir():
            root, candidates = p, sorted(x for x in p.rglob("*") if x.is_file())
        elif p.is_file():
            root, candidates = p.parent, [p]
        elif any(ch in s for ch in "*?["):
            root = _glob_root(s)
            candidates = sorted(Path(x) for x in _glob.glob(s, recursive=True) if Path(x).is_file())
            if not candidates:
                raise ValueError(f"{s}: the pattern matches no file")
        else:
            raise ValueError(f"{s}: no such file or directory")
        for f in candidates:
            rf = f.resolve()
            if any(rf == e or e in rf.parents for e in excluded):
                continue
            if _is_hidden(f, root) or f.suffix.lower() not in DOC_EXTENSIONS:
                continue
            if _is_mentions_file(f, root):
                ignored.append({"path": str(f), "reason": "coreference mentions file"})
                continue
            if f.suffix.lower() == ".json":
                kind = _json_kind(f)
                if kind == "other":
                    ignored.append({"path": str(f), "reason": "JSON that is not a document (no full_text/split_points or text/blocks)"})
                    continue
            if rf not in items:
                items[rf] = CorpusItem(path=f, root=root, mentions=find_mentions(f), domain=domain_of(f, root))
    return sorted(items.values(), key=lambda it: str(it.path)), ignored


def find_mentions(path: str | os.PathLike) -> Path | None:
    """Precomputed mentions for a document file, or None (see module doc for the places looked at)."""
    p = Path(path)
    stem = p.stem
    for ext in (".parquet", ".json"):
        beside = p.with_name(f"{stem}.mentions{ext}")
        if beside.is_file():
            return beside
    for folder in (p.parent.parent / MENTIONS_DIR, p.parent / MENTIONS_DIR):
        for ext in (".parquet", ".json"):
            cand = folder / f"{stem}{ext}"
            if cand.is_file() and cand.resolve() != p.resolve():
                return cand
    return None


_REF_STEM = re.compile(r"^[^_()]*\(([^)]+)\)\s*_")


def domain_of(path: str | os.PathLike, root: str | os.PathLike | None = None) -> str:
    """Domain of a document (see module doc): reference stem label, else its folder, else ''."""
    p = Path(path)
    m = _REF_STEM.match(p.stem)
    if m:
        label = " ".join(m.group(1).split()).lower()
        return DOMAIN_ALIASES.get(label, label)
    parent = p.parent
    if root is not None:
        try:
            if parent.resolve() == Path(root).resolve() or Path(root).resolve() not in parent.resolve().parents:
                return ""
        except OSError:
            return ""
    name = parent.name.strip().lower()
    if not name or name in GENERIC_FOLDERS:
        return ""
    return DOMAIN_ALIASES.get(name, name)


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def document_settings(settings_dict: dict[str, Any], mentions: str | os.PathLike | None) -> dict[str, Any]:
    """Settings for one document: found mentions switch heuristic/precomputed coref to them."""
    d = dict(settings_dict)
    if mentions is not None and d.get("coref", "heuristic") in ("heuristic", "precomputed"):
        d["coref"] = "precomputed"
        d["mentions"] = str(mentions)
    return d


def _llm_identity() -> dict[str, Any]:
    try:
        from chunkscope.llm import LLMSettings

        return LLMSettings.from_env().cache_identity()  # a corrected key re-runs (llm-regex may have failed)
    except Exception:  # no LLM module / bad env: the key just does not depend on it
        return {}


def resume_key(file_sha: str, mentions_sha: str, settings_dict: dict[str, Any], llm: dict[str, Any] | None = None) -> str:
    d = dict(settings_dict)
    d.pop("mentions", None)  # the path may move; its content hash is in the key instead
    blob = json.dumps([file_sha, mentions_sha, d, llm or {}], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _slug(name: str, limit: int = 60) -> str:
    s = re.sub(r"[^\w.()\-]+", "_", name, flags=re.UNICODE).strip("._")
    return (s or "document")[:limit]


# ------------------------------------------------------------------------------ the pure task
_RESOURCES: dict[tuple[Any, str, str], Any] = {}  # per-process model cache (read-only once loaded)


def _resources(embedder: str | None, mode: str, backend: str = "auto"):
    from chunkscope.analysis import Resources

    key = (embedder, mode, backend)
    if key not in _RESOURCES:
        _RESOURCES.clear()  # one model per process
        _RESOURCES[key] = Resources(embedder, mode, backend=backend)
    return _RESOURCES[key]


def init_worker(embedder: str | None = None, mode: str = "composed", backend: str = "auto") -> None:
    """Process-pool initializer: load the embedding model once per worker."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        _resources(embedder, mode, backend).embedder()
    except Exception:  # a missing model is reported per document (ICC/DCC None with the reason)
        pass


def _release_document_memory(res) -> None:
    """Drop what one document left in process caches keyed by its text (span embedders, token counts
    of its chunk texts, sentence units), so a worker's memory is bounded by one document. The
    embedding vector cache is bounded by its own size limit and kept (re-runs reuse it)."""
    res._span_embedders.clear()
    try:
        from chunkscope import sentences, tokens

        tokens._counts.clear()
        sentences._unit_cache.clear()
    except (ImportError, AttributeError):  # caches renamed: nothing to release here
        pass


def analyze_file(path: str | os.PathLike, settings_dict: dict[str, Any], max_bytes: int | None = None) -> dict[str, Any]:
    """Analyze one file: ``{"status": "ok", "report": {...}, "winners": [...], ...}`` or
    ``{"status": "failed", "reason": one line}``. Never raises for a bad document."""
    from chunkscope.analysis import Settings, analyze
    from chunkscope.report import chunk_records

    t0 = time.perf_counter()
    out: dict[str, Any] = {"path": str(path), "status": "failed", "reason": "", "pid": os.getpid()}
    try:
        settings = Settings.from_dict(settings_dict)
        from chunkscope.ingest import load_document

        doc = load_document(path, max_bytes=max_bytes)
        parse_s = time.perf_counter() - t0
        res = _resources(settings.embedder, settings.embedding_mode, settings.embedding_backend)
        try:
            report = analyze(doc, settings, res)
        finally:
            _release_document_memory(res)
        report.timings["parse"] = parse_s
        report.timings["total"] = report.timings.get("total", 0.0) + parse_s
        winners = list(chunk_records(report, doc.text, heading_path=doc.heading_path, page_of=doc.page_of))
        out.update(status="ok", report=report.to_dict(), winners=winners, name=doc.name,
                   tokens=report.document.get("tokens", 0), winner=report.winner)
    except (ValueError, OSError) as exc:  # IngestError is a ValueError: the user's input
        out["reason"] = " ".join(str(exc).split()) or type(exc).__name__
    except Exception as exc:  # a bug must not stop the corpus; keep where it happened
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
        out["reason"] = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())}{where}"
    out["seconds"] = time.perf_counter() - t0
    return out


# ------------------------------------------------------------------------------ the runner
def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def tidy_rows(report: dict[str, Any], domain: str = "") -> list[dict[str, Any]]:
    """Tidy long rows (TIDY_COLUMNS) of one report dict: one row per (chunking, measure)."""
    doc = report.get("document", {})
    name = doc.get("name", "")
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


def write_tables(out_dir: Path, entries: list[dict[str, Any]]) -> None:
    """metrics.parquet/.csv and winners.jsonl from every entry that has a report."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    tmp = out_dir / "winners.jsonl.tmp"
    with open(tmp, "w", encoding="utf-8") as wfh:
        for e in entries:
            if not e.get("report"):
                continue
            rp = out_dir / e["report"]
            try:
                rep = json.loads(rp.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
            rows.extend(tidy_rows(rep, e.get("domain", "")))
            del rep
            wp = out_dir / e.get("winners", "")
            if e.get("winners") and wp.is_file():
                with open(wp, encoding="utf-8") as fh:
                    for line in fh:
                        if line.strip():
                            rec = json.loads(line)
                            rec["domain"] = e.get("domain", "")
                            wfh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    os.replace(tmp, out_dir / "winners.jsonl")
    df = pd.DataFrame(rows, columns=list(TIDY_COLUMNS))
    df["value"] = df["value"].astype("float64")
    df.to_parquet(out_dir / "metrics.parquet", index=False)
    df.to_csv(out_dir / "metrics.csv", index=False)


def run_corpus(inputs, out_dir: str | os.PathLike, settings=None, jobs: int = 1,
               progress: Progress | None = None, max_bytes: int | None = None) -> dict[str, Any]:
    """Analyze every document under ``inputs`` into ``out_dir``; return the summary dict.

    ``settings``: a ``Settings`` or its dict. ``jobs`` > 1 runs documents in that many
    processes (spawned, one model each, one document at a time each).
    """
    from chunkscope.analysis import Settings

    t_start = time.perf_counter()
    if settings is None:
        settings = Settings()
    s_dict = settings.to_dict() if hasattr(settings, "to_dict") else Settings.from_dict(settings).to_dict()
    out = Path(out_dir)
    items, ignored = discover(inputs, exclude=[out])
    if not items:
        shown = inputs if isinstance(inputs, (str, os.PathLike)) else ", ".join(map(str, inputs))
        raise ValueError(f"{shown}: no documents found (looked for {', '.join(sorted(DOC_EXTENSIONS))}"
                         + (f"; {len(ignored)} file(s) ignored" if ignored else "") + ")")
    (out / "reports").mkdir(parents=True, exist_ok=True)
    llm = _llm_identity()

    entries: list[dict[str, Any]] = []
    todo: list[tuple[dict[str, Any], dict[str, Any]]] = []
    seen: dict[str, str] = {}
    for it in items:
        e: dict[str, Any] = {"path": str(it.path), "rel": it.rel, "name": it.path.stem, "domain": it.domain,
                             "mentions": str(it.mentions) if it.mentions else None}
        entries.append(e)
        try:
            it.sha256 = file_sha256(it.path)
            it.mentions_sha256 = file_sha256(it.mentions) if it.mentions else ""
        except OSError as exc:
            e.update(status="failed", reason=f"{it.path.name}: cannot read ({exc.strerror or exc})")
            continue
        d_settings = document_settings(s_dict, it.mentions)
        key = resume_key(it.sha256, it.mentions_sha256, d_settings, llm)
        base = f"reports/{_slug(it.path.stem)}-{key[:16]}"
        e.update(sha256=it.sha256, key=key)
        if base in seen:
            e.update(status="skipped", reason=f"same name and content as {seen[base]}")
            continue
        seen[base] = it.rel
        rp, wp = out / f"{base}.json", out / f"{base}.winners.jsonl"
        if rp.is_file() and wp.is_file():
            try:
                rep = json.loads(rp.read_text(encoding="utf-8"))
                e.update(status="skipped", reason="already analyzed with the same settings", resumed=True,
                         report=f"{base}.json", winners=f"{base}.winners.jsonl",
                         name=rep["document"].get("name", e["name"]), tokens=rep["document"].get("tokens", 0),
                         winner=rep.get("winner"), seconds=0.0, language=rep["document"].get("language", ""))
                continue
            except (OSError, json.JSONDecodeError, KeyError):
                pass  # a damaged report: analyze again
        e["_base"] = base
        todo.append((e, d_settings))

    total = len(entries)
    done = sum(1 for e in entries if "status" in e)
    if progress:
        k = 0
        for e in entries:
            if "status" in e:  # announce skipped/unreadable ones first
                k += 1
                progress(k, total, e)
        progress(done, total, {"status": "start", "name": "", "todo": len(todo)})

    def finish(e: dict[str, Any], res: dict[str, Any]) -> None:
        base = e.pop("_base")
        e["seconds"] = round(res.get("seconds", 0.0), 3)
        if res.get("status") == "ok":
            rep = res["report"]
            _write_jsonl(out / f"{base}.winners.jsonl", res.get("winners", []))
            _write_json(out / f"{base}.json", rep)
            e.update(status="ok", reason="", report=f"{base}.json", winners=f"{base}.winners.jsonl",
                     name=rep["document"].get("name", e["name"]), tokens=rep["document"].get("tokens", 0),
                     winner=rep.get("winner"), language=rep["document"].get("language", ""),
                     failed_chunkers={c["id"]: c.get("reason", "") for c in rep.get("chunkings", [])
                                      if c.get("status") == "failed"})
        else:
            e.update(status="failed", reason=res.get("reason") or "unknown error")

    run_t0 = time.perf_counter()
    if todo:
        if jobs <= 1:
            for e, ds in todo:
                if progress:
                    progress(done, total, {"status": "running", "name": e["name"], "rel": e["rel"]})
                finish(e, analyze_file(e["path"], ds, max_bytes))
                done += 1
                if progress:
                    progress(done, total, e)
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed

            ctx = mp.get_context("spawn")  # fork after torch/threads is unsafe
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=ctx, initializer=init_worker,
                                     initargs=(s_dict.get("embedder"), s_dict.get("embedding_mode", "composed"),
                                               s_dict.get("embedding_backend", "auto"))) as ex:
                futs = {ex.submit(analyze_file, e["path"], ds, max_bytes): e for e, ds in todo}
                for f in as_completed(futs):
                    e = futs[f]
                    try:
                        res = f.result()
                    except Exception as exc:  # a worker died (e.g. out of memory): that document fails
                        res = {"status": "failed", "reason": f"worker failed: {type(exc).__name__}: {exc}"}
                    finish(e, res)
                    done += 1
                    if progress:
                        progress(done, total, e)
    run_s = time.perf_counter() - run_t0

    write_tables(out, entries)
    counts = {k: sum(1 for e in entries if e.get("status") == k) for k in ("ok", "skipped", "failed")}
    analyzed = [e for e in entries if e.get("status") == "ok"]
    tokens_now = sum(int(e.get("tokens") or 0) for e in analyzed)
    summary = {
        "schema": SCHEMA,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "inputs": [str(x) for x in ([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)],
        "jobs": jobs,
        "settings": s_dict,
        "counts": {**counts, "documents": len(entries), "with_report": sum(1 for e in entries if e.get("report"))},
        "documents": entries,
        "ignored": ignored,
        "timings": {
            "total": round(time.perf_counter() - t_start, 3),
            "analysis_wall": round(run_s, 3),
            "documents_analyzed": len(analyzed),
            "tokens_analyzed": tokens_now,
            "documents_per_minute": round(60 * len(analyzed) / run_s, 3) if analyzed and run_s > 0 else None,
            "tokens_per_second": round(tokens_now / run_s, 1) if analyzed and run_s > 0 else None,
        },
    }
    _write_json(out / "summary.json", summary)
    return summary


def load_summary(results_dir: str | os.PathLike) -> dict[str, Any]:
    p = Path(results_dir) / "summary.json"
    if not p.is_file():
        raise ValueError(f"{results_dir}: no summary.json (not a chunkscope corpus results directory)")
    data = json.loads(p.read_text(encoding="utf-8"))
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{p}: not a corpus summary (schema {data.get('schema')!r})")
    return data
