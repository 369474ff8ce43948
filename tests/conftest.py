"""Shared test fixtures. Tests needing ../shared/corpus skip cleanly when it is absent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORPUS_DIR = Path(os.environ.get("CHUNKSCOPE_DEV_CORPUS", ROOT.parent / "shared" / "corpus" / "clair-dev"))

# Keep model/tokenizer caches and any on-disk state inside the test session.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def corpus_available() -> bool:
    return (CORPUS_DIR / "parsed").is_dir()


def corpus_files() -> list[Path]:
    if not corpus_available():
        return []
    return sorted((CORPUS_DIR / "parsed").glob("*.json"))


def mentions_file(parsed: Path) -> Path:
    return CORPUS_DIR / "mentions" / (parsed.stem + ".parquet")


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not corpus_available():
        pytest.skip("../shared/corpus/clair-dev not present")
    return CORPUS_DIR


@pytest.fixture(scope="session")
def expected_values(corpus_dir: Path) -> dict:
    return json.loads((corpus_dir / "expected.json").read_text())


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test writes caches to a temporary dir, never the user's cache."""
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
