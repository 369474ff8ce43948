"""Corpus mode: adaptive chunking over many documents (no Streamlit here).

Pieces, each usable on its own::

    discover(inputs, exclude=()) -> (list[CorpusItem], list[ignored dict])
    find_mentions(path) -> Path | None
    domain_of(path, root) -> str
    analyze_file(path, settings_dict) -> result dict     # the pure per-document task
    plan_corpus(inputs, store, settings_dict) -> (entries, tasks, ignored)   # discovery + resume, no model
    process_document(task, store) -> entry fields        # analyze_file + write_result: every engine calls it
    run_corpus(inputs, out_dir, settings, progress=None, options=RunOptions(engine="local"|"ray", jobs=N))

Engines: ``local`` (in-process, or a spawned process pool) here, ``ray`` in ``chunkscope.corpus.ray``;
both pin threads the same way (``pin_threads``) and write through ``write_result`` (atomic, see
``chunkscope.corpus.store``; ``out_dir`` may be an fsspec URI). docs/corpus.md has the details.

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
    metrics.parquet, metrics.csv          tidy long table (see TIDY_COLUMNS), one row set per document key
    winners.jsonl                         every document's winning chunks, concatenated (``document``: its key)
    summary.json                          schema chunkscope.corpus.run/1: documents ok/skipped/failed
    failed/<stem>-<key16>.json            why a document failed on its own (a rerun skips it; --retry-failed)

``key`` = sha256 of (file sha256, mentions file sha256, settings, LLM endpoint, provenance_key): a document
already analyzed with the same settings and the same bytes is skipped (resume); change
either and it is analyzed again. A failing document is recorded (status ``failed`` with a
one-line reason) and the run goes on.

**Document key** (the tables' ``document`` column, ``document`` in each summary entry): the file's path below
its input folder, '/'-separated (``a/notes/readme.md``); the path as given when two inputs hold the same
relative path (:func:`document_keys`). Unique within a run and the same on every resume, so two documents that
share a file name never share table rows.

**Interrupts**: see :func:`catch_interrupts` (an interrupted document is never recorded as failed).

**Mentions pickup**: for ``.../X/parsed/STEM.json`` the file ``.../X/mentions/STEM.parquet``
(or ``.json``), as in the reference data; or ``STEM.mentions.parquet|json`` beside the
file. When found and the coreference backend is ``heuristic`` or ``precomputed``, that
document is scored with the precomputed pairs; a file that does not fit the document fails it, with the
reason ``analyze --mentions`` gives (``check_mentions``).

**Domain**: a reference-style stem ``"Persona (label)_title"`` gives ``label`` (``légal`` ->
legal, ``technique`` -> technical, ``sciences sociales`` -> social, anything else lowercased);
otherwise the name of the folder holding the file when it is below the input root and not a
generic name (parsed, docs, data...); otherwise ``""`` (no domain).
"""

from __future__ import annotations

import contextlib
import glob as _glob
import hashlib
import json
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from chunkscope.caching import BoundedCache
from chunkscope.corpus.store import ResultStore
from chunkscope.ingest import SUPPORTED_EXTENSIONS
from chunkscope.report import METRICS
from chunkscope.report import dumps as report_dumps

