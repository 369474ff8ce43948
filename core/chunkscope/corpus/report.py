"""Corpus-level tables and figures from a ``chunkscope corpus`` results directory.

The paper's layouts (Adaptive Chunking, section 3):

* **Table 2** -- chunk sizes in o200k tokens pooled over every chunk of the corpus (mean, max,
  min, std. dev.), the number of chunks, and the time per document (mean seconds of that
  chunking: chunking plus its metrics; the shared document embedding and coreference are not
  included). The *Adaptive Chunking* row pools the winning chunks; its time is the sum of the
  candidates' times (the pipeline runs every candidate), as in the paper.
* **Table 3** -- mean ± sample std. dev. over documents of each metric x100 (a document where
  a metric is undefined, e.g. RC without pairs, is left out of that metric), ``mean`` = the mean
  of the five metric means (the paper's column), ``score`` = mean of the per-document scores
  used by the adaptive selection. *Adaptive Chunking* = each document's winner.
* **Table 4** -- % of documents for which the adaptive policy selected each chunker.
* **Table 4, ties counted separately** -- per chunker: the documents where it has the highest
  score (the paper's policy), where it is a *clear winner* (ahead of every other candidate in
  >= 95% of the bootstrap resamples), where it is *tied* with others, and where the tie-break
  picked it (``chunkscope.analysis.uncertainty``); reports without a verdict are counted apart.
* **Figure 1** -- Spearman rank correlation between metrics over (document, chunking) pairs
  (pairwise complete observations).
* Per-domain breakdown and the documents where the adaptive choice beats the globally best
  chunker (the candidate with the highest mean score) by the largest score gap.

Everything is read from files (``metrics.parquet`` and the per-document reports), so the
tables can be rebuilt any time without re-running the analysis. ``* `` marks a candidate.
Every per-document view is keyed by the document key (``chunkscope.corpus.discover.document_keys``: the path
below the input folder), never by the document name, which two files may share; a results folder
written before the key existed has its table rebuilt from its reports.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chunkscope.corpus.store import ResultStore
from chunkscope.corpus.tables import TIDY_COLUMNS, load_summary, read_reports, tidy_rows
from chunkscope.report import METRICS

ADAPTIVE = "Adaptive Chunking"


def _tidy_table(store: ResultStore) -> Any:
    """The tidy table a run wrote (metrics.parquet, else metrics.csv) as a pandas DataFrame."""
    import pandas as pd

    if store.is_file("metrics.parquet"):
        return store.read_parquet("metrics.parquet")
    if store.is_file("metrics.csv"):
        return pd.read_csv(io.StringIO(store.read_text("metrics.csv")))
    raise ValueError(f"{store.display()}: no metrics.parquet or metrics.csv")


@dataclass
class CorpusResults:
    """A corpus run read back from its results directory: what every table and figure is computed from."""

    dir: Path
    summary: dict[str, Any]
    df: Any  # pandas DataFrame, tidy (chunkscope.corpus.tables.TIDY_COLUMNS)
    tokens: dict[str, list[int]] = field(default_factory=dict)  # chunker -> every chunk's tokens
    seconds: dict[str, list[float]] = field(default_factory=dict)  # chunker -> seconds per document
    winner_tokens: list[int] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    not_run: dict[str, dict[str, Any]] = field(default_factory=dict)  # chunker -> {status, reason, documents}
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # document key -> its report's verdict

    @classmethod
    def load(cls, results_dir: str | Path) -> "CorpusResults":
        """Read a results directory back: its summary, its tidy table and every document's report."""
        import pandas as pd

        store = ResultStore(results_dir)
        summary = load_summary(store)
        d = Path(results_dir) if store.local_dir is None else store.local_dir
        res = cls(dir=d, summary=summary, df=_tidy_table(store))
        res.candidates = list(summary.get("settings", {}).get("candidates") or [])
        entries = summary.get("documents", [])
        # a summary written before the document key (chunkscope.corpus.discover.document_keys) comes with a table
        # keyed by document name, which merges documents that share one: its rows are rebuilt from the reports
        rows: list[dict[str, Any]] | None = None if any(e.get("document") for e in entries) else []
        seen: list[str] = []
        for e, key, rep in read_reports(store, entries):
            if rep is None:
                rows = None  # not rebuilt: the table as written
                continue
            if rows is not None:
                rows.extend(tidy_rows(rep, e.get("domain", ""), key))
            res._take_report(rep, key, e.get("domain", ""), seen)
            del rep
        if rows:
            res.df = pd.DataFrame(rows, columns=list(TIDY_COLUMNS)).astype({"value": "float64"})
        res.order = [c for c in res.candidates if c in seen] + [c for c in seen if c not in res.candidates]
        return res

    def _take_report(self, rep: dict[str, Any], key: str, domain: str, seen: list[str]) -> None:
        """Add one document's verdict, chunk sizes, seconds and chunkings without a result (``seen``: the
        chunkings met so far, in order)."""
        self.verdicts[key] = {**(rep.get("verdict") or {}), "domain": domain, "report_winner": rep.get("winner")}
        for c in rep.get("chunkings", []):
            if c.get("status") != "ok":
                nr = self.not_run.setdefault(c["id"], {"status": c.get("status", ""), "reason": c.get("reason", ""),
                                                       "documents": 0})
                nr["documents"] += 1
                continue
            toks = [ch["tokens"] for ch in c.get("chunks", [])]
            self.tokens.setdefault(c["id"], []).extend(toks)
            self.seconds.setdefault(c["id"], []).append(float(c.get("seconds") or 0.0))
            if c["id"] not in seen:
                seen.append(c["id"])
            if c["id"] == rep.get("winner"):
                self.winner_tokens.extend(toks)

    # -------------------------------------------------------------- data views
    def documents(self) -> list[dict[str, Any]]:
        """The summary entries of the documents with a report."""
        return [e for e in self.summary.get("documents", []) if e.get("report")]

    def wide(self):
        """One row per (document, chunker): columns METRICS + score + chunks + candidate/winner/domain.

        ``document`` is the document key (chunkscope.corpus.discover.document_keys), unique per document."""
        df = self.df
        if df.empty:
            import pandas as pd

            return pd.DataFrame(columns=["document", "chunker", "domain", "candidate", "winner", *METRICS, "score"])
        w = df.pivot_table(index=["document", "chunker"], columns="metric", values="value", aggfunc="first",
                           dropna=False)
        meta = df.groupby(["document", "chunker"])[["domain", "candidate", "winner"]].first()
        w = w.join(meta).reset_index()
        for m in (*METRICS, "score"):
            if m not in w.columns:
                w[m] = float("nan")
        return w


