"""The learned coreference backend (``learned``): shipped model, pairs, training, language guard."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from chunkscope.coref import get_pairs
from chunkscope.coref.base import Pair
from chunkscope.coref.learned import FEATURES, MODEL_FILE, READ_VERSION, decode, load_model, parse, resolve
from chunkscope.coref.train import examples, fit, train
from chunkscope.document import Document, Span

ROOT = Path(__file__).resolve().parent.parent


def en(text: str) -> Document:
    return Document(name="t", text=text, source_format="text", language="en")


def pairs_text(text: str, pairs: list[Pair]) -> list[tuple[str, str]]:
    return [(text[p.entity.start:p.entity.end], text[p.pronoun.start:p.pronoun.end]) for p in pairs]


def test_shipped_model_loads_and_is_used_by_the_learned_backend():
    model = load_model()
    data = json.loads(MODEL_FILE.read_text())
    assert data["features"] == list(FEATURES) and len(model.weights) == len(FEATURES)
    assert 0 < model.threshold < 1 and model.version.startswith("learned-")
    assert len(data["meta"]["documents"]) >= 10  # trained on the two corpus folders
    text = "The regulation applies to every controller. It sets out clear obligations."
    res = get_pairs(en(text), "learned")
    assert res.backend == "learned" and res.info["version"] == f"{model.version}-{READ_VERSION}"
    assert pairs_text(text, res.pairs) == [("The regulation", "It")]
    assert all(p.score is not None and model.threshold <= p.score <= 1 for p in res.pairs)


def test_pairs_on_hand_written_text():
    text = ("The Board shall adopt its rules of procedure. It shall publish them every year.\n\n"
            "Member States shall ensure that they notify the Commission of their penalties. "
            "It is necessary to protect personal data.")
    pairs = resolve(text)
    got = pairs_text(text, pairs)
    assert ("The Board", "its") in got and ("The Board", "It") in got
    assert ("Member States", "they") in got and ("Member States", "their") in got
    assert text.index("It is necessary") not in [p.pronoun.start for p in pairs]  # pleonastic "it"
    assert all(p.entity.start < p.pronoun.start for p in pairs)


def test_no_pronouns_no_pairs_and_reason():
    res = get_pairs(en("Personal data shall be processed lawfully, fairly and in a transparent manner."), "learned")
    assert res.pairs == [] and "no third-person pronouns" in res.reason


def test_non_english_guard_for_both_offline_backends():
    fr = Document(name="fr", source_format="text", text=(
        "Le règlement européen sur l'intelligence artificielle est entré en vigueur le 1er août 2024. "
        "Il fixe des règles harmonisées pour les systèmes d'IA et leurs fournisseurs. Its scope is wide."))
    for backend in ("heuristic", "learned"):
        res = get_pairs(fr, backend)
        assert res.pairs == [] and res.reason.startswith("non-English document (fr)"), backend


def test_logistic_fit_is_deterministic_and_learns():
    rng = np.random.default_rng(0)
    X = np.hstack([np.ones((200, 1)), rng.normal(size=(200, len(FEATURES) - 1))])
    y = (X[:, 5] + 0.1 * rng.normal(size=200) > 0).astype(float)
    w1, m1, s1 = fit(X, y)
    w2, m2, s2 = fit(X, y)
    assert np.array_equal(w1, w2) and np.array_equal(m1, m2) and np.array_equal(s1, s2)
    assert w1[5] > 1 and abs(w1[5]) == max(abs(w1[1:]))  # the informative feature dominates


def _tiny_corpus(root: Path) -> None:
    docs = {
        "one": ("The Authority publishes its report. It explains the reasons for its decision.\n\n"
                "Controllers shall keep records. They shall make them available to the Authority."),
        "two": ("The Commission adopts guidelines. It consults the Board before it acts.\n\n"
                "Providers shall inform users. They shall document their systems."),
    }
    (root / "parsed").mkdir(parents=True)
    (root / "mentions").mkdir()
    for name, text in docs.items():
        (root / "parsed" / f"{name}.json").write_text(json.dumps({"full_text": text, "split_points": []}))
        pairs = []
        for ent, pro in (("The Authority", "its"), ("The Authority", "It"), ("Controllers", "They"),
                         ("Controllers", "them"), ("The Commission", "It"), ("The Commission", "it"),
                         ("Providers", "They"), ("Providers", "their")):
            if ent in text and f" {pro} " in text:
                es = text.index(ent)
                ps = text.index(f" {pro} ", es) + 1
                pairs.append([[es, es + len(ent) - 1], [ps, ps + len(pro) - 1]])  # inclusive ends
        pd.DataFrame({"doc_name": [name], "entity_pron_mentions": [pairs]}).to_parquet(
            root / "mentions" / f"{name}.parquet")


def test_training_script_is_reproducible_on_a_tiny_corpus(tmp_path):
    _tiny_corpus(tmp_path / "c")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import train_coref
    finally:
        sys.path.remove(str(ROOT / "tools"))
    first = train_coref.model_text([str(tmp_path / "c")], log=None)
    assert train_coref.model_text([str(tmp_path / "c")], log=None) == first  # byte for byte
    out = tmp_path / "model.json"
    assert train_coref.main([str(tmp_path / "c"), "--out", str(out)]) == 0
    assert out.read_text() == first
    assert train_coref.main([str(tmp_path / "c"), "--out", str(out), "--check"]) == 0
    out.write_text(first.replace('"threshold"', '"threshold" ', 1))
    assert train_coref.main([str(tmp_path / "c"), "--out", str(out), "--check"]) == 1
    # the model file written is what the backend loads
    model = load_model(str(tmp_path / "model.json"))
    text = "The Agency reviews its budget. It reports to the Council."
    assert decode(parse(text), model) is not None


def test_parse_cache_is_keyed_by_every_module_the_parse_reads(tmp_path, monkeypatch):
    """The training parses are pickled under a hash of the learned module and of every module of the heuristic
    package (the rules live in several files since the package split): a change to any of them parses again."""
    from pathlib import Path

    from chunkscope.coref import heuristic, learned
    from chunkscope.coref import train as T

    read: list[Path] = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: (read.append(self), real(self))[1])
    digest = T.parse_code_digest()
    package = sorted(Path(heuristic.__file__).parent.glob("*.py"))
    assert {p.name for p in package} >= {"__init__.py", "candidates.py", "pleonastic.py", "resolver.py", "segments.py"}
    assert read == [Path(learned.__file__), *package]
    monkeypatch.undo()
    _tiny_corpus(tmp_path / "c")
    docs = T.corpus([str(tmp_path / "c")])
    first = T.parsed_docs(docs, tmp_path / "cache")
    assert sorted(f.name.split("-")[1] for f in (tmp_path / "cache").iterdir()) == [digest] * len(docs)
    again = T.parsed_docs(docs, tmp_path / "cache")  # read back from the pickles
    assert [[(m.start, m.end) for m in p.pronouns] for p, _ in again] == \
        [[(m.start, m.end) for m in p.pronouns] for p, _ in first]


def test_examples_label_the_maverick_antecedent():
    text = "The Board adopts its rules. It publishes them."
    parsed = parse(text)
    ref = [Pair(Span(0, 9), Span(text.index("its"), text.index("its") + 3)),
           Pair(Span(0, 9), Span(text.index("It "), text.index("It ") + 2))]
    exs = examples(parsed, ref)  # its, It (The Board, and "its" standing for it), them (no Maverick pair)
    assert [ex.y.tolist() for ex in exs] == [[1.0], [1.0, 1.0], [0.0, 0.0, 0.0]]
    model = train([(parsed, ref)], "t")
    assert model.version == "t" and model.meta["positives"] >= 2


def test_agreement_bench_runs_leave_one_out_on_a_tiny_corpus(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CHUNKSCOPE_CACHE_DIR", raising=False)  # the bench unsets it; restored after the test
    _tiny_corpus(tmp_path / "c")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import coref_agreement
    finally:
        sys.path.remove(str(ROOT / "bench"))
    out = tmp_path / "rows.json"
    rc = coref_agreement.main(["--corpus", str(tmp_path / "c"), "--no-analysis", "--cache", str(tmp_path / "cache"),
                               "--json", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "choice on all documents: Rules(" in printed and "mean |dRC|" in printed
    rows = json.loads(out.read_text())
    assert [r["document"] for r in rows] == ["one", "two"]
    for r in rows:  # each held-out document: the rules chosen on the other, scored against its Maverick pairs
        assert r["pairs"]["maverick"] == 4 and r["pairs"]["new"] > 0
        assert 0 <= r["precision"]["new"] <= 1 and 0 <= r["recall"]["new"] <= 1
        assert len(r["rc"]["maverick"]) == len(r["rc"]["new"]) == len(r["chunkings"]) > 3
        assert set(r["rules"]) >= {"heading_back", "first_person", "forward"}
