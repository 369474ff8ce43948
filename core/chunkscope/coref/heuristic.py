"""Offline heuristic coreference for English: third-person pronouns -> a preceding noun phrase.

The default backend (``heuristic``). Its building blocks (pronoun table, pleonastic-*it* test,
number of a noun) are reused by the learned pair scorer (backend ``learned``,
``chunkscope.coref.learned``), which held-out measurements did not show to agree better with
Maverick (``docs/coreference.md``).

Built to give pairs that behave like Maverick's for RC (DESIGN section 8): what matters for
RC is the span from the antecedent's start to the pronoun's end, and whether a chunk
boundary can fall inside it. What the dev corpus's Maverick pairs look like (906 pairs, 6
English documents): pronouns are almost all third person (its 21%, their 20%, it 17%,
they 8%, her 8%, them 6%, his 5%, him 3%, he/she 2%); every non-pleonastic third-person
pronoun is paired; first-person pronouns (4%) are paired with the organisation speaking,
often thousands of characters back; the antecedent starts a median 75 characters before the
pronoun (90% within 250), 11% of pairs cross a paragraph break, about 10% point backwards
(cataphora or model errors, not modelled here). Maverick pairs each pronoun with the closest
preceding *non-pronoun* mention of its cluster, so a chain "The Board ... it ... its" gives
pairs that reach back to "The Board".

Rules:

* the text is cut at blank lines into blocks; blocks that are only HTML comments (page
  headers/footers, page breaks) and fenced code blocks are ignored; a Markdown heading block
  starts a new section: an antecedent may be the heading itself but nothing before it, except
  for a pronoun in the heading with no antecedent in it (``Rules.heading_back``: "## How to make
  them", "## About us"), which takes one from its parent heading ("# A. Model cards"; not one
  that names a part of the document, such as "Introduction") or else from the previous
  section's last sentences, as Maverick's pairs do;
* pronouns: it/its/itself (singular, non-person), they/them/their/theirs/themselves (plural,
  or a singular person: "the data subject ... their"), he/him/his/himself and
  she/her/hers/herself (a person). Pleonastic *it* ("it is necessary to ...", expletive,
  "make it difficult to", "it is a pity that", "when it comes to") is skipped; second-person pronouns and "which" are not paired
  (Maverick pairs "you" 7 times in the corpus, "which" never); first-person and relative pronouns only by the two rules below;
* candidates: spaCy noun chunks headed by a noun (not "nothing", "everyone", ...; the mention
  starts after markup, a list label or a section number: "## 4 International agreements"), and
  possessors ("the data subject's"), in the pronoun's sentence before it or in up to
  ``Rules.max_sentences_back`` previous sentences of the section, agreeing in number (acronyms
  like "EDPS" are singular, "LLMs" plural, "A and B" plural; in a heading written in capitals,
  "BIASES" is plural) and person-ness; a reflexive right after a noun phrase stresses it ("the
  system itself"); a possessive on a noun coordinated with an earlier noun refers to that noun,
  whose number is read without the coordination ("the parameter or its member"); a co-argument
  of the pronoun's verb is excluded (binding: "it" and the
  subject of the same verb do not corefer, except for reflexives); in a list item ("(a) ...",
  "- ..."), the sentence introducing the list stays a candidate;
* resolved pronouns are candidates too (``Rules.pronoun_bonus``): a pronoun resolved to an
  earlier pronoun inherits that pronoun's entity, which reproduces Maverick's chains; the pair
  takes the entity's name repeated closest before the pronoun, as for a noun-phrase antecedent
  (``Rules.nearest_mention``; Maverick pairs the closest non-pronoun mention of the cluster);
* first person (``Rules.first_person``): "we/us/our" is the organisation speaking, paired with
  a singular proper name (not a one- or two-letter one such as "AI") that is the subject of the
  pronoun's sentence or the one before ("Ekimetrics is a ... firm. Since 2006, we ..."); "I/my/me"
  with the proper-name subject of a speech verb there ('X, EDPS, said: "... I ..."'); then chains;
* forward (``Rules.forward``): a pronoun inside a clause of its antecedent ("personal data
  concerning them ...") and a relative "that/who/whom" are paired with the antecedent noun's next
  mention with a demonstrative or "such" within ``FORWARD_CHARS`` ("... those personal data"), the
  entity after the pronoun, as Maverick does (the mention holding the pronoun is not its pair);
  a relative pronoun without such a mention is not paired (a switch of the grid; off in ``RULES`` since
  ``heuristic-6.7``, when the grid stopped choosing it);
* salience: the best candidate maximises ``subject bonus − embedded-NP penalty − sentence
  penalty × sentence distance − token penalty × token distance``. The numbers (``RULES``) were
  chosen from a small grid (``GRID``) by mean |ΔRC| against Maverick's pairs on the 12 English
  corpus documents (the three switches above too); chosen leaving each document out, they give
  mean |ΔRC| 0.0176 (``heuristic-6.6`` and 6.7; 0.0170 for 6.2, 0.0165 for ``heuristic-6``) on the held-out documents against
  0.0227 for the first version's hand-set numbers (``LEGACY``), 0.0201 for ``heuristic-3`` (the same numbers without the switches),
  0.0199 for ``heuristic-4`` (without ``heading_back``) and 0.0182 for ``heuristic-5`` (without
  the parent heading), ``docs/coreference.md``.

Speed: only what the rules can use is parsed (``_segments``): for each pronoun (a relative one only
when a word just before it is mentioned again after it), its sentence
and the ``max_sentences_back`` sentences before it within its section (or the section before and the
parent heading, for a pronoun in a heading; sentence ends found by a
regular expression), plus the end of the block that introduces a list for a pronoun in a list
item within ``LEAD_CHARS`` of it; the rest is never parsed (GDPR: 62% of the text is). The
pipeline is tok2vec, tagger and parser only: noun chunks are read from the fine-grained tags
(``noun_chunks``, spaCy's English rules) so the attribute ruler is not needed. ``resolve(text, windows=False)`` parses every block
(the same pairs; tests check it). Results are cached on disk by (document sha256, ``VERSION``)
under ``$CHUNKSCOPE_CACHE_DIR/coref`` when that variable is set.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from chunkscope.coref.base import CorefResult, Pair, cached_pairs
from chunkscope.document import Document, Span

VERSION = "heuristic-6.8"  # heuristic-6's rules; a markup fragment ("u>") is never a mention (6.1); a list item
# reaches its list's lead-in only within LEAD_CHARS, "the data itself" (6.2); "a number of" is no entity (6.3);
# a mention holds whole inline code spans and does not start with a clause's "Where"/"When" (6.4); extraposed
# "it" ("it is striking that", "it remains a point of contention that", "makes it more difficult to", "when it comes
# to") is not paired (6.5), narrowed so that a referring "it" stays: a noun's "that" clause only with a noun "it"
# can stand for ("a pity that", not "a sign that"), the idiom only after "when"/"if", no degree word skipped
# ("so useful that", "too fragile to"), line breaks skipped; a possessive on a conjunct noun refers to the noun
# it is coordinated with ("the parameter or its member") (6.6); a pronoun in inline code is none, a name in code
# speaks no "we", a mention starts after a clause's wh-word and what precedes it ("even when") and after a
# parenthesis that closes inside it ("optionally) shade"), binding reaches a co-argument pronoun's entity; forward off (6.7)
# a pronoun in quotation marks of its own is a word mentioned ("she", "herself"), "it would be helpful if" is
# extraposed, a mention is no Markdown link's target and ends with the link's text (6.8)
BATCH_SIZE = 64
EXCLUDE = ("ner", "lemmatizer", "attribute_ruler")  # spaCy components not needed (noun_chunks reads tags)
MAX_BLOCK_CHARS = 20_000  # longer blocks (no blank lines) are cut at line ends

# pronoun -> (number, kind): number "sg"/"pl"; kind "thing", "person", "any"
PRONOUNS: dict[str, tuple[str, str]] = {
    **{w: ("sg", "thing") for w in ("it", "its", "itself")},
    **{w: ("pl", "any") for w in ("they", "them", "their", "theirs", "themselves")},
    **{w: ("sg", "person") for w in ("he", "him", "his", "himself", "she", "her", "hers", "herself")},
}
# first-person plural (``Rules.first_person``): "we" is the organisation speaking, named as the subject nearby
# ("Ekimetrics is a ... firm. Since 2006, we have ...")
FIRST_PLURAL: dict[str, tuple[str, str]] = {w: ("pl", "we") for w in ("we", "us", "our", "ours", "ourselves")}
# ... and "I" in a quotation is its speaker, named as the subject of "said" nearby ('X, EDPS, said: "... I ..."')
FIRST_SINGULAR: dict[str, tuple[str, str]] = {w: ("sg", "I") for w in ("i", "me", "my", "mine", "myself")}
FIRST_PERSON = {**FIRST_PLURAL, **FIRST_SINGULAR}
SPEECH_VERBS = frozenset("say says said state states stated explain explains explained add adds added note notes noted "
                         "write writes wrote declare declares declared tell tells told".split())
REFLEXIVE = frozenset({"itself", "themselves", "himself", "herself", "ourselves", "myself"})
POSSESSIVE = frozenset({"its", "their", "theirs", "his", "her", "hers", "our", "ours", "my", "mine"})

# Head nouns that denote people (singular they / he / she refer to these).
PERSON_NOUNS = frozenset(
    """person persons people individual individuals subject subjects child children minor minors
    officer officers user users consumer consumers customer customers citizen citizens employee employees
    worker workers applicant applicants patient patients member members holder holders owner owners
    representative representatives head heads director directors manager managers commissioner
    supervisor controller processor recipient recipients author authors developer developers
    man men woman women girl girls boy boys parent parents victim victims candidate candidates
    expert experts researcher researchers student students teacher teachers doctor doctors
    judge judges lawyer lawyers client clients customer staff speaker reader readers""".split()
)
# words the tagger may call nouns that refer to no entity a pronoun could take up
QUANTIFIER_NOUNS = frozenset("""nothing anything something everything nobody anybody somebody everybody no-one
    none anyone someone everyone""".split())
# plural in form, often singular in use ("the data itself", "the media themselves"): a reflexive right after one
# stresses it whatever its number
NUMBER_NEUTRAL = frozenset("data metadata media".split())
# "a number of reasons": the quantity is not the entity ("reasons" is); "It helps" never means "a number"
QUANTITY_HEADS = frozenset("number lot variety couple handful bunch".split())
NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
PRONOUN_TAGS = frozenset({"PRP", "PRP$", "WP", "WP$"})
_COPULAS = frozenset("""be is are was were been being 's seem seems seemed appear appears appeared
    become becomes became remain remains remained""".split())
_CONDITIONAL = frozenset("would 'd could might".split())  # "it would be nice if ..."
# what "it would be ... if" wishes for ("it would be helpful if you told us"); "it would be faster if" may refer
_WISHED = frozenset("""helpful nice good great useful better best wise preferable desirable advisable ideal fine
    appropriate sensible convenient kind appreciated""".split())
_MAKE_VERBS = frozenset("make makes made making find finds found consider considers considered deem deems deemed".split())
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
ARG_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "iobj", "attr", "dative"})


@dataclass(frozen=True)
class Rules:
    """The rules' numbers: how far back a candidate may be, and the salience weights
    (score = subject bonus − embedded-NP penalty − sentence and token distance penalties; a resolved
    pronoun gets ``pronoun_bonus``). ``RULES`` (shipped) was chosen from ``GRID`` by mean |ΔRC|
    against Maverick's pairs on the corpus; ``bench/coref_agreement.py`` repeats that choice
    leaving each document out (``docs/coreference.md``). ``LEGACY`` are the hand-set numbers of
    the first version (``heuristic-2``)."""

    max_sentences_back: int = 3
    subject_bonus: float = 25.0
    embedded_penalty: float = 10.0
    sentence_penalty: float = 30.0
    token_penalty: float = 0.4
    pronoun_bonus: float = 10.0  # a pronoun chain continues its entity (Maverick pairs it with the chain's entity)
    # a pronoun resolved through a chain is paired with the entity's name repeated closest before it
    # (as a noun-phrase antecedent always is): Maverick pairs the closest non-pronoun mention of the cluster
    nearest_mention: bool = False
    # first-person pronouns: we/us/our are paired with a singular proper name that is the subject of the
    # pronoun's sentence or the one before (the organisation speaking); I/me/my with the proper-name subject
    # of a speech verb ("said") there; or they continue a chain of them
    first_person: bool = False
    # a pronoun inside its antecedent's phrase ("Personal data which are, by their nature, ...") and a relative
    # pronoun ("providers that ...") are paired with the antecedent's next mention when one follows within
    # FORWARD_CHARS ("... those providers"): Maverick's pair for a pronoun its antecedent mention contains
    forward: bool = False
    # a pronoun in a heading with no antecedent in it ("## How to make them", "## About us") looks back, as
    # Maverick pairs it across the heading: first in its parent heading ("# A. Model cards" ... "## A.2. How to
    # make them"), then in the previous section's last sentences
    heading_back: bool = False


LEGACY = Rules()
# the values tried when choosing RULES (bench/coref_agreement.py: leave-one-document-out)
GRID: dict[str, tuple[Any, ...]] = {
    "subject_bonus": (25.0, 40.0),
    "sentence_penalty": (15.0, 30.0),
    "token_penalty": (0.2, 0.4),
    "pronoun_bonus": (0.0, 10.0),
    # not tuned since heuristic-6.2: a chain's pronoun takes the nearest repeat of its entity's name, as Maverick's
    # pairs are defined (the closest mention of the cluster) and as a reader looks for it; left to the grid,
    # RC agreement preferred the chain's first mention, up to thousands of characters back
    "nearest_mention": (True,),
    "first_person": (False, True),
    "forward": (False, True),
    "heading_back": (False, True),
}
RULES = Rules(subject_bonus=40.0, sentence_penalty=30.0, token_penalty=0.2, pronoun_bonus=10.0, nearest_mention=True,
              first_person=True, forward=False, heading_back=True)  # forward off since 6.7 (the grid's choice)
CROSS_BLOCK_TOKENS = 40  # token distance counted for a candidate in an earlier block
_DETERMINERS = re.compile(r"^(the|a|an|this|that|these|those|such|each|every|any)\s+")
_PLURAL_ACRONYM = re.compile(r"^[A-Z]{2,}s$")
_LIST_ITEM = re.compile(r"^\s*(\(?[a-z0-9]{1,4}[).]|[-·•*])\s")
_COMMENT_BLOCK = re.compile(r"^\s*(<!--.*?-->\s*)+$", re.S)
_BLOCK_SEP = re.compile(r"\n[ \t]*\n")


@dataclass(eq=False)  # identity comparison: candidates are looked up in lists
class _Cand:
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


def _pieces(block: str) -> list[tuple[int, int]]:
    """Cut a block longer than MAX_BLOCK_CHARS at line ends (else spaces) so the parser's memory stays small."""
    out, pos = [], 0
    while len(block) - pos > MAX_BLOCK_CHARS:
        limit = pos + MAX_BLOCK_CHARS
        cut = block.rfind("\n", pos + 1, limit)
        if cut <= pos:
            cut = block.rfind(" ", pos + 1, limit)
        cut = cut + 1 if cut > pos else limit  # cut after the newline/space
        out.append((pos, cut))
        pos = cut
    out.append((pos, len(block)))
    return out


