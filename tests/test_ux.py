"""What a new user tripped over (issue 17): exports agree with the app, timings add up, figures,
the embedding-model limit. Engine-level tests (no Streamlit)."""

from __future__ import annotations

import itertools
import json
import re

from chunkscope.report import ChunkingResult, ChunkRow, Report


def _res(cid: str, n: int, m: tuple, candidate: bool = True) -> ChunkingResult:
    return ChunkingResult(cid, cid, {}, candidate, "ok", chunks=[ChunkRow(i * 10, i * 10 + 10, 50) for i in range(n)],
                          metrics=dict(zip(("RC", "ICC", "DCC", "BI", "SC"), m)))


def narrow_report() -> Report:
    """'a' wins by 0.004 over candidate 'b'; non-candidate 'x' ranks between them."""
    from chunkscope.analysis import rescore

    r = Report({"sha256": "x", "name": "doc"}, {}, [
        _res("a", 4, (0.9, 0.8, 0.8, 0.9, 0.9)),
        _res("x", 4, (0.9, 0.8, 0.8, 0.9, 0.89), candidate=False),
        _res("b", 4, (0.9, 0.8, 0.8, 0.9, 0.88)),
    ], None, "", timings={"chunk": 0.1, "total": 0.2})
    rescore(r, None, ("a", "b"))
    return r


def test_html_and_json_reports_carry_the_narrow_win_and_the_same_runner_up():
    from chunkscope.analysis.selection import explain
    from chunkscope.present.html_report import html_report

    r = narrow_report()
    ex = explain(r)
    assert ex.winner == "a" and ex.runner == "b" and "narrow-win" in ex.flags
    assert "narrow-win" in json.loads(r.to_json())["flags"]
    page = html_report(r)
    assert "flags: none" not in page and "narrow-win" in page
    assert "Narrow win: 0.004 ahead of b" in page
    # the "winner vs runner-up" radar plots the explanation's runner-up, not the next ranked chunking
    section = page.split("Winner vs runner-up", 1)[1].split("<h2>All chunkings", 1)[0]
    names = re.findall(r'"name":"([^"]+)"', section)
    assert names == ["a", "b"], names
    # the run's coreference and embedder in words, not as JSON
    r.coref = {"backend": "heuristic", "pairs": 326, "reason": ""}
    r.embedder = {"model": "all-MiniLM-L6-v2", "backend": "onnxruntime", "precision": "int8", "device": "cpu",
                  "max_tokens": 256, "stats": {"model_calls": 74}}
    foot = html_report(r)
    assert "Coreference: heuristic, 326 entity–pronoun pairs" in foot and "{" not in foot.split("Coreference:")[1][:200]
    assert "Embeddings: all-MiniLM-L6-v2 (onnxruntime, int8, cpu; inputs up to 256 tokens)" in foot


def test_a_clear_but_narrow_win_says_both_without_contradiction():
    """The card showed "✅ Clear winner" above "Narrow win ... a small settings change can flip": the
    two measure different things (resamples of the document; the score margin), and now say so."""
    import sys
    from pathlib import Path

    from chunkscope.analysis.selection import explain

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from ui.overview import verdict_badge

    r = narrow_report()
    r.verdict = {"kind": "clear", "winner": "a", "top": "a", "resamples": 1000, "clear_share": 0.95,
                 "rivals": [{"id": "b", "ahead": 0.97, "tied": False, "first": 0.03}],
                 "text": "a is ahead of every other candidate in 97% of 1000 resamples."}
    ex = explain(r)
    assert {"clear-winner", "narrow-win"} <= set(ex.flags)
    warn = next(w for w in ex.warnings if w.startswith("Narrow win"))
    assert "ahead on nearly every resample of this document, but by so little" in warn
    assert "Clear winner, by a narrow margin" in verdict_badge(r.verdict, None, narrow=True)
    assert "Clear winner</b>" in verdict_badge(r.verdict, None)
    from chunkscope.cli.analyze import winner_line

    r.flags = ex.flags
    assert winner_line(r) == "winner: a (clear winner by a narrow margin)"  # the CLI says what the card says
    r.verdict = None  # without the resampling verdict, the plain narrow-win warning
    assert any(w.startswith("Narrow win: 0.004 ahead of b, within what") for w in explain(r).warnings)


