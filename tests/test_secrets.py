"""No secret in any report, cache file, log line or exception message: a recognisable fake key
goes through a whole analysis with llm-regex (a successful answer, then an endpoint that echoes
the key back in its error, then the key inside the URL) and is searched for everywhere after."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from chunkscope.analysis import Resources, Settings, analyze
from chunkscope.document import Document
from chunkscope.llm import LLMClient, LLMError, LLMSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm_server import ScriptedLLMServer, error, reply  # noqa: E402

FAKE = "sk-FAKEKEY-ChunkScopeLeakCanary-7f3a9c"
TEXT = ("# Widgets\n\nWidgets are small. They are useful.\n\n## Use\n\nUse them daily. Store them dry.\n\n"
        "## Care\n\nClean them weekly. Keep them away from water.\n") * 3


def _everything_written(root: Path) -> str:
    out = []
    for p in root.rglob("*"):
        if p.is_file():
            out.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def test_no_secret_anywhere(tmp_path, monkeypatch, caplog, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(cache))
    monkeypatch.setenv("OPENAI_API_KEY", FAKE)
    caplog.set_level(logging.DEBUG)
    doc = Document("widgets", TEXT, "markdown")
    s = Settings(chunkers=("llm-regex", "recursive-1100"), candidates=("llm-regex", "recursive-1100"), coref="none")
    texts: list[str] = []
    with ScriptedLLMServer() as srv:
        srv.push(reply("<regex>(?m)^(?=## )</regex>"))
        good = LLMSettings(base_url=srv.base_url, api_key=FAKE, model="m", timeout=5, max_retries=0)
        rep = analyze(doc, s, resources=Resources(llm_settings=good))
        assert rep.get("llm-regex").ok  # the key was really used
        texts.append(json.dumps(rep.to_dict()))
        assert srv.requests[0]["headers"]["authorization"] == f"Bearer {FAKE}"

        # an endpoint that echoes the key in its error message
        srv.push(error(401, f"Incorrect API key provided: {FAKE}"), error(500, f"boom for key {FAKE}"))
        for _ in range(2):
            try:
                LLMClient(LLMSettings(base_url=srv.base_url, api_key=FAKE, model="m2", max_retries=0)).chat(
                    [{"role": "user", "content": "hi"}])
            except LLMError as exc:
                texts.append(str(exc) + repr(exc))
        # the key inside the URL (user:password@host)
        url = srv.base_url.replace("http://", f"http://user:{FAKE}@")
        bad = LLMSettings(base_url=url, api_key=FAKE, model="m3", timeout=5, max_retries=0)
        srv.push(error(400, "bad request"))
        rep2 = analyze(doc, Settings(chunkers=("llm-regex",), candidates=("llm-regex",), coref="none",
                                     params={"llm-regex": {"use_cache": False}}), resources=Resources(llm_settings=bad))
        texts.append(json.dumps(rep2.to_dict()))
        texts += [str(bad), repr(bad), json.dumps(bad.cache_identity()), json.dumps(bad.public_dict())]
    texts.append(_everything_written(cache))
    texts += [r.getMessage() for r in caplog.records]
    out = capsys.readouterr()
    texts += [out.out, out.err]
    blob = "\n".join(texts)
    assert "llm-regex" in blob and len(blob) > 1000
    assert FAKE not in blob
    assert "ChunkScopeLeakCanary" not in blob
