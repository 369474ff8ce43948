"""Metrics: hand-computed cases, and SC/BI/RC against a straightforward reference
implementation of the paper's formulas (DESIGN section 6) on random and dev-corpus chunkings."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from conftest import corpus_files, mentions_file
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkscope import metrics as M
from chunkscope.document import Span

# --------------------------------------------------------------------------- reference
# Written from the formulas, deliberately naive: no sorting, no bisect, no numpy.


def ref_boundaries(chunks):
    starts = [a for a, _ in chunks[1:]]
    ends = [b for _, b in chunks[:-1]]
    return starts + ends


def ref_sc(tokens, m=100, mx=1100):
    return sum(1 for t in tokens if m <= t <= mx) / len(tokens)


def ref_bi(chunks, split_points, length, tau=5):
    g = [0] + list(split_points) + [length]
    b_all = ref_boundaries(chunks)
    intact = 0
    for j in range(len(g) - 1):
        if not any(g[j] + tau < b < g[j + 1] - tau for b in b_all):
            intact += 1
    return intact / (len(g) - 1)


def ref_rc(chunks, pairs):
    b_all = ref_boundaries(chunks)
    missing = 0
    for ent, pro in pairs:
        if ent[0] < pro[0] or (ent[0] == pro[0] and ent[1] <= pro[1]):
            s, t = ent[0], pro[1]
        else:
            s, t = pro[0], ent[1]
        if any(s < b < t for b in b_all):
            missing += 1
    return 1 - missing / len(pairs)


def table_embed(table):
    def embed(spans):
        return np.array([table[(s.start, s.end)] for s in spans], dtype=float)

    return embed


# --------------------------------------------------------------------------- hand cases
def test_size_compliance_hand():
    r = M.size_compliance([50, 100, 1100, 1101, 600])
    assert r.value == pytest.approx(3 / 5)
    assert [o.to_dict() for o in r.details.out_of_size] == [
        {"chunk": 0, "tokens": 50, "kind": "under"},
        {"chunk": 3, "tokens": 1101, "kind": "over"},
    ]
    assert M.size_compliance([10, 20], min_tokens=5, max_tokens=15).value == 0.5
    r = M.size_compliance([])
    assert r.value is None and r.reason == "no chunks"
    json.dumps(r.to_dict())


def test_block_integrity_hand():
    split = [20, 50, 80]  # blocks [0,20) [20,50) [50,80) [80,100)
    r = M.block_integrity([Span(0, 22), Span(22, 60), Span(60, 100)], split, 100)
    assert r.value == 0.75  # 22 is within the tolerance of 20; 60 breaks [50,80)
    assert [b.to_dict() for b in r.details.broken] == [
        {"block": [50, 80], "index": 2, "boundary": 60, "chunk": 2, "side": "start", "boundaries_inside": 1}
    ]
    # overlapping chunks: the start (25) and the end (30) are both boundaries; 25 is at the tolerance edge
    r = M.block_integrity([Span(0, 30), Span(25, 100)], split, 100)
    assert r.value == 0.75
    (b,) = r.details.broken
    assert (b.block, b.boundary, b.chunk, b.side, b.boundaries_inside) == ([20, 50], 30, 0, "end", 1)
    # an end boundary that is no chunk's start is attributed to its chunk with side "end"
    r = M.block_integrity([Span(0, 40), Span(45, 100)], split, 100, tolerance=0)
    assert [(x.boundary, x.chunk, x.side) for x in r.details.broken] == [(40, 0, "end")]
    # single chunk: nothing can break
    assert M.block_integrity([Span(0, 100)], split, 100).value == 1.0
    # tolerance is a setting
    assert M.block_integrity([Span(0, 22), Span(22, 100)], split, 100, tolerance=1).value == 0.75
    r = M.block_integrity([], split, 100)
    assert r.value is None and r.reason == "no chunks"


def test_references_completeness_hand():
    chunks = [Span(0, 50), Span(50, 100)]
    pairs = [
        ((10, 15), (40, 43)),  # same chunk
        ((45, 48), (52, 55)),  # split by 50
        ((60, 65), (55, 58)),  # cataphora: s = 55 (pronoun first), t = 65: intact
        ((40, 50), (50, 53)),  # split
        ((30, 40), (45, 50)),  # later mention ends at the boundary: exclusive end, intact
    ]
    r = M.references_completeness(chunks, pairs)
    assert r.value == pytest.approx(0.6)
    assert [(x.pair, x.boundary, x.chunk) for x in r.details.split] == [(1, 50, 1), (3, 50, 1)]
    assert r.value == ref_rc([(0, 50), (50, 100)], pairs)
    assert M.references_completeness([Span(0, 100)], pairs).value == 1.0
    r = M.references_completeness(chunks, [])
    assert r.value is None and "no entity-pronoun pairs" in r.reason
    assert M.references_completeness([], pairs).value is None
    # overlapping chunks: the start of chunk 1 (40) lies inside (30, 45)
    assert M.references_completeness([Span(0, 45), Span(40, 100)], [((30, 35), (44, 47))]).value == 0.0


def test_intrachunk_cohesion_hand():
    split = [10, 20]
    chunks = [Span(0, 15), Span(15, 30)]
    emb = table_embed({
        (0, 15): (1, 0), (0, 10): (1, 0), (10, 15): (0, 1),  # cohesion 0.5
        (15, 30): (0, 1), (15, 20): (0.6, 0.8), (20, 30): (0, 1),  # cohesion 0.9
    })
    r = M.intrachunk_cohesion(chunks, split, emb)
    assert r.value == pytest.approx(0.7)
    assert [(c.chunk, c.pieces) for c in r.details.per_chunk] == [(0, 2), (1, 2)]
    assert r.details.per_chunk[1].cohesion == pytest.approx(0.9)
    # a chunk inside one block is ignored; none with two pieces -> None
    r = M.intrachunk_cohesion([Span(0, 10), Span(10, 20), Span(20, 30)], split, emb)
    assert r.value is None and r.reason
    # single chunk spanning three blocks
    emb1 = table_embed({(0, 30): (1, 0), (0, 10): (1, 0), (10, 20): (0, 1), (20, 30): (-1, 0)})
    r = M.intrachunk_cohesion([Span(0, 30)], split, emb1)
    assert r.details.raw == pytest.approx(0.0) and r.value == 0.0
    # negative mean clipped to 0
    emb2 = table_embed({(0, 30): (1, 0), (0, 10): (-1, 0), (10, 20): (-1, 0), (20, 30): (0, 1)})
    r = M.intrachunk_cohesion([Span(0, 30)], split, emb2)
    assert r.details.raw < 0 and r.value == 0.0
    assert M.intrachunk_cohesion([], split, emb).value is None


def test_icc_counts_whitespace_only_pieces():
    # text "aaaaaaaa\n\nbbbbbbbbbb", gold boundary at 10: chunk [8, 20) is the whitespace piece
    # [8, 10) plus [10, 20); both count, as in the paper's code
    emb = table_embed({(8, 20): (1, 0), (8, 10): (0, 1), (10, 20): (1, 0), (0, 8): (1, 0)})
    chunks = [Span(0, 8), Span(8, 20)]
    r = M.intrachunk_cohesion(chunks, [10], emb)
    assert r.value == pytest.approx(0.5)
    assert r.details.per_chunk[0].pieces == 2


def test_dcc_windows_and_value_hand():
    chunks = [Span(0, 10), Span(10, 20), Span(20, 30), Span(30, 40)]
    toks = [500, 500, 2000, 1000]
    wins = M.dcc_windows(chunks, toks)
    # i=0: 500+500+2000 = 3000 -> [0..2]; i=1: [1..2] same last -> skipped; i=2: [2..3]; i=3 alone
    assert [(w.first, w.last, w.span, w.tokens) for w in wins] == [
        (0, 2, [0, 30], 3000), (2, 3, [20, 40], 3000)]
    emb = table_embed({(0, 10): (1, 0), (10, 20): (1, 0), (20, 30): (1, 0), (30, 40): (1, 0),
                       (0, 30): (1, 0), (20, 40): (0, 1)})
    r = M.document_contextual_coherence(chunks, toks, emb)
    # mean over every (window, chunk) pair: (1+1+1+0+0)/5 (the mean of window means would be 0.5)
    assert r.value == pytest.approx(0.6)
    assert [w.coherence for w in r.details.windows] == pytest.approx([1.0, 0.0])
    assert r.details.pairs == 5
    # window step 2: i=0 -> [0..2], i=2 -> [2..3]
    assert len(M.dcc_windows(chunks, toks, window_step=2)) == 2
    # budget too small for any pair of chunks -> no window -> None
    r = M.document_contextual_coherence(chunks, toks, emb, window_tokens=900)
    assert [(w.first, w.last) for w in M.dcc_windows(chunks, toks, window_tokens=1000)] == [(0, 1)]
    assert r.value is None and "no window" in r.reason
    r = M.document_contextual_coherence([Span(0, 40)], [100], emb)
    assert r.value is None and r.reason == "one chunk only"
    assert M.document_contextual_coherence([], [], emb).value is None


def test_dcc_overlapping_chunks_count_new_text_only():
    text = "x" * 20
    chunks = [Span(0, 10), Span(5, 15), Span(10, 20)]
    wins = M.dcc_windows(chunks, [10, 10, 10], window_tokens=15, text=text, count_tokens=len)
    assert [(w.first, w.last, w.span, w.tokens) for w in wins] == [(0, 1, [0, 15], 15), (1, 2, [5, 20], 15)]
    with pytest.raises(ValueError):
        M.dcc_windows(chunks, [10, 10, 10], window_tokens=15)  # overlap without text


def test_score():
    assert M.score({"RC": 1.0, "ICC": 0.5, "DCC": None, "BI": 0.5, "SC": 1.0}) == pytest.approx(0.75)
    assert M.score({"RC": 1.0, "SC": 0.0}, {"RC": 3, "SC": 1}) == pytest.approx(0.75)
    assert M.score({"RC": 1.0, "SC": 0.0}, {"RC": 0}) == 0.0
    assert M.score({"RC": None}) is None
    assert M.score({}) is None
    with pytest.raises(ValueError):
        M.score({"RC": 1.0}, {"RC": -1})


def assert_held_by(chunks, lo, hi, held):
    """``held`` names a chunk holding [lo, hi) whole exactly when one exists (brute force)."""
    holders = [i for i, (a, b) in enumerate(chunks) if a <= lo and hi <= b]
    assert (held in holders) if holders else held is None, (chunks, lo, hi, held)


def test_a_cut_that_the_next_overlapping_chunk_holds_whole_names_that_chunk():
    """fixed-512 with overlap: the pair ("Symbolic names", "they") and the block lie inside chunk 1 whole; the
    paper's RC and BI still count the boundary between them (chunk 1's start), the diagnostics say where to read it."""
    spans = [Span(0, 100), Span(80, 200), Span(180, 300)]
    rc = M.references_completeness(spans, [((85, 90), (101, 105)), ((10, 20), (150, 160))])
    assert rc.value == 0.0  # both counted as split, as in the paper
    assert [x.held_by for x in rc.details.split] == [1, None]
    bi = M.block_integrity(spans, [82, 120], 300, tolerance=0)
    assert [(x.block, x.held_by) for x in bi.details.broken] == [([0, 82], 0), ([82, 120], 1),
                                                                              ([120, 300], None)]
    # BI's tolerance counts: a block whose first 3 characters lie before the chunk is whole in it, as BI sees it
    bi = M.block_integrity([Span(0, 200), Span(103, 300)], [100, 250], 300, tolerance=5)
    assert [(x.block, x.held_by) for x in bi.details.broken] == [([100, 250], 1)]
    # without overlap nothing is held whole
    assert "held_by" not in M.references_completeness([Span(0, 90), Span(90, 300)], [((85, 88), (95, 99))]).details.split[0].to_dict()


# --------------------------------------------------------------------------- random agreement
@st.composite
def chunkings(draw):
    length = draw(st.integers(1, 400))
    split = sorted(draw(st.sets(st.integers(1, length - 1), max_size=30))) if length > 1 else []
    cuts = sorted(draw(st.sets(st.integers(1, length - 1), max_size=20))) if length > 1 else []
    edges = [0, *cuts, length]
    chunks = []
    for i, (a, b) in enumerate(zip(edges, edges[1:])):
        back = draw(st.integers(0, 15)) if i > 0 else 0  # overlap with the previous chunk
        chunks.append((max(0, a - back), b))
    n_pairs = draw(st.integers(0, 15))
    pairs = []
    for _ in range(n_pairs):
        s1 = draw(st.integers(0, length - 1))
        e1 = draw(st.integers(s1 + 1, min(length, s1 + 20)))
        s2 = draw(st.integers(0, length - 1))
        e2 = draw(st.integers(s2 + 1, min(length, s2 + 20)))
        pairs.append(((s1, e1), (s2, e2)))
    tokens = [draw(st.integers(0, 1500)) for _ in chunks]
    tau = draw(st.sampled_from([0, 1, 5]))
    return length, split, chunks, pairs, tokens, tau


@settings(max_examples=300, deadline=None)
@given(chunkings())
def test_sc_bi_rc_equal_reference_on_random_chunkings(case):
    length, split, chunks, pairs, tokens, tau = case
    spans = [Span(a, b) for a, b in chunks]
    assert M.size_compliance(tokens).value == ref_sc(tokens)
    assert abs(M.block_integrity(spans, split, length, tolerance=tau).value - ref_bi(chunks, split, length, tau)) <= 1e-12
    bi = M.block_integrity(spans, split, length, tolerance=tau)
    assert bi.details.blocks - bi.details.intact == len(bi.details.broken)
    for b in bi.details.broken:
        lo, hi = b.block
        assert lo + tau < b.boundary < hi - tau
        assert_held_by(chunks, lo + tau, hi - tau, b.held_by)
    if pairs:
        rc = M.references_completeness(spans, pairs)
        assert abs(rc.value - ref_rc(chunks, pairs)) <= 1e-12
        for x in rc.details.split:
            ends = [*x.entity, *x.pronoun]
            assert_held_by(chunks, min(ends), max(ends), x.held_by)
    else:
        assert M.references_completeness(spans, pairs).value is None


# --------------------------------------------------------------------------- dev corpus
def _simple_chunkings(doc):
    n = len(doc.text)
    out = {"page": [(p.start, p.end) for p in doc.pages]} if doc.pages else {}
    for size in (300, 1000, 4000):
        out[f"chars-{size}"] = [(a, min(n, a + size)) for a in range(0, n, size)]
    out["chars-1000-overlap-150"] = [(max(0, a - 150), min(n, a + 1000)) for a in range(0, n, 1000)]
    out["blocks"] = [(b.start, b.end) for b in doc.blocks]
    try:
        from chunkscope.chunkers import registry
    except Exception:  # chunkers not available: the simple chunkings above still run
        return out
    for cid in ("recursive-1100", "recursive-600", "fixed-512", "sentence-5", "page+pp"):
        try:
            res = registry.run_chunker(doc, cid, {})
        except Exception:
            continue
        if getattr(res, "status", "ok") == "ok":
            out[cid] = [(s.start, s.end) for s in res.spans]
    return out


def _reference_pairs(parsed):
    import pandas as pd

    path = mentions_file(parsed)
    if not path.exists():
        return []
    df = pd.read_parquet(path)
    if not len(df):
        return []
    raw = df["entity_pron_mentions"].iloc[0]
    # the reference mentions use inclusive ends
    return [((int(e[0]), int(e[1]) + 1), (int(p[0]), int(p[1]) + 1)) for e, p in raw]


@pytest.mark.corpus
@pytest.mark.parametrize("parsed", corpus_files(), ids=lambda p: p.stem[:30])
def test_sc_bi_rc_equal_reference_on_dev_documents(parsed, corpus_dir, expected_values):
    from chunkscope.ingest.reference import load_reference
    from chunkscope.text.tokens import count_many

    doc = load_reference(parsed)
    pairs = _reference_pairs(parsed)
    for cid, chunks in _simple_chunkings(doc).items():
        spans = [Span(a, b) for a, b in chunks]
        toks = count_many([doc.text[a:b] for a, b in chunks])
        sc = M.size_compliance(toks).value
        bi = M.block_integrity(spans, doc.split_points, len(doc.text)).value
        assert sc == ref_sc(toks), cid
        assert abs(bi - ref_bi(chunks, doc.split_points, len(doc.text))) <= 1e-12, cid
        rc = M.references_completeness(spans, pairs).value
        if pairs:
            assert abs(rc - ref_rc(chunks, pairs)) <= 1e-12, cid
        else:
            assert rc is None
        exp = expected_values.get(parsed.stem, {}).get(cid)
        if exp and exp.get("chunks") == len(chunks):  # published values (rounded to 6 decimals)
            for name, val in (("SC", sc), ("BI", bi), ("RC", rc)):
                assert (val is None and exp[name] is None) or round(val, 6) == pytest.approx(exp[name], abs=1e-6), (cid, name)


@pytest.mark.corpus
def test_sc_bi_rc_fast_on_gdpr(corpus_dir):
    from chunkscope.ingest.reference import load_reference

    parsed = [p for p in corpus_files() if "GDPR" in p.name]
    if not parsed:
        pytest.skip("GDPR not in the dev corpus")
    doc = load_reference(parsed[0])
    pairs = _reference_pairs(parsed[0])
    n = len(doc.text)
    rng = np.random.default_rng(0)
    chunkings = []
    for _ in range(120):
        cuts = np.sort(rng.choice(np.arange(1, n), size=int(rng.integers(50, 800)), replace=False)).tolist()
        edges = [0, *cuts, n]
        chunkings.append([Span(a, b) for a, b in zip(edges, edges[1:])])
    toks = [[100] * len(c) for c in chunkings]
    t0 = time.perf_counter()
    for c, t in zip(chunkings, toks):
        M.size_compliance(t)
        M.block_integrity(c, doc.split_points, n)
        M.references_completeness(c, pairs)
    dt = time.perf_counter() - t0
    assert dt < 3.0, f"SC+BI+RC for 120 GDPR chunkings took {dt:.2f} s"


# --------------------------------------------------------------------------- the report's JSON
def test_report_json_round_trips_byte_for_byte():
    """A report read back from its JSON writes the same bytes (typed diagnostics included), and so does a snapshot."""
    from chunkscope.analysis import Settings, analyze
    from chunkscope.ingest import load_bytes
    from chunkscope.report import Report

    body = b"The Northwind Gateway routes traffic. It keeps a table of routes and it never drops one. " * 40
    doc = load_bytes(b"# Gateway\n\n" + body + b"\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n" + body, "g.md")
    report = analyze(doc, Settings(chunkers=("fixed-512", "sentence-5", "whole"), candidates=("fixed-512", "whole")))
    c = report.get("sentence-5")
    assert c is not None and isinstance(c.diagnostics["BI"], M.BlockDetails) and c.diagnostics["RC"].split
    text = report.to_json()
    assert Report.from_dict(json.loads(text)).to_json() == text
    assert report.snapshot().to_json() == text


def test_report_snapshot_copies_what_a_caller_may_change():
    from chunkscope.report import ChunkingResult, ChunkRow, Report

    r = Report({"name": "d"}, {"weights": {"SC": 1.0}},
               [ChunkingResult("a", "a", chunks=[ChunkRow(0, 1, 1)], metrics={"SC": 1.0})], timings={"total": 1.0})
    s = r.snapshot()
    s.chunkings[0].metrics["SC"], s.settings["weights"]["SC"], s.timings["total"] = 0.0, 2.0, 2.0
    assert r.chunkings[0].metrics["SC"] == 1.0 and r.settings["weights"]["SC"] == 1.0 and r.timings["total"] == 1.0
    assert s.chunkings[0].chunks is r.chunkings[0].chunks  # rows are shared: they never change once produced