SCHEMA = "chunkscope.corpus.run/1"
DOC_EXTENSIONS = tuple(SUPPORTED_EXTENSIONS)  # what ingest reads
MAX_IGNORED_LISTED = 1000  # files named under summary.json's "ignored"; beyond, a count
# what a run (and ``corpus-report``) writes at the top of a results directory, besides the reports and
# winners its summary lists: a download holds these and nothing else (chunkscope.sharing.run_outputs)
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
             exclude: Iterable[str | os.PathLike] = (), confine: str | os.PathLike | None = None,
             ) -> tuple[list["CorpusItem"], list[dict[str, str]]]:
    """Documents under each input (a directory, searched recursively; a glob; or a file).

    Returns (items sorted by path, ignored) where ignored lists files that are not documents
    (mentions files, other file types, JSON that is neither a reference nor a ChunkScope document) with why;
    hidden files are passed over in silence.
    Raises ``ValueError`` when an input matches nothing at all. ``confine``: files (and mentions
    files) that resolve outside this folder, through a symlink, are ignored and listed.
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    excluded = [Path(e).resolve() for e in exclude]
    inside = _inside(confine)
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
            if not inside(rf):
                ignored.append({"path": str(f), "reason": "a link to a file outside the shared folder"})
                continue
            if _is_hidden(f, root):
                continue
            if _is_mentions_file(f, root):
                ignored.append({"path": str(f), "reason": "coreference mentions file"})
                continue
            if f.suffix.lower() not in DOC_EXTENSIONS:  # said, so that a user looking for a file finds why
                ignored.append({"path": str(f), "reason": f"not a document type ({f.suffix.lower() or 'no extension'};"
                                                          f" read: {', '.join(DOC_EXTENSIONS)})"})
                continue
            if f.suffix.lower() == ".json":
                kind = _json_kind(f)
                if kind == "other":
                    ignored.append({"path": str(f), "reason": "JSON that is not a document (no full_text/split_points or text/blocks)"})
                    continue
            if rf not in items:
                items[rf] = CorpusItem(path=f, root=root, mentions=find_mentions(f, confine), domain=domain_of(f, root))
    ignored = list({i["path"]: i for i in ignored}.values())  # overlapping inputs: each file once
    if len(ignored) > MAX_IGNORED_LISTED:  # a folder of 20,000 images: the first ones and a count
        more = len(ignored) - MAX_IGNORED_LISTED
        ignored = ignored[:MAX_IGNORED_LISTED] + [{"path": "…", "reason": f"and {more:,} more files not listed"}]
    return sorted(items.values(), key=lambda it: str(it.path)), ignored


def _inside(confine: str | os.PathLike | None) -> Callable[[Path], bool]:
    """``inside(resolved_path)``: whether it lies in the folder ``confine`` (always, without one)."""
    if confine is None:
        return lambda _p: True
    top = Path(confine).resolve()
    return lambda p: p == top or top in p.parents


def find_mentions(path: str | os.PathLike, confine: str | os.PathLike | None = None) -> Path | None:
    """Precomputed mentions for a document file, or None (see module doc for the places looked at).
    ``confine``: only a file that resolves inside this folder (see :func:`discover`)."""
    p = Path(path)
    stem = p.stem
    inside = _inside(confine)
    for ext in (".parquet", ".json"):
        beside = p.with_name(f"{stem}.mentions{ext}")
        if beside.is_file() and inside(beside.resolve()):
            return beside
    for folder in (p.parent.parent / MENTIONS_DIR, p.parent / MENTIONS_DIR):
        for ext in (".parquet", ".json"):
            cand = folder / f"{stem}{ext}"
            if cand.is_file() and (real := cand.resolve()) != p.resolve() and inside(real):
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
    from chunkscope.llm import LLMSettings, cache_identity_of

    # a corrected key re-runs (llm-regex may have failed); unreadable settings: a never-matching key
    return cache_identity_of(LLMSettings.from_env)


def not_run(report: dict[str, Any]) -> dict[str, str]:
    """The chunkings of a report that gave no result, with why ("skipped: no LLM endpoint configured")."""
    return {c["id"]: f"{c.get('status', '')}: {c.get('reason', '')}" for c in report.get("chunkings", [])
            if c.get("status") != "ok"}


def not_run_lines(entries: list[dict[str, Any]]) -> list[str]:
    """One line per chunking that gave no result on some documents of a run: how many, and why."""
    counts = Counter(item for e in entries for item in (e.get("not_run") or {}).items())
    return [f"not run: {cid} on {n} document(s) ({why})" for (cid, why), n in counts.items()]


def resume_key(file_sha: str, mentions_sha: str, settings_dict: dict[str, Any], llm: dict[str, Any] | None = None,
               suffix: str = "") -> str:
    """What decides whether a document must be analyzed again: its bytes *and* format (``suffix``: x.md
    and x.txt with the same bytes load as different documents), its mentions' bytes, the settings, the
    LLM endpoint and the provenance (engine version, model, backend, precision) of the numbers."""
    from chunkscope.provenance import provenance_key

    d = dict(settings_dict)
    d.pop("mentions", None)  # the path may move; its content hash is in the key instead
    blob = json.dumps([file_sha, suffix.lower(), mentions_sha, d, llm or {}, provenance_key(d)], sort_keys=True,
                      default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _slug(name: str, limit: int = 60) -> str:
    s = re.sub(r"[^\w.()\-]+", "_", name, flags=re.UNICODE).strip("._")
    return (s or "document")[:limit]


def document_keys(entries: list[dict[str, Any]]) -> list[str]:
    """The document key of each summary entry (see module doc): its ``document`` when set, else its path
    below its input ('/'-separated; ``rel``), else its path as given when another entry has the same ``rel``.
    Summaries written before the key existed get the same keys a run writes now."""
    def rel(e: dict[str, Any]) -> str:
        return str(e.get("rel") or e.get("name") or e.get("path") or "").replace(os.sep, "/")

    counts: dict[str, int] = {}
    for e in entries:
        if not e.get("document"):
            counts[rel(e)] = counts.get(rel(e), 0) + 1
    return [str(e["document"]) if e.get("document")
            else rel(e) if counts[rel(e)] == 1 or not e.get("path") else str(e["path"]) for e in entries]


# ------------------------------------------------------------------------------ threads
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
              "NUMEXPR_NUM_THREADS")


def default_threads(jobs: int) -> int:
    """Threads per worker when not given: this machine's cores shared by the workers (at least 1)."""
    return max(1, (os.cpu_count() or 1) // max(1, jobs))


def pin_threads(n: int) -> dict[str, Any]:
    """Pin the math libraries of this process to ``n`` threads (env for OpenMP/MKL/BLAS started later,
    ``torch.set_num_threads`` now). Every engine calls it the same way in each worker, so a document's
    numbers never depend on which engine or node ran it. Returns what :func:`unpin_threads` restores."""
    prev: dict[str, Any] = {"env": {k: os.environ.get(k) for k in THREAD_ENV}, "torch": None}
    for k in THREAD_ENV:
        os.environ[k] = str(n)
    try:
        import torch

        prev["torch"] = torch.get_num_threads()
        torch.set_num_threads(n)
    except ImportError:  # no torch: the embedder reports itself unavailable per document
        pass
    return prev


def unpin_threads(prev: dict[str, Any]) -> None:
    for k, v in prev.get("env", {}).items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    if prev.get("torch"):
        import torch

        torch.set_num_threads(prev["torch"])


# ------------------------------------------------------------------------------ interrupts
INTERRUPTED = threading.Event()  # set by catch_interrupts' handlers, while they are installed


def _on_sigint(signum: int, frame: Any) -> None:
    INTERRUPTED.set()
    raise KeyboardInterrupt


def catch_interrupts() -> Callable[[], None]:
    """Make Ctrl-C an interrupt, never a document's failure (the ``chunkscope`` command calls it); returns what
    restores the previous handlers (and clears ``INTERRUPTED``).

    The analysis runs model calls in threads while its own thread helps them, and a KeyboardInterrupt raised
    in the middle of such a call can be caught there and resurface in another thread as some other error
    (``KeyError: 'result'``) or not at all. So SIGINT is remembered in ``INTERRUPTED`` before it is raised (only
    where Python's default handler is installed: an ignored SIGINT stays ignored), a thread that dies of the
    interrupt sets it too and prints no traceback, and once it is set :func:`analyze_file` stops the
    analysis and raises KeyboardInterrupt whatever the outcome: the document is neither written nor recorded
    as failed, and a resume analyzes it again."""
    INTERRUPTED.clear()
    prev_hook = threading.excepthook

    def hook(a: threading.ExceptHookArgs) -> None:
        if a.exc_type is not None and issubclass(a.exc_type, KeyboardInterrupt):
            INTERRUPTED.set()
            return
        prev_hook(a)

    threading.excepthook = hook
    installed = (threading.current_thread() is threading.main_thread()
                 and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if installed:
        signal.signal(signal.SIGINT, _on_sigint)

    def restore() -> None:
        INTERRUPTED.clear()
        threading.excepthook = prev_hook
        if installed and signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)

    return restore


def _init_pool_worker(*args: Any) -> None:
    """A local pool worker's start: Ctrl-C is ignored (the terminal sends it to the whole process group; the
    parent ends the workers, see ``_stop_pool``), then :func:`init_worker`. The worker was started with SIGINT
    blocked (``_run_local``), so one sent while it started up is dropped here, never a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    init_worker(*args)


# ------------------------------------------------------------------------------ the pure task
_RESOURCES: BoundedCache[tuple[Any, str, str], Any] = BoundedCache(1)  # one model per process (read-only once loaded)


def _resources(embedder: str | None, mode: str, backend: str = "auto"):
    from chunkscope.analysis import Resources

    return _RESOURCES.get_or_compute((embedder, mode, backend), lambda: Resources(embedder, mode, backend=backend))


def init_worker(embedder: str | None = None, mode: str = "composed", threads: int | None = None,
                backend: str = "auto") -> None:
    """A worker's start (process pool initializer, Ray actor constructor): pin the thread counts, then
    load the embedding model and spaCy's sentence pipeline once for the documents to come."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if threads:
        pin_threads(threads)
    try:
        _resources(embedder, mode, backend).embedder()
    except Exception:  # a missing model is reported per document (ICC/DCC None with the reason)
        pass
    try:
        from chunkscope.text.sentences import segmenter_name

        segmenter_name()  # loads the spaCy senter pipeline (regex fallback when absent)
    except Exception:  # pragma: no cover - reported when a document needs it
        pass


def _fresh_embedding_cache(res) -> None:
    """A document's vectors come from its own texts only. The model's vector for a text depends (~1e-8)
    on the batch it was computed in, so a vector cached while analysing another document would make a
    document's numbers depend on which documents its worker saw before -- on the engine, the number of
    workers and the schedule. In corpus mode each document starts with an empty in-memory vector cache
    and the on-disk cache shared by the workers is not used: every engine gives the same numbers."""
    emb = res.loaded_embedder()
    if emb is not None:
        emb.detach_disk_cache()
        emb.clear_memory_cache()


def _release_document_memory(res) -> None:
    """Drop what one document left in process caches keyed by its text (span embedders, embedding
    vectors, token counts of its chunk texts, sentence units), so a worker's memory is bounded by one
    document and the next document starts clean (see _fresh_embedding_cache)."""
    from chunkscope.text import sentences, tokens

    _fresh_embedding_cache(res)
    res.forget_documents()
    tokens.clear_cache()
    sentences.clear_cache()


def analyze_file(path: str | os.PathLike, settings_dict: dict[str, Any], max_bytes: int | None = None) -> dict[str, Any]:
    """Analyze one file: ``{"status": "ok", "report": {...}, "winners": [...], ...}`` or
    ``{"status": "failed", "reason": one line}``. Never raises for a bad document."""
    from chunkscope.analysis import Settings, analyze
    from chunkscope.report import chunk_records

    t0 = time.perf_counter()
    out: dict[str, Any] = {"path": str(path), "status": "failed", "reason": "", "pid": os.getpid()}
    try:
        settings = Settings.from_dict(settings_dict)
        from chunkscope.ingest import Limits, load_document
        from chunkscope.sharing import check_document, policy, served_shared

        doc = load_document(path, limits=Limits.from_env(max_bytes, shared=served_shared()))

        check_document(policy(), doc)  # a shared server's page and token limits, as for one upload
        from chunkscope.analysis.coreference import check_mentions
        from chunkscope.coref import CorefError

        try:  # a mentions file found beside the document that does not fit it: failed, as analyze refuses it
            check_mentions(doc, settings)
        except CorefError as exc:
            raise ValueError(f"mentions: {exc}") from None
        parse_s = time.perf_counter() - t0
        res = _resources(settings.embedder, settings.embedding_mode, settings.embedding_backend)
        try:
            res.embedder()  # loaded once per process (init_worker); a missing model is reported by analyze
        except Exception:
            pass
        _fresh_embedding_cache(res)
        try:
            report = analyze(doc, settings, res, cancel=INTERRUPTED.is_set)
        finally:
            _release_document_memory(res)
        report.timings["parse"] = parse_s
        report.timings["total"] = report.timings.get("total", 0.0) + parse_s
        winners = list(chunk_records(report, doc.text, heading_path=doc.chunk_heading_path, page_of=doc.page_of,
                                      boxes=doc.boxes if doc.geometry is not None else None))
        out.update(status="ok", report=report.to_dict(), winners=winners, name=doc.name,
                   tokens=report.document.get("tokens", 0), winner=report.winner)
    except (ValueError, OSError) as exc:  # IngestError is a ValueError: the user's input
        out["reason"] = " ".join(str(exc).split()) or type(exc).__name__
    except Exception as exc:  # a bug must not stop the corpus; keep where it happened
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
        out["reason"] = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())}{where}"
    if INTERRUPTED.is_set():  # whatever came out after Ctrl-C is not this document's result (catch_interrupts)
        raise KeyboardInterrupt
    out["seconds"] = time.perf_counter() - t0
    return out


