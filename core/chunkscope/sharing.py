"""Shared mode: what a ChunkScope server reachable by other people allows (the policy; the UI enforces it).

Off by default (``make run`` serves 127.0.0.1 to its own user). ``chunkscope app --share`` or
``CHUNKSCOPE_SHARED=1`` turns it on. Operator settings come from a TOML file
(``$CHUNKSCOPE_SHARE_CONFIG``, else ``<user config dir>/chunkscope/share.toml``) and environment
variables (which win); see docs/sharing.md. Every check raises ``ShareError`` with one line a user
can act on.

* Paths: no server path is typed; folders only under ``corpus_root`` (symlinks and ``..`` resolved).
* Workspaces: each session writes under its own private directory, deleted when the session
  ends (its state is garbage-collected) or after ``session_ttl_s`` without use.
* LLM: the server's key goes only to the endpoints the operator configured; a typed URL needs
  the user's own key and a host the operator allowed; nothing else is ever requested.
* Embedding models: only those the operator lists.
* Limits: upload size (one number for Streamlit's ``server.maxUploadSize`` and ingest), pages,
  tokens, concurrent analyses (the rest wait for a slot), reports kept per session.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import tempfile
import threading
import time
import tomllib
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping
from urllib.parse import urlsplit

SHARED_ENV = "CHUNKSCOPE_SHARED"
CONFIG_ENV = "CHUNKSCOPE_SHARE_CONFIG"
BUNDLED_EMBEDDER = "all-MiniLM-L6-v2"


class ShareError(ValueError):
    """Refused by the shared-mode policy; ``str()`` is one line for the user."""


def _truthy(v: Any) -> bool:
    return str(v).strip().lower() in ("1", "true", "yes", "on")


def _list(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    items = v.split(",") if isinstance(v, str) else list(v)
    return tuple(str(x).strip() for x in items if str(x).strip())


@dataclass(frozen=True)
class Policy:
    """Operator settings of a shared server (the defaults are the safe ones)."""

    shared: bool = False
    bind: str = "127.0.0.1"  # address Streamlit listens on (0.0.0.0 in shared mode unless set)
    port: int = 8501
    corpus_root: Path | None = None  # folders a user may pick, all under this one; None: uploads only
    workspace_root: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) / "chunkscope-sessions")
    llm_endpoints: tuple[str, ...] = ()  # base URLs the server's key may be sent to (plus OPENAI_BASE_URL)
    llm_user_hosts: tuple[str, ...] = ()  # hosts a user-typed URL may reach, with the user's own key
    embedders: tuple[str, ...] = (BUNDLED_EMBEDDER,)  # the models offered (first = default)
    max_upload_mb: int = 50  # one limit: Streamlit's server.maxUploadSize and ingest's max bytes
    max_pages: int = 500
    max_tokens: int = 1_000_000
    max_concurrent: int = 2  # analyses running at once; the others wait for a slot
    max_workers: int = 2  # worker processes one corpus run from the app may start (each loads the model)
    max_reports: int = 8  # reports kept per session
    session_ttl_s: int = 3600  # an unused workspace is deleted after this long
    max_cache_mb: int = 1024  # the disk caches (embeddings, coreference, LLM answers) in all; LRU evicted beyond
    # the settings the operator gave (TOML file or environment), as opposed to defaults
    given: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    @property
    def max_upload_bytes(self) -> int:
        """The upload limit in bytes."""
        return self.max_upload_mb * 1024 * 1024

    def public_dict(self) -> dict[str, Any]:
        """What the UI may show (nothing secret is in a Policy anyway)."""
        return {"shared": self.shared, "corpus_root": str(self.corpus_root) if self.corpus_root else None,
                "llm_endpoints": list(self.llm_endpoints), "llm_user_hosts": list(self.llm_user_hosts),
                "embedders": list(self.embedders), "max_upload_mb": self.max_upload_mb,
                "max_pages": self.max_pages, "max_tokens": self.max_tokens,
                "max_concurrent": self.max_concurrent, "max_workers": self.max_workers,
                "max_reports": self.max_reports,
                "session_ttl_s": self.session_ttl_s, "max_cache_mb": self.max_cache_mb}


# env var -> (field, converter)
_ENV: dict[str, tuple[str, Callable[[str], Any]]] = {
    SHARED_ENV: ("shared", _truthy),
    "CHUNKSCOPE_BIND": ("bind", str),
    "CHUNKSCOPE_PORT": ("port", int),
    "CHUNKSCOPE_CORPUS_ROOT": ("corpus_root", lambda v: Path(v).expanduser() if v.strip() else None),
    "CHUNKSCOPE_WORKSPACE_ROOT": ("workspace_root", lambda v: Path(v).expanduser()),
    "CHUNKSCOPE_LLM_ENDPOINTS": ("llm_endpoints", _list),
    "CHUNKSCOPE_LLM_USER_HOSTS": ("llm_user_hosts", _list),
    "CHUNKSCOPE_EMBEDDERS": ("embedders", _list),
    "CHUNKSCOPE_MAX_UPLOAD_MB": ("max_upload_mb", int),
    "CHUNKSCOPE_MAX_PAGES": ("max_pages", int),
    "CHUNKSCOPE_MAX_TOKENS": ("max_tokens", int),
    "CHUNKSCOPE_MAX_CONCURRENT": ("max_concurrent", int),
    "CHUNKSCOPE_MAX_WORKERS": ("max_workers", int),
    "CHUNKSCOPE_MAX_REPORTS": ("max_reports", int),
    "CHUNKSCOPE_SESSION_TTL": ("session_ttl_s", int),
    "CHUNKSCOPE_MAX_CACHE_MB": ("max_cache_mb", int),
}
_TOML_FIELDS = {f for f, _ in _ENV.values()}


def served_shared(env: Mapping[str, str] | None = None) -> bool:
    """Whether this process serves a shared server (``chunkscope app --share`` sets ``CHUNKSCOPE_SHARED``
    for it): messages then name this server's limits, not the operator's settings a user cannot change."""
    e = os.environ if env is None else env
    return _truthy(e.get(SHARED_ENV, ""))


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """The operator settings file: ``CHUNKSCOPE_SHARE_CONFIG``, else ``share.toml`` in the user config dir."""
    e = os.environ if env is None else env
    if e.get(CONFIG_ENV, "").strip():
        return Path(e[CONFIG_ENV]).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("chunkscope")) / "share.toml"


def settings_file(path: str | os.PathLike, named: str) -> Path:
    """A settings file named on purpose (``named``: how, for the message): it must be a file, or ShareError."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ShareError(f"{named}: " + ("not a file" if p.exists() else "no such settings file"))
    return p


