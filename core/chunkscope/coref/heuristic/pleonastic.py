"""Pleonastic *it*: an "it" that stands for no entity (expletive, extraposed subject or object, an idiom), so it is
never paired. Each rule below names the construction it recognises and the near miss where "it" still refers."""

from __future__ import annotations

from typing import Any

from chunkscope.coref.heuristic.lexicon import SUBJECT_DEPS

_COPULAS = frozenset("""be is are was were been being 's seem seems seemed appear appears appeared
    become becomes became remain remains remained""".split())
_CONDITIONAL = frozenset("would 'd could might".split())  # "it would be nice if ..."
# what "it would be ... if" wishes for ("it would be helpful if you told us"); "it would be faster if" may refer
_WISHED = frozenset("""helpful nice good great useful better best wise preferable desirable advisable ideal fine
    appropriate sensible convenient kind appreciated""".split())
_MAKE_VERBS = frozenset("make makes made making find finds found consider considers considered deem deems deemed".split())
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


def pleonastic(tok: Any) -> bool:
    """The "it" ``tok`` stands for no entity: an expletive, the idiom "when it comes to", an extraposed subject
    ("it is necessary to ...", "it is striking that ...") or object ("make it difficult to use")."""
    if tok.dep_ == "expl" or _comes_to_idiom(tok):
        return True
    if tok.dep_ in SUBJECT_DEPS and _extraposed_subject(tok):
        return True
    return _adjective_then_clause(tok) or _made_object(tok)


def _comes_to_idiom(tok: Any) -> bool:
    """"when it comes to arithmetic": an idiom ("Then it came to a stop": the train did)."""
    before = next((t for t in reversed(tok.doc[max(0, tok.i - 3): tok.i]) if not t.is_space), None)
    after = _words_after(tok, 2)
    return before is not None and before.lower_ in ("when", "whenever", "if") and len(after) == 2 \
        and after[0].lower_ in ("comes", "come", "came") and after[1].lower_ == "to"


def _extraposed_subject(tok: Any) -> bool:
    """The subject "it" ``tok`` stands for a clause that comes later."""
    head = tok.head
    return _clausal_predicate(tok) or any(_predicate_with_clause(c, head) for c in head.children) \
        or _wish_if(head) or _evaluative_that(head)


def _clausal_predicate(tok: Any) -> bool:
    """A clause hangs on the verb of the subject ``tok``, and the verb is a copula, passive or takes an adjective
    ("it is said that", "it seems that")."""
    head = tok.head
    kids = {c.dep_ for c in head.children}
    return bool(kids & {"ccomp", "xcomp", "csubj", "csubjpass"}) and (
        head.lower_ in _COPULAS or tok.dep_ == "nsubjpass" or "acomp" in kids or head.tag_ == "VBN")


def _predicate_with_clause(c: Any, head: Any) -> bool:
    """"it is necessary to ..." / "it is likely that ...": the adjective or noun after the verb has the clause;
    "it remains a point of contention that ...": the parser hangs the clause on the noun."""
    if c.dep_ in {"acomp", "attr"} and any(g.dep_ in {"xcomp", "ccomp"} for g in c.children):
        return True
    return c.dep_ == "attr" and head.lower_ in _COPULAS and _extraposing(c) and any(
        g.dep_ in {"relcl", "acl", "ccomp"} and (_that_clause(g) or _content_clause(g)) for g in c.children)


def _wish_if(head: Any) -> bool:
    """"it would be helpful if you told us": the "if" clause is what "it" stands for."""
    kids = list(head.children)
    return head.lower_ in _COPULAS and any(c.dep_ == "aux" and c.lower_ in _CONDITIONAL for c in kids) and any(
        c.dep_ == "acomp" and c.lower_ in _WISHED for c in kids) and any(
        c.dep_ == "advcl" and any(m.dep_ == "mark" and m.lower_ in ("if", "when") for m in c.children)
        for c in kids)


def _evaluative_that(head: Any) -> bool:
    """"it is striking that ..." (tagged as a verb's -ing form; "it is telling us that" refers)."""
    kids = list(head.children)
    return head.lower_ in _EVALUATIVE and any(c.dep_ == "ccomp" and _that_clause(c) for c in kids) \
        and not any(c.dep_ in ("dobj", "dative") for c in kids) \
        and any(c.dep_ == "aux" and c.lower_ in _COPULAS for c in kids)


def _adjective_then_clause(tok: Any) -> bool:
    """"make it difficult to use", "deem it necessary to": an adjective, then "that" or "to" and a verb ("prone to
    risks" refers); one adverb skipped ("make it more difficult to"; "found it so useful that", "too fragile to
    touch": it refers)."""
    nxt = _words_after(tok, 4)
    if len(nxt) > 1 and nxt[0].tag_ in ("RB", "RBR", "RBS") and nxt[0].lower_ not in ("so", "too"):
        nxt = nxt[1:]
    return bool(len(nxt) and nxt[0].tag_ in ("JJ", "JJR", "JJS") and any(
        t.lower_ == "that" or (t.lower_ == "to" and _verb_follows(t)) for t in nxt[1:3]))


def _made_object(tok: Any) -> bool:
    """The object "it" of "make/find/consider/deem" with a clause or a predicate ("made it clear that")."""
    head = tok.head
    return tok.dep_ == "dobj" and any(c.dep_ in {"ccomp", "xcomp", "oprd"} for c in head.children) \
        and head.lower_ in _MAKE_VERBS
