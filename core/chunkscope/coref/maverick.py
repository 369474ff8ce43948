"""Optional Maverick backend (the coreference model the paper used).

Needs the extra ``chunkscope[maverick]`` (package ``maverick-coref``; the model weights
``sapienzanlp/maverick-mes-ontonotes`` are for non-commercial use). The model is a name on the
Hugging Face hub or a local directory: ``model=`` argument, else ``CHUNKSCOPE_MAVERICK_MODEL``,
else :data:`DEFAULT_MODEL`. When the package or the weights are missing, :class:`CorefError`
says which.

Pipeline (as the reference data was produced): the text is cut at line ends into windows of at
most ``WINDOW_WORDS`` words overlapping by ``OVERLAP_LINES`` lines; Maverick clusters each window;
clusters sharing a mention are merged; clusters whose mentions all read the same, and
digit-only mentions, are dropped; then :func:`clusters_to_pairs` turns clusters into
entity–pronoun pairs. (Unlike the reference data, mention ends here exclude the token's trailing
whitespace; RC only uses entity starts and pronoun ends, which are unaffected.)

Pair rule (inferred from, and checked against, the reference parquet files): the text is
POS-tagged in lower case; inside each cluster a mention nested in a longer mention of the same
cluster is dropped; a mention with a pronoun token (POS ``PRON`` or a personal pronoun) is a
pronoun mention and each such token is one pronoun; any other mention is an entity. Each pronoun
is paired with the entity of its cluster that starts closest before it (or, when none precedes
it, the cluster's first entity). A pronoun appearing in several clusters keeps the pair of the
last cluster.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any, Iterable, Sequence

from chunkscope.caching import disk_cache_written, file_used
from chunkscope.coref.base import CorefError, CorefResult, Pair, cache_dir
from chunkscope.document import Document, Span

DEFAULT_MODEL = "sapienzanlp/maverick-mes-ontonotes"
VERSION = "maverick-pairs-1"
WINDOW_WORDS = 1200  # ~2000 DeBERTa sub-word tokens
OVERLAP_LINES = 2

PERSONAL_PRONOUNS = frozenset(
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves "
    "he him his himself she her hers herself it its itself they them their theirs themselves one oneself".split()
)

MISSING_EXTRA = (
    "maverick backend unavailable: package 'maverick-coref' is not installed "
    "(pip install 'chunkscope[maverick]'; model licence is non-commercial) — or use --coref heuristic"
)


def model_name(model: str | None = None) -> str:
    """The Maverick model to load: ``model``, else ``CHUNKSCOPE_MAVERICK_MODEL``, else the default."""
    return model or os.environ.get("CHUNKSCOPE_MAVERICK_MODEL") or DEFAULT_MODEL


# --------------------------------------------------------------------------- clusters -> pairs

def _tagged_lower(text: str) -> Any:
    from chunkscope.text.nlp import english

    nlp = english(("ner", "lemmatizer", "parser"))  # POS comes from tagger + attribute_ruler
    nlp.max_length = max(nlp.max_length, len(text) + 1)
    return nlp(text.lower())


def _is_pron(tok: Any) -> bool:
    return tok.pos_ == "PRON" or tok.text in PERSONAL_PRONOUNS


def clusters_to_pairs(text: str, clusters: Iterable[Sequence[Sequence[int]]], end_inclusive: bool = True) -> list[Pair]:
    """Entity–pronoun pairs (half-open) from coreference clusters of character spans.

    ``clusters``: lists of ``[start, end]`` spans (inclusive ends by default, as in the
    reference parquet's ``mentions`` column).
    """
    spans_of: list[list[tuple[int, int]]] = [[(int(s), int(e) + (1 if end_inclusive else 0)) for s, e in c]
                                             for c in clusters]
    if not spans_of:
        return []
    sdoc = _tagged_lower(text)
    spans: dict[tuple[int, int], Any] = {}
    for c in spans_of:
        for s, e in c:
            if (s, e) not in spans:
                spans[(s, e)] = sdoc.char_span(s, e, alignment_mode="expand")

    by_pronoun: dict[tuple[int, int], Pair] = {}
    for c in spans_of:
        uniq = sorted(set(c))
        kept = [m for m in uniq
                if not any(o != m and o[0] <= m[0] and o[1] >= m[1] and o[1] - o[0] > m[1] - m[0] for o in uniq)]
        entities: set[tuple[int, int]] = set()
        pronouns: set[tuple[int, int]] = set()
        for m in kept:
            span = spans.get(m)
            if span is None or len(span) == 0:
                continue
            prons = [(t.idx, t.idx + len(t.text)) for t in span if _is_pron(t)]
            if prons:
                pronouns.update(prons)
            else:
                entities.add(m)
        if not entities or not pronouns:
            continue
        ents = sorted(entities)
        for p in sorted(pronouns):
            before = [e for e in ents if e[0] < p[0]]
            ent = max(before, key=lambda e: (e[0], -e[1])) if before else ents[0]
            by_pronoun[p] = Pair(Span(*ent), Span(*p))
    return list(by_pronoun.values())


def merge_clusters(clusters: Iterable[Iterable[tuple[int, int]]]) -> list[list[tuple[int, int]]]:
    """Union of clusters that share at least one mention (windows overlap)."""
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def find(x: tuple[int, int]) -> tuple[int, int]:
        """The root of ``x``'s set (paths halved on the way)."""
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for cluster in clusters:
        c = [(int(m[0]), int(m[1])) for m in cluster]
        for m in c:
            parent.setdefault(m, m)
        for m in c[1:]:
            ra, rb = find(c[0]), find(m)
            if ra != rb:
                parent[rb] = ra
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for m in parent:
        groups.setdefault(find(m), []).append(m)
    return [sorted(g) for g in groups.values()]


def filter_clusters(clusters: Iterable[list[tuple[int, int]]], text: str) -> list[list[tuple[int, int]]]:
    """Drop clusters whose mentions all read the same, and digit-only mentions (inclusive ends)."""
    out = []
    for c in clusters:
        norm = [re.sub(r"\s+", "", text[s:e + 1]) for s, e in c]
        if len(set(norm)) <= 1:
            continue
        keep = [m for m, n in zip(c, norm) if not n.isdigit()]
        if keep:
            out.append(keep)
    return out


# --------------------------------------------------------------------------- running the model

def load_model(model: str | None = None, device: str | None = None) -> Any:
    """The Maverick model, or CorefError naming what is missing."""
    try:
        from maverick import Maverick  # type: ignore[import-not-found]
    except ImportError:
        raise CorefError(MISSING_EXTRA) from None
    name = model_name(model)
    if device is None:
        try:
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
        except ImportError:
            device = "cpu"
    try:
        return Maverick(hf_name_or_path=name, device=device)
    except Exception as exc:  # noqa: BLE001 - a boundary: the hub, torch and Maverick's own checks raise any type,
        # and a model that does not load must be one CorefError line (the analysis goes on without RC), never a crash
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise CorefError(
            f"cannot load Maverick model {name!r} ({first}); set CHUNKSCOPE_MAVERICK_MODEL to a local model directory when offline"
        ) from None


def _windows(text: str, tokenizer: Any) -> list[tuple[int, list[str]]]:
    """(start offset, tokens with whitespace) per window of whole lines."""
    lines = text.splitlines(keepends=True)
    toks = [[t.text_with_ws for t in tokenizer(line)] for line in lines]
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line)
    out: list[tuple[int, list[str]]] = []
    i = 0
    while i < len(lines):
        j, n = i, 0
        while j < len(lines) and (j == i or n + len(toks[j]) <= WINDOW_WORDS):
            n += len(toks[j])
            j += 1
        out.append((starts[i], [t for k in range(i, j) for t in toks[k]]))
        if j >= len(lines):
            break
        i = max(i + 1, j - OVERLAP_LINES)
    return out


