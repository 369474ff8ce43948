"""analyze(): orchestration, adaptive selection, explanation, report schema."""

from __future__ import annotations

import json

import pytest

from chunkscope.analysis import STAGES, Resources, Settings, analyze, rescore
from chunkscope.ingest import load_bytes
from chunkscope.report import METRICS, SCHEMA, ChunkingResult, ChunkRow, Report

DOC_MD = "\n\n".join(
    [
        "# Retention policy",
        "The archive keeps every invoice for ten years. It is checked by the finance team each spring, "
        "and they report any gap to the auditors. " * 6,
        "## Scope",
        "This policy covers invoices, contracts and payroll records. Each record has an owner; "
        "she or he answers for its retention. " * 8,
        "| record | years |\n|---|---|\n| invoice | 10 |\n| contract | 6 |\n| payroll | 5 |",
        "## Exceptions",
        "Records under legal hold are kept until the hold ends. Legal counsel decides when it ends. " * 10,
    ]
)
FAST = ("recursive-1100", "recursive-600", "recursive-600+pp", "whole", "fixed-512", "page")


@pytest.fixture(scope="module")
def doc():
    return load_bytes(DOC_MD.encode(), "policy.md")


@pytest.fixture(scope="module")
def resources():
    return Resources()


@pytest.fixture(scope="module")
def report(doc, resources):
    seen = []
    s = Settings(chunkers=FAST, candidates=("recursive-1100", "recursive-600+pp", "whole"), coref="heuristic")
    r = analyze(doc, s, resources=resources, progress=lambda st, f, m: seen.append(st))
    r.settings["_stages_seen"] = sorted(set(seen))
    return r


def test_every_requested_chunking_is_reported(report):
    assert [c.id for c in report.chunkings] == list(FAST)
    page = report.get("page")
    assert page.status == "skipped" and "page" in page.reason.lower()
    for c in report.chunkings:
        if c.ok:
            assert c.chunks and c.audit
            assert c.seconds > 0


def test_scores_are_weighted_means_and_winner_is_best_candidate(report):
    for c in report.chunkings:
        if not c.ok:
            assert c.score is None
            continue
        vals = [v for v in c.metrics.values() if v is not None]
        assert c.score == pytest.approx(sum(vals) / len(vals))
    cands = [c for c in report.chunkings if c.candidate and c.ok]
    best = max(cands, key=lambda c: (c.score, -len(c.chunks)))
    assert report.winner == best.id
    assert report.winner in report.explanation


def test_progress_covers_all_stages(report):
    assert set(STAGES) <= set(report.settings["_stages_seen"])


def test_metrics_are_computed_with_diagnostics(report):
    c = report.get("fixed-512")
    assert set(c.metrics) == set(METRICS)
    for m in ("SC", "BI", "ICC", "DCC"):
        assert c.metrics[m] is not None and 0 <= c.metrics[m] <= 1, m
    assert isinstance(c.diagnostics["BI"].broken, list)
    # the heuristic coref found pronouns (it, they, she, he) in this English text
    assert report.coref["backend"] == "heuristic"
    assert report.get("whole").metrics["RC"] == 1.0


def test_report_json_round_trip(report, tmp_path):
    path = tmp_path / "r.json"
    report.save(path)
    data = json.loads(path.read_text())
    assert data["schema"] == SCHEMA
    assert set(data) >= {"schema", "document", "settings", "chunkings", "winner", "timings"}
    assert set(data["document"]) >= {"name", "sha256", "chars", "tokens", "language", "pages", "blocks"}
    ch = data["chunkings"][0]
    assert set(ch) >= {"id", "label", "params", "candidate", "status", "reason", "chunks", "metrics", "score", "seconds"}
    again = Report.load(path)
    assert again.to_dict() == report.to_dict()


