"""llm-regex and the LLM client, end to end through the real ``openai`` client.

Every test talks HTTP to a real loopback server (tests/llm_server.py) that speaks the
chat-completions protocol with scripted answers; nothing in openai is mocked.
"""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_server import ScriptedLLMServer, empty_choices, error, malformed, reply, slow  # noqa: E402

from chunkscope.caching import cache_root  # noqa: E402
from chunkscope.chunkers.llm_regex import (  # noqa: E402
    PROMPT_VERSION,
    RegexRejected,
    build_prompt,
    chunk_llm_regex,
    document_context,
    extract_regex,
    split_spans,
)
from chunkscope.document import Document  # noqa: E402
from chunkscope.llm import LLMClient, LLMError, LLMSettings  # noqa: E402

KEY = "sk-test-SECRET-0123456789abcdef"

DOC_TEXT = """<!-- PageHeader: Test Authority - Rules on Widgets -->

# Rules on Widgets

## Chapter I - General provisions

This chapter sets out what the rules cover.

### Article 1 - Scope

1 These rules apply to every widget sold in the territory.

2 They do not apply to prototypes.

### Article 2 - Definitions

For the purposes of these rules, a widget is a small mechanical device\\*.

\\* 1 See the annex for examples.

<!-- PageBreak -->

### Article 3 - Labelling

<Table>
| Field | Required |
| --- | --- |
| Name | yes |
| Weight | yes |
</Table>

## Chapter II - Enforcement

The authority checks compliance every year.
"""

GOOD = "<regex>\\n\\n(?=#{2,3} )</regex>"


class Ctx:
    """A RunContext with a fixed LLM client (what chunkscope.analysis.Resources provides)."""

    def __init__(self, client):
        self._client = client

    def llm(self):
        return self._client

    def embedder(self):  # pragma: no cover - not used by llm-regex
        raise AssertionError("llm-regex must not need embeddings")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def server():
    with ScriptedLLMServer() as srv:
        yield srv


def settings_for(srv: ScriptedLLMServer, **kw) -> LLMSettings:
    base = dict(base_url=srv.base_url, api_key=KEY, model="test-model", timeout=5.0,
                max_retries=2, backoff=0.01, max_retry_wait=2.0)
    base.update(kw)
    return LLMSettings(**base)


def run(srv, params=None, text=DOC_TEXT, **kw):
    client = LLMClient(settings_for(srv, **kw))
    doc = Document("widgets", text, "markdown")
    return chunk_llm_regex(doc, {"regex_timeout": 1.0, **(params or {})}, Ctx(client)), doc


def assert_tiles(spans, text):
    assert spans and spans[0].start == 0 and spans[-1].end == len(text)
    for a, b in zip(spans, spans[1:]):
        assert a.end == b.start and a.end > a.start
    assert all(text[s.start:s.end].strip() for s in spans)


# --- prompt and parsing -------------------------------------------------------------

def test_prompt_has_paper_sections_example_and_context():
    p = build_prompt("HELLO CONTEXT")
    for part in ("<Task>", "<Output requirements>", "<Splitting guidelines>", "<Splitting example>",
                 "<Example of input text>", "<Expected answer>", "<Table>", "<!-- PageBreak -->",
                 "\\* 1", "<Input>HELLO CONTEXT</Input>", "Do not split footnotes from their parent text."):
        assert part in p
    # the worked example's expected regex really works on the example in the same dialect
    example = p.split("<Example of input text>\n", 1)[1].split("</Example of input text>", 1)[0]
    pattern = extract_regex(p.split("<Expected answer>", 1)[1])
    spans, _ = split_spans(example, pattern)
    assert len(spans) >= 4
    assert all("<Table>" not in example[s.start:s.end] or "</Table>" in example[s.start:s.end] for s in spans)
    assert PROMPT_VERSION == "llm_regex_v1"


def test_context_is_whole_lines_within_budget():
    text = "".join(f"line {i} with a few words in it\n" for i in range(3000))
    ctx, n = document_context(text, 8000)
    assert ctx.endswith("\n") and text.startswith(ctx) and 7900 < n <= 8000
    small, n2 = document_context("just one line", 8000)
    assert small == "just one line" and n2 > 0
    huge, n3 = document_context("word " * 20000, 100)  # no line breaks: token-truncated
    assert n3 == 100 and ("word " * 20000).startswith(huge)


