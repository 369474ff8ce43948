"""Offline learned coreference for English (backend ``learned``).

A small pair scorer distilled from Maverick's entity–pronoun pairs (the paper's coreference
model), over features of the spaCy parse. See ``docs/coreference.md`` for the measurements.

Pipeline:

1. **Pronouns**: third-person personal pronouns (it/its/itself, they/them/their/theirs/
   themselves, he/him/his/himself, she/her/hers/herself) found in the text; HTML comments (page
   headers, page breaks) and fenced code are blanked first (same length, so offsets stay).
2. **Windows** (speed): only the text around pronouns is parsed: for each pronoun, from the
   sentence start at least ``WINDOW_BACK`` characters before it (never before the heading of its
   section) to the end of its line or sentence; overlapping windows are merged. On the corpus
   this parses about half of the text.
3. **Candidates**: spaCy noun chunks headed by a noun, and possessors ("the data subject's"),
   in the pronoun's section, starting at most ``MAX_BACK`` characters before it; plus the
   pronouns already resolved (a chain "The Board ... it ... its" pairs the last "its" with
   "The Board", as Maverick pairs each pronoun with its cluster's closest preceding entity).
4. **Scoring**: a logistic regression over (pronoun, candidate) features — distance in characters,
   sentences and paragraphs; agreement of number and person; the candidate's syntactic role,
   salience (earlier mentions of the same head), proper noun / acronym, determiner, heading;
   pleonastic-"it" rules; the pronoun's form and role. The best candidate is paired when its
   probability exceeds the model's threshold. The weights are ``pair_model.json`` (next to this
   file), written by ``tools/train_coref.py`` from the two corpus folders; each pair carries its
   probability as ``Pair.score``.

Results are cached on disk by (document sha256, model version, ``READ_VERSION``) under
``$CHUNKSCOPE_CACHE_DIR/coref`` when that variable is set.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from chunkscope.coref.base import CorefResult, Pair, cached_pairs
from chunkscope.coref.heuristic.candidates import is_plural, noun_chunks
from chunkscope.coref.heuristic.inline import CodeSpans, quoted_word
from chunkscope.coref.heuristic.lexicon import NOUN_TAGS, PERSON_NOUNS, PRONOUN_TAGS, PRONOUNS
from chunkscope.coref.heuristic.pleonastic import pleonastic
from chunkscope.coref.heuristic.rules import EXCLUDE
from chunkscope.document import Document, Span

MODEL_FILE = Path(__file__).with_name("pair_model.json")
WINDOW_BACK = 400  # characters of context parsed before each pronoun
MAX_BACK = 1500  # farthest candidate start before the pronoun, in characters
MAX_CANDIDATES = 40  # nearest candidates scored per pronoun
BATCH_SIZE = 64

GROUPS = ("it", "they", "he", "she")
GROUP_OF = {w: ("it" if n == "sg" and k == "thing" else "they" if n == "pl" else
                "she" if w.startswith(("she", "her")) else "he") for w, (n, k) in PRONOUNS.items()}
REFLEXIVE = frozenset({"itself", "themselves", "himself", "herself"})
POSSESSIVE = frozenset({"its", "their", "theirs", "his", "hers"})
_PRONOUN_RE = re.compile(r"\b(?:" + "|".join(sorted(PRONOUNS, key=len, reverse=True)) + r")\b", re.I)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HEADING = re.compile(r"(?:^|\n)[ \t]*#", re.S)
_SENT_END = re.compile(r"[.!?;:](?=\s)|\n")
_PARA = re.compile(r"\n[ \t]*\n")
_SUBJ = frozenset({"nsubj", "nsubjpass"})
_ARGS = frozenset({"nsubj", "nsubjpass", "dobj", "iobj", "attr", "dative"})
_DETS = {"the": 1, "a": 2, "an": 2, "this": 3, "that": 3, "these": 3, "those": 3, "such": 3}
_MODALS = frozenset("is was will would can could may might should shall must has had does did".split())


# --------------------------------------------------------------------------- mentions

@dataclass(eq=False)
class Mention:
    """A candidate antecedent (noun phrase) or a pronoun, with what the features need."""

    start: int
    end: int
    sent: int  # sentence index within the parsed windows (global, increasing)
    head: str  # lower-cased root word
    plural: bool = False
    person: bool = False
    proper: bool = False
    acronym: bool = False
    subject: bool = False
    dobj: bool = False
    pobj: bool = False
    embedded: bool = False
    poss: bool = False
    conj: bool = False
    heading: bool = False
    first: bool = False  # first noun phrase of its sentence
    det: int = 0  # 0 none, 1 the, 2 a/an, 3 demonstrative/such
    ntok: int = 1
    arg: bool = False
    head_i: int = -1  # root's syntactic head (token index in its window + window base)
    root_i: int = -1
    # pronouns only
    word: str = ""
    pleonastic: bool = False
    upper_it: bool = False
    modal_next: bool = False
    ent: tuple[int, int] | None = None  # a resolved pronoun: the entity it stands for
    score: float = 0.0
    info_vec: np.ndarray | None = field(default=None, repr=False)  # cached candidate features


@dataclass
class Parsed:
    """Mentions of one text: candidates and pronouns in text order, and section starts."""

    cands: list[Mention]
    pronouns: list[Mention]
    sections: list[int]  # sorted start offsets of heading lines (a section starts at each)
    text: str
    parsed_chars: int = 0
    info: dict[str, Any] = field(default_factory=dict)


READ_VERSION = "read-4"  # what is read of the text (2: fenced code blanked too; 3: no pronoun in inline code; 4: nor a quoted one); part of the cache key


def _masked(text: str) -> str:
    """HTML comments and fenced code blanked to spaces (offsets unchanged)."""
    from chunkscope.text.blocks import code_spans

    out = _COMMENT.sub(lambda m: " " * len(m.group()), text)
    parts, pos = [], 0
    for a, b in code_spans(text):  # sorted, disjoint
        parts += [out[pos:a], re.sub(r"[^\n]", " ", out[a:b])]
        pos = b
    return "".join(parts) + out[pos:]


def _windows(text: str, sections: Sequence[int], back: int = WINDOW_BACK) -> list[tuple[int, int]]:
    """Merged [start, end) windows around the pronouns of ``text``."""
    out: list[tuple[int, int]] = []
    n = len(text)
    for m in _PRONOUN_RE.finditer(text):
        p = m.start()
        k = bisect.bisect_right(sections, p) - 1
        sec = sections[k] if k >= 0 else 0
        lo = max(sec, p - back)
        if lo > sec:  # snap to the start of a sentence or line at or before lo
            cut = max(text.rfind("\n", sec, lo), text.rfind(". ", sec, lo))
            lo = cut + 1 if cut >= 0 else sec
        nl = text.find("\n", m.end())
        hi = n if nl < 0 else nl
        dot = text.find(". ", m.end(), hi)
        if dot >= 0:
            hi = dot + 1
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _section_starts(text: str) -> list[int]:
    return [m.end() - 1 for m in _HEADING.finditer(text)]


def parse(text: str, nlp: Any = None, back: int = WINDOW_BACK) -> Parsed:
    """Parse the windows of ``text`` and collect candidate and pronoun mentions."""
    if nlp is None:
        from chunkscope.text.nlp import english

        nlp = english(EXCLUDE)
    masked = _masked(text)
    code = CodeSpans(masked)  # inline code: a pronoun there is none
    sections = _section_starts(masked)
    wins = _windows(masked, sections, back)
    cands: list[Mention] = []
    prons: list[Mention] = []
    sent_base = 0
    tok_base = 0
    for (w0, _w1), sdoc in zip(wins, nlp.pipe((masked[a:b] for a, b in wins), batch_size=BATCH_SIZE)):
        sents = list(sdoc.sents)
        sent_of = {t.i: sent_base + k for k, s in enumerate(sents) for t in s}
        cands.extend(_window_candidates(sdoc, masked, w0, sent_of, tok_base))
        prons.extend(_window_pronouns(sdoc, masked, w0, sent_of, tok_base, code))
        sent_base += len(sents)
        tok_base += len(sdoc) + 1
    return Parsed(cands, prons, sections, text, parsed_chars=sum(b - a for a, b in wins),
                  info={"windows": len(wins)})


def _window_candidates(sdoc: Any, masked: str, w0: int, sent_of: dict[int, int], tok_base: int) -> list[Mention]:
    """The candidate mentions of one parsed window (``sdoc``, starting at ``w0`` of ``masked``), in text order,
    the first of each sentence marked."""
    spans = noun_chunks(sdoc)
    spans += [sdoc[t.left_edge.i: t.i + 1] for t in sdoc if t.dep_ == "poss" and t.tag_ in NOUN_TAGS]
    found = [m for m in (_candidate(nc, masked, w0, sent_of, tok_base) for nc in spans) if m is not None]
    found.sort(key=lambda c: (c.start, c.end))
    first_seen: set[int] = set()
    for c in found:
        if c.sent not in first_seen:
            c.first = True
            first_seen.add(c.sent)
    return found


def _candidate(nc: Any, masked: str, w0: int, sent_of: dict[int, int], tok_base: int) -> Mention | None:
    """The noun chunk ``nc`` as a candidate mention, or None when no noun heads it or it holds a pronoun."""
    root = nc.root
    if root.tag_ not in NOUN_TAGS or root.like_num or not any(ch.isalpha() for ch in root.text):
        return None
    if any(t.tag_ in PRONOUN_TAGS for t in nc):
        return None
    toks = [t for t in nc if not t.is_space]
    if not toks:
        return None
    start = w0 + toks[0].idx
    end = w0 + toks[-1].idx + len(toks[-1].text)
    line_start = masked.rfind("\n", 0, start) + 1
    return Mention(
        start=start, end=end, sent=sent_of[root.i], head=root.lower_, plural=is_plural(root),
        person=root.lower_ in PERSON_NOUNS, proper=root.tag_ in ("NNP", "NNPS"),
        acronym=len(root.text) >= 2 and root.text.isupper(), subject=root.dep_ in _SUBJ,
        dobj=root.dep_ == "dobj", pobj=root.dep_ == "pobj",
        embedded=root.dep_ == "pobj" and root.head.dep_ == "prep" and root.head.head.tag_ in NOUN_TAGS,
        poss=root.dep_ == "poss", conj=root.dep_ == "conj",
        heading=masked[line_start:start].lstrip().startswith("#"),
        det=_DETS.get(toks[0].lower_, 0), ntok=len(toks), arg=root.dep_ in _ARGS,
        head_i=tok_base + root.head.i, root_i=tok_base + root.i,
    )


def _window_pronouns(sdoc: Any, masked: str, w0: int, sent_of: dict[int, int], tok_base: int,
                     code: CodeSpans) -> list[Mention]:
    """The third-person pronouns of one parsed window, but not a word of code nor a word quoted (no reference)."""
    prons = []
    for tok in sdoc:
        low = tok.lower_
        if low not in PRONOUNS or tok.tag_ not in ("PRP", "PRP$") or code.at(w0 + tok.idx) is not None \
                or quoted_word(masked, w0 + tok.idx, w0 + tok.idx + len(tok.text)):
            continue
        nxt = sdoc[tok.i + 1] if tok.i + 1 < len(sdoc) else None
        prons.append(Mention(
            start=w0 + tok.idx, end=w0 + tok.idx + len(tok.text), sent=sent_of[tok.i], head=low, word=low,
            subject=tok.dep_ in _SUBJ, dobj=tok.dep_ == "dobj", pobj=tok.dep_ == "pobj", poss=tok.dep_ == "poss",
            pleonastic=low == "it" and pleonastic(tok), upper_it=tok.text == "IT",
            modal_next=nxt is not None and nxt.lower_ in _MODALS,
            first=tok.i == tok.sent.start, arg=tok.dep_ in _ARGS,
            head_i=tok_base + tok.head.i, root_i=tok_base + tok.i,
        ))
    return prons


# --------------------------------------------------------------------------- features

def _agree(group: str, c: Mention) -> bool:
    """The hand rule of agreement (number and person)."""
    if group == "it":
        return not c.plural and not c.person
    if group == "they":
        return c.plural or c.person
    return c.person and not c.plural


FEATURES: tuple[str, ...] = (
    "bias",
    *(f"grp={g}" for g in GROUPS),
    *(f"agr:{g}:pl={pl}:pers={pe}" for g in GROUPS for pl in (0, 1) for pe in (0, 1)),
    "agree", "pleonastic", "upper_it", "modal_next", "pron_subject", "pron_poss", "pron_reflexive", "pron_first",
    "logdist", "dist/100", "sent=0", "sent=1", "sent=2", "sent>=3", "para=1", "para>=2",
    "rank=0", "rank=1", "rank=2", "rank>=3", "disagree_rank=0",
    "c_subject", "c_dobj", "c_pobj", "c_embedded", "c_poss", "c_conj", "c_proper", "c_acronym", "c_heading",
    "c_first", "det=the", "det=a", "det=dem", "log_ntok", "log_salience", "binding",
    "parallel_subject", "chain", "chain_same_group",
)
_FI = {f: i for i, f in enumerate(FEATURES)}


def candidates(parsed: Parsed, pi: int, resolved: Sequence[Mention]) -> list[Mention]:
    """Candidates of pronoun ``pi``: noun phrases and resolved pronouns of its section before it."""
    p = parsed.pronouns[pi]
    k = bisect.bisect_right(parsed.sections, p.start) - 1
    sec = parsed.sections[k] if k >= 0 else 0
    lo = max(sec, p.start - MAX_BACK)
    starts = _cand_starts(parsed)
    a = bisect.bisect_left(starts, lo)
    b = bisect.bisect_left(starts, p.start)
    out = [c for c in parsed.cands[a:b] if c.end <= p.start]
    out += [r for r in resolved if lo <= r.start < p.start]
    out.sort(key=lambda c: c.start)
    return out[-MAX_CANDIDATES:]


def _cand_starts(parsed: Parsed) -> list[int]:
    key = "_starts"
    if key not in parsed.info:
        parsed.info[key] = [c.start for c in parsed.cands]
    return parsed.info[key]


def _static(c: Mention) -> np.ndarray:
    """The candidate's own features (independent of the pronoun), computed once per mention."""
    v = np.zeros(len(FEATURES))
    if c.ent is not None:  # a resolved pronoun
        v[_FI["chain"]] = 1
        return v
    for name, on in (("c_subject", c.subject), ("c_dobj", c.dobj), ("c_pobj", c.pobj), ("c_embedded", c.embedded),
                     ("c_poss", c.poss), ("c_conj", c.conj), ("c_proper", c.proper), ("c_acronym", c.acronym),
                     ("c_heading", c.heading), ("c_first", c.first)):
        v[_FI[name]] = on
    if c.det:
        v[_FI[("det=the", "det=a", "det=dem")[c.det - 1]]] = 1
    v[_FI["log_ntok"]] = math.log(c.ntok)
    return v


