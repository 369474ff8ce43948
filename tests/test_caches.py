"""Process caches under attack: at their cap, from many threads at once, they return exactly what
an uncapped run returns (the old clear-all dictionaries raised KeyError or silently dropped
sentence boundaries); and cache keys cover everything that changes a result."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from chunkscope.caching import BoundedCache
from chunkscope.embeddings import embedder as embeddings
from chunkscope.text import sentences, tokens

PARAS = [
    f"Paragraph {i} starts here. It has a second sentence about topic {i}! Does it ask {i} questions? "
    f"Yes, and it ends with number {i * 7}."
    for i in range(40)
]


def _hammer(fn, jobs, threads=8):
    with ThreadPoolExecutor(threads) as ex:
        return list(ex.map(fn, jobs))


def test_bounded_cache_evicts_one_entry_not_all():
    c: BoundedCache[int, int] = BoundedCache(3)
    for i in range(3):
        c.put(i, i)
    c.get(0)  # recently used: survives
    c.put(3, 3)
    assert len(c) == 3 and 0 in c and 1 not in c and 2 in c and 3 in c


def test_sentence_cache_at_cap_gives_correct_boundaries_from_many_threads(monkeypatch):
    texts = ["\n\n".join(PARAS[i:i + 6]) for i in range(0, 34, 3)]
    expected = [sentences.sentence_boundaries(t) for t in texts]
    assert all(len(b) > 6 for b in expected)
    # a tiny cap: every call evicts units another thread is about to use
    monkeypatch.setattr(sentences, "_unit_cache", BoundedCache(3))
    got = _hammer(sentences.sentence_boundaries, texts * 6)
    assert got == expected * 6
    assert len(sentences._unit_cache) <= 3


def test_token_cache_at_cap_counts_correctly_from_many_threads(monkeypatch):
    pieces = [p[: 20 + i] for i, p in enumerate(PARAS)]
    expected = [len(tokens.encode(p)) for p in pieces]
    monkeypatch.setattr(tokens, "_counts", BoundedCache(5))
    batches = [pieces[i:] + pieces[:i] for i in range(0, 40, 2)]  # > 16 uncached: the batch path too
    got = _hammer(tokens.count_many, batches)
    assert got == [expected[i:] + expected[:i] for i in range(0, 40, 2)]
    assert _hammer(tokens.count_tokens, pieces) == expected


class _HashModel:
    """A deterministic sentence-transformers stand-in: a text's vector is a function of its bytes."""

    max_seq_length = 64
    tokenizer = None

    def __init__(self):
        self.calls = 0
        self.lock = threading.Lock()

    def get_sentence_embedding_dimension(self):
        return 8

    def encode(self, texts, **kw):
        with self.lock:
            self.calls += 1
        return np.stack([_vec(t) for t in texts])


def _vec(text: str) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(text)) % (2**32))
    v = rng.standard_normal(8).astype(np.float32)
    return v / np.linalg.norm(v)


def test_embedding_memory_cache_at_cap_returns_correct_vectors_from_many_threads(monkeypatch):
    monkeypatch.setattr(embeddings, "_MEMORY_MAX", 4)
    monkeypatch.setattr(embeddings, "_memory", {})
    model = _HashModel()
    emb = embeddings.Embedder(model, "hash-model-cap-test", cache_dir=None)
    batches = [PARAS[i:i + 12] for i in range(0, 28)]  # 12 texts per call, cache holds 4
    got = _hammer(emb.encode, batches)  # the old cache raised KeyError here
    for batch, arr in zip(batches, got):
        assert np.allclose(arr, np.stack([_vec(t) for t in batch]))
    assert len(emb._memory) <= 4


# ------------------------------------------------------------------ keys
def test_fingerprint_covers_source_format_and_headings():
    from chunkscope.document import Heading
    from chunkscope.ingest import load_bytes

    data = b"# Title\n\nSome text here. And more text.\n\n## Part\n\nBody of the part.\n"
    md, txt = load_bytes(data, "x.md"), load_bytes(data, "x.txt")
    assert md.sha256 == txt.sha256
    assert md.fingerprint != txt.fingerprint
    other = load_bytes(data, "x.md")
    assert other.fingerprint == md.fingerprint
    other.headings = [Heading(0, 7, 2, "Title")]  # same text and blocks, other headings
    assert other.fingerprint != md.fingerprint


