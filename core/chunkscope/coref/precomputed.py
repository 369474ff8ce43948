"""Precomputed entity–pronoun pairs: the reference mentions parquet, or a JSON of pairs.

Accepted inputs (``load_pairs(path, text_length)``):

1. **Reference mentions parquet** (the paper's format, one row): column
   ``entity_pron_mentions`` holds ``[[entity_start, entity_end], [pronoun_start, pronoun_end]]``
   with **inclusive** ends. Read with pandas/pyarrow.
2. **JSON object**: ``{"pairs": [[[es, ee], [ps, pe]], ...], "end_inclusive": true|false}``.
   ``end_inclusive`` defaults to ``true`` (the reference convention). Each pair may also be
   written ``{"entity": [es, ee], "pronoun": [ps, pe]}``.
3. **JSON list**: ``[[[es, ee], [ps, pe]], ...]`` — a bare list of pairs, inclusive ends
   (as in the parquet); or a list of ``{"entity": ..., "pronoun": ...}`` objects.

Inclusive ends become half-open (``end + 1``). Every span must lie inside the document
text (``0 <= start < end <= len(text)``); otherwise a :class:`CorefError` names the first bad
pair — a mentions file for another document is refused rather than silently misread.
Duplicate pairs are dropped (with a warning). Given the text of an English document
(``load_pairs(..., text=...)``), the pronoun spans must also be pronouns there: a mentions file
of another document whose offsets happen to fit is refused too (``check_pronouns``; on the 12
English corpus documents 998–1000‰ of their own pronoun spans are such words, at most 250‰ of
another document's).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from chunkscope.coref.base import CorefError, Pair
from chunkscope.coref.heuristic.lexicon import FIRST_PERSON, PRONOUNS, QUANTIFIER_NOUNS, RELATIVE
from chunkscope.document import Span

# the words a coreference model calls pronouns (third and first person, relative, demonstrative,
# indefinite, "you"): an English mentions file's pronoun spans are these
REFERRING_WORDS = frozenset(PRONOUNS) | frozenset(FIRST_PERSON) | RELATIVE | QUANTIFIER_NOUNS | frozenset(
    """this that these those which what whose whom who one ones each both all another other others here there
    such you your yours yourself yourselves whatever whoever whichever""".split())


def _as_span(raw: Any, inclusive: bool, what: str) -> tuple[int, int]:
    try:
        s, e = (int(v) for v in raw)
    except (TypeError, ValueError):
        raise CorefError(f"{what}: expected [start, end], got {raw!r}") from None
    return s, (e + 1 if inclusive else e)


def pairs_from_raw(raw_pairs: Iterable[Any], text_length: int, end_inclusive: bool = True,
                   source: str = "mentions") -> tuple[list[Pair], list[str]]:
    """Validate and convert raw pairs (see module doc) to half-open :class:`Pair` objects."""
    pairs: list[Pair] = []
    seen: set[tuple[int, int, int, int]] = set()
    dupes = 0
    for i, item in enumerate(raw_pairs):
        if isinstance(item, dict):
            if "entity" not in item or "pronoun" not in item:
                raise CorefError(f"{source}: pair {i} needs keys 'entity' and 'pronoun'")
            ent_raw, pro_raw = item["entity"], item["pronoun"]
        else:
            try:
                ent_raw, pro_raw = item
            except (TypeError, ValueError):
                raise CorefError(f"{source}: pair {i} is not [[entity_start, entity_end], [pronoun_start, pronoun_end]]") from None
        es, ee = _as_span(ent_raw, end_inclusive, f"{source}: pair {i} entity")
        ps, pe = _as_span(pro_raw, end_inclusive, f"{source}: pair {i} pronoun")
        for name, (s, e) in (("entity", (es, ee)), ("pronoun", (ps, pe))):
            if not (0 <= s < e <= text_length):
                raise CorefError(
                    f"{source}: pair {i} {name} [{s}, {e}) is outside the document text (length {text_length});"
                    " is this the mentions file of another document?"
                )
        key = (es, ee, ps, pe)
        if key in seen:
            dupes += 1
            continue
        seen.add(key)
        pairs.append(Pair(Span(es, ee), Span(ps, pe)))
    warnings = [f"{source}: {dupes} duplicate pair(s) dropped"] if dupes else []
    return pairs, warnings


MAX_MENTION_VALUES = 8_000_000  # numbers in a mentions file (4 per pair): 2 million pairs, far beyond any document


def _read_parquet(path: Path) -> list[Any]:
    """The pairs of a reference mentions parquet: one row, column ``entity_pron_mentions``. The file's
    metadata is checked before anything is decoded (row count, column, number of values): a small
    file can hold a column that decodes to gigabytes."""
    col = "entity_pron_mentions"
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise CorefError(_unreadable(path, exc)) from None
    try:
        pf = pq.ParquetFile(path)
        meta = pf.metadata
        names = pf.schema_arrow.names
        if col not in names:
            raise CorefError(f"{path.name}: no '{col}' column (found: {', '.join(map(str, names[:20]))})")
        if meta.num_rows > 1:
            raise CorefError(f"{path.name}: expected one row (one document), found {meta.num_rows:,}")
        values = sum(rg.column(j).num_values for rg in (meta.row_group(i) for i in range(meta.num_row_groups))
                     for j in range(rg.num_columns) if rg.column(j).path_in_schema.split(".")[0] == col)
        if values > MAX_MENTION_VALUES:
            raise CorefError(f"{path.name}: {values:,} numbers in '{col}', more than a mentions file holds "
                             f"(at most {MAX_MENTION_VALUES:,})")
        if meta.num_rows == 0:
            return []
        value = pf.read(columns=[col]).column(col).to_pylist()[0]
    except (pa.ArrowException, OSError, ValueError, TypeError, KeyError, IndexError) as exc:
        raise CorefError(_unreadable(path, exc)) from None  # pyarrow's errors for a bad file: ArrowInvalid, OSError...
    return [] if value is None else [[list(e), list(p)] for e, p in value]


def _unreadable(path: Path, exc: BaseException) -> str:
    """The one line saying why the parquet file ``path`` cannot be read."""
    return f"{path.name}: cannot read parquet ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"


def read_raw(path: str | Path) -> tuple[list[Any], bool]:
    """Raw pairs and whether their ends are inclusive, from a parquet or JSON file."""
    p = Path(path)
    if not p.is_file():
        raise CorefError(f"mentions file not found: {p}")
    if p.suffix.lower() == ".parquet":
        return _read_parquet(p), True
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorefError(f"{p.name}: neither a parquet file nor valid JSON ({exc})") from None
    if isinstance(data, list):
        return data, True
    if isinstance(data, dict) and isinstance(data.get("pairs"), list):
        inclusive = data.get("end_inclusive", True)
        if not isinstance(inclusive, bool):
            raise CorefError(f"{p.name}: 'end_inclusive' must be true or false")
        return data["pairs"], inclusive
    raise CorefError(f"{p.name}: expected a list of pairs or an object with a 'pairs' list")


def check_pronouns(pairs: list[Pair], text: str, source: str = "mentions") -> None:
    """Refuse pairs whose pronoun spans are mostly not pronouns in ``text`` (English): the mentions
    file of another document. Fewer than half must be referring words (:data:`REFERRING_WORDS`)."""
    if not pairs:
        return
    words = [text[p.pronoun.start:p.pronoun.end].strip().lower() for p in pairs]
    hits = sum(w in REFERRING_WORDS for w in words)
    if hits * 2 < len(words):
        odd = ", ".join(repr(w) for w in dict.fromkeys(w for w in words if w and w not in REFERRING_WORDS))
        raise CorefError(
            f"{source}: only {hits} of {len(words)} pronoun spans are pronouns in this document"
            f" ({odd if len(odd) <= 80 else odd[:77] + '...'});"
            " is this the mentions file of another document?"
        )


def load_pairs(path: str | Path, text_length: int, text: str | None = None) -> tuple[list[Pair], list[str]]:
    """Half-open pairs from a mentions parquet or JSON file, validated against ``text_length`` and,
    given an English document's ``text``, :func:`check_pronouns`."""
    raw, inclusive = read_raw(path)
    pairs, warnings = pairs_from_raw(raw, text_length, end_inclusive=inclusive, source=Path(path).name)
    if text is not None:
        check_pronouns(pairs, text, Path(path).name)
    return pairs, warnings


def write_pairs_json(pairs: Iterable[Pair], path: str | Path) -> None:
    """Write pairs in the JSON format above (half-open ends, ``end_inclusive: false``)."""
    data = {
        "pairs": [[[p.entity.start, p.entity.end], [p.pronoun.start, p.pronoun.end]] for p in pairs],
        "end_inclusive": False,
    }
    Path(path).write_text(json.dumps(data), encoding="utf-8")