def test_bad_param_fails_one_chunking_only(doc, resources):
    s = Settings(chunkers=("recursive-1100", "recursive-600"), params={"recursive-600": {"chunk_size": -3}},
                 candidates=("recursive-1100", "recursive-600"), coref="none")
    r = analyze(doc, s, resources=resources)
    assert r.get("recursive-600").status == "failed"
    assert "chunk_size" in r.get("recursive-600").reason
    assert r.get("recursive-1100").ok and r.winner == "recursive-1100"
    assert r.get("recursive-1100").metrics["RC"] is None
    assert "disabled" in r.get("recursive-1100").metric_reasons["RC"]


def test_missing_embedder_leaves_icc_dcc_none_with_reason(doc):
    s = Settings(chunkers=("recursive-600",), candidates=("recursive-600",), coref="none",
                 embedder="/nonexistent/model-dir")
    r = analyze(doc, s)
    c = r.get("recursive-600")
    assert c.metrics["ICC"] is None and c.metrics["DCC"] is None
    assert "embeddings unavailable" in c.metric_reasons["ICC"]
    assert any("embeddings unavailable" in w for w in r.warnings)
    assert c.metrics["SC"] is not None


def test_settings_validation():
    with pytest.raises(ValueError, match="size bounds"):
        Settings(min_tokens=500, max_tokens=100).validate()
    with pytest.raises(ValueError, match="unknown metric"):
        Settings(weights={"XYZ": 1}).validate()
    with pytest.raises(ValueError, match="unknown setting"):
        Settings.from_dict({"chunk_size": 3})
    # a hand-written config: one id as a string, a weight that is not a number
    assert Settings.from_dict({"chunkers": "whole, fixed-512", "candidates": "whole"}).chunkers == ("whole", "fixed-512")
    with pytest.raises(ValueError, match="weight RC must be a number"):
        Settings.from_dict({"weights": {"RC": "x"}})
    s = Settings.from_dict({"weights": {"SC": 2}, "chunkers": ["whole"]})
    assert s.weights["SC"] == 2 and s.weights["RC"] == 1 and s.chunkers == ("whole",)
    assert Settings.from_dict(s.to_dict()) == s


@pytest.mark.parametrize("table, needle", [
    ({"max_tokens": "big"}, "max_tokens must be a whole number (got 'big')"),
    ({"min_tokens": True}, "min_tokens must be a whole number (got True)"),
    ({"max_tokens": 900.7}, "max_tokens must be a whole number (got 900.7)"),
    ({"coref": 1}, "coref must be a string (got 1)"),
    ({"embedder": ["a"]}, "embedder must be a string"),
    ({"chunkers": 3}, "chunkers must be a list of chunking ids (got 3)"),
    ({"params": {"fixed-512": 5}}, "params must be a table"),
    ({"weights": {"BI": True}}, "weight BI must be a number (got True)"),
    ({"retrieval_weight": True}, "retrieval_weight must be a number (got True)"),
])
def test_a_settings_file_with_a_value_of_the_wrong_type_names_the_setting(table, needle):
    """A hand-written file's max_tokens = "big" failed as "'<' not supported between instances of 'str' and 'int'",
    and min_tokens = true was taken for 1 (and written back as true in the report)."""
    with pytest.raises(ValueError) as e:
        Settings.from_dict(table)
    assert needle in str(e.value)
    assert Settings.from_dict({"max_tokens": 900.0}).max_tokens == 900  # a whole number written as a float


