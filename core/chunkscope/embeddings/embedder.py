"""The embedding model for ICC and DCC: an ``Embedder`` around any sentence-transformers model
(or the bundled model's ONNX export), its backends, and its caches. Span vectors (the ``exact`` and
``composed`` modes) are ``chunkscope.embeddings.spans``.

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
from typing import Any, Sequence

import numpy as np

from chunkscope.caching import BoundedCache, DiskKV, cache_root
from chunkscope.embeddings.bundled import EmbedderUnavailable, bundled_model_path

BUNDLED_NAME = "all-MiniLM-L6-v2"
MODES = ("composed", "exact")
# how the model runs: "reference" = sentence-transformers on torch, fp32 (any model); "onnx" /
# "onnx-int8" = the bundled model on ONNX Runtime (chunkscope.embeddings.onnx); "auto" = the
# default: DEFAULT_BACKEND for the bundled model, "reference" for any other model
BACKENDS = ("auto", "reference", "onnx", "onnx-int8")
DEFAULT_BACKEND = "onnx-int8"
_BACKEND_FACTS = {"reference": ("sentence-transformers", "fp32"), "onnx": ("onnxruntime", "fp32"),
                  "onnx-int8": ("onnxruntime", "int8")}


def is_bundled(name_or_path: str | None) -> bool:
    """True for the bundled model's names (None included: the default)."""
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


@dataclass
class EmbedStats:
    """What an embedder did: model calls, texts encoded, cache hits, seconds in the model."""

    model_calls: int = 0  # batches sent to the model
    texts_embedded: int = 0  # texts actually encoded by the model
    memory_hits: int = 0
    disk_hits: int = 0
    seconds: float = 0.0  # time spent in the model

    def to_dict(self) -> dict[str, Any]:
        """The stats as JSON."""
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
        return BUNDLED_NAME, str(bundled_model_path())  # a local folder: loaded without the hub
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
    except (OSError, ValueError):  # not cached (LocalEntryNotFoundError), or not a valid hub id
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
    except Exception as exc:  # noqa: BLE001 - a probe: whatever the hub client raises (requests' or httpx's
        # errors, by its version) means the load would fail or hang; the user gets one line
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
            try:  # a local folder (the bundled model included) never asks the hub
                m = SentenceTransformer(target, device=device, local_files_only=Path(target).is_dir())
            except (OSError, ValueError, RuntimeError, KeyError) as exc:  # missing files, bad config, bad weights
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
                from chunkscope.embeddings import onnx as eo
            except ImportError as exc:
                raise EmbedderUnavailable(f"the ONNX backend needs onnxruntime and tokenizers ({exc})") from None
            problem = eo.export_status()
            if problem:
                try:
                    eo.export(log=lambda msg: None)
                except (OSError, RuntimeError, ValueError, ImportError) as exc:  # torch/onnx export and quantization
                    raise EmbedderUnavailable(f"{problem}; exporting it failed: {type(exc).__name__}: {exc}") from None
            try:
                m = eo.OnnxSentenceModel(precision, device)
            except (OSError, RuntimeError, ValueError) as exc:  # onnxruntime's errors are RuntimeErrors
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
                cache_dir = cache_root("embeddings")
            return cls(model, name, cache_dir=cache_dir)
        name, target = _resolve(name_or_path)
        model = _load_model(target, device)
        if cache_dir == "env":
            cache_dir = cache_root("embeddings")
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
        """Forget the vectors held in memory for this model (the disk cache stays)."""
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
