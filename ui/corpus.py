"""Streamlit side of corpus mode: inputs, running with progress, tables, downloads, open a document.

The engine is ``chunkscope.corpus.run`` (running) and ``chunkscope.corpus.report`` (tables and figures); this
module only turns them into widgets. Nothing here computes a metric.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import zipfile
from dataclasses import replace
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

import streamlit as st

from chunkscope.analysis import Settings
from chunkscope.caching import cache_root
from chunkscope.ingest import SUPPORTED_EXTENSIONS
from chunkscope.report import METRICS, Report
from ui.common import md_escape

RESULTS_KEY = "cs_corpus_results"  # the results directory shown on the page
UPLOAD_TYPES = [*(e.lstrip(".") for e in SUPPORTED_EXTENSIONS), "parquet"]


def work_dir() -> Path:
    """Where uploads and results go: this session's private workspace in shared mode."""
    from ui.share import session_workspace

    ws = session_workspace()
    if ws is not None:
        return ws.sub("corpus")
    base = cache_root("scratch") / "corpus"
    base.mkdir(parents=True, exist_ok=True)
    return base


def default_results_dir(source: str) -> str:
    """A results folder per input (folder path or uploaded set), so re-runs resume."""
    return str(work_dir() / f"results-{hashlib.sha256(source.encode()).hexdigest()[:12]}")


def save_uploads(uploads) -> Path:
    """Write uploaded files into one folder named after their contents (mentions files beside them).

    A zip keeps its folders, so ``a/b/notes.md`` and ``c/notes.md`` stay two documents; a path given
    twice (two uploads named ``notes.md``) gets a distinct name (``notes (2).md``). Everything is
    written to a temporary folder first: a refused upload leaves nothing behind."""
    import shutil

    h = hashlib.sha256()
    for u in sorted(uploads, key=lambda u: u.name):
        h.update(u.name.encode())
        h.update(hashlib.sha256(u.getvalue()).digest())
    d = work_dir() / f"upload-{h.hexdigest()[:12]}"
    if d.is_dir():  # written on an earlier rerun (the name is the contents)
        return d
    part = Path(tempfile.mkdtemp(prefix=".partial-", dir=d.parent))
    try:
        for u in uploads:
            name = Path(u.name).name
            if name.lower().endswith(".zip"):
                extract_zip(u.getvalue(), part)
            else:
                _free_path(part, PurePosixPath(name)).write_bytes(u.getvalue())
        try:
            part.rename(d)
        except OSError:
            if not d.is_dir():
                raise
            shutil.rmtree(part, ignore_errors=True)  # another rerun finished first: same contents
    except BaseException:  # whatever stopped the copy (a rerun included): no partial folder left, then re-raised
        shutil.rmtree(part, ignore_errors=True)
        raise
    return d


