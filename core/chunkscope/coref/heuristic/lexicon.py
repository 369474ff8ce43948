"""The words the rules know: pronouns by number and kind, nouns that denote people or no entity, and the parser's
tags and dependency labels that name nouns, pronouns, subjects and arguments."""

from __future__ import annotations

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
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})
ARG_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "iobj", "attr", "dative"})
RELATIVE = frozenset({"that", "who", "whom"})