def _blocks(text: str) -> list[tuple[int, str, str]]:
    """(offset, block text, kind) with kind "text", "heading" or "skip" (comments only, or fenced code:
    its "# comment" lines are not headings and its words are not the document's entities)."""
    from chunkscope.text.blocks import code_spans

    code = code_spans(text)  # sorted, disjoint
    ci = 0
    out: list[tuple[int, str, str]] = []
    pos = 0
    for m in list(_BLOCK_SEP.finditer(text)) + [None]:
        end = m.start() if m else len(text)
        chunk = text[pos:end]
        while ci < len(code) and code[ci][1] <= pos:
            ci += 1
        if chunk.strip():
            if _COMMENT_BLOCK.match(chunk) or (ci < len(code) and code[ci][0] < end):
                kind = "skip"
            elif chunk.lstrip().startswith("#"):
                kind = "heading"
            else:
                kind = "text"
            out.extend((pos + a, chunk[a:b], kind) for a, b in _pieces(chunk))
        if m:
            pos = m.end()
    return out


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


def _words_re(words: Any) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(sorted(words, key=len, reverse=True)) + r")\b", re.I)


RELATIVE = frozenset({"that", "who", "whom"})
FORWARD_CHARS = 400  # how far after a pronoun its antecedent's next mention is looked for (Rules.forward)
# (a "that" before an article is a conjunction: "notice that the variables", not a mention of them; "such as" an example)
_FORWARD_DET = r"\b(?:(?:this|that|these|those)\s+(?!(?:the|a|an)\s)|such\s+(?!as\s))(?:[\w-]+\s+){0,3}?"
_PRONOUN_RE = _words_re(PRONOUNS)
_WORDS_RE = {(fp, fw): _words_re({**PRONOUNS, **(FIRST_PERSON if fp else {}), **({w: 0 for w in RELATIVE} if fw else {})})
             for fp in (False, True) for fw in (False, True)}


