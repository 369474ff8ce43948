"""Shared mode, tested as the attacks it stops: a path outside the configured root, a results zip
that would carry other files, the server's API key sent to a typed URL (the loopback LLM server
records the Authorization header), an unlisted embedding model, more analyses than slots; plus
workspaces that vanish with the session, the one upload limit and the local-only default bind."""

from __future__ import annotations

import gc
import io
import json
import os
import sys
import tempfile
import threading
import time
import tomllib
import zipfile
from pathlib import Path

import pytest

from chunkscope import sharing
from chunkscope.sharing import Policy, ShareError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # ui.* from the repository root
from llm_server import ScriptedLLMServer, reply  # noqa: E402

SERVER_KEY = "sk-SERVERKEY-do-not-leak-0123456789"
USER_KEY = "sk-userkey-abcdef0123456789"


@pytest.fixture(autouse=True)
def _fresh_policy():
    sharing.set_policy(None)
    yield
    sharing.set_policy(None)


def _shared(tmp_path: Path, **kw) -> Policy:
    return Policy(shared=True, workspace_root=tmp_path / "ws", **kw)


# ------------------------------------------------------------------ operator settings
def test_policy_from_toml_then_env(tmp_path):
    cfg = tmp_path / "share.toml"
    cfg.write_text('shared = true\nmax_upload_mb = 12\nembedders = ["all-MiniLM-L6-v2", "/models/e5"]\n'
                   'llm_user_hosts = ["llm.example.org"]\n')
    pol = sharing.load_policy({"CHUNKSCOPE_MAX_CONCURRENT": "3"}, path=cfg)
    assert pol.shared and pol.bind == "0.0.0.0" and pol.max_upload_mb == 12 and pol.max_concurrent == 3
    assert pol.embedders == ("all-MiniLM-L6-v2", "/models/e5") and pol.llm_user_hosts == ("llm.example.org",)
    assert sharing.load_policy({"CHUNKSCOPE_MAX_UPLOAD_MB": "5"}, path=cfg).max_upload_mb == 5
    cfg.write_text("max_uploads = 3\n")
    with pytest.raises(ShareError, match="unknown setting"):
        sharing.load_policy({}, path=cfg)
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    with pytest.raises(ShareError, match="max_concurrent must be at least 1"):
        sharing.load_policy({"CHUNKSCOPE_MAX_CONCURRENT": "0"}, path=empty)
    assert not sharing.load_policy({}, path=empty).shared  # off by default


