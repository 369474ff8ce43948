"""``llm-regex``: the paper's LLM regex splitter (section 2.2, appendices B and F).

Pipeline: split the text by lines, keep whole lines up to ``max_context_tokens``
(o200k), put them in the versioned prompt (``core/chunkscope/prompts/llm_regex_v1.txt``), ask the
model, take the first ``<regex>...</regex>`` block, compile it with the ``regex``
package and apply it to the *whole* document with a timeout. Every match start is a
boundary and the match is kept at the start of the next chunk, so the chunks tile the
document (spans into ``doc.text``, nothing rewritten).

A pattern that does not compile, times out, matches nothing or shreds the document
into near-empty pieces gets ONE retry with the error fed back to the model; a second
failure (or any endpoint failure) is a *failed* chunking with its reason. There is no
fallback to another chunker. Successful answers are cached on disk by (document
sha256, model, prompt version, context size), so a second run makes no request.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from chunkscope.caching import cache_root, file_used, store_json
from chunkscope.chunkers.base import ChunkerSpec, ChunkResult, ParamSpec, RunContext
from chunkscope.document import Document, Span
from chunkscope.llm import NOT_CONFIGURED, LLMClient, LLMError
from chunkscope.text.tokens import count_many, encoding

PROMPT_VERSION = "llm_regex_v1"
PROMPT_FILE = "llm_regex_v1.txt"
PLACEHOLDER = "{document_context}"
NEAR_EMPTY_CHARS = 20  # a piece with fewer visible characters is "near-empty"


class RegexRejected(ValueError):
    """The model's pattern cannot be used; the message is fed back to the model."""


# --- prompt ---------------------------------------------------------------------------

def prompt_template() -> str:
    """The versioned prompt (appendix B of the paper), read from ``prompts/``."""
    return (Path(__file__).resolve().parent.parent / "prompts" / PROMPT_FILE).read_text(encoding="utf-8")


def document_context(text: str, max_tokens: int = 8000) -> tuple[str, int]:
    """The first whole lines of ``text`` that fit in ``max_tokens`` o200k tokens.

    Returns (context, tokens). When even the first line is longer than the budget
    (a document without line breaks), its first ``max_tokens`` tokens are used.
    """
    lines = text.splitlines(keepends=True)
    if not lines:
        return "", 0
    # count a bounded prefix of lines only: an 8000-token budget never needs more
    window: list[str] = []
    chars = 0
    for line in lines:
        window.append(line)
        chars += len(line)
        if chars > max_tokens * 12:  # > any plausible chars-per-token ratio
            break
    counts = count_many(window)
    total = 0
    kept = 0
    for n in counts:
        if total + n > max_tokens:
            break
        total += n
        kept += 1
    if kept == 0:
        ids = encoding().encode_ordinary(lines[0])[:max_tokens]
        head = encoding().decode(ids)
        return head, len(ids)
    return "".join(window[:kept]), total


def build_prompt(context: str) -> str:
    """The prompt with ``context`` (the document's first lines) in its placeholder."""
    return prompt_template().replace(PLACEHOLDER, context)


_TAG = regex.compile(r"<regex>(.*?)</regex>", regex.DOTALL | regex.IGNORECASE)


def extract_regex(answer: str) -> str:
    """The first ``<regex>...</regex>`` block of the model's answer."""
    m = _TAG.search(answer or "")
    if m is None:
        raise RegexRejected("the answer has no <regex>...</regex> block")
    pattern = m.group(1)
    if "\n" in pattern[:1] + pattern[-1:] or "\r" in pattern[:1] + pattern[-1:]:
        pattern = pattern.strip()  # tags on their own lines: layout, not part of the pattern
    if pattern.startswith("`") and pattern.endswith("`") and len(pattern) > 2:
        pattern = pattern.strip("`")
    if not pattern:
        raise RegexRejected("the <regex> block is empty")
    return pattern


# --- splitting ------------------------------------------------------------------------