def pronoun_re(rules: Rules) -> re.Pattern[str]:
    """The words whose surroundings are parsed (:func:`_segments`) under ``rules``."""
    return _WORDS_RE[rules.first_person, rules.forward]


@lru_cache(maxsize=4096)
def _forward_re(head: str) -> re.Pattern[str]:
    return re.compile(_FORWARD_DET + re.escape(head) + r"\b", re.I)


def next_mention(text: str, start: int, head: str) -> tuple[int, int] | None:
    """The first "this/that/these/those/such/the (up to 3 words) ``head``" in ``text[start:]`` within
    FORWARD_CHARS and before a heading, as a span."""
    stop = text.find("\n#", start, start + FORWARD_CHARS)
    m = _forward_re(head.lower()).search(
        text, start, stop if stop >= 0 else start + FORWARD_CHARS)
    return (m.start(), m.end()) if m else None


def _relative_worth_parsing(btxt: str, m: re.Match[str]) -> bool:
    """A relative pronoun is paired only when a word just before it is mentioned again after it (the parse
    then checks that it is the relative clause's noun): the others need no parse."""
    before = re.findall(r"[A-Za-z][\w-]*", btxt[max(0, m.start() - 80):m.start()])[-8:]
    return any(next_mention(btxt, m.end(), w) for w in set(before) if len(w) > 2)
