"""Chunkers: unit rules, registry API, post-processing, LangChain mapping, audit, and
property-based coverage/order invariants for every built-in chunker."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkscope.chunkers import registry
from chunkscope.chunkers.audit import audit
from chunkscope.chunkers.base import ParamError
from chunkscope.chunkers.fixed import fixed_windows
from chunkscope.chunkers.langchain import map_chunks
from chunkscope.chunkers.postprocess import merge_tiny, postprocess
from chunkscope.chunkers.recursive import RecursiveSplitter, split_keep_start
from chunkscope.document import Document, Heading, Span
from chunkscope.text.tokens import count_tokens

BUILTIN = ["page", "recursive-1100", "recursive-600", "langchain-default", "langchain-1100",
           "sentence-5", "fixed-512", "structure", "whole"]

# small sizes so that generated documents actually get split
SMALL = {
    "recursive-1100": {"chunk_size": 20},
    "recursive-600": {"chunk_size": 12, "chunk_overlap": 4},
    "langchain-default": {"chunk_size": 120, "chunk_overlap": 30},
    "langchain-1100": {"chunk_size": 20},
    "sentence-5": {"sentences": 2},
    "fixed-512": {"size": 16, "overlap": 4},
    "structure": {"chunk_size": 20},
}
PP_SMALL = {"pp_max_tokens": 30, "pp_min_tokens": 8, "pp_merge_max": 35}


def md_doc(text: str, pages: int = 0, name: str = "t") -> Document:
    cuts = sorted({len(text) * k // pages for k in range(1, pages)}) if pages else []
    edges = [0, *cuts, len(text)]
    return Document(name=name, text=text, source_format="markdown",
                    pages=[Span(a, b) for a, b in zip(edges, edges[1:])] if pages else [])


def assert_invariants(doc: Document, spans: list[Span]) -> None:
    text = doc.text
    for s in spans:
        assert 0 <= s.start <= s.end <= len(text)
    for a, b in zip(spans, spans[1:]):
        assert b.start >= a.start and b.end >= a.end, (a, b)
    a = audit(doc, spans)
    assert a.gaps == [], (a.summary, [text[g.start:g.end] for g in a.gaps][:3])
    assert a.ordered
    if text.strip():
        assert spans, "non-blank text must give chunks"


# ---------------------------------------------------------------- generated Markdown
_words = st.lists(st.sampled_from(["alpha", "beta", "Gamma", "data", "the", "é", "naïve", "中文", "🙂",
                                   "x", "1.", "(a)", "word,", "end.", "why?", "wow!", "-", "•"]),
                  min_size=1, max_size=25).map(" ".join)
_heading = st.tuples(st.integers(1, 8), _words).map(lambda t: "#" * t[0] + " " + t[1])
_table = st.lists(st.lists(_words, min_size=2, max_size=3), min_size=1, max_size=4).map(
    lambda rows: "\n".join("| " + " | ".join(r) + " |" for r in rows))
_html_table = _table.map(lambda t: "<Table>\n" + t + "\n</Table>")
_list = st.lists(_words, min_size=1, max_size=5).map(lambda items: "\n".join(f"- {i}" for i in items))
_numbered = st.lists(_words, min_size=1, max_size=4).map(
    lambda items: "\n".join(f"{k + 1}. {i}" for k, i in enumerate(items)))
_long_line = st.text(alphabet="abcdefghijé中", min_size=50, max_size=600)
_para = st.lists(_words, min_size=1, max_size=4).map(lambda ss: ". ".join(ss) + ".")
_block = st.one_of(_heading, _table, _html_table, _list, _numbered, _long_line, _para,
                   st.just("<!-- PageBreak -->"))
_sep = st.sampled_from(["\n", "\n\n", "\n\n\n", " \n\n"])
markdown = st.one_of(
    st.just(""), st.just(" "), st.just("\n\n"),
    st.text(min_size=1, max_size=1),
    st.tuples(st.lists(st.tuples(_block, _sep), min_size=1, max_size=10), st.sampled_from(["", " ", "\n"])).map(
        lambda t: "".join(b + s for b, s in t[0]) + t[1]),
)


@pytest.mark.parametrize("cid", BUILTIN)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown, pages=st.integers(0, 4))
def test_property_coverage_and_order(cid, text, pages):
    doc = md_doc(text, pages)
    res = registry.run_chunker(doc, cid, SMALL.get(cid, {}))
    if cid == "page" and not pages:
        assert res.status == "skipped" and res.reason
        return
    assert res.status == "ok", res.reason
    assert_invariants(doc, res.spans)


@pytest.mark.parametrize("cid", ["page+pp", "recursive-1100+pp", "langchain-default+pp", "fixed-512+pp",
                                 "sentence-5+pp", "structure+pp"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown)
def test_property_postprocessed(cid, text):
    doc = md_doc(text, 3)
    params = {**SMALL.get(cid[:-3], {}), **PP_SMALL}
    res = registry.run_chunker(doc, cid, params)
    assert res.status == "ok", res.reason
    assert_invariants(doc, res.spans)


@settings(max_examples=40, deadline=None)
@given(text=markdown, size=st.integers(3, 40))
def test_property_recursive_tiles_and_respects_size(text, size):
    sp = RecursiveSplitter(chunk_size=size)
    pieces = sp.pieces(text)
    assert all(n <= size or e - s == 1 for s, e, n in pieces)
    if text:
        assert pieces[0][0] == 0 and pieces[-1][1] == len(text)
        assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    chunks = sp.split(text)
    assert all(a.end == b.start for a, b in zip(chunks, chunks[1:]))
    if text.strip():
        assert chunks[0].start == 0 and chunks[-1].end == len(text)


# ---------------------------------------------------------------- recursive rules
def test_split_keep_start_and_short_pieces():
    pat = re.compile(r"\n{2,}")
    text = "first paragraph here\n\nok\n\nthird paragraph is longer\n\nxy"
    parts = [text[a:b] for a, b in split_keep_start(text, pat)]
    assert "".join(parts) == text
    assert parts[0] == "first paragraph here"
    assert parts[1] == "\n\nok\n\nthird paragraph is longer"  # "\n\nok" (< 10 chars) joined to the next
    assert parts[-1] == "\n\nxy"  # a short last piece stays on its own


def test_recursive_cuts_before_headings():
    body = " ".join(["word"] * 60)
    text = f"# One\n{body}\n## Two\n{body}\n# Three\n{body}\n"
    chunks = RecursiveSplitter(chunk_size=70).split(text)
    starts = [text[c.start:c.start + 3] for c in chunks]
    assert starts == ["# O", "\n# ", "\n# "] or all(s.strip().startswith("#") for s in starts)
    assert all(count_tokens(text[c.start:c.end]) <= 70 for c in chunks)


def test_recursive_hard_split_long_line_without_separators():
    text = "x" * 5000 + "中" * 3000
    chunks = RecursiveSplitter(chunk_size=50).split(text)
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    assert all(count_tokens(text[c.start:c.end]) <= 50 for c in chunks)


# Chinese prose: no space after 。 or ，, so the paper's English sentence and comma patterns never matched
ZH_SENTENCES = ["数据控制者应当保存处理活动的记录", "这些记录必须在监管机构要求时提供", "处理只有在数据主体同意的情况下才是合法的",
                "同意可以随时撤回，但撤回不影响之前的处理", "处理者应当采取适当的技术和组织措施", "这些措施包括加密和假名化"]
ZH = "# 数据保护\n\n" + "".join(ZH_SENTENCES[i % 6] + f"（第{i}条）。" for i in range(150)) + "\n"


@pytest.mark.parametrize("cid", ["recursive-600", "recursive-1100+pp", "langchain-1100", "structure", "sentence-5"])
def test_chinese_prose_is_cut_after_sentence_ends(cid):
    doc = md_doc(ZH)
    spans = registry.run_chunker(doc, cid, {"chunk_size": 300} if cid != "sentence-5" else {}).spans
    assert len(spans) > 3
    for a in spans[:-1]:
        assert ZH[:a.end].rstrip().endswith(("。", "数据保护")), ZH[a.end - 12:a.end + 4]


def test_other_scripts_marks_cut_their_clause_and_english_is_cut_as_by_the_papers_list():
    from chunkscope.chunkers.recursive import PAPER_SEPARATORS

    # the quote closes the sentence: the cut comes after it; a comma cuts a clause when a sentence is too long
    text = "他说：“同意可以随时撤回。”处理者应当采取措施。" + "，".join(ZH_SENTENCES * 3) + "。"
    pieces = [text[c.start:c.end] for c in RecursiveSplitter(chunk_size=25).split(text)]
    assert pieces[0].startswith("他说：“同意可以随时撤回。”")
    assert all(p.endswith(("。", "”", "，")) for p in pieces[:-1]), pieces
    # Hindi and Arabic: after the danda, the question mark and the comma (the space starts the next piece)
    hi = " ".join(f"यह वाक्य संख्या {i} है, और यह चलता रहता है।" for i in range(30))
    assert all(hi[:c.end].endswith(("।", ",")) for c in RecursiveSplitter(chunk_size=30).split(hi)[:-1])
    ar = " ".join(f"هل هذه الجملة رقم {i}، التي تستمر طويلا؟" for i in range(30))
    assert all(ar[:c.end].endswith(("؟", "،")) for c in RecursiveSplitter(chunk_size=30).split(ar)[:-1])
    # the sentence level cuts where chunkscope.text.sentences ends a sentence: after up to two closing quotes
    from chunkscope.chunkers.recursive import OTHER_SENTENCE_END
    from chunkscope.text.sentences import sentence_spans

    level = re.compile(next(s for s in PAPER_SEPARATORS if s.startswith("[.!?]")))
    for quoted, want in [
            ("他说：“她说‘好。’”然后走了。（引用“好。”）然后走了。", ["他说：“她说‘好。’”", "然后走了。", "（引用“好。”）", "然后走了。"]),
            ("यह सच है।” फिर वह गया।", ["यह सच है।”", " फिर वह गया।"]),
            ("قال «هل هذا صحيح؟» ثم ذهب.", ["قال «هل هذا صحيح؟»", " ثم ذهب."])]:
        assert [quoted[a:b] for a, b in split_keep_start(quoted, level, min_chars=1)] == want
        assert [quoted[x.start:x.end].strip() for x in sentence_spans(quoted)] == [w.strip() for w in want]
    assert OTHER_SENTENCE_END in level.pattern
    assert split_keep_start("一句。", re.compile(OTHER_SENTENCE_END)) == [(0, 3)]  # no empty piece at the end
    # English text: the same chunks as the paper's own sentence and comma patterns
    paper = [*PAPER_SEPARATORS]
    paper[paper.index(next(s for s in paper if s.startswith("[.!?]")))] = r"[.!?]\s+"
    paper[paper.index(next(s for s in paper if s.startswith(",")))] = r",\s+"
    english = " ".join(f"Sentence {i}, with a clause, is here. It says more! Does it?" for i in range(80))
    for size in (12, 40, 300):
        assert (RecursiveSplitter(chunk_size=size).split(english)
                == RecursiveSplitter(chunk_size=size, separators=paper).split(english))


def test_recursive_overlap_backfills_from_previous_chunk():
    text = " ".join(f"Sentence number {i} is here." for i in range(200))
    chunks = RecursiveSplitter(chunk_size=60, chunk_overlap=15).split(text)
    assert len(chunks) > 3
    for a, b in zip(chunks, chunks[1:]):
        assert b.start < a.end  # overlap
        assert count_tokens(text[b.start:a.end]) <= 15 + 2
        assert count_tokens(text[b.start:b.end]) <= 60 + 15 + 2


def test_recursive_large_document_is_fast():
    import time

    para = "Article {i}. The controller shall, taking into account the nature, scope, context and purposes " \
           "of processing, implement appropriate measures.\n\n"
    text = "".join(para.format(i=i) for i in range(6000))  # ~ 170k tokens
    t = time.perf_counter()
    chunks = RecursiveSplitter(chunk_size=1100).split(text)
    assert time.perf_counter() - t < 10
    assert chunks[-1].end == len(text)


def test_invalid_params():
    with pytest.raises(ParamError):
        registry.run_chunker(md_doc("text"), "recursive-1100", {"chunk_overlap": 2000})
    with pytest.raises(ParamError):
        registry.run_chunker(md_doc("text"), "recursive-1100", {"chunk_size": "big"})
    with pytest.raises(ParamError):
        registry.run_chunker(md_doc("text"), "recursive-1100", {"nope": 1})
    with pytest.raises(ParamError):
        registry.run_chunker(md_doc("text"), "fixed-512", {"size": 10, "overlap": 10})


# ---------------------------------------------------------------- registry
def test_registry_api():
    assert set(BUILTIN) <= set(registry.ids(include_pp=False))
    all_ids = registry.ids()
    assert "recursive-1100+pp" in all_ids and "whole+pp" in all_ids
    for cand in ("page+pp", "recursive-1100+pp", "recursive-600+pp"):
        assert cand in registry.DEFAULT_IDS
    assert set(BUILTIN) <= set(registry.DEFAULT_IDS)
    spec = registry.get("recursive-600+pp")
    names = [p.name for p in spec.params]
    assert names[:3] == ["chunk_size", "chunk_overlap", "separators"]
    assert {"pp_max_tokens", "pp_min_tokens", "pp_merge_max"} <= set(names)
    assert spec.resolve_params()["chunk_size"] == 600
    with pytest.raises(KeyError):
        registry.get("nope")
    with pytest.raises(ParamError):
        registry.run_chunker(md_doc("x"), "nope+pp")


def test_register_custom_chunker():
    from chunkscope.chunkers.base import ChunkerSpec, ChunkResult

    spec = ChunkerSpec("test-halves", "Halves", "two halves", (),
                       lambda d, p, c: ChunkResult(spans=[Span(0, len(d.text) // 2), Span(len(d.text) // 2, len(d.text))]))
    registry.register(spec)
    try:
        res = registry.run_chunker(md_doc("abcdef " * 20), "test-halves+pp", {"pp_min_tokens": 0})
        assert res.status == "ok" and len(res.spans) == 2
        registry.register(spec)  # the same spec again: a no-op
        clash = ChunkerSpec("test-halves", "Other", "another chunker under a taken id", (), spec.fn)
        with pytest.raises(ValueError, match="already registered"):
            registry.register(clash)
        assert registry.get("test-halves") is spec  # never silently replaced
    finally:
        registry.unregister("test-halves")
    assert not registry.is_registered("test-halves")


def test_page_skipped_without_pages():
    res = registry.run_chunker(md_doc("no pages here"), "page")
    assert res.status == "skipped" and "page" in res.reason
    assert registry.run_chunker(md_doc("no pages here"), "page+pp").status == "skipped"


def test_whole_and_blank():
    assert registry.run_chunker(md_doc("hello"), "whole").spans == [Span(0, 5)]
    for cid in BUILTIN[1:]:
        assert registry.run_chunker(md_doc("  \n "), cid).spans == []


# ---------------------------------------------------------------- fixed / sentence / structure
def test_fixed_windows_token_counts():
    text = " ".join(f"token{i}" for i in range(3000))
    spans = fixed_windows(text, 512, 64)
    from chunkscope.text.tokens import token_char_offsets

    _ids, offs = token_char_offsets(text)
    starts = [offs.index(s.start) if s.start else 0 for s in spans]
    assert all(b - a == 448 for a, b in zip(starts, starts[1:]))
    assert spans[-1].end == len(text)
    for s in spans[:-1]:
        assert abs(count_tokens(text[s.start:s.end]) - 512) <= 2


def test_sentence_chunks_hold_five_sentences():
    text = " ".join(f"This is sentence number {i}." for i in range(23))
    res = registry.run_chunker(md_doc(text), "sentence-5")
    assert len(res.spans) == 5
    assert text[res.spans[1].start:].startswith("This is sentence number 5.")


def test_structure_heading_with_body_and_tables_whole():
    table = "<Table>\n" + "\n".join(f"| r{i} | value {i} |" for i in range(30)) + "\n</Table>\n\n"
    long_body = "\n\n".join(" ".join(["text"] * 40) for _ in range(10))
    text = "Intro line.\n\n# Title\n\n## Sub\nShort body.\n\n# Long\n" + long_body + "\n\n" + table + long_body
    doc = md_doc(text)
    res = registry.run_chunker(doc, "structure", {"chunk_size": 300})
    chunks = [text[s.start:s.end] for s in res.spans]
    assert chunks[0] == "Intro line.\n\n"
    assert chunks[1].startswith("# Title\n\n## Sub\nShort body.")  # heading-only section joined to its body
    assert any(c.strip().startswith("<Table>") and c.strip().endswith("</Table>") for c in chunks)
    assert_invariants(doc, res.spans)
    # headings from the loader are used when present
    doc2 = Document("h", text, "markdown", headings=[Heading(text.index("# Long"), text.index("# Long") + 6, 1, "Long")])
    res2 = registry.run_chunker(doc2, "structure", {"chunk_size": 5000})
    assert [s.start for s in res2.spans] == [0, text.index("# Long")]


# ---------------------------------------------------------------- post-processing
def test_merge_tiny_prefers_next_then_previous():
    text = "a " * 50 + "b " * 500 + "c " * 30
    spans = [Span(0, 100), Span(100, 1100), Span(1100, len(text))]
    sizes = [count_tokens(text[s.start:s.end]) for s in spans]
    assert sizes == [51, 501, 31]
    out = merge_tiny(text, spans, min_tokens=60, merge_max=560)
    # chunk 0 merges with the next (552 <= 560); the last one cannot join (551 + 31 > 560)
    assert out == [Span(0, 1100), Span(1100, len(text))]
    out2 = merge_tiny(text, spans, min_tokens=60, merge_max=540)
    # chunk 0 cannot take the next (552 > 540) and has no previous; the last joins its previous
    assert out2 == [Span(0, 100), Span(100, len(text))]


def test_postprocess_idempotent_on_well_sized_chunkings():
    text = "\n\n".join(" ".join(f"w{i}x{j}" for j in range(150)) for i in range(40))
    spans = RecursiveSplitter(chunk_size=1100).split(text)
    out = postprocess(text, spans)
    assert out == spans
    assert postprocess(text, out) == out


def test_postprocess_resplits_oversized():
    text = "\n\n".join(" ".join(f"w{i}x{j}" for j in range(150)) for i in range(40))
    out = postprocess(text, [Span(0, len(text))])
    assert len(out) > 1 and all(count_tokens(text[s.start:s.end]) <= 1150 for s in out)
    assert out[0].start == 0 and out[-1].end == len(text)


# ---------------------------------------------------------------- LangChain mapping
def test_map_chunks_repeated_passages_and_stripped_gaps():
    text = "  Same line here.\n\nSame line here.\n\nSame line here.\n\nOther.\n"
    chunks = ["Same line here.", "Same line here.", "Same line here.", "Other."]
    spans = map_chunks(text, chunks)
    assert spans[0].start == 0 and spans[-1].end == len(text)
    assert [text[s.start:s.end].strip() for s in spans] == chunks
    assert all(a.end == b.start for a, b in zip(spans, spans[1:]))


def test_map_chunks_with_overlap():
    text = "one two three four five six seven eight nine ten"
    chunks = ["one two three four", "three four five six", "five six seven eight nine ten"]
    spans = map_chunks(text, chunks, max_overlap_chars=12)
    assert [text[s.start:s.end] for s in spans] == ["one two three four", "three four five six",
                                                     "five six seven eight nine ten"]


def test_map_chunks_when_the_overlap_repeats_the_previous_chunk_whole():
    # LangChain with overlap can emit "<Table>" and then "<Table>\n| ... |": both start at the same place
    # (found by the property test below)
    text = "<!-- PageBreak -->\n\n<Table>\n| alpha | beta gamma delta |\n</Table>\n"
    chunks = ["<!-- PageBreak -->", "<Table>", "<Table>\n| alpha | beta gamma delta |", "</Table>"]
    spans = map_chunks(text, chunks, max_overlap_chars=30)
    assert [text[s.start:s.end].strip() for s in spans] == chunks
    assert spans[2].start == text.index("<Table>") and spans[-1].end == len(text)
    # ... also when the same table comes again later: the chunk is the first table, not the second
    row = "| alpha | beta gamma delta |"
    text = f"# alpha\n\n<Table>\n{row}\n</Table>\n<Table>\n{row}\n</Table>\n"
    chunks = ["# alpha", "<Table>", f"<Table>\n{row}", "</Table>\n<Table>", f"<Table>\n{row}", "</Table>"]
    spans = map_chunks(text, chunks, max_overlap_chars=30)
    assert [text[s.start:s.end].strip() for s in spans] == chunks
    assert spans[2].start == text.index("<Table>") and spans[4].start == text.rindex("<Table>")


def test_langchain_chunkers_on_repetitive_text():
    text = ("## Repeated heading\n\nRepeated paragraph text, again and again.\n\n" * 40).strip() + "\n"
    doc = md_doc(text)
    for cid, params in (("langchain-1100", {"chunk_size": 30}), ("langchain-default", {"chunk_size": 200, "chunk_overlap": 50})):
        res = registry.run_chunker(doc, cid, params)
        assert res.status == "ok"
        assert len(res.spans) > 5
        assert_invariants(doc, res.spans)


# ---------------------------------------------------------------- audit
def test_audit_reports_gaps_overlaps_and_ceiling():
    text = "alpha beta\n\ngamma delta\n\nepsilon"
    a = audit(md_doc(text), [Span(0, 12), Span(6, 12), Span(25, len(text))], ceiling=1)
    assert [text[g.start:g.end] for g in a.gaps] == ["gamma delta"]
    assert a.overlaps == 1 and a.overlap_chars == 6
    assert a.over_ceiling == [0, 1, 2] or a.over_ceiling
    assert not a.ok and "gap" in a.summary
    ok = audit(md_doc(text), [Span(0, 12), Span(12, len(text))])
    assert ok.summary == "all text covered, 0 gaps, 0 overlaps"
    d = ok.to_dict()
    assert d["covered"] == 1.0 and d["ok"] is True and d["summary"] == ok.summary


def test_separators_param_from_cli_strings():
    spec = registry.get("recursive-1100")
    assert spec.resolve_params({"separators": r"\n{2,}|\n"})["separators"] == [r"\n{2,}", r"\n"]
    assert spec.resolve_params({"separators": r'["(?:a|b)\\s", "\\n"]'})["separators"] == [r"(?:a|b)\s", r"\n"]
    with pytest.raises(ParamError):
        spec.resolve_params({"separators": "[not json"})
    with pytest.raises(ParamError):
        registry.run_chunker(md_doc("some text " * 50), "recursive-1100", {"separators": "(unclosed", "chunk_size": 5})
    # a zero-width separator (lookahead) still splits
    text = "intro words here\nSECTION one has words\nSECTION two has words"
    chunks = RecursiveSplitter(chunk_size=6, separators=(r"(?=SECTION)", "")).split(text)
    assert [text[c.start:c.end] for c in chunks][1].startswith("SECTION one")


def test_structure_leaves_no_whitespace_only_chunk():
    """The recursive split of a long section could end on its blank lines: an empty chunk (the gnuplot
    manual's chunk 540 was "\n\n"), which fails the coverage audit."""
    from chunkscope.chunkers.structure import _absorb_blank

    text = "Alpha text.\n\n\n\nBeta text.\n\n"
    spans = [Span(0, 11), Span(11, 15), Span(15, 25), Span(25, 27)]
    assert _absorb_blank(text, spans) == [Span(0, 15), Span(15, 27)]
    assert _absorb_blank(text, [Span(11, 15), Span(15, 27)]) == [Span(11, 27)]  # a blank first span: to the next
    assert _absorb_blank("  ", [Span(0, 2)]) == [Span(0, 2)]