def load_policy(env: Mapping[str, str] | None = None, path: str | os.PathLike | None = None) -> Policy:
    """The operator's policy: defaults < TOML file < environment variables. ShareError when invalid.

    A file named explicitly (``path``, ``$CHUNKSCOPE_SHARE_CONFIG``) must exist: a typo must not
    silently give the defaults (0.0.0.0 in shared mode, default limits). The default location
    (``<user config dir>/chunkscope/share.toml``) is optional."""
    e = os.environ if env is None else env
    values: dict[str, Any] = {}
    p = Path(path).expanduser() if path is not None else config_path(e)
    if path is not None or e.get(CONFIG_ENV, "").strip():
        settings_file(p, str(path) if path is not None else f"{CONFIG_ENV}={e[CONFIG_ENV]}")
    if p.is_file():
        try:
            raw = tomllib.loads(p.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ShareError(f"{p}: not a readable TOML file ({' '.join(str(exc).split())[:160]})") from None
        raw = raw.get("share", raw)
        unknown = sorted(set(raw) - _TOML_FIELDS)
        if unknown:
            raise ShareError(f"{p}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(_TOML_FIELDS))})")
        for k, v in raw.items():
            conv = next(c for f, c in _ENV.values() if f == k)
            try:
                if conv is _list:
                    values[k] = _list(v)
                elif conv is _truthy:
                    values[k] = v if isinstance(v, bool) else _truthy(v)
                elif conv is int:
                    values[k] = int(v)
                else:
                    values[k] = conv(str(v))
            except (TypeError, ValueError):
                raise ShareError(f"{p}: {k} = {v!r} is not a valid value") from None
    for name, (fname, conv) in _ENV.items():
        raw_v = e.get(name)
        if raw_v is not None and raw_v.strip() != "":
            try:
                values[fname] = conv(raw_v)
            except ValueError:
                raise ShareError(f"{name}={raw_v!r}: not a valid value for {fname}") from None
    pol = Policy(**values, given=frozenset(values))
    if pol.shared and "bind" not in values:
        pol = replace(pol, bind="0.0.0.0")
    for f in ("max_upload_mb", "max_pages", "max_tokens", "max_concurrent", "max_workers", "max_reports",
              "session_ttl_s", "max_cache_mb"):
        if getattr(pol, f) < 1:
            raise ShareError(f"{f} must be at least 1 (got {getattr(pol, f)})")
    if not pol.embedders:
        raise ShareError("embedders: list at least one embedding model")
    return pol


_POLICY: Policy | None = None
_POLICY_LOCK = threading.Lock()


def policy() -> Policy:
    """The process's policy (read once)."""
    global _POLICY
    with _POLICY_LOCK:
        if _POLICY is None:
            _POLICY = load_policy()
            _bound_disk_caches(_POLICY)
        return _POLICY


def set_policy(p: Policy | None) -> None:
    """Replace the process's policy (tests, the app launcher); None: read it again on next use."""
    global _POLICY, _SLOTS
    with _POLICY_LOCK:
        _POLICY = p
        _SLOTS = None
        _bound_disk_caches(p)


def _bound_disk_caches(p: Policy | None) -> None:
    """The disk caches' bound for this process: ``max_cache_mb`` on a shared server, else none."""
    from chunkscope.caching import set_disk_budget

    set_disk_budget(p.max_cache_mb * 1024 * 1024 if p is not None and p.shared else None)


# ---------------------------------------------------------------- paths
def resolve_folder(pol: Policy, user_path: str) -> Path:
    """A folder the user may read: in shared mode only under ``corpus_root`` (no globs, symlinks and
    ``..`` resolved before the check); outside shared mode any existing folder or glob."""
    raw = (user_path or "").strip()
    if not pol.shared:
        return Path(raw).expanduser()
    if pol.corpus_root is None:
        raise ShareError("this shared server takes uploads only: no server folder can be read")
    if any(ch in raw for ch in "*?["):
        raise ShareError("pick a folder, not a pattern")
    root = pol.corpus_root.resolve()
    p = Path(raw)
    target = (p if p.is_absolute() else root / p).resolve()
    if target != root and root not in target.parents:
        raise ShareError(f"{raw}: outside the shared folder (only folders under {root.name}/ can be read)")
    if not target.is_dir():
        raise ShareError(f"{raw}: no such folder under {root.name}/")
    return target


def run_outputs(results_dir: str | os.PathLike) -> list[Path]:
    """The files a corpus run wrote in ``results_dir`` (what a download may contain, nothing else):
    its summary, tables and HTML report, and the reports and winners the summary lists; each a
    regular file (no symlink) inside the folder."""
    import json

    from chunkscope.corpus.store import RUN_FILES

    d = Path(results_dir).resolve()
    names: list[str] = list(RUN_FILES)
    try:
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        summary = {}
    for e in summary.get("documents", []) if isinstance(summary, dict) else []:
        for k in ("report", "winners"):
            if isinstance(e, dict) and isinstance(e.get(k), str):
                names.append(e[k])
    out: list[Path] = []
    for n in dict.fromkeys(names):
        p = d / n
        try:
            st_ = p.lstat()
        except OSError:
            continue
        if not stat.S_ISREG(st_.st_mode):  # a symlink or anything else: never followed
            continue
        if d not in p.resolve().parents:
            continue
        out.append(p)
    return out


# ---------------------------------------------------------------- workspaces
WORKSPACE_PREFIX = "s-"  # a session workspace's name starts with this (what the sweep may delete)

class Workspace:
    """A session's private directory (0700). Deleted when this object is garbage-collected (the
    session ended and Streamlit dropped its state), by ``close()``, or by ``sweep()`` after the TTL."""

    def __init__(self, root: Path):
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o700)
        self.path = Path(tempfile.mkdtemp(prefix=WORKSPACE_PREFIX + secrets.token_hex(4) + "-", dir=root))
        os.chmod(self.path, 0o700)
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.path), True)
        self.touch()

    def touch(self) -> None:
        """Mark the workspace as used now (the sweep deletes idle ones)."""
        try:
            os.utime(self.path)
        except OSError:
            pass

    def sub(self, name: str) -> Path:
        """A sub-folder of the workspace, created if needed."""
        p = self.path / name
        p.mkdir(parents=True, exist_ok=True)
        return p

    def close(self) -> None:
        """Delete the workspace now."""
        self._finalizer()

    @property
    def alive(self) -> bool:
        """True while the workspace folder exists."""
        return self.path.is_dir()


