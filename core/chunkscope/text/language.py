"""Language of a document (ISO 639-1 code) with py3langid, offline.

Reference Completeness relies on an English coreference model, so the app and the
report say when a document is not English. Markup (tables pipes, HTML comments, URLs,
code fences) is removed before classification; a sample of the text is enough.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

UNKNOWN = "und"
_SAMPLE_CHARS = 20_000
_MIN_LETTERS = 20
_lock = threading.Lock()

_MARKUP = [
    re.compile(r"<!--.*?-->", re.DOTALL),
    re.compile(r"```.*?```", re.DOTALL),
    re.compile(r"</?[A-Za-z][^>]*>"),
    re.compile(r"https?://\S+|www\.\S+"),
    re.compile(r"[#*_`|>\\\[\]()~-]+"),
]


@lru_cache(maxsize=1)
def _identifier():
    """py3langid identifier with normalised probabilities (module default when unavailable)."""
    with _lock:
        try:
            from py3langid.langid import _load_identifier

            return _load_identifier(norm_probs=True)
        except (ImportError, TypeError, AttributeError):  # other py3langid versions
            import py3langid

            return py3langid


_TABLE_ROW = re.compile(r"^\s*\|.*$", re.M)
_INDENTED_CODE = re.compile(r"^(?: {4}|\t).*$", re.M)
# Chinese, Japanese and Korean scripts and their full-width punctuation: written without spaces between words, so
# a "word" of them is a whole clause; a number or identifier next to them ("第12条") is cut off at their edge
CJK = "\u2e80-\u2fff\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
# numbers, dates, identifiers, paths, code
_NOT_WORD = re.compile(rf"[^\s{CJK}]*[\d_=/\\{{}}<>@$%^&][^\s{CJK}]*")


def _drop_indented_code(text: str, plain: bool) -> str:
    """``text`` without its indented lines (Markdown's code blocks). In plain text (``plain``), where
    indenting is only layout, they stay when they hold most of its letters: the whole document is
    indented prose (a man page, a memo), not code. Markdown (a PDF's too) always writes code that way."""
    if plain:
        indented = sum(ch.isalpha() for m in _INDENTED_CODE.finditer(text) for ch in m.group())
        if 2 * indented > sum(ch.isalpha() for ch in text):
            return text
    return _INDENTED_CODE.sub(" ", text)


def strip_markup(text: str, *, plain: bool = False) -> str:
    """Prose only: markup, table rows, indented code, numbers and identifier-like tokens removed
    (a table- or code-heavy document must not be classified by its cells: "Irish" on tables).
    ``plain``: the text is a plain-text file, not Markdown (see ``_drop_indented_code``)."""
    text = _TABLE_ROW.sub(" ", text)
    text = _drop_indented_code(text, plain)
    for rx in _MARKUP:
        text = rx.sub(" ", text)
    text = _NOT_WORD.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip()


def detect_language(text: str, *, plain: bool = False) -> tuple[str, float]:
    """(ISO 639-1 code, probability) of ``text`` (``plain``: a plain-text file, not Markdown);
    (``"und"``, 0.0) when too little text."""
    sample = strip_markup(text[: _SAMPLE_CHARS * 2], plain=plain)[:_SAMPLE_CHARS]
    if sum(ch.isalpha() for ch in sample) < _MIN_LETTERS:
        return UNKNOWN, 0.0
    lang, prob = _identifier().classify(sample)
    return str(lang), float(prob)


def language_code(text: str, *, plain: bool = False) -> str:
    """Just the language code (``"und"`` when unknown)."""
    return detect_language(text, plain=plain)[0]


# the languages offered when a user sets a document's language by hand (any ISO 639-1 code works
# through the API and ``--language``); names for display
LANGUAGE_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "sv": "Swedish", "da": "Danish", "no": "Norwegian", "fi": "Finnish", "pl": "Polish",
    "cs": "Czech", "ro": "Romanian", "hu": "Hungarian", "el": "Greek", "tr": "Turkish", "ru": "Russian",
    "uk": "Ukrainian", "ar": "Arabic", "he": "Hebrew", "hi": "Hindi", "zh": "Chinese", "ja": "Japanese",
    "ko": "Korean", "ga": "Irish", "la": "Latin", "fa": "Persian", "ur": "Urdu", "bn": "Bengali", "ta": "Tamil",
    "th": "Thai", "vi": "Vietnamese", "id": "Indonesian", "ms": "Malay", "ca": "Catalan", "eu": "Basque",
    "gl": "Galician", "bg": "Bulgarian", "sr": "Serbian", "hr": "Croatian", "sk": "Slovak", "sl": "Slovenian",
    "lt": "Lithuanian", "lv": "Latvian", "et": "Estonian",
}


def language_name(code: str) -> str:
    """"German (de)"; the bare code when it has no name here; "unknown" for ``und``."""
    if not code or code == UNKNOWN:
        return "unknown"
    name = LANGUAGE_NAMES.get(code)
    return f"{name} ({code})" if name else code


def rc_available(code: str) -> bool:
    """References Completeness is computed for English (and for unknown, run as English): the
    coreference backends (``chunkscope.coref``) skip other languages."""
    return (code or UNKNOWN) in ("en", UNKNOWN)
