"""The rules' numbers and switches (``Rules``), the shipped choice (``RULES``), the grid it was chosen from and the
version that names the pairs they give (part of the disk cache's key)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
WE_SENTENCES_BACK = 1  # how far back a first-person pronoun looks for the name speaking
