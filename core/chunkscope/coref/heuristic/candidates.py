"""Candidate antecedents: the noun phrases of a parsed segment (spaCy's noun chunks read from the tags, and
possessors), where each mention starts (after markup, list labels and section numbers) and what the rules read of
it (number, person-ness, subject, proper name, ...)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from chunkscope.coref.heuristic.inline import CodeSpans, in_link_target, whole_code
from chunkscope.coref.heuristic.lexicon import (
    ARG_DEPS,
    NOUN_TAGS,
    NUMBER_NEUTRAL,
    PERSON_NOUNS,
    PRONOUN_TAGS,
    QUANTIFIER_NOUNS,
    QUANTITY_HEADS,
    SPEECH_VERBS,
    SUBJECT_DEPS,
)

_PLURAL_ACRONYM = re.compile(r"^[A-Z]{2,}s$")


@dataclass(eq=False)  # identity comparison: candidates are looked up in lists
class Candidate:
    """A noun phrase (or a resolved pronoun) a later pronoun may refer to."""

    start: int  # absolute char offset (span start)
    end: int
    sent: int  # global sentence index
    tok: int  # root token index in its block doc
    block: int
    plural: bool
    person: bool
    subject: bool
    embedded: bool  # object of a preposition attached to a noun ("the protection of [data]")
    head_i: int  # root's syntactic head index (for co-argument exclusion)
    arg: bool
    proper: bool = False  # a singular proper name ("Ekimetrics", "the EDPB")
    speaker: bool = False  # ... the subject of a speech verb ("X said")
    ent: tuple[int, int] = (0, 0)  # the entity span this candidate stands for
    pron: tuple[str, str] | None = None  # (number, kind) when the candidate is a resolved pronoun

    def __post_init__(self) -> None:
        if self.ent == (0, 0):
            self.ent = (self.start, self.end)


_NP_DEPS = frozenset({"oprd", "nsubj", "dobj", "nsubjpass", "pcomp", "pobj", "dative", "appos", "attr", "ROOT"})
_NP_TAGS = NOUN_TAGS | {"PRP", "PRP$", "WP", "EX"}  # the tags the attribute ruler maps to NOUN/PROPN/PRON
_NOT_PRON_DEPS = frozenset({"det", "quantmod", ""})


def _np_head(word: Any) -> bool:
    """What the pipeline's attribute ruler would tag NOUN, PROPN or PRON: the noun and pronoun tags,
    and a determiner standing alone ("this", "which", "those"; "that" as a relative)."""
    tag = word.tag_
    if tag in _NP_TAGS:
        return True
    return tag in ("DT", "WDT") and (word.dep_ not in _NOT_PRON_DEPS or (tag == "WDT" and word.lower_ == "that"))


def noun_chunks(sdoc: Any) -> list[Any]:
    """spaCy's English ``Doc.noun_chunks`` read from the fine-grained tags instead of the coarse POS,
    so the pipeline can run without its attribute ruler (a sixth of the parse time). Same rules:
    a noun or pronoun in an NP role (or a conjunct of one) heads the span from its left edge; no nesting."""
    out = []
    prev_end = -1
    for word in sdoc:
        if word.left_edge.i <= prev_end or not _np_head(word):
            continue
        dep = word.dep_
        if dep not in _NP_DEPS:
            if dep != "conj":
                continue
            head = word.head
            while head.dep_ == "conj" and head.head.i < head.i:
                head = head.head
            if head.dep_ not in _NP_DEPS:
                continue
        prev_end = word.i
        out.append(sdoc[word.left_edge.i: word.i + 1])
    return out


def _all_caps(sent: Any) -> bool:
    """A sentence (a heading) written in capitals: at least three words and no lower-case letter."""
    words = [t.text for t in sent if t.is_alpha]
    return len(words) >= 3 and not any(ch.islower() for w in words for ch in w)


def is_plural(root: Any, coordinated: bool = True) -> bool:
    """The noun phrase of ``root`` is plural (``coordinated``: "A and B" counts as plural)."""
    w = root.text
    if _PLURAL_ACRONYM.match(w):  # "LLMs", "EUIs"
        return True
    if w.isupper() and not _all_caps(root.sent):  # the small tagger calls acronyms ending in S plural ("EDPS")
        return False
    if w.isupper():  # a word of a sentence in capitals ("WHY ARE BIASES DANGEROUS"): its ending tells
        return len(w) > 3 and w.endswith("S") and not w.endswith(("SS", "US", "IS"))
    if root.tag_ in ("NNS", "NNPS"):
        return True
    # ... and often tags plural names as NNP ("Member States", "Parties")
    if root.tag_ == "NNP" and len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return True
    return coordinated and any(c.dep_ == "conj" and c.tag_ in NOUN_TAGS for c in root.children)  # "A and B"


def _name(root: Any) -> bool:
    """A singular proper name: tagged NNP and singular, or a capitalised word the small tagger calls plural
    whose verb is singular ("Ekimetrics is ...")."""
    if len(root.text) <= 2:
        return False  # "AI", "EU", "UK": a technology or a place, not an organisation speaking
    if root.tag_ == "NNP":
        return not is_plural(root)
    return root.tag_ in ("NNS", "NNPS") and root.text[:1].isupper() and root.dep_ in SUBJECT_DEPS \
        and root.head.tag_ == "VBZ"



_ITEM_LABEL = re.compile(r"^(?:[ivxlc]{1,5}|[a-z]|\d{1,3})$", re.I)


def _is_label(word: str, nxt: str) -> bool:
    """``word`` followed by ``nxt`` is a list item's label: "(b)", "2)", "iv)", "3.", "a." (not the initial in
    "J. Smith")."""
    if nxt == ")":
        return bool(_ITEM_LABEL.match(word))
    return nxt == "." and (word.isdigit() or (word.islower() and bool(_ITEM_LABEL.match(word))))



_SECTION_NUMBER = re.compile(r"^(?:\d{1,3}|[A-Z]|[IVXLC]{2,5})(?:\.(?:\d{1,3}|[A-Z]))*\.?$")


def _section_number(tok: Any, nxt: Any, text: str) -> bool:
    """``tok`` numbers the section or paragraph its line opens: "## 4 International ...", "1 A federal
    State ...", "# A. Model cards", "## A.2. How ...", "II. Scope" (a letter needs its dot: "I Think" is not).
    ``text``: the doc's text (``Doc.text`` joins every token again at each read)."""
    word = tok.text
    if not (_SECTION_NUMBER.match(word) and _line_start(tok, text)):
        return False
    if not any(ch.isdigit() for ch in word) and not (word.endswith(".") or nxt.text == "."):
        return False
    return nxt.text[:1].isupper() or nxt.text == "."