def test_extract_first_block_only():
    assert extract_regex("bla <regex>a+</regex> and <regex>b</regex>") == "a+"
    assert extract_regex("<regex>\n\\n(?=## )\n</regex>") == "\\n(?=## )"
    assert extract_regex("<regex> </regex>") == " "  # a single space is a (silly) pattern
    with pytest.raises(RegexRejected):
        extract_regex("I think you should split on headings.")


def test_split_keeps_match_at_start_of_next_chunk():
    spans, matches = split_spans(DOC_TEXT, r"\n\n(?=#{2,3} )")
    assert_tiles(spans, DOC_TEXT)
    assert matches == len(spans) - 1
    assert DOC_TEXT[spans[1].start:].startswith("\n\n## Chapter I")
    with pytest.raises(RegexRejected, match="matches nothing"):
        split_spans(DOC_TEXT, r"ZZZ-not-there")
    with pytest.raises(RegexRejected, match="invalid regex"):
        split_spans(DOC_TEXT, r"(unclosed")
    with pytest.raises(RegexRejected, match="near-empty"):
        split_spans("x" * 5000, r"(?=x)")  # cuts before every character


# --- end to end through the real client ----------------------------------------------

def test_success_end_to_end_and_cache_hit(server):
    server.push(reply(GOOD, prompt_tokens=1234, completion_tokens=17))
    res, doc = run(server)
    assert res.status == "ok", res.reason
    assert_tiles(res.spans, doc.text)
    assert len(res.spans) == 6
    assert doc.text[res.spans[2].start:res.spans[2].end].lstrip().startswith("### Article 1")
    info = res.info
    assert info["regex"] == "\\n\\n(?=#{2,3} )"
    assert info["model"] == "test-model" and info["prompt_version"] == PROMPT_VERSION
    assert info["tokens_sent"] == 1234 and info["tokens_received"] == 17
    assert info["cached"] is False and info["attempts"] == 1 and info["latency_s"] >= 0
    # the request: the real prompt, the document, temperature 0, the key as bearer token
    req = server.chat_requests[0]
    assert req["json"]["model"] == "test-model" and req["json"]["temperature"] == 0
    assert "<Input>" + doc.text in req["json"]["messages"][0]["content"]
    assert req["headers"].get("authorization") == f"Bearer {KEY}"

    res2, _ = run(server)  # same document, model, prompt: served from the cache
    assert len(server.chat_requests) == 1
    assert res2.status == "ok" and res2.info["cached"] is True
    assert res2.spans == res.spans and res2.info["regex"] == info["regex"]
    assert res2.info["tokens_sent"] == 1234

    res3, _ = run(server, params={"model": "other-model"})  # another model: a new request
    assert len(server.chat_requests) == 2 and res3.info["cached"] is False


def test_cached_answer_is_reused_only_for_the_same_endpoint_and_key(server):
    """On a shared server the cache folder is common: another endpoint (a user's own) or another key
    must not be served the first one's regex, which the cache key used to ignore."""
    server.push(reply(GOOD))
    first, _ = run(server)
    assert first.status == "ok" and not first.info["cached"]
    with ScriptedLLMServer() as other:
        other.push(reply("<regex>\\n(?=### )</regex>"))
        res, _ = run(other)  # same document and model, another endpoint: asked there
        assert len(other.chat_requests) == 1 and not res.info["cached"] and res.info["regex"] != first.info["regex"]
    server.push(reply(GOOD))
    res, _ = run(server, api_key="sk-another-user-key-0000")  # same endpoint, another key: asked again
    assert len(server.chat_requests) == 2 and not res.info["cached"]
    again, _ = run(server)  # the first endpoint and key: its own answer, from the cache
    assert again.info["cached"] and again.info["regex"] == first.info["regex"] and len(server.chat_requests) == 2


def test_cache_can_be_disabled(server):
    server.push(reply(GOOD))
    run(server, params={"use_cache": False})
    run(server, params={"use_cache": False})
    assert len(server.chat_requests) == 2