# ---------------------------------------------------------------------- tables as data
def _stats(values: list[float]) -> dict[str, float]:
    n = len(values)
    if not n:
        return {"n": 0, "mean": math.nan, "std": math.nan, "min": math.nan, "max": math.nan}
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else math.nan
    return {"n": n, "mean": mean, "std": std, "min": min(values), "max": max(values)}


def chunk_size_table(res: CorpusResults) -> list[dict[str, Any]]:
    """Table 2: per chunker, then the Adaptive row, the chunk sizes pooled over the corpus and the time per document.

    ``n``: the documents a row pools (each chunker's own: Table 2 describes, Table 3 compares)."""
    rows: list[dict[str, Any]] = []
    n_docs = len(res.documents()) or 1
    for cid in res.order:
        toks = res.tokens.get(cid, [])
        st = _stats([float(t) for t in toks])
        secs = res.seconds.get(cid, [])
        rows.append({"chunker": cid, "candidate": cid in res.candidates, "mean": st["mean"], "max": st["max"],
                     "min": st["min"], "std": st["std"], "chunks": len(toks),
                     "time": sum(secs) / len(secs) if secs else math.nan, "n": len(secs)})
    st = _stats([float(t) for t in res.winner_tokens])
    cand_time = sum(float(r["time"]) for r in rows if r["candidate"] and not math.isnan(float(r["time"])))
    rows.append({"chunker": ADAPTIVE, "candidate": True, "mean": st["mean"], "max": st["max"], "min": st["min"],
                 "std": st["std"], "chunks": len(res.winner_tokens), "time": cand_time if n_docs else math.nan,
                 "n": sum(1 for v in res.verdicts.values() if v.get("report_winner"))})
    return rows


