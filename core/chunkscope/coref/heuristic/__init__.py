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

Speed: only what the rules can use is parsed (``segments.segments_of``): for each pronoun (a relative one only
when a word just before it is mentioned again after it), its sentence
and the ``max_sentences_back`` sentences before it within its section (or the section before and the
parent heading, for a pronoun in a heading; sentence ends found by a
regular expression), plus the end of the block that introduces a list for a pronoun in a list
item within ``LEAD_CHARS`` of it; the rest is never parsed (GDPR: 62% of the text is). The
pipeline is tok2vec, tagger and parser only: noun chunks are read from the fine-grained tags
(``noun_chunks``, spaCy's English rules) so the attribute ruler is not needed. ``resolve(text, windows=False)`` parses every block
(the same pairs; tests check it). Results are cached on disk by (document sha256, ``VERSION``)
under ``$CHUNKSCOPE_CACHE_DIR/coref`` when that variable is set.

Modules, in the order a text goes through them: ``segments`` (blocks and the windows parsed), ``candidates`` (the
noun phrases of a parse), ``pleonastic`` (an "it" that refers to nothing), ``resolver`` (the rules, pronoun by
pronoun); ``lexicon`` holds the words and tags, ``rules`` the numbers (``Rules``, ``RULES``, ``VERSION``),
``inline`` inline code, quotation marks and link targets.
"""

from chunkscope.coref.heuristic.candidates import noun_chunks
from chunkscope.coref.heuristic.resolver import heuristic_pairs, resolve, resolve_parsed
from chunkscope.coref.heuristic.rules import BATCH_SIZE, EXCLUDE, GRID, LEGACY, RULES, VERSION, Rules
from chunkscope.coref.heuristic.segments import LEAD_CHARS, parse_windows, window_key

__all__ = [
    "BATCH_SIZE", "EXCLUDE", "GRID", "LEAD_CHARS", "LEGACY", "RULES", "VERSION", "Rules", "heuristic_pairs",
    "noun_chunks", "parse_windows", "resolve", "resolve_parsed", "window_key",
]