def _free_path(dest: Path, rel: PurePosixPath) -> Path:
    """``dest/rel`` (its folders made), or ``stem (2).ext``, ``stem (3).ext``... beside it when that
    name is taken: two uploads, or an upload and a zip member, with the same path both stay."""
    target = dest.joinpath(*rel.parts)
    n = 2
    while target.exists():
        target = target.with_name(f"{Path(rel.name).stem} ({n}){Path(rel.name).suffix}")
        n += 1
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def _zip_member(filename: str) -> PurePosixPath | None:
    """The path a zip member is unpacked to, relative to the upload folder, or None when it is left out:
    folders, hidden files (``.x``, ``__MACOSX``), a ``..`` (nothing outside the folder), and files that are
    no document or mentions file."""
    from chunkscope.corpus.discover import DOC_EXTENSIONS

    parts = [p for p in filename.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or filename.endswith(("/", "\\")):
        return None
    if any(p == ".." or p.startswith(".") or p == "__MACOSX" for p in parts):
        return None
    if not parts[-1].lower().endswith((*DOC_EXTENSIONS, ".parquet")):
        return None
    return PurePosixPath(*parts)


ZIP_TOTAL_FACTOR = 4  # a zip may unpack to this many times the upload limit in all


def extract_zip(data: bytes, dest: Path) -> None:
    """The documents of an uploaded zip into ``dest``, in their folders (see ``_zip_member``), bounded
    size: each file within the upload limit, all of them within ``ZIP_TOTAL_FACTOR`` times it. The
    sizes the zip declares are checked before anything is written; what was written is removed when a
    check while unpacking (a zip that lies about its sizes) refuses it."""
    from chunkscope.ingest import resolve_max_bytes
    from chunkscope.sharing import ShareError

    limit = resolve_max_bytes()
    mb = f"{limit / (1024 * 1024):g} MB"
    too_big = f"the zip unpacks to more than {ZIP_TOTAL_FACTOR} × the upload limit ({mb}) in all"
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ShareError("the uploaded zip cannot be read") from None
    with zf:
        members = [(info, rel) for info in zf.infolist() if (rel := _zip_member(info.filename)) is not None]
        for info, rel in members:
            if info.file_size > limit:
                raise ShareError(f"{rel} in the zip unpacks to more than the upload limit ({mb})")
        if sum(info.file_size for info, _ in members) > ZIP_TOTAL_FACTOR * limit:
            raise ShareError(too_big)
        written: list[Path] = []
        try:
            total = 0
            for info, rel in members:
                try:
                    with zf.open(info) as src:
                        data_i = src.read(limit + 1)
                except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError) as exc:
                    raise ShareError(f"{rel} in the zip cannot be unpacked ({' '.join(str(exc).split())[:120]})") from None
                total += len(data_i)
                if len(data_i) > limit:
                    raise ShareError(f"{rel} in the zip unpacks to more than the upload limit ({mb})")
                if total > ZIP_TOTAL_FACTOR * limit:
                    raise ShareError(too_big)
                target = _free_path(dest, rel)
                written.append(target)
                target.write_bytes(data_i)
        except BaseException:  # a refused or interrupted unpacking: what it wrote is removed, then re-raised
            for p in reversed(written):
                p.unlink(missing_ok=True)
                for parent in p.relative_to(dest).parents:  # the folders made for it, when now empty
                    if parent != Path("."):
                        try:
                            (dest / parent).rmdir()
                        except OSError:
                            pass
            raise


RAY_ADDRESS_ENV = "CHUNKSCOPE_RAY_ADDRESS"  # the operator's cluster for Ray runs started from the page


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def ray_address() -> str | None:
    """The cluster a Ray run from the page joins: only the one the operator configured (the environment
    variable CHUNKSCOPE_RAY_ADDRESS), never an address typed on the page; unset: a local Ray instance."""
    return os.environ.get(RAY_ADDRESS_ENV) or None


MAX_JOBS = 64  # workers a run from the page may ask for on a machine of one's own


def max_jobs() -> int:
    """The most workers a corpus run from the page may start: the operator's ``max_workers`` on a
    shared server (each worker loads the embedding model, ~400 MB), else ``MAX_JOBS``."""
    from chunkscope.sharing import policy

    pol = policy()
    return pol.max_workers if pol.shared else MAX_JOBS


def run_options(engine: str, jobs: int):
    from chunkscope.corpus.run import RunOptions

    jobs = max(1, min(int(jobs), max_jobs()))  # enforced here too, not only by the widget's bounds
    if engine == "ray":
        return RunOptions(engine="ray", jobs=jobs, address=ray_address())
    return RunOptions(engine="local", jobs=jobs)


