""""Use it in your pipeline": the winner of an analysis as a settings file and a short snippet.

The settings file is the one ``chunkscope.Settings.from_file`` reads, with a ``[tune]`` table
naming the chunking (``chunker``); ``ChunkScopeSplitter.from_settings`` and ``chunkscope chunk``
read it back, so the pipeline cuts exactly what the leaderboard scored.
"""

from __future__ import annotations

from typing import Any

from chunkscope.analysis.settings import Settings, config_text
from chunkscope.report import Report


def winner_chunking(report: Report, chunking_id: str | None = None) -> tuple[str, dict[str, Any]]:
    """(registered chunker id, parameter overrides) of the winner (or ``chunking_id``); a named
    variant resolves to its base chunker and its parameters."""
    cid = chunking_id or report.winner
    if cid is None:
        raise ValueError("this analysis has no winner to export")
    s = Settings.from_dict({k: v for k, v in report.settings.items() if not k.startswith("_")})
    v = s.variants.get(cid)
    if v is not None:
        return v["chunker"], dict(v.get("params") or {})
    return cid, dict(s.params.get(cid, {}))


def winner_settings_text(report: Report, chunking_id: str | None = None, fmt: str = "toml") -> str:
    """The winner's settings file: the analysis settings, its parameters, ``[tune] chunker = ID``."""
    chunker, params = winner_chunking(report, chunking_id)
    s = Settings.from_dict({k: v for k, v in report.settings.items() if not k.startswith("_")})
    s = s.with_(params={chunker: params} if params else {}, variants={}, chunkers=(chunker,), candidates=(chunker,))
    return config_text(s, fmt, {"chunker": chunker})


def pipeline_snippet(report: Report, settings_filename: str = "chunkscope-winner.toml",
                     chunking_id: str | None = None) -> str:
    """A short Python snippet that chunks documents in a pipeline with the winner's settings."""
    chunker, params = winner_chunking(report, chunking_id)
    args = "".join(f", {k}={v!r}" for k, v in params.items())
    return f'''# pip install chunkscope   (the same engine the app ran)
import chunkscope
from chunkscope.integrations.langchain import ChunkScopeSplitter

# 1. ChunkScope's API: exact spans, tokens, pages and heading paths
doc = chunkscope.load("your-document.pdf")
chunks = chunkscope.chunk(doc, "{chunker}"{args})

# 2. LangChain: a TextSplitter with the winner's settings ({settings_filename} from the app)
splitter = ChunkScopeSplitter.from_settings("{settings_filename}")
docs = splitter.create_documents([open("your-document.md", encoding="utf-8").read()])
'''