_SENT_BOUND = re.compile(r"[.!?][\"')\]]*\s+")  # a sentence end as a regex sees it (conservative: no ; or :)
INTRO_CHARS = 600  # of a list's introducing block, at most this much (its end) is parsed for an item's pronouns
# a list item reads the block introducing its list only when it starts at most this far after that block's end:
# a document of numbered paragraphs ("(12) ...", recitals) is one long "list" whose far items have no lead-in
LEAD_CHARS = 2500


def _reaches_lead(item_start: int, lead_end: int) -> bool:
    """A list item starting at ``item_start`` may take its pronoun's antecedent from the block introducing
    its list, which ends at ``lead_end`` (the windows parse that block only then; the resolver reads it)."""
    return item_start - lead_end <= LEAD_CHARS


@dataclass
class _Segment:
    """A stretch of one block to parse; ``gap``: text before it (since the previous segment) is not parsed;
    ``reset``: a heading lies in that gap (the section changed)."""

    offset: int
    text: str
    kind: str
    gap: bool
    reset: bool
    item: bool  # the block is a list item
    level: int = 0  # a heading's level (the number of leading "#"), 0 for other blocks
    block: tuple[int, int] = (0, 0)  # the whole block's span (LEAD_CHARS is measured between blocks)


def _level(block: str) -> int:
    """A heading block's level: the number of its leading "#"."""
    head = block.lstrip()
    return len(head) - len(head.lstrip("#"))


def _parent_heading(heads: list[tuple[int, Any]], level: int) -> Any:
    """Close the open headings (``(level, what)``, outermost first) that a heading of ``level`` ends; the
    ``what`` of the one left enclosing it (its parent), or None."""
    while heads and heads[-1][0] >= level:
        heads.pop()
    return heads[-1][1] if heads else None


def _segments(blocks: list[tuple[int, str, str]], back: int, words: re.Pattern[str] = _PRONOUN_RE,
              heading_back: bool = False) -> list[_Segment]:
    """The parts of ``blocks`` the rules can use: for each pronoun, from ``back`` sentences
    before it (within its section, or the previous section's for a pronoun in a heading when
    ``heading_back``; across blocks) to the end of its sentence; for a pronoun in a list
    item, also the end of the block introducing the list; for a pronoun in a heading when
    ``heading_back``, also the whole parent heading. Overlapping stretches merge."""
    need: list[list[tuple[int, int]]] = [[] for _ in blocks]
    sec = prev_sec = 0  # index of the first block of the current (previous) section
    intro = -1  # the last non-item text block of the section
    heads: list[tuple[int, int]] = []  # (level, block index) of the enclosing headings
    for bi, (_off, btxt, kind) in enumerate(blocks):
        parent = None
        if kind == "heading":
            prev_sec, sec, intro = sec, bi, -1
            level = _level(btxt)
            parent = _parent_heading(heads, level)
            heads.append((level, bi))
        floor = prev_sec if heading_back and kind == "heading" else sec
        for m in words.finditer(btxt):
            if m.group(0).lower() in RELATIVE and not _relative_worth_parsing(btxt, m):
                continue
            if heading_back and parent is not None:
                need[parent].append((0, len(blocks[parent][1])))
            p = m.start()
            # end: the end of the pronoun's sentence
            e = _SENT_BOUND.search(btxt, m.end())
            need[bi].append((p, e.start() + 1 if e else len(btxt)))
            # start: ``back`` sentences back, across the section's earlier blocks
            left, j, pos = back + 1, bi, p  # sentence starts to go back, own sentence included
            while True:
                starts = [0] + [x.end() for x in _SENT_BOUND.finditer(blocks[j][1], 0, pos)]
                end = pos if j == bi else len(blocks[j][1])
                if len(starts) >= left or j <= floor:
                    need[j].append((starts[-left] if len(starts) >= left else 0, end))
                    break
                need[j].append((0, end))
                left -= len(starts)
                j -= 1
                pos = len(blocks[j][1])
            if kind != "heading" and intro >= 0 and intro != bi and _LIST_ITEM.match(btxt) \
                    and _reaches_lead(_off, blocks[intro][0] + len(blocks[intro][1])):
                itxt = blocks[intro][1]
                lo = max(0, len(itxt) - INTRO_CHARS)
                if lo:
                    starts = [x.end() for x in _SENT_BOUND.finditer(itxt, lo)]
                    lo = starts[0] if starts else lo
                need[intro].append((lo, len(itxt)))
        if kind == "text" and not _LIST_ITEM.match(btxt):
            intro = bi
    out: list[_Segment] = []
    gap = reset = False  # text since the previous segment was left out / a heading among it
    for (_off, btxt, kind), spans in zip(blocks, need):
        if not spans:
            gap = True
            reset |= kind == "heading"
            continue
        spans.sort()
        merged: list[list[int]] = []
        for a, b in spans:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        for k, (a, b) in enumerate(merged):
            gap |= bool(btxt[:a].strip()) if k == 0 else True
            head = kind == "heading" and k == 0
            out.append(_Segment(_off + a, btxt[a:b], kind if k == 0 else "text", gap and bool(out), reset,
                                bool(_LIST_ITEM.match(btxt)), _level(btxt) if head else 0, (_off, _off + len(btxt))))
            gap = reset = False
        gap = bool(btxt[merged[-1][1]:].strip())
    return out


_EVALUATIVE = frozenset("""striking surprising interesting worrying concerning disturbing alarming encouraging
    reassuring astonishing amazing puzzling telling frustrating disappointing promising troubling""".split())


