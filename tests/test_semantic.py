"""semantic chunker: thresholds, diagnostics, edge cases, a real small document.

Uses the bundled all-MiniLM-L6-v2 once per module (small texts only: CPU is shared).
"""

from __future__ import annotations

import numpy as np
import pytest

from chunkscope.chunkers.base import ParamError
from chunkscope.chunkers.semantic import breakpoint_threshold, chunk_semantic, cosine_distances
from chunkscope.document import Document


@pytest.fixture(scope="module")
def embedder():
    from chunkscope.embeddings.embedder import Embedder

    return Embedder.load()


class Ctx:
    def __init__(self, embedder):
        self._e = embedder
        self.calls = 0

    def embedder(self):
        self.calls += 1
        return self._e

    def llm(self):  # pragma: no cover
        return None


def run(text, embedder, **params):
    ctx = Ctx(embedder)
    res = chunk_semantic(Document("t", text, "text"), {"embedding": "exact", **params}, ctx)
    return res, ctx


def assert_covers(spans, text):
    """Chunks tile the text, in order, none empty or whitespace-only."""
    if not text.strip():
        assert spans == []
        return
    assert spans[0].start == 0 and spans[-1].end == len(text)
    for a, b in zip(spans, spans[1:]):
        assert a.end == b.start
    assert all(text[s.start:s.end].strip() for s in spans)


def test_thresholds_on_a_known_curve():
    d = np.array([0.1, 0.12, 0.11, 0.9, 0.1, 0.13, 0.12, 0.1, 0.11, 0.1])
    t, vals = breakpoint_threshold(d, "percentile", 95)
    assert list(np.nonzero(vals > t)[0]) == [3]
    t, vals = breakpoint_threshold(d, "standard_deviation", 2)
    assert list(np.nonzero(vals > t)[0]) == [3]
    t, vals = breakpoint_threshold(d, "interquartile", 1.5)
    assert list(np.nonzero(vals > t)[0]) == [3]
    t, vals = breakpoint_threshold(d, "gradient", 95)
    assert len(vals) == len(d) and list(np.nonzero(vals > t)[0]) == [2]  # the rise before the peak
    flat = np.zeros(5)
    for kind in ("gradient", "percentile", "standard_deviation", "interquartile"):
        t, vals = breakpoint_threshold(flat, kind, 95 if kind in ("gradient", "percentile") else 1)
        assert not np.any(vals > t + 1e-7)
    e = np.array([[1.0, 0], [1.0, 0], [0, 1.0]])
    assert list(cosine_distances(e)) == [0.0, 1.0]


@pytest.mark.parametrize("text", [
    "",
    "   \n\n  ",
    "One sentence only.",
    "no punctuation at all just a long run of lowercase words that never ends " * 5,
    "Same sentence here. " * 40,
    "# Title\n\nSame line.\n\nSame line.\n\nSame line.\n",
    "First thing. Second thing.",
    "| a | b |\n| --- | --- |\n| 1 | 2 |\n",
])
def test_edge_cases_no_crash_no_empty_chunks(text, embedder):
    res, _ = run(text, embedder)
    assert res.status == "ok"
    assert_covers(res.spans, text)
    if "Same" in text:  # identical sentences: nothing to separate
        assert len(res.spans) == 1


def test_topic_shift_is_found_and_diagnostics_exposed(embedder):
    cooking = ("Preheat the oven to two hundred degrees. Whisk the eggs with the sugar until pale. "
               "Fold the flour gently into the batter. Bake the cake for forty minutes. "
               "Let the cake cool before adding the icing. ")
    space = ("The telescope observed a distant galaxy cluster. Astronomers measured its redshift carefully. "
             "Dark matter dominates the mass of such clusters. Gravitational lensing bends the light of "
             "background galaxies. The survey mapped thousands of galaxies across the sky.")
    text = cooking + space
    res, ctx = run(text, embedder, threshold_type="percentile", threshold_amount=90, buffer_size=0)
    assert ctx.calls == 1
    assert_covers(res.spans, text)
    assert text.index("The telescope") in [s.start for s in res.spans]
    info = res.info
    n = len(info["sentences"])
    assert n == 10 and len(info["distances"]) == n - 1 and len(info["compared"]) == n - 1
    assert isinstance(info["threshold"], float) and info["threshold_type"] == "percentile"
    assert all(0 <= b < n - 1 for b in info["breakpoints"])
    assert len(res.spans) == len(info["breakpoints"]) + 1
    # the paper's default (gradient, 95th percentile, buffer 1) runs on the same text
    res2, _ = run(text, embedder)
    assert_covers(res2.spans, text)
    assert res2.info["threshold_type"] == "gradient" and res2.info["buffer_size"] == 1
    assert res2.info["threshold_amount"] == 95


def test_embeddings_reused_from_the_shared_cache(embedder):
    text = "Alpha is a letter. Beta follows it. Gamma comes third. Delta is fourth."
    run(text, embedder)
    before = embedder.stats.texts_embedded
    run(text, embedder)
    assert embedder.stats.texts_embedded == before  # second run: all from the cache


def test_bad_params_are_param_errors(embedder):
    doc = Document("t", "A. B. C.", "text")
    with pytest.raises(ParamError):
        chunk_semantic(doc, {"threshold_type": "nope"}, Ctx(embedder))
    with pytest.raises(ParamError):
        chunk_semantic(doc, {"threshold_type": "percentile", "threshold_amount": 150}, Ctx(embedder))


def test_registered_with_pp_variant():
    from chunkscope.chunkers import registry

    assert registry.get("semantic").params
    assert registry.get("semantic+pp").id == "semantic+pp"


@pytest.mark.corpus
def test_small_dev_document(corpus_dir, embedder):
    from chunkscope.ingest.reference import load_reference

    path = next(p for p in sorted((corpus_dir / "parsed").glob("*.json")) if "EDPS" in p.name)
    doc = load_reference(path)
    res = chunk_semantic(doc, {"embedding": "exact"}, Ctx(embedder))
    assert res.status == "ok"
    assert_covers(res.spans, doc.text)
    assert 1 < len(res.spans) < len(res.info["sentences"])


# --- property: chunks always tile the text (fast fake embedder, real sentence splitter) ----

from hypothesis import given  # noqa: E402
from hypothesis import settings as hsettings
from hypothesis import strategies as st


class HashEmbedder:
    """Deterministic stand-in: a text's vector depends only on its words (same text, same vector)."""

    name = "hash"

    def encode(self, texts):
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.split():
                out[i, hash(w) % 16] += 1.0
            out[i, 0] += 1e-3
            out[i] /= np.linalg.norm(out[i])
        return out


_WORDS = st.sampled_from(["Cats purr.", "Dogs bark.", "Stars shine.", "# Title\n", "\n\n", " ", "no stop",
                          "Same.", "Same.", "| a | b |\n", "1. item\n", "Why? ", "é"])


@hsettings(max_examples=60, deadline=None)
@given(parts=st.lists(_WORDS, max_size=50), ttype=st.sampled_from(
    ["gradient", "percentile", "standard_deviation", "interquartile"]), buf=st.integers(0, 2))
def test_semantic_chunks_tile_any_text(parts, ttype, buf):
    text = "".join(parts)
    ctx = Ctx(HashEmbedder())
    res = chunk_semantic(Document("t", text, "text"),
                         {"threshold_type": ttype, "buffer_size": buf, "embedding": "exact"}, ctx)
    assert res.status == "ok"
    assert_covers(res.spans, text)
