"""What produced a report's numbers: engine version and build, embedding model/backend/precision, coreference.

Every report carries ``provenance(...)``; cache keys and the corpus resume key include
``provenance_key(...)`` so results of different engines never mix silently.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from chunkscope.version import __version__, build


def provenance(settings: Any, embedder: dict[str, Any] | None = None, coref: dict[str, Any] | None = None) -> dict[str, Any]:
    """``settings``: a Settings (or its dict); ``embedder``/``coref``: the facts the stages found."""
    from chunkscope.embeddings.embedder import backend_facts

    s = settings.to_dict() if hasattr(settings, "to_dict") else dict(settings)
    emb = backend_facts(s.get("embedder"), s.get("embedding_backend", "auto")) | dict(embedder or {})
    return {
        "engine": f"chunkscope {__version__}",
        "build": build(),
        "embedding": {
            "model": emb.get("model") or s.get("embedder") or "all-MiniLM-L6-v2 (bundled)",
            "backend": emb.get("backend", "sentence-transformers"),
            "precision": emb.get("precision", "fp32"),
            "mode": s.get("embedding_mode", "composed"),
        },
        "coreference": (coref or {}).get("backend", s.get("coref")),
    }


def provenance_key(settings: Any) -> str:
    """A short stable digest of what will produce the numbers (before running: from settings)."""
    p = provenance(settings)
    return hashlib.sha256(json.dumps(p, sort_keys=True).encode()).hexdigest()[:16]
