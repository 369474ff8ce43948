"""Chunks against the embedding model the user will index with: its input limit, in its tokens.

An embedding model reads at most ``max_tokens`` tokens of *its own* tokenizer and silently drops
the rest (all-MiniLM-L6-v2: 256 word pieces; BERT-style models: 512; OpenAI and long-context
models: 8192). A chunk longer than that is only partly embedded: the end of it can never be
retrieved. ``check(text, spans, model)`` counts each chunk in the model's tokens and says which
chunks are over.

Tokens are counted with the model's own tokenizer when it is here: the bundled all-MiniLM-L6-v2
word-piece tokenizer, or the ``tokenizer.json`` of a local model folder. Otherwise they are
counted in o200k tokens, and ``LimitCheck.exact`` is False with a note saying so (o200k splits
English into fewer pieces than word-piece tokenizers do, so the count is a lower estimate there).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from chunkscope.caching import BoundedCache

BUNDLED_TOKENIZER = "bundled-minilm"  # the word-piece tokenizer of the bundled all-MiniLM-L6-v2
O200K = "o200k"


@dataclass(frozen=True)
class TargetModel:
    """The model chunks will be embedded with: its input limit and how to count its tokens.

    ``tokenizer``: ``"bundled-minilm"``, ``"o200k"``, or a local folder (or file) holding a
    Hugging Face ``tokenizer.json``."""

    name: str
    max_tokens: int
    tokenizer: str = O200K
    note: str = ""


# Well-known models and the input limit they truncate at. Only the bundled MiniLM tokenizer ships
# with ChunkScope; the others are counted in o200k unless a local tokenizer is given (custom).
KNOWN: dict[str, TargetModel] = {m.name: m for m in (
    TargetModel("all-MiniLM-L6-v2", 256, BUNDLED_TOKENIZER, "sentence-transformers default; the bundled model"),
    TargetModel("all-MiniLM-L12-v2", 256, BUNDLED_TOKENIZER, "same word-piece vocabulary as L6"),
    TargetModel("all-mpnet-base-v2", 384, O200K, "sentence-transformers"),
    TargetModel("bge-small-en-v1.5", 512, O200K, "BAAI BGE"),
    TargetModel("bge-base-en-v1.5", 512, O200K, "BAAI BGE"),
    TargetModel("e5-base-v2", 512, O200K, "intfloat E5"),
    TargetModel("embed-english-v3.0", 512, O200K, "Cohere"),
    TargetModel("nomic-embed-text-v1.5", 8192, O200K, "Nomic"),
    TargetModel("text-embedding-3-small", 8191, O200K, "OpenAI (cl100k tokenizer)"),
    TargetModel("text-embedding-3-large", 8191, O200K, "OpenAI (cl100k tokenizer)"),
)}


def target_model(name: str, max_tokens: int | None = None, tokenizer: str | None = None) -> TargetModel:
    """A known model by name (``max_tokens``/``tokenizer`` override it), or a custom one: then
    ``max_tokens`` is required. ValueError with a user-facing message otherwise."""
    base = KNOWN.get(name)
    if base is None and max_tokens is None:
        raise ValueError(f"unknown embedding model '{name}': give its input limit in tokens "
                         f"(known: {', '.join(KNOWN)})")
    limit = int(max_tokens if max_tokens is not None else base.max_tokens)  # type: ignore[union-attr]
    if limit < 1:
        raise ValueError(f"the model's input limit must be at least 1 token (got {limit})")
    tok = tokenizer or (base.tokenizer if base else O200K)
    return TargetModel(name, limit, tok, base.note if base else "custom")


@dataclass
class LimitCheck:
    """Chunk lengths against a model's input limit: the counts, which chunks are over, and how they were counted."""
    model: TargetModel
    counts: list[int]  # per chunk, in the tokens of ``tokenizer``
    over: list[int]  # indexes of the chunks longer than the limit
    tokenizer: str  # what counted them, in words
    exact: bool  # counted with the model's own tokenizer
    note: str = ""  # why not exact
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """'3 of 40 chunks are over the 256-token limit of all-MiniLM-L6-v2 (word pieces)'."""
        s = (f"{len(self.over)} of {len(self.counts)} chunks are over the {self.model.max_tokens:,}-token limit of "
             f"{self.model.name} (counted in {self.tokenizer})")
        return s + (f"; {self.note}" if self.note else "")


_lock = threading.Lock()
_tokenizers: BoundedCache[str, Any] = BoundedCache(8)
MAX_TOKENIZER_BYTES = 100 * 1024 * 1024  # a tokenizer.json is a few MB (the largest multilingual ones ~20 MB)


def _hf_tokenizer(path: Path) -> Any:
    from tokenizers import Tokenizer

    file = path / "tokenizer.json" if path.is_dir() else path
    # a regular file of a sane size, read by us: never a device (/dev/zero grew without end) or a huge file
    if not file.is_file():
        raise ValueError(f"{file.name or file}: not a tokenizer.json file")
    size = file.stat().st_size
    if size > MAX_TOKENIZER_BYTES:
        raise ValueError(f"{file.name}: {size / 2**20:.0f} MB, more than a tokenizer file ({MAX_TOKENIZER_BYTES // 2**20} MB)")
    tok = Tokenizer.from_str(file.read_text(encoding="utf-8"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def counter(model: TargetModel) -> tuple[Callable[[Sequence[str]], list[int]], str, bool, str]:
    """(count(texts) -> token counts, tokenizer in words, exact?, note). Never raises: falls
    back to o200k with a note when the model's tokenizer cannot be loaded."""
    from chunkscope.text.tokens import count_many

    why = ""
    if model.tokenizer != O200K:
        key = model.tokenizer
        try:
            with _lock:
                tok = _tokenizers.get(key)
                if tok is None:
                    if key == BUNDLED_TOKENIZER:
                        from chunkscope.embeddings.embedder import bundled_model_path

                        tok = _hf_tokenizer(bundled_model_path())
                    else:
                        tok = _hf_tokenizer(Path(key).expanduser())
                    _tokenizers.put(key, tok)
            what = "word pieces" if key == BUNDLED_TOKENIZER else f"the tokenizer of {Path(key).name}"

            def count(texts: Sequence[str]) -> list[int]:
                # special tokens ([CLS], [SEP]) count against the limit, as in the model
                return [len(e.ids) for e in tok.encode_batch(list(texts))] if texts else []

            return count, what, True, ""
        except Exception as exc:  # tokenizers raises a bare Exception on a bad file; none costs the count: o200k
            why = f"its tokenizer is not available ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
    note = why or f"{model.name}'s own tokenizer is not bundled"
    return count_many, "o200k tokens", False, note + ", so lengths are in o200k tokens (an estimate)"


def check(text: str, spans: Sequence[Any], model: TargetModel) -> LimitCheck:
    """Count every chunk (``spans``: objects with ``start``/``end``) in the model's tokens and
    list the ones longer than its input limit."""
    count, what, exact, note = counter(model)
    counts = count([text[s.start:s.end] for s in spans])
    over = [i for i, n in enumerate(counts) if n > model.max_tokens]
    return LimitCheck(model, counts, over, what, exact, note)
