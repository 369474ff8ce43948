"""Corpus mode: discovery, mentions pickup, resume, tables vs per-document reports, CLI, jobs=2, app page."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from chunkscope.analysis import Settings
from chunkscope.corpus.discover import discover, domain_of, find_mentions
from chunkscope.corpus.run import run_corpus
from chunkscope.report import METRICS

CHUNKERS = ("page+pp", "recursive-1100+pp", "recursive-600+pp", "sentence-5")
CANDIDATES = ("page+pp", "recursive-1100+pp", "recursive-600+pp")
# precomputed coreference: documents with a mentions file get RC from it, others a reason (fast, no spaCy)
SETTINGS = Settings(chunkers=CHUNKERS, candidates=CANDIDATES, coref="precomputed")

EN_POLICY = """# Data retention policy

Northwind keeps customer records for audits. It deletes them after seven years unless a court orders otherwise.

## Scope

This policy applies to every employee and contractor. They must follow it when handling personal data.

## Requests

A customer may ask for a copy of the data. The company answers within thirty days and it records each request.
""" + "\n".join(f"\nSection {i} describes procedure {i} for the archive team in detail. The team reviews it yearly."
                for i in range(4))

EN_TECH = "\n\n".join(
    f"Step {i}. The service reads the queue, validates each message and writes the result to the store. "
    f"When the store is full, the service retries with exponential backoff and logs the failure." for i in range(6))

FR_TEXT = "\n\n".join(
    f"Article {i}. Le règlement européen sur l'intelligence artificielle fixe des obligations pour les "
    f"fournisseurs. Ils doivent documenter leurs systèmes et informer les utilisateurs des risques." for i in range(4))


def reference_doc() -> tuple[dict, list]:
    p1 = "# Standards\n\nThe auditor checks the controls. She writes a report for the board.\n\n<!-- PageBreak -->\n\n"
    p2 = "## Annex\n\nThe board reads it and approves the plan.\n\n<!-- PageBreak -->\n\n"
    text = p1 + p2
    sp = [text.index("The auditor"), len(p1), text.index("The board")]
    e_start = text.index("The auditor")
    pron = text.index("She")
    pairs = [[[e_start, e_start + len("The auditor") - 1], [pron, pron + 2]]]  # inclusive ends, as the reference
    return {"document_name": "Ada (technique)_Standards", "full_text": text, "pages": {"1": p1, "2": p2},
            "split_points": sp, "titles": []}, pairs


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    (root / "legal").mkdir()
    (root / "legal" / "policy.md").write_text(EN_POLICY, encoding="utf-8")
    (root / "tech").mkdir()
    (root / "tech" / "pipeline.txt").write_text(EN_TECH, encoding="utf-8")
    (root / "reglement.md").write_text(FR_TEXT, encoding="utf-8")
    (root / "broken.pdf").write_bytes(b"%PDF-1.7 junk junk junk")
    ref, pairs = reference_doc()
    (root / "ref" / "parsed").mkdir(parents=True)
    (root / "ref" / "mentions").mkdir()
    stem = ref["document_name"]
    (root / "ref" / "parsed" / f"{stem}.json").write_text(json.dumps(ref), encoding="utf-8")
    (root / "ref" / "mentions" / f"{stem}.json").write_text(json.dumps(pairs), encoding="utf-8")
    (root / "ref" / "expected.json").write_text("{}", encoding="utf-8")  # a JSON that is not a document
    (root / "cover.png").write_bytes(b"\x89PNG\r\n\x1a\n")  # not a document type: listed, not analysed
    return root


@pytest.fixture(scope="module")
def results(corpus, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("results")
    events = []
    summary = run_corpus(corpus, out, SETTINGS, jobs=1, progress=lambda d, t, e: events.append((d, t, dict(e))))
    summary["_events"] = events
    return out, summary


def entry(summary: dict, name: str) -> dict:
    return next(e for e in summary["documents"] if Path(e["path"]).stem.startswith(name))


def test_discovery_mentions_and_domains(corpus):
    items, ignored = discover(corpus)
    names = sorted(it.path.name for it in items)
    assert names == ["Ada (technique)_Standards.json", "broken.pdf", "pipeline.txt", "policy.md", "reglement.md"]
    reasons = {Path(i["path"]).name: i["reason"] for i in ignored}
    assert "expected.json" in reasons and "Ada (technique)_Standards.json" in reasons  # the mentions file
    assert reasons["cover.png"].startswith("not a document type (.png; read: .pdf, .md")
    ref = next(it for it in items if it.path.suffix == ".json")
    assert ref.mentions == corpus / "ref" / "mentions" / "Ada (technique)_Standards.json"
    assert ref.domain == "technical"
    assert {it.path.name: it.domain for it in items}["policy.md"] == "legal"
    assert {it.path.name: it.domain for it in items}["reglement.md"] == ""
    assert domain_of(Path("/x/parsed/Norma (légal)_GDPR.json")) == "legal"
    assert domain_of(Path("/x/parsed/Sophia (sciences sociales)_AI.json")) == "social"
    # STEM.mentions.json beside the file
    side = corpus / "tech" / "pipeline.mentions.json"
    side.write_text("[]", encoding="utf-8")
    try:
        assert find_mentions(corpus / "tech" / "pipeline.txt") == side
    finally:
        side.unlink()
    # a glob input
    items, _ = discover(str(corpus / "**" / "*.md"))
    assert sorted(it.path.name for it in items) == ["policy.md", "reglement.md"]


def test_links_out_of_a_confined_folder_are_not_read(tmp_path):
    """A shared server's corpus_root: a symlink planted there must not serve a file from outside
    (rglob follows file links); the same for a mentions file beside a document."""
    root, outside = tmp_path / "team", tmp_path / "server"
    (root / "docs").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET server file", encoding="utf-8")
    (outside / "m.json").write_text("[]", encoding="utf-8")
    (root / "docs" / "notes.txt").symlink_to(outside / "secret.txt")
    (root / "docs" / "plan.md").write_text("# Plan\n\nText.\n", encoding="utf-8")
    (root / "docs" / "plan.mentions.json").symlink_to(outside / "m.json")
    inside = root / "docs" / "inside.txt"
    inside.write_text("Inside.", encoding="utf-8")
    (root / "docs" / "alias.txt").symlink_to(inside)  # a link that stays inside is fine
    items, ignored = discover(root / "docs", confine=root)
    assert sorted(it.path.name for it in items) == ["alias.txt", "plan.md"]  # inside.txt: the same file, once
    assert {Path(i["path"]).name: i["reason"] for i in ignored}["notes.txt"] == "a link to a file outside the shared folder"
    assert next(it for it in items if it.path.name == "plan.md").mentions is None
    # without confinement (the CLI on one's own machine), links are followed as before
    items, _ = discover(root / "docs")
    assert "notes.txt" in {it.path.name for it in items}
    assert find_mentions(root / "docs" / "plan.md") == root / "docs" / "plan.mentions.json"


def test_end_to_end_outputs(results, corpus):
    out, summary = results
    assert summary["counts"] == {"ok": 4, "skipped": 0, "failed": 1, "documents": 5, "with_report": 4}
    bad = entry(summary, "broken")
    assert bad["status"] == "failed" and "broken.pdf" in bad["reason"] and "\n" not in bad["reason"]
    assert not list((out / "reports").glob("broken*"))
    # progress saw every document end
    finished = [e for _, _, e in summary["_events"] if e.get("status") in ("ok", "failed", "skipped")]
    assert len(finished) == 5 and summary["_events"][-1][0] == 5
    # French: RC undefined with a reason, other metrics present
    fr = json.loads((out / entry(summary, "reglement")["report"]).read_text())
    assert fr["document"]["language"] == "fr"
    win = next(c for c in fr["chunkings"] if c["id"] == fr["winner"])
    assert win["metrics"]["RC"] is None and win["metrics"]["BI"] is not None
    # mentions pickup: the reference document was scored with its precomputed pair
    ref = json.loads((out / entry(summary, "Ada")["report"]).read_text())
    assert ref["coref"]["backend"] == "precomputed" and ref["coref"]["pairs"] == 1
    assert ref["settings"]["mentions"].endswith("Ada (technique)_Standards.json")
    assert all(c["metrics"]["RC"] is not None for c in ref["chunkings"] if c["status"] == "ok")
    assert entry(summary, "Ada")["domain"] == "technical"
    # tidy table, CSV and winners
    import pandas as pd

    df = pd.read_parquet(out / "metrics.parquet")
    assert list(df.columns) == ["document", "domain", "language", "chunker", "candidate", "winner", "metric", "value"]
    # the document key: the path below the input folder
    assert set(df["document"]) == {"legal/policy.md", "tech/pipeline.txt", "reglement.md",
                                   "ref/parsed/Ada (technique)_Standards.json"}
    assert len(pd.read_csv(out / "metrics.csv")) == len(df)
    recs = [json.loads(x) for x in (out / "winners.jsonl").read_text().splitlines()]
    for e in summary["documents"]:
        if e["status"] != "ok":
            continue
        rep = json.loads((out / e["report"]).read_text())
        mine = [r for r in recs if r["document_sha256"] == rep["document"]["sha256"]]
        assert mine and all(r["chunker"] == rep["winner"] for r in mine)
        win = next(c for c in rep["chunkings"] if c["id"] == rep["winner"])
        assert [(r["start"], r["end"]) for r in mine] == [(c["start"], c["end"]) for c in win["chunks"]]
    assert json.loads((out / "summary.json").read_text())["settings"]["chunkers"] == list(CHUNKERS)


def test_tables_match_reports(results, monkeypatch):
    from chunkscope.corpus import report as CR
    from chunkscope.present import html_report

    out, summary = results
    res = CR.CorpusResults.load(out)
    reports = [json.loads((out / e["report"]).read_text()) for e in summary["documents"] if e.get("report")]
    t3 = {r["chunker"]: r for r in CR.metric_table(res)}
    t2 = {r["chunker"]: r for r in CR.chunk_size_table(res)}
    # Table 3 compares the chunkers on the documents every one of them ran on (Table 2 pools all chunks)
    ok = [{c["id"] for c in rep["chunkings"] if c["status"] == "ok"} for rep in reports]
    common = [rep for rep, ids in zip(reports, ok) if set(res.order) <= ids]
    assert common and {r["n"] for r in t3.values()} == {len(common)}
    for cid in CHUNKERS:
        runs = [c for rep in reports for c in rep["chunkings"] if c["id"] == cid and c["status"] == "ok"]
        if not runs:
            assert cid not in t3
            continue
        assert t3[cid]["documents"] == len(runs)
        compared = [c for rep in common for c in rep["chunkings"] if c["id"] == cid]
        for m in METRICS:
            vals = [c["metrics"][m] * 100 for c in compared if c["metrics"][m] is not None]
            if vals:
                assert t3[cid][m] == pytest.approx(sum(vals) / len(vals))
                if len(vals) > 1:
                    mean = sum(vals) / len(vals)
                    std = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))
                    assert t3[cid][f"{m}_std"] == pytest.approx(std)
        toks = [ch["tokens"] for c in runs for ch in c["chunks"]]
        assert t2[cid]["chunks"] == len(toks) and t2[cid]["max"] == max(toks)
        assert t2[cid]["mean"] == pytest.approx(sum(toks) / len(toks))
    # the Adaptive row is each document's winner
    wins = [next(c for c in rep["chunkings"] if c["id"] == rep["winner"]) for rep in common if rep["winner"]]
    bi = [c["metrics"]["BI"] * 100 for c in wins]
    assert t3[CR.ADAPTIVE]["BI"] == pytest.approx(sum(bi) / len(bi))
    assert t3[CR.ADAPTIVE]["score"] == pytest.approx(100 * sum(c["score"] for c in wins) / len(wins))
    t4 = CR.selection_table(res)
    assert sum(r["documents"] for r in t4) == len(reports)
    assert sum(r["percent"] for r in t4) == pytest.approx(100.0)
    for r in t4:
        assert r["documents"] == sum(1 for rep in reports if rep["winner"] == r["chunker"])
    corr = CR.spearman(res)
    assert list(corr.columns) == list(METRICS)
    text = CR.text_report(res)
    assert "Table 2" in text and "Table 3" in text and "Table 4" in text and CR.ADAPTIVE in text
    page = html_report.corpus_html_report(res)
    assert page.count("<script") >= 1 and page.count("plotly.js v") <= 2 and "Table 3" in page
    assert "<script>alert" not in page
    after = page.split("Adaptive choice vs the global best", 1)[1].split("<h2>", 1)[0]
    assert ("<table" in after) == bool(CR.adaptive_gaps(res))
    # when the adaptive policy picked the global best everywhere: a sentence, not an empty table
    monkeypatch.setattr(html_report, "adaptive_gaps", lambda *a, **k: [])
    after = html_report.corpus_html_report(res).split("Adaptive choice vs the global best", 1)[1].split("<h2>", 1)[0]
    assert "<table" not in after and "for every document: no gap" in after
    monkeypatch.setattr(html_report, "global_best", lambda *a, **k: None)  # no candidate scored anywhere
    page = html_report.corpus_html_report(res)
    assert "global best (None)" not in page and "No candidate scored" in page


def _check_table3(res, reports: dict[str, dict]) -> None:
    """Table 3 of ``res`` recomputed from the per-document reports (key -> report)."""
    from chunkscope.corpus import report as CR

    t3 = {r["chunker"]: r for r in CR.metric_table(res)}
    for cid in res.order:
        runs = [c for rep in reports.values() for c in rep["chunkings"] if c["id"] == cid and c["status"] == "ok"]
        assert t3[cid]["documents"] == len(runs) == len(reports)
        for m in METRICS:
            vals = [c["metrics"][m] * 100 for c in runs if c["metrics"][m] is not None]
            assert t3[cid][f"{m}_n"] == len(vals)
            if vals:
                assert t3[cid][m] == pytest.approx(sum(vals) / len(vals))
        assert t3[cid]["score"] == pytest.approx(100 * sum(c["score"] for c in runs) / len(runs))
    wins = [next(c for c in rep["chunkings"] if c["id"] == rep["winner"]) for rep in reports.values()]
    assert t3[CR.ADAPTIVE]["documents"] == len(reports)
    assert t3[CR.ADAPTIVE]["score"] == pytest.approx(100 * sum(c["score"] for c in wins) / len(wins))


def test_documents_sharing_a_file_name_keep_their_own_rows(tmp_path):
    """Two readme.md in two folders (two domains) and a third file: every table has a row set per document
    (keyed by the path below the input folder), and Table 3 is computed over the three documents."""
    import pandas as pd

    from chunkscope.corpus import report as CR
    from chunkscope.corpus.plan import plan_corpus
    from chunkscope.corpus.store import ResultStore

    root = tmp_path / "dup"
    files = {"legal/readme.md": EN_POLICY, "technical/readme.md": EN_TECH,
             "technical/other.txt": "The other notes. The team reads them every week and it files a summary."}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    two = ("recursive-1100+pp", "recursive-600+pp")
    out = tmp_path / "res"
    summary = run_corpus(root, out, SETTINGS.with_(chunkers=two, candidates=two), jobs=1)
    assert summary["counts"]["with_report"] == 3
    keys = set(files)
    assert {e["document"] for e in summary["documents"]} == keys
    df = pd.read_parquet(out / "metrics.parquet")
    assert set(df["document"]) == keys and set(pd.read_csv(out / "metrics.csv")["document"]) == keys
    assert df.groupby("document").size().nunique() == 1  # the same rows for each document
    assert {json.loads(x)["document"] for x in (out / "winners.jsonl").read_text().splitlines()} == keys
    reports = {e["document"]: json.loads((out / e["report"]).read_text()) for e in summary["documents"]}

    res = CR.CorpusResults.load(out)
    assert sorted(res.wide()["document"].unique()) == sorted(keys)
    _check_table3(res, reports)
    assert CR.selection_with_ties(res)["totals"]["documents"] == 3
    dom = {r["domain"]: r for r in CR.domain_breakdown(res)}
    assert dom["legal"]["documents"] == 1 and dom["technical"]["documents"] == 2
    for d, mine in (("legal", ["legal/readme.md"]), ("technical", ["technical/readme.md", "technical/other.txt"])):
        wins = [next(c["score"] for c in reports[k]["chunkings"] if c["id"] == reports[k]["winner"]) for k in mine]
        assert dom[d]["adaptive"] == pytest.approx(100 * sum(wins) / len(wins))
        assert dom[d]["best"] in two
    assert "Table 4, ties counted separately" in CR.text_report(res)

    # a results folder of the previous version (table keyed by document name, no key in the summary) reads the same
    old = json.loads((out / "summary.json").read_text())
    for e in old["documents"]:
        e.pop("document")
    (out / "summary.json").write_text(json.dumps(old), encoding="utf-8")
    df["document"] = df["document"].map(lambda k: Path(k).stem)
    df.to_parquet(out / "metrics.parquet", index=False)
    res_old = CR.CorpusResults.load(out)
    assert set(res_old.wide()["document"]) == keys
    _check_table3(res_old, reports)

    # the same relative path under two inputs: the path as given tells them apart
    entries, _, _ = plan_corpus([root / "legal", root / "technical"], ResultStore(tmp_path / "plan"),
                                SETTINGS.to_dict())
    assert sorted(e["document"] for e in entries) == sorted(
        [str(root / "legal" / "readme.md"), str(root / "technical" / "readme.md"), "other.txt"])


def test_resume_and_changed_settings(results, corpus):
    out, first = results
    again = run_corpus(corpus, out, SETTINGS, jobs=1)
    assert again["counts"]["ok"] == 0 and again["counts"]["skipped"] == 4 and again["counts"]["failed"] == 1
    assert all(e.get("resumed") for e in again["documents"] if e["status"] == "skipped")
    # a resumed document keeps the time its analysis took (within the parse/report bookkeeping)
    took = {e["report"]: e["seconds"] for e in first["documents"] if e["status"] == "ok"}
    for e in again["documents"]:
        if e.get("report") in took:
            assert 0.5 * took[e["report"]] <= e["seconds"] <= took[e["report"]] + 0.01
    assert sorted(e["report"] for e in again["documents"] if e.get("report")) == sorted(
        e["report"] for e in first["documents"] if e.get("report"))
    # the tables are rebuilt from the kept reports
    import pandas as pd

    assert len(pd.read_parquet(out / "metrics.parquet")) > 0
    # other settings: analyzed again, into new report files next to the old ones
    changed = run_corpus(corpus, out, SETTINGS.with_(max_tokens=900), jobs=1)
    assert changed["counts"]["ok"] == 4
    assert not {e["report"] for e in changed["documents"] if e.get("report")} & {
        e["report"] for e in first["documents"] if e.get("report")}
    # a changed file is analyzed again, the others are skipped
    (corpus / "tech" / "pipeline.txt").write_text(EN_TECH + "\n\nOne more step.", encoding="utf-8")
    try:
        third = run_corpus(corpus, out, SETTINGS, jobs=1)
        assert third["counts"]["ok"] == 1 and entry(third, "pipeline")["status"] == "ok"
    finally:
        (corpus / "tech" / "pipeline.txt").write_text(EN_TECH, encoding="utf-8")


def test_a_mentions_file_that_does_not_fit_its_document_fails_it(tmp_path, capsys):
    """A mentions file beside a document whose pronoun spans are not pronouns there (another document's file):
    the document fails with analyze --mentions's reason, listed like other failures, instead of a silent RC of
    None; a rerun skips it, and once the file is fixed it is analyzed."""
    from chunkscope.cli import main
    from chunkscope.ingest import load_document

    root = tmp_path / "docs"
    root.mkdir()
    (root / "policy.md").write_text(EN_POLICY, encoding="utf-8")
    (root / "pipeline.txt").write_text(EN_TECH, encoding="utf-8")
    text = load_document(root / "policy.md").text
    ent = text.index("Northwind")
    wrong = [[[ent, ent + 8], [text.index(w), text.index(w) + len(w) - 1]] for w in ("keeps", "customer", "audits")]
    mentions = root / "policy.mentions.json"
    mentions.write_text(json.dumps(wrong), encoding="utf-8")
    out = tmp_path / "res"
    argv = ["corpus", str(root), "--out", str(out), "--chunkers", ",".join(CHUNKERS[1:3]),
            "--candidates", ",".join(CHUNKERS[1:3]), "--coref", "precomputed"]
    assert main(argv) == 0
    cap = capsys.readouterr()
    why = "mentions: policy.mentions.json: only 0 of 3 pronoun spans are pronouns in this document"
    assert f"FAILED  policy.md  ({why}" in cap.err and f"failed: policy.md: {why}" in cap.out
    assert "1 analyzed, 0 skipped, 1 failed" in cap.out
    summary = json.loads((out / "summary.json").read_text())
    e = next(d for d in summary["documents"] if d["rel"] == "policy.md")
    assert e["status"] == "failed" and e["reason"].startswith(why) and not e.get("report")
    assert main(argv) == 0  # remembered: skipped as failed, with its reason
    assert f"failed: policy.md: {why}" in capsys.readouterr().out
    it = text.index("It deletes")
    mentions.write_text(json.dumps([[[ent, ent + 8], [it, it + 1]]]), encoding="utf-8")  # the right file
    assert main(argv) == 0
    assert "1 analyzed, 1 skipped, 0 failed" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    e = next(d for d in summary["documents"] if d["rel"] == "policy.md")
    rep = json.loads((out / e["report"]).read_text())
    assert e["status"] == "ok" and rep["coref"]["pairs"] == 1
    assert all(c["metrics"]["RC"] is not None for c in rep["chunkings"])


def test_cli_end_to_end(corpus, tmp_path, capsys):
    from chunkscope.cli import main

    out = tmp_path / "res"
    argv = ["corpus", str(corpus / "legal"), str(corpus / "reglement.md"), str(corpus / "broken.pdf"),
            "--out", str(out), "--chunkers", ",".join(CHUNKERS), "--candidates", ",".join(CANDIDATES),
            "--coref", "none"]
    rc = main(argv)
    cap = capsys.readouterr()
    assert rc == 0
    assert "2 analyzed, 0 skipped, 1 failed" in cap.out
    assert "not run: page+pp on 2 document(s) (skipped: the document has no pages" in cap.out  # Markdown has none
    assert "FAILED  broken.pdf" in cap.err and "ok      " in cap.err and "[" in cap.err
    # a resume: the run's header first, then what it finds done
    assert main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "corpus: 3 documents, 0 to analyze (engine local)", lines
    assert sorted(ln.split()[0] for ln in lines[1:] if not ln.startswith("[")) == ["FAILED", "skipped", "skipped"], lines
    rc = main(["corpus-report", str(out), "--html", str(tmp_path / "r.html")])
    cap = capsys.readouterr()
    assert rc == 0
    for head in ("Table 2", "Table 3", "Table 4", "Spearman", "Adaptive Chunking", "recursive-1100+pp"):
        assert head in cap.out
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["corpus-report", str(tmp_path / "nothing")]) == 2
    assert "no summary.json" in capsys.readouterr().err
    # an --html path that cannot be written is refused before the tables are printed
    assert main(["corpus-report", str(out), "--html", str(tmp_path)]) == 2
    cap = capsys.readouterr()
    assert "is a directory" in cap.err and "Table 2" not in cap.out
    assert main(["corpus-report", str(out), "--html", str(tmp_path / "r2.html"), "--no-html"]) == 2
    assert "choose one" in capsys.readouterr().err and not (tmp_path / "r2.html").exists()
    assert main(["corpus", str(tmp_path / "missing"), "--out", str(out)]) == 2


def test_corpus_report_names_a_summary_that_is_not_json(tmp_path, capsys):
    from chunkscope.cli import main

    (tmp_path / "summary.json").write_text("{broken", encoding="utf-8")
    assert main(["corpus-report", str(tmp_path), "--no-html"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.rstrip().endswith(
        f"{tmp_path}/summary.json: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2)"), err
    (tmp_path / "summary.json").write_text("[]", encoding="utf-8")
    assert main(["corpus-report", str(tmp_path), "--no-html"]) == 2
    assert "summary.json: not a corpus summary (schema None)" in capsys.readouterr().err


def test_jobs_2(corpus, tmp_path, monkeypatch):
    """Two worker processes (spawned, one model each); the same reports as an in-process run."""
    import sys
    import types

    # an AppTest run earlier in the session leaves app.py as __main__: spawned workers would re-run it
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    out = tmp_path / "par"
    s = SETTINGS.with_(chunkers=("recursive-1100+pp", "recursive-600+pp"), candidates=("recursive-1100+pp", "recursive-600+pp"),
                       embedder=str(tmp_path / "no-model"))  # no model load: ICC/DCC None, keeps it fast
    summary = run_corpus([corpus / "legal", corpus / "tech", corpus / "broken.pdf"], out, s, jobs=2)
    assert summary["counts"]["ok"] == 2 and summary["counts"]["failed"] == 1
    rep = json.loads((out / entry(summary, "policy")["report"]).read_text())
    assert rep["winner"] in ("recursive-1100+pp", "recursive-600+pp")
    assert any("embeddings unavailable" in w for w in rep["warnings"])


def test_corpus_page(corpus, tmp_path, monkeypatch):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))  # pages import ui.*
    monkeypatch.setenv("CHUNKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    root = Path(__file__).resolve().parent.parent
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120)  # the entrypoint, so switch_page works
    at.session_state["cs_chunkers"] = list(CHUNKERS)
    at.session_state["cs_candidates"] = list(CANDIDATES)
    at.session_state["cs_coref"] = "none"
    from chunkscope import sharing

    slots_taken: list[str] = []  # every piece of corpus-sized work holds one of the server's analysis slots
    real_slot = sharing.Slots.slot

    def counting_slot(self, *a, **k):
        slots_taken.append("slot")
        return real_slot(self, *a, **k)

    monkeypatch.setattr(sharing.Slots, "slot", counting_slot)
    at.switch_page("pages/4_Corpus.py").run()
    assert not at.exception, at.exception
    at.text_input(key="cs_corpus_folder").set_value(str(corpus / "legal")).run()
    assert not at.exception and not at.error
    assert not slots_taken
    at.button(key="cs_corpus_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(slots_taken) == 2  # the run, then reading its results into tables (once per run and session)
    at.run()
    assert len(slots_taken) == 2  # a rerun shows the tables without computing them again
    assert at.metric[0].value == "1"
    labels = [t.label for t in at.tabs]
    assert "Tables" in labels and "Per domain" in labels
    assert len(at.dataframe) >= 3
    at.button(key="cs_corpus_html_btn").click().run()
    at.button(key="cs_corpus_zip_btn").click().run()
    assert not at.exception, at.exception
    assert len(slots_taken) == 4  # the HTML report and the zip each held a slot
    assert at.session_state["cs_corpus_html_data"][1].startswith("<!DOCTYPE html>")
    import io
    import zipfile

    names = zipfile.ZipFile(io.BytesIO(at.session_state["cs_corpus_zip_data"][1])).namelist()
    assert "summary.json" in names and "metrics.csv" in names and any(n.startswith("reports/") for n in names)
    at.button(key="cs_corpus_open").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Compare chunkings"  # switched to the inspector
    doc = at.session_state["document"]
    assert doc.name == "policy"
    reports = at.session_state["cs_reports"]
    assert any(r.document["sha256"] == doc.sha256 for r in reports.values())


def test_cli_corpus_on_a_folder_without_documents_is_a_usage_error(tmp_path, capsys):
    from chunkscope.cli import main

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.csv").write_text("a,b\n", encoding="utf-8")
    out = tmp_path / "res"
    assert main(["corpus", str(empty), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no documents found" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()  # nothing written for a run that found nothing


def test_resume_key_changes_with_the_llm_api_key(monkeypatch):
    from chunkscope.corpus.plan import _llm_identity, resume_key

    monkeypatch.setenv("OPENAI_BASE_URL", "http://h/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key")
    k1 = resume_key("sha", "", {"coref": "none"}, _llm_identity())
    monkeypatch.setenv("OPENAI_API_KEY", "right-key")
    k2 = resume_key("sha", "", {"coref": "none"}, _llm_identity())
    assert k1 != k2 and "right-key" not in json.dumps(_llm_identity())


def test_ignored_files_are_listed_once_and_a_flood_is_counted(tmp_path, monkeypatch):
    import chunkscope.corpus.discover as C

    (tmp_path / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    for k in range(5):
        (tmp_path / f"img{k}.png").write_bytes(b"\x89PNG")
    items, ignored = C.discover([tmp_path, tmp_path / "img0.png", str(tmp_path / "*.png")])
    assert [it.path.name for it in items] == ["a.md"]
    assert sorted(Path(i["path"]).name for i in ignored) == [f"img{k}.png" for k in range(5)]  # once each
    monkeypatch.setattr(C, "MAX_IGNORED_LISTED", 2)
    _, ignored = C.discover(tmp_path)
    assert len(ignored) == 3 and ignored[-1]["reason"] == "and 3 more files not listed"


def test_table3_compares_chunkers_on_the_documents_they_all_ran_on(tmp_path):
    """A Word file makes the page chunker skip: its row must not be a mean over fewer, other documents than the
    rest. Every row shows n and is over the documents every chunker ran on; the note under the table says which
    were left out and why (the CLI text, the HTML report)."""
    import sys

    from chunkscope.corpus import report as CR
    from chunkscope.present.html_report import corpus_html_report

    sys.path.insert(0, str(Path(__file__).parent))
    from docx_factory import make_docx

    root = tmp_path / "in"
    root.mkdir()
    paged = "\n\n<!-- PageBreak -->\n\n"  # pages, so the page chunker runs on the Markdown files
    (root / "policy.md").write_text(EN_POLICY.replace("\n## ", paged + "## "), encoding="utf-8")
    (root / "steps.md").write_text(EN_TECH.replace("\n\nStep 3", paged + "Step 3"), encoding="utf-8")
    (root / "memo.docx").write_bytes(make_docx([("Heading1", "Memo"), ("Normal", EN_TECH.split("\n\n")[0]),
                                                ("Normal", EN_TECH.split("\n\n")[1])]))
    settings = Settings(chunkers=("page+pp", "recursive-600+pp"), candidates=("page+pp", "recursive-600+pp"),
                        coref="precomputed")
    out = tmp_path / "out"
    run_corpus(root, out, settings, jobs=1)
    res = CR.CorpusResults.load(out)
    reports = {k: v for k, v in res.verdicts.items()}
    assert len(reports) == 3
    ran = res.df[res.df["chunker"] == "page+pp"]
    assert set(ran["document"]) == {"policy.md", "steps.md"}  # skipped on the .docx
    w = res.wide()
    t3 = {r["chunker"]: r for r in CR.metric_table(res)}
    assert t3["page+pp"]["n"] == t3["recursive-600+pp"]["n"] == t3[CR.ADAPTIVE]["n"] == 2
    assert t3["recursive-600+pp"]["documents"] == 3 and t3["page+pp"]["documents"] == 2
    t2 = {r["chunker"]: r for r in CR.chunk_size_table(res)}  # Table 2 pools each chunker's own documents: n says so
    assert (t2["page+pp"]["n"], t2["recursive-600+pp"]["n"], t2[CR.ADAPTIVE]["n"]) == (2, 3, 3)
    both = w[(w["chunker"] == "recursive-600+pp") & w["document"].isin(["policy.md", "steps.md"])]
    assert t3["recursive-600+pp"]["score"] == pytest.approx(100 * both["score"].mean())
    note = CR.comparison_note(res)
    assert "2 of 3 documents every chunker ran on" in note and "1 left out (memo.docx)" in note and "page+pp" in note
    text = CR.text_report(res)
    assert note in text and " n " in text.split("Table 3", 1)[1].splitlines()[1] + " "
    assert "<th>n</th>" in corpus_html_report(res) and note.split(":")[0] in corpus_html_report(res)
