"""A manuscript's margin line numbers, which the converter writes into the text, removed."""

from __future__ import annotations

import re
from typing import Any, Sequence

from chunkscope.ingest.pdf.cleanup.margins import MARGIN_GAP

_LINE_NUMBER = re.compile(r"(\d{1,5})(?: (?=\S)|$)")
MIN_LINE_NUMBERS = 10  # consecutive margin numbers a page needs before they are taken for line numbering


def strip_line_numbers(md: str, words: Sequence[Sequence[Any]] | None) -> tuple[str, int]:
    """A manuscript's margin line numbers (a journal's review copy, ``lineno``: "38 In 1996 Maxim …", "40" alone
    on a line), which the converter writes into the text, removed: the page's longest run of lines that start
    with increasing numbers (steps of 1, or up to 3 where the converter lost one), when it has at least
    ``MIN_LINE_NUMBERS``, covers half of the page's lines (outside fenced code) and four in five of its numbers
    are words in the page's margin (``words``: PyMuPDF's, ``MARGIN_GAP`` or more left of where the text starts
    or right of where it ends; so years opening lines of prose, a table's index column or a contents list
    stay). A number alone on its line goes with the blank lines around it when the text before does not end a
    sentence and the text after goes on in lower case (the number had cut a sentence). Returns the page and
    how many were removed."""
    if not words:
        return md, 0
    lines = md.split("\n")
    best = _longest_run(lines)
    if len(best) < MIN_LINE_NUMBERS or len(best) < 0.5 * sum(1 for x in lines if x.strip()):
        return md, 0
    if not _in_margin(words, {m.group(1) for _, m in best}):
        return md, 0
    return _without_numbers(lines, best), len(best)


Run = list[tuple[int, re.Match[str]]]  # lines that start with a number: (line index, the number's match)


def _longest_run(lines: list[str]) -> Run:
    """The longest run of lines (outside fenced code) that start with increasing numbers: steps of 1, or up to 3
    where the converter lost one, over numbers of the text in between."""
    fenced = False
    runs: dict[int, Run] = {}  # the runs so far, by their last number
    best: Run = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else _LINE_NUMBER.match(line)
        if m is None:
            continue
        n = int(m.group(1))
        prev = next((runs.pop(n - d) for d in (1, 2, 3) if n - d in runs), [])
        run = runs[n] = prev + [(i, m)]
        if len(run) > len(best):
            best = run
    return best


def _in_margin(words: Sequence[Sequence[Any]], numbers: set[str]) -> bool:
    """Whether four in five of ``numbers`` are words in the page's margin: ``MARGIN_GAP`` or more left of where the
    text starts or right of where it ends (its other words' 10th and 90th percentiles), a gutter, not a space."""
    text_words = [w for w in words if str(w[4]) not in numbers]
    if not text_words:
        return False
    left = sorted(float(w[0]) for w in text_words)[len(text_words) // 10]  # where the text starts (10th pct.)
    right = sorted(float(w[2]) for w in text_words)[-1 - len(text_words) // 10]
    margin = {str(w[4]) for w in words if str(w[4]) in numbers
              and (float(w[2]) <= left - MARGIN_GAP or float(w[0]) >= right + MARGIN_GAP)}
    return len(margin) >= 0.8 * len(numbers)


def _without_numbers(lines: list[str], best: Run) -> str:
    """The page without the run's numbers; a number alone on its line goes with the blank lines around it when it
    had cut a sentence (the text before does not end one, the text after goes on in lower case)."""
    drop: set[int] = set()
    for i, m in best:
        rest = lines[i][m.end():]
        if rest.strip():
            lines[i] = rest
            continue
        drop.add(i)
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if k >= 0 and j < len(lines) and not lines[k].rstrip().endswith((".", "!", "?", ":")) \
                and lines[j].strip()[:1].islower():
            drop.update(range(k + 1, j))  # the number had cut a sentence: join it again
    return "\n".join(x for n, x in enumerate(lines) if n not in drop)