def test_invalid_regex_retried_with_error_feedback(server):
    server.push(reply("<regex>(?=## [</regex>"), reply(GOOD))
    res, doc = run(server)
    assert res.status == "ok", res.reason
    assert res.info["attempts"] == 2 and "invalid regex" in res.info["errors"][0]
    second = server.chat_requests[1]["json"]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert "invalid regex" in second[2]["content"] and "(?=## [" in second[2]["content"]
    # only the successful final answer is cached, and it is the corrected one
    res2, _ = run(server)
    assert res2.info["cached"] and res2.info["regex"] == "\\n\\n(?=#{2,3} )"
    assert len(server.chat_requests) == 2


@pytest.mark.parametrize("answer, message", [
    ("<regex>(?=## [</regex>", "invalid regex"),
    ("Split on headings, please.", "no <regex>"),
    ("<regex>NOT-IN-THE-DOCUMENT</regex>", "matches nothing"),
    ("<regex>(?=.)</regex>", "near-empty"),
])
def test_unusable_regex_twice_is_a_failure_not_cached(server, answer, message):
    server.push(reply(answer))
    res, _ = run(server)
    assert res.status == "failed" and not res.spans
    assert message in res.reason and "after 2 attempts" in res.reason
    assert res.info["attempts"] == 2
    run(server)  # failures are not cached: asked again
    assert len(server.chat_requests) == 4


def test_catastrophic_regex_is_stopped_by_timeout(server):
    text = "# Title\n\n" + "a" * 30000 + "b\n\n## Next\n\nSome text.\n"
    server.push(reply("<regex>(a+)+$</regex>"))
    t0 = time.perf_counter()
    res, _ = run(server, text=text, params={"regex_timeout": 0.3})
    assert time.perf_counter() - t0 < 30  # bounded (unbounded backtracking would take ages); generous for loaded CI
    assert res.status == "failed" and "longer than 0.3s" in res.reason


@pytest.mark.parametrize("answer, kind, message", [
    (error(401, f"Incorrect API key provided: {KEY}"), "auth", "401"),
    (error(403, "nope"), "forbidden", "403"),
    (error(404, "The model `test-model` does not exist"), "not_found", "model 'test-model' not found"),
    (error(500, "boom"), "server", "server error (500) after 3 attempt(s)"),
    (error(429, "slow down", retry_after=0.05), "rate_limit", "rate limited"),
    (error(400, "context too long"), "bad_request", "(400): context too long"),
    (malformed(), "malformed", "malformed response"),
    (empty_choices(), "empty", "no choices"),
    (reply(""), "empty", "empty message"),
])
def test_endpoint_failures_have_specific_messages(server, answer, kind, message):
    server.push(answer)
    client = LLMClient(settings_for(server))
    with pytest.raises(LLMError) as exc:
        client.chat([{"role": "user", "content": "hi"}])
    assert exc.value.kind == kind
    assert message in str(exc.value)
    assert KEY not in str(exc.value) and "\n" not in str(exc.value)
    res, _ = run(server)  # the chunker reports the same message as a failure
    assert res.status == "failed" and message in res.reason and KEY not in res.reason


def test_retries_are_bounded_and_honour_retry_after(server):
    server.push(error(429, "slow", retry_after=0.3), error(503, "busy"), reply(GOOD))
    client = LLMClient(settings_for(server))
    t0 = time.perf_counter()
    r = client.chat([{"role": "user", "content": "hi"}])
    assert r.attempts == 3 and time.perf_counter() - t0 >= 0.3
    # a Retry-After beyond our cap is not waited for
    server._answers = [error(429, "later", retry_after=3600)]
    t0 = time.perf_counter()
    with pytest.raises(LLMError, match="retry after 3600s"):
        client.chat([{"role": "user", "content": "hi"}])
    assert time.perf_counter() - t0 < 10  # it asked for 3600 s
    # 500 forever: exactly 1 + max_retries requests
    before = len(server.chat_requests)
    server._answers = [error(500)]
    with pytest.raises(LLMError, match="after 3 attempt"):
        client.chat([{"role": "user", "content": "hi"}])
    assert len(server.chat_requests) - before == 3


def test_timeout(server):
    server.push(slow(10.0, GOOD))
    client = LLMClient(settings_for(server, timeout=0.4))
    t0 = time.perf_counter()
    with pytest.raises(LLMError) as exc:
        client.chat([{"role": "user", "content": "hi"}])
    assert exc.value.kind == "timeout" and "within 0.4s" in str(exc.value)
    assert time.perf_counter() - t0 < 8  # the server would answer only after 10 s
    res, _ = run(server, params={"timeout": 0.4})
    assert res.status == "failed" and "timeout" in res.reason


