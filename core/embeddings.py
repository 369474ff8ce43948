"""Embeddings for ICC and DCC: an ``Embedder`` around any sentence-transformers model and a
``SpanEmbedder`` that embeds document spans in one of two modes.

* ``exact``: each span's text is encoded as is (the paper's way); texts beyond the
  model's maximum length are truncated by the model and a warning is collected.
* ``composed`` (default): the document is split once into *units* (sentences inside
  gold blocks, long ones cut to the model's maximum length), every unit is embedded
  once, and a span's embedding is the normalised token-weighted mean of the units it
  covers, plus its partially covered edge fragments embedded on their own. Weighted
  unit vectors are prefix-summed, so a span costs O(1) plus at most two fragments.

Every encoded text is cached by (model key, sha1(text)) in memory (per process) and,
when ``CHUNKSCOPE_CACHE_DIR`` (or ``cache_dir``) is set, on disk in one SQLite file per
model. A second analysis of the same document therefore embeds nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from chunkscope.bundled_model import EmbedderUnavailable, bundled_model_path
from chunkscope.caching import BoundedCache, DiskKV
from chunkscope.document import Span, span_pairs

BUNDLED_NAME = "all-MiniLM-L6-v2"
MODES = ("composed", "exact")
# how the model runs: "reference" = sentence-transformers on torch, fp32 (any model); "onnx" /
# "onnx-int8" = the bundled model on ONNX Runtime (chunkscope.embeddings_onnx); "auto" = the
# default: DEFAULT_BACKEND for the bundled model, "reference" for any other model
BACKENDS = ("auto", "reference", "onnx", "onnx-int8")
DEFAULT_BACKEND = "onnx-int8"
_BACKEND_FACTS = {"reference": ("sentence-transformers", "fp32"), "onnx": ("onnxruntime", "fp32"),
                  "onnx-int8": ("onnxruntime", "int8")}


def is_bundled(name_or_path: str | None) -> bool:
    return name_or_path is None or name_or_path in (BUNDLED_NAME, f"sentence-transformers/{BUNDLED_NAME}")


def resolve_backend(name_or_path: str | None, backend: str = "auto") -> str:
    """The backend a run uses: "auto" -> DEFAULT_BACKEND for the bundled model, else "reference"."""
    if backend not in BACKENDS:
        raise ValueError(f"embedding backend must be one of {', '.join(BACKENDS)} (got {backend!r})")
    if backend == "auto":
        return DEFAULT_BACKEND if is_bundled(name_or_path) else "reference"
    return backend


def backend_facts(name_or_path: str | None, backend: str = "auto") -> dict[str, str]:
    """{"backend": runtime, "precision": ...} as reports and cache keys name them."""
    run, precision = _BACKEND_FACTS[resolve_backend(name_or_path, backend)]
    return {"backend": run, "precision": precision}


@runtime_checkable
class EmbedderProtocol(Protocol):
    name: str
    max_tokens: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass
class EmbedStats:
    model_calls: int = 0  # batches sent to the model
    texts_embedded: int = 0  # texts actually encoded by the model
    memory_hits: int = 0
    disk_hits: int = 0
    seconds: float = 0.0  # time spent in the model

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- loading
_MODELS_MAX = 4  # loaded models kept per process (least recently used dropped)
_models: BoundedCache[tuple[str, str | None], Any] = BoundedCache(_MODELS_MAX)
_MEMORY_MAX = 100_000  # vectors per model (~150 MB for 384-d float32)
_memory: dict[str, BoundedCache[str, np.ndarray]] = {}  # model key -> sha1(text) -> vector (LRU)
_memory_lock = threading.Lock()


def _memory_for(key: str) -> BoundedCache[str, np.ndarray]:
    with _memory_lock:
        cache = _memory.get(key)
        if cache is None:
            cache = _memory[key] = BoundedCache(_MEMORY_MAX)
        return cache
_load_lock = threading.Lock()


def _resolve(name_or_path: str | None) -> tuple[str, str]:
    """(display name, local path or hub id to load)."""
    if name_or_path is None or is_bundled(name_or_path):
        path = bundled_model_path()
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        return BUNDLED_NAME, str(path)
    p = Path(name_or_path).expanduser()
    if p.exists():
        if not p.is_dir():
            raise EmbedderUnavailable(f"embedding model path {p} is not a directory")
        return str(p.resolve()), str(p.resolve())
    if name_or_path.startswith((".", "/", "~")) or os.sep in name_or_path.strip("/").replace("/", "", 1):
        raise EmbedderUnavailable(f"embedding model not found: no directory {p}")
    # a hub id: use the local Hugging Face cache first; reach the hub only when allowed
    try:
        from huggingface_hub import snapshot_download

        return name_or_path, snapshot_download(name_or_path, local_files_only=True)
    except Exception:
        if os.environ.get("HF_HUB_OFFLINE") == "1":
            raise EmbedderUnavailable(
                f"embedding model '{name_or_path}' is not in the local Hugging Face cache and HF_HUB_OFFLINE=1: "
                "download it first or pass a local directory"
            ) from None
        return name_or_path, name_or_path


HUB_PROBE_TIMEOUT_S = 5.0  # :func:`locate` asks the hub once, this long at most


def _backend_check(name_or_path: str | None, chosen: str) -> None:
    if chosen != "reference" and not is_bundled(name_or_path):
        raise EmbedderUnavailable(f"the {chosen} backend runs the bundled model only ({BUNDLED_NAME}); "
                                  "use --embedding-backend reference for other models")


def _probe_hub(name: str, timeout: float) -> None:
    """One request to the hub for ``name`` (no retries): loading it straight away would retry an
    unreachable download for minutes."""
    try:
        from huggingface_hub import HfApi
    except ImportError:
        return
    try:
        HfApi().model_info(name, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - any failure means the load would fail or hang
        if type(exc).__name__ in ("RepositoryNotFoundError", "HFValidationError"):
            raise EmbedderUnavailable(f"no model {name!r} on the Hugging Face hub (and none in the local cache)") from None
        raise EmbedderUnavailable(
            f"model {name!r} is not in the local Hugging Face cache and the hub cannot be reached "
            f"({type(exc).__name__}: {' '.join(str(exc).split())[:120]}): download it first or pass a local directory"
        ) from None


def locate(name_or_path: str | None, backend: str = "auto", hub_timeout: float | None = HUB_PROBE_TIMEOUT_S) -> None:
    """Check, without loading it, that :meth:`Embedder.load` can find this model: the backend runs it,
    a local path is a directory, a hub id is in the local cache (or, unless HF_HUB_OFFLINE, the hub
    answers within ``hub_timeout`` seconds; None: not asked). Raises ``EmbedderUnavailable``."""
    chosen = resolve_backend(name_or_path, backend)
    _backend_check(name_or_path, chosen)
    if is_bundled(name_or_path):
        bundled_model_path()
        return
    _, target = _resolve(name_or_path)  # the path checks and the offline cache, as a load does them
    assert name_or_path is not None
    if target == name_or_path and not Path(name_or_path).expanduser().exists() and hub_timeout is not None:
        _probe_hub(name_or_path, hub_timeout)  # a hub id not cached, the hub allowed


def _load_model(target: str, device: str | None):
    key = (target, device)
    with _load_lock:
        m = _models.get(key)
        if m is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise EmbedderUnavailable("sentence-transformers is not installed") from None
            try:
                m = SentenceTransformer(target, device=device)
            except Exception as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise EmbedderUnavailable(f"cannot load embedding model '{target}': {first}") from None
            _models.put(key, m)
        return m


def _load_onnx(precision: str, device: str | None):
    """The bundled model on ONNX Runtime (exported at ``make setup``; exported now when missing)."""
    key = (f"onnx:{precision}", device)
    with _load_lock:
        m = _models.get(key)
        if m is None:
            try:
                from chunkscope import embeddings_onnx as eo
            except ImportError as exc:
                raise EmbedderUnavailable(f"the ONNX backend needs onnxruntime and tokenizers ({exc})") from None
            problem = eo.export_status()
            if problem:
                try:
                    eo.export(log=lambda msg: None)
                except Exception as exc:
                    raise EmbedderUnavailable(f"{problem}; exporting it failed: {type(exc).__name__}: {exc}") from None
            try:
                m = eo.OnnxSentenceModel(precision, device)
            except Exception as exc:
                raise EmbedderUnavailable(f"cannot load the ONNX model ({precision}): {exc}") from None
            _models.put(key, m)
        return m


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


class _DiskCache:
    """One SQLite file per model key (``chunkscope.caching.DiskKV``: sha1 -> float32 vector), bounded with
    the other disk caches on a shared server."""

    def __init__(self, directory: str | Path, model_key: str, dim: int):
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model_key)[-60:]
        self.path = Path(directory) / "embeddings" / f"{safe}-{_sha1(model_key)[:10]}.sqlite"
        self.dim = dim
        self._kv = DiskKV(self.path)

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for k, blob in self._kv.get_many(keys).items():
            v = np.frombuffer(blob, dtype=np.float32)
            if v.shape[0] == self.dim:
                out[k] = v
        return out

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        self._kv.put_many({k: np.asarray(v, dtype=np.float32).tobytes() for k, v in items.items()})


class Embedder:
    """A sentence-transformers model with normalised float32 output and a text cache."""

    def __init__(self, model: Any, name: str, cache_dir: str | Path | None = None, batch_size: int = 32):
        self.model = model
        self.name = name
        self.max_tokens = int(getattr(model, "max_seq_length", None) or 512)
        self.batch_size = batch_size
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self.backend = str(getattr(model, "runtime", "sentence-transformers"))
        self.precision = str(getattr(model, "precision", "fp32"))
        self.device = str(getattr(model, "device", "cpu"))
        # vectors of one runtime and precision never serve another (the reference keeps its old key)
        self.key = f"{name}|max{self.max_tokens}" + (
            "" if self.backend == "sentence-transformers" else f"|{self.backend}|{self.precision}")
        self.stats = EmbedStats()
        self._memory = _memory_for(self.key)
        self._disk = _DiskCache(cache_dir, self.key, self.dim) if cache_dir else None
        tok = getattr(model, "tokenizer", None)
        self.tokenizer = tok if getattr(tok, "is_fast", False) else None
        self._special = len(tok("")["input_ids"]) if tok is not None else 2

    @classmethod
    def load(
        cls, name_or_path: str | None = None, device: str | None = None, cache_dir: str | Path | None = "env",
        backend: str = "auto",
    ) -> "Embedder":
        """Load a model: None -> bundled all-MiniLM-L6-v2; else a local directory or a hub id.

        ``backend``: one of ``BACKENDS`` ("auto": ONNX Runtime int8 for the bundled model,
        sentence-transformers for any other). ``cache_dir="env"`` (default) takes
        ``CHUNKSCOPE_CACHE_DIR`` (no disk cache if unset). Raises ``EmbedderUnavailable`` with a
        one-line reason when the model cannot be loaded.
        """
        chosen = resolve_backend(name_or_path, backend)
        if chosen != "reference":
            _backend_check(name_or_path, chosen)
            bundled_model_path()  # the same clear error when the weights are missing
            name, model = BUNDLED_NAME, _load_onnx(_BACKEND_FACTS[chosen][1], device)
            if cache_dir == "env":
                cache_dir = os.environ.get("CHUNKSCOPE_CACHE_DIR") or None
            return cls(model, name, cache_dir=cache_dir)
        name, target = _resolve(name_or_path)
        model = _load_model(target, device)
        if cache_dir == "env":
            cache_dir = os.environ.get("CHUNKSCOPE_CACHE_DIR") or None
        return cls(model, name, cache_dir=cache_dir)

    @property
    def content_limit(self) -> int:
        """Maximum model tokens of a text without the special tokens the model adds."""
        return max(8, self.max_tokens - self._special)

    def detach_disk_cache(self) -> None:
        """Stop reading and writing the on-disk vector cache (corpus workers: each document's vectors
        come from its own texts)."""
        self._disk = None

    def clear_memory_cache(self) -> None:
        self._memory.clear()

    def model_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts in the model's tokenizer, special tokens included (what truncation sees)."""
        tok = getattr(self.model, "tokenizer", None)
        if tok is None:
            return [len(t.split()) + self._special for t in texts]
        out: list[int] = []
        for i in range(0, len(texts), 256):
            enc = tok(list(texts[i:i + 256]), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
            out.extend(len(e) for e in enc)
        return out

    def token_offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]] | None:
        """Character offsets of the model's content tokens per text (None without a fast tokenizer)."""
        if self.tokenizer is None:
            return None
        out: list[list[tuple[int, int]]] = []
        for i in range(0, len(texts), 256):
            enc = self.tokenizer(list(texts[i:i + 256]), add_special_tokens=False, truncation=False,
                                 return_offsets_mapping=True, verbose=False)["offset_mapping"]
            out.extend([tuple(o) for o in e] for e in enc)
        return out

    def unknown_share(self, texts: Sequence[str]) -> float | None:
        """The share of the model's content tokens of ``texts`` that are its unknown token ([UNK]): text
        its vocabulary cannot spell, which the model does not see. None without a fast tokenizer that has one."""
        tok = self.tokenizer
        unk = getattr(tok, "unk_token_id", None)
        if tok is None or unk is None:
            return None
        total = unknown = 0
        for i in range(0, len(texts), 256):
            for ids in tok(list(texts[i:i + 256]), add_special_tokens=False, truncation=False,
                           verbose=False)["input_ids"]:
                total += len(ids)
                unknown += sum(t == unk for t in ids)
        return unknown / total if total else None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text (cached by text)."""
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        keys = [_sha1(t) for t in texts]
        # every vector this call returns is held here: the shared LRU may evict any of them meanwhile
        got = self._memory.get_many(keys)
        missing: dict[str, str] = {}
        for k, t in zip(keys, texts):
            if k in got:
                self.stats.memory_hits += 1
            elif k not in missing:
                missing[k] = t
        if missing and self._disk is not None:
            found = self._disk.get_many(list(missing))
            self.stats.disk_hits += len(found)
            for k, v in found.items():
                got[k] = self._remember(k, v)
                del missing[k]
        if missing:
            t0 = time.perf_counter()
            mk = list(missing)
            vecs = self.model.encode(
                [missing[k] for k in mk], batch_size=self.batch_size, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            ).astype(np.float32, copy=False)
            self.stats.model_calls += (len(mk) + self.batch_size - 1) // self.batch_size
            self.stats.texts_embedded += len(mk)
            self.stats.seconds += time.perf_counter() - t0
            new = {}
            for k, v in zip(mk, vecs):
                v = np.array(v, dtype=np.float32)
                got[k] = new[k] = self._remember(k, v)
            if self._disk is not None:
                self._disk.put_many(new)
        for i, k in enumerate(keys):
            out[i] = got[k]
        return out

    def lookup(self, texts: Sequence[str]) -> np.ndarray | None:
        """The cached embeddings of ``texts`` (memory, then disk) when every one is cached, else None."""
        keys = [_sha1(t) for t in texts]
        got = self._memory.get_many(keys)  # held here: the shared LRU may evict them meanwhile
        missing = [k for k in dict.fromkeys(keys) if k not in got]
        if missing and self._disk is not None:
            found = self._disk.get_many(missing)
            for k, v in found.items():
                got[k] = self._remember(k, v)
            self.stats.disk_hits += len(found)
            missing = [k for k in missing if k not in found]
        if missing:
            return None
        self.stats.memory_hits += len(keys)
        return np.stack([got[k] for k in keys]) if keys else np.zeros((0, self.dim), dtype=np.float32)

    def help_encode(self, limit: int | None = None) -> int:
        """Run texts of another thread's ``encode`` call in progress (the int8 ONNX model runs one
        text per call, so which thread runs a text changes nothing), at most ``limit``; 0 when there is
        nothing to take or the model cannot share. Returns how many texts this thread ran."""
        helper = getattr(self.model, "help", None)
        return int(helper(limit)) if helper is not None else 0

    def encode_progress(self) -> tuple[int, int] | None:
        """(texts taken, texts) of the encode calls in progress, when the model can tell (ONNX)."""
        pending = getattr(self.model, "pending", None)
        return pending() if pending is not None else None

    @property
    def supports_tokens(self) -> bool:
        """Whether the model returns token states with its embeddings (the ONNX backends)."""
        return hasattr(self.model, "encode_with_tokens")

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """One model pass: embeddings (cached like ``encode``) and each text's content-token states
        and character offsets (not cached: a composed analysis keeps them for its edge fragments)."""
        texts = list(texts)
        t0 = time.perf_counter()
        vecs, toks = self.model.encode_with_tokens(texts, batch_size=self.batch_size)
        self.stats.model_calls += (len(texts) + self.batch_size - 1) // self.batch_size
        self.stats.texts_embedded += len(texts)
        self.stats.seconds += time.perf_counter() - t0
        new = {}
        for t, v in zip(texts, vecs):
            k = _sha1(t)
            if k not in new:
                new[k] = self._remember(k, np.array(v, dtype=np.float32))
        if self._disk is not None and new:
            self._disk.put_many(new)
        return vecs, toks

    def _remember(self, key: str, vec: np.ndarray) -> np.ndarray:
        return self._memory.put(key, vec)


# --------------------------------------------------------------------------- units
def _fallback_sentence_starts(text: str, start: int, end: int) -> list[int]:
    out = []
    for m in re.finditer(r"\S[^\n]*?(?:[.!?](?=\s)|\n|$)", text[start:end]):
        out.append(start + m.start())
    return out


def _sentence_starts(text: str, start: int, end: int) -> list[int]:
    try:
        from chunkscope.sentences import sentence_boundaries
    except ImportError:  # pragma: no cover - only before chunkscope.sentences exists
        return _fallback_sentence_starts(text, start, end)
    return sentence_boundaries(text, start, end)


def document_units(text: str, split_points: Sequence[int], embedder: Embedder | None = None,
                   max_chars: int = 1000) -> list[Span]:
    """Units tiling ``[0, len(text))``: sentences inside gold blocks (whitespace attached to the
    preceding unit), each cut to the model's maximum length (model tokens when the embedder has
    a fast tokenizer, else ``max_chars`` characters)."""
    return _units_and_weights(text, split_points, embedder, max_chars)[0]


def _units_and_weights(text: str, split_points: Sequence[int], embedder: Any, max_chars: int = 1000
                       ) -> tuple[list[Span], list[float] | None]:
    """Units and their model-token counts (None without a tokenizer)."""
    n = len(text)
    if n == 0:
        return [], []
    edges = [0, *[p for p in split_points if 0 < p < n], n]
    cuts: set[int] = set(edges)
    try:
        from chunkscope.sentences import sentence_boundaries_many
    except ImportError:  # pragma: no cover
        for a, b in zip(edges, edges[1:]):
            cuts.update(_sentence_starts(text, a, b))
    else:  # every block's sentences in one batch
        for found in sentence_boundaries_many(text, list(zip(edges, edges[1:]))):
            cuts.update(found)
    starts = sorted(c for c in cuts if 0 <= c < n)
    units = [(a, b) for a, b in zip(starts, starts[1:] + [n])]
    limit = embedder.content_limit if embedder is not None else None
    offsets = embedder.token_offsets([text[a:b] for a, b in units]) if embedder is not None else None
    out: list[Span] = []
    weights: list[float] | None = [] if offsets is not None else None
    for i, (a, b) in enumerate(units):
        if offsets is not None and limit is not None and weights is not None:
            offs = offsets[i]
            if len(offs) <= limit:
                out.append(Span(a, b))
                weights.append(float(len(offs)))
                continue
            pos, count = a, 0
            for k in range(limit, len(offs), limit):
                cut = a + offs[k][0]
                if cut > pos:
                    out.append(Span(pos, cut))
                    weights.append(float(k - count))
                    pos, count = cut, k
            out.append(Span(pos, b))
            weights.append(float(len(offs) - count))
        else:
            pos = a
            while b - pos > max_chars:
                cut = text.rfind(" ", pos + max_chars // 2, pos + max_chars)
                cut = pos + max_chars if cut <= pos else cut
                out.append(Span(pos, cut))
                pos = cut
            out.append(Span(pos, b))
    return out, weights


# --------------------------------------------------------------------------- spans
UNKNOWN_WARN = 0.02  # a share of [UNK] tokens this high means the model misses part of the text
# (measured with the bundled model: at most 0.2% on 22 English documents, corpus and PDFs; 15% and 30% on Chinese PDFs)
_VOCAB_SAMPLE = 100_000  # characters read from each of the text's start, middle and end
MULTILINGUAL_EXAMPLE = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"  # loads as any other model


def _is_bundled_model(name: str) -> bool:
    """The bundled MiniLM, by its name or loaded from its folder (no exception when the package is missing)."""
    if is_bundled(name):
        return True
    try:
        return name == str(bundled_model_path().resolve())
    except EmbedderUnavailable:
        return False


def vocabulary_caveat(embedder: Any, text: str, language: str) -> str:
    """Why ICC and DCC mean less on this text with this model, or "": the model's vocabulary cannot spell a
    share of the text (``Embedder.unknown_share`` >= ``UNKNOWN_WARN``), or the bundled model, trained on
    English, reads a document in another language (``language``: an ISO 639-1 code, "und" when unknown)."""
    from chunkscope.language import LANGUAGE_NAMES, UNKNOWN, language_name

    n = _VOCAB_SAMPLE
    sample = [text] if len(text) <= 3 * n else [text[:n], text[(len(text) - n) // 2:(len(text) + n) // 2], text[-n:]]
    lines = [line for part in sample for line in part.splitlines() if line.strip()]
    share = getattr(embedder, "unknown_share", lambda _: None)(lines) if lines else None
    name = str(getattr(embedder, "name", "the model"))
    known = language not in (UNKNOWN, "")
    english_only = known and language != "en" and _is_bundled_model(name)
    if share is not None and share < UNKNOWN_WARN:
        share = None
    if share is None and not english_only:
        return ""
    named = language in LANGUAGE_NAMES  # "German (de)"; a code without a name here: "language 'sw'"
    said = []
    if english_only:
        said.append(f"the bundled {BUNDLED_NAME} was trained on English text and this document is "
                    + (language_name(language) if named else f"in language '{language}'"))
    if share is not None:
        whose = "its" if said else "this document's"
        said.append(f"{share:.0%} of {whose} model tokens are unknown to {name} (text the model does not see)")
    choice = ("an embedding model whose vocabulary covers it" if not known else
              f"an embedding model for {language_name(language)} text" if named else
              f"an embedding model for language '{language}'")
    return (f"ICC and DCC are a weak signal here: {', and '.join(said)}. Choose {choice}, e.g. a multilingual one such "
            f"as {MULTILINGUAL_EXAMPLE} (sidebar: Embeddings and coreference, Embedding model; command line: "
            "--embedder).")


class SpanEmbedder:
    """Embeds spans of one document: ``embed(spans) -> (n, dim)`` L2-normalised rows.

    ``doc`` is a ``Document`` (its text and gold ``split_points``) or a plain string (then
    pass ``split_points``). ``units`` overrides the composed-mode units (must tile the text).
    """

    def __init__(self, doc: Any, embedder: Embedder, mode: str = "composed", *,
                 split_points: Sequence[int] | None = None, units: Sequence[Span] | None = None,
                 fragments: str = "auto"):
        if mode not in MODES:
            raise ValueError(f"embedding mode must be one of {', '.join(MODES)} (got {mode!r})")
        if isinstance(doc, str):
            self.text = doc
            self.split_points = list(split_points or [])
        else:
            self.text = doc.text
            self.split_points = list(split_points if split_points is not None else doc.split_points)
        self.language = str(getattr(doc, "language", "") or "und")
        self._caveat: str | None = None  # vocabulary_caveat, found at the first read of warnings
        self.embedder = embedder
        self.mode = mode
        self._units: list[Span] | None = list(units) if units is not None else None
        self._starts: np.ndarray | None = None
        self._prefix: np.ndarray | None = None
        self._unit_vecs: np.ndarray | None = None
        self._weights: np.ndarray | None = None
        self.spans_embedded = 0
        self.fragments = 0
        self.unit_seconds = 0.0
        self._truncated = 0
        self._longest = 0
        self._checked: set[tuple[int, int]] = set()
        # edge fragments (a span's part of a unit it covers partly): "encode" (default, "auto") =
        # each fragment text embedded on its own; "tokens" = pooled from the token states of the
        # unit pass (no model call; ONNX backends only). Measured further from exact mode than
        # "encode" (docs/performance.md), so it is an option, not the default.
        if fragments not in ("auto", "tokens", "encode"):
            raise ValueError(f"fragments must be auto, tokens or encode (got {fragments!r})")
        supports = bool(getattr(embedder, "supports_tokens", False))
        self.fragment_mode = "encode" if fragments == "auto" else fragments
        if self.fragment_mode == "tokens" and not supports:
            raise ValueError("fragments='tokens' needs an embedder that returns token states (an ONNX backend)")
        self._tokens: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # unit index -> (states, char starts)
        self.token_fragments = 0
        self._unit_texts: list[str] | None = None  # composed mode: set with _starts by prepare_units()
        self._lock = threading.RLock()  # one prepare at a time (the analysis runs it in a thread)
        self.prefetched = 0  # edge-fragment texts sent to the model by prefetch()

    # ---------------------------------------------------------------- info
    @property
    def stats(self) -> dict[str, Any]:
        d = {"mode": self.mode, "spans": self.spans_embedded, **self.embedder.stats.to_dict()}
        if self.mode == "composed":
            d.update(units=len(self._units or []), fragments=self.fragments, fragment_mode=self.fragment_mode,
                     token_fragments=self.token_fragments, prefetched=self.prefetched,
                     unit_seconds=round(self.unit_seconds, 4))
        else:
            d.update(truncated=self._truncated)
        return d

    @property
    def warnings(self) -> list[str]:
        if self._caveat is None:
            try:
                self._caveat = vocabulary_caveat(self.embedder, self.text, self.language)
            except Exception:  # a caveat about the scores must never cost them (read while embedding)
                self._caveat = ""
        out = [self._caveat] if self._caveat else []
        if self._truncated:
            out.append(f"exact mode: {self._truncated} of {len(self._checked)} texts exceed the model's maximum "
                       f"length ({self.embedder.max_tokens} tokens; longest {self._longest}) and were truncated")
        return out

    @property
    def units(self) -> list[Span]:
        self.prepare()
        return list(self._units or [])

    def _weights_of(self, texts: Sequence[str]) -> np.ndarray:
        offs = self.embedder.token_offsets(texts)
        if offs is not None:
            w = [len(o) for o in offs]
        else:
            w = [len(t.split()) for t in texts]
        return np.asarray([float(x) if not t.isspace() and t else 0.0 for x, t in zip(w, texts)])

    def prepare_units(self) -> None:
        """Composed mode: split the document into units and count their model tokens (no model
        call). ``prepare`` does it first; the analysis calls it alone to know the units early."""
        if self.mode != "composed" or self._unit_texts is not None:
            return
        with self._lock:
            if self._unit_texts is not None:
                return
            t0 = time.perf_counter()
            weights = None
            if self._units is None:
                self._units, weights = _units_and_weights(self.text, self.split_points, self.embedder)
            texts = [self.text[u.start:u.end] for u in self._units]
            w = self._weights_of(texts) if weights is None else np.asarray(weights, dtype=np.float64)
            w[[not t.strip() for t in texts]] = 0.0
            self._weights = w
            self._starts = np.asarray([u.start for u in self._units] + [len(self.text)], dtype=np.int64)
            self._unit_texts = texts
            self.unit_seconds += time.perf_counter() - t0

    def prepare(self) -> None:
        """Composed mode: split the document into units and embed them (once)."""
        if self.mode != "composed" or self._prefix is not None:
            return
        with self._lock:
            if self._prefix is not None:
                return
            self.prepare_units()
            t0 = time.perf_counter()
            texts, w = self._unit_texts, self._weights
            assert texts is not None and w is not None and self._units is not None
            vecs = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
            live = np.flatnonzero(w > 0)
            cached = (self.embedder.lookup([texts[i] for i in live])
                      if len(live) and self.fragment_mode == "tokens" else None)
            if cached is not None:  # a document seen before: token states come when a fragment needs them
                vecs[live] = cached
            elif len(live) and self.fragment_mode == "tokens":
                got, toks = self.embedder.encode_with_tokens([texts[i] for i in live])
                vecs[live] = got
                for i, (states, offs) in zip(live, toks):
                    self._tokens[int(i)] = (states, offs[:, 0] + self._units[i].start)
            elif len(live):
                vecs[live] = self.embedder.encode([texts[i] for i in live])
            self._unit_vecs = vecs
            pre = np.zeros((len(texts) + 1, self.embedder.dim), dtype=np.float64)
            np.cumsum(vecs.astype(np.float64) * w[:, None], axis=0, out=pre[1:])
            self._prefix = pre
            self.unit_seconds += time.perf_counter() - t0

    def prefetch(self, spans: Sequence[Any]) -> int:
        """Embed now, in one deduplicated model call, the edge fragments that ``embed(spans)`` will
        need (composed mode, fragments encoded): they land in the embedder's text cache, so the
        later ``embed`` calls find them there. The same vectors either way (a text's vector does
        not depend on when it is embedded); needs the units only (``prepare_units``), not their
        vectors, so it may run while the unit pass does. Returns the texts sent to the model."""
        if self.mode != "composed" or self.fragment_mode != "encode" or not spans:
            return 0
        self.prepare_units()
        pairs = span_pairs(spans)
        s = np.asarray([a for a, _ in pairs], dtype=np.int64)
        e = np.asarray([b for _, b in pairs], dtype=np.int64)
        # a fragment equal to a unit's text comes with the unit pass (no race for the same text)
        units = set(self._unit_texts or ())
        texts = [t for t in dict.fromkeys(self.text[a:b] for _, a, b in self._edge_fragments(s, e, self._unit_edges(s, e)))
                 if t not in units]
        fw = self._weights_of(texts) if texts else np.zeros(0)
        live = [t for t, w in zip(texts, fw) if w > 0]
        if live:
            self.embedder.encode(live)  # cached texts are not sent again
            self.prefetched += len(live)
        return len(live)

    def _unit_edges(self, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per span: (a unit edge lies inside it, index of the first unit edge >= start, index of
        the last unit edge <= end), the indexes clipped into the edge array."""
        assert self._starts is not None
        bnd = self._starts  # unit starts + [len(text)]
        k0 = np.searchsorted(bnd, s, side="left")
        k1 = np.searchsorted(bnd, e, side="right") - 1
        return k0 <= k1, np.minimum(k0, len(bnd) - 1), np.maximum(k1, 0)

    def _edge_fragments(self, s: np.ndarray, e: np.ndarray,
                        edges: tuple[np.ndarray, np.ndarray, np.ndarray]) -> list[tuple[int, int, int]]:
        """(row, start, end) of each span's partly covered units: ``[s, first unit edge)`` and
        ``[last unit edge, e)`` when a unit edge lies inside the span, else ``[s, e)`` itself
        (``edges``: ``_unit_edges(s, e)``)."""
        assert self._starts is not None
        bnd = self._starts
        has_edge, k0c, k1c = edges
        frags: list[tuple[int, int, int]] = []
        for r in range(len(s)):
            a, b = int(s[r]), int(e[r])
            if has_edge[r]:
                left, right = int(bnd[k0c[r]]), int(bnd[k1c[r]])
                if a < left:
                    frags.append((r, a, left))
                if right < b:
                    frags.append((r, right, b))
            elif b > a:
                frags.append((r, a, b))
        return frags

    # ---------------------------------------------------------------- embed
    def embed(self, spans: Sequence[Any]) -> np.ndarray:
        pairs = span_pairs(spans)
        self.spans_embedded += len(pairs)
        if not pairs:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        if self.mode == "exact":
            return self._embed_exact(pairs)
        return self._embed_composed(pairs)

    def _token_fragments(self, frags: list[tuple[int, int, int]], acc: np.ndarray) -> list[tuple[int, int, int]]:
        """Add to ``acc`` each fragment pooled from the token states of the unit holding it (tokens
        starting inside the fragment; weight = their count); return the fragments left to encode."""
        assert self._starts is not None and self._units is not None and self._weights is not None
        left = []
        units = np.searchsorted(self._starts, [a for _, a, _ in frags], side="right") - 1
        need = sorted({int(u) for u in units if int(u) not in self._tokens and self._weights[int(u)] > 0})
        if need:  # units whose vectors came from the cache: one model pass over them for their token states
            _, toks = self.embedder.encode_with_tokens([self.text[self._units[u].start:self._units[u].end]
                                                        for u in need])
            for u, (states, offs) in zip(need, toks):
                self._tokens[u] = (states, offs[:, 0] + self._units[u].start)
        for (r, a, b), u in zip(frags, units):
            tok = self._tokens.get(int(u))
            if tok is None or b > int(self._starts[u + 1]):
                left.append((r, a, b))
                continue
            states, starts = tok
            lo, hi = np.searchsorted(starts, [a, b], side="left")
            if hi <= lo:
                if self.text[a:b].strip():
                    left.append((r, a, b))
                continue
            v = states[lo:hi].astype(np.float64).mean(axis=0)
            norm = np.linalg.norm(v)
            if norm > 0:
                acc[r] += (hi - lo) * (v / norm)
                self.token_fragments += 1
        return left

    def _embed_exact(self, pairs: list[tuple[int, int]]) -> np.ndarray:
        texts = [self.text[a:b] for a, b in pairs]
        new = [(p, t) for p, t in zip(pairs, texts) if p not in self._checked]
        if new:
            lens = self.embedder.model_tokens([t for _, t in new])
            long = [n for n in lens if n > self.embedder.max_tokens]
            self._checked.update(p for p, _ in new)
            if long:
                self._truncated += len(long)
                self._longest = max(self._longest, max(long))
        return self.embedder.encode(texts)

    def _embed_composed(self, pairs: list[tuple[int, int]]) -> np.ndarray:
        self.prepare()
        assert self._starts is not None and self._prefix is not None
        s = np.asarray([a for a, _ in pairs], dtype=np.int64)
        e = np.asarray([b for _, b in pairs], dtype=np.int64)
        edges = self._unit_edges(s, e)
        has_edge, k0c, k1c = edges
        acc = np.where(has_edge[:, None], self._prefix[np.maximum(k1c, k0c)] - self._prefix[k0c], 0.0)
        # fragments: [s, first edge) and [last edge, e) when an edge lies inside; [s, e) otherwise
        frags = self._edge_fragments(s, e, edges)
        if frags and self.fragment_mode == "tokens":
            frags = self._token_fragments(frags, acc)
        if frags:
            ftexts = [self.text[a:b] for _, a, b in frags]
            fw = self._weights_of(ftexts)
            live = [i for i in range(len(frags)) if fw[i] > 0]
            if live:
                self.fragments += len(live)
                fv = self.embedder.encode([ftexts[i] for i in live]).astype(np.float64)
                for j, i in enumerate(live):
                    acc[frags[i][0]] += fw[i] * fv[j]
        norms = np.linalg.norm(acc, axis=1)
        out = np.zeros_like(acc)
        ok = norms > 0
        out[ok] = acc[ok] / norms[ok, None]
        if not ok.all():  # whitespace-only spans: embed the text itself, as exact mode would
            bad = np.flatnonzero(~ok)
            out[bad] = self.embedder.encode([self.text[pairs[i][0]:pairs[i][1]] for i in bad])
        return out.astype(np.float32)