def test_a_named_settings_file_must_exist(tmp_path, monkeypatch, capsys):
    """A typo in --config or $CHUNKSCOPE_SHARE_CONFIG must not silently give the defaults (0.0.0.0
    in shared mode, the default limits): one line, exit 2. The default location stays optional."""
    from chunkscope.cli import main

    missing = tmp_path / "shre.toml"
    with pytest.raises(ShareError, match="no such settings file"):
        sharing.load_policy({}, path=missing)
    with pytest.raises(ShareError, match="CHUNKSCOPE_SHARE_CONFIG=.*no such settings file"):
        sharing.load_policy({sharing.CONFIG_ENV: str(missing)})
    with pytest.raises(ShareError, match="not a file"):
        sharing.load_policy({sharing.CONFIG_ENV: str(tmp_path)})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # no file at the default location: fine
    assert sharing.config_path({}) == tmp_path / "xdg" / "chunkscope" / "share.toml"
    assert sharing.load_policy({}).bind == "127.0.0.1"

    roots_before = set(Path(tempfile.gettempdir()).glob("chunkscope-share-*"))
    monkeypatch.delenv(sharing.CONFIG_ENV, raising=False)
    monkeypatch.delenv("CHUNKSCOPE_WORKSPACE_ROOT", raising=False)
    assert main(["app", "--share", "--config", str(missing), "--print-command"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.strip() == f"chunkscope app: error: --config: {missing}: no such settings file"
    monkeypatch.setenv(sharing.CONFIG_ENV, "/nope.toml")
    assert main(["app", "--share", "--print-command"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.strip().splitlines()) == 1 and "/nope.toml: no such settings file" in cap.err
    assert set(Path(tempfile.gettempdir()).glob("chunkscope-share-*")) == roots_before  # no private root left
    cfg = tmp_path / "share.toml"
    cfg.write_text('bind = "127.0.0.1"\nmax_upload_mb = 7\n')
    monkeypatch.delenv(sharing.CONFIG_ENV)
    assert main(["app", "--share", "--config", str(cfg), "--print-command"]) == 0
    out = capsys.readouterr().out
    assert "--server.address 127.0.0.1" in out and "--server.maxUploadSize 7" in out


# ------------------------------------------------------------------ paths
def test_folder_outside_the_root_is_refused(tmp_path):
    root = tmp_path / "team"
    (root / "contracts").mkdir(parents=True)
    (tmp_path / "private").mkdir()
    (root / "escape").symlink_to(tmp_path / "private")
    pol = _shared(tmp_path, corpus_root=root)
    assert sharing.resolve_folder(pol, "contracts") == (root / "contracts").resolve()
    assert sharing.resolve_folder(pol, str(root / "contracts")) == (root / "contracts").resolve()
    for attack in ("../private", str(tmp_path / "private"), "/etc", "escape", "contracts/../../private", "*"):
        with pytest.raises(ShareError):
            sharing.resolve_folder(pol, attack)
    with pytest.raises(ShareError, match="uploads only"):
        sharing.resolve_folder(_shared(tmp_path), "contracts")


def test_results_zip_contains_only_what_the_run_wrote(tmp_path):
    pytest.importorskip("streamlit")
    from ui.corpus import zip_bytes

    d = tmp_path / "results"
    (d / "reports").mkdir(parents=True)
    (d / "reports" / "a-1.json").write_text("{}")
    (d / "reports" / "a-1.winners.jsonl").write_text("")
    (d / "metrics.csv").write_text("x\n")
    (d / "summary.json").write_text(json.dumps({"documents": [
        {"report": "reports/a-1.json", "winners": "reports/a-1.winners.jsonl"},
        {"report": "../outside.json"},  # a doctored summary cannot reach out
    ]}))
    (tmp_path / "outside.json").write_text("secret")
    (d / "notes-of-the-server.txt").write_text("secret")
    (d / "reports" / "other.json").write_text("secret")
    (d / "winners.jsonl").symlink_to(tmp_path / "outside.json")
    names = sorted(zipfile.ZipFile(io.BytesIO(zip_bytes(d))).namelist())
    assert names == ["metrics.csv", "reports/a-1.json", "reports/a-1.winners.jsonl", "summary.json"]


class _Upload:
    """What st.file_uploader hands over: a name and the bytes."""

    def __init__(self, name: str, data: bytes):
        self.name, self._data = name, data

    def getvalue(self) -> bytes:
        return self._data


def _zip(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_corpus_uploads_keep_files_that_share_a_name(tmp_path, monkeypatch):
    """A zip with a/b/notes.md and c/notes.md gave '2 analyzed' for three documents: flattening the zip
    overwrote one notes.md without a word. Now the zip keeps its folders and a name uploaded twice gets a
    distinct one; nothing lands outside the upload folder."""
    pytest.importorskip("streamlit")
    from chunkscope.corpus.discover import discover
    from ui.corpus import save_uploads

    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    sharing.set_policy(Policy())
    zipped = _zip({"a/b/notes.md": b"# A\n\nalpha", "c/notes.md": b"# C\n\nzebra", "tool.exe": b"MZ",
                   "../../escape.md": b"out", "notes.md": b"# top of the zip", "__MACOSX/._notes.md": b"x"})
    d = save_uploads([_Upload("corp2.zip", zipped), _Upload("notes.md", b"# one"), _Upload("notes.md", b"# two"),
                      _Upload("latin1.txt", "caf\xe9".encode("latin-1"))])
    files = {p.relative_to(d).as_posix(): p.read_bytes() for p in d.rglob("*") if p.is_file()}
    assert set(files) == {"a/b/notes.md", "c/notes.md", "notes.md", "notes (2).md", "notes (3).md", "latin1.txt"}
    assert sorted(v for k, v in files.items() if Path(k).name.startswith("notes")) == sorted(
        [b"# A\n\nalpha", b"# C\n\nzebra", b"# top of the zip", b"# one", b"# two"])
    assert not list(tmp_path.rglob("escape.md"))
    items, _ignored = discover(d)
    assert len(items) == 6  # every document uploaded is analysed
    assert save_uploads([_Upload("notes.md", b"# one"), _Upload("latin1.txt", b"cafe")]) != d


def test_a_refused_corpus_zip_leaves_nothing_behind(tmp_path, monkeypatch):
    """A zip refused as too large left the files unpacked before the check in the session's workspace.
    Now the declared sizes are checked before anything is written, and a zip that fails while unpacking
    (here a damaged member after a good one) has what was written removed."""
    pytest.importorskip("streamlit")
    from ui.corpus import extract_zip, save_uploads

    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CHUNKSCOPE_MAX_BYTES", "1000")
    sharing.set_policy(Policy())
    big = _zip({"a/b/deep.md": b"# deep", "z.md": b"# z", "big.txt": b"x" * 5000})
    with pytest.raises(ShareError, match="big.txt in the zip unpacks to more than the upload limit"):
        save_uploads([_Upload("corp.zip", big), _Upload("loose.md", b"# loose")])
    many = _zip({f"d{i}.md": b"y" * 900 for i in range(6)})
    with pytest.raises(ShareError, match="more than 4 × the upload limit"):
        save_uploads([_Upload("many.zip", many)])
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file()] == []  # no upload folder, no partial file
    raw = bytearray(_zip({"a/good.md": b"# good", "b/bad.md": b"# bad bytes"}, zipfile.ZIP_STORED))
    raw[raw.index(b"# bad bytes")] ^= 0xFF  # its CRC no longer matches
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ShareError, match="b/bad.md in the zip cannot be unpacked"):
        extract_zip(bytes(raw), dest)
    assert list(dest.iterdir()) == []


# ------------------------------------------------------------------ LLM endpoints
def _auth_headers(srv: ScriptedLLMServer) -> list[str]:
    return [r["headers"].get("authorization", "") for r in srv.requests]


def test_server_key_is_never_sent_to_a_user_url(tmp_path):
    from chunkscope.llm import test_connection

    with ScriptedLLMServer() as op, ScriptedLLMServer() as user, ScriptedLLMServer() as other:
        for s in (op, user, other):
            s.push(reply("OK"))
        env = {"OPENAI_API_KEY": SERVER_KEY, "OPENAI_BASE_URL": op.base_url}
        pol = _shared(tmp_path, llm_user_hosts=(f"127.0.0.1:{user.port}",))
        # a typed URL without the user's own key: refused, nothing sent anywhere
        with pytest.raises(ShareError, match="your own API key"):
            sharing.llm_settings_for(pol, url=user.base_url, env=env)
        # ... even when the user pastes the server's key
        with pytest.raises(ShareError):
            sharing.llm_settings_for(pol, url=user.base_url, user_key=SERVER_KEY, env=env)
        # an address the operator did not allow: refused even with the user's key
        with pytest.raises(ShareError, match="does not send requests"):
            sharing.llm_settings_for(pol, url=other.base_url, user_key=USER_KEY, env=env)
        # allowed host with the user's key: the user's key goes there
        ok, _ = test_connection(sharing.llm_settings_for(pol, url=user.base_url, user_key=USER_KEY, env=env))
        assert ok
        # nothing typed: the operator endpoint with the server key
        ok, _ = test_connection(sharing.llm_settings_for(pol, env=env))
        assert ok
        assert _auth_headers(user) == [f"Bearer {USER_KEY}"]
        assert _auth_headers(op) == [f"Bearer {SERVER_KEY}"]
        assert other.requests == []
    # local mode keeps today's behaviour (the user is the operator)
    assert sharing.llm_settings_for(Policy(), url="http://x/v1", env=env).api_key == SERVER_KEY


# ------------------------------------------------------------------ models, documents
def test_unlisted_embedding_model_is_refused(tmp_path):
    pol = _shared(tmp_path, embedders=("all-MiniLM-L6-v2", "/models/e5"))
    assert sharing.check_embedder(pol, None) is None and sharing.check_embedder(pol, "") is None
    assert sharing.check_embedder(pol, "/models/e5") == "/models/e5"
    for attack in ("/etc", "/root/.cache/huggingface/some-model", "../models/e5"):
        with pytest.raises(ShareError, match="not offered"):
            sharing.check_embedder(pol, attack)
    assert sharing.check_embedder(Policy(), "/any/path") == "/any/path"  # local mode: any


def test_loaded_models_are_bounded():
    from chunkscope.embeddings import embedder as embeddings

    assert embeddings._models.maxsize == embeddings._MODELS_MAX


def test_document_limits(tmp_path):
    from chunkscope.document import Document, Span

    pol = _shared(tmp_path, max_pages=2, max_tokens=50)
    doc = Document("d", "word " * 40, "text", pages=[Span(0, 100), Span(100, 150), Span(150, 200)])
    with pytest.raises(ShareError, match="3 pages"):
        sharing.check_document(pol, doc)
    doc.pages = []
    sharing.check_document(pol, doc)  # 40 tokens
    doc.text = "word " * 80
    with pytest.raises(ShareError, match="tokens, this server takes at most 50"):
        sharing.check_document(pol, doc)


def test_limit_messages_name_the_file_and_not_the_operator_settings(monkeypatch):
    """Shared users saw 'manytokens: ... tokens' (no extension) and '...; the limit is 500
    (CHUNKSCOPE_MAX_PAGES)', a setting only the operator can change. The CLI keeps the variable's name."""
    import pymupdf

    from chunkscope.ingest import IngestError, Limits, load_bytes

    doc = load_bytes(b"word " * 80, "manytokens.txt")
    with pytest.raises(ShareError, match=r"^manytokens\.txt: \d+ tokens, this server takes at most 50$"):
        sharing.check_document(Policy(shared=True, max_tokens=50), doc)
    pdf = pymupdf.open()
    for _ in range(30):
        pdf.new_page()
    data = pdf.tobytes()
    monkeypatch.setenv("CHUNKSCOPE_MAX_PAGES", "20")
    monkeypatch.setenv("CHUNKSCOPE_MAX_BYTES", "100")
    monkeypatch.delenv(sharing.SHARED_ENV, raising=False)
    with pytest.raises(IngestError, match=r"30 pages; the limit is 20 \(CHUNKSCOPE_MAX_PAGES\)"):
        load_bytes(data, "many.pdf", max_bytes=10**6)
    with pytest.raises(IngestError, match="raise it with CHUNKSCOPE_MAX_BYTES"):
        load_bytes(data, "many.pdf")
    monkeypatch.setenv(sharing.SHARED_ENV, "1")  # set by `chunkscope app --share` for the server
    # the app and the corpus run give ingest the server's limits, worded as the server's (ingest knows no policy)
    with pytest.raises(IngestError, match=r"^many\.pdf has 30 pages; this server takes at most 20$"):
        load_bytes(data, "many.pdf", limits=Limits.from_env(10**6, shared=sharing.served_shared()))
    with pytest.raises(IngestError, match=r"^many\.pdf is .* over this server's 100 bytes size limit$"):
        load_bytes(data, "many.pdf", limits=Limits.from_env(shared=sharing.served_shared()))


def test_corpus_documents_get_the_same_limits_as_an_upload(tmp_path):
    """The edge passes the policy's check in (the engine does not read the policy): the command, and the
    per-document task given the check."""
    from functools import partial

    from chunkscope.cli import main
    from chunkscope.corpus.worker import analyze_file

    big = tmp_path / "big.md"
    big.write_text("# A\n\n" + "word " * 400, encoding="utf-8")
    pol = _shared(tmp_path, max_tokens=100)
    sharing.set_policy(pol)
    out = analyze_file(big, {"chunkers": ["whole"], "candidates": ["whole"], "coref": "none"},
                       check=partial(sharing.check_document, pol))
    assert out["status"] == "failed" and "tokens, this server takes at most 100" in out["reason"]
    res = tmp_path / "res"
    assert main(["corpus", str(big), "--out", str(res), "--chunkers", "whole", "--candidates", "whole",
                 "--coref", "none", "--quiet"]) == 1
    entry = json.loads((res / "summary.json").read_text())["documents"][0]
    assert entry["status"] == "failed" and "tokens, this server takes at most 100" in entry["reason"]


# ------------------------------------------------------------------ slots
def test_analyses_beyond_the_slots_wait_their_turn():
    slots = sharing.Slots(2)
    running, peak, places = [0], [0], []
    lock = threading.Lock()

    def job(i):
        with slots.slot(on_wait=lambda p: places.append(p), poll=0.01):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.1)
            with lock:
                running[0] -= 1

    ts = [threading.Thread(target=job, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    assert peak[0] == 2 and places and slots.running == 0 and slots.waiting == 0

    # a waiter that leaves (page closed: the callback raises) frees its place in the queue
    def leaver(p):
        raise RuntimeError("session gone")

    with slots.slot(), slots.slot():
        with pytest.raises(RuntimeError):
            with slots.slot(on_wait=leaver):
                pass
        assert slots.waiting == 0


# ------------------------------------------------------------------ workspaces
def test_workspace_is_private_and_deleted_with_the_session(tmp_path):
    pol = _shared(tmp_path, session_ttl_s=60)
    ws = sharing.Workspace(pol.workspace_root)
    (ws.sub("corpus") / "doc.md").write_text("# mine")
    path = ws.path
    assert oct(path.stat().st_mode & 0o777) == "0o700"
    del ws
    gc.collect()
    assert not path.exists()  # the session's state went away: so did its files
    old = sharing.Workspace(pol.workspace_root)
    keep = old  # still referenced, but unused for longer than the TTL
    os.utime(old.path, (time.time() - 120, time.time() - 120))
    fresh = sharing.Workspace(pol.workspace_root)
    assert sharing.sweep(pol) == [keep.path] and not keep.path.exists() and fresh.path.exists()


def test_disk_caches_are_bounded_on_a_shared_server(tmp_path, monkeypatch):
    """The embeddings SQLite cache grew with every text analysed, never trimmed (3.3 MB -> 20 MB for eight
    texts). On a shared server the disk caches now hold at most max_cache_mb in all: filling past it evicts
    the least recently used entries (rows and files alike); a row read again stays. Unbounded otherwise."""
    import numpy as np

    from chunkscope.caching import disk_cache_bytes
    from chunkscope.embeddings.embedder import _DiskCache

    cache = tmp_path / "cache"
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(cache))
    sharing.set_policy(_shared(tmp_path, max_cache_mb=1))
    old_answer = cache / "coref" / "old.json"
    old_answer.parent.mkdir(parents=True)
    old_answer.write_text("{}" + " " * 10_000)
    os.utime(old_answer, (time.time() - 3600, time.time() - 3600))
    disk = _DiskCache(cache, "model-a", 384)
    vec = np.ones(384, dtype=np.float32)
    disk.put_many({"first": vec})
    for batch in range(30):  # ~30 x 100 vectors of 1.5 KB: about 4.5 MB written
        disk.put_many({f"{batch}-{i}": vec * i for i in range(100)})
        assert disk.get_many(["first"]), batch  # used again and again: never the least recently used
    assert disk_cache_bytes(cache) <= 1024 * 1024
    assert disk.path.stat().st_size <= 1.5 * 1024 * 1024  # freed pages are reused: the file stays near the bound
    assert not old_answer.exists()  # the oldest entry went first
    assert not disk.get_many(["0-5"]) and disk.get_many(["29-5"])  # old rows evicted, the newest kept
    sharing.set_policy(Policy(workspace_root=tmp_path / "ws"))  # not shared: no bound
    for batch in range(30, 40):
        disk.put_many({f"{batch}-{i}": vec * i for i in range(100)})
    assert len(disk.get_many([f"{b}-{i}" for b in range(30, 40) for i in range(100)])) == 1000


def test_trimming_evicts_the_oldest_rows_of_every_model_file_at_once(tmp_path):
    """With two embedding models, every row was sent for deletion to the last file read (a generator kept its
    loop index), and an open cursor held a lock: each trim waited 30 s and evicted nothing."""
    import sqlite3

    from chunkscope.caching import DiskKV, trim_disk_cache

    kvs = {m: DiskKV(tmp_path / "embeddings" / f"{m}.sqlite") for m in ("a", "b")}
    for i in range(300):
        for m, kv in kvs.items():
            kv.put_many({f"{m}{i}": os.urandom(1000)})
    t0 = time.perf_counter()
    assert trim_disk_cache(tmp_path, 400_000) > 0
    assert time.perf_counter() - t0 < 10  # no lock waited for
    for m in kvs:
        with sqlite3.connect(tmp_path / "embeddings" / f"{m}.sqlite") as con:
            left = [k for (k,) in con.execute("SELECT key FROM emb")]
        assert 0 < len(left) < 150, (m, len(left))  # both files trimmed, each about as much as the other
        assert f"{m}299" in left and f"{m}0" not in left  # the newest rows stay, the oldest go


def test_the_sweep_keeps_the_disk_caches(tmp_path):
    """The TTL sweep deleted every folder of the root unchanged for an hour, the disk caches' ``cache/`` too."""
    pol = _shared(tmp_path, session_ttl_s=60)
    old = sharing.Workspace(pol.workspace_root)
    (pol.workspace_root / "cache" / "embeddings").mkdir(parents=True)
    for p in (old.path, pol.workspace_root / "cache"):
        os.utime(p, (time.time() - 3600, time.time() - 3600))
    assert sharing.sweep(pol) == [old.path] and (pol.workspace_root / "cache" / "embeddings").is_dir()


# ------------------------------------------------------------------ launching
def test_local_by_default_and_one_upload_limit(monkeypatch):
    from chunkscope.cli import build_parser
    from chunkscope.cli.app import launch_plan
    from chunkscope.ingest import DEFAULT_MAX_BYTES

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["address"] == "127.0.0.1"
    assert cfg["server"]["maxUploadSize"] * 1024 * 1024 == DEFAULT_MAX_BYTES
    assert "chunkscope app" in (ROOT / "Makefile").read_text().split("\nrun:")[1].split("\n\n")[0]
    cmd, env = launch_plan(build_parser().parse_args(["app"]), {})
    assert cmd[cmd.index("--server.address") + 1] == "127.0.0.1" and not env.get(sharing.SHARED_ENV)
    assert cmd[cmd.index("--server.fileWatcherType") + 1] == "none"  # no watcher over .venv for a user
    cmd, env = launch_plan(build_parser().parse_args(["app", "--reload"]), {})
    assert "--server.fileWatcherType" not in cmd  # a developer asks for reruns on save
    cmd, env = launch_plan(build_parser().parse_args(["app", "--share"]), {"CHUNKSCOPE_MAX_UPLOAD_MB": "7"})
    try:
        assert cmd[cmd.index("--server.address") + 1] == "0.0.0.0" and env[sharing.SHARED_ENV] == "1"
        assert cmd[cmd.index("--server.maxUploadSize") + 1] == "7"
        assert int(env["CHUNKSCOPE_MAX_BYTES"]) == 7 * 1024 * 1024  # the same limit for ingest
    finally:
        import shutil

        shutil.rmtree(env["CHUNKSCOPE_WORKSPACE_ROOT"], ignore_errors=True)


def test_workspace_root_from_the_settings_file_is_used(tmp_path, monkeypatch, capsys):
    """``workspace_root`` in the TOML file was overridden by the launcher's temp dir (environment variables
    outrank the file): uploads and caches went to /tmp. Now the file's root is used and shown; an
    environment variable still wins; only when neither sets it does a run get its own temp root."""
    from chunkscope.cli import build_parser, main
    from chunkscope.cli.app import launch_plan

    for name in ("CHUNKSCOPE_WORKSPACE_ROOT", "CHUNKSCOPE_CACHE_DIR", sharing.CONFIG_ENV, sharing.SHARED_ENV):
        monkeypatch.delenv(name, raising=False)
    cfg = tmp_path / "share.toml"
    cfg.write_text(f'workspace_root = "{tmp_path / "ws"}"\n')
    args = build_parser().parse_args(["app", "--share", "--config", str(cfg)])
    _cmd, env = launch_plan(args, {})
    assert env["CHUNKSCOPE_WORKSPACE_ROOT"] == str(tmp_path / "ws") and "_CHUNKSCOPE_OWN_WORKSPACE_ROOT" not in env
    assert env["CHUNKSCOPE_CACHE_DIR"] == str(tmp_path / "ws" / "cache")
    assert sharing.load_policy(env).workspace_root == tmp_path / "ws"  # what the server process reads
    _cmd, env = launch_plan(args, {"CHUNKSCOPE_WORKSPACE_ROOT": str(tmp_path / "env-ws")})
    assert env["CHUNKSCOPE_WORKSPACE_ROOT"] == str(tmp_path / "env-ws")  # the environment wins over the file
    assert main(["app", "--share", "--config", str(cfg), "--print-command"]) == 0
    shown = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert shown["workspace_root"] == str(tmp_path / "ws") and shown["cache_dir"] == str(tmp_path / "ws" / "cache")
    cfg.write_text("max_upload_mb = 7\n")  # no root set anywhere: a fresh temp root for this run
    _cmd, env = launch_plan(args, {})
    try:
        assert env["_CHUNKSCOPE_OWN_WORKSPACE_ROOT"] == "1"
        assert Path(env["CHUNKSCOPE_WORKSPACE_ROOT"]).name.startswith("chunkscope-share-")
    finally:
        import shutil

        shutil.rmtree(env["CHUNKSCOPE_WORKSPACE_ROOT"], ignore_errors=True)


# ------------------------------------------------------------------ the Corpus page in shared mode
def test_corpus_page_in_shared_mode_refuses_server_paths(tmp_path, monkeypatch):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    root = tmp_path / "team"
    (root / "docs").mkdir(parents=True)
    monkeypatch.setenv("CHUNKSCOPE_SHARED", "1")
    monkeypatch.setenv("CHUNKSCOPE_CORPUS_ROOT", str(root))
    monkeypatch.setenv("CHUNKSCOPE_WORKSPACE_ROOT", str(tmp_path / "ws"))
    at = AppTest.from_file(str(ROOT / "pages" / "4_Corpus.py"), default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    radio = at.radio(key="cs_corpus_mode")
    assert "Folder on the server" not in radio.options and radio.options[0] == "Upload files"
    radio.set_value("Folder under team/").run()
    at.text_input(key="cs_corpus_folder").input("../../").run()
    assert any("outside the shared folder" in e.value for e in at.error)
    assert not any(b.key == "cs_corpus_run" for b in at.button)  # nothing to run on
    # no results-folder box to type a server path into
    assert not [t for t in at.text_input if (t.key or "").startswith("cs_corpus_out_")]
    # a valid folder: the run's worker processes are capped by the operator (each loads the model)
    (root / "docs" / "a.md").write_text("# A\n\nText.\n")
    at.text_input(key="cs_corpus_folder").input("docs").run()
    assert not at.exception, at.exception
    assert at.number_input(key="cs_corpus_jobs").max == 2 and any(b.key == "cs_corpus_run" for b in at.button)


def test_corpus_page_in_shared_mode_shows_one_banner_and_no_server_path(tmp_path, monkeypatch):
    """The Corpus page showed the shared-server line twice and the server's absolute results path."""
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    from chunkscope.corpus.tables import SCHEMA, TIDY_COLUMNS
    from ui.corpus import RESULTS_KEY

    monkeypatch.setenv("CHUNKSCOPE_SHARED", "1")
    monkeypatch.setenv("CHUNKSCOPE_WORKSPACE_ROOT", str(tmp_path / "ws"))
    at = AppTest.from_file(str(ROOT / "pages" / "4_Corpus.py"), default_timeout=90)
    at.run()
    assert not at.exception, at.exception
    assert sum("Shared server" in c.value for c in at.sidebar.caption) == 1
    ws = sharing.Workspace(tmp_path / "ws")  # the session's, as an upload would have made it
    at.session_state["cs_workspace"] = ws
    results = ws.sub("corpus") / "results-0123"
    results.mkdir()
    (results / "summary.json").write_text(json.dumps({"schema": SCHEMA, "documents": [], "counts": {"failed": 0}}))
    (results / "metrics.csv").write_text(",".join(TIDY_COLUMNS) + "\n")
    at.session_state[RESULTS_KEY] = str(results)
    at.run()
    assert not at.exception, at.exception
    assert any("marks the candidates" in c.value for c in at.caption)  # the results are shown
    shown = [e.value for e in [*at.caption, *at.markdown, *at.error, *at.warning, *at.info]]
    assert not [v for v in shown if str(tmp_path) in v]


def test_corpus_workers_are_capped_on_a_shared_server(tmp_path):
    from ui.corpus import MAX_JOBS, run_options

    assert run_options("local", 64).jobs == MAX_JOBS  # a machine of one's own
    sharing.set_policy(_shared(tmp_path, max_workers=3))
    assert run_options("local", 64).jobs == 3 and run_options("local", 2).jobs == 2
    assert sharing.load_policy({"CHUNKSCOPE_MAX_WORKERS": "4"}, path=_empty_toml(tmp_path)).max_workers == 4
    with pytest.raises(ShareError, match="max_workers must be at least 1"):
        sharing.load_policy({"CHUNKSCOPE_MAX_WORKERS": "0"}, path=_empty_toml(tmp_path))


def test_a_corpus_run_on_a_shared_server_reads_nothing_through_links_out(tmp_path, monkeypatch):
    """The page's run is confined: to corpus_root for a folder under it, else to the uploads' folder."""
    import chunkscope.corpus.run as corpus_mod
    from chunkscope.analysis import Settings
    from ui.corpus import run_with_progress

    seen = []

    def fake_run(inputs, out_dir, settings, progress=None, options=None):
        seen.append(options)
        return {"counts": {"ok": 0, "skipped": 0, "failed": 0}, "timings": {"total": 0.0}}

    monkeypatch.setattr(corpus_mod, "run_corpus", fake_run)
    root, uploads = tmp_path / "team", tmp_path / "ws" / "uploads"
    (root / "docs").mkdir(parents=True)
    uploads.mkdir(parents=True)
    sharing.set_policy(_shared(tmp_path, corpus_root=root))
    run_with_progress(str(root / "docs"), str(tmp_path / "out"), Settings())
    run_with_progress(str(uploads), str(tmp_path / "out2"), Settings())
    assert [o.confine for o in seen] == [str(root.resolve()), str(uploads.resolve())]
    sharing.set_policy(Policy())  # one's own machine: links are followed
    run_with_progress(str(root / "docs"), str(tmp_path / "out3"), Settings())
    assert seen[-1] is None


def _empty_toml(tmp_path: Path) -> Path:
    p = tmp_path / "empty.toml"
    p.write_text("")
    return p


def test_no_tokenizer_path_is_typed_on_a_shared_server(tmp_path, monkeypatch):
    """The sidebar's "another model" box read any server path as a tokenizer (probing which files
    exist; /dev/zero exhausted the memory): on a shared server the box is not offered."""
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    from ui.limits import CUSTOM

    for shared_mode in (False, True):
        monkeypatch.setenv("CHUNKSCOPE_SHARED", "1" if shared_mode else "0")
        monkeypatch.setenv("CHUNKSCOPE_WORKSPACE_ROOT", str(tmp_path / "ws"))
        sharing.set_policy(None)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        at.selectbox(key="cs_target_model").set_value(CUSTOM).run()
        assert not at.exception, at.exception
        boxes = [t for t in at.text_input if t.key == "cs_target_tokenizer"]
        assert len(boxes) == (0 if shared_mode else 1), shared_mode


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_stopping_the_app_command_stops_its_server(tmp_path):
    """A service manager (or ``kill``) stops ``chunkscope app`` with SIGTERM: the Streamlit server it started must
    stop too. Before, the wrapper died alone and the server kept answering on the port, so a restart found the
    port taken."""
    import signal
    import subprocess
    import urllib.request

    from browser_tour import free_port

    port = free_port()
    env = {**os.environ, "CHUNKSCOPE_CACHE_DIR": str(tmp_path), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    script = "import sys\nfrom chunkscope.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    proc = subprocess.Popen([sys.executable, "-c", script, "app", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def answers() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    try:
        deadline = time.time() + 90
        while not answers():
            assert proc.poll() is None and time.time() < deadline, "the app did not start"
            time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)  # Streamlit closes cleanly on SIGTERM
        deadline = time.time() + 10
        while answers() and time.time() < deadline:
            time.sleep(0.3)
        assert not answers(), "the server outlived the command that started it"
    finally:
        os.killpg(proc.pid, signal.SIGKILL) if proc.poll() is None or answers() else None


@pytest.mark.parametrize("bind, warned", [("0.0.0.0", True), ("127.0.0.1", False)])
def test_serving_every_interface_is_said_when_the_app_starts(bind, warned, tmp_path, monkeypatch, capsys):
    """`--share` listens on 0.0.0.0 unless told otherwise, and the app has no login: a forgotten --bind bypasses
    the authenticating proxy the docs ask for. The start line now says so."""
    import subprocess

    from chunkscope.cli import main

    class Done:  # the server, started and stopped at once
        def __init__(self, cmd, env):
            self.cmd = cmd

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr(subprocess, "Popen", Done)
    monkeypatch.setenv("CHUNKSCOPE_WORKSPACE_ROOT", str(tmp_path / "ws"))
    assert main(["app", "--share", "--bind", bind, "--port", "8599"]) == 0
    err = capsys.readouterr().err
    assert f"shared mode on http://{bind}:8599" in err
    assert ("listening on every network interface, and the app has no login" in err) == warned, err
