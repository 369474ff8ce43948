"""Planning a corpus run, with no model loaded: discovery, then resume (what is already done).

``key`` = sha256 of (file sha256, mentions file sha256, settings, LLM endpoint, provenance_key): a document
already analyzed with the same settings and the same bytes is skipped (resume); change
either and it is analyzed again. A document that failed on its own is skipped too (its reason kept),
unless asked to retry it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

from chunkscope.corpus.discover import DOC_EXTENSIONS, discover, document_keys, file_sha256
from chunkscope.corpus.store import ResultStore
from chunkscope.corpus.tables import not_run
from chunkscope.corpus.worker import failed_marker


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



def resume_key(file_sha: str, mentions_sha: str, settings_dict: dict[str, Any], llm: dict[str, Any] | None = None,
               suffix: str = "") -> str:
    """The key that decides whether a document must be analyzed again.

    Its bytes *and* format (``suffix``: x.md
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


def _done_before(store: ResultStore, base: str, e: dict[str, Any], retry_failed: bool) -> bool:
    """Whether an earlier run settled this document (its entry ``e`` then filled from what it left).

    Settled: analyzed (report and winners written), or failed on its own (unless ``retry_failed``). A
    damaged report or marker settles nothing: the document is analyzed again."""
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
            return True
        except (OSError, json.JSONDecodeError, KeyError):
            return False  # a damaged report: analyze again
    if not retry_failed and store.is_file(failed_marker(base)):
        try:
            why = json.loads(store.read_text(failed_marker(base))).get("reason", "")
            e.update(status="failed", reason=why, resumed=True, seconds=0.0)
            return True
        except (OSError, json.JSONDecodeError, AttributeError):
            return False  # a damaged marker: analyze again
    return False


def plan_corpus(inputs, store: ResultStore, s_dict: dict[str, Any], max_bytes: int | None = None,
                retry_failed: bool = False, confine: str | os.PathLike | None = None,
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, str]]]:
    """Discovery and resume, with no model loaded: (entries, tasks, ignored).

    Entries of documents done before (same bytes, settings, LLM and provenance) are complete -- analyzed, or
    failed on their own (unless ``retry_failed``); each task is one document to analyze."""
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
        if _done_before(store, base, e, retry_failed):
            continue
        tasks.append({"index": len(entries) - 1, "path": str(it.path), "base": base, "key": key,
                      "settings": d_settings, "max_bytes": max_bytes, "name": it.path.stem, "rel": it.rel})
    for e, doc_key in zip(entries, document_keys(entries)):
        e["document"] = doc_key
    return entries, tasks, ignored