def _cumulative(parsed: Parsed) -> tuple[np.ndarray, np.ndarray]:
    """Running counts of sentence ends and paragraph breaks by character offset."""
    if "_cum" not in parsed.info:
        n = len(parsed.text)
        se = np.zeros(n + 1, dtype=np.int32)
        pa = np.zeros(n + 1, dtype=np.int32)
        se[[m.start() + 1 for m in _SENT_END.finditer(parsed.text)]] = 1
        pa[[m.start() + 1 for m in _PARA.finditer(parsed.text)]] = 1
        parsed.info["_cum"] = (np.cumsum(se), np.cumsum(pa))
    return parsed.info["_cum"]


_C = {k: _FI[k] for k in FEATURES}
_AGR = {(g, pl, pe): _FI[f"agr:{g}:pl={pl}:pers={pe}"] for g in GROUPS for pl in (0, 1) for pe in (0, 1)}


def featurize(parsed: Parsed, pi: int, cands: Sequence[Mention]) -> np.ndarray:
    """(len(cands), len(FEATURES)) feature matrix of pronoun ``pi`` against its candidates (in text order)."""
    p = parsed.pronouns[pi]
    group = GROUP_OF[p.word]
    n = len(cands)
    X = np.array([c.info_vec if c.info_vec is not None else _set_vec(c) for c in cands])
    # the pronoun's own features
    X[:, _C["bias"]] = 1
    X[:, _C[f"grp={group}"]] = 1
    X[:, _C["pleonastic"]] = p.pleonastic
    X[:, _C["upper_it"]] = p.upper_it
    X[:, _C["modal_next"]] = p.modal_next and group == "it"
    X[:, _C["pron_subject"]] = p.subject
    X[:, _C["pron_poss"]] = p.word in POSSESSIVE or p.poss
    X[:, _C["pron_reflexive"]] = p.word in REFLEXIVE
    X[:, _C["pron_first"]] = p.first
    # distances
    starts = np.array([c.start for c in cands])
    ends = np.array([c.end for c in cands])
    dist = np.maximum(0, p.start - starts)
    X[:, _C["logdist"]] = np.log1p(dist)
    X[:, _C["dist/100"]] = np.minimum(dist, MAX_BACK) / 100
    se, pa = _cumulative(parsed)
    ends_c = np.minimum(ends, p.start)
    ns = np.minimum(3, se[p.start] - se[ends_c])
    rows = np.arange(n)
    X[rows, np.array([_C["sent=0"], _C["sent=1"], _C["sent=2"], _C["sent>=3"]])[ns]] = 1
    npara = pa[p.start] - pa[ends_c]
    X[:, _C["para=1"]] = npara == 1
    X[:, _C["para>=2"]] = npara >= 2
    # agreement, and rank among the agreeing candidates (nearest first)
    chain = np.array([c.ent is not None for c in cands])
    ok = np.array([(GROUP_OF.get(c.word) == group) if c.ent is not None else _agree(group, c) for c in cands])
    X[:, _C["agree"]] = ok
    rank = np.cumsum(ok[::-1])[::-1] - 1  # agreeing candidates after (nearer than) each, itself included
    rank_cols = np.array([_C["rank=0"], _C["rank=1"], _C["rank=2"], _C["rank>=3"]])
    X[rows[ok], rank_cols[np.minimum(3, rank[ok])]] = 1
    dis = np.flatnonzero(~ok)
    if len(dis):
        X[dis[-1], _C["disagree_rank=0"]] = 1
    X[:, _C["chain_same_group"]] = chain & ok
    subj = np.array([c.subject for c in cands])
    X[:, _C["parallel_subject"]] = p.subject & subj
    # noun phrases: agreement cell, salience, binding
    seen: dict[str, int] = {}
    binding_ok = p.word not in REFLEXIVE and p.word not in POSSESSIVE
    for i, c in enumerate(cands):
        if c.ent is not None:
            continue
        X[i, _AGR[(group, int(c.plural), int(c.person))]] = 1
        seen[c.head] = seen.get(c.head, 0) + 1
        X[i, _C["log_salience"]] = math.log(seen[c.head])
        if binding_ok and c.sent == p.sent and c.arg and c.head_i == p.head_i:
            X[i, _C["binding"]] = 1
    return X


