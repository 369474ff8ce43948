"""Sentence segmentation: spans tile the range, Markdown structure is never crossed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chunkscope.text.sentences import sentence_spans


def _check_tiling(text, spans, start=0, end=None):
    end = len(text) if end is None else end
    if not text[start:end].strip():
        assert spans == []
        return
    lead = len(text[start:end]) - len(text[start:end].lstrip())
    assert spans[0].start == start + lead
    assert spans[-1].end == end
    for a, b in zip(spans, spans[1:]):
        assert a.end == b.start and a.start < a.end


def test_basic_sentences_and_whitespace_attached_to_previous():
    text = "Hello there. Mr. Smith went to Washington. It rained!"
    spans = sentence_spans(text)
    parts = [text[s.start:s.end] for s in spans]
    assert parts[0] == "Hello there. "
    assert "".join(parts) == text
    assert len(parts) == 3


def test_sentence_ends_of_other_scripts_chinese_without_a_space_hindi_and_arabic_with_one():
    text = "数据控制者应当保存记录。这些记录必须提供！“处理是合法的吗？”管理者は記録を保存する。Then English. And more."
    parts = [text[s.start:s.end] for s in sentence_spans(text)]
    assert parts == ["数据控制者应当保存记录。", "这些记录必须提供！", "“处理是合法的吗？”", "管理者は記録を保存する。",
                     "Then English. ", "And more."]
    assert sentence_spans("最后一句。")[0].end == len("最后一句。")  # nothing after the last mark: no empty sentence
    # Hindi's danda and the Arabic question mark are followed by a space, which the English model does not cut at
    hi = "यह एक वाक्य है। यह दूसरा वाक्य है। क्या यह तीसरा है? हाँ।"
    assert [hi[s.start:s.end] for s in sentence_spans(hi)] == ["यह एक वाक्य है। ", "यह दूसरा वाक्य है। ", "क्या यह तीसरा है? ", "हाँ।"]
    ar = "هذه جملة أولى. هل هذه جملة ثانية؟ نعم، هذه جملة ثالثة."
    assert [ar[s.start:s.end] for s in sentence_spans(ar)] == ["هذه جملة أولى. ", "هل هذه جملة ثانية؟ ", "نعم، هذه جملة ثالثة."]


def test_markdown_structure_is_never_crossed():
    text = "# Title\nFirst paragraph without end\n\n| a | b |\n| c | d |\n\n- item one\n- item two\nlast"
    spans = sentence_spans(text)
    starts = {s.start for s in spans}
    for marker in ("First", "| a", "| c", "- item one", "- item two"):
        assert text.index(marker) in starts
    _check_tiling(text, spans)


def test_sub_range_offsets_are_absolute():
    text = "Intro. " + "One sentence here. Another one there. " + "tail"
    spans = sentence_spans(text, 7, len(text) - 4)
    assert spans[0].start == 7
    assert spans[-1].end == len(text) - 4


def test_empty_and_blank():
    assert sentence_spans("") == []
    assert sentence_spans(" \n\n ") == []
    assert [(s.start, s.end) for s in sentence_spans("x")] == [(0, 1)]


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .!?\n#|-(1)é,")), max_size=120))
def test_property_tiling(text):
    _check_tiling(text, sentence_spans(text))