def test_corpus_resume_key_covers_the_format():
    from chunkscope.corpus.plan import resume_key

    assert resume_key("sha", "", {}, {}, suffix=".md") != resume_key("sha", "", {}, {}, suffix=".txt")


def test_llm_key_never_ignores_the_llm_when_settings_fail():
    from chunkscope.tune import _llm_key

    class Broken:
        def llm_settings(self):
            raise RuntimeError("settings unreadable")

    k1, k2 = _llm_key("llm-regex", Broken()), _llm_key("llm-regex", Broken())
    assert k1 and k2 and k1 != k2  # never "" (which would share the result of any endpoint)
    assert "unavailable" in json.loads(k1)
    assert _llm_key("recursive-1100", Broken()) == ""  # no LLM: nothing to key on


def test_corpus_llm_identity_is_unique_when_settings_fail(monkeypatch):
    from chunkscope.corpus import plan as corpus
    from chunkscope.llm import LLMSettings

    def boom(*a, **k):
        raise ValueError("bad environment")

    monkeypatch.setattr(LLMSettings, "from_env", classmethod(lambda cls, *a, **k: boom()))
    a, b = corpus._llm_identity(), corpus._llm_identity()
    assert a and a != b


# ------------------------------------------------------------------ bounded tokenizer work
def test_long_texts_are_counted_in_segments_exactly(monkeypatch):
    monkeypatch.setattr(tokens, "SEGMENT_CHARS", 300)
    text = " ".join(PARAS) * 3
    assert len(tokens._segments(text)) > 10
    assert "".join(tokens._segments(text)) == text
    assert tokens.encode(text) == tokens.encoding().encode_ordinary(text)


def test_a_tokenizer_panic_becomes_one_clear_error(monkeypatch):
    class Panic(BaseException):  # what pyo3 raises when tiktoken's Rust core panics
        pass

    class Enc:
        def encode_ordinary(self, text):
            raise Panic("called `Result::unwrap()` on an `Err` value")

    monkeypatch.setattr(tokens, "encoding", lambda: Enc())
    monkeypatch.setattr(tokens, "_counts", BoundedCache(10))
    import pytest

    with pytest.raises(tokens.TokenizerFailed, match="cannot count tokens"):
        tokens.count_tokens("some text")


def test_deeply_nested_json_is_one_clear_error():
    import pytest

    from chunkscope.ingest import IngestError, load_bytes

    with pytest.raises(IngestError, match="nested too deeply"):
        load_bytes(b"[" * 100_000 + b"]" * 100_000, "deep.json")


def test_a_pdf_over_the_page_limit_is_refused_before_parsing(monkeypatch):
    import pymupdf
    import pytest

    from chunkscope.ingest import IngestError, load_bytes

    d = pymupdf.open()
    for _ in range(30):
        d.new_page()
    monkeypatch.setenv("CHUNKSCOPE_MAX_PAGES", "20")
    with pytest.raises(IngestError, match="30 pages; the limit is 20"):
        load_bytes(d.tobytes(), "many.pdf")


def test_cache_root_is_one_policy_per_kind(monkeypatch, tmp_path):
    """With CHUNKSCOPE_CACHE_DIR every disk cache lives below it; without it LLM answers go to the user's cache
    directory, coreference pairs and embedding vectors stay in memory, the app's scratch files go to temp."""
    import tempfile

    from platformdirs import user_cache_dir

    from chunkscope.caching import CACHE_DIR_ENV, cache_root

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    assert all(cache_root(k) == tmp_path for k in ("llm", "coref", "embeddings", "scratch"))
    monkeypatch.setenv(CACHE_DIR_ENV, "  ")
    assert cache_root("coref") is None
    monkeypatch.delenv(CACHE_DIR_ENV)
    assert cache_root("llm") == Path(user_cache_dir("chunkscope", appauthor=False, opinion=False))
    assert cache_root("coref") is None and cache_root("embeddings") is None
    assert cache_root("scratch") == Path(tempfile.gettempdir())
