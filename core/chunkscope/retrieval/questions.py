"""Questions with evidence: read a CSV/JSONL file (Chroma's ``questions_df.csv`` as is), locate
quotes in the document, map spans from the uploaded file's text onto the Document's text.

Every problem is reported, one line each (``QuestionSet.problems``); a row with a problem is
left out of the scores but never silently: the count and the reason are in the result.

Accepted rows (CSV columns or JSONL keys; names are case-insensitive):

* ``question`` (or ``query``): the question text (required);
* ``references``: Chroma's JSON list of ``{"content", "start_index", "end_index"}``;
* ``evidence``: a list of ``[start, end]`` spans, of quotes, or of ``{"start", "end", "content"}``
  (in a CSV cell: JSON, or a plain quote);
* ``quote`` / ``quotes``: quoted evidence text (a string or a list of strings);
* ``start`` / ``end`` (or ``start_index`` / ``end_index``): one span;
* ``corpus_id`` (or ``document``): rows naming another document are skipped and counted.

Spans are end-exclusive character offsets into the document's text as ChunkScope extracted it
(``chunkscope ingest --json``), or into the uploaded file's own text: when the loader normalised
it (line endings...), ``raw_text`` (the file's text) lets each span be mapped onto the Document.
A span given with its ``content`` is checked against it; a mismatched span is replaced by the
located quote (and the mismatch reported). A malformed span (not two whole numbers, empty, reversed
or outside the text) leaves its row out: its ``content`` is not located instead. A quote (or a part
of one between ellipses) shorter than ``MIN_QUOTE_CHARS`` is never located: too short to be unique.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from chunkscope.retrieval.metrics import Range, union

MAX_ROWS = 20_000
MIN_QUOTE_CHARS = 15  # a shorter quote is not located: it may occur anywhere (Chroma's shortest excerpt: 22)
_FOLD = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u201c": '"', "\u201d": '"',
         "\u201e": '"', "\u2033": '"', "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2010": "-", "\u2011": "-",
         "\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u00ad": ""}
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…|\[\.\.\.\]|\[…\])\s*")


class QuestionsError(ValueError):
    """The questions cannot be used at all (empty, not CSV/JSONL, no question column...)."""


@dataclass
class Question:
    """One question and its evidence: character spans of the document."""

    text: str
    evidence: list[Range]
    source: str = "file"
    id: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The question as JSON."""
        return {"id": self.id, "question": self.text, "evidence": [list(r) for r in self.evidence],
                "source": self.source}


@dataclass
class QuestionSet:
    """The questions for one document, where they came from, and the problems met reading them."""

    questions: list[Question]
    source: str  # "file", "generated", "self-test"
    problems: list[str] = field(default_factory=list)
    skipped_other: int = 0  # rows naming another document (corpus_id)
    rows: int = 0  # rows read (or questions proposed)
    info: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """One line: how many questions, from where, what was skipped."""
        bits = [f"{len(self.questions)} question(s) from {self.source}"]
        if self.skipped_other:
            bits.append(f"{self.skipped_other} row(s) about other documents skipped")
        if self.problems:
            bits.append(f"{len(self.problems)} problem(s)")
        return ", ".join(bits)

    def to_dict(self) -> dict[str, Any]:
        """The question source as JSON (the questions themselves are listed apart)."""
        return {"source": self.source, "rows": self.rows, "used": len(self.questions),
                "skipped_other_documents": self.skipped_other, "problems": list(self.problems),
                "info": dict(self.info)}


# ----------------------------------------------------------------------------- locating quotes