def compared_documents(res: CorpusResults) -> dict[str, Any]:
    """The documents every chunker of the tables ran on, which Table 3 compares them on.

    ``documents``: their keys; ``total``: documents with results; ``left_out``: document key -> the chunkers
    without a result on it (skipped or failed there, e.g. page chunkers on a Word file); ``reasons``: chunker
    -> why it has none (its status and reason); ``all_documents``: True when no document has every chunker,
    so each row is over its own documents instead."""
    ran = _ran_on(res)
    every = set(res.df["document"]) if not res.df.empty else set()
    common = set.intersection(*ran.values()) if ran else set()
    left_out = {d: [cid for cid in res.order if d not in ran[cid]] for d in sorted(every - common)}
    reasons = {cid: f"{v.get('status', '')}: {v.get('reason', '')}".strip(": ") for cid, v in res.not_run.items()}
    return {"documents": sorted(common) if common else sorted(every), "total": len(every), "left_out": left_out,
            "reasons": reasons, "all_documents": not common and bool(every)}


def _ran_on(res: CorpusResults) -> dict[str, set[str]]:
    """Chunker -> the documents it has results on (the tidy table's rows; ``wide`` also has empty rows)."""
    df = res.df
    return {cid: set(df[df["chunker"] == cid]["document"]) if not df.empty else set() for cid in res.order}


def comparison_note(res: CorpusResults, cmp: dict[str, Any] | None = None) -> str:
    """The line under Table 3: which documents the chunkers are compared on, and which were left out, why."""
    cmp = cmp or compared_documents(res)
    if not cmp["left_out"]:
        return f"Every row is over the same {cmp['total']} document(s): every chunker ran on each."
    if cmp["all_documents"]:
        return ("No document has results from every chunker, so each row is over the documents it ran on "
                "(n): the rows are not compared on the same documents.")
    missing: dict[str, int] = {}
    for cids in cmp["left_out"].values():
        for cid in cids:
            missing[cid] = missing.get(cid, 0) + 1
    why = "; ".join(f"{cid} has no result on {k} document(s) ({cmp['reasons'].get(cid) or 'not run'})"
                    for cid, k in missing.items())
    out = list(cmp["left_out"])
    names = ", ".join(out[:3]) + (f" and {len(out) - 3} more" if len(out) > 3 else "")
    return (f"Compared on the {len(cmp['documents'])} of {cmp['total']} documents every chunker ran on (n); "
            f"{len(out)} left out ({names}): {why}.")


def _metric_rows(w, label: str, candidate: bool, ran_on: int | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"chunker": label, "candidate": candidate,
                           "documents": int(len(w)) if ran_on is None else ran_on, "n": int(len(w))}
    means = []
    for m in METRICS:
        vals = [float(v) * 100 for v in w[m].tolist() if v == v and v is not None]
        st = _stats(vals)
        row[m] = st["mean"]
        row[f"{m}_std"] = st["std"]
        row[f"{m}_n"] = st["n"]
        if st["n"]:
            means.append(st["mean"])
    row["mean"] = sum(means) / len(means) if means else math.nan
    sc = [float(v) * 100 for v in w["score"].tolist() if v == v and v is not None]
    row["score"] = sum(sc) / len(sc) if sc else math.nan
    return row


def metric_table(res: CorpusResults) -> list[dict[str, Any]]:
    """Table 3: per chunker, then the Adaptive row, each metric x100 as mean, std. dev. and n over documents.

    Every row is over the same documents, those every chunker ran on (:func:`compared_documents`; ``n`` per
    row, ``documents``: how many it ran on in all), so a chunker skipped on some documents is not averaged
    over fewer, different ones."""
    w = res.wide()
    ran = _ran_on(res)
    common = compared_documents(res)["documents"]
    keep = w[w["document"].isin(common)]
    rows = [_metric_rows(keep[(keep["chunker"] == cid) & keep["document"].isin(ran[cid])], cid,
                         cid in res.candidates, len(ran[cid])) for cid in res.order]
    rows.append(_metric_rows(keep[keep["winner"] == True], ADAPTIVE, True,  # noqa: E712
                             int((w["winner"] == True).sum())))  # noqa: E712
    return rows