def test_stage_timings_are_disjoint_and_add_up_to_the_total():
    """The embedding model's time (semantic chunking, exact-mode scoring) is counted once, as
    "embed"; chunk, coref, embed, metrics and other add up to the total (the JSON keys stay)."""
    from chunkscope.analysis import Settings, analyze
    from chunkscope.analysis.timings import TIMING_KEYS
    from chunkscope.ingest import load_bytes

    text = "\n\n".join(f"## Part {i}\n\n" + f"The archive keeps invoice {i} for ten years. It is checked each spring. " * 8
                       for i in range(6))
    doc = load_bytes(text.encode(), "t.md")
    ids = ["recursive-600", "semantic"]
    r = analyze(doc, Settings(chunkers=ids, candidates=ids, coref="heuristic", embedding_mode="exact"))
    t = r.timings
    assert set(TIMING_KEYS) <= set(t) and {"chunk", "coref", "embed", "metrics", "total"} <= set(t)
    assert all(t[k] >= 0 for k in TIMING_KEYS)
    parts = sum(t[k] for k in TIMING_KEYS if k != "total")
    assert abs(parts - t["total"]) < 1e-6, t
    assert t["embed"] > 0 and t["chunk"] < sum(c.seconds for c in r.chunkings)  # semantic's embedding not in chunk


def test_compare_strip_lists_each_mark_once_and_the_frontier_legend_clears_the_axis():
    from chunkscope.metrics import diagnostics_from_dict
    from chunkscope.present import figures

    r = narrow_report()
    # only the 2nd and 3rd rows have broken blocks / split pairs: still one legend entry each
    for cid in ("x", "b"):
        r.get(cid).diagnostics = diagnostics_from_dict({
            "BI": {"broken": [{"block": [0, 20], "boundary": 10, "index": 0}]},
            "RC": {"split": [{"entity": [0, 3], "pronoun": [12, 14], "boundary": 10}]}})
    fig = figures.boundary_strip_figure(r, ["a", "x", "b"], 40)
    shown = [t.name for t in fig.data if t.showlegend is not False]
    assert sorted(shown) == ["broken block", "split pair"], shown
    # rows top-down in the order given (the columns' order below the strip): "a" highest
    ticks = dict(zip(fig.layout.yaxis.ticktext, fig.layout.yaxis.tickvals))
    assert ticks["a"] > ticks["x"] > ticks["b"], ticks
    lo, hi = fig.layout.yaxis.range
    assert lo < ticks["b"] and ticks["a"] < hi
    marks = {t.name: t.y[0] for t in reversed(fig.data) if t.name in ("broken block", "split pair")}  # row "x"
    assert marks["split pair"] < ticks["x"] < marks["broken block"]  # broken blocks above the row, split pairs below
    points = [{"name": f"c{i}", "chunker": f"c{i}", "tokens": 100 * i, "score": 0.5 + i / 100, "chunks": i,
               "source": "analysis"} for i in range(1, 6)]
    fr = figures.frontier_figure(points, [0, 4])
    legend = fr.layout.legend
    # the legend sits in the plot's height range (not below it, where the x-axis title is)
    assert legend.y is not None and legend.y >= 0 and (legend.x or 0) >= 1.0