def _that_clause(clause: Any) -> bool:
    """A complement clause introduced by "that"/"whether": tagged as a conjunction (IN), not as a relative pronoun
    (WDT: "it is a law that binds"), whatever its dependency label (the parser sometimes calls it an object)."""
    return any(c.tag_ == "IN" and c.lower_ in ("that", "whether", "if") for c in clause.children)


def _content_clause(clause: Any) -> bool:
    """A "that" clause with a subject of its own that the parser took for a relative clause ("the case that
    costs rose": "that" tagged WDT, the object of "rose"). After a noun "it" can stand for, that is the
    clause "it" stands for ("it is the case that ...")."""
    return any(c.lower_ == "that" and c.tag_ == "WDT" and c.dep_ not in SUBJECT_DEPS for c in clause.children) \
        and any(c.dep_ in SUBJECT_DEPS and c.lower_ != "that" for c in clause.children)


def _extraposing(noun: Any) -> bool:
    """The attribute noun of "it is/remains ..." is one whose "that" clause "it" can stand for: its own word or a
    noun of its "of" phrase ("a point of contention", "a matter of debate") is in ``_EXTRAPOSING_NOUNS``."""
    words = {noun.lower_} | {g.lower_ for prep in noun.children if prep.lower_ == "of"
                             for g in prep.children if g.dep_ == "pobj"}  # no lemmatizer in this pipeline
    return bool(words & _EXTRAPOSING_NOUNS)


def _words_after(tok: Any, n: int) -> list[Any]:
    """The ``n`` tokens after ``tok``, line breaks skipped (a PDF's paragraph keeps its line ends)."""
    return [t for t in tok.doc[tok.i + 1: tok.i + 1 + 2 * n] if not t.is_space][:n]


def _verb_follows(tok: Any) -> bool:
    """The next word after ``tok`` (line breaks and adverbs skipped) is a verb's base form: "to use", "to
    clearly delineate", not "to risks"."""
    nxt = next((t for t in _words_after(tok, 3) if not t.tag_.startswith("RB")), None)
    return nxt is not None and nxt.tag_ == "VB"


# nouns whose "that" clause an extraposed "it" stands for ("it is a pity that ..."); with other nouns the clause
# belongs to the noun and "it" refers ("The drop was sharp. It is a sign that the economy is slowing.")
_EXTRAPOSING_NOUNS = frozenset("""fact case pity shame mystery wonder surprise miracle coincidence secret truism
    certainty possibility likelihood probability necessity contention debate dispute matter""".split())


def _pleonastic(tok: Any) -> bool:
    if tok.dep_ == "expl":
        return True
    head = tok.head
    before = next((t for t in reversed(tok.doc[max(0, tok.i - 3): tok.i]) if not t.is_space), None)
    after = _words_after(tok, 2)
    if before is not None and before.lower_ in ("when", "whenever", "if") and len(after) == 2 \
            and after[0].lower_ in ("comes", "come", "came") and after[1].lower_ == "to":
        return True  # "when it comes to arithmetic": an idiom ("Then it came to a stop": the train did)
    if tok.dep_ in SUBJECT_DEPS:
        kids = {c.dep_ for c in head.children}
        if kids & {"ccomp", "xcomp", "csubj", "csubjpass"} and (
            head.lower_ in _COPULAS or tok.dep_ == "nsubjpass"
            or "acomp" in kids or head.tag_ == "VBN"
        ):
            return True
        for c in head.children:  # "it is necessary to ..." / "it is likely that ..."
            if c.dep_ in {"acomp", "attr"} and any(g.dep_ in {"xcomp", "ccomp"} for g in c.children):
                return True
            if c.dep_ == "attr" and head.lower_ in _COPULAS and _extraposing(c) and any(
                    g.dep_ in {"relcl", "acl", "ccomp"} and (_that_clause(g) or _content_clause(g)) for g in c.children):
                return True  # "it remains a point of contention that ..." (the parser hangs the clause on the noun)
        if head.lower_ in _COPULAS and any(c.dep_ == "aux" and c.lower_ in _CONDITIONAL for c in head.children) and any(
                c.dep_ == "acomp" and c.lower_ in _WISHED for c in head.children) and any(
                c.dep_ == "advcl" and any(m.dep_ == "mark" and m.lower_ in ("if", "when") for m in c.children)
                for c in head.children):
            return True  # "it would be helpful if you told us": the "if" clause is what "it" stands for
        if head.lower_ in _EVALUATIVE and any(c.dep_ == "ccomp" and _that_clause(c) for c in head.children) \
                and not any(c.dep_ in ("dobj", "dative") for c in head.children) \
                and any(c.dep_ == "aux" and c.lower_ in _COPULAS for c in head.children):
            return True  # "it is striking that ..." (tagged as a verb's -ing form; "it is telling us that" refers)
    nxt = _words_after(tok, 4)
    if len(nxt) > 1 and nxt[0].tag_ in ("RB", "RBR", "RBS") and nxt[0].lower_ not in ("so", "too"):
        nxt = nxt[1:]  # "make it more difficult to" ("found it so useful that", "too fragile to touch": it refers)
    if len(nxt) and nxt[0].tag_ in ("JJ", "JJR", "JJS") and any(
            t.lower_ == "that" or (t.lower_ == "to" and _verb_follows(t)) for t in nxt[1:3]):
        return True  # "make it difficult to use", "deem it necessary to": a verb follows ("prone to risks" refers)
    if tok.dep_ == "dobj" and any(c.dep_ in {"ccomp", "xcomp", "oprd"} for c in head.children) and head.lower_ in _MAKE_VERBS:
        return True
    return False


def _all_caps(sent: Any) -> bool:
    """A sentence (a heading) written in capitals: at least three words and no lower-case letter."""
    words = [t.text for t in sent if t.is_alpha]
    return len(words) >= 3 and not any(ch.islower() for w in words for ch in w)


def _plural(root: Any, coordinated: bool = True) -> bool:
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
        return not _plural(root)
    return root.tag_ in ("NNS", "NNPS") and root.text[:1].isupper() and root.dep_ in SUBJECT_DEPS \
        and root.head.tag_ == "VBZ"


