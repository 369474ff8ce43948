"""Tune: one configuration through analyze's code path, cache, sweeps, frontier, variants, configs."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from chunkscope import tune
from chunkscope.analysis import Resources, Settings, analyze
from chunkscope.analysis.settings import parse_config
from chunkscope.chunkers import registry
from chunkscope.chunkers.base import ParamError
from chunkscope.cli import main
from chunkscope.ingest import load_document

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "assets" / "sample_policy.md"
FAST = Settings(chunkers=("recursive-600",), candidates=("recursive-600",), coref="none")


@pytest.fixture(scope="module")
def doc():
    return load_document(str(POLICY))


@pytest.fixture(scope="module")
def res():
    return Resources()


def chunks_of(c):
    return [(x.start, x.end, x.tokens) for x in c.chunks]


# ---------------------------------------------------------------- one configuration, cache

def test_sweep_rows_equal_individual_analyses(doc, res):
    values = [150, 350, 600]
    rows = tune.sweep(doc, "recursive-1100", "chunk_size", values, FAST, res, cache=tune.TuneCache())
    assert [r["value"] for r in rows] == values
    for v, row in zip(values, rows):
        s = FAST.with_(chunkers=("recursive-1100",), candidates=("recursive-1100",),
                       params={"recursive-1100": {"chunk_size": v}})
        c = analyze(doc, s, resources=res).get("recursive-1100")
        assert row["chunks"] == len(c.chunks)
        assert row["tokens"] == sum(x.tokens for x in c.chunks)
        assert row["metrics"] == c.metrics
        assert row["score"] == c.score
    assert set(rows[0]) == {"value", "chunks", "tokens", "metrics", "score"}


def test_cache_hit_never_rechunks(doc, res, monkeypatch):
    calls = []
    real = tune.chunk_one

    def counting(*a, **k):
        calls.append(a[1:3])
        return real(*a, **k)

    monkeypatch.setattr(tune, "chunk_one", counting)
    cache = tune.TuneCache()
    a = tune.score_chunking(doc, "recursive-600", {"chunk_size": 450}, FAST, res, cache=cache)
    b = tune.score_chunking(doc, "recursive-600", {"chunk_size": "450"}, FAST, res, cache=cache)  # same, as text
    c = tune.score_chunking(doc, "recursive-600", {"chunk_size": 450, "chunk_overlap": 0}, FAST, res, cache=cache)
    assert len(calls) == 1 and cache.hits == 2 and cache.misses == 1
    assert chunks_of(a) == chunks_of(b) == chunks_of(c) and a.metrics == b.metrics
    # weights only re-weight: still no re-chunking, but the score follows them
    w = tune.score_chunking(doc, "recursive-600", {"chunk_size": 450}, FAST.with_(weights={"RC": 0, "ICC": 0, "DCC": 0,
                                                                                        "BI": 0, "SC": 1.0}), res, cache=cache)
    assert len(calls) == 1 and w.score == a.metrics["SC"]
    # a metric setting is part of the key
    tune.score_chunking(doc, "recursive-600", {"chunk_size": 450}, FAST.with_(max_tokens=300), res, cache=cache)
    assert len(calls) == 2
    # results are copies: mutating one does not touch the cache
    a.chunks.clear()
    assert tune.score_chunking(doc, "recursive-600", {"chunk_size": 450}, FAST, res, cache=cache).chunks


def test_sweep_cancel_returns_partial_rows(doc, res):
    seen = []
    rows = tune.sweep(doc, "recursive-1100", "chunk_size", [300, 500, 700, 900], FAST, res,
                      progress=lambda st, f, m: seen.append(f), cancel=lambda: len(seen) >= 3)
    assert [r["value"] for r in rows] == [300, 500]
    assert seen[0] == 0.0 and seen[-1] == 0.5


def test_sweep_invalid_points_are_rows_with_the_reason(doc, res):
    rows = tune.sweep(doc, "recursive-1100", "chunk_overlap", [0, 2000], FAST, res, base_params={"chunk_size": 500})
    assert rows[0]["score"] is not None and "error" not in rows[0]
    assert rows[1]["score"] is None and "must be smaller than chunk_size" in rows[1]["error"]
    with pytest.raises(ValueError, match="no parameter"):
        tune.sweep(doc, "recursive-1100", "nope", [1], FAST, res)


def test_a_stopped_sweep_draws_no_plateau_conclusion(capsys, monkeypatch):
    rows = [{"value": v, "score": s} for v, s in ((50, 0.50), (100, 0.61), (150, 0.616), (200, None), (250, 0.62))]
    assert tune.sweep_summary(rows, "chunk_size") == ("Best score 0.620 at chunk_size=250; the score stops gaining "
                                                       "(within 0.005 of the best) from chunk_size=150.")
    # cancelled after 5 values while the score was still rising: no "stops gaining from 150"
    stopped = tune.sweep_summary(rows, "chunk_size", complete=False)
    assert stopped == ("Best score so far 0.620 at chunk_size=250, among the 5 values reached; the score was still "
                       "rising at the last one (chunk_size=250), so where it stops gaining is not known: run the "
                       "whole sweep.")
    falling = tune.sweep_summary(rows[:3] + [{"value": 200, "score": 0.6}], "chunk_size", complete=False)
    assert "stops gaining from" not in falling and "only known from the whole sweep" in falling
    assert tune.sweep_summary([{"value": 1, "score": None}], "x") is None
    one = tune.sweep_summary(rows[:1], "chunk_size", complete=False)
    assert one.startswith("Best score so far 0.500 at chunk_size=50, among the only value reached; "), one
    # the CLI says the same after Ctrl-C
    def interrupted(doc, cid, name, values, *a, **k):
        yield from (({**r, "chunks": 1, "tokens": 1, "metrics": {}}, None) for r in rows)
        raise KeyboardInterrupt

    monkeypatch.setattr(tune, "iter_sweep", interrupted)
    rc = main(["sweep", str(POLICY), "--chunker", "recursive-1100", "--param", "chunk_size=50:5000:50",
               "--coref", "none", "--quiet"])
    out = capsys.readouterr().out
    assert rc == 130 and stopped in out and "stops gaining (within" not in out


def test_overlap_inflates_index_cost(doc, res):
    rows = tune.sweep(doc, "fixed-512", "overlap", [0, 128], FAST, res, base_params={"size": 256})
    assert rows[1]["tokens"] > rows[0]["tokens"] and rows[1]["chunks"] > rows[0]["chunks"]


# ---------------------------------------------------------------- ranges, frontier

def test_parse_range():
    assert tune.parse_range("200:1500:100") == list(range(200, 1501, 100))
    assert len(tune.parse_range("200:1500:100")) == 14
    assert tune.parse_range("0:200:50") == [0, 50, 100, 150, 200]
    assert tune.parse_range("0.1:0.3:0.1") == [0.1, 0.2, 0.3]
    assert tune.parse_range("5:12:5") == [5, 10]
    assert tune.parse_range("90,95, 99") == [90, 95, 99]
    assert tune.parse_range("7") == [7]
    for bad, msg in (("1:2", "START:STOP:STEP"), ("10:1:1", "below START"), ("1:10:0", "STEP must be > 0"),
                     ("a:b:c", "not a number"), ("", "empty"), ("0:100000:1", "at most")):
        with pytest.raises(ValueError, match=msg):
            tune.parse_range(bad)


def test_pareto_front():
    pts = [
        {"tokens": 100, "score": 0.5},  # 0 optimal (cheapest)
        {"tokens": 120, "score": 0.4},  # 1 dominated by 0
        {"tokens": 150, "score": 0.7},  # 2 optimal
        {"tokens": 150, "score": 0.7},  # 3 equal to 2: kept
        {"tokens": 200, "score": 0.7},  # 4 dominated (same score, more cost)
        {"tokens": 300, "score": 0.9},  # 5 optimal
        {"tokens": 50, "score": None},  # 6 no score
    ]
    assert tune.pareto_front(pts) == [0, 2, 3, 5]
    assert tune.pareto_front([(3, 0.1), (1, 0.2)]) == [1]
    assert tune.pareto_front([]) == []


def test_gain_stops():
    rows = [{"value": v, "score": s} for v, s in ((200, 0.7), (400, 0.8), (600, 0.898), (800, 0.9), (1000, 0.85))]
    assert tune.gain_stops(rows)["value"] == 600
    assert tune.gain_stops([{"value": 1, "score": None}]) is None


# ---------------------------------------------------------------- validation

def test_validation_messages_shared_by_all_entry_points():
    assert tune.problems("recursive-1100", {"chunk_size": 500, "chunk_overlap": 500}) == [
        "chunk_overlap (500 tokens) must be smaller than chunk_size (500 tokens)"]
    assert "pp_min_tokens (2000) must be <= pp_max_tokens (1100)" in tune.problems(
        "recursive-1100+pp", {"pp_min_tokens": 2000})
    assert "pp_merge_max (900) must be >= pp_max_tokens (1100)" in tune.problems("page+pp", {"pp_merge_max": 900})
    assert any("separators: the list is empty" in p for p in tune.problems("recursive-600", {"separators": ""}))
    assert any("invalid regex" in p for p in tune.problems("recursive-600", {"separators": "(|\\n"}))
    assert tune.problems("fixed-512", {"size": 64, "overlap": 64}) == [
        "overlap (64 tokens) must be smaller than size (64 tokens)"]
    assert tune.problems("langchain-default", {"chunk_size": 100, "chunk_overlap": 200})
    assert tune.problems("recursive-600", {"chunk_size": 0}) == ["chunk_size must be >= 1 (got 0)"]
    assert tune.problems("recursive-600", {"chunk_size": 800, "chunk_overlap": 100}) == []
    # the same check guards resolve_params (CLI --param, config files, analyze)
    with pytest.raises(ParamError, match="must be smaller than chunk_size"):
        registry.get("recursive-600").resolve_params({"chunk_overlap": 600})


def test_overlap_that_repeats_the_text_absurdly_is_refused_before_any_work(doc, res, monkeypatch, capsys):
    # size 2000 / overlap 1999 passed (overlap < size) and embedded a 30k-token document ~2000 times
    absurd = {"size": 2000, "overlap": 1999}
    msg = ("overlap (1999 tokens) would embed the text about 2,000 times (size / (size - overlap)), at most 4: "
           "keep overlap <= 1,500 tokens at size 2,000")
    assert tune.problems("fixed-512", absurd) == [msg]
    with pytest.raises(ParamError, match="would embed the text about 2,000 times"):
        registry.get("fixed-512").resolve_params(absurd)
    assert any("at most 4" in p for p in tune.problems("recursive-600", {"chunk_size": 400, "chunk_overlap": 301}))
    assert any("at most 4" in p for p in tune.problems("langchain-default", {"chunk_overlap": 3001}))
    assert any("at most 4" in p for p in tune.problems("recursive-1100+pp", {"chunk_overlap": 1000}))
    # legitimate overlaps (up to 3/4 of the size) still pass
    for cid, ok in (("fixed-512", {"size": 2000, "overlap": 1000}), ("fixed-512", {"size": 2000, "overlap": 1500}),
                    ("fixed-512", {"size": 4, "overlap": 3}), ("recursive-600", {"chunk_overlap": 300}),
                    ("langchain-default", {"chunk_overlap": 2000}), ("langchain-1100", {"chunk_overlap": 825})):
        assert tune.problems(cid, ok) == [], (cid, ok)
    # nothing is chunked or embedded for it: the engine refuses it with the same words
    calls = []
    monkeypatch.setattr(tune, "fill_metrics", lambda *a, **k: calls.append(a))
    c = tune.score_chunking(doc, "fixed-512", absurd, FAST, res, cache=tune.TuneCache())
    assert not c.ok and "would embed the text about 2,000 times" in c.reason and not calls
    # the CLI's --param agrees (chunk, analyze, sweep)
    assert main(["chunk", str(POLICY), "-c", "fixed-512", "-p", "size=2000", "-p", "overlap=1999"]) == 2
    assert "would embed the text about 2,000 times" in capsys.readouterr().err
    assert main(["analyze", str(POLICY), "--chunkers", "fixed-512", "--param", "fixed-512.size=2000",
                 "--param", "fixed-512.overlap=1999", "--coref", "none", "--quiet"]) == 2
    assert "would embed the text about 2,000 times" in capsys.readouterr().err
    assert main(["sweep", str(POLICY), "--chunker", "fixed-512", "--param", "overlap=1990:1999:9",
                 "--set", "size=2000", "--coref", "none", "--quiet"]) == 2
    assert "at most 4" in capsys.readouterr().err


def test_cli_sweep_rejects_invalid_combination(capsys):
    rc = main(["sweep", str(POLICY), "--chunker", "recursive-1100", "--param", "chunk_size=100:200:100",
               "--set", "chunk_overlap=500", "--coref", "none"])
    err = capsys.readouterr().err
    assert rc == 2 and "chunk_overlap (500 tokens) must be smaller than chunk_size" in err
    rc = main(["sweep", str(POLICY), "--chunker", "recursive-1100", "--param", "nope=1:2:1"])
    assert rc == 2 and "has no parameter 'nope'" in capsys.readouterr().err
    # a fractional step on a whole-number parameter is refused, not rounded (50.5 ran as 50)
    rc = main(["sweep", str(POLICY), "--chunker", "fixed-512", "--param", "size=100:200:50.5"])
    assert rc == 2 and "size takes whole numbers; 150.5 is not" in capsys.readouterr().err
    # the swept parameter set again with --set was silently ignored
    rc = main(["sweep", str(POLICY), "--chunker", "fixed-512", "--param", "size=100:200:50", "--set", "size=300"])
    assert rc == 2 and "that is the parameter swept by --param" in capsys.readouterr().err


# ---------------------------------------------------------------- CLI sweep, configs, variants

def test_cli_sweep_json(tmp_path, capsys, res):
    out = tmp_path / "sweep.json"
    rc = main(["sweep", str(POLICY), "--chunker", "recursive-1100", "--param", "chunk_size=100:300:100",
               "--coref", "none", "--json", str(out), "--quiet"])
    text = capsys.readouterr().out
    assert rc == 0
    assert "chunks" in text and "score" in text and "stops gaining" in text
    data = json.loads(out.read_text())
    assert data["chunker"] == "recursive-1100" and data["param"] == "chunk_size"
    assert [r["value"] for r in data["rows"]] == [100, 200, 300]
    assert set(data["rows"][0]) == {"value", "chunks", "tokens", "metrics", "score"}
    doc = load_document(str(POLICY))
    again = tune.sweep(doc, "recursive-1100", "chunk_size", [100, 200, 300], FAST, res)
    assert data["rows"] == json.loads(json.dumps(again))


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_config_round_trip_reproduces_chunks_and_metrics(tmp_path, res, suffix):
    doc = load_document(str(POLICY))
    settings = Settings(
        chunkers=("recursive-1100", "whole"), candidates=("recursive-1100", "whole", "r-300"), coref="none",
        params={"recursive-1100": {"chunk_size": 250, "separators": ["\\n{2,}", "\\n", "[.!?]\\s+", ""]}},
        variants={"r-300": {"chunker": "recursive-600+pp", "params": {"chunk_size": 300, "pp_min_tokens": 50}}},
        weights={"RC": 1.0, "ICC": 2.0, "DCC": 1.0, "BI": 1.0, "SC": 0.5}, max_tokens=900,
    )
    cfg = tune.save_config(settings, tmp_path / f"cfg{suffix}", tune={"chunker": "recursive-1100"})
    assert parse_config(cfg.read_text(), suffix[1:]) == (settings, {"chunker": "recursive-1100"})
    out = tmp_path / "report.json"
    assert main(["analyze", str(POLICY), "--config", str(cfg), "--json", str(out), "--quiet"]) == 0
    rep = json.loads(out.read_text())
    got = {c["id"]: c for c in rep["chunkings"]}
    assert set(got) == {"recursive-1100", "whole", "r-300"}
    # what the app shows for the tuned chunker and the promoted variant
    tuned = tune.score_chunking(doc, "recursive-1100", settings.params["recursive-1100"], settings, res)
    var = tune.score_chunking(doc, "recursive-600+pp", settings.variants["r-300"]["params"], settings, res,
                              name="r-300")
    for c in (tuned, var):
        assert [[x["start"], x["end"], x["tokens"]] for x in got[c.id]["chunks"]] == [list(t) for t in chunks_of(c)]
        assert got[c.id]["metrics"] == c.metrics
        assert got[c.id]["score"] == pytest.approx(c.score, abs=1e-12)


def test_settings_file_round_trips_awkward_values(tmp_path):
    awkward = 'quote " back \\ \\n tab\t nl\n ctl\x01 del\x7f é 🙂'
    s = Settings(params={"recursive-1100": {"separators": [awkward, "\\s+", ""], "chunk_size": 900}},
                 variants={"k-1 x+y": {"chunker": "fixed-512", "params": {"overlap": 0}}},
                 weights={"RC": 0.1, "ICC": 1e-05, "DCC": 1.0, "BI": 2.0, "SC": 0.0})
    for suffix in (".toml", ".json"):
        path = s.to_file(tmp_path / f"s{suffix}")
        assert Settings.from_file(path) == s
    assert tomllib.loads((tmp_path / "s.toml").read_text())["settings"]["params"]["recursive-1100"]["separators"][0] == awkward


def test_named_variant_appears_in_report_and_can_win(doc, res):
    # tie_break="score": the highest score wins even inside a statistical tie (this test is about
    # variants winning, not about the verdict; by default a tie goes to fewer chunks)
    base_s = FAST.with_(params={"recursive-600": {"chunk_size": 300}}, tie_break="score")
    s = base_s.with_(candidates=("recursive-600", "rec@200"),
                     variants={"rec@200": {"chunker": "recursive-600", "params": {"chunk_size": 200}},
                               "shown-only": {"chunker": "fixed-512", "params": {}}})
    r = analyze(doc, s, resources=res)
    v = r.get("rec@200")
    assert v is not None and v.ok and v.candidate
    assert "recursive-600" in v.label and "chunk_size=200" in v.label and v.info["variant_of"] == "recursive-600"
    assert "(600)" not in v.label  # the base's size, which the variant changes, is not in its description
    assert not r.get("shown-only").candidate and r.get("shown-only").ok
    # on this document chunk size 200 beats 300, so the promoted variant wins
    assert v.score > r.get("recursive-600").score and r.winner == "rec@200"
    # the same result via the Tune path, added to a report without it
    base = analyze(doc, base_s, resources=res)
    assert base.winner == "recursive-600"
    c = tune.score_chunking(doc, "recursive-600", {"chunk_size": 200}, base_s, res, name="rec@200")
    tune.add_variant(base, c)
    assert base.winner == "rec@200" and base.get("rec@200").score == v.score and base.get("rec@200").label == v.label
    assert chunks_of(base.get("rec@200")) == chunks_of(v)
    assert base.settings["variants"]["rec@200"] == {"chunker": "recursive-600", "params": {"chunk_size": 200}}


def test_settings_variants_are_strict():
    ok = Settings.from_dict({"variants": {"mine": {"chunker": "recursive-1100", "params": {"chunk_size": 800}}}})
    assert ok.variants["mine"]["params"] == {"chunk_size": 800}
    for bad, msg in (({"variants": {"mine": {"chunker": "x", "extra": 1}}}, "unknown key"),
                     ({"variants": {"mine": {"params": {}}}}, "expected"),
                     ({"variants": {"recursive-600": {"chunker": "recursive-1100"}}}, "built-in"),
                     ({"variantz": {}}, "unknown setting")):
        with pytest.raises(ValueError, match=msg):
            Settings.from_dict(bad)


def test_variant_name():
    assert tune.variant_name("recursive-1100", {"chunk_size": 800}) == "recursive-1100@chunk_size=800"
    assert tune.variant_name("recursive-1100", {"chunk_size": 1100}) == "recursive-1100@default"
    assert tune.variant_name("semantic", {"threshold_amount": 90.0}) == "semantic@threshold_amount=90"


def test_same_configuration_names_the_chunking_a_variant_would_copy():
    others = [("recursive-1100", "recursive-1100", {"chunk_size": 1100, "chunk_overlap": 0}),
              ("mine", "recursive-600", {"chunk_size": 250}), ("fixed-512", "fixed-512", {})]
    # defaults included: "@default" is the chunker itself, a value given as text is the same value
    assert tune.same_configuration("recursive-1100", {}, others) == "recursive-1100"
    assert tune.same_configuration("recursive-600", {"chunk_size": "250", "chunk_overlap": 0}, others) == "mine"
    assert tune.same_configuration("fixed-512", {"size": 512, "overlap": 64}, others) == "fixed-512"
    # another value or another chunker with the same values is another configuration
    assert tune.same_configuration("recursive-1100", {"chunk_size": 700}, others) is None
    assert tune.same_configuration("recursive-1100+pp", {}, others) is None
    assert tune.same_configuration("recursive-600", {"chunk_size": 250, "chunk_overlap": 10}, others) is None


def test_one_wording_for_a_score_over_fewer_metrics():
    from chunkscope.analysis.selection import missing_metrics
    from chunkscope.analysis.wording import fewer_metrics_warning
    from chunkscope.report import ChunkingResult

    c = ChunkingResult(id="x", label="x", params={}, candidate=True, status="ok", metrics={"RC": None, "ICC": 0.5, "DCC": None, "BI": 1.0,
                                                                 "SC": 1.0})
    assert missing_metrics(c) == ["RC", "DCC"]
    assert missing_metrics(c, {"RC": 0.0}) == ["DCC"]  # a metric weighted 0 is not part of the mean anyway
    assert missing_metrics(c, None, {"DCC"}) == ["RC"]  # still being computed (provisional report)
    assert fewer_metrics_warning("The winner's", ["DCC"]) == "The winner's score averages fewer than five metrics (missing: DCC)."


def test_tune_cache_is_keyed_by_the_llm_endpoint(doc, tmp_path, monkeypatch):
    from chunkscope.llm import LLMSettings

    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path))
    cache = tune.TuneCache()
    off = Resources(llm_settings=LLMSettings())
    first = tune.score_chunking(doc, "llm-regex", {}, FAST, off, cache=cache)
    assert first.status == "skipped"
    # the user now configures an endpoint (unreachable here): the cached "not configured" must not come back
    on = Resources(llm_settings=LLMSettings(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=2, max_retries=0))
    second = tune.score_chunking(doc, "llm-regex", {}, FAST, on, cache=cache)
    assert second.status == "failed" and cache.misses == 2
    # a different key for the same endpoint is a different configuration too
    assert (LLMSettings(base_url="http://h/v1", api_key="a").cache_identity()
            != LLMSettings(base_url="http://h/v1", api_key="b").cache_identity())
    assert "secret-a" not in json.dumps(LLMSettings(base_url="http://h/v1", api_key="secret-a").cache_identity())


def test_cli_sweep_missing_json_directory_fails_before_the_sweep(capsys, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("no sweep for a usage error")

    monkeypatch.setattr(tune, "iter_sweep", boom)
    rc = main(["sweep", str(POLICY), "--chunker", "recursive-1100", "--param", "chunk_size=100:300:100",
               "--coref", "none", "--quiet", "--json", "/nonexistent-dir/sweep.json"])
    err = capsys.readouterr().err
    assert rc == 2 and "--json: directory /nonexistent-dir does not exist" in err
