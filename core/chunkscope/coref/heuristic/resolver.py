"""Resolution: each pronoun of the parsed segments, in text order, paired with its best-scoring candidate (the
rules' salience score, ``Rules``), searched in tiers (the noun phrase a reflexive stresses or a possessive's
coordinated noun first; in a heading, its own words, then its parent heading, then the section before)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from chunkscope.coref.base import CorefResult, Pair, cached_pairs
from chunkscope.coref.heuristic.candidates import Candidate, candidates_of, is_plural
from chunkscope.coref.heuristic.inline import CodeSpans, quoted_word
from chunkscope.coref.heuristic.lexicon import (
    ARG_DEPS,
    FIRST_PERSON,
    NOUN_TAGS,
    NUMBER_NEUTRAL,
    PRONOUNS,
    REFLEXIVE,
    RELATIVE,
    SUBJECT_DEPS,
)
from chunkscope.coref.heuristic.pleonastic import pleonastic
from chunkscope.coref.heuristic.rules import (
    BATCH_SIZE,
    CROSS_BLOCK_TOKENS,
    EXCLUDE,
    RULES,
    VERSION,
    WE_SENTENCES_BACK,
    Rules,
)
from chunkscope.coref.heuristic.segments import (
    Segment,
    all_blocks,
    next_mention,
    parent_heading,
    parse_windows,
    reaches_lead,
)
from chunkscope.document import Document, Span

_DETERMINERS = re.compile(r"^(the|a|an|this|that|these|those|such|each|every|any)\s+")
# a heading that names a part of the document rather than a topic: not what a pronoun below it refers to
_PART_NAME = re.compile(r"^(?:introduction|conclusions?|(?:executive )?summary|overview|background|contents|"
                        r"table of contents|preamble|references|bibliography|abstract|foreword|preface|glossary|"
                        r"definitions|(?:main|key) (?:points|messages|findings|takeaways)|"
                        r"(?:chapter|section|article|part|annex|appendix|title)\b.*)$")


def _in_clause_of(tok: Any, root: Any) -> bool:
    """``tok`` lies in a clause modifying the noun ``root`` ("personal data which are, by their nature, ...",
    "data concerning them"), not merely in a conjunct ("vehicles and their trailers")."""
    for anc in tok.ancestors:
        if anc.head.i == root.i and anc.i != root.i:
            return anc.dep_ in ("relcl", "acl")
    return False


def _norm_span(text: str, start: int, end: int) -> str:
    """A mention's words, lower-cased, without a leading determiner: the key of a repeated name."""
    return _DETERMINERS.sub("", text[start:end].lower()).strip()


def _agree(c: Candidate, number: str, kind: str) -> float | None:
    """None when incompatible, else a penalty (0 = perfect)."""
    if kind == "thing":
        return None if c.plural or c.person else 0.0
    if kind == "person":
        return None if c.plural or not c.person else 0.0
    if kind == "we":  # the organisation speaking: a singular proper name, subject of its sentence
        return 0.0 if c.proper and c.subject else None
    if kind == "I":  # the speaker of a quotation
        return 0.0 if c.proper and c.subject and c.speaker else None
    # they/them/their: plural, or a singular person ("the data subject ... their")
    if c.plural:
        return 0.0
    return 8.0 if c.person else None


def _coargument(c: Candidate, tok: Any, low: str, psent: int, bi: int) -> bool:
    """Binding: ``c`` is a co-argument of the non-reflexive, non-possessive pronoun ``tok``'s own verb, so it is
    not its antecedent (a possessive may corefer with its verb's subject: "it ... its")."""
    return c.block == bi and c.sent == psent and low not in REFLEXIVE and tok.tag_ != "PRP$" and c.arg \
        and c.head_i == tok.head.i


def _bound(tok: Any, low: str, psent: int, bi: int, visible: list[Candidate]) -> set[tuple[int, int]]:
    """The entities of the resolved pronouns that are co-arguments of ``tok``'s verb: binding keeps the pronoun
    from their entity too ("although **it** does not require **it**": not both XML)."""
    return {c.ent for c in visible if c.pron is not None and _coargument(c, tok, low, psent, bi)}