WE_SENTENCES_BACK = 1


def _in_clause_of(tok: Any, root: Any) -> bool:
    """``tok`` lies in a clause modifying the noun ``root`` ("personal data which are, by their nature, ...",
    "data concerning them"), not merely in a conjunct ("vehicles and their trailers")."""
    for anc in tok.ancestors:
        if anc.head.i == root.i and anc.i != root.i:
            return anc.dep_ in ("relcl", "acl")
    return False


_ITEM_LABEL = re.compile(r"^(?:[ivxlc]{1,5}|[a-z]|\d{1,3})$", re.I)


def _is_label(word: str, nxt: str) -> bool:
    """``word`` followed by ``nxt`` is a list item's label: "(b)", "2)", "iv)", "3.", "a." (not the initial in
    "J. Smith")."""
    if nxt == ")":
        return bool(_ITEM_LABEL.match(word))
    return nxt == "." and (word.isdigit() or (word.islower() and bool(_ITEM_LABEL.match(word))))


# a heading that names a part of the document rather than a topic: not what a pronoun below it refers to
_PART_NAME = re.compile(r"^(?:introduction|conclusions?|(?:executive )?summary|overview|background|contents|"
                        r"table of contents|preamble|references|bibliography|abstract|foreword|preface|glossary|"
                        r"definitions|(?:main|key) (?:points|messages|findings|takeaways)|"
                        r"(?:chapter|section|article|part|annex|appendix|title)\b.*)$")
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


# inline code: backticks that pair up on a line; an apostrophe inside only within a word ("`\"It's\"`"), so that
# TeX's quotes ("the `ls' and `rm' commands") are not code
_CODE_SPAN = re.compile(r"`(?:[^`'\n]|'(?=[^\W\d_]))+`")


class CodeSpans:
    """The inline code spans of a text (``_CODE_SPAN``: they never cross a line), found in one pass and looked up
    by position (a pronoun or a mention on a long line no longer scans the line again)."""

    def __init__(self, text: str) -> None:
        spans = [m.span() for m in _CODE_SPAN.finditer(text)] if "`" in text else []
        self.starts = [a for a, _ in spans]
        self.ends = [b for _, b in spans]

    def at(self, idx: int) -> tuple[int, int] | None:
        """The span ``idx`` is strictly inside (after its opening backtick, before its end), else None."""
        k = bisect.bisect_right(self.starts, idx) - 1
        return (self.starts[k], self.ends[k]) if k >= 0 and self.starts[k] < idx < self.ends[k] else None


_OPEN_QUOTES, _CLOSE_QUOTES = "\"“‘'«", "\"”’'»"


def quoted_word(text: str, start: int, end: int) -> bool:
    """The word ``text[start:end]`` stands in quotation marks of its own: a word mentioned, not used ('pronouns used
    just like "she", "her" and "herself"'); "it's" and "rock'n'roll" are no quotes."""
    if start < 1 or end >= len(text) or text[start - 1] not in _OPEN_QUOTES or text[end] not in _CLOSE_QUOTES:
        return False
    return not (start >= 2 and text[start - 2].isalnum()) and not (end + 1 < len(text) and text[end + 1].isalnum())


def _whole_code(text: str, start: int, end: int, code: CodeSpans, offset: int = 0) -> tuple[int, int]:
    """A mention's ``(start, end)`` in ``text`` (which starts at ``offset`` of the text ``code`` was found in)
    moved so that it holds whole inline code spans: one that starts inside `` `...` `` starts after it
    ("`Microsoft` `Windows` users", not "Microsoft` `Windows` users"; "If `user` is `true` the returned value":
    "the returned value"), and one that ends inside it ends after it ("a variable `b`")."""
    s = code.at(offset + start)
    if s is not None:
        rest = text[s[1] - offset:end]
        start = s[1] - offset + len(rest) - len(rest.lstrip())
    e = code.at(offset + end)
    if e is not None:
        end = e[1] - offset
    return start, end


def _in_link_target(text: str, idx: int) -> bool:
    """``idx`` lies in a Markdown link's target: after "](" with no ")" nor space between."""
    j = text.rfind("](", 0, idx)
    return j >= 0 and not any(ch in ")\n \t" for ch in text[j + 2:idx])


def _candidates(sdoc: Any, offset: int, block: int, sent_base: int,
                code: CodeSpans) -> tuple[list[_Cand], dict[int, int]]:
    text = sdoc.text  # read once: ``Doc.text`` joins every token again at each read
    sent_of: dict[int, int] = {}
    for k, s in enumerate(sdoc.sents):
        for t in s:
            sent_of[t.i] = sent_base + k
    cands = []
    spans = noun_chunks(sdoc)
    # possessors ("the data subject's consent") are antecedents too
    spans += [sdoc[t.left_edge.i: t.i + 1] for t in sdoc if t.dep_ == "poss" and t.tag_ in NOUN_TAGS]
    spans.sort(key=lambda sp: (sp.end, sp.start))
    for nc in spans:
        root = nc.root
        if root.tag_ not in NOUN_TAGS or root.like_num or not any(ch.isalpha() for ch in root.text):
            continue
        if "<" in root.text or ">" in root.text:
            continue  # "u>" of "<u>CHAPTER</u>": markup a PDF converter left in the text, not a noun
        if any(t.tag_ in PRONOUN_TAGS for t in nc):
            continue  # "its consent": a mention holding a pronoun is never an entity in Maverick's pairs
        if root.lower_ in QUANTIFIER_NOUNS:
            continue  # "Nothing in this Convention ...": refers to no entity
        if root.lower_ in QUANTITY_HEADS and root.i + 1 < len(sdoc) and sdoc[root.i + 1].lower_ == "of" \
                and any(t.lower_ in ("a", "an") for t in nc):
            continue  # "a number of reasons": a quantity
        if root.i and sdoc[root.i - 1].text == "(" and _ITEM_LABEL.match(root.text):
            continue  # "(v", "(c": a list item's label the tagger took for a noun
        if root.i + 1 < len(sdoc) and _section_number(root, sdoc[root.i + 1], text):
            continue  # "## II. Scope": a section's number
        low = root.lower_
        plural = _plural(root)
        person = low in PERSON_NOUNS
        embedded = root.dep_ == "pobj" and root.head.dep_ == "prep" and root.head.head.tag_ in NOUN_TAGS
        start, end = _whole_code(text, _mention_start(nc, text), nc.end_char, code, offset)
        cut = text.find("](", start, end)
        if cut >= 0:
            end = cut  # "[webmasters@gnu.org](mailto:...": the link's text (the parser's head may be in the target)
        elif _in_link_target(text, start):
            continue  # "(mailto:webmasters@gnu.org)": where a Markdown link goes, not words of the text
        if end <= start:
            continue
        cands.append(_Cand(
            start=offset + start, end=offset + end, sent=sent_of[root.i], tok=root.i,
            block=block, plural=plural, person=person, subject=root.dep_ in SUBJECT_DEPS, embedded=embedded,
            head_i=root.head.i, arg=root.dep_ in ARG_DEPS,
            # code is no one speaking: "when `par()` is called ... we want" (a function's name, tagged NNP)
            proper=_name(root) and not person and code.at(offset + root.idx) is None,
            speaker=root.head.lower_ in SPEECH_VERBS,
        ))
    return cands, sent_of