def test_connection_refused():
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = LLMClient(LLMSettings(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY,
                                   max_retries=1, backoff=0.01))
    with pytest.raises(LLMError, match="connection refused") as exc:
        client.chat([{"role": "user", "content": "hi"}])
    assert exc.value.kind == "connection"
    ok, msg = client.test_connection()
    assert not ok and "connection refused" in msg


def test_temperature_refused_is_dropped_once(server):
    server.push(error(400, "Unsupported value: 'temperature' does not support 0"), reply("OK"))
    client = LLMClient(settings_for(server))
    r = client.chat([{"role": "user", "content": "hi"}])
    assert r.text == "OK"
    assert "temperature" in server.chat_requests[0]["json"]
    assert "temperature" not in server.chat_requests[1]["json"]


def test_test_connection_button(server):
    server.push(reply("OK"))
    ok, msg = LLMClient(settings_for(server)).test_connection()
    assert ok and "test-model" in msg and server.base_url in msg


# --- configuration and secrets --------------------------------------------------------

def test_skipped_without_endpoint(monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    doc = Document("d", DOC_TEXT, "markdown")
    res = chunk_llm_regex(doc, {}, None)
    assert res.status == "skipped" and res.reason == "no LLM endpoint configured"
    res = chunk_llm_regex(doc, {}, Ctx(None))
    assert res.status == "skipped" and res.reason == "no LLM endpoint configured"
    assert not LLMSettings.from_env().configured
    with pytest.raises(LLMError, match="no LLM endpoint configured"):
        LLMClient(LLMSettings())


def test_settings_from_env_and_key_never_shown(monkeypatch, server):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("CHUNKSCOPE_LLM_MODEL", "env-model")
    s = LLMSettings.from_env()
    assert s.configured and s.model == "env-model" and s.temperature == 0.0 and s.api_key == KEY
    assert LLMSettings.from_env({}).model == "gpt-4o-mini"
    for shown in (repr(s), str(s), str(s.public_dict()), repr(LLMClient(s))):
        assert KEY not in shown
    assert s.public_dict()["api_key_set"] is True
    assert "user:pw" not in str(LLMSettings(base_url="http://user:pw@h:1/v1").public_dict())

    server.push(reply(GOOD))
    res = chunk_llm_regex(Document("d", DOC_TEXT, "markdown"), {}, None)  # env-configured, no ctx
    assert res.status == "ok" and res.info["model"] == "env-model"
    assert KEY not in repr(res) and KEY not in str(res.info)
    cache_files = list(cache_root("llm").rglob("*.json"))
    assert cache_files and all(KEY not in f.read_text() for f in cache_files)


# --- property: any usable pattern gives spans that tile the text ------------------------

from hypothesis import given  # noqa: E402
from hypothesis import settings as hsettings
from hypothesis import strategies as st

_PATTERNS = [r"\n\n(?=#{1,3} )", r"\n(?=#)", r"\n\n", r"(?m)^(?=\d+\. )", r"\. ", r"(?=<!-- PageBreak -->)", r"\s+"]
_PIECES = st.sampled_from(["# T\n", "## Sec\n", "\n", "\n\n", "text. ", "1. item\n", "<!-- PageBreak -->\n",
                           "  ", "word", "\\* 1 note\n", "<Table>\n| a |\n</Table>\n", "é"])


@hsettings(max_examples=80, deadline=None)
@given(parts=st.lists(_PIECES, max_size=60), pattern=st.sampled_from(_PATTERNS))
def test_split_spans_tile_the_text_or_reject(parts, pattern):
    text = "".join(parts)
    try:
        spans, _ = split_spans(text, pattern, timeout=1.0)
    except RegexRejected:
        return
    if not text.strip():
        assert spans == []
        return
    assert_tiles(spans, text)


def test_retries_bounded_whatever_the_configuration():
    assert LLMSettings.from_env({"OPENAI_BASE_URL": "http://x/v1", "CHUNKSCOPE_LLM_MAX_RETRIES": "1000"}).max_retries == 5
    assert LLMClient(LLMSettings(base_url="http://x/v1", max_retries=99)).settings.max_retries == 5
    assert LLMSettings.from_env({"CHUNKSCOPE_LLM_TIMEOUT": "-3"}).timeout > 0