def _line_start(tok: Any, text: str) -> bool:
    """Nothing but markup ("## ", "- ") before ``tok`` on its line (``text``: its doc's text)."""
    line = text[text.rfind("\n", 0, tok.idx) + 1: tok.idx]
    return not any(ch.isalnum() for ch in line)


def _conjunction_that(tok: Any, nxt: Any, root: Any) -> bool:
    """A "this/that" opening a noun phrase is the clause's conjunction, not its determiner, before an article
    or a plural noun ("notice that the variables", "Notice also that objects can have names")."""
    return tok.lower_ in ("that", "this") and (nxt.lower_ in ("the", "a", "an") or (
        nxt.i == root.i and root.tag_ in ("NNS", "NNPS") and root.lower_ not in NUMBER_NEUTRAL))  # "this data"


def _mention_start(nc: Any, text: str) -> int:
    """Where a noun chunk's mention starts in its doc: after leading space, punctuation and symbols
    ("###", "'", "·", ">"), a list item's label ("(2) The principles", "(ii) the level", "2) content"), a
    section or paragraph number opening its line ("## 4 International agreements", "1 A federal State")
    and inline markup before its head ("<u>3Historically,</u> packages": "packages"). ``text``: its doc's text."""
    toks = list(nc)
    # a clause's wh-word the parser took in, with what comes before it ("even when `par()`"): after it
    k = max((n + 1 for n, t in enumerate(toks[:-1]) if t.tag_ == "WRB" and t.i < nc.root.i), default=0)
    while k < len(toks) - 1:
        t, nxt = toks[k], toks[k + 1]
        if not any(ch.isalnum() for ch in t.text) or _is_label(t.text, nxt.text) or _section_number(t, nxt, text) \
                or _conjunction_that(t, nxt, nc.root):
            k += 1
        else:
            break
    start = int(toks[k].idx)
    close = text.rfind(")", start, nc.root.idx)  # the end of a parenthesis opened before: "(and optionally) shade"
    if close >= 0 and "(" not in text[start:close]:
        rest = text[close + 1:nc.root.idx]
        start = close + 1 + len(rest) - len(rest.lstrip())
    cut = text.rfind(">", start, nc.root.idx)  # inline markup ("<mark>Of</mark> fi <mark>cial ...")
    if cut >= 0:
        rest = text[cut + 1:nc.root.idx]
        start = cut + 1 + len(rest) - len(rest.lstrip())
    return start