class Locator:
    """Finds quotes in a text, exactly or up to whitespace, quote marks, dashes and case."""

    def __init__(self, text: str):
        self.text = text
        norm: list[str] = []
        index: list[int] = []
        space = False
        for i, ch in enumerate(text):
            ch = _FOLD.get(ch, ch)
            if not ch:
                continue
            if ch.isspace():
                if space or not norm:
                    continue
                space = True
                norm.append(" ")
                index.append(i)
                continue
            space = False
            low = ch.lower()
            norm.append(low if len(low) == 1 else ch)
            index.append(i)
        self.norm = "".join(norm)
        self.index = index

    @staticmethod
    def normalise(quote: str) -> str:
        """``quote`` folded as the locator folds the text (quote marks, dashes, spaces)."""
        out: list[str] = []
        for ch in quote:
            ch = _FOLD.get(ch, ch)
            if not ch:
                continue
            if ch.isspace():
                if out and out[-1] != " ":
                    out.append(" ")
                continue
            low = ch.lower()
            out.append(low if len(low) == 1 else ch)
        return "".join(out).strip()

    def find(self, quote: str, hint: int | None = None) -> Range | None:
        """The occurrence of ``quote`` (nearest to ``hint`` when it occurs more than once)."""
        quote = quote.strip()
        if not quote:
            return None
        hits = _all(self.text, quote)
        if hits:
            s = _nearest(hits, hint)
            return s, s + len(quote)
        q = self.normalise(quote)
        if not q:
            return None
        nh = _all(self.norm, q)
        if not nh:
            return None
        ns = _nearest(nh, None if hint is None else _bisect(self.index, hint), )
        return self.index[ns], self.index[ns + len(q) - 1] + 1

    def find_parts(self, quote: str, hint: int | None = None) -> tuple[list[Range], list[str]]:
        """A quote with ellipses ("a ... b") is several excerpts: (found ranges, parts not found).
        A part shorter than ``MIN_QUOTE_CHARS`` is not looked for (it counts as not found)."""
        parts = [p for p in _ELLIPSIS.split(quote) if p.strip()]
        if len(parts) <= 1:
            r = self.find(quote, hint) if len(quote.strip()) >= MIN_QUOTE_CHARS else None
            return ([r], []) if r else ([], [quote])
        found, missing = [], []
        for p in parts:
            r = self.find(p, hint) if len(p.strip()) >= MIN_QUOTE_CHARS else None
            if r:
                found.append(r)
                hint = r[1]
            else:
                missing.append(p)
        return found, missing


def _all(hay: str, needle: str, limit: int = 50) -> list[int]:
    out: list[int] = []
    pos = hay.find(needle)
    while pos != -1 and len(out) < limit:
        out.append(pos)
        pos = hay.find(needle, pos + 1)
    return out


def _nearest(hits: list[int], hint: int | None) -> int:
    return hits[0] if hint is None else min(hits, key=lambda h: abs(h - hint))


def _bisect(index: list[int], pos: int) -> int:
    import bisect

    return bisect.bisect_left(index, pos)


def short(text: str, n: int = 60) -> str:
    """``text`` on one line, cut to ``n`` characters, quoted: for problem lines."""
    t = " ".join(str(text).split())
    return repr(t if len(t) <= n else t[: n - 1] + "…")


# ----------------------------------------------------------------------------- reading files

def _parse_rows(data: str, name: str) -> tuple[list[dict[str, Any]], str]:
    """(rows as dicts with lower-case keys, format) or QuestionsError."""
    text = data.lstrip("\ufeff")
    if not text.strip():
        raise QuestionsError(f"{name}: the questions file is empty")
    suffix = Path(name).suffix.lower()
    first = text.lstrip()[:1]
    if suffix in (".jsonl", ".ndjson", ".json") or (suffix not in (".csv", ".tsv") and first in "[{"):
        rows: list[Any] = []
        if first == "[":
            try:
                arr = json.loads(text)
            except json.JSONDecodeError as exc:
                raise QuestionsError(f"{name}: not valid JSON: {exc}") from None
            if not isinstance(arr, list):
                raise QuestionsError(f"{name}: expected a list of question objects")
            rows = arr
        else:
            bad = []
            for ln, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    bad.append(ln)
                    rows.append(QuestionsError(f"line {ln}: not valid JSON ({exc.msg})"))
            if bad and len(bad) == len(rows):
                raise QuestionsError(f"{name}: no line is valid JSON (expected one JSON object per line, "
                                     "or a CSV with a 'question' column)")
        out = []
        for r in rows:
            if isinstance(r, dict):
                out.append({str(k).strip().lower(): v for k, v in r.items()})
            elif isinstance(r, QuestionsError):
                out.append({"__error__": str(r)})
            else:
                out.append({"__error__": f"expected a JSON object, got {type(r).__name__}"})
        return out, "jsonl"
    try:
        dialect: Any = csv.excel_tab if suffix == ".tsv" else csv.excel
        reader = csv.DictReader(io.StringIO(text), dialect=dialect)
        fields = [(f or "").strip().lower() for f in (reader.fieldnames or [])]
        if not any(f in ("question", "query") for f in fields):
            raise QuestionsError(f"{name}: no 'question' column (columns: {', '.join(fields) or 'none'}); "
                                 "expected CSV with question + references/evidence/quote, or JSONL")
        out = []
        for r in reader:
            out.append({(k or "").strip().lower(): v for k, v in r.items() if k is not None})
            if len(out) > MAX_ROWS:
                raise QuestionsError(f"{name}: more than {MAX_ROWS} rows")
    except csv.Error as exc:
        raise QuestionsError(f"{name}: not a readable CSV: {exc}") from None
    return out, "csv"