def _norm_span(text: str, start: int, end: int) -> str:
    return _DETERMINERS.sub("", text[start:end].lower()).strip()


def _agree(c: _Cand, number: str, kind: str) -> float | None:
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


def _coargument(c: _Cand, tok: Any, low: str, psent: int, bi: int) -> bool:
    """Binding: ``c`` is a co-argument of the non-reflexive, non-possessive pronoun ``tok``'s own verb, so it is
    not its antecedent (a possessive may corefer with its verb's subject: "it ... its")."""
    return c.block == bi and c.sent == psent and low not in REFLEXIVE and tok.tag_ != "PRP$" and c.arg \
        and c.head_i == tok.head.i


def _bound(tok: Any, low: str, psent: int, bi: int, visible: list[_Cand]) -> set[tuple[int, int]]:
    """The entities of the resolved pronouns that are co-arguments of ``tok``'s verb: binding keeps the pronoun
    from their entity too ("although **it** does not require **it**": not both XML)."""
    return {c.ent for c in visible if c.pron is not None and _coargument(c, tok, low, psent, bi)}


def _best(tok: Any, low: str, number: str, pkind: str, psent: int, bi: int, cands: list[_Cand],
          near: list[_Cand], rules: Rules, bound: set[tuple[int, int]] | None = None) -> _Cand | None:
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


def _conjunct_owner(tok: Any, visible: list[_Cand]) -> _Cand | None:
    """For a possessive on a noun coordinated with an earlier noun ("the parameter or its member", "vehicles and
    their trailers", "the level of protection and its scope"): that earlier noun's candidate (``_best`` still
    checks agreement), else None. On the 12 corpus documents it changes 67 pairs, 45 of them to Maverick's pair
    (8 of those it replaces were Maverick's); with nouns in an "of" phrase left out, 41 and 24 (6)."""
    owner = tok.head.head
    if tok.dep_ != "poss" or tok.head.dep_ != "conj" or owner.tag_ not in NOUN_TAGS or owner.i > tok.i:
        return None
    c = next((c for c in reversed(visible) if c.tok == owner.i and c.pron is None), None)
    return replace(c, plural=_plural(owner, coordinated=False)) if c is not None else None  # the noun alone


def window_key(rules: Rules) -> tuple[Any, ...]:
    """The fields of ``rules`` that change what :func:`parse_windows` cuts (the rest only change the choices)."""
    return rules.max_sentences_back, rules.first_person, rules.forward, rules.heading_back


def _read_blocks(text: str) -> list[tuple[int, str, str]]:
    """The blocks the rules read: comment-only blocks and fenced code left out."""
    return [b for b in _blocks(text) if b[2] != "skip"]


def parse_windows(text: str, rules: Rules = RULES) -> list[_Segment]:
    """The stretches of ``text`` the rules need parsed (:func:`_segments` of :func:`_read_blocks`)."""
    return _segments(_read_blocks(text), rules.max_sentences_back, pronoun_re(rules), rules.heading_back)


def resolve(text: str, nlp: Any = None, windows: bool = True, rules: Rules = RULES) -> list[Pair]:
    """Heuristic entity–pronoun pairs (half-open spans) for English ``text``.

    ``windows``: parse only what the rules can use (:func:`_segments`); False parses every block
    (the same rules; kept to check that the windows change nothing that matters)."""
    if nlp is None:
        from chunkscope.text.nlp import english

        nlp = english(EXCLUDE)
    segs = parse_windows(text, rules) if windows else \
        [_Segment(o, t, k, False, False, bool(_LIST_ITEM.match(t)), _level(t) if k == "heading" else 0,
                  (o, o + len(t))) for o, t, k in _read_blocks(text)]
    return resolve_parsed(text, segs, nlp.pipe((sg.text for sg in segs), batch_size=BATCH_SIZE), rules)