def test_radar_leaves_unknown_metrics_out_and_variants_get_their_own_colour():
    from chunkscope.present import figures

    r = narrow_report()
    r.get("b").metrics.update({"RC": None, "ICC": None, "DCC": None})  # pending in a provisional snapshot
    fig = figures.radar_figure(r, ["a", "b"])
    a, b = (next(t for t in fig.data if t.name == n) for n in ("a", "b"))
    assert list(b.r) == [None, None, None, 0.9, 0.88, None]  # gaps, never 0
    assert b.line.dash == "dash" and b.fill == "none" and a.line.dash == "solid"
    # the title stays short (a long one ran under the toolbar, cut off at half the window's width); the
    # note under the chart says what the dashes and the shading mean
    assert fig.layout.title.text == "Metrics per chunking"
    assert "not known" in figures.radar_note(r, ["a", "b"]) and "shaded" not in figures.radar_note(r, ["a", "b"])
    assert figures.radar_note(r, ["a"]) == ""
    from chunkscope.present.html_report import html_report

    assert "Dashed: a metric not known" in html_report(r)  # the offline report says it under its radars too
    for c in r.chunkings:
        c.metric_intervals = {m: [0.1, 0.9] for m in c.metrics if c.metrics[m] is not None}
    assert figures.radar_figure(r, ["a", "b"], bands=True).layout.title.text == "Metrics per chunking"
    assert figures.radar_note(r, ["a"], bands=True) == "Shaded: each metric's 95% interval."
    for base in ("recursive-1100+pp", "page+pp", "fixed-512", "sentence-5"):
        for v in ("chunk_size=1000", "chunk_size=900", "chunk_overlap=50"):
            assert figures.chunker_color(f"{base}@{v}") != figures.chunker_color(base)


def _lab(hex_color: str) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour."""
    rgb = [int(hex_color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = [((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92 for c in rgb]
    xyz = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b, \
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    fx, fy, fz = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in xyz]
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def test_chunker_colours_can_be_told_apart():
    """The tour's complaint: recursive-1100+pp and semantic+pp were both orange, page+pp and langchain-1100
    both blue. Every pair of the known chunkers' colours, and each against the problem markers, differs."""
    from math import dist

    from chunkscope.present import figures, highlight

    colours = {c: figures.chunker_color(c) for c in figures._KNOWN}
    assert len(set(colours.values())) == len(colours)
    for a, b in itertools.combinations(colours, 2):
        assert dist(_lab(colours[a]), _lab(colours[b])) >= 25, (a, b)
    for mark in (highlight.BROKEN_COLOR, highlight.SPLIT_COLOR):
        assert mark in highlight.HIGHLIGHT_CSS
        assert all(dist(_lab(mark), _lab(c)) >= 20 for c in colours.values()), mark


def test_tune_reuses_the_chunkings_the_analysis_scored():
    from chunkscope import tune
    from chunkscope.analysis import Resources, Settings, analyze
    from chunkscope.ingest import load_bytes

    text = "\n\n".join(f"## Part {i}\n\n" + f"The archive keeps invoice {i} for ten years. It is checked each spring. " * 9
                       for i in range(5))
    doc = load_bytes(text.encode(), "t.md")
    ids = ["recursive-600", "fixed-512"]
    settings = Settings(chunkers=ids, candidates=ids, coref="heuristic", variants={"r300": {
        "chunker": "recursive-600", "params": {"chunk_size": 300}}})
    res = Resources()
    report = analyze(doc, settings, resources=res)
    cache = tune.TuneCache()
    assert tune.seed_from_report(doc, report, settings, res, cache=cache) == 3
    for cid, params in (("recursive-600", {}), ("fixed-512", {}), ("recursive-600", {"chunk_size": 300})):
        got = tune.score_chunking(doc, cid, params, settings, res, cache=cache)
        name = "r300" if params else cid
        assert got.ok and got.metrics == report.get(name).metrics and got.id == cid
        assert [(x.start, x.end) for x in got.chunks] == [(x.start, x.end) for x in report.get(name).chunks]
    assert cache.misses == 0 and cache.hits == 3  # nothing was chunked or scored again
    # other metric settings: nothing reused
    other = Settings(chunkers=ids, candidates=ids, coref="heuristic", min_tokens=50)
    assert tune.seed_from_report(doc, report, other, res, cache=tune.TuneCache()) == 0


def test_make_setup_says_what_each_step_does():
    """`make setup` runs for minutes: every step is announced before it runs (dry run, nothing installed)."""
    import shutil
    import subprocess
    from pathlib import Path

    if shutil.which("make") is None:
        import pytest

        pytest.skip("no make")
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(["make", "-n", "-B", "setup", "VENV=/nonexistent/venv"], cwd=root, capture_output=True,
                         text=True, timeout=60).stdout.splitlines()
    steps = [i for i, line in enumerate(out) if "pip install" in line or " -m venv " in line]
    assert len(steps) >= 3
    for i in steps:  # the line before each step echoes what it does
        assert out[i - 1].startswith('echo "==> ['), out[i - 1: i + 1]
    assert any("set-up done" in line for line in out)


