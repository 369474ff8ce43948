"""The retrieval check (issue 14): metric definitions, budget truncation, question input and
every bad input, self-test, LLM generation against the local test server, CLI JSON schema,
the analysis' retrieval block and the optional weight in the adaptive score."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_server import ScriptedLLMServer, reply  # noqa: E402

from chunkscope.document import Document  # noqa: E402
from chunkscope.retrieval import metrics as RM  # noqa: E402
from chunkscope.retrieval.questions import Locator, QuestionsError, read_questions  # noqa: E402
from chunkscope.retrieval.run import Chunking, Config, evaluate  # noqa: E402

FIX = Path(__file__).resolve().parent / "fixtures" / "retrieval"
TINY = FIX / "tiny.md"


# ----------------------------------------------------------------------------- metric definitions

def test_overlapping_chunks_count_twice_in_precision():
    ev = [(10, 20), (50, 60)]  # 20 evidence characters, two excerpts
    s = RM.score([(0, 15), (5, 25)], ev)  # overlapping chunks: both cover (10, 15)
    assert s.covered == 10  # union of intersections: (10, 20)
    assert s.recall == pytest.approx(10 / 20)
    assert s.precision == pytest.approx(10 / (15 + 20))  # summed lengths, overlap counted twice
    assert s.missed == [(50, 60)]
    assert s.iou == pytest.approx(10 / (35 + 10))


def test_multi_excerpt_evidence_partly_covered():
    s = RM.score([(0, 15), (45, 55)], [(50, 60), (10, 20)])
    assert s.covered == 10 and s.recall == pytest.approx(0.5)
    assert s.precision == pytest.approx(10 / 25)
    assert s.missed == [(15, 20), (55, 60)]
    assert s.iou == pytest.approx(10 / (25 + 10))


def test_full_recall_and_nothing_retrieved():
    full = RM.score([(0, 100)], [(10, 20)])
    assert (full.recall, full.precision, full.iou) == (1.0, pytest.approx(0.1), pytest.approx(0.1))
    none = RM.score([], [(10, 20)])
    assert (none.recall, none.precision, none.iou) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        RM.score([(0, 5)], [])


def test_precision_omega_ideal_is_covered_over_union_of_evidence_chunks():
    spans = [(0, 30), (30, 60), (60, 100)]
    assert RM.evidence_chunks(spans, [(10, 20), (50, 60)]) == [0, 1]
    assert RM.precision_omega_ideal(spans, [(10, 20), (50, 60)]) == pytest.approx(20 / 60)
    # overlapping chunks: the union, not the sum
    assert RM.precision_omega_ideal([(0, 30), (20, 50)], [(25, 28)]) == pytest.approx(3 / 50)


def test_budget_takes_rank_order_and_cuts_the_crossing_chunk():
    spans = [(0, 100), (100, 200), (200, 300)]
    tokens = [10, 40, 30]
    lead = lambda i, m: m * 2  # 2 characters a token
    got = RM.take_budget([2, 0, 1], spans, tokens, 45, lead)
    assert got == [(2, 200, 300), (0, 0, 100), (1, 100, 110)]  # 30 + 10 full, then 5 tokens of chunk 1
    assert RM.take_budget([1], spans, tokens, 40, lead) == [(1, 100, 200)]  # exactly full: no cut
    assert RM.take_budget([1, 0], spans, tokens, 40, lead) == [(1, 100, 200)]


def test_budget_truncation_on_real_tokens():
    from chunkscope.chunkers.fixed import fixed_windows
    from chunkscope.retrieval.questions import Question, QuestionSet
    from chunkscope.text.tokens import count_tokens, encode

    text = TINY.read_text(encoding="utf-8")
    spans = [(s.start, s.end) for s in fixed_windows(text, 40, 0)]
    toks = [count_tokens(text[a:b]) for a, b in spans]
    last = spans[-1]
    ev = [(last[0] + 5, last[1])]  # evidence only in the last chunk: BM25 ranks it first
    q = QuestionSet([Question("rescore boat northern quay alarm minutes", ev)], "file")
    res = evaluate(text, [Chunking("f", spans, toks)], q, Config(k=1, budget=toks[-1] + 7, per_question=True))
    taken = res.chunkings[0].per_question[0]["budget"]["retrieved"]
    assert (taken[0][0], taken[0][1]) == last
    a, b = taken[1][0], taken[1][1]
    assert len(encode(text[a:b])) == 7  # the crossing chunk gives only its leading 7 tokens
    assert res.chunkings[0].at_budget["precision"] == pytest.approx(
        RM.score([last, (a, b)], ev).precision)


# ----------------------------------------------------------------------------- questions

DOC = Document("harbour", TINY.read_text(encoding="utf-8"), "markdown")


def test_chroma_csv_format_as_is_and_other_corpora_skipped():
    t = DOC.text
    s = t.index("Mooring fees")
    e = t.index("card.") + len("card.")
    refs = json.dumps([{"content": t[s:e], "start_index": s, "end_index": e}])
    csv_text = ("question,references,corpus_id\n"
                f'"Where are mooring fees paid?","{refs.replace(chr(34), chr(34) * 2)}",harbour\n'
                f'"Other doc?","{refs.replace(chr(34), chr(34) * 2)}",finance\n')
    qs = read_questions(csv_text, "questions_df.csv", t, "harbour.md")
    assert [q.evidence for q in qs.questions] == [[(s, e)]]
    assert qs.skipped_other == 1 and not qs.problems


def test_every_bad_row_is_reported_and_the_rest_scored():
    t = DOC.text
    rows = [
        {"question": "good quote", "quotes": ["Life jackets are mandatory for children"]},
        {"question": "no evidence"},
        {"question": "outside", "evidence": [[10, len(t) + 50]]},
        {"question": "reversed", "evidence": [[30, 10]]},
        {"question": "missing quote", "quote": "This sentence is not in the harbour rules at all."},
        {"question": "", "quote": "Life jackets"},
        {"question": "span", "evidence": [[0, 15]]},
    ]
    text = "\n".join(json.dumps(r) for r in rows) + "\n{not json\n[1, 2]\n"
    qs = read_questions(text, "q.jsonl", t, "harbour")
    assert [q.text for q in qs.questions] == ["good quote", "span"]
    probs = "\n".join(qs.problems)
    assert "line 2: question 'no evidence' has no evidence" in probs
    assert "line 3: evidence [10, " in probs and "outside the document" in probs
    assert "line 4: evidence [30, 10] is empty or reversed" in probs
    assert "line 5: quote not found in the document" in probs
    assert "line 6: no question text" in probs
    assert "line 8: not valid JSON" in probs
    assert "line 9: expected a JSON object" in probs


def test_a_malformed_span_leaves_its_row_out_and_short_quotes_are_never_located():
    t = DOC.text
    good = "Life jackets are mandatory for children"
    refs = [[{"content": "x", "start_index": 5}],  # no end_index: its 1-character quote is not located instead
            [{"content": good, "start_index": 30, "end_index": 10}, {"content": good}],  # reversed, with a good one
            [{"content": "Life"}],  # a quote too short to be unique
            [{"content": "Life jackets are mandatory … are"}],  # a part of it too short
            [{"content": good}]]
    csv_text = "question,references\n" + "".join(
        f'"q{i}","{json.dumps(r).replace(chr(34), chr(34) * 2)}"\n' for i, r in enumerate(refs, 1))
    qs = read_questions(csv_text, "questions_df.csv", t, "harbour")
    assert [q.text for q in qs.questions] == ["q4", "q5"]  # q4: the part long enough to locate, as a part not found
    part = "Life jackets are mandatory"
    assert qs.questions[0].evidence == [(t.index(part), t.index(part) + len(part))]
    assert qs.questions[1].evidence == [(t.index(good), t.index(good) + len(good))]
    probs = "\n".join(qs.problems)
    assert "row 2: evidence span [5, None] is not two whole numbers" in probs
    assert "row 2: question 'q1' left out (a malformed evidence span)" in probs
    assert "row 3: evidence [30, 10] is empty or reversed" in probs and "row 3: question 'q2' left out" in probs
    assert "row 4: quote too short to locate (under 15 characters): 'Life'" in probs
    assert "row 5: quote too short to locate (under 15 characters): 'are'" in probs


@pytest.mark.parametrize("content,name,msg", [
    ("", "q.csv", "empty"),
    ("   \n", "q.jsonl", "empty"),
    ("a,b\n1,2\n", "q.csv", "no 'question' column"),
    ("{broken\n{also broken\n", "q.jsonl", "no line is valid JSON"),
    ('{"question": "x"}\n', "q.jsonl", "no usable question"),
    (b"\xff\xfe\x00bad", "q.csv", "not UTF-8"),
])
def test_unusable_files_raise_one_clear_message(content, name, msg):
    with pytest.raises(QuestionsError, match=msg):
        read_questions(content, name, DOC.text, "harbour")


def test_quotes_located_up_to_whitespace_quotes_and_case():
    loc = Locator("He said \u201cno\u201d to it.\n\nThe  Harbour\nmaster   rules the quay.")
    a, b = loc.find('he said "no" to it. the harbour master rules the quay.')
    assert (a, b) == (0, len(loc.text))
    r = loc.find_parts("He said “no” to … master rules the quay")
    assert len(r[0]) == 2 and not r[1]


def test_spans_on_the_uploaded_text_are_mapped_onto_the_normalised_document():
    raw = DOC.text.replace("\n", "\r\n")  # the file as uploaded (CRLF); the loader normalises to LF
    s = raw.index("A weekly pass")
    e = raw.index("electricity.") + len("electricity.")
    row = {"question": "weekly pass?", "references": [{"content": raw[s:e], "start_index": s, "end_index": e}]}
    qs = read_questions(json.dumps(row), "q.jsonl", DOC.text, "harbour", raw_text=raw)
    (a, b), = qs.questions[0].evidence
    assert DOC.text[a:b] == raw[s:e] and (a, b) != (s, e)
    # a span that does not match its content: reported, and the quote is used instead
    bad = {"question": "fees?", "references": [{"content": "Mooring fees are paid", "start_index": 0, "end_index": 5}]}
    qs2 = read_questions(json.dumps(bad), "q.jsonl", DOC.text, "harbour")
    assert qs2.problems == ["line 1: span [0, 5] does not match its quoted content 'Mooring fees are paid'; "
                            "using the quote, found in the document"]
    (a, b), = qs2.questions[0].evidence
    assert DOC.text[a:b] == "Mooring fees are paid"
    # ... and when the quote cannot stand in, one line says both, without claiming the quote is used
    for quote, why in (("Fees", "quote too short to locate (under 15 characters): 'Fees'"),
                       ("Mooring fees are paid in gold", "quote not found in the document")):
        bad["references"][0]["content"] = quote
        qs3 = read_questions(json.dumps([bad, row]), "q.jsonl", DOC.text, "harbour", raw_text=raw)
        (line,) = [x for x in qs3.problems if "does not match" in x]
        assert "the quote cannot stand in (" + why in line and "using" not in line
    # a quote in parts ("a … b") of which one is found: that part is used, and the line says so
    bad["references"][0]["content"] = "Mooring fees are paid … and nowhere in these harbour rules"
    qs4 = read_questions(json.dumps([bad, row]), "q.jsonl", DOC.text, "harbour", raw_text=raw)
    (line,) = [x for x in qs4.problems if "does not match" in x]
    assert "using the part(s) of the quote found (quote not found in the document" in line
    assert DOC.text[slice(*qs4.questions[0].evidence[0])] == "Mooring fees are paid"


def test_fewer_chunks_than_k_is_noted_and_scored():
    from chunkscope.retrieval.questions import Question, QuestionSet

    t = DOC.text
    q = QuestionSet([Question("fees office card", [(t.index("Mooring"), t.index("card.") + 5)])], "file")
    res = evaluate(t, [Chunking("two", [(0, 200), (200, len(t))], [40, 60])], q, Config(k=5))
    c = res.chunkings[0]
    assert "fewer than k = 5" in c.notes[0]
    assert c.at_k["recall"] == 1.0 and len(c.per_question[0]["retrieved"]) == 2


# ----------------------------------------------------------------------------- self-test

def test_self_test_is_a_deterministic_proxy_that_never_copies_the_sentence():
    from chunkscope.ingest import load_document
    from chunkscope.retrieval.selftest import self_test

    doc = load_document(str(TINY))
    a, b = self_test(doc, 5), self_test(doc, 5)
    assert a.source == "self-test" and a.info["proxy"] is True
    assert [q.to_dict() for q in a.questions] == [q.to_dict() for q in b.questions]
    assert 1 <= len(a.questions) <= 5
    for q in a.questions:
        assert q.evidence and all(0 <= s < e <= len(doc.text) for s, e in q.evidence)
        sentence = " ".join(doc.text[s:e] for s, e in q.evidence)
        assert q.text != sentence and len(q.text.split()) <= 6
        assert all(w in sentence.lower() for w in q.text.split())  # the terms come from the evidence
    # a two-excerpt question exists (every third question, when the passage has a next sentence)
    assert any(len(q.evidence) == 2 for q in a.questions)


ZH_FACTS = ["哈尔滨工业大学的图书馆保存所有学位论文的纸质副本和电子副本", "博士学位论文的摘要一般为一千到两千字并且必须与英文摘要完全一致",
            "关键词不超过五个并且每个关键词之间用分号分隔以便文献标引工作", "论文中的图表应当有中英文双语题注并且放在图表的下方或者上方",
            "参考文献按照在正文中出现的顺序编号并且在文末统一列出完整信息", "学位论文的封面包括题目作者姓名导师姓名以及答辩日期等基本信息"]


def test_chinese_text_is_read_in_character_pairs_and_the_self_test_asks_about_it():
    from chunkscope.ingest import load_bytes
    from chunkscope.retrieval.retrievers import QueryTokens, bm25_rank, cjk_split, tokenize
    from chunkscope.retrieval.selftest import _enough_words, _width, self_test

    assert cjk_split("数据控制者ai") == ["数据", "据控", "控制", "制者", "ai"] and cjk_split("第") == ["第"]
    english = "The controller keeps every signed contract, and it deletes it after ten years."
    assert tokenize([english], set()) == [[w for w in english.lower().replace(",", "").rstrip(".").split()
                                           if len(w) > 1]]  # words as before: no pairs of Latin letters
    assert _width(english) == len(english) and _enough_words(english) == (len(english.split()) >= 8)
    text = "# 论文规范\n\n" + "\n\n".join(f"## 第{i}节\n\n" + "。".join(ZH_FACTS[(i + k) % 6] for k in range(3)) + "。"
                                     for i in range(6)) + "\n"
    doc = load_bytes(text.encode(), "zh.md")
    qs = self_test(doc, 6)
    assert len(qs.questions) == 6 and not qs.problems
    for q in qs.questions:  # the query: character pairs of its evidence sentence
        evidence = "".join(doc.text[s:e] for s, e in q.evidence)
        assert len(q.text.split()) >= 2 and all(len(w) == 2 and w in evidence for w in q.text.split())
    # BM25 ranks the section that holds a sentence's pairs above the others (it saw one word per clause before)
    sections = [(m.start(), m.end()) for m in __import__("re").finditer(r"## [^#]+", doc.text)]
    ranked = bm25_rank([doc.text[a:b] for a, b in sections], QueryTokens(["学位 论文 摘要 英文 一致"], "zh"))[0][0]
    holds = [k for k, (a, b) in enumerate(sections) if ZH_FACTS[1] in doc.text[a:b]]
    assert set(ranked[:len(holds)].tolist()) == set(holds)


# ----------------------------------------------------------------------------- generation

def test_self_test_makes_the_number_asked_or_says_how_many_it_made():
    from chunkscope.ingest import load_document
    from chunkscope.retrieval.selftest import self_test

    doc = load_document(str(Path(__file__).resolve().parent.parent / "assets" / "sample_policy.md"))
    for n in (5, 16, 20):  # picks taken by a two-sentence question, or without two terms, are replaced
        qs = self_test(doc, n)
        assert len(qs.questions) == n and not qs.problems
        assert len({tuple(q.evidence[0]) for q in qs.questions}) == n  # no sentence used twice
    assert any(len(q.evidence) == 2 for q in self_test(doc, 20).questions)
    cands = self_test(doc, 5).info["candidates"]
    qs = self_test(doc, cands + 6)  # more than the candidates: every one made a question, and the message says so
    assert len(qs.questions) == cands
    assert qs.problems == [f"self-test: only {cands} question(s) could be made from the document's {cands} "
                           f"candidate sentence(s), fewer than the {cands + 6} asked"]


def test_generated_questions_are_verified_counted_and_cached(tmp_path, monkeypatch):
    from chunkscope.llm import LLMClient, LLMSettings
    from chunkscope.retrieval.generate import PROMPT_VERSION, generate

    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    answer = "\n".join([
        json.dumps({"question": "Where is the rescue boat?", "quotes": ["The rescue boat is moored at the northern quay"]}),
        json.dumps({"question": "Invented?", "quotes": ["The harbour has a helicopter landing pad on the roof."]}),
        json.dumps({"question": "Two quotes?", "quotes": ["Fires, barbecues and fireworks are forbidden",
                                                           "Life jackets are mandatory for children"]}),
    ])
    with ScriptedLLMServer() as srv:
        srv.push(reply(answer))
        client = LLMClient(LLMSettings(base_url=srv.base_url, api_key="sk-test", model="m", timeout=5))
        qs = generate(DOC.text, DOC.sha256, 3, client)
        assert len(srv.chat_requests) == 1
        prompt = srv.chat_requests[0]["json"]["messages"][0]["content"]
        assert "Harbour rules" in prompt and "3 questions" in prompt
        assert [q.text for q in qs.questions] == ["Where is the rescue boat?", "Two quotes?"]
        assert len(qs.questions[1].evidence) == 2
        assert qs.info["discarded"] == 1 and "quote not in the document" in qs.problems[0]
        assert qs.info["prompt_version"] == PROMPT_VERSION and not qs.info["cached"]
        again = generate(DOC.text, DOC.sha256, 3, client)
        assert len(srv.chat_requests) == 1 and again.info["cached"]  # cached: no second request
        assert [q.to_dict() for q in again.questions] == [q.to_dict() for q in qs.questions]


def test_generation_without_endpoint_or_with_a_failing_one(tmp_path, monkeypatch):
    from llm_server import error

    from chunkscope.llm import LLMClient, LLMError, LLMSettings
    from chunkscope.retrieval.generate import generate

    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(LLMError, match="no LLM endpoint configured"):
        generate(DOC.text, DOC.sha256, 3, None)
    with ScriptedLLMServer() as srv:
        srv.push(error(401))
        client = LLMClient(LLMSettings(base_url=srv.base_url, api_key="sk-test", model="m", timeout=5, max_retries=0))
        with pytest.raises(LLMError, match="401"):
            generate(DOC.text, DOC.sha256, 3, client)


# ----------------------------------------------------------------------------- CLI and analysis

def test_cli_json_schema(tmp_path, capsys):
    from chunkscope.cli import main

    out = tmp_path / "r.json"
    rc = main(["retrieval", str(TINY), "--self-test", "4", "--chunkers", "fixed-512,sentence-5,whole",
               "--param", "fixed-512.size=30", "--param", "fixed-512.overlap=0", "--k", "3", "--budget", "60",
               "--json", str(out)])
    assert rc == 0
    d = json.loads(out.read_text())
    assert d["schema"] == "chunkscope.retrieval/1"
    assert (d["retriever"], d["k"], d["budget"]) == ("bm25", 3, 60)
    assert d["questions"] and all(set(q) >= {"question", "evidence"} for q in d["questions"])
    assert sorted(c["id"] for c in d["chunkings"]) == ["fixed-512", "sentence-5", "whole"]
    for c in d["chunkings"]:
        for block in ("at_k", "at_budget"):
            assert set(c[block]) >= {"recall", "recall_std", "precision", "iou", "precision_omega", "full_recall_share"}
        assert c["at_budget"]["precision_omega"] is None  # Ω is reported at k only
        assert len(c["per_question"]) == len(d["questions"])
        for pq in c["per_question"]:
            assert set(pq) >= {"retrieved", "recall", "precision", "iou"}
            assert all(len(r) == 3 for r in pq["retrieved"]) and len(pq["retrieved"]) <= 3
    printed = capsys.readouterr().out
    assert "SELF-TEST" in printed
    # the table has a legend: sort key, every column, and which precision Ω it shows
    head = next(line for line in printed.splitlines() if line.startswith("chunking "))
    assert head.split()[-1] == "PΩ@3" and "R@60" in head and "full" in head
    assert "sorted by R@60, best first" in printed
    assert "@60: chunks in rank order up to 60 tokens" in printed and "@3: the top 3 chunks" in printed
    assert "full: share of questions with all their evidence within 60 tokens" in printed
    assert "PΩ@3: precision Ω (precision_omega)" in printed and "precision_omega_ideal" in printed


@pytest.mark.parametrize("argv,msg", [
    (["--questions", "NOFILE.csv"], "cannot read the questions file"),
    ([], "give a question source"),
    (["--self-test", "3", "--k", "0"], "k must be >= 1"),
    (["--self-test", "3", "--questions", "x.csv"], "give one question source"),
])
def test_cli_bad_input_is_one_line_exit_2(argv, msg, capsys):
    from chunkscope.cli import main

    rc = main(["retrieval", str(TINY), "--chunkers", "whole", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and msg in err[0]


def test_analyze_adds_the_retrieval_block_and_the_weight_joins_the_score(tmp_path):
    from chunkscope.analysis import Settings, analyze, rescore
    from chunkscope.analysis.retrieval import RetrievalRequest
    from chunkscope.ingest import load_document
    from chunkscope.report import Report
    from chunkscope.retrieval.selftest import self_test

    doc = load_document(str(TINY))
    s = Settings(chunkers=("sentence-5", "whole"), candidates=("sentence-5", "whole"), coref="none")
    plain = analyze(doc, s)
    assert plain.retrieval is None and "retrieval" not in plain.to_dict()
    rep = analyze(doc, s, retrieval=RetrievalRequest(self_test(doc, 4), Config(k=1, budget=40)))
    d = rep.to_dict()
    assert d["schema"] == "chunkscope.report/1" and d["retrieval"]["schema"] == "chunkscope.retrieval/1"
    assert Report.from_dict(json.loads(json.dumps(d))).retrieval == d["retrieval"]
    from chunkscope.analysis.uncertainty import retrieval_is_proxy  # a self-test block reads as a proxy: it breaks
    assert retrieval_is_proxy(rep) and retrieval_is_proxy(Report.from_dict(d))  # no tie unless asked
    recall = {c["id"]: c["at_budget"]["recall"] for c in d["retrieval"]["chunkings"]}
    base = {c.id: c.score for c in rep.chunkings}
    assert rep.settings["retrieval_weight"] == 0.0  # off by default: scores are the metric means
    rescore(rep, retrieval_weight=2.0)
    for c in rep.chunkings:
        vals = [v for v in c.metrics.values() if v is not None]
        assert c.score == pytest.approx((sum(vals) + 2.0 * recall[c.id]) / (len(vals) + 2.0))
    assert "budgeted retrieval recall with weight 2" in rep.explanation
    rescore(rep, retrieval_weight=0.0)
    assert {c.id: c.score for c in rep.chunkings} == base and "retrieval recall" not in rep.explanation
    with pytest.raises(ValueError, match="retrieval weight"):
        Settings(retrieval_weight=-1).validate()


@pytest.mark.corpus
def test_chroma_questions_file_reads_as_is(corpus_dir):
    from chunkscope.retrieval.questions import read_questions_file

    chroma = corpus_dir.parent / "chroma-general"
    if not chroma.is_dir():
        pytest.skip("no chroma-general corpus")
    text = (chroma / "corpora" / "state_of_the_union.md").read_text(encoding="utf-8")
    qs = read_questions_file(chroma / "questions_df.csv", text, "state_of_the_union")
    assert len(qs.questions) == 76 and qs.skipped_other == 396 and not qs.problems


def test_one_pass_walk_equals_the_definitions():
    """``walk`` (one pass down the ranking) gives exactly ``score`` of the top k and of
    ``take_budget`` for every k and budget, on random overlapping chunkings."""
    import random

    rnd = random.Random(7)
    for _ in range(200):
        n = rnd.randint(1, 12)
        spans = []
        for _ in range(n):
            a = rnd.randint(0, 180)
            spans.append((a, a + rnd.randint(1, 40)))
        tokens = [max(1, (e - s) // 3) for s, e in spans]
        ev = [(a, a + rnd.randint(1, 25)) for a in rnd.sample(range(0, 200), rnd.randint(1, 3))]
        order = rnd.sample(range(n), n)
        lead = lambda i, m, spans=spans: min(spans[i][1] - spans[i][0], 3 * m)
        ks, budgets = [1, 3, 5, 10], [5, 17, 40]
        at_k, at_b = RM.walk(order, spans, tokens, ev, ks, budgets, lead)
        for k in ks:
            s = RM.score([spans[i] for i in order[:k]], ev)
            assert at_k[k] == pytest.approx((s.recall, s.precision, s.iou))
        for b in budgets:
            s = RM.score([(x, y) for _, x, y in RM.take_budget(order, spans, tokens, b, lead)], ev)
            assert at_b[b] == pytest.approx((s.recall, s.precision, s.iou))