def _json_cell(v: Any) -> Any:
    """A CSV cell holding JSON (Chroma's references) is decoded; other strings stay strings."""
    if isinstance(v, str):
        s = v.strip()
        if s[:1] in "[{":
            try:
                return json.loads(s)
            except json.JSONDecodeError:
                return v
    return v


def _items(row: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The row's evidence as items ``{"start", "end", "content"}`` (any may be missing), or errors."""
    items: list[dict[str, Any]] = []
    errors: list[str] = []

    def add(x: Any, what: str) -> None:
        if x is None or (isinstance(x, str) and not x.strip()):
            return
        if isinstance(x, str):
            items.append({"content": x})
        elif isinstance(x, dict):
            d = {str(k).lower(): v for k, v in x.items()}
            s = d.get("start_index", d.get("start"))
            e = d.get("end_index", d.get("end"))
            items.append({"start": s, "end": e, "content": d.get("content", d.get("quote", d.get("text")))})
        elif isinstance(x, (list, tuple)) and len(x) == 2 and all(isinstance(v, (int, float)) for v in x):
            items.append({"start": x[0], "end": x[1]})
        elif isinstance(x, (list, tuple)):
            for y in x:
                add(y, what)
        else:
            errors.append(f"{what}: cannot read {short(x)}")

    for key in ("references", "evidence", "quotes", "quote", "excerpts"):
        if key in row:
            add(_json_cell(row[key]), key)
    s = row.get("start_index", row.get("start"))
    e = row.get("end_index", row.get("end"))
    if s not in (None, "") or e not in (None, ""):
        items.append({"start": s, "end": e, "content": None})
    return items, errors


def _as_int(v: Any) -> int | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if f == int(f) else None


def same_document(corpus_id: str, doc_name: str) -> bool:
    """Whether a row's corpus id names this document (an empty id names any)."""
    a = Path(str(corpus_id).strip()).stem.casefold()
    b = Path(str(doc_name).strip()).stem.casefold()
    return not a or a == b


def resolve_evidence(items: Iterable[dict[str, Any]], doc_text: str, raw_text: str | None, locator: Locator,
                     where: str, problems: list[str]) -> list[Range] | None:
    """Evidence items -> ranges of ``doc_text``; every item that fails adds one problem line.
    None when a span is malformed: the row's evidence is not known, so the row is left out."""
    out: list[Range] = []
    malformed = False
    n = len(doc_text)
    src = raw_text if raw_text is not None else doc_text
    mapped = raw_text is not None and raw_text != doc_text
    for it in items:
        mismatch = ""
        content = it.get("content")
        content = content if isinstance(content, str) and content.strip() else None
        s, e = _as_int(it.get("start")), _as_int(it.get("end"))
        has_span = it.get("start") not in (None, "") or it.get("end") not in (None, "")
        if has_span:
            if s is None or e is None:
                problems.append(f"{where}: evidence span [{it.get('start')}, {it.get('end')}] is not two whole numbers")
                malformed = True
                continue
            elif s < 0 or e <= s or e > len(src):
                problems.append(f"{where}: evidence [{s}, {e}] lies outside the document (its text has {len(src)} "
                                "characters)" if (s >= 0 and e > s) else f"{where}: evidence [{s}, {e}] is empty or reversed")
                malformed = True
                continue
            else:
                piece = src[s:e]
                if content is not None and piece != content and piece.strip() != content.strip():
                    mismatch = f"{where}: span [{s}, {e}] does not match its quoted content {short(content)}"
                elif not mapped:
                    out.append((s, e))
                    continue
                else:  # the loader normalised the text: find the span's text in the Document
                    hint = int(s * n / max(1, len(src)))
                    r = locator.find(piece, hint)
                    if r is None:
                        problems.append(f"{where}: span [{s}, {e}] ({short(piece)}) could not be mapped onto the "
                                        "document's extracted text")
                        continue
                    out.append(r)
                    continue
        if content is None:
            if not has_span:
                problems.append(f"{where}: an evidence item has neither a span nor quoted text")
            continue
        qhint = None if s is None else int(s * n / max(1, len(src)))
        found, missing = locator.find_parts(content, qhint)
        why = [f"quote too short to locate (under {MIN_QUOTE_CHARS} characters): {short(m)}"
               if len(m.strip()) < MIN_QUOTE_CHARS else f"quote not found in the document: {short(m)}" for m in missing]
        if mismatch:  # one line: the span is wrong, and whether the quote (or which of its parts) stands in
            problems.append(f"{mismatch}; " + ("using the quote, found in the document" if not why else
                                               "the quote cannot stand in (" + "; ".join(why) + ")" if not found else
                                               "using the part(s) of the quote found (" + "; ".join(why) + ")"))
        else:
            problems.extend(f"{where}: {w}" for w in why)
        out.extend(found)
    return None if malformed else union(out)


def read_questions(data: str | bytes, name: str, doc_text: str, doc_name: str = "",
                   raw_text: str | None = None) -> QuestionSet:
    """Questions from a CSV/JSONL file's content. Raises QuestionsError when nothing is usable."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise QuestionsError(f"{name}: not UTF-8 text (expected a CSV or JSONL file)") from None
    rows, fmt = _parse_rows(data, name)
    locator = Locator(doc_text)
    qs = QuestionSet([], "file", rows=len(rows), info={"file": Path(name).name, "format": fmt})
    label = "line" if fmt == "jsonl" else "row"
    for i, row in enumerate(rows, 1):
        where = f"{label} {i + (1 if fmt == 'csv' else 0)}"
        if "__error__" in row:
            qs.problems.append(f"{row['__error__'] if row['__error__'].startswith('line') else where + ': ' + row['__error__']}")
            continue
        cid = row.get("corpus_id", row.get("document"))
        if cid not in (None, "") and doc_name and not same_document(str(cid), doc_name):
            qs.skipped_other += 1
            continue
        q = row.get("question", row.get("query"))
        if not isinstance(q, str) or not q.strip():
            qs.problems.append(f"{where}: no question text")
            continue
        items, errors = _items(row)
        qs.problems.extend(f"{where}: {e}" for e in errors)
        if not items:
            qs.problems.append(f"{where}: question {short(q)} has no evidence (give references, evidence, quote or "
                               "start/end)")
            continue
        before = len(qs.problems)
        ev = resolve_evidence(items, doc_text, raw_text, locator, where, qs.problems)
        if ev is None:
            qs.problems.append(f"{where}: question {short(q)} left out (a malformed evidence span)")
            continue
        if not ev:
            if len(qs.problems) == before:
                qs.problems.append(f"{where}: question {short(q)} has no usable evidence")
            qs.problems.append(f"{where}: question {short(q)} left out (no evidence in the document)")
            continue
        qs.questions.append(Question(" ".join(q.split()), ev, "file", str(row.get("id") or f"q{i}")))
    if not qs.questions:
        why = "; ".join(qs.problems[:3]) if qs.problems else (
            f"every row names another document ({qs.skipped_other})" if qs.skipped_other else "no rows")
        raise QuestionsError(f"{name}: no usable question ({why})")
    return qs


def raw_text_of(path: str | Path) -> str | None:
    """The uploaded file's own text when it is a text format (spans may refer to it), else None."""
    p = Path(path)
    if p.suffix.lower() not in (".md", ".markdown", ".txt", ".text"):
        return None
    try:
        return p.read_bytes().decode("utf-8").lstrip("\ufeff")
    except (OSError, UnicodeDecodeError):
        return None


def raw_text_of_bytes(data: bytes, name: str) -> str | None:
    """The text of a Markdown or plain-text file (None for other formats or bad UTF-8)."""
    if Path(name).suffix.lower() not in (".md", ".markdown", ".txt", ".text"):
        return None
    try:
        return data.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        return None


def read_questions_file(path: str | Path, doc_text: str, doc_name: str = "", raw_text: str | None = None
                        ) -> QuestionSet:
    """The questions of the file at ``path`` for this document (see ``read_questions``)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise QuestionsError(f"cannot read the questions file {p}: {exc.strerror or exc}") from None
    return read_questions(data, p.name, doc_text, doc_name, raw_text)