def split_spans(text: str, pattern: str, *, timeout: float = 5.0, max_chunks: int = 5000) -> tuple[list[Span], int]:
    """Spans of ``text`` cut at each match start (match kept at the start of the next chunk).

    Whitespace-only pieces are joined to their neighbour. Raises RegexRejected with a
    message meant for the model (and the user) when the pattern cannot be used.
    Returns (spans, number of matches).
    """
    try:
        compiled = regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise RegexRejected(f"invalid regex: {exc}") from None
    n = len(text)
    cuts: list[int] = []
    matches = 0
    try:
        for m in compiled.finditer(text, timeout=timeout):
            matches += 1
            s = m.start()
            if 0 < s < n and (not cuts or s != cuts[-1]):
                cuts.append(s)
            if len(cuts) > max_chunks * 4:  # no need to enumerate millions of empty matches
                break
    except TimeoutError:
        raise RegexRejected(
            f"the regex took longer than {timeout:g}s on the document (catastrophic backtracking?)"
        ) from None
    if not cuts:
        what = "matches nothing in the document" if matches == 0 else "only matches at the document's edges"
        raise RegexRejected(f"the regex {what}, so it yields no split")
    edges = [0, *cuts, n]
    pieces = list(zip(edges, edges[1:]))
    visible = [len(text[a:b].strip()) for a, b in pieces]
    near_empty = sum(1 for v in visible if v < NEAR_EMPTY_CHARS)
    if len(pieces) > max_chunks or (near_empty >= 50 and near_empty * 2 > len(pieces)):
        raise RegexRejected(
            f"the regex splits the document into {len(pieces)} pieces, {near_empty} of them near-empty "
            f"(< {NEAR_EMPTY_CHARS} visible characters); choose a delimiter for logical sections"
        )
    # join whitespace-only pieces to the previous piece (the first one to the next)
    spans: list[list[int]] = []
    pending_start: int | None = None
    for (a, b), v in zip(pieces, visible):
        if v == 0:
            if spans:
                spans[-1][1] = b
            elif pending_start is None:
                pending_start = a
            continue
        if pending_start is not None:
            a, pending_start = pending_start, None
        spans.append([a, b])
    if pending_start is not None:  # whole text was whitespace
        return [], matches
    if len(spans) < 2:
        raise RegexRejected("the regex yields no split (every cut falls in whitespace)")
    return [Span(a, b) for a, b in spans], matches


# --- cache ----------------------------------------------------------------------------

def cache_key(doc_sha256: str, model: str, max_context_tokens: int, endpoint: str) -> str:
    """``endpoint``: who answered (the URL and a fingerprint of the key, ``LLMSettings.cache_identity``):
    an answer from one endpoint is never served as another's, nor to a user with another key (on a
    shared server, one user's endpoint could otherwise plant the regex every other user gets)."""
    raw = f"{doc_sha256}|{model}|{PROMPT_VERSION}|{max_context_tokens}|{endpoint}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def cache_path(key: str) -> Path:
    """The file of the cached answer ``key`` (below ``caching.cache_root("llm")``)."""
    return cache_root("llm") / "llm-regex" / f"{key}.json"


def _cache_load(key: str) -> dict[str, Any] | None:
    try:
        with open(cache_path(key), encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("regex"), str):
        return None
    file_used(cache_path(key))
    return entry


# --- the chunker ----------------------------------------------------------------------

@dataclass
class _Totals:
    """What the requests to the model cost so far, and why its patterns were rejected."""

    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    errors: list[str] = field(default_factory=list)

    def add(self, reply: Any) -> None:
        self.attempts += 1
        self.prompt_tokens += reply.prompt_tokens or 0
        self.completion_tokens += reply.completion_tokens or 0
        self.latency_s += reply.latency_s
        self.model = reply.model


