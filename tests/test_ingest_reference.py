"""Reference JSON (the paper's parsed corpus) through the public loader, kept exactly."""

from __future__ import annotations

import json

import pytest
from conftest import corpus_files

from chunkscope.document import Document
from chunkscope.ingest import load_bytes, load_document

FILES = corpus_files()
GDPR = next((p for p in FILES if "GDPR" in p.name), FILES[0] if FILES else None)


def test_small_reference_json_via_load_bytes():
    ref = {
        "document_name": "tiny",
        "full_text": "# Title\n\nThe data controller keeps it safe.\n\n<!-- PageBreak -->\n\n",
        "pages": {"1": "# Title\n\nThe data controller keeps it safe.\n\n<!-- PageBreak -->\n\n"},
        "split_points": [45],
        "titles": [{"title": "# Title", "start": 0, "end": 45, "level": 1}],
    }
    d = load_bytes(json.dumps(ref).encode(), "tiny.json")
    assert d.source_format == "reference" and d.name == "tiny"
    assert d.split_points == [45] and d.pages[0].end == len(ref["full_text"])
    assert [b.kind for b in d.blocks] == ["heading", "layout"]
    ref["split_points"] = [20]  # boundaries the builder would not draw: kept, kind "gold"
    odd = load_bytes(json.dumps(ref).encode(), "odd.json")
    assert odd.split_points == [20] and {b.kind for b in odd.blocks} == {"gold"}
    assert d.language == "en"


@pytest.mark.corpus
def test_reference_round_trip_on_dev_corpus(corpus_dir):
    data = json.loads(GDPR.read_text(encoding="utf-8"))
    d = load_document(GDPR)
    assert d.text == data["full_text"] and d.source_format == "reference"
    assert d.split_points == data["split_points"]
    kinds = {b.kind for b in d.blocks}
    assert {"heading", "layout", "table"} <= kinds  # builder kinds on the unchanged gold boundaries
    assert len(d.pages) == len(data["pages"]) and d.pages[-1].end == len(d.text)
    assert [h.start for h in d.headings] == sorted(t["start"] for t in data["titles"])
    assert d.language == "en"
    back = Document.from_dict(json.loads(json.dumps(d.to_dict())))
    assert back.to_dict() == d.to_dict()
    assert back.split_points == data["split_points"]


@pytest.mark.corpus
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem[:40])
def test_every_dev_file_loads(path):
    d = load_document(path)
    d.check_blocks()
    assert d.language in ("en", "fr")
    assert ("CNIL" in path.name) == (d.language == "fr")