def find_clusters(text: str, mav: Any) -> list[list[tuple[int, int]]]:
    """Maverick clusters over the whole text, character spans with inclusive ends."""
    from chunkscope.text.nlp import english

    tokenizer = english(("ner", "lemmatizer", "parser", "tagger", "attribute_ruler", "tok2vec")).tokenizer
    found: list[list[tuple[int, int]]] = []
    for offset, toks in _windows(text, tokenizer):
        if not toks:
            continue
        starts, pos = [], offset
        for t in toks:
            starts.append(pos)
            pos += len(t)
        out = mav.predict([t.rstrip() or t for t in toks])
        for cluster in out.get("clusters_token_offsets", []):
            found.append([(starts[a], starts[b] + len(toks[b].rstrip() or toks[b]) - 1) for a, b in cluster])
    return filter_clusters(merge_clusters(found), text)


def maverick_pairs(doc: Document, model: str | None = None) -> CorefResult:
    """Maverick's entity–pronoun pairs of ``doc`` as a CorefResult (backend ``maverick``), cached on disk."""
    name = model_name(model)
    cdir = cache_dir()
    key = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[-80:]
    cfile = cdir / f"{VERSION}-{key}-{doc.sha256}.json" if cdir else None
    if cfile is not None and cfile.is_file():
        res = CorefResult.from_dict(json.loads(cfile.read_text()))
        res.info["cached"] = True
        file_used(cfile)
        return res
    mav = load_model(name)
    t0 = time.perf_counter()
    clusters = find_clusters(doc.text, mav)
    pairs = clusters_to_pairs(doc.text, clusters, end_inclusive=True)
    res = CorefResult(pairs, "maverick", reason="" if pairs else "no entity–pronoun pairs found: RC not computed",
                      info={"model": name, "clusters": len(clusters), "seconds": round(time.perf_counter() - t0, 3)})
    if cfile is not None:
        cfile.parent.mkdir(parents=True, exist_ok=True)
        cfile.write_text(json.dumps(res.to_dict()))
        disk_cache_written()
    return res