@dataclass(frozen=True)
class _Ask:
    """One run's request: the parameters, the endpoint's facts every result carries, the cache key."""

    model: str
    max_ctx: int
    timeout: float
    regex_timeout: float
    max_chunks: int
    use_cache: bool
    base_info: dict[str, Any]
    key: str

    @classmethod
    def of(cls, doc: Document, params: dict[str, Any], client: LLMClient) -> "_Ask":
        """The parameters read with their defaults (the client's model and timeout)."""
        model = str(params.get("model") or "") or client.settings.model
        max_ctx = int(params.get("max_context_tokens") or 8000)
        who = client.settings.cache_identity()
        return cls(
            model=model, max_ctx=max_ctx,
            timeout=float(params.get("timeout") or 0) or client.settings.timeout,
            regex_timeout=float(params.get("regex_timeout") or 5.0),
            max_chunks=int(params.get("max_chunks") or 5000),
            use_cache=bool(params.get("use_cache", True)),
            base_info={"model": model, "prompt_version": PROMPT_VERSION,
                       "endpoint": client.settings.public_dict()["base_url"]},
            key=cache_key(doc.sha256, model, max_ctx, f"{client.settings.effective_url}|{who['credentials']}"))

    def split(self, text: str, pattern: str) -> tuple[list[Span], int]:
        """``split_spans`` with this run's timeout and chunk cap."""
        return split_spans(text, pattern, timeout=self.regex_timeout, max_chunks=self.max_chunks)


def _client_from(ctx: RunContext | None) -> LLMClient | None:
    if ctx is not None and hasattr(ctx, "llm"):
        return ctx.llm()
    return LLMClient.from_env()


def chunk_llm_regex(doc: Document, params: dict[str, Any], ctx: RunContext | None = None) -> ChunkResult:
    """The chunks of the model's pattern (a cached answer first).

    Skipped without an endpoint; failed when the endpoint fails or the pattern is unusable twice.
    """
    if not doc.text.strip():
        return ChunkResult.skipped("the document is empty")
    try:
        client = _client_from(ctx)
    except LLMError as exc:
        return ChunkResult.skipped(str(exc)) if exc.kind == "not_configured" else ChunkResult.failed(str(exc))
    if client is None:
        return ChunkResult.skipped(NOT_CONFIGURED)
    ask = _Ask.of(doc, params, client)
    cached = _from_cache(doc, ask) if ask.use_cache else None
    return cached if cached is not None else _from_model(doc, client, ask)


def _from_cache(doc: Document, ask: _Ask) -> ChunkResult | None:
    """The chunks of the cached pattern; None without one, or when it is stale or too slow here (ask again)."""
    entry = _cache_load(ask.key)
    if entry is None:
        return None
    try:
        spans, matches = ask.split(doc.text, entry["regex"])
    except RegexRejected:
        return None
    if not spans:
        return None
    return ChunkResult(spans=spans, info={
        **ask.base_info,
        "regex": entry["regex"],
        "response_model": entry.get("response_model", ask.model),
        "tokens_sent": entry.get("tokens_sent"),
        "tokens_received": entry.get("tokens_received"),
        "context_tokens": entry.get("context_tokens"),
        "latency_s": entry.get("latency_s"),
        "attempts": entry.get("attempts"),
        "matches": matches,
        "cached": True,
    })