def run_with_progress(inputs: str, out_dir: str, settings: Settings, options=None) -> dict[str, Any] | None:
    """run_corpus with st.progress (done/failed, docs/min, ETA) and one status line per document;
    None (with st.error) on failure. ``options``: a chunkscope.corpus.run.RunOptions (default: local, 1 worker)."""
    from chunkscope.corpus.run import format_stats, run_corpus
    from chunkscope.sharing import ShareError, check_document, check_embedder, policy
    from ui.share import analysis_slot

    engine = getattr(options, "engine", "local")
    box = st.status(f"Analyzing the corpus ({'Ray' if engine == 'ray' else 'this machine'})…", expanded=True)
    try:
        check_embedder(policy(), settings.embedder)
    except ShareError as exc:
        box.update(label="Corpus run refused", state="error", expanded=True)
        st.error(str(exc))
        return None
    bar = box.progress(0.0, text="discovering documents")
    lines: list[str] = []
    log = box.empty()

    def progress(done: int, total: int, e: dict[str, Any]) -> None:
        status = e.get("status", "")
        frac = done / total if total else 1.0
        stats = format_stats(e["stats"]) if e.get("stats") else f"{done}/{total} documents"
        if status == "running":
            bar.progress(frac, text=f"{stats} · analyzing {e.get('rel') or e.get('name')}"[:160])
            return
        if status == "start":
            bar.progress(frac, text=f"{total} documents, {e.get('todo', 0)} to analyze"
                         + (" · starting Ray workers (each loads the model once)" if engine == "ray" else ""))
            return
        icon = {"ok": "✅", "skipped": "⏭️", "failed": "❌", "retry": "🔁"}.get(status, "•")
        extra = (f"winner {e.get('winner')}, {e.get('seconds', 0):.1f}s" if status == "ok" else e.get("reason", ""))
        if status == "retry":
            extra += " — sent to the next free worker"
        lines.append(f"{icon} {md_escape(str(e.get('rel') or e.get('name')))} — {md_escape(str(extra))}")
        bar.progress(frac, text=stats[:160])
        log.markdown("\n".join(f"- {ln}" for ln in lines[-30:]))

    pol = policy()
    if pol.shared:  # no file read through a link out of the operator's folder (or the session's uploads)
        top = pol.corpus_root.resolve() if pol.corpus_root else None
        src = Path(inputs).resolve()
        confine = top if top is not None and (src == top or top in src.parents) else src
        options = replace(options or run_options("local", 1), confine=str(confine),
                          document_check=partial(check_document, pol))  # its page and token limits
    try:
        with analysis_slot(box):  # a shared server runs a bounded number of analyses at once
            summary = run_corpus(inputs, out_dir, settings, progress=progress, options=options)
    except Exception as exc:  # boundary: whatever a run raises, the page shows one line, never a traceback
        box.update(label="Corpus run failed", state="error", expanded=True)
        st.error(f"Corpus run failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
        return None
    c = summary["counts"]
    box.update(label=f"{c['ok']} analyzed, {c['skipped']} skipped, {c['failed']} failed "
                     f"in {summary['timings']['total']:.1f} s ({summary.get('engine', 'local')}, "
                     f"{len(summary.get('workers') or [])} worker process(es))", state="complete", expanded=False)
    return summary


def _r(v: float, digits: int) -> float:
    return v if v != v else round(v, digits)  # NaN (e.g. std. dev. of one chunk) stays NaN


def frames(res) -> dict[str, Any]:
    """The corpus tables as pandas DataFrames (same numbers as `chunkscope corpus-report`)."""
    import pandas as pd

    from chunkscope.corpus import report as CR

    t2 = pd.DataFrame([{"chunker": ("* " if r["candidate"] and r["chunker"] != CR.ADAPTIVE else "") + r["chunker"],
                        "n": r["n"],
                        "mean": _r(r["mean"], 0), "max": r["max"], "min": r["min"], "std. dev.": _r(r["std"], 0),
                        "# chunks": r["chunks"], "time/doc [s]": _r(r["time"], 2)}
                       for r in CR.chunk_size_table(res)])
    t3rows = []
    for r in CR.metric_table(res):
        row = {"chunker": ("* " if r["candidate"] and r["chunker"] != CR.ADAPTIVE else "") + r["chunker"],
               "n": r["n"]}
        for m in METRICS:
            row[m] = f"{CR.fmt_number(r[m])} ± {CR.fmt_number(r[m + '_std'])}" if r[f"{m}_n"] else "–"
        row["mean"], row["score"] = round(r["mean"], 2), round(r["score"], 2)
        t3rows.append(row)
    t4 = pd.DataFrame(CR.selection_table(res))
    wil_rows: dict[str, dict[str, Any]] = {}
    for r in CR.wilcoxon_tests(res):
        row = wil_rows.setdefault(r["chunker"], {"vs chunker": ("* " if r["candidate"] else "") + r["chunker"]})
        row[r["metric"]] = ("–" if not r["documents"] else
                            f"{r['median_diff']:+.1f} (p {CR.fmt_p_value(r['p_holm'])}, n {r['n']})")
    dom = pd.DataFrame([{k: (", ".join(f"{a} {b}" for a, b in v.items()) if k == "selection" else v)
                         for k, v in d.items() if k != "scores"} for d in CR.domain_breakdown(res)])
    gaps = pd.DataFrame(CR.adaptive_gaps(res))
    docs = pd.DataFrame([{"document": e.get("name", ""), "domain": e.get("domain", ""), "language": e.get("language", ""),
                          "tokens": e.get("tokens"), "status": e.get("status", ""), "winner": e.get("winner") or "",
                          "seconds": e.get("seconds"), "reason": e.get("reason", ""), "path": e.get("rel", "")}
                         for e in res.summary.get("documents", [])])
    return {"chunk_sizes": t2, "metrics": pd.DataFrame(t3rows), "selection": t4, "wilcoxon": pd.DataFrame(list(wil_rows.values())), "domains": dom, "gaps": gaps, "documents": docs}


VIEW_KEY = "cs_corpus_view"  # (results key, CorpusResults, frames) of the folder last shown in this session


def results_key(results_dir: str | Path) -> tuple[str, int]:
    """What identifies one state of a results folder: its path and its summary's modification time."""
    d = Path(results_dir).resolve()
    try:
        mtime = (d / "summary.json").stat().st_mtime_ns
    except OSError:
        mtime = 0
    return str(d), mtime


def load_view(results_dir: str | Path) -> tuple[Any, dict[str, Any]]:
    """The corpus results and their tables (``frames``), computed once per results folder (and run) and
    session. Building them (the tables, the Wilcoxon tests) is work proportional to the corpus, so it
    holds one of the server's analysis slots, like an analysis: a shared server bounds it the same way.
    Raises ``OSError``/``ValueError`` for an unreadable folder."""
    from chunkscope.corpus import report as CR

    key = results_key(results_dir)
    cached = st.session_state.get(VIEW_KEY)
    if cached and cached[0] == key:
        return cached[1], cached[2]

    def read() -> tuple[Any, dict[str, Any]]:
        res = CR.CorpusResults.load(results_dir)
        return res, frames(res)

    res, f = in_slot("Reading the corpus results…", read)
    st.session_state[VIEW_KEY] = (key, res, f)
    return res, f


def in_slot(label: str, work):
    """Run ``work()`` (a report or zip build) inside one of the server's analysis slots."""
    from ui.share import analysis_slot

    box = st.status(label, expanded=False)
    with analysis_slot(box):
        out = work()
    box.update(label=label.rstrip("…") + ": done", state="complete", expanded=False)
    return out


def zip_bytes(results_dir: str | Path) -> bytes:
    """What the run wrote in the results folder (reports, tidy tables, winners, summary, HTML report)
    as a zip; nothing else that lies there (chunkscope.sharing.run_outputs)."""
    from chunkscope.sharing import run_outputs

    d = Path(results_dir).resolve()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in run_outputs(d):
            zf.write(p, p.relative_to(d))
    return buf.getvalue()


def open_in_inspector(entry: dict[str, Any], results_dir: str | Path) -> str:
    """Put the document and its corpus report where the inspector pages look; '' or an error line."""
    from chunkscope.ingest import IngestError, Limits, load_document
    from chunkscope.sharing import served_shared
    from ui import keys
    from ui.analysis import analysis_key, store_report

    if not entry.get("report"):
        return f"{entry.get('rel') or entry.get('name')}: no report ({entry.get('reason') or entry.get('status')})"
    try:
        doc = load_document(entry["path"], limits=Limits.from_env(shared=served_shared()))
        report = Report.load(Path(results_dir) / entry["report"])
    except (IngestError, OSError, ValueError) as exc:
        return f"cannot open {entry.get('name')}: {' '.join(str(exc).split())[:200]}"
    if report.document.get("sha256") != doc.sha256:
        return f"{entry.get('name')}: the file changed since the corpus run; run the corpus again"
    try:
        key = analysis_key(doc, Settings.from_dict(report.settings))
    except (ValueError, TypeError, KeyError):  # settings from another version: any unique key works for latest_report()
        key = f"corpus:{doc.sha256}"
    st.session_state[keys.DOCUMENT] = doc
    st.session_state[keys.DOC_SOURCE] = "external"  # the document picker keeps a document another page chose
    store_report(key, report)
    return ""