def test_a_settings_file_of_another_schema_is_refused(tmp_path):
    from chunkscope.analysis.settings import CONFIG_SCHEMA

    path = tmp_path / "c.toml"
    path.write_text('schema = "chunkscope.config/9"\nmax_tokens = 900\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"c\.toml: schema 'chunkscope\.config/9': this version of ChunkScope reads"):
        Settings.from_file(path)
    path.write_text(f'schema = "{CONFIG_SCHEMA}"\nmax_tokens = 900\n', encoding="utf-8")
    assert Settings.from_file(path).max_tokens == 900


# ---------------------------------------------------------------- selection logic on synthetic reports

def _c(cid, metrics, n_chunks=3, candidate=True, status="ok"):
    return ChunkingResult(
        id=cid, label=cid, params={}, candidate=candidate, status=status,
        chunks=[ChunkRow(i * 10, i * 10 + 10, 200) for i in range(n_chunks)],
        metrics={m: metrics.get(m) for m in METRICS},
    )


def _report(chunkings, candidates):
    return Report(document={"name": "x", "sha256": "0" * 64}, settings={"candidates": list(candidates)},
                  chunkings=chunkings, winner=None, explanation="", timings={})


def test_a_tie_lists_the_candidate_first():
    """A chunking that cannot win is not listed above the winner it ties with (the tour: recursive-1100 sat above
    the winner recursive-1100+pp, same chunks, same score, no marker)."""
    base, pp = _c("recursive-1100", {"SC": 1.0, "BI": 0.9}), _c("recursive-1100+pp", {"SC": 1.0, "BI": 0.9})
    r = _report([base, pp], ["recursive-1100+pp"])
    rescore(r)
    assert base.score == pp.score and r.winner == "recursive-1100+pp"
    assert [c.id for c in r.ranked] == ["recursive-1100+pp", "recursive-1100"]


def test_weights_rerank_without_recomputation():
    a = _c("a", {"SC": 1.0, "BI": 1.0, "ICC": 0.2})
    b = _c("b", {"SC": 0.5, "BI": 0.6, "ICC": 0.9})
    r = _report([a, b], ["a", "b"])
    rescore(r)
    assert r.winner == "a"
    rescore(r, weights={"SC": 0, "BI": 0, "ICC": 1, "RC": 1, "DCC": 1})
    assert r.winner == "b"
    assert "ICC 0.900 vs 0.200" in r.explanation


def test_a_small_lead_is_written_with_the_decimals_that_show_it():
    """refman.pdf's explanation said "leads on ... SC 0.996 vs 0.996"."""
    from chunkscope.analysis.wording import apart

    a = _c("a", {"SC": 0.9962, "BI": 1.0, "ICC": 0.5})
    b = _c("b", {"SC": 0.9956, "BI": 0.9, "ICC": 0.5})
    r = _report([a, b], ["a", "b"])
    rescore(r)
    assert r.winner == "a" and "SC 0.9962 vs 0.9956" in r.explanation and "BI 1.000 vs 0.900" in r.explanation
    assert apart(0.5, 0.25) == ("0.500", "0.250", "+0.250") and apart(0.99621, 0.99619)[0] == "0.99621"


def test_chunkings_with_the_same_chunks_are_named_on_the_leaderboard():
    """R's manuals: recursive-1100+pp and recursive-1100 gave the same rows, with nothing to say the "+pp"
    post-processing had changed nothing."""
    from chunkscope.cli.analyze import leaderboard_lines
    from chunkscope.present.html_report import leaderboard_rows

    base, pp = _c("recursive-1100", {"SC": 1.0, "BI": 0.9}), _c("recursive-1100+pp", {"SC": 1.0, "BI": 0.9})
    other = _c("fixed-512", {"SC": 0.5, "BI": 0.5}, n_chunks=4)
    r = _report([base, pp, other], ["recursive-1100+pp"])
    rescore(r)
    assert r.same_chunks() == {"recursive-1100": "recursive-1100+pp"}
    notes = {row["chunking"]: row["note"] for row in leaderboard_rows(r)}
    assert notes == {"recursive-1100+pp": "", "recursive-1100": "the same chunks as recursive-1100+pp", "fixed-512": ""}
    assert "recursive-1100: the same chunks as recursive-1100+pp" in leaderboard_lines(r)


def test_a_margin_shown_beside_two_scores_adds_up_with_them():
    """R-data.pdf's card read "0.886 … +0.008 vs page+pp" with page+pp at 0.879 on the leaderboard."""
    from chunkscope.analysis.wording import margin_text

    assert margin_text(0.8864 - 0.8786, signed=True, scores=(0.8864, 0.8786)) == "+0.0078"
    assert margin_text(0.8864 - 0.8736, scores=(0.8864, 0.8736)) == "0.0128"  # shown 0.886 vs 0.874
    assert margin_text(0.8864 - 0.8734, scores=(0.8864, 0.8734)) == "0.013"  # shown 0.886 vs 0.873: adds up
    assert margin_text(0.8864 - 0.8786) == "0.008"  # without the scores beside it: three decimals
    assert margin_text(0.00023, scores=(0.50023, 0.5)) == "0.00023"
    assert margin_text(0.00004) == "0.000040" and margin_text(-0.00004, signed=True) == "-0.000040"  # no "4e-05"


def test_ties_break_by_fewer_chunks_then_id():
    r = _report([_c("zeta", {"SC": 1.0}, n_chunks=2), _c("alpha", {"SC": 1.0}, n_chunks=5),
                 _c("beta", {"SC": 1.0}, n_chunks=2)], ["zeta", "alpha", "beta"])
    rescore(r)
    assert r.winner == "beta"
    assert "tie" in r.flags


def test_degenerate_wins_are_flagged():
    r = _report([_c("whole", {"SC": 1.0, "BI": 1.0, "RC": 1.0}, n_chunks=1),
                 _c("rec", {"SC": 0.9, "BI": 0.9, "RC": 0.9, "ICC": 0.5, "DCC": 0.8})], ["whole", "rec"])
    rescore(r)
    assert r.winner == "whole"
    assert "single-chunk" in r.flags and "metrics-missing" in r.flags
    assert "single chunk" in r.explanation


def test_no_candidate_means_no_winner_with_reason():
    r = _report([_c("llm-regex+pp", {}, status="skipped"), _c("rec", {"SC": 1.0}, candidate=False)],
                ["llm-regex+pp"])
    r.chunkings[0].reason = "no LLM endpoint configured"
    rescore(r)
    assert r.winner is None and "no-winner" in r.flags
    assert "no LLM endpoint configured" in r.explanation


def test_non_candidate_that_scores_higher_is_mentioned():
    r = _report([_c("a", {"SC": 0.8}), _c("b", {"SC": 1.0}, candidate=False)], ["a"])
    rescore(r)
    assert r.winner == "a" and "Non-candidate b" in r.explanation


# ---------------------------------------------------------------- review fixes: CLI usage errors, warnings

def test_non_finite_weights_are_refused():
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite"):
            Settings(weights={"RC": bad}).validate()


@pytest.mark.parametrize("flags, needle", [
    (["--chunkers", "nope"], "--chunkers: unknown chunker 'nope'"),
    (["--candidates", "nope"], "--candidates: unknown chunker 'nope'"),
    (["--param", "nope.x=1"], "params): unknown chunker 'nope'"),
    (["--param", "recursive-600.nope=1"], "unknown parameter 'nope'"),
    (["--param", "recursive-600+pp.chunk_size=abc"], "chunk_size: expected int"),
    (["--param", "fixed-512.size=300"], "'fixed-512' is not run"),
    (["--weights", "RC=nan"], "finite"),
    (["--mentions", "/nonexistent/mentions.json"], "--mentions: mentions file not found"),
    (["--json", "/nonexistent-dir/report.json"], "--json: directory /nonexistent-dir does not exist"),
])
def test_cli_analyze_usage_errors_exit_2_before_any_work(flags, needle, tmp_path, capsys, monkeypatch):
    import chunkscope.analysis
    from chunkscope.cli import main

    def boom(*a, **k):
        raise AssertionError("analyze() must not run for a usage error")

    monkeypatch.setattr(chunkscope.analysis, "analyze", boom)
    md = tmp_path / "p.md"
    md.write_text(DOC_MD, encoding="utf-8")
    rc = main(["analyze", str(md), "--quiet", "--coref", "heuristic", "--chunkers", "whole", *flags])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_cli_analyze_refuses_unusable_mentions_file(tmp_path, capsys):
    from chunkscope.cli import main

    md = tmp_path / "p.md"
    md.write_text(DOC_MD, encoding="utf-8")
    m = tmp_path / "m.json"
    m.write_text("{}", encoding="utf-8")
    assert main(["analyze", str(md), "--quiet", "--chunkers", "whole", "--mentions", str(m)]) == 2
    assert "--mentions: m.json: expected a list of pairs" in capsys.readouterr().err


def test_coreference_warnings_reach_the_report(doc, resources, tmp_path):
    import re

    from chunkscope.coref import Pair
    from chunkscope.coref.precomputed import write_pairs_json
    from chunkscope.document import Span

    m = tmp_path / "m.json"
    it = re.search(r"\b(it|its|they|their|them)\b", doc.text, re.I)  # a real pronoun of the document
    assert it is not None
    pair = Pair(Span(0, 5), Span(it.start(), it.end()))
    write_pairs_json([pair, pair], m)
    s = Settings(chunkers=("whole",), candidates=("whole",), coref="precomputed", mentions=str(m))
    r = analyze(doc, s, resources=resources)
    assert any("duplicate pair" in w for w in r.warnings)
    assert r.coref.get("warnings")


def test_shared_resources_keep_each_sessions_llm_settings_apart(monkeypatch):
    from chunkscope.llm import LLMSettings

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    shared = Resources()
    sentinel = object()
    shared._embedder = sentinel  # as if loaded: views must share it, never load their own
    a = shared.with_llm(LLMSettings(base_url="http://a.example/v1", api_key="key-a"))
    b = shared.with_llm(LLMSettings())
    assert a.embedder() is sentinel and b.embedder() is sentinel and a.mode == shared.mode
    assert a.llm() is not None and a.llm().settings.api_key == "key-a"
    assert b.llm() is None  # session b configured nothing: it must not borrow a's endpoint or key
    assert shared._llm_settings is None and shared._llm is None


def test_exact_mode_truncation_warning_reaches_the_report(doc):
    """DESIGN 7: in exact mode the model truncates long texts; the report must say so."""
    s = Settings(chunkers=("whole", "recursive-600"), candidates=("whole",), coref="none", embedding_mode="exact")
    r = analyze(doc, s, resources=Resources(mode="exact"))
    assert any("truncated" in w for w in r.warnings)
    assert r.embedder.get("warnings") and r.embedder["stats"]["spans"] > 0


def test_a_report_counts_its_own_embedding_work(resources):
    """The model's counters add up over a process; a report gives its analysis's share (a corpus worker's reports
    claimed the embedding time of every document it had analysed before)."""
    d = load_bytes(("## Ledger\n\n" + "The ledger lists every cheque written in the quarter. It is kept by the clerk.\n\n"
                    * 60).encode(), "ledger.md")
    s = Settings(chunkers=("recursive-600", "whole"), candidates=("whole",), coref="none")
    first = analyze(d, s, resources=resources).embedder["stats"]
    again = analyze(d, s, resources=resources).embedder["stats"]
    assert first["texts_embedded"] > 0 and first["seconds"] > 0
    assert again["texts_embedded"] == 0 and again["model_calls"] == 0  # all from the caches, nothing added up
    assert again["spans"] == first["spans"] > 0 and again["units"] == first["units"] > 0  # its own spans, once


def test_no_winner_says_which_weighted_metrics_are_missing():
    c = _c("a", {"RC": None, "ICC": 0.5, "DCC": 0.5, "BI": 1.0, "SC": 1.0})
    c.metric_reasons["RC"] = "coreference disabled (--coref none)"
    r = _report([c], candidates=("a",))
    rescore(r, {"RC": 1.0, "ICC": 0, "DCC": 0, "BI": 0, "SC": 0}, ("a",))
    assert r.winner is None and "no-winner" in r.flags
    assert "RC: coreference disabled" in r.explanation


def test_same_text_with_other_blocks_is_not_served_from_the_cache(doc, resources):
    """Composed units and cached results depend on the blocks, not only on the text."""
    from dataclasses import replace as dc_replace

    from chunkscope.document import Block

    one_block = dc_replace(doc, blocks=[Block(0, len(doc.text), "paragraph")], _sha=None)
    assert one_block.sha256 == doc.sha256 and one_block.fingerprint != doc.fingerprint
    s = Settings(chunkers=("recursive-600",), candidates=("recursive-600",), coref="none")
    a = analyze(doc, s, resources=resources).get("recursive-600")
    b = analyze(one_block, s, resources=resources).get("recursive-600")
    assert a.metrics["BI"] is not None and b.metrics["BI"] == 1.0  # one block cannot be broken
    assert b.metrics["ICC"] is None  # no chunk spans two gold blocks any more
    # the composed-mode units are built per structure: the other block tiling gets its own
    se_doc, se_one = resources.span_embedder(doc), resources.span_embedder(one_block)
    assert se_doc is not se_one and se_one.split_points == []


def test_report_json_keeps_number_arrays_on_one_line(report):
    """A 2,415-page PDF's report was 162 MB with one number per line (its chunks' page boxes); 93 MB so."""
    from chunkscope.report import Report, dumps

    text = report.to_json()
    assert Report.from_dict(json.loads(text)).to_dict() == report.to_dict()
    sample = {"boxes": [[1, 111.4, 194.2, 501.1, 216.5], [2, -3.5, 1e-05, True, None]], "ids": ["a", "b"],
              "empty": [], "nested": {"span": [0, 1108]}}
    out = dumps(sample)
    assert json.loads(out) == sample
    assert "[1, 111.4, 194.2, 501.1, 216.5]" in out and "[2, -3.5, 1e-05, true, null]" in out
    assert '"span": [0, 1108]' in out and '"ids": [\n' in out  # strings stay one per line
    assert len(out) < len(json.dumps(sample, indent=1))


def test_progress_says_what_runs_not_a_skipped_chunking(doc, resources, monkeypatch):
    # without an LLM endpoint llm-regex+pp is skipped with the structure stage: the progress text said
    # "structure: llm-regex+pp" while the other chunkings were scored
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    seen: list[tuple[str, str]] = []
    s = Settings(chunkers=("recursive-1100", "whole", "llm-regex+pp"), candidates=("recursive-1100", "whole"),
                 coref="none")
    r = analyze(doc, s, resources=resources, progress=lambda st, f, m: seen.append((st, m)))
    assert r.get("llm-regex+pp").status == "skipped"
    structure = [m for st, m in seen if st == "structure"]
    i = structure.index("llm-regex+pp")
    assert structure[i + 1:i + 3] == ["llm-regex+pp skipped (no LLM endpoint configured)", "SC and BI of 2 chunking(s)"]
    # the line that stays up while the embedding pass runs (the app shows the last one) names it too
    assert structure[-1] == "2 chunkings ok; llm-regex+pp skipped (no LLM endpoint configured)"


def test_resources_for_another_model_are_refused(doc):
    """``analyze`` never swaps the resources it is given for others: a mismatch is the caller's error."""
    with pytest.raises(ValueError, match="do not run the settings' embedding model"):
        analyze(doc, Settings(chunkers=("whole",), candidates=("whole",), coref="none"),
                resources=Resources(mode="exact"))


def test_timings_are_disjoint_stages_that_add_up_to_the_total():
    from chunkscope.analysis.timings import TIMING_KEYS, Timings

    t = Timings()
    t.add("chunk", 2.0, model_seconds=0.5)
    t.add("metrics", 1.0, model_seconds=3.0)  # never negative
    t.add("embed", 0.5)
    rec = t.finish(5.0)
    assert tuple(rec) == TIMING_KEYS
    assert rec == {"chunk": 1.5, "coref": 0.0, "embed": 0.5, "metrics": 0.0, "other": 3.0, "total": 5.0}


def test_background_work_hands_its_exception_to_the_waiting_thread():
    from chunkscope.analysis.background import in_thread, wait_for

    def boom() -> None:
        raise KeyboardInterrupt  # a Ctrl-C handed over by a model library's thread

    checks: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        wait_for(in_thread(boom, "test-boom"), lambda: checks.append(1), poll=0.01)
    assert wait_for(in_thread(lambda: 42, "test-ok"), lambda: None) == 42
