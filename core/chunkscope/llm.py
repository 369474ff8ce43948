"""A small, dependable client for any OpenAI-compatible chat-completions endpoint.

Works with OpenAI, Ollama, vLLM, LM Studio... through the official ``openai`` package.
Configuration comes from the environment (or the app's settings panel):

- ``OPENAI_BASE_URL``  endpoint, e.g. ``http://localhost:11434/v1`` (Ollama)
- ``OPENAI_API_KEY``   key (kept in memory only: never in repr, logs, reports or caches)
- ``CHUNKSCOPE_LLM_MODEL`` model name (default ``gpt-4o-mini``)
- ``CHUNKSCOPE_LLM_TIMEOUT`` seconds per request (default 120)

The client's own retries are disabled; ``LLMClient.chat`` retries a bounded number of
times itself (429 honouring Retry-After up to a cap, 5xx, refused/broken connections) so
that every failure ends as one :class:`LLMError` with a specific one-line message.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_TIMEOUT = 120.0
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
NOT_CONFIGURED = "no LLM endpoint configured"
MAX_RETRIES_CAP = 5  # retries are always bounded, whatever the configuration says


class LLMError(RuntimeError):
    """An endpoint failure with a one-line, user-facing message (``str(err)``).

    ``kind`` is a stable keyword: not_configured, connection, auth, forbidden, not_found,
    rate_limit, timeout, server, bad_request, malformed, empty.
    """

    def __init__(self, message: str, kind: str = "error", status: int | None = None) -> None:
        super().__init__(" ".join(message.split()))
        self.kind = kind
        self.status = status


def _redact_url(url: str | None) -> str | None:
    """Drop user:password@ from a URL (never show credentials embedded in it)."""
    if not url:
        return url
    parts = urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return url


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to reach the endpoint (the key is never shown: see ``public_dict``)."""

    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    model: str = DEFAULT_MODEL
    timeout: float = DEFAULT_TIMEOUT
    temperature: float | None = 0.0  # None: do not send (some reasoning models refuse 0)
    max_retries: int = 2  # extra attempts after the first, for 429/5xx/connection errors
    max_retry_wait: float = 30.0  # never sleep longer than this for one Retry-After
    backoff: float = 1.0  # first backoff in seconds when the server gives no Retry-After

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> "LLMSettings":
        """The settings of the environment (``env``, default ``os.environ``), ``overrides`` on top."""
        e = os.environ if env is None else env

        def num(name: str, default: float) -> float:
            raw = (e.get(name) or "").strip()
            try:
                return float(raw) if raw else default
            except ValueError:
                return default

        s = cls(
            base_url=(e.get("OPENAI_BASE_URL") or "").strip() or None,
            api_key=(e.get("OPENAI_API_KEY") or "").strip() or None,
            model=(e.get("CHUNKSCOPE_LLM_MODEL") or "").strip() or DEFAULT_MODEL,
            timeout=num("CHUNKSCOPE_LLM_TIMEOUT", DEFAULT_TIMEOUT),
            max_retries=min(MAX_RETRIES_CAP, max(0, int(num("CHUNKSCOPE_LLM_MAX_RETRIES", 2)))),
        )
        if s.timeout <= 0:
            s = replace(s, timeout=DEFAULT_TIMEOUT)
        return replace(s, **{k: v for k, v in overrides.items() if v is not None}) if overrides else s

    @property
    def configured(self) -> bool:
        """True when there is somewhere to send requests: a base URL, or a key for OpenAI."""
        return bool(self.base_url or self.api_key)

    @property
    def effective_url(self) -> str:
        """The base URL requests go to (OpenAI's when none is set)."""
        return self.base_url or OPENAI_DEFAULT_URL

    def public_dict(self) -> dict[str, Any]:
        """Settings safe to show, log or store in a report: never the key itself."""
        return {
            "base_url": _redact_url(self.effective_url) if self.configured else None,
            "model": self.model,
            "timeout": self.timeout,
            "temperature": self.temperature,
            "max_retries": self.max_retries,
            "api_key_set": bool(self.api_key),
        }

    def cache_identity(self) -> dict[str, Any]:
        """``public_dict()`` plus a one-way fingerprint of the key and the full URL: what a cache of
        results must be keyed by (a corrected key or URL credentials change it; the key is not in it)."""
        secret = f"{self.api_key or ''}\0{self.base_url or ''}"
        return {**self.public_dict(), "credentials": hashlib.sha256(secret.encode("utf-8")).hexdigest()[:16]}

    def __str__(self) -> str:
        return f"LLMSettings({self.public_dict()})"

    __repr__ = __str__  # the dataclass repr would show credentials embedded in base_url