def candidates_of(sdoc: Any, offset: int, block: int, sent_base: int,
                  code: CodeSpans) -> tuple[list[Candidate], dict[int, int]]:
    """The candidates of the parsed segment ``sdoc`` (which starts at ``offset`` of the text ``code`` was found in;
    ``block``: its index), ordered by end, and each token's global sentence index (its sentences numbered from
    ``sent_base``)."""
    text = sdoc.text  # read once: ``Doc.text`` joins every token again at each read
    sent_of = _sentence_of(sdoc, sent_base)
    cands = []
    for nc in _phrases(sdoc):
        root = nc.root
        if not _may_refer(nc, sdoc, text):
            continue
        span = _mention_span(nc, text, code, offset)
        if span is None:
            continue
        person = root.lower_ in PERSON_NOUNS
        cands.append(Candidate(
            start=offset + span[0], end=offset + span[1], sent=sent_of[root.i], tok=root.i,
            block=block, plural=is_plural(root), person=person, subject=root.dep_ in SUBJECT_DEPS,
            embedded=root.dep_ == "pobj" and root.head.dep_ == "prep" and root.head.head.tag_ in NOUN_TAGS,
            head_i=root.head.i, arg=root.dep_ in ARG_DEPS,
            # code is no one speaking: "when `par()` is called ... we want" (a function's name, tagged NNP)
            proper=_name(root) and not person and code.at(offset + root.idx) is None,
            speaker=root.head.lower_ in SPEECH_VERBS,
        ))
    return cands, sent_of


def _sentence_of(sdoc: Any, sent_base: int) -> dict[int, int]:
    """Each token's sentence index, the doc's first sentence numbered ``sent_base``."""
    sent_of: dict[int, int] = {}
    for k, s in enumerate(sdoc.sents):
        for t in s:
            sent_of[t.i] = sent_base + k
    return sent_of


def _phrases(sdoc: Any) -> list[Any]:
    """The noun chunks and possessors ("the data subject's consent": antecedents too), ordered by end."""
    spans = noun_chunks(sdoc)
    spans += [sdoc[t.left_edge.i: t.i + 1] for t in sdoc if t.dep_ == "poss" and t.tag_ in NOUN_TAGS]
    spans.sort(key=lambda sp: (sp.end, sp.start))
    return spans


def _may_refer(nc: Any, sdoc: Any, text: str) -> bool:
    """The noun chunk ``nc`` is headed by a noun that may name an entity (``text``: its doc's text)."""
    root = nc.root
    if root.tag_ not in NOUN_TAGS or root.like_num or not any(ch.isalpha() for ch in root.text):
        return False
    if "<" in root.text or ">" in root.text:
        return False  # "u>" of "<u>CHAPTER</u>": markup a PDF converter left in the text, not a noun
    if any(t.tag_ in PRONOUN_TAGS for t in nc):
        return False  # "its consent": a mention holding a pronoun is never an entity in Maverick's pairs
    if root.lower_ in QUANTIFIER_NOUNS:
        return False  # "Nothing in this Convention ...": refers to no entity
    return not _number_or_label(nc, sdoc, text)


def _number_or_label(nc: Any, sdoc: Any, text: str) -> bool:
    """The head of ``nc`` is a quantity ("a number of reasons"), a list item's label the tagger took for a noun
    ("(v", "(c") or a section's number ("## II. Scope")."""
    root = nc.root
    if root.lower_ in QUANTITY_HEADS and root.i + 1 < len(sdoc) and sdoc[root.i + 1].lower_ == "of" \
            and any(t.lower_ in ("a", "an") for t in nc):
        return True
    if root.i and sdoc[root.i - 1].text == "(" and _ITEM_LABEL.match(root.text):
        return True
    return root.i + 1 < len(sdoc) and _section_number(root, sdoc[root.i + 1], text)


def _mention_span(nc: Any, text: str, code: CodeSpans, offset: int) -> tuple[int, int] | None:
    """The mention of ``nc`` as ``(start, end)`` in its doc's ``text`` (see :func:`_mention_start`), holding whole
    inline code spans and ending with a Markdown link's text; None when nothing is left or it lies in a link's
    target."""
    start, end = whole_code(text, _mention_start(nc, text), nc.end_char, code, offset)
    cut = text.find("](", start, end)
    if cut >= 0:
        end = cut  # "[webmasters@gnu.org](mailto:...": the link's text (the parser's head may be in the target)
    elif in_link_target(text, start):
        return None  # "(mailto:webmasters@gnu.org)": where a Markdown link goes, not words of the text
    return (start, end) if end > start else None
