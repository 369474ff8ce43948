"""The paper's split-then-merge recursive splitter, on offsets.

Pass 1 splits ``text[start:end]`` recursively with a priority list of regex
separators until every piece is <= ``chunk_size`` tokens. Each separator match is
kept at the *start* of the piece that follows it; after each split, pieces under
10 characters are prepended to the piece after them (a short last piece stays).
When no separator is left, a hard split takes the longest prefix that fits
(exponential + binary search over character offsets).

Pass 2 packs consecutive pieces greedily: a chunk is closed when adding the next
piece would exceed ``chunk_size`` (sum of the pieces' token counts). With
``chunk_overlap`` > 0, the next chunk starts with trailing pieces of the previous
chunk worth up to ``chunk_overlap`` tokens (a too-large trailing piece is re-split to
fill the overlap).

Cost: every piece is token-counted once (the count of a text that a separator does
not split is reused, and a text longer than 128 * chunk_size characters is known to
be too large without counting it, since no o200k token is longer than 128 bytes).
Pass 2 is a single linear scan. The GDPR dev document (67k tokens) takes well under
a second.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Callable, Sequence

import regex

from chunkscope.chunkers.base import ChunkerSpec, ChunkResult, ParamError, ParamSpec, overlap_below
from chunkscope.document import Document, Span
from chunkscope.text import sentences as S
from chunkscope.text.tokens import count_tokens

# Other scripts' sentence ends and commas (chunkscope.text.sentences: 。！？ and ，、； without a space after them,
# । ॥ ؟ ۔ and ، with one): cut after the mark (and the closing quotes after it), so it stays with its sentence.
OTHER_SENTENCE_END = S.OTHER_END_CUT
OTHER_COMMA = rf"(?<=[{S.WIDE_COMMAS}])|(?<=[{S.SPACED_COMMAS}])\s+"

# DESIGN section 4 / paper appendix G, highest priority first. "" = hard character split. The sentence and comma
# levels also cut after other scripts' marks (OTHER_SENTENCE_END, OTHER_COMMA): with the paper's patterns alone,
# Chinese or Japanese prose was cut at any character once a paragraph was too long, and Hindi or Arabic at a
# space. Text without those marks is cut exactly as by the paper's list.
PAPER_SEPARATORS: tuple[str, ...] = (
    r"(?<=\n)#{1}\s",
    r"(?<=\n)#{2}\s",
    r"(?<=\n)#{3}\s",
    r"(?<=\n)#{4}\s",
    r"(?<=\n)#{5}\s",
    r"(?<=\n)#{6}\s",
    r"(?<=\n)\s*\(?[A-Za-z0-9]{1,4}[.)]\s+",
    r"(?<=\n)\s*[-*·•●▪◦‣▸▹○◯‒–—]\s+",
    r"\n{2,}",
    r"\n",
    r"[.!?]\s+|" + OTHER_SENTENCE_END,
    r",\s+|" + OTHER_COMMA,
    r"\s+",
    r"",
)

MIN_PIECE_CHARS = 10
MAX_TOKEN_CHARS = 128  # the longest o200k token is 128 bytes, hence <= 128 characters

Counter = Callable[[str], int]


# A separator typed by a user (Tune page, CLI, config file) runs with the ``regex`` package and a
# time budget for the whole chunking; the built-in ones are fixed, known to be linear, and run on
# ``re`` without one (so results never depend on machine speed).
BUILTIN_SEPARATORS = frozenset(PAPER_SEPARATORS)
DEFAULT_REGEX_TIMEOUT = 5.0  # seconds, all user separators of one chunking together

Pattern = Any  # re.Pattern[str] (built-in separators) or regex.Pattern (user separators)


@lru_cache(maxsize=64)
def _compile(pattern: str) -> Pattern:
    if pattern in BUILTIN_SEPARATORS:
        return re.compile(pattern)
    try:
        return regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise ParamError(f"invalid separator regex {pattern!r}: {exc}") from None


def split_keep_start(text: str, pattern: Pattern, min_chars: int = MIN_PIECE_CHARS,
                     timeout: float | None = None) -> list[tuple[int, int]]:
    """Split ``text`` at ``pattern``'s matches, each match starting the following piece.

    Returns relative (start, end) offsets that tile ``text``. A piece shorter than
    ``min_chars`` is joined to the piece after it (the last piece stays as it is).
    ``timeout`` (a ``regex`` pattern only): seconds before ``TimeoutError``.
    """
    matches = pattern.finditer(text, timeout=timeout) if isinstance(pattern, regex.Pattern) else pattern.finditer(text)
    cuts = [m.start() for m in matches if 0 < m.start() < len(text)]  # a zero-width match at the end cuts nothing
    if not cuts:
        return [(0, len(text))] if text else []
    edges = [0]
    for c in cuts:
        if c > edges[-1]:
            edges.append(c)
    edges.append(len(text))
    pieces: list[tuple[int, int]] = []
    pending = -1  # start of short pieces waiting to be joined to the next one
    n = len(edges) - 1
    for i in range(n):
        a, b = edges[i], edges[i + 1]
        s = a if pending < 0 else pending
        if b - s < min_chars and i + 1 < n:
            pending = s
            continue
        pieces.append((s, b))
        pending = -1
    return pieces


@dataclass
class RecursiveSplitter:
    """The paper's split-then-merge splitter.

    It trusts its sizes: ``chunk_size >= 1`` and ``0 <= chunk_overlap < chunk_size`` are checked where the
    values come in (``ParamSpec`` ranges and ``overlap_below``).
    """

    chunk_size: int = 1100
    chunk_overlap: int = 0
    separators: Sequence[str] = PAPER_SEPARATORS
    length: Counter = count_tokens
    min_piece_chars: int = MIN_PIECE_CHARS
    regex_timeout: float = DEFAULT_REGEX_TIMEOUT  # budget of the user-typed separators per split()

    def __post_init__(self) -> None:
        self._patterns = [None if s == "" else _compile(s) for s in self.separators]
        self._regex_spent = 0.0  # seconds spent in user separators during the current split()

    # ------------------------------------------------------------ pass 1
    def pieces(self, text: str, start: int = 0, end: int | None = None,
               max_len: int | None = None) -> list[tuple[int, int, int]]:
        """Pass 1 on ``text[start:end]``: absolute (start, end, tokens) pieces, each <= max_len."""
        end = len(text) if end is None else end
        max_len = self.chunk_size if max_len is None else max_len
        out: list[tuple[int, int, int]] = []
        if end > start:
            self._split(text, start, end, 0, max_len, out, None)
        return out

    def _cut(self, text: str, pat: Pattern) -> list[tuple[int, int]]:
        """``split_keep_start`` within what is left of the user separators' time budget (the time
        spent matching user separators in this ``split()``, nothing else, counts against it)."""
        if not isinstance(pat, regex.Pattern):
            return split_keep_start(text, pat, self.min_piece_chars)
        left = self.regex_timeout - self._regex_spent
        t0 = time.perf_counter()
        try:
            if left <= 0:
                raise TimeoutError
            return split_keep_start(text, pat, self.min_piece_chars, timeout=left)
        except TimeoutError:
            raise ParamError(
                f"separator regex {pat.pattern!r} took longer than {self.regex_timeout:g}s on this document "
                "(catastrophic backtracking?): simplify it, e.g. avoid nested repeats such as (a|aa)+"
            ) from None
        finally:
            self._regex_spent += time.perf_counter() - t0

    def _size(self, text: str, s: int, e: int, max_len: int) -> int | None:
        """Token count of text[s:e], or None when it is certainly larger than max_len."""
        if e - s > MAX_TOKEN_CHARS * max_len:
            return None
        return self.length(text[s:e])

    def _split(self, text: str, s: int, e: int, level: int, max_len: int,
               out: list[tuple[int, int, int]], known: int | None) -> None:
        n = known if known is not None else self._size(text, s, e, max_len)
        if n is not None and n <= max_len:
            out.append((s, e, n))
            return
        # find the next separator that actually splits this text
        while level < len(self._patterns):
            pat = self._patterns[level]
            if pat is None:
                self._hard_split(text, s, e, max_len, out)
                return
            parts = self._cut(text[s:e], pat)
            if len(parts) > 1:
                for a, b in parts:
                    self._split(text, s + a, s + b, level + 1, max_len, out, None)
                return
            level += 1  # no split here: same text, same count, next separator
        self._hard_split(text, s, e, max_len, out)

    def _hard_split(self, text: str, s: int, e: int, max_len: int, out: list[tuple[int, int, int]]) -> None:
        """Longest prefixes that fit, one after another (at least one character each)."""
        pos = s
        while pos < e:
            rest = e - pos
            n_all = self._size(text, pos, e, max_len)
            if n_all is not None and n_all <= max_len:
                out.append((pos, e, n_all))
                return
            # exponential search for an upper bound, then binary search
            lo, lo_n = 0, 0
            hi = min(rest, max(8, 4 * max_len))
            while hi < rest:
                n_hi = self.length(text[pos:pos + hi])
                if n_hi > max_len:
                    break
                lo, lo_n = hi, n_hi
                hi = min(rest, hi * 2)
            lo_k, hi_k = lo + 1, hi - 1  # answer in [lo, hi - 1]
            best, best_n = lo, lo_n
            while lo_k <= hi_k:
                mid = (lo_k + hi_k) // 2
                n_mid = self.length(text[pos:pos + mid])
                if n_mid <= max_len:
                    best, best_n = mid, n_mid
                    lo_k = mid + 1
                else:
                    hi_k = mid - 1
            if best == 0:
                best, best_n = 1, self.length(text[pos:pos + 1])
            out.append((pos, pos + best, best_n))
            pos += best

    # ------------------------------------------------------------ pass 2
    def merge(self, text: str, pieces: list[tuple[int, int, int]]) -> list[Span]:
        """Greedy packing of consecutive pieces into chunks of <= chunk_size tokens."""
        chunks: list[Span] = []
        cur: list[tuple[int, int, int]] = []
        cur_len = 0
        for p in pieces:
            if cur and cur_len + p[2] > self.chunk_size:
                chunks.append(Span(cur[0][0], cur[-1][1]))
                cur = self._overlap(text, cur) if self.chunk_overlap > 0 else []
                cur_len = sum(q[2] for q in cur)
            cur.append(p)
            cur_len += p[2]
        if cur:
            chunks.append(Span(cur[0][0], cur[-1][1]))
        return chunks

    def _overlap(self, text: str, parts: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """Trailing pieces worth up to chunk_overlap tokens; an oversized last piece is re-split."""
        budget = self.chunk_overlap
        got: list[tuple[int, int, int]] = []
        used = 0
        for i, p in enumerate(reversed(parts)):
            if p[2] > budget and (i == 0 or used < budget // 2):
                remaining = budget - used
                if remaining > 0:
                    sub = self.pieces(text, p[0], p[1], max_len=remaining)
                    for q in reversed(sub):
                        if used + q[2] > budget:
                            break
                        got.insert(0, q)
                        used += q[2]
                break
            if used + p[2] > budget:
                break
            got.insert(0, p)
            used += p[2]
        return got

    def split(self, text: str, start: int = 0, end: int | None = None) -> list[Span]:
        """The chunks of ``text[start:end]``: pass 1 (split), then pass 2 (greedy merge)."""
        end = len(text) if end is None else end
        if not text[start:end].strip():
            return []
        self._regex_spent = 0.0  # one budget for pass 1 and the overlaps
        return self.merge(text, self.pieces(text, start, end))


# ------------------------------------------------------------ registry glue
RECURSIVE_PARAMS = (
    ParamSpec("chunk_size", int, 1100, "maximum tokens per chunk (o200k)", min=1, max=1_000_000),
    ParamSpec("chunk_overlap", int, 0, "tokens back-filled from the end of the previous chunk", min=0, max=1_000_000),
    ParamSpec(
        "separators", list, list(PAPER_SEPARATORS),
        "regex separators, highest priority first, '|'-separated on the command line; '' = hard split",
    ),
)


def validate_recursive(params: dict[str, Any]) -> list[str]:
    """Cross-parameter checks (shared by the CLI, config files and the Tune widgets)."""
    out = overlap_below()(params)
    seps = params.get("separators")
    if seps is not None:
        if not [s for s in seps if s != ""]:
            out.append("separators: the list is empty (give at least one regex, e.g. \\n\\n|\\n|\\s+)")
        for s in seps:
            if s in BUILTIN_SEPARATORS:
                continue
            try:
                regex.compile(s)
            except (regex.error, OverflowError, RecursionError, ValueError) as exc:
                out.append(f"separators: invalid regex {s!r} ({exc})")
    return out


def _params_for(size: int) -> tuple[ParamSpec, ...]:
    """The recursive splitter's parameters with ``size`` as chunk_size's default."""
    return tuple(replace(p, default=size) if p.name == "chunk_size" else p for p in RECURSIVE_PARAMS)


def splitter_from_params(params: dict[str, Any]) -> RecursiveSplitter:
    """The splitter that resolved parameters describe (a final '' separator: the hard split)."""
    seps = params.get("separators") or list(PAPER_SEPARATORS)
    if seps and seps[-1] != "":
        seps = [*seps, ""]
    return RecursiveSplitter(
        chunk_size=int(params["chunk_size"]),
        chunk_overlap=int(params.get("chunk_overlap", 0)),
        separators=tuple(seps),
        regex_timeout=DEFAULT_REGEX_TIMEOUT,
    )


def chunk_recursive(doc: Document, params: dict[str, Any], ctx: Any = None) -> ChunkResult:
    """Chunk a document with the recursive splitter."""
    splitter = splitter_from_params(params)
    spans = splitter.split(doc.text)
    return ChunkResult(spans=spans)


def specs() -> list[ChunkerSpec]:
    """The registered recursive chunkers: recursive-1100 and recursive-600."""
    out = []
    for size in (1100, 600):
        out.append(ChunkerSpec(
            id=f"recursive-{size}",
            label=f"Recursive split-then-merge ({size})",
            description=(f"the paper's split-then-merge recursive splitter: Markdown-aware separators, "
                         f"pieces packed greedily up to {size} tokens"),
            params=_params_for(size),
            fn=chunk_recursive,
            family="recursive",
            validate=validate_recursive,
        ))
    return out