def _best(tok: Any, low: str, number: str, pkind: str, psent: int, bi: int, cands: list[Candidate],
          near: list[Candidate], rules: Rules, bound: set[tuple[int, int]] | None = None) -> Candidate | None:
    """The best-scoring antecedent of the pronoun ``tok`` among ``cands`` (``near``: counted one sentence
    back wherever they are: the sentence introducing a list, a parent heading; ``bound``: entities it
    cannot take, :func:`_bound`)."""
    best, best_score = None, None
    for c in cands:
        if bound and c.ent in bound:
            continue
        dist_sent = psent - c.sent
        if c in near:
            dist_sent = 1
        elif dist_sent > rules.max_sentences_back:
            continue
        if pkind in ("we", "I") and c.pron is None and dist_sent > WE_SENTENCES_BACK:
            continue
        if c.pron is not None:
            if c.pron != (number, pkind):
                continue
            pen = -rules.pronoun_bonus
        else:
            agreed = _agree(c, number, pkind)
            if agreed is None:
                continue
            pen = agreed
        same_block = c.block == bi
        if _coargument(c, tok, low, psent, bi):
            continue
        dist_tok = (tok.i - c.tok) if same_block else CROSS_BLOCK_TOKENS
        score = (rules.subject_bonus if c.subject else 0.0) - (rules.embedded_penalty if c.embedded else 0.0) \
            - rules.sentence_penalty * dist_sent - rules.token_penalty * dist_tok - pen
        if best_score is None or score > best_score:
            best, best_score = c, score
    return best


def _conjunct_owner(tok: Any, visible: list[Candidate]) -> Candidate | None:
    """For a possessive on a noun coordinated with an earlier noun ("the parameter or its member", "vehicles and
    their trailers", "the level of protection and its scope"): that earlier noun's candidate (``_best`` still
    checks agreement), else None. On the 12 corpus documents it changes 67 pairs, 45 of them to Maverick's pair
    (8 of those it replaces were Maverick's); with nouns in an "of" phrase left out, 41 and 24 (6)."""
    owner = tok.head.head
    if tok.dep_ != "poss" or tok.head.dep_ != "conj" or owner.tag_ not in NOUN_TAGS or owner.i > tok.i:
        return None
    c = next((c for c in reversed(visible) if c.tok == owner.i and c.pron is None), None)
    return replace(c, plural=is_plural(owner, coordinated=False)) if c is not None else None  # the noun alone



def resolve(text: str, nlp: Any = None, windows: bool = True, rules: Rules = RULES) -> list[Pair]:
    """Heuristic entity–pronoun pairs (half-open spans) for English ``text``.

    ``windows``: parse only what the rules can use (:func:`~chunkscope.coref.heuristic.segments.segments_of`);
    False parses every block (the same rules; kept to check that the windows change nothing that matters)."""
    if nlp is None:
        from chunkscope.text.nlp import english

        nlp = english(EXCLUDE)
    segs = parse_windows(text, rules) if windows else all_blocks(text)
    return resolve_parsed(text, segs, nlp.pipe((sg.text for sg in segs), batch_size=BATCH_SIZE), rules)


def resolve_parsed(text: str, segs: list[Segment], docs: Any, rules: Rules = RULES) -> list[Pair]:
    """The rules over parsed segments (``docs``: one spaCy Doc per segment, in order)."""
    reader = _Reader(text, rules)
    for bi, (seg, sdoc) in enumerate(zip(segs, docs)):
        reader.read(bi, seg, sdoc)
    return reader.pairs


def heuristic_pairs(doc: Document) -> CorefResult:
    """Cached :func:`resolve` of ``doc.text`` as a CorefResult (backend ``heuristic``)."""
    return cached_pairs(doc, "heuristic", VERSION, resolve)


@dataclass
class _Here:
    """The segment being read, as its pronouns see it."""

    bi: int  # its index
    seg: Segment
    sdoc: Any  # its spaCy Doc
    sent_of: dict[int, int]  # token index -> global sentence index
    before: list[Candidate]  # in a heading (``Rules.heading_back``): the previous section's last candidates
    parent: list[Candidate]  # ... and the parent heading's (not one naming a part of the document)
    visible: list[Candidate] = field(default_factory=list)  # its candidates read so far, resolved pronouns too