# ------------------------------------------------------------------------------ one document, every engine
FAULT_ENV = "CHUNKSCOPE_TEST_CRASH_ONCE"  # tests only: a folder of claim flags (see _maybe_crash)
FAULT_MARK = "crash-worker"


def _maybe_crash(task: dict[str, Any]) -> None:
    """Fault injection for the killed-worker tests: with ``CHUNKSCOPE_TEST_CRASH_ONCE=DIR`` set, the first
    worker that takes a document whose file name contains ``crash-worker`` dies on the spot
    (``os._exit``, as a kill or the out-of-memory killer would); the claim flag in DIR makes the retry
    go through. Without the variable this does nothing."""
    flags = os.environ.get(FAULT_ENV)
    if not flags or FAULT_MARK not in Path(task["path"]).name:
        return
    try:
        fd = os.open(os.path.join(flags, f"{task['key'][:16]}.crashed"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os._exit(17)


def worker_id() -> str:
    """'NODE:PID' of this process (NODE = the Ray node id prefix, else the host name)."""
    node = ""
    ray = sys.modules.get("ray")  # imported in a Ray worker; a local run never imports it
    if ray is not None:
        try:
            if ray.is_initialized():
                node = ray.get_runtime_context().get_node_id()[:8]
        except Exception:  # not in a Ray worker after all
            node = ""
    if not node:
        import socket

        node = socket.gethostname()
    return f"{node}:{os.getpid()}"


def _failed_marker(base: str) -> str:
    """``failed/STEM-KEY16.json`` for ``reports/STEM-KEY16``: the reason a document failed on its own."""
    return "failed/" + base.split("/", 1)[-1] + ".json"


def write_result(store: ResultStore, base: str, res: dict[str, Any]) -> dict[str, Any]:
    """THE writer of a document's result (every engine): winners, then the report (the report is the
    commit mark resume looks for), each written atomically. Returns the entry fields of the summary."""
    upd: dict[str, Any] = {"seconds": round(res.get("seconds", 0.0), 3), "worker": res.get("worker", "")}
    if res.get("status") != "ok":
        upd.update(status="failed", reason=res.get("reason") or "unknown error")
        # the document failed on its own (same bytes + settings fail again): remembered, so a rerun skips it
        # (--retry-failed tries again); a dead worker never gets here
        store.write_text(_failed_marker(base), json.dumps({"reason": upd["reason"]}, ensure_ascii=False))
        return upd
    rep = res["report"]
    store.write_text(f"{base}.winners.jsonl",
                     "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in res.get("winners", [])))
    store.write_text(f"{base}.json", report_dumps(rep))
    upd.update(status="ok", reason="", report=f"{base}.json", winners=f"{base}.winners.jsonl",
               name=rep["document"].get("name", ""), tokens=rep["document"].get("tokens", 0),
               winner=rep.get("winner"), language=rep["document"].get("language", ""),
               not_run=not_run(rep),
               failed_chunkers={c["id"]: c.get("reason", "") for c in rep.get("chunkings", [])
                                if c.get("status") == "failed"})
    return upd


def process_document(task: dict[str, Any], store: ResultStore | str) -> dict[str, Any]:
    """Analyze one planned document and write its result: the one per-document function every engine
    calls (in-process, process pool, Ray actor). Idempotent: a retry rewrites the same files."""
    if not isinstance(store, ResultStore):
        store = ResultStore(store)
    _maybe_crash(task)
    res = analyze_file(task["path"], task["settings"], task.get("max_bytes"))
    res["worker"] = worker_id()
    try:
        return write_result(store, task["base"], res)
    except OSError as exc:  # the results root is not writable from this worker
        return {"status": "failed", "reason": f"cannot write the result to {store.display(task['base'])}: {exc}",
                "seconds": round(res.get("seconds", 0.0), 3), "worker": res["worker"]}


# ------------------------------------------------------------------------------ tables
def tidy_rows(report: dict[str, Any], domain: str = "", document: str | None = None) -> list[dict[str, Any]]:
    """Tidy long rows (TIDY_COLUMNS) of one report dict: one row per (chunking, measure). ``document``: the
    document key (:func:`document_keys`; default: the report's document name)."""
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


def write_tables(out_dir: str | os.PathLike | ResultStore, entries: list[dict[str, Any]]) -> None:
    """metrics.parquet/.csv and winners.jsonl from every entry that has a report (one row set per
    document entry: a document appears once however many times it was tried), keyed by the document key
    (:func:`document_keys`)."""
    import pandas as pd

    store = out_dir if isinstance(out_dir, ResultStore) else ResultStore(out_dir)
    rows: list[dict[str, Any]] = []
    with store.open_write("winners.jsonl") as wfh:
        for e, key in zip(entries, document_keys(entries)):
            if not e.get("report"):
                continue
            try:
                rep = json.loads(store.read_text(e["report"]))
            except (OSError, json.JSONDecodeError):
                continue
            rows.extend(tidy_rows(rep, e.get("domain", ""), key))
            del rep
            if not e.get("winners"):
                continue
            try:
                lines = store.read_text(e["winners"]).splitlines()
            except OSError:
                continue
            for line in lines:
                if line.strip():
                    rec = json.loads(line)
                    rec["document"], rec["domain"] = key, e.get("domain", "")
                    wfh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    df = pd.DataFrame(rows, columns=list(TIDY_COLUMNS))
    df["value"] = df["value"].astype("float64")
    store.write_parquet("metrics.parquet", df)
    store.write_text("metrics.csv", df.to_csv(index=False))


# ------------------------------------------------------------------------------ the runner
ENGINES = ("local", "ray")


@dataclass
class RunOptions:
    """How to run (not what: that is Settings). ``jobs``: workers for either engine; ``threads``: math
    threads per worker (default: this machine's cores / jobs); Ray only: ``address`` (None: start a
    local Ray instance; "auto" or "ray://HOST:PORT": join that cluster), ``gpus_per_worker``,
    ``max_retries`` (tries after a worker died mid-document). ``retry_failed``: analyze again the documents
    that failed on their own in an earlier run (by default a rerun skips them, keeping their reason).
    ``confine``: a folder no file read may lie outside of, links resolved (a shared server's
    ``corpus_root``: a symlink planted there must not serve a server file)."""

    engine: str = "local"
    jobs: int = 1
    threads: int | None = None
    address: str | None = None
    gpus_per_worker: float = 0.0
    max_retries: int = 2
    retry_failed: bool = False
    confine: str | None = None  # every file read (documents, mentions) must resolve inside this folder

    def validate(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"engine {self.engine!r}: choose one of {', '.join(ENGINES)}")
        if self.jobs < 1:
            raise ValueError("--jobs must be >= 1")
        if self.threads is not None and self.threads < 1:
            raise ValueError("--threads-per-worker must be >= 1")
        if self.gpus_per_worker < 0:
            raise ValueError("--gpus-per-worker must be >= 0")
        if self.engine != "ray" and (self.address or self.gpus_per_worker):
            raise ValueError("--address and --gpus-per-worker need --engine ray")


class RunStats:
    """Done/failed counts, throughput and ETA of a run (what progress displays show)."""

    def __init__(self, total: int, todo: int):
        self.total, self.todo = total, todo
        self.done = total - todo  # skipped / unreadable documents are done from the start
        self.ok = self.failed = self.retried = 0
        self.t0 = time.perf_counter()

    def finished(self, status: str) -> None:
        self.done += 1
        if status == "ok":
            self.ok += 1
        elif status == "failed":
            self.failed += 1

    def as_dict(self) -> dict[str, Any]:
        elapsed = time.perf_counter() - self.t0
        analyzed = self.ok + self.failed
        rate = analyzed / elapsed if elapsed > 0 and analyzed else 0.0
        left = self.todo - analyzed
        return {"done": self.done, "total": self.total, "ok": self.ok, "failed": self.failed, "retried": self.retried,
                "left": left, "elapsed": round(elapsed, 1), "per_minute": round(60 * rate, 2),
                "eta": round(left / rate, 1) if rate else None}


def format_stats(st: dict[str, Any]) -> str:
    """One line: '12/40 done · 1 failed · 3.2 docs/min · ETA 8m45s' (the CLI and the Corpus page)."""
    eta = st.get("eta")
    eta_s = "-" if eta is None else (f"{int(eta // 60)}m{int(eta % 60):02d}s" if eta >= 60 else f"{eta:.0f}s")
    return (f"{st['done']}/{st['total']} done · {st['failed']} failed · {st['per_minute']:.1f} docs/min · ETA {eta_s}"
            + (f" · {st['retried']} retried" if st.get("retried") else ""))


def plan_corpus(inputs, store: ResultStore, s_dict: dict[str, Any], max_bytes: int | None = None,
                retry_failed: bool = False, confine: str | os.PathLike | None = None,
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, str]]]:
    """Discovery and resume, with no model loaded: (entries, tasks, ignored). Entries of documents done
    before (same bytes, settings, LLM and provenance) are complete -- analyzed, or failed on their own
    (unless ``retry_failed``); each task is one document to analyze."""
    out_local = store.local_dir
    items, ignored = discover(inputs, exclude=[out_local] if out_local else [], confine=confine)
    if not items:
        shown = inputs if isinstance(inputs, (str, os.PathLike)) else ", ".join(map(str, inputs))
        raise ValueError(f"{shown}: no documents found (looked for {', '.join(sorted(DOC_EXTENSIONS))}"
                         + (f"; {len(ignored)} file(s) ignored" if ignored else "") + ")")
    llm = _llm_identity()
    entries: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for it in items:
        e: dict[str, Any] = {"path": str(it.path), "rel": it.rel, "document": "",  # the key: set below
                             "name": it.path.stem, "domain": it.domain,
                             "mentions": str(it.mentions) if it.mentions else None}
        entries.append(e)
        try:
            it.sha256 = file_sha256(it.path)
            it.mentions_sha256 = file_sha256(it.mentions) if it.mentions else ""
        except OSError as exc:
            e.update(status="failed", reason=f"{it.path.name}: cannot read ({exc.strerror or exc})")
            continue
        d_settings = document_settings(s_dict, it.mentions)
        key = resume_key(it.sha256, it.mentions_sha256, d_settings, llm, suffix=it.path.suffix)
        base = f"reports/{_slug(it.path.stem)}-{key[:16]}"
        e.update(sha256=it.sha256, key=key)
        if base in seen:
            e.update(status="skipped", reason=f"same name and content as {seen[base]}")
            continue
        seen[base] = it.rel
        if store.is_file(f"{base}.json") and store.is_file(f"{base}.winners.jsonl"):
            try:
                rep = json.loads(store.read_text(f"{base}.json"))
                e.update(status="skipped", reason="already analyzed with the same settings", resumed=True,
                         report=f"{base}.json", winners=f"{base}.winners.jsonl",
                         name=rep["document"].get("name", e["name"]), tokens=rep["document"].get("tokens", 0),
                         winner=rep.get("winner"), language=rep["document"].get("language", ""),
                         # what the analysis took when it ran (the run's own time is in "timings")
                         seconds=round(float((rep.get("timings") or {}).get("total") or 0.0), 3),
                         not_run=not_run(rep))
                continue
            except (OSError, json.JSONDecodeError, KeyError):
                pass  # a damaged report: analyze again
        elif not retry_failed and store.is_file(_failed_marker(base)):
            try:
                why = json.loads(store.read_text(_failed_marker(base))).get("reason", "")
                e.update(status="failed", reason=why, resumed=True, seconds=0.0)
                continue
            except (OSError, json.JSONDecodeError, AttributeError):
                pass  # a damaged marker: analyze again
        tasks.append({"index": len(entries) - 1, "path": str(it.path), "base": base, "key": key,
                      "settings": d_settings, "max_bytes": max_bytes, "name": it.path.stem, "rel": it.rel})
    for e, doc_key in zip(entries, document_keys(entries)):
        e["document"] = doc_key
    return entries, tasks, ignored


def _run_local(tasks: list[dict[str, Any]], store: ResultStore, opts: RunOptions, s_dict: dict[str, Any],
               started: Callable[[dict[str, Any]], None], finished: Callable[[dict[str, Any], dict[str, Any]], None]) -> None:
    threads = opts.threads or default_threads(opts.jobs)
    if opts.jobs <= 1 or len(tasks) == 1:
        prev = pin_threads(threads)
        try:
            for t in tasks:
                started(t)
                finished(t, process_document(t, store))
        finally:
            unpin_threads(prev)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ctx = mp.get_context("spawn")  # fork after torch/threads is unsafe
    ex = ProcessPoolExecutor(max_workers=min(opts.jobs, len(tasks)), mp_context=ctx, initializer=_init_pool_worker,
                             initargs=(s_dict.get("embedder"), s_dict.get("embedding_mode", "composed"), threads,
                                       s_dict.get("embedding_backend", "auto")))
    workers: dict[int, Any] = getattr(ex, "_processes", {})  # filled as they start (the same dict); shutdown drops it
    try:
        futs = {}
        with _sigint_held():  # the workers start at submit
            for t in tasks:
                futs[ex.submit(process_document, t, store)] = t
                started(t)
        for f in as_completed(futs):
            t = futs[f]
            try:
                upd = f.result()
            except Exception as exc:  # the worker process died (killed, out of memory): the pool is broken
                upd = {"status": "failed", "reason": f"worker failed: {type(exc).__name__}: {exc}"}
            finished(t, upd)
        ex.shutdown(wait=True)
    except BaseException:  # Ctrl-C: leaving must not wait for the documents still queued or running
        _stop_pool(ex, list(workers.values()))
        raise


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Ctrl-C held back while process pool workers start: they start with SIGINT blocked (inherited from this
    thread; ``_init_pool_worker`` then ignores it), so none prints a traceback from its start-up, and here it
    raises KeyboardInterrupt only once the block is over, never halfway through starting a worker (one the
    pool does not know yet would be left running). multiprocessing's resource tracker starts the same way."""
    held: list[int] = []
    swap = threading.current_thread() is threading.main_thread() and callable(signal.getsignal(signal.SIGINT))
    prev = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum)) if swap else None
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if hasattr(signal, "pthread_sigmask") else None
    try:
        yield
    finally:
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # one pending now comes in, to the held list
        if swap:
            signal.signal(signal.SIGINT, prev)
            if held and callable(prev):
                prev(signal.SIGINT, None)  # raises KeyboardInterrupt, as it would have