def _from_model(doc: Document, client: LLMClient, ask: _Ask) -> ChunkResult:
    """Ask the model for a pattern, once more with the error fed back when it is unusable."""
    context, context_tokens = document_context(doc.text, ask.max_ctx)
    messages: list[dict[str, str]] = [{"role": "user", "content": build_prompt(context)}]
    totals = _Totals()
    pattern: str | None = None
    t0 = time.perf_counter()
    for attempt in (1, 2):
        try:
            reply = client.chat(messages, model=ask.model, timeout=ask.timeout)
        except LLMError as exc:
            info = {**ask.base_info, "attempts": totals.attempts + 1, "errors": totals.errors + [str(exc)],
                    "regex": pattern, "cached": False, "tokens_sent": totals.prompt_tokens,
                    "tokens_received": totals.completion_tokens}
            prefix = "" if attempt == 1 else "retry after a rejected regex failed: "
            return ChunkResult.failed(f"{prefix}{exc}", **info)
        totals.add(reply)
        try:
            pattern = extract_regex(reply.text)
            spans, matches = ask.split(doc.text, pattern)
            if not spans:
                raise RegexRejected("the regex yields no chunk")
        except RegexRejected as exc:
            shown = f"regex {pattern!r}: {exc}" if pattern is not None and "<regex>" not in str(exc) else str(exc)
            totals.errors.append(shown)
            if attempt == 2:
                break
            messages = messages + [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": (
                    f"Your answer could not be used: {shown}. Return one corrected, valid pattern "
                    f"following the same guidelines, only in the format <regex>regex pattern here</regex>.")},
            ]
            pattern = None
            continue
        return _accepted(doc, ask, spans, _Answer(pattern, reply.text, matches, context_tokens), totals)
    return ChunkResult.failed(
        f"the model's regex was unusable after {totals.attempts} attempts: {totals.errors[-1]}",
        **ask.base_info, regex=pattern, errors=totals.errors, attempts=totals.attempts, cached=False,
        tokens_sent=totals.prompt_tokens, tokens_received=totals.completion_tokens,
        latency_s=round(time.perf_counter() - t0, 3),
    )


@dataclass(frozen=True)
class _Answer:
    """A usable answer of the model: its pattern, its text, the pattern's matches, the context it saw."""

    pattern: str
    text: str
    matches: int
    context_tokens: int


def _accepted(doc: Document, ask: _Ask, spans: list[Span], answer: _Answer, totals: _Totals) -> ChunkResult:
    """The chunking of a usable pattern, its answer cached (when the cache is used)."""
    info = {
        **ask.base_info,
        "regex": answer.pattern,
        "response_model": totals.model,
        "tokens_sent": totals.prompt_tokens,
        "tokens_received": totals.completion_tokens,
        "context_tokens": answer.context_tokens,
        "latency_s": round(totals.latency_s, 3),
        "attempts": totals.attempts,
        "matches": answer.matches,
        "cached": False,
    }
    if totals.errors:
        info["errors"] = totals.errors
    if ask.use_cache:
        store_json(cache_path(ask.key), {
            "doc_sha256": doc.sha256, "model": ask.model, "prompt_version": PROMPT_VERSION,
            "max_context_tokens": ask.max_ctx, "regex": answer.pattern, "answer": answer.text,
            "response_model": totals.model, "tokens_sent": totals.prompt_tokens,
            "tokens_received": totals.completion_tokens, "context_tokens": answer.context_tokens,
            "latency_s": round(totals.latency_s, 3), "attempts": totals.attempts,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        })
    return ChunkResult(spans=spans, info=info)


PARAMS = (
    ParamSpec("model", str, "", "model name; empty = CHUNKSCOPE_LLM_MODEL (default gpt-4o-mini)",
              unset="CHUNKSCOPE_LLM_MODEL, else gpt-4o-mini"),
    ParamSpec("max_context_tokens", int, 8000, "document context sent to the model (whole lines, o200k tokens)", min=100, max=1_000_000),
    ParamSpec("timeout", float, 0.0, "seconds per request; 0 = CHUNKSCOPE_LLM_TIMEOUT (default 120)", min=0, max=3600,
              unset="CHUNKSCOPE_LLM_TIMEOUT, else 120 s"),
    ParamSpec("regex_timeout", float, 5.0, "seconds allowed to apply the pattern to the document", min=0.01, max=600),
    ParamSpec("max_chunks", int, 5000, "reject a pattern that cuts the document into more pieces", min=2),
    ParamSpec("use_cache", bool, True, "reuse a cached answer for the same document, model and prompt"),
)

SPEC = ChunkerSpec(
    id="llm-regex",
    label="LLM regex",
    description="An LLM reads the first 8000 tokens and returns a delimiter regex, applied to the whole document (paper).",
    params=PARAMS,
    fn=chunk_llm_regex,
    family="llm",
    needs="llm",
)


def specs() -> list[ChunkerSpec]:
    """The chunker's registry entry."""
    return [SPEC]