class _Reader:
    """The rules' state while the parsed segments are read in order; ``pairs`` holds what they found."""

    def __init__(self, text: str, rules: Rules) -> None:
        self.text, self.rules = text, rules
        self.code = CodeSpans(text)
        self.pairs: list[Pair] = []
        self.pool: list[Candidate] = []  # candidates (noun phrases and resolved pronouns) of the current section
        self.lead: list[Candidate] = []  # candidates of the sentence introducing the current list
        self.heads: list[tuple[int, list[Candidate]]] = []  # (level, candidates) of the enclosing headings parsed
        self.sent_base = 0
        self.lead_end = 0  # where the block introducing the current list ends

    def read(self, bi: int, seg: Segment, sdoc: Any) -> None:
        """Resolve the pronouns of one parsed segment, then keep its candidates for the segments after it."""
        before, parent = self._enter(seg)
        cands, sent_of = candidates_of(sdoc, seg.offset, bi, self.sent_base, self.code)
        if seg.level:
            self.heads.append((seg.level, cands))
        n_sents = (max(sent_of.values()) - self.sent_base + 1) if sent_of else 0
        self.pool = [c for c in self.pool if c.sent >= self.sent_base - self.rules.max_sentences_back]
        here = _Here(bi, seg, sdoc, sent_of, before, parent)
        visible = here.visible
        ci = 0
        for tok in sdoc:
            while ci < len(cands) and cands[ci].end <= seg.offset + tok.idx:
                visible.append(cands[ci])
                ci += 1
            self._token(tok, here)
        visible.extend(cands[ci:])
        visible.sort(key=lambda c: c.start)
        if not seg.item:
            self.lead_end = seg.block[1]
            self.lead = [c for c in visible if c.sent == self.sent_base + n_sents - 1 or c.subject]
        self.pool.extend(visible)
        self.sent_base += n_sents

    def _enter(self, seg: Segment) -> tuple[list[Candidate], list[Candidate]]:
        """Start reading ``seg``: a new section empties the pool, text left out moves the sentence count on.
        Returns (before, parent) of :class:`_Here`."""
        rules = self.rules
        before: list[Candidate] = []
        parent: list[Candidate] = []
        if seg.kind == "heading" or seg.reset:
            if seg.kind == "heading" and rules.heading_back and not seg.gap:
                before = [c for c in self.pool if c.sent >= self.sent_base - rules.max_sentences_back]
            self.pool, self.lead = [], []
        if seg.level:
            above = parent_heading(self.heads, seg.level)
            if rules.heading_back and above:
                parent = [c for c in above if not _PART_NAME.match(_norm_span(self.text, c.start, c.end))]
        if seg.gap:  # text left out since the previous segment: its candidates are out of reach
            self.sent_base += rules.max_sentences_back + 1
        return before, parent

    def _token(self, tok: Any, here: _Here) -> None:
        """Pair ``tok`` if it is a pronoun the rules resolve (or, with ``Rules.forward``, a relative pronoun)."""
        low = tok.lower_
        if self.rules.forward and _relative(tok, low):
            nxt = next_mention(self.text, here.seg.offset + tok.idx + len(tok.text), tok.head.head.text)
            if nxt is not None:
                self.pairs.append(Pair(Span(*nxt), _token_span(tok, here.seg.offset)))
            return
        info = _pronoun_info(tok, low, self.rules)
        if info is None or not self._refers(tok, low, here.seg.offset):
            return
        psent = here.sent_of[tok.i]
        best, tiers = self._tiers(tok, low, here)
        bound = _bound(tok, low, psent, here.bi, here.visible)
        for tier, near in tiers:
            if best is not None:
                break
            best = _best(tok, low, info[0], info[1], psent, here.bi, tier, near, self.rules, bound)
        if best is not None:
            self._pair(tok, best, info, psent, bound, here)

    def _refers(self, tok: Any, low: str, offset: int) -> bool:
        """The pronoun ``tok`` is a reference: not a word of code or of a string in it ("`\\"It's\\"`"), not a word
        quoted, not a pleonastic "it" nor "IT" (information technology) in mixed-case text."""
        at = offset + tok.idx
        if self.code.at(at) is not None or quoted_word(self.text, at, at + len(tok)):
            return False
        return not (low == "it" and (pleonastic(tok) or (tok.text == "IT" and any(ch.islower() for ch in tok.sent.text))))

    def _tiers(self, tok: Any, low: str, here: _Here) -> tuple[Candidate | None, list[tuple[list[Candidate], list[Candidate]]]]:
        """(an antecedent decided already or None, the ``(candidates, near)`` tiers searched in order for one)."""
        seg, visible, pool = here.seg, here.visible, self.pool
        extra = [c for c in self.lead if c not in pool] if seg.item and reaches_lead(seg.block[0], self.lead_end) \
            else []
        if seg.level and self.rules.heading_back:  # the heading's own words, its parent heading, the section before
            tiers = [(pool + visible, []), (here.parent, here.parent), (here.before, [])]
        else:
            tiers = [(here.before + pool + visible + extra, extra)]
        best = None
        if low in REFLEXIVE and visible and not self.text[visible[-1].end:seg.offset + tok.idx].strip():
            tiers.insert(0, ([visible[-1]], []))  # "the system itself": the noun phrase it stresses
            if low == "itself" and visible[-1].pron is None \
                    and self.text[visible[-1].start:visible[-1].end].split()[-1].lower() in NUMBER_NEUTRAL:
                best = visible[-1]  # "the data itself" (the tagger may call "data" plural)
        owner = _conjunct_owner(tok, visible)
        if owner is not None:
            tiers.insert(0, ([owner], []))  # "the parameter or its member": the noun it is coordinated with
        return best, tiers

    def _pair(self, tok: Any, best: Candidate, info: tuple[str, str], psent: int, bound: set[tuple[int, int]],
              here: _Here) -> None:
        """Pair the pronoun ``tok`` with the entity of ``best`` (or its nearest repeat, or with ``Rules.forward``
        the next mention of a noun whose clause holds it), and make it a candidate for later pronouns."""
        offset, sdoc = here.seg.offset, here.sdoc
        ent = best.ent
        if self.rules.forward and best.pron is None and best.block == here.bi and _in_clause_of(tok, sdoc[best.tok]):
            # the pronoun is inside its antecedent's phrase: Maverick pairs the next mention
            nxt = next_mention(self.text, offset + tok.idx + len(tok.text), sdoc[best.tok].text)
            if nxt is not None:
                self.pairs.append(Pair(Span(*nxt), _token_span(tok, offset)))
                here.visible.append(_pronoun_candidate(tok, offset, psent, here.bi, info, ent))
                return
        if best.pron is None or self.rules.nearest_mention:
            ent = self._nearest_repeat(ent, here)
        if ent in bound:
            return  # its nearest mention is the co-argument's entity
        self.pairs.append(Pair(Span(*ent), _token_span(tok, offset)))
        here.visible.append(_pronoun_candidate(tok, offset, psent, here.bi, info, ent))

    def _nearest_repeat(self, ent: tuple[int, int], here: _Here) -> tuple[int, int]:
        """The same name as ``ent`` repeated closest before the pronoun: the mention Maverick pairs with."""
        key = _norm_span(self.text, *ent)
        for c in reversed(here.before + self.pool + here.visible):
            if c.start <= ent[0]:
                break
            if c.pron is None and _norm_span(self.text, c.start, c.end) == key:
                return c.ent
        return ent