def selection_table(res: CorpusResults) -> list[dict[str, Any]]:
    """Table 4: how many documents (and what percent) the adaptive policy gave each chunker, most first."""
    docs = res.documents()
    counts: dict[str, int] = {}
    for e in docs:
        counts[e.get("winner") or "(none)"] = counts.get(e.get("winner") or "(none)", 0) + 1
    total = len(docs) or 1
    return [{"chunker": k, "documents": v, "percent": 100.0 * v / total}
            for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def selection_with_ties(res: CorpusResults) -> dict[str, Any]:
    """Table 4 with ties counted separately: rows per chunker, totals and the tie-break rules used.

    Per chunker: documents where it has the top score (the paper's policy), is a clear winner, is in a tie,
    or was picked by the tie-break."""
    rows: dict[str, dict[str, Any]] = {}
    totals = {"documents": 0, "clear": 0, "tie": 0, "no verdict": 0}
    breaks: dict[str, int] = {}

    def row(cid: str) -> dict[str, Any]:
        """The row of ``cid``, made on first use."""
        return rows.setdefault(cid, {"chunker": cid, "top": 0, "clear": 0, "tied": 0, "picked": 0})

    for v in res.verdicts.values():
        totals["documents"] += 1
        kind = v.get("kind")
        if kind not in ("clear", "tie"):
            totals["no verdict"] += 1
            if v.get("report_winner"):
                row(v["report_winner"])["top"] += 1
            continue
        totals[kind] += 1
        row(v["top"])["top"] += 1
        if kind == "clear":
            row(v["top"])["clear"] += 1
        else:
            for cid in [v["top"], *v.get("tied", [])]:
                row(cid)["tied"] += 1
            row(v["winner"])["picked"] += 1
            rule = (v.get("tie_break") or {}).get("rule", "?")
            breaks[rule] = breaks.get(rule, 0) + 1
    n = totals["documents"] or 1
    out = sorted(rows.values(), key=lambda r: (-(r["clear"] + r["picked"]), -r["top"], r["chunker"]))
    for r in out:
        r["percent_clear"] = 100.0 * r["clear"] / n
    return {"rows": out, "totals": totals, "tie_breaks": breaks}


def verdicts_by_domain(res: CorpusResults) -> dict[str, dict[str, int]]:
    """Domain -> {"clear": n, "tie": n, "no verdict": n}."""
    out: dict[str, dict[str, int]] = {}
    for v in res.verdicts.values():
        d = out.setdefault(v.get("domain") or "(none)", {"clear": 0, "tie": 0, "no verdict": 0})
        kind = str(v.get("kind"))
        d[kind if kind in ("clear", "tie") else "no verdict"] += 1
    return out


def spearman(res: CorpusResults):
    """Spearman correlation matrix (pandas DataFrame) between metrics over (document, chunking)."""
    w = res.wide()
    return w[list(METRICS)].astype(float).corr(method="spearman", min_periods=3)


def global_best(res: CorpusResults) -> str | None:
    """The candidate with the highest mean score over the corpus, or None when none scored."""
    t3 = [r for r in metric_table(res) if r["chunker"] != ADAPTIVE and r["candidate"] and r["score"] == r["score"]]
    if not t3:
        return None
    return max(t3, key=lambda r: r["score"])["chunker"]


def adaptive_gaps(res: CorpusResults, limit: int = 10) -> list[dict[str, Any]]:
    """Documents whose winner differs from the global best chunker, largest score gap first."""
    best = global_best(res)
    if best is None:
        return []
    w = res.wide()
    out = []
    for doc, g in w.groupby("document"):
        win = g[g["winner"] == True]  # noqa: E712
        if win.empty:
            continue
        wrow = win.iloc[0]
        if wrow["chunker"] == best:
            continue
        b = g[g["chunker"] == best]
        b_score = float(b["score"].iloc[0]) if not b.empty and b["score"].iloc[0] == b["score"].iloc[0] else math.nan
        gap = float(wrow["score"]) - b_score if b_score == b_score else math.nan
        out.append({"document": doc, "domain": wrow["domain"], "winner": wrow["chunker"],
                    "winner_score": float(wrow["score"]), "global_best": best, "global_best_score": b_score,
                    "gap": gap})
    out.sort(key=lambda r: (-(r["gap"] if r["gap"] == r["gap"] else math.inf), r["document"]))
    return out[:limit]


def domain_breakdown(res: CorpusResults) -> list[dict[str, Any]]:
    """Per domain: documents, tokens, the adaptive mean score, the best single candidate and the selections."""
    w = res.wide()
    docs = res.documents()
    rows = []
    domains = sorted({e.get("domain") or "" for e in docs})
    for dom in domains:
        dd = [e for e in docs if (e.get("domain") or "") == dom]
        ws = w[w["domain"].fillna("") == dom]
        sel: dict[str, int] = {}
        for e in dd:
            sel[e.get("winner") or "(none)"] = sel.get(e.get("winner") or "(none)", 0) + 1
        per = {cid: float(ws[ws["chunker"] == cid]["score"].mean()) * 100 for cid in res.order}
        cands = {k: v for k, v in per.items() if k in res.candidates and v == v}
        win = ws[ws["winner"] == True]["score"]  # noqa: E712
        rows.append({"domain": dom or "(none)", "documents": len(dd),
                     "tokens": sum(int(e.get("tokens") or 0) for e in dd),
                     "adaptive": float(win.mean()) * 100 if len(win) else math.nan,
                     "best": max(cands, key=lambda k: cands[k]) if cands else "",
                     "best_score": max(cands.values()) if cands else math.nan,
                     "selection": sel, "scores": per})
    return rows


SIGNIFICANCE_MEASURES = (*METRICS, "score")


def _holm(pvals: list[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (NaN stays NaN and does not count)."""
    idx = sorted((i for i, p in enumerate(pvals) if p == p), key=lambda i: pvals[i])
    m = len(idx)
    out = [math.nan] * len(pvals)
    running = 0.0
    for rank, i in enumerate(idx):
        running = max(running, min(1.0, (m - rank) * pvals[i]))
        out[i] = running
    return out


def wilcoxon_tests(res: CorpusResults) -> list[dict[str, Any]]:
    """Wilcoxon signed-rank tests, adaptive selection vs each fixed chunker, per metric (and score).

    Paired by document: for each document with a winner, the winner's value minus that chunker's value
    on the same document (documents where either is undefined are left out). Two-sided
    ``scipy.stats.wilcoxon`` with the default ``zero_method="wilcox"``: documents where the chunker IS
    the winner (difference 0) drop out, so ``n`` counts the documents where the choice differs.
    ``p_holm``: Holm-adjusted over the chunkers of one metric. Rows: chunker, metric, documents (pairs),
    n (non-zero), median/mean difference x100, statistic, p, p_holm; ``p`` is NaN when n = 0.
    """
    import numpy as np
    from scipy.stats import wilcoxon

    w = res.wide()
    rows: list[dict[str, Any]] = []
    if w.empty:
        return rows
    win = w[w["winner"] == True].set_index("document")  # noqa: E712
    for m in SIGNIFICANCE_MEASURES:
        block: list[dict[str, Any]] = []
        for cid in res.order:
            fixed = w[w["chunker"] == cid].set_index("document")[m]
            pair = win[[m]].join(fixed.rename("fixed"), how="inner").astype(float).dropna()
            d = (pair[m] - pair["fixed"]).to_numpy(dtype=float)
            nz = d[d != 0]
            row: dict[str, Any] = {"chunker": cid, "candidate": cid in res.candidates, "metric": m,
                                   "documents": int(len(d)), "n": int(len(nz)),
                                   "median_diff": float(np.median(d)) * 100 if len(d) else math.nan,
                                   "mean_diff": float(np.mean(d)) * 100 if len(d) else math.nan,
                                   "statistic": math.nan, "p": math.nan}
            if len(nz):
                r = wilcoxon(d, zero_method="wilcox", alternative="two-sided")
                row["statistic"], row["p"] = float(r.statistic), float(r.pvalue)
            block.append(row)
        for row, ph in zip(block, _holm([r["p"] for r in block])):
            row["p_holm"] = ph
        rows.extend(block)
    return rows


# ---------------------------------------------------------------------- text layout
def fmt_number(v: float, digits: int = 1) -> str:
    """A table cell: ``v`` with ``digits`` decimals, "-" when missing or NaN (the text, HTML and app tables)."""
    return "-" if v is None or v != v else f"{v:.{digits}f}"


def _mark(row: dict[str, Any]) -> str:
    return "* " if row.get("candidate") and row["chunker"] != ADAPTIVE else "  "


def format_chunk_sizes(rows: list[dict[str, Any]]) -> str:
    """Table 2 (:func:`chunk_size_table`) as text."""
    w = max([len(r["chunker"]) for r in rows] + [16]) + 2
    head = (f"{'Chunking method':<{w}} {'n':>4} {'mean':>6} {'max':>6} {'min':>5} {'std. dev.':>9} {'# chunks':>8} "
            f"{'time/doc [s]':>12}")
    lines = ["Table 2: chunk sizes (o200k tokens, all chunks of the corpus) and runtime (n: documents per row)", head,
             "-" * len(head)]
    for r in rows:
        if r["chunker"] == ADAPTIVE:
            lines.append("-" * len(head))
        lines.append(f"{_mark(r) + r['chunker']:<{w}} {r.get('n', ''):>4} {fmt_number(r['mean'], 0):>6} {fmt_number(r['max'], 0):>6} {fmt_number(r['min'], 0):>5} "
                     f"{fmt_number(r['std'], 0):>9} {r['chunks']:>8} {fmt_number(r['time'], 2):>12}")
    return "\n".join(lines)


def format_metric_table(rows: list[dict[str, Any]]) -> str:
    """Table 3 (:func:`metric_table`) as text."""
    w = max([len(r["chunker"]) for r in rows] + [16]) + 2
    head = (f"{'Chunking method':<{w}} {'n':>4} " + " ".join(f"{m:>12}" for m in METRICS)
            + f" {'mean':>6} {'score':>6}")
    lines = ["Table 3: metrics x100, mean ± std. dev. over documents (n: documents per row)", head, "-" * len(head)]
    for r in rows:
        if r["chunker"] == ADAPTIVE:
            lines.append("-" * len(head))
        cells = []
        for m in METRICS:
            cells.append(f"{fmt_number(r[m])}±{fmt_number(r[m + '_std'])}" if r[f"{m}_n"] else "-")
        lines.append(f"{_mark(r) + r['chunker']:<{w}} {r.get('n', r['documents']):>4} " + " ".join(f"{c:>12}" for c in cells)
                     + f" {fmt_number(r['mean'], 2):>6} {fmt_number(r['score'], 2):>6}")
    return "\n".join(lines)


def format_selection(rows: list[dict[str, Any]], n_docs: int) -> str:
    """Table 4 (:func:`selection_table`) as text."""
    w = max([len(r["chunker"]) for r in rows] + [16]) + 2
    head = f"{'Selected method':<{w}} {'% selection':>11} {'documents':>9}"
    lines = [f"Table 4: chunker selected by the adaptive policy ({n_docs} documents)", head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['chunker']:<{w}} {r['percent']:>11.0f} {r['documents']:>9}")
    return "\n".join(lines)


def format_selection_with_ties(t: dict[str, Any]) -> str:
    """Table 4 with ties counted separately (:func:`selection_with_ties`) as text."""
    tot = t["totals"]
    rows = t["rows"]
    w = max([len(r["chunker"]) for r in rows] + [16]) + 2
    head = f"{'Chunking method':<{w}} {'top score':>9} {'clear wins':>10} {'% clear':>7} {'in a tie':>8} {'picked in tie':>13}"
    breaks = ", ".join(f"{k} {v}" for k, v in sorted(t["tie_breaks"].items())) or "none"
    lines = [f"Table 4, ties counted separately: {tot['clear']} clear winner(s), {tot['tie']} tie(s) "
             f"(broken by: {breaks})" + (f", {tot['no verdict']} without a verdict" if tot["no verdict"] else "")
             + f" over {tot['documents']} documents", head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['chunker']:<{w}} {r['top']:>9} {r['clear']:>10} {r['percent_clear']:>7.0f} {r['tied']:>8} "
                     f"{r['picked']:>13}")
    return "\n".join(lines)


def format_corr(corr) -> str:
    """Figure 1, the Spearman correlation matrix (:func:`spearman`), as a text table."""
    lines = ["Figure 1: Spearman correlation between metrics (over document x chunking)",
             "       " + " ".join(f"{m:>6}" for m in corr.columns)]
    for m in corr.index:
        lines.append(f"{m:<6} " + " ".join(f"{fmt_number(corr.loc[m, c], 2):>6}" for c in corr.columns))
    return "\n".join(lines)


def format_domains(rows: list[dict[str, Any]], verdicts: dict[str, dict[str, int]] | None = None) -> str:
    """The per-domain breakdown (:func:`domain_breakdown`), with clear winners and ties when given, as text."""
    lines = ["Per domain: adaptive mean score x100, best single candidate, selections"
             + (", clear winners vs ties" if verdicts else "")]
    for r in rows:
        sel = ", ".join(f"{k} {v}" for k, v in sorted(r["selection"].items(), key=lambda kv: -kv[1]))
        vd = (verdicts or {}).get(r["domain"])
        lines.append(f"  {r['domain']:<12} {r['documents']:>3} docs {r['tokens']:>8} tokens  adaptive {fmt_number(r['adaptive'], 2)}"
                     f"  best {r['best'] or '-'} {fmt_number(r['best_score'], 2)}  selected: {sel}"
                     + (f"  verdict: {vd['clear']} clear, {vd['tie']} tie" if vd else ""))
    return "\n".join(lines)


def format_gaps(rows: list[dict[str, Any]], best: str | None) -> str:
    """The documents where the adaptive choice differs most from the global best (:func:`adaptive_gaps`) as text."""
    if best is None:
        return "Adaptive vs global best: no candidate scored."
    lines = [f"Where the adaptive choice differs most from the global best chunker ({best}), score x100"]
    if not rows:
        lines.append("  (the adaptive policy picked the global best for every document)")
    for r in rows:
        lines.append(f"  +{fmt_number(r['gap'] * 100, 2):>5}  {r['document'][:70]}  {r['winner']} {fmt_number(r['winner_score'] * 100, 2)}"
                     f" vs {fmt_number(r['global_best_score'] * 100, 2)}")
    return "\n".join(lines)


def fmt_p_value(v: float) -> str:
    """A p-value cell: three decimals, "<0.001" below that, "-" when NaN."""
    if v != v:
        return "-"
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def format_wilcoxon(rows: list[dict[str, Any]]) -> str:
    """One line per fixed chunker: per metric, median(adaptive - chunker) x100 and the Holm-adjusted p."""
    lines = ["Wilcoxon signed-rank, Adaptive Chunking vs each chunker (paired by document, two-sided): "
             "median difference x100 [Holm-adjusted p; n = documents where the choice differs]"]
    if not rows:
        return "\n".join(lines + ["  (no document with a winner)"])
    chunkers = list(dict.fromkeys(r["chunker"] for r in rows))
    w = max([len(c) for c in chunkers] + [16]) + 2
    head = f"{'vs chunker':<{w}} " + " ".join(f"{m:>20}" for m in SIGNIFICANCE_MEASURES)
    lines += [head, "-" * len(head)]
    by = {(r["chunker"], r["metric"]): r for r in rows}
    for cid in chunkers:
        cells = []
        for m in SIGNIFICANCE_MEASURES:
            r = by[(cid, m)]
            cells.append("-" if not r["documents"] else f"{r['median_diff']:+.1f} [{fmt_p_value(r['p_holm'])}; {r['n']}]")
        lines.append(f"{('* ' if by[(cid, SIGNIFICANCE_MEASURES[0])]['candidate'] else '  ') + cid:<{w}} "
                     + " ".join(f"{c:>20}" for c in cells))
    return "\n".join(lines)


def text_report(res: CorpusResults) -> str:
    """Everything ``chunkscope corpus-report`` prints: the tables, tests, correlations, domains and failures."""
    s = res.summary
    c = s.get("counts", {})
    docs = res.documents()
    failed = [e for e in s.get("documents", []) if e.get("status") == "failed"]
    head = (f"Corpus: {len(docs)} documents with a report ({c.get('ok', 0)} analyzed in the last run, "
            f"{c.get('skipped', 0)} skipped, {c.get('failed', 0)} failed), "
            f"{sum(int(e.get('tokens') or 0) for e in docs):,} tokens. '* ' = candidate of the adaptive policy.")
    parts = [head, "", format_chunk_sizes(chunk_size_table(res)), "", format_metric_table(metric_table(res)), comparison_note(res), "",
             format_selection(selection_table(res), len(docs)), "", format_selection_with_ties(selection_with_ties(res)), "",
             format_wilcoxon(wilcoxon_tests(res)), "", format_corr(spearman(res)), "",
             format_domains(domain_breakdown(res), verdicts_by_domain(res)), "", format_gaps(adaptive_gaps(res), global_best(res))]
    if res.not_run:
        parts += ["", "Chunkings without results (left out of the tables):"] + [
            f"  {cid}: {v['status']} on {v['documents']} document(s) ({v['reason'][:100]})" for cid, v in res.not_run.items()]
    if failed:
        parts += ["", "Failed documents:"] + [f"  {e.get('rel')}: {e.get('reason')}" for e in failed]
    return "\n".join(parts)


# ---------------------------------------------------------------------- figures
