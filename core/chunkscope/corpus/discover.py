"""Finding a corpus's documents: which files are documents, their mentions, domain and key.

**Mentions pickup**: for ``.../X/parsed/STEM.json`` the file ``.../X/mentions/STEM.parquet``
(or ``.json``), as in the reference data; or ``STEM.mentions.parquet|json`` beside the
file. When found and the coreference backend is ``heuristic`` or ``precomputed``, that
document is scored with the precomputed pairs; a file that does not fit the document fails it, with the
reason ``analyze --mentions`` gives (``check_mentions``).

**Domain**: a reference-style stem ``"Persona (label)_title"`` gives ``label`` (``légal`` ->
legal, ``technique`` -> technical, ``sciences sociales`` -> social, anything else lowercased);
otherwise the name of the folder holding the file when it is below the input root and not a
generic name (parsed, docs, data...); otherwise ``""`` (no domain).

**Document key** (the tables' ``document`` column, ``document`` in each summary entry): the file's path below
its input folder, '/'-separated (``a/notes/readme.md``); the path as given when two inputs hold the same
relative path (:func:`document_keys`). Unique within a run and the same on every resume, so two documents that
share a file name never share table rows.
"""

from __future__ import annotations

import glob as _glob
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from chunkscope.ingest import SUPPORTED_EXTENSIONS

DOC_EXTENSIONS = tuple(SUPPORTED_EXTENSIONS)  # what ingest reads
MAX_IGNORED_LISTED = 1000  # files named under summary.json's "ignored"; beyond, a count
MENTIONS_DIR = "mentions"
GENERIC_FOLDERS = {"parsed", "docs", "doc", "documents", "data", "files", "input", "inputs", "corpus", "raw", "text", "texts"}
DOMAIN_ALIASES = {
    "légal": "legal", "legal": "legal", "juridique": "legal", "law": "legal",
    "technique": "technical", "technical": "technical", "tech": "technical",
    "sciences sociales": "social", "social": "social", "social science": "social", "social sciences": "social",
}


@dataclass
class CorpusItem:
    """One document found: its file, the input root it was found under, its mentions, domain and hashes."""

    path: Path
    root: Path
    mentions: Path | None = None
    domain: str = ""
    sha256: str = ""
    mentions_sha256: str = ""

    @property
    def rel(self) -> str:
        """The file's path below its root (the path as given when it is not below it)."""
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
        root, candidates = _candidates(str(inp))
        for f in candidates:
            rf = f.resolve()
            if any(rf == e or e in rf.parents for e in excluded):
                continue
            why = "a link to a file outside the shared folder" if not inside(rf) else _why_not_a_document(f, root)
            if why is not None:
                if why:  # hidden files are passed over in silence
                    ignored.append({"path": str(f), "reason": why})
                continue
            if rf not in items:
                items[rf] = CorpusItem(path=f, root=root, mentions=find_mentions(f, confine), domain=domain_of(f, root))
    return sorted(items.values(), key=lambda it: str(it.path)), _listed(ignored)


def _candidates(s: str) -> tuple[Path, list[Path]]:
    """The root and the files of one input (a folder, searched recursively; a file; a glob), else ValueError."""
    p = Path(s).expanduser()
    if p.is_dir():
        return p, sorted(x for x in p.rglob("*") if x.is_file())
    if p.is_file():
        return p.parent, [p]
    if any(ch in s for ch in "*?["):
        candidates = sorted(Path(x) for x in _glob.glob(s, recursive=True) if Path(x).is_file())
        if not candidates:
            raise ValueError(f"{s}: the pattern matches no file")
        return _glob_root(s), candidates
    raise ValueError(f"{s}: no such file or directory")


def _why_not_a_document(f: Path, root: Path) -> str | None:
    """Why ``f`` is not a document ("" for a hidden file, passed over in silence), or None when it is one."""
    if _is_hidden(f, root):
        return ""
    if _is_mentions_file(f, root):
        return "coreference mentions file"
    if f.suffix.lower() not in DOC_EXTENSIONS:  # said, so that a user looking for a file finds why
        return f"not a document type ({f.suffix.lower() or 'no extension'}; read: {', '.join(DOC_EXTENSIONS)})"
    if f.suffix.lower() == ".json" and _json_kind(f) == "other":
        return "JSON that is not a document (no full_text/split_points or text/blocks)"
    return None


def _listed(ignored: list[dict[str, str]]) -> list[dict[str, str]]:
    """The ignored files as summary.json lists them: each once, at most ``MAX_IGNORED_LISTED`` and a count."""
    ignored = list({i["path"]: i for i in ignored}.values())  # overlapping inputs: each file once
    if len(ignored) > MAX_IGNORED_LISTED:  # a folder of 20,000 images: the first ones and a count
        more = len(ignored) - MAX_IGNORED_LISTED
        ignored = ignored[:MAX_IGNORED_LISTED] + [{"path": "…", "reason": f"and {more:,} more files not listed"}]
    return ignored


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
    """The sha256 of a file's bytes (hex), read in 1 MiB pieces."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()



def document_keys(entries: list[dict[str, Any]]) -> list[str]:
    """The document key of each summary entry (see module doc).

    Its ``document`` when set, else its path below its input ('/'-separated; ``rel``), else its path as given when another entry has the same ``rel``.
    Summaries written before the key existed get the same keys a run writes now."""
    def rel(e: dict[str, Any]) -> str:
        """The entry's path below its input, '/'-separated."""
        return str(e.get("rel") or e.get("name") or e.get("path") or "").replace(os.sep, "/")

    counts: dict[str, int] = {}
    for e in entries:
        if not e.get("document"):
            counts[rel(e)] = counts.get(rel(e), 0) + 1
    return [str(e["document"]) if e.get("document")
            else rel(e) if counts[rel(e)] == 1 or not e.get("path") else str(e["path"]) for e in entries]