def _relative(tok: Any, low: str) -> bool:
    """``tok`` is a relative pronoun ("that", "who", "whom") opening a clause on a noun before it."""
    return low in RELATIVE and tok.tag_ in ("WDT", "WP") and tok.head.dep_ == "relcl" \
        and tok.head.head.tag_ in NOUN_TAGS and tok.head.head.i < tok.i


def _pronoun_info(tok: Any, low: str, rules: Rules) -> tuple[str, str] | None:
    """(number, kind) of the personal pronoun ``tok`` (``low``: its lower-cased text), or None for another word."""
    info = PRONOUNS.get(low)
    if info is None and rules.first_person and tok.text not in ("US", "i"):
        info = FIRST_PERSON.get(low)  # ("US": the country; "i": a list number)
        if low == "i" and tok.i and tok.nbor(-1).tag_ in NOUN_TAGS:
            return None  # "Annex I", "Title I": a number
    if info is None or tok.tag_ not in ("PRP", "PRP$"):
        return None
    return info


def _token_span(tok: Any, offset: int) -> Span:
    """The span of ``tok`` in the text its segment starts at ``offset`` of."""
    return Span(offset + tok.idx, offset + tok.idx + len(tok.text))


def _pronoun_candidate(tok: Any, offset: int, psent: int, bi: int, info: tuple[str, str],
                       ent: tuple[int, int]) -> Candidate:
    """The resolved pronoun ``tok`` as a candidate standing for ``ent`` (later pronouns continue its chain)."""
    number, pkind = info
    span = _token_span(tok, offset)
    return Candidate(start=span.start, end=span.end, sent=psent, tok=tok.i, block=bi, plural=number == "pl",
                     person=pkind == "person", subject=tok.dep_ in SUBJECT_DEPS, embedded=False,
                     head_i=tok.head.i, arg=tok.dep_ in ARG_DEPS, ent=ent, pron=(number, pkind))