def cache_identity_of(get_settings: Any) -> dict[str, Any]:
    """``get_settings().cache_identity()``; when that fails, an identity equal to no other.

    A cache key must never quietly ignore the LLM: if the settings cannot be read (a broken
    environment, a session without its panel...), the result is keyed as unrepeatable, so it is
    recomputed rather than served from (or stored under) another endpoint's entry.
    """
    try:
        return get_settings().cache_identity()
    except Exception as exc:  # noqa: BLE001 - boundary: ``get_settings`` is any caller's getter (a UI session's
        # panel); whatever it raises, the result is keyed as unrepeatable rather than the cache key failing
        import uuid

        return {"unavailable": type(exc).__name__, "nonce": uuid.uuid4().hex}


@dataclass
class LLMReply:
    """One chat completion's text, the model that answered and what it cost."""

    text: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    cached: bool = False
    attempts: int = 1


def _one_line(text: str, limit: int = 160) -> str:
    t = " ".join(str(text).split())
    return t if len(t) <= limit else t[: limit - 1] + "…"


def _retry_after(exc: Any) -> float | None:
    """Seconds asked by a Retry-After (or retry-after-ms) header, if any."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        ms = headers.get("retry-after-ms")
        if ms:
            return max(0.0, float(ms) / 1000.0)
        ra = headers.get("retry-after")
        if ra:
            return max(0.0, float(ra))
    except (TypeError, ValueError):
        return None  # HTTP-date form: fall back to our own backoff
    return None


def _is_refused(exc: BaseException) -> bool:
    seen = set()
    x: BaseException | None = exc
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        if isinstance(x, ConnectionRefusedError) or "refused" in str(x).lower():
            return True
        x = x.__cause__ or x.__context__
    return False


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error")
        msg = inner.get("message") if isinstance(inner, dict) else body.get("message")
        if msg:
            return str(msg)
    elif isinstance(body, str):
        return body
    return ""


class LLMClient:
    """Chat completions with bounded retries and specific error messages."""

    def __init__(self, settings: LLMSettings) -> None:
        if not settings.configured:
            raise LLMError(NOT_CONFIGURED, "not_configured")
        from chunkscope.extras import require  # openai lazily: the rest of the engine does not need it

        OpenAI = require("openai", "an LLM endpoint", lambda msg: LLMError(msg, "not_configured")).OpenAI

        if not 0 <= settings.max_retries <= MAX_RETRIES_CAP:
            settings = replace(settings, max_retries=min(MAX_RETRIES_CAP, max(0, settings.max_retries)))
        self.settings = settings
        _scrub_http_logs(settings.api_key)
        self._client = OpenAI(
            base_url=settings.effective_url,
            # local servers (Ollama, vLLM) accept any key; the client insists on one
            api_key=settings.api_key or "not-needed",
            timeout=settings.timeout,
            max_retries=0,
        )
        self._omit_temperature = settings.temperature is None

    @classmethod
    def from_env(cls, **overrides: Any) -> "LLMClient | None":
        """A client from the environment, or None when no endpoint is configured."""
        s = LLMSettings.from_env(**overrides)
        return cls(s) if s.configured else None

    def __repr__(self) -> str:
        return f"LLMClient({self.settings.public_dict()})"

    # --- errors ----------------------------------------------------------------------
    def _scrub(self, text: str) -> str:
        key = self.settings.api_key
        return text.replace(key, "***") if key else text

    def _map_error(self, exc: Exception, model: str, timeout: float, attempts: int = 1) -> LLMError:
        import openai

        url = _redact_url(self.settings.effective_url)
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(f"LLM endpoint {url} did not answer within {timeout:g}s (timeout)", "timeout")
        if isinstance(exc, openai.APIConnectionError):
            if _is_refused(exc):
                return LLMError(f"cannot reach the LLM endpoint {url}: connection refused (is the server running?)", "connection")
            cause = exc.__cause__ or exc.__context__
            detail = _one_line(self._scrub(str(cause or exc)), 120)
            return LLMError(f"cannot reach the LLM endpoint {url}: {detail}", "connection")
        if isinstance(exc, openai.APIStatusError):
            code = exc.status_code
            server_msg = _one_line(self._scrub(_server_message(exc)), 160)
            if code == 401:
                return LLMError("the LLM endpoint rejected the API key (401 Unauthorized): check OPENAI_API_KEY", "auth", code)
            if code == 403:
                return LLMError(f"the LLM endpoint refused access (403 Forbidden) to model '{model}': check the key's permissions", "forbidden", code)
            if code == 404:
                return LLMError(
                    f"model '{model}' not found at {url} (404): check CHUNKSCOPE_LLM_MODEL and that OPENAI_BASE_URL ends with /v1",
                    "not_found", code)
            if code == 429:
                ra = _retry_after(exc)
                wait = f"; it asked to retry after {ra:g}s" if ra is not None else ""
                return LLMError(f"rate limited by the LLM endpoint (429) after {attempts} attempt(s){wait}", "rate_limit", code)
            if code >= 500:
                tail = f": {server_msg}" if server_msg else ""
                return LLMError(f"LLM endpoint server error ({code}) after {attempts} attempt(s){tail}", "server", code)
            tail = f": {server_msg}" if server_msg else ""
            return LLMError(f"the LLM endpoint rejected the request ({code}){tail}", "bad_request", code)
        if isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)) or isinstance(exc, openai.APIResponseValidationError):
            return LLMError(f"malformed response from the LLM endpoint {url}: {_one_line(self._scrub(str(exc)), 120)}", "malformed")
        return LLMError(f"LLM request failed: {type(exc).__name__}: {_one_line(self._scrub(str(exc)), 120)}", "error")

    def _retryable(self, exc: Exception) -> tuple[bool, float | None]:
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return False, None  # the user's timeout is already the budget
        if isinstance(exc, openai.APIConnectionError):
            return True, None
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code == 429:
                return True, _retry_after(exc)
            if exc.status_code >= 500:
                return True, _retry_after(exc)
        return False, None

    # --- requests --------------------------------------------------------------------
    def chat(self, messages: Sequence[Mapping[str, str]], *, model: str | None = None,
             timeout: float | None = None) -> LLMReply:
        """One chat completion; raises LLMError (one-line message) on any failure."""
        import openai

        model = model or self.settings.model
        timeout = float(timeout or self.settings.timeout)
        attempts = 0
        temperature_fallback_used = False
        while True:
            attempts += 1
            kwargs: dict[str, Any] = {"model": model, "messages": list(messages), "timeout": timeout}
            if not self._omit_temperature and self.settings.temperature is not None:
                kwargs["temperature"] = self.settings.temperature
            t0 = time.perf_counter()
            try:
                resp = self._client.chat.completions.create(**kwargs)
            except openai.BadRequestError as exc:
                # Some reasoning models only accept their default temperature: retry once without it.
                if (not temperature_fallback_used and "temperature" in kwargs
                        and "temperature" in (_server_message(exc) or str(exc)).lower()):
                    temperature_fallback_used = True
                    self._omit_temperature = True
                    attempts -= 1
                    continue
                raise self._map_error(exc, model, timeout, attempts) from None
            except Exception as exc:  # noqa: BLE001 - boundary of the third-party client: every failure of the
                # request (openai's errors, httpx's, a malformed response) becomes one LLMError (module docstring)
                retry, wait = self._retryable(exc)
                if retry and attempts <= self.settings.max_retries:
                    if wait is None:
                        wait = self.settings.backoff * (2 ** (attempts - 1))
                    if wait <= self.settings.max_retry_wait:
                        time.sleep(wait)
                        continue
                    err = self._map_error(exc, model, timeout, attempts)
                    raise LLMError(f"{err} (more than the {self.settings.max_retry_wait:g}s we wait)", err.kind, err.status) from None
                raise self._map_error(exc, model, timeout, attempts) from None
            latency = time.perf_counter() - t0
            return self._parse(resp, model, latency, attempts)

    def _parse(self, resp: Any, model: str, latency: float, attempts: int) -> LLMReply:
        url = _redact_url(self.settings.effective_url)
        choices = getattr(resp, "choices", None)
        if not isinstance(choices, list):
            raise LLMError(f"malformed response from the LLM endpoint {url}: not a chat completion", "malformed")
        if not choices:
            raise LLMError(f"the LLM endpoint {url} returned no choices", "empty")
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        if not isinstance(content, str) or not content.strip():
            refusal = getattr(message, "refusal", None)
            if refusal:
                raise LLMError(f"the model refused: {_one_line(refusal, 120)}", "empty")
            raise LLMError(f"the LLM endpoint {url} returned an empty message", "empty")
        usage = getattr(resp, "usage", None)
        return LLMReply(
            text=content,
            model=str(getattr(resp, "model", None) or model),
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            latency_s=round(latency, 3),
            cached=False,
            attempts=attempts,
        )

    def test_connection(self) -> tuple[bool, str]:
        """For the app's "test connection" button: one tiny request, one line back."""
        try:
            r = self.chat([{"role": "user", "content": "Reply with the single word OK."}],
                          timeout=min(self.settings.timeout, 30.0))
        except LLMError as exc:
            return False, str(exc)
        return True, (f"connected to {_redact_url(self.settings.effective_url)}: model '{r.model}' "
                      f"answered in {r.latency_s:.2f}s")