def resolve_parsed(text: str, segs: list[_Segment], docs: Any, rules: Rules = RULES) -> list[Pair]:
    """The rules over parsed segments (``docs``: one spaCy Doc per segment, in order)."""
    pairs: list[Pair] = []
    pool: list[_Cand] = []  # candidates (noun phrases and resolved pronouns) of the current section
    lead: list[_Cand] = []  # candidates of the sentence introducing the current list
    heads: list[tuple[int, list[_Cand]]] = []  # (level, candidates) of the enclosing headings parsed
    code = CodeSpans(text)
    sent_base = 0
    lead_end = 0  # where the block introducing the current list ends
    for bi, (seg, sdoc) in enumerate(zip(segs, docs)):
        offset, kind = seg.offset, seg.kind
        # in a heading (``Rules.heading_back``): the previous section's last candidates, the parent heading's
        before: list[_Cand] = []
        parent: list[_Cand] = []
        if kind == "heading" or seg.reset:
            if kind == "heading" and rules.heading_back and not seg.gap:
                before = [c for c in pool if c.sent >= sent_base - rules.max_sentences_back]
            pool, lead = [], []
        if seg.level:
            above = _parent_heading(heads, seg.level)
            if rules.heading_back and above:
                parent = [c for c in above if not _PART_NAME.match(_norm_span(text, c.start, c.end))]
        if seg.gap:  # text left out since the previous segment: its candidates are out of reach
            sent_base += rules.max_sentences_back + 1
        is_item = seg.item
        cands, sent_of = _candidates(sdoc, offset, bi, sent_base, code)
        if seg.level:
            heads.append((seg.level, cands))
        n_sents = (max(sent_of.values()) - sent_base + 1) if sent_of else 0
        pool = [c for c in pool if c.sent >= sent_base - rules.max_sentences_back]
        visible: list[_Cand] = []
        ci = 0
        for tok in sdoc:
            while ci < len(cands) and cands[ci].end <= offset + tok.idx:
                visible.append(cands[ci])
                ci += 1
            low = tok.lower_
            if rules.forward and low in RELATIVE and tok.tag_ in ("WDT", "WP") and tok.head.dep_ == "relcl" \
                    and tok.head.head.tag_ in NOUN_TAGS and tok.head.head.i < tok.i:
                nxt = next_mention(text, offset + tok.idx + len(tok.text), tok.head.head.text)
                if nxt is not None:
                    pairs.append(Pair(Span(*nxt), Span(offset + tok.idx, offset + tok.idx + len(tok.text))))
                continue
            info = PRONOUNS.get(low)
            if info is None and rules.first_person and tok.text not in ("US", "i"):
                info = FIRST_PERSON.get(low)  # ("US": the country; "i": a list number)
                if low == "i" and tok.i and tok.nbor(-1).tag_ in NOUN_TAGS:
                    continue  # "Annex I", "Title I": a number
            if info is None or tok.tag_ not in ("PRP", "PRP$"):
                continue
            if code.at(offset + tok.idx) is not None or quoted_word(text, offset + tok.idx, offset + tok.idx + len(tok)):
                continue  # a word of code or of a string in it ("`\"It's\"`"), or a word quoted: not a reference
            if low == "it" and (_pleonastic(tok) or (tok.text == "IT" and any(ch.islower() for ch in tok.sent.text))):
                continue  # pleonastic "it", or "IT" (information technology) in mixed-case text
            number, pkind = info
            psent = sent_of[tok.i]
            extra = [c for c in lead if c not in pool] if is_item and _reaches_lead(seg.block[0], lead_end) else []
            if seg.level and rules.heading_back:  # the heading's own words, its parent heading, the section before
                tiers = [(pool + visible, []), (parent, parent), (before, [])]
            else:
                tiers = [(before + pool + visible + extra, extra)]
            best = None
            if low in REFLEXIVE and visible and not text[visible[-1].end:offset + tok.idx].strip():
                tiers.insert(0, ([visible[-1]], []))  # "the system itself": the noun phrase it stresses
                if low == "itself" and visible[-1].pron is None \
                        and text[visible[-1].start:visible[-1].end].split()[-1].lower() in NUMBER_NEUTRAL:
                    best = visible[-1]  # "the data itself" (the tagger may call "data" plural)
            owner = _conjunct_owner(tok, visible)
            if owner is not None:
                tiers.insert(0, ([owner], []))  # "the parameter or its member": the noun it is coordinated with
            bound = _bound(tok, low, psent, bi, visible)
            for tier, near in tiers:
                if best is not None:
                    break
                best = _best(tok, low, number, pkind, psent, bi, tier, near, rules, bound)
            if best is not None:
                ent = best.ent
                if rules.forward and best.pron is None and best.block == bi and _in_clause_of(tok, sdoc[best.tok]):
                    # the pronoun is inside its antecedent's phrase: Maverick pairs the next mention
                    nxt = next_mention(text, offset + tok.idx + len(tok.text), sdoc[best.tok].text)
                    if nxt is not None:
                        pairs.append(Pair(Span(*nxt), Span(offset + tok.idx, offset + tok.idx + len(tok.text))))
                        visible.append(_Cand(
                            start=offset + tok.idx, end=offset + tok.idx + len(tok.text), sent=psent, tok=tok.i,
                            block=bi, plural=number == "pl", person=pkind == "person",
                            subject=tok.dep_ in SUBJECT_DEPS, embedded=False, head_i=tok.head.i,
                            arg=tok.dep_ in ARG_DEPS, ent=ent, pron=(number, pkind)))
                        continue
                if best.pron is None or rules.nearest_mention:
                    # the same name repeated closer to the pronoun is the mention Maverick pairs with
                    key = _norm_span(text, *ent)
                    for c in reversed(before + pool + visible):
                        if c.start <= ent[0]:
                            break
                        if c.pron is None and _norm_span(text, c.start, c.end) == key:
                            ent = c.ent
                            break
                if ent in bound:
                    continue  # its nearest mention is the co-argument's entity
                pspan = Span(offset + tok.idx, offset + tok.idx + len(tok.text))
                pairs.append(Pair(Span(*ent), pspan))
                visible.append(_Cand(
                    start=pspan.start, end=pspan.end, sent=psent, tok=tok.i, block=bi, plural=number == "pl",
                    person=pkind == "person", subject=tok.dep_ in SUBJECT_DEPS, embedded=False, head_i=tok.head.i,
                    arg=tok.dep_ in ARG_DEPS, ent=ent, pron=(number, pkind),
                ))
        visible.extend(cands[ci:])
        visible.sort(key=lambda c: c.start)
        if not is_item:
            lead_end = seg.block[1]
            lead = [c for c in visible if c.sent == sent_base + n_sents - 1 or c.subject]
        pool.extend(visible)
        sent_base += n_sents
    return pairs


def heuristic_pairs(doc: Document) -> CorefResult:
    """Cached :func:`resolve` of ``doc.text`` as a CorefResult (backend ``heuristic``)."""
    return cached_pairs(doc, "heuristic", VERSION, resolve)