def test_chunks_are_checked_against_the_users_embedding_model():
    import pytest

    from chunkscope.embeddings import model_limits as limits
    from chunkscope.embeddings.embedder import bundled_model_path
    from chunkscope.report import ChunkRow

    text = "Short one. " + "Interoperability considerations notwithstanding, " * 60 + "End."
    cut = text.index("Interop")
    spans = [ChunkRow(0, cut, 0), ChunkRow(cut, len(text), 0)]
    minilm = limits.target_model("all-MiniLM-L6-v2")
    assert minilm.max_tokens == 256
    r = limits.check(text, spans, minilm)
    assert r.exact and r.tokenizer == "word pieces" and r.over == [1]
    assert r.counts[0] == 2 + 3  # [CLS] short one . [SEP]
    # the same text in o200k tokens is far shorter than in word pieces: o200k alone would miss it
    from chunkscope.text.tokens import count_tokens

    assert count_tokens(text[cut:]) < r.counts[1]
    assert "1 of 2 chunks are over the 256-token limit of all-MiniLM-L6-v2" in r.summary()
    # a model whose tokenizer is not here: o200k, said so
    big = limits.target_model("text-embedding-3-small")
    r2 = limits.check(text, spans, big)
    assert not r2.exact and r2.over == [] and "o200k" in r2.summary()
    # a custom limit with a local tokenizer folder
    custom = limits.target_model("my-model", max_tokens=100, tokenizer=str(bundled_model_path()))
    r3 = limits.check(text, spans, custom)
    assert r3.exact and r3.counts == r.counts and r3.over == [1]
    broken = limits.check(text, spans, limits.target_model("x", max_tokens=100, tokenizer="/nonexistent/tok"))
    assert not broken.exact and "not available" in broken.note
    with pytest.raises(ValueError, match="input limit"):
        limits.target_model("unknown-model")


def test_a_tokenizer_path_must_be_a_tokenizer_file_of_sane_size(tmp_path, monkeypatch):
    """/dev/zero as the tokenizer grew the process until memory ran out: only a regular file of at
    most MAX_TOKENIZER_BYTES is read; anything else counts in o200k, with the reason."""
    from chunkscope.embeddings import model_limits as limits
    from chunkscope.report import ChunkRow

    spans = [ChunkRow(0, 5, 0)]
    for path in ("/dev/zero", str(tmp_path)):  # a device; a folder without tokenizer.json
        r = limits.check("Hello", spans, limits.target_model("m", max_tokens=10, tokenizer=path))
        assert not r.exact and "not a tokenizer.json file" in r.note, r.note
    big = tmp_path / "tokenizer.json"
    big.write_text("{" + " " * 2000 + "}")
    monkeypatch.setattr(limits, "MAX_TOKENIZER_BYTES", 1000)
    r = limits.check("Hello", spans, limits.target_model("m", max_tokens=10, tokenizer=str(big)))
    assert not r.exact and "more than a tokenizer file" in r.note, r.note


def _readme() -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_readme_is_a_guide_whose_links_resolve():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    text = _readme()
    assert "../shared" not in text  # a clone has no ../shared
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert heads[0] == "## Quick start" and "## Features in depth" in heads
    assert "make run" in text and "make test" in text
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):  # every local link and image exists
        if not target.startswith("http"):
            assert (root / target).exists(), target
    for doc in (root / "docs").glob("*.md"):
        body = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", body):
            if not target.startswith("http"):
                assert (doc.parent / target).exists(), (doc.name, target)
    assert len(text.encode()) < 15_000  # the details live in docs/