def _stop_pool(ex: Any, workers: list[Any]) -> None:
    """End a process pool's workers, then the pool (its queued documents are cancelled; a document cut short
    writes nothing: every write is atomic, and a resume analyzes it again). The workers go first: an orphan
    would wait for work forever, and the pool, broken, shuts down at once and releases its queues."""
    for p in workers:
        p.terminate()
    for p in workers:
        p.join(5)
        if p.is_alive():
            p.kill()
    ex.shutdown(wait=True, cancel_futures=True)


def run_corpus(inputs, out_dir: str | os.PathLike, settings=None, jobs: int = 1,
               progress: Progress | None = None, max_bytes: int | None = None,
               options: RunOptions | None = None) -> dict[str, Any]:
    """Analyze every document under ``inputs`` into ``out_dir`` (a folder or an fsspec URI); return the summary.

    ``settings``: a ``Settings`` or its dict. ``options``: engine, workers... (``jobs`` is a shortcut for
    ``RunOptions(jobs=...)``). Documents are planned first (discovery, resume: no model is loaded), then
    analyzed by the engine, each written by :func:`process_document` in its worker. Progress events
    carry ``stats`` (:class:`RunStats`: done/failed, docs/min, ETA).
    """
    from chunkscope.analysis import Settings

    opts = options or RunOptions(jobs=jobs)
    opts.validate()
    t_start = time.perf_counter()
    if settings is None:
        settings = Settings()
    s_dict = settings.to_dict() if hasattr(settings, "to_dict") else Settings.from_dict(settings).to_dict()
    store = ResultStore(out_dir)
    entries, tasks, ignored = plan_corpus(inputs, store, s_dict, max_bytes, opts.retry_failed, opts.confine)
    store.makedirs("reports")
    store.makedirs("failed")

    total = len(entries)
    stats = RunStats(total, len(tasks))

    def emit(done: int, e: dict[str, Any]) -> None:
        if progress:
            progress(done, total, {**e, "stats": stats.as_dict()})

    if progress:
        k = 0
        for e in entries:
            if "status" in e:  # announce skipped/unreadable ones first
                k += 1
                emit(k, e)
        emit(stats.done, {"status": "start", "name": "", "todo": len(tasks), "engine": opts.engine})

    def started(t: dict[str, Any]) -> None:
        emit(stats.done, {"status": "running", "name": t["name"], "rel": t["rel"]})

    def finished(t: dict[str, Any], upd: dict[str, Any]) -> None:
        e = entries[t["index"]]
        if "status" in e:  # exactly once: a late duplicate of a finished document is ignored
            return
        e.update(upd)
        if upd.get("attempts", 1) > 1:
            stats.retried += 1
        stats.finished(e["status"])
        emit(stats.done, e)

    def retried(t: dict[str, Any], reason: str) -> None:
        emit(stats.done, {"status": "retry", "name": t["name"], "rel": t["rel"], "reason": reason})

    run_t0 = time.perf_counter()
    if tasks:
        if opts.engine == "ray":
            from chunkscope.corpus.ray import run_ray

            run_ray(tasks, store, opts, s_dict, opts.threads or default_threads(opts.jobs), init_worker,
                    process_document, started, finished, retried)
        else:
            _run_local(tasks, store, opts, s_dict, started, finished)
    run_s = time.perf_counter() - run_t0
    for t in tasks:  # an engine that lost a document (it should not): recorded, never silent
        entries[t["index"]].setdefault("status", "failed")
        entries[t["index"]].setdefault("reason", "no result came back from the engine")

    write_tables(store, entries)
    counts = {k: sum(1 for e in entries if e.get("status") == k) for k in ("ok", "skipped", "failed")}
    analyzed = [e for e in entries if e.get("status") == "ok"]
    tokens_now = sum(int(e.get("tokens") or 0) for e in analyzed)
    summary = {
        "schema": SCHEMA,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "inputs": [str(x) for x in ([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)],
        "jobs": opts.jobs,
        "engine": opts.engine,
        "threads_per_worker": opts.threads or default_threads(opts.jobs),
        "workers": sorted({e["worker"] for e in entries if e.get("worker")}),
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
    store.write_text("summary.json", json.dumps(summary, ensure_ascii=False, indent=1))
    return summary


def load_summary(results_dir: str | os.PathLike | ResultStore) -> dict[str, Any]:
    store = results_dir if isinstance(results_dir, ResultStore) else ResultStore(results_dir)
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
