"""The ONNX Runtime backends: same model output as sentence-transformers, token-state fragments,
cache keys and provenance by backend and precision."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from chunkscope import metrics as M
from chunkscope.document import Span
from chunkscope.embeddings.embedder import Embedder, EmbedderUnavailable, backend_facts, resolve_backend
from chunkscope.embeddings.spans import SpanEmbedder

TEXTS = [
    "The controller shall notify the supervisory authority of a personal data breach without undue delay.",
    "Consent can be withdrawn at any time.",
    "zz top",
    "Records are kept by the controller. " * 40,  # beyond 256 model tokens: truncated like the reference
    "Données à caractère personnel — traitement licite, loyal et transparent.",
]
TEXT = ("# Breach notification\n\nThe controller shall notify the supervisory authority of a personal data "
        "breach. It shall do so without undue delay, and where feasible, not later than 72 hours after having "
        "become aware of it.\n\n## Processors\n\nThe processor shall notify the controller without undue delay "
        "after becoming aware of a personal data breach. It keeps records of every breach.\n\n"
        "| article | days |\n|---|---|\n| 33 | 3 |\n")
SPLIT = [TEXT.index("## Processors"), TEXT.index("| article")]


@pytest.fixture(scope="module")
def reference():
    try:
        return Embedder.load(cache_dir=None, backend="reference")
    except EmbedderUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module", params=["onnx", "onnx-int8"])
def onnx(request, tmp_path_factory):
    from chunkscope.embeddings import onnx as eo

    if eo.export_status():  # no export yet (fresh checkout without make setup): export to a temp dir
        import os

        os.environ["CHUNKSCOPE_MODELS_DIR"] = str(tmp_path_factory.mktemp("models"))
        eo.export(log=lambda m: None)
    return Embedder.load(cache_dir=None, backend=request.param)


def test_backend_choice_and_facts():
    assert resolve_backend(None) == "onnx-int8" and resolve_backend("/some/model") == "reference"
    assert backend_facts(None, "onnx") == {"backend": "onnxruntime", "precision": "fp32"}
    assert backend_facts(None, "reference") == {"backend": "sentence-transformers", "precision": "fp32"}
    with pytest.raises(ValueError):
        resolve_backend(None, "tensorrt")
    with pytest.raises(EmbedderUnavailable, match="bundled"):
        Embedder.load("/tmp", backend="onnx")


def test_same_vectors_as_sentence_transformers(reference, onnx):
    got = onnx.encode(TEXTS)
    want = reference.model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    cos = (got * want).sum(axis=1)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    if onnx.precision == "fp32":
        assert cos.min() > 0.99999
    else:
        # int8 weights: close, not equal (winner agreement on the corpus: docs/performance.md)
        assert cos.min() > 0.9 and cos.mean() > 0.95
    # same tokenizer: token counts and offsets as the reference's fast tokenizer
    assert onnx.model_tokens(TEXTS) == reference.model_tokens(TEXTS)
    assert onnx.token_offsets(TEXTS) == reference.token_offsets(TEXTS)
    # and the same unknown tokens (the "weak signal" warning for text the vocabulary cannot spell)
    mixed = [*TEXTS, "欢迎使用本模板，这个模板可以减轻排版工作量。"]
    assert onnx.unknown_share(mixed) == reference.unknown_share(mixed) > 0


def test_cache_keys_and_provenance_name_backend_and_precision(reference, onnx):
    assert onnx.key != reference.key and onnx.key.endswith(f"|onnxruntime|{onnx.precision}")
    assert onnx.backend == "onnxruntime" and reference.backend == "sentence-transformers"
    from chunkscope.analysis import Settings
    from chunkscope.provenance import provenance, provenance_key

    p = provenance(Settings())["embedding"]
    assert p["backend"] == "onnxruntime" and p["precision"] == "int8"
    assert provenance_key(Settings()) != provenance_key(Settings(embedding_backend="reference"))


def test_token_fragments_are_close_to_encoded_fragments(onnx):
    tok = SpanEmbedder(TEXT, onnx, split_points=SPLIT, fragments="tokens")
    enc = SpanEmbedder(TEXT, onnx, split_points=SPLIT)
    assert tok.fragment_mode == "tokens" and enc.fragment_mode == "encode"
    cuts = [Span(0, 70), Span(70, 190), Span(190, 333), Span(333, len(TEXT))]  # mid-sentence everywhere
    a, b = tok.embed(cuts), enc.embed(cuts)
    assert tok.token_fragments > 0 and tok.fragments == 0  # no model call for the fragments
    assert ((a * b).sum(axis=1) > 0.75).all()  # an approximation: further from exact mode than "encode"
    icc_t = M.intrachunk_cohesion(cuts, SPLIT, tok.embed).value
    icc_e = M.intrachunk_cohesion(cuts, SPLIT, enc.embed).value
    assert icc_t == pytest.approx(icc_e, abs=0.05)
    # a second span embedder of the same document (vectors cached) composes the same spans
    again = SpanEmbedder(TEXT, onnx, split_points=SPLIT, fragments="tokens").embed(cuts)
    assert np.allclose(again, a, atol=1e-6)


def test_int8_texts_shared_with_a_helper_thread_give_the_same_vectors(onnx):
    """int8 runs one text per call: an encode call shares its texts with a thread that helps (the
    analysis's caller thread), and every vector is the one the text gets alone."""
    import threading

    if onnx.precision != "int8":
        pytest.skip("fp32 batches by length: nothing to share")
    texts = [f"{t} ({i})" for i in range(12) for t in TEXTS]
    alone = np.stack([onnx.model.encode([t])[0] for t in texts])
    got: dict[str, np.ndarray] = {}
    owner = threading.Thread(target=lambda: got.setdefault("v", onnx.model.encode(texts)))
    owner.start()
    helped = 0
    while owner.is_alive():
        helped += onnx.help_encode()
    owner.join()
    assert np.array_equal(got["v"], alone)
    assert onnx.help_encode() == 0  # nothing in progress: nothing to take
    assert helped <= len(texts)


def test_shared_run_lets_ctrl_c_through_the_thread_that_got_it():
    """Ctrl-C while the main thread helps an int8 encode call: the main thread stops (before, the
    interrupt was handed to the embedding thread only, and the analysis died of a KeyError)."""
    from types import SimpleNamespace

    import numpy as np

    from chunkscope.embeddings.onnx import _SharedRun

    enc = [SimpleNamespace(ids=[1, 2, 3]), SimpleNamespace(ids=[1])]

    def interrupted(e, normalize):
        raise KeyboardInterrupt

    run = _SharedRun(enc, np.zeros((2, 4)), True)
    with pytest.raises(KeyboardInterrupt):
        run.work(interrupted)
    with pytest.raises(KeyboardInterrupt):
        run.wait()  # the caller sees it too

    def broken(e, normalize):
        raise ValueError("bad text")

    run = _SharedRun(enc, np.zeros((2, 4)), True)
    assert run.work(broken) == 1  # an ordinary error is kept for the caller, the helper carries on
    with pytest.raises(ValueError):
        run.wait()


def test_a_helper_runs_a_bounded_share_and_the_pass_says_how_far_it_is():
    """The analysis's thread helps the unit pass a few texts at a time, so it can report progress between them
    (a 2,415-page PDF's pass sat at "0.0%" for 164 s)."""
    from types import SimpleNamespace

    import numpy as np

    from chunkscope.embeddings.onnx import OnnxSentenceModel, _SharedRun

    enc = [SimpleNamespace(ids=[1] * (k + 1)) for k in range(10)]
    run = _SharedRun(enc, np.zeros((10, 2)), True)
    assert run.work(lambda e, n: np.ones(2), limit=3) == 3 and run.next == 3
    model = OnnxSentenceModel.__new__(OnnxSentenceModel)  # only the job list: no session needed here
    model._jobs, model._jobs_lock = [run], threading.Lock()
    model._run_one = lambda e, n: np.ones(2)
    assert model.pending() == (3, 10)
    assert model.help(4) == 4 and model.pending() == (7, 10)
    assert model.help() == 3 and model.pending() == (10, 10)
    run.wait()
    assert run.out.sum() == 20


@pytest.mark.slow
def test_the_setup_export_prints_one_line_and_no_advice(tmp_path):
    """`make setup` runs the export: one line, no weight-loading progress bar, no onnxruntime advice about
    pre-processing (which read like an instruction to the user)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "chunkscope.embeddings.onnx", "--force", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    said = (out.stdout + out.stderr).strip().splitlines()
    assert len(said) == 1 and said[0].startswith("exported ONNX fp32 + int8"), said