def test_a_tiny_real_margin_is_not_written_as_zero():
    """A new user read "Narrow win: 0.000 ahead" and "↑ +0.000" next to "Clear winner, by a narrow margin": a
    margin under 0.0005 is written to two significant digits."""
    from chunkscope.analysis.selection import explain
    from chunkscope.analysis.wording import margin_text

    assert margin_text(0.00023) == "0.00023" and margin_text(0.00023, signed=True) == "+0.00023"
    assert margin_text(0.004) == "0.004" and margin_text(0.0) == "0.000" and margin_text(0.0123, True) == "+0.012"
    r = narrow_report()
    r.get("b").score = r.get("a").score - 0.00023
    r.verdict = None
    assert any(w.startswith("Narrow win: 0.00023 ahead of b") for w in explain(r).warnings)
    # the warning writes the margin as the card's badge and the text do ("+0.0016", "0.0016 ahead"; it read "0.002")
    r.get("a").score = 0.9954
    r.get("b").score = 0.9938  # shown 0.995 and 0.994: 0.001 apart, so the margin takes four decimals
    ex = explain(r)
    assert "0.0016 ahead of b" in ex.text and any(w.startswith("Narrow win: 0.0016 ahead of b") for w in ex.warnings)


def test_chunkings_that_did_not_run_have_no_runtime_bar_and_no_problem_counts():
    # llm-regex without an endpoint (skipped) or a failed chunking: no empty bar, "–" rather than "0" problems
    from chunkscope.analysis import rescore
    from chunkscope.present import figures
    from chunkscope.present.highlight import problem_counts
    from chunkscope.present.html_report import html_report

    r = narrow_report()
    r.chunkings += [ChunkingResult("llm-regex+pp", "llm", {}, True, "skipped", "no LLM endpoint configured"),
                    ChunkingResult("semantic", "semantic", {}, False, "failed", "the model could not be loaded")]
    rescore(r, None, ("a", "b", "llm-regex+pp"))
    fig = figures.runtime_figure(r, [c.id for c in r.chunkings])
    assert list(fig.data[0].x) == ["a", "x", "b"]
    assert problem_counts(r.get("llm-regex+pp")) == {"broken blocks": None, "split pairs": None,
                                                     "out-of-size chunks": None}
    assert problem_counts(r.get("a"))["broken blocks"] == 0  # a chunking that ran and broke nothing
    page = html_report(r)
    for cid in ("llm-regex+pp", "semantic"):
        row = page.split(f"<td>{cid}", 1)[1].split("</tr>", 1)[0]
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        assert cells[-4:-1] == ["–", "–", "–"], cells  # broken blocks, split pairs, out-of-size
        assert cells[1:3] == ["–", "–"] and cells[0].startswith(r.get(cid).status), cells  # chunks, mean tokens
    ran = re.findall(r"<td[^>]*>(.*?)</td>", page.split("<td>x", 1)[1].split("</tr>", 1)[0])
    assert ran[1:3] == ["4", "50"] and ran[-4:-1] == ["0", "–", "0"], ran  # ran: counted (RC not computed: –)


def test_a_tie_is_said_once_and_its_badge_points_nowhere():
    """A tour saw "It ties on score and wins the tie-break" in the text, "Tie on score with the runner-up" again as a
    caution below it, and a green "↑ +0.000" badge; and a chip read "ICC 0.590 vs 0.593 (-0.002)"."""
    from streamlit.testing.v1 import AppTest

    from chunkscope.analysis import rescore
    from chunkscope.analysis.selection import explain
    from chunkscope.analysis.wording import apart

    r = narrow_report()
    r.get("b").metrics["SC"] = 0.9
    r.get("b").chunks = r.get("b").chunks + [ChunkRow(40, 50, 50)]  # one chunk more: a loses the tie-break
    rescore(r, None, ("a", "b"))
    ex = explain(r)
    assert "tie" in ex.flags and "Tie on score with the runner-up: decided by fewer chunks (4 vs 5), then id." in ex.text
    assert not any(w.startswith("Tie on score") for w in ex.cautions()), ex.cautions()

    def card(report):
        from ui.overview import winner_card

        winner_card(report)

    at = AppTest.from_function(card, args=(r,)).run()
    assert not at.exception, at.exception
    metric = at.metric[0]
    assert metric.delta == "tie with b" and "+0.000" not in metric.delta
    assert apart(0.5904, 0.5929) == ("0.590", "0.593", "-0.0025")  # the shown values are 0.003 apart
    assert apart(0.9, 0.8) == ("0.900", "0.800", "+0.100") and apart(0.9962, 0.9956)[2] == "+0.0006"