def test_connection(settings: LLMSettings | None = None) -> tuple[bool, str]:
    """Convenience for the app: (ok, message) for these settings (default: environment)."""
    s = settings or LLMSettings.from_env()
    if not s.configured:
        return False, NOT_CONFIGURED
    return LLMClient(s).test_connection()


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,})\b")


_USERINFO = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@]+@")
_LOG_PREFIXES = ("httpx", "httpcore", "openai", "urllib3")
_known_keys: set[str] = set()
_factory_installed = False


def _scrub_http_logs(api_key: str | None) -> None:
    """Log records of the HTTP stack (httpx, httpcore, openai) never carry a key or URL credentials:
    their message is scrubbed when the record is made (whatever handler later writes it)."""
    global _factory_installed
    import logging

    if api_key and len(api_key) >= 6:
        _known_keys.add(api_key)
    if _factory_installed:
        return
    _factory_installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if record.name.startswith(_LOG_PREFIXES):
            try:
                msg = record.getMessage()
            except Exception:  # noqa: BLE001 - boundary: a log record factory must never raise (a bad format
                # string, an argument whose str() fails): such a record is left to logging as it is
                return record
            clean = _scrub_text(msg)
            if clean != msg:
                record.msg, record.args = clean, None
        return record

    logging.setLogRecordFactory(factory)


def _scrub_text(text: str) -> str:
    text = _USERINFO.sub(r"\1***@", text)
    for k in _known_keys:
        if k in text:
            text = text.replace(k, "***")
    return _KEYLIKE.sub("sk-***", text)