def sweep(pol: Policy, now: float | None = None) -> list[Path]:
    """Delete workspaces unused for longer than the TTL (sessions that ended without cleaning up). Only
    session workspaces (``s-…``): the disk caches (``cache/``) in the same root stay."""
    now = time.time() if now is None else now
    root = pol.workspace_root
    gone: list[Path] = []
    if not root.is_dir():
        return gone
    for p in root.iterdir():
        try:
            if (p.name.startswith(WORKSPACE_PREFIX) and p.is_dir() and not p.is_symlink()
                    and now - p.stat().st_mtime > pol.session_ttl_s):
                shutil.rmtree(p, ignore_errors=True)
                gone.append(p)
        except OSError:
            continue
    return gone


# ---------------------------------------------------------------- LLM endpoints
def _host(url: str) -> str:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return ""
    host = (parts.hostname or "").lower()
    return f"{host}:{parts.port}" if parts.port else host


def _norm(url: str | None) -> str:
    return (url or "").strip().rstrip("/").lower()


def operator_endpoints(pol: Policy, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """LLM endpoints the operator allows: the settings file's, plus ``OPENAI_BASE_URL`` (or OpenAI's when a key is set)."""
    e = os.environ if env is None else env
    eps = [*pol.llm_endpoints]
    if (e.get("OPENAI_BASE_URL") or "").strip():
        eps.append(e["OPENAI_BASE_URL"].strip())
    elif (e.get("OPENAI_API_KEY") or "").strip():
        from chunkscope.llm import OPENAI_DEFAULT_URL

        eps.append(OPENAI_DEFAULT_URL)
    return tuple(dict.fromkeys(eps))


def llm_settings_for(pol: Policy, url: str = "", model: str = "", user_key: str = "",
                     env: Mapping[str, str] | None = None):
    """The LLM settings a session may use. In shared mode: the server's key only with an operator
    endpoint; a typed URL needs the user's own key and an allowed host. ShareError otherwise."""
    from chunkscope.llm import LLMSettings

    overrides: dict[str, Any] = {"base_url": url.strip() or None, "model": model.strip() or None,
                                 "api_key": user_key or None}
    base = LLMSettings.from_env(env, **overrides)
    if not pol.shared:
        return base
    e = os.environ if env is None else env
    server_key = (e.get("OPENAI_API_KEY") or "").strip() or None
    ops = {_norm(x) for x in operator_endpoints(pol, e)}
    target = _norm(base.effective_url) if base.configured else ""
    if not base.configured:
        return replace(base, api_key=None)
    if target in ops:
        return base  # an operator endpoint: the user's key if given, else the server's
    # a user-typed address
    if not user_key:
        raise ShareError("a typed LLM URL needs your own API key on this shared server (the server's key is "
                         "used only with the endpoints its operator configured)")
    if user_key == server_key:
        raise ShareError("that key cannot be used with a typed URL on this shared server")
    host = _host(base.effective_url)
    allowed = {h.lower() for h in pol.llm_user_hosts}
    if host not in allowed and host.split(":")[0] not in allowed:
        raise ShareError(f"this shared server does not send requests to {host or 'that address'} "
                         f"(allowed: {', '.join(sorted(allowed | {_host(x) for x in ops})) or 'none'})")
    return base


# ---------------------------------------------------------------- embedding models
def check_embedder(pol: Policy, name: str | None) -> str | None:
    """The model to load for ``name`` (None = bundled); in shared mode only a listed one."""
    if not pol.shared:
        return name
    choice = (name or "").strip() or pol.embedders[0]
    if choice not in pol.embedders:
        raise ShareError(f"embedding model {choice!r} is not offered on this server "
                         f"(choose one of: {', '.join(pol.embedders)})")
    return None if choice == BUNDLED_EMBEDDER else choice


# ---------------------------------------------------------------- documents
def check_document(pol: Policy, doc: Any) -> None:
    """Pages and tokens within the limits (shared mode only)."""
    if not pol.shared:
        return
    name = doc.meta.get("filename") or doc.name  # the file as uploaded, with its extension
    if len(doc.pages) > pol.max_pages:
        raise ShareError(f"{name}: {len(doc.pages)} pages, this server takes at most {pol.max_pages}")
    if len(doc.text) > pol.max_tokens:  # more characters than allowed tokens: count (bounded by the upload size)
        from chunkscope.text.tokens import count_tokens

        n = count_tokens(doc.text)
        if n > pol.max_tokens:
            raise ShareError(f"{name}: {n:,} tokens, this server takes at most {pol.max_tokens:,}")


# ---------------------------------------------------------------- concurrent analyses
class Slots:
    """At most ``n`` analyses at once; the others wait in arrival order and can show their place."""

    def __init__(self, n: int):
        self.n = n
        self._cond = threading.Condition()
        self._running = 0
        self._queue: list[object] = []

    @property
    def running(self) -> int:
        """Analyses running now."""
        return self._running

    @property
    def waiting(self) -> int:
        """Analyses waiting for a slot."""
        return len(self._queue)

    @contextmanager
    def slot(self, on_wait: Callable[[int], None] | None = None, poll: float = 0.5) -> Iterator[None]:
        """Hold a slot for the ``with`` body; ``on_wait(place)`` (1 = next) while waiting."""
        me = object()
        got = False
        with self._cond:
            self._queue.append(me)
            try:
                while True:
                    place = self._queue.index(me)
                    if place == 0 and self._running < self.n:
                        self._queue.pop(0)
                        self._running += 1
                        got = True
                        self._cond.notify_all()
                        break
                    if on_wait is not None:
                        self._cond.release()
                        try:
                            on_wait(place + 1)
                        finally:
                            self._cond.acquire()
                    self._cond.wait(poll)
            finally:
                if not got:  # the waiter left (page closed, rerun): it must not block the queue
                    self._queue.remove(me)
                    self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()


_SLOTS: Slots | None = None


def slots() -> Slots:
    """The process-wide analysis slots (``max_concurrent`` of the policy; unlimited-ish when not shared)."""
    global _SLOTS
    with _POLICY_LOCK:
        if _SLOTS is None:
            pol = _POLICY or load_policy()
            _SLOTS = Slots(pol.max_concurrent if pol.shared else 64)
        return _SLOTS