def _set_vec(c: Mention) -> np.ndarray:
    c.info_vec = _static(c)
    return c.info_vec


# --------------------------------------------------------------------------- model

@dataclass
class PairModel:
    """The pair scorer: logistic regression weights over standardised features, and the pairing threshold."""

    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    threshold: float
    version: str
    meta: dict[str, Any] = field(default_factory=dict)

    def prob(self, X: np.ndarray) -> np.ndarray:
        """The probability of each row of the feature matrix ``X`` (one candidate each)."""
        z = ((X - self.mean) / self.scale) @ self.weights
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def to_dict(self) -> dict[str, Any]:
        """The model as ``pair_model.json`` holds it (numbers rounded to 6 decimals)."""
        r = lambda a: [round(float(v), 6) for v in a]  # noqa: E731
        return {"version": self.version, "features": list(FEATURES), "weights": r(self.weights),
                "mean": r(self.mean), "scale": r(self.scale), "threshold": round(float(self.threshold), 6),
                "window_back": WINDOW_BACK, "max_back": MAX_BACK, "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "PairModel":
        """The model of a ``pair_model.json``; ValueError when its features are not this version's."""
        if list(d.get("features", [])) != list(FEATURES):
            raise ValueError("pair model features do not match this version of chunkscope (retrain it)")
        return cls(np.asarray(d["weights"], float), np.asarray(d["mean"], float), np.asarray(d["scale"], float),
                   float(d["threshold"]), str(d["version"]), dict(d.get("meta", {})))


@functools.lru_cache(maxsize=2)
def load_model(path: str | None = None) -> PairModel:
    """The shipped pair model (``pair_model.json``), or the one at ``path``."""
    p = Path(path) if path else MODEL_FILE
    return PairModel.from_dict(json.loads(p.read_text(encoding="utf-8")))


def decode(parsed: Parsed, model: PairModel) -> list[Pair]:
    """Resolve the pronouns in text order; a resolved pronoun becomes a candidate for later ones."""
    pairs: list[Pair] = []
    resolved: list[Mention] = []
    for p in parsed.pronouns:
        p.ent = None
    for pi, p in enumerate(parsed.pronouns):
        cands = candidates(parsed, pi, resolved)
        if not cands:
            continue
        probs = model.prob(featurize(parsed, pi, cands))
        j = int(np.argmax(probs))
        if probs[j] < model.threshold:
            continue
        best = cands[j]
        ent = best.ent if best.ent is not None else (best.start, best.end)
        score = float(probs[j])
        pairs.append(Pair(Span(*ent), Span(p.start, p.end), score=round(score, 3)))
        p.ent, p.score = ent, score
        resolved.append(p)
    return pairs


def resolve(text: str, nlp: Any = None, model: PairModel | None = None) -> list[Pair]:
    """Learned entity–pronoun pairs (half-open spans, each with its probability) of English ``text``."""
    return decode(parse(text, nlp), model or load_model())


def learned_pairs(doc: Document) -> CorefResult:
    """Cached :func:`resolve` of ``doc.text`` as a CorefResult (backend ``learned``)."""
    model = load_model()
    return cached_pairs(doc, "learned", f"{model.version}-{READ_VERSION}", lambda text: resolve(text, model=model),
                        {"model": "learned pair scorer (pair_model.json)"})


