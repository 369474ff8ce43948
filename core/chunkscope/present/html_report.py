"""Self-contained HTML reports a stakeholder opens offline: one document, or a corpus run."""

from __future__ import annotations

import base64
import html
import json
from typing import Any

from chunkscope.analysis.selection import audit_failure, explain
from chunkscope.analysis.uncertainty import RULE_WORDS
from chunkscope.corpus.report import (
    ADAPTIVE,
    CorpusResults,
    adaptive_gaps,
    chunk_size_table,
    comparison_note,
    domain_breakdown,
    fmt_number,
    fmt_p_value,
    global_best,
    metric_table,
    selection_table,
    selection_with_ties,
    spearman,
    verdicts_by_domain,
    wilcoxon_tests,
)
from chunkscope.present.figures import (
    corpus_correlation_figure,
    corpus_domain_figure,
    corpus_score_figure,
    corpus_selection_figure,
    radar_figure,
    radar_note,
    size_figure,
)
from chunkscope.present.highlight import problem_counts
from chunkscope.report import METRICS, Report

# ------------------------------------------------------------------ HTML report

def _cell_shade(v: float | None) -> str:
    if v is None:
        return ""
    # red (low) -> green (high), light alpha so both themes stay readable
    r, g = int(213 + (0 - 213) * v), int(94 + (158 - 94) * v)
    return f' style="background:rgba({r},{g},{115 if v > .5 else 0},{0.15 + 0.25 * abs(v - .5) * 2:.2f})"'


def _pm(ci: list[float] | None) -> str:
    """± half the 95% interval, with the interval itself on hover."""
    if not ci or ci[1] <= ci[0]:
        return ""
    return f' <small title="95% interval {ci[0]:.3f}–{ci[1]:.3f}">± {(ci[1] - ci[0]) / 2:.3f}</small>'


def _ci_small(ci: list[float] | None) -> str:
    return f"<br><small>{ci[0]:.3f}–{ci[1]:.3f}</small>" if ci else ""


def _muted(text: str) -> str:
    return f'<p class="muted">{html.escape(text)}</p>' if text else ""


def _verdict_html(report: Report) -> str:
    v = report.verdict
    if not v:
        return ""
    if v["kind"] == "clear":
        return '<p class="verdict clear"><b>Verdict: clear winner.</b></p>'
    names = ", ".join(html.escape(x) for x in [v["top"], *v["tied"]])
    return (f'<p class="verdict tie"><b>Verdict: tie between {names}</b> (the document cannot tell them apart); '
            f'picked by {html.escape(RULE_WORDS.get(v["tie_break"]["rule"], v["tie_break"]["rule"]))}: '
            f'<b>{html.escape(v["winner"])}</b>.</p>')


def _coref_words(coref: dict[str, Any] | None) -> str:
    """"heuristic, 326 entity–pronoun pairs" (or the reason there are none)."""
    c = coref or {}
    if not c.get("backend"):
        return "not run"
    n = c.get("pairs")
    return f"{c['backend']}, " + (f"{n:,} entity–pronoun pairs" if n else (c.get("reason") or "no pairs"))


def _embedder_words(emb: dict[str, Any] | None) -> str:
    """"all-MiniLM-L6-v2 (onnxruntime, int8, cpu; inputs up to 256 tokens)"."""
    m = emb or {}
    if not m.get("model"):
        return "not used"
    how = ", ".join(str(m[k]) for k in ("backend", "precision", "device") if m.get(k))
    limit = f"; inputs up to {m['max_tokens']} tokens" if m.get("max_tokens") else ""
    return f"{m['model']}" + (f" ({how}{limit})" if how or limit else "")


def leaderboard_rows(report: Report) -> list[dict[str, Any]]:
    """One row per chunking (ranked first, then the rest), as shown in the app and the HTML report."""
    order = report.leaderboard
    same = report.same_chunks()
    rows = []
    for c in order:
        st = c.token_stats()
        row: dict[str, Any] = {
            "chunking": c.id, "winner": c.id == report.winner, "candidate": c.candidate, "status": c.status,
            "chunks": st["chunks"], "mean tokens": round(st["mean"]), "min": st["min"], "max": st["max"],
        }
        row.update({m: c.metrics.get(m) for m in METRICS})
        lost = audit_failure(c)
        note = f"excluded from winning: fails the coverage audit ({lost})" if lost and c.candidate else (
            f"fails the coverage audit ({lost})" if lost else "")
        twin = f"the same chunks as {same[c.id]}" if c.id in same else ""
        row.update({"score": c.score, "seconds": round(c.seconds, 3),
                    "note": "; ".join(x for x in (note, twin, c.reason) if x)})
        rows.append(row)
    return rows


def _pages_section(report: Report, doc: Any, winner: str | None, runner: str | None) -> str:
    """For a PDF: thumbnails of the pages where the winner and the runner-up differ most, both
    chunkings' boxes drawn (``pdfpages``); "" for other documents or without a runner-up."""
    from chunkscope.present import pdfpages

    if doc is None or getattr(doc, "source_format", "") != "pdf" or not winner or not runner:
        return ""
    e = html.escape
    if getattr(doc, "geometry", None) is None:
        return ('<h2>On the page</h2><p class="muted">This PDF document has no page boxes (loaded from JSON '
                'written before page boxes existed): no page thumbnails.</p>')
    a, b = report.get(winner), report.get(runner)
    if a is None or b is None:
        return ""
    diffs = pdfpages.page_differences(doc, a, b, limit=4)
    head = f"<h2>On the page: where {e(winner)} and {e(runner)} differ most</h2>"
    if not diffs:
        return head + '<p class="muted">They cut every page the same way and have the same problems.</p>'
    styles, figs, blank = [], [], False
    for k, dpage in enumerate(diffs):
        pg = dpage["page"]
        img = pdfpages.render_thumbnail(doc, pg)
        cls = ""
        if img is not None:
            cls = f"cs-pg{k}"
            styles.append(f".{cls}{{background-image:url(data:image/jpeg;base64,"
                          f"{base64.b64encode(img[0]).decode('ascii')})}}")
        else:
            blank = True
        cells = []
        for c in (a, b):
            svg = pdfpages.page_svg(pdfpages.page_layers(doc, c, pg), image_class=cls,
                                    title=f"{c.id}, page {pg}")
            cells.append(f'<div><div class="muted"><b>{e(c.id)}</b></div>{svg}</div>')
        parts = [f"{dpage['cuts'][0]} cut(s) only in {e(winner)}, {dpage['cuts'][1]} only in {e(runner)}"]
        for key, label in (("broken", "broken block(s)"), ("split", "split pair(s)")):
            if any(dpage[key]):
                parts.append(f"{label}: {dpage[key][0]} only in {e(winner)}, {dpage[key][1]} only in {e(runner)}")
        figs.append(f'<figure class="cs-thumb"><figcaption><b>Page {pg}</b> · {"; ".join(parts)}</figcaption>'
                    f'<div class="cs-pair">{"".join(cells)}</div></figure>')
    note = (' The PDF itself was not at hand when this report was written: the boxes are drawn on blank pages.'
            if blank else "")
    return (head + f'<p class="muted">The {len(diffs)} page(s) where their cuts (a cut one makes and the other '
            'does not) and problems differ most. One translucent colour per chunk, its number at its first box; '
            'dashed orange-red: a broken block, ✂ its cut; P1, P2…: both mentions of a split pair.' + note + "</p>"
            + (f"<style>{''.join(styles)}</style>" if styles else "") + "".join(figs))


REPORT_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;
  color:#222;background:#fff}
@media (prefers-color-scheme: dark){body{color:#ddd;background:#111} th{background:#222!important}}
table{border-collapse:collapse;width:100%;font-size:13px} th,td{border:1px solid rgba(128,128,128,.4);padding:4px 6px;text-align:right}
th{background:#f2f2f2} td:first-child,td:nth-child(2){text-align:left}
.card{border:2px solid #009E73;border-radius:10px;padding:1em 1.4em;margin:1em 0}
.muted{color:#888;font-size:13px} .warn{border-left:4px solid #D55E00;padding:.2em .6em;margin:.4em 0} pre{font-size:12px;overflow:auto}
.verdict{padding:.3em .6em;border-left:4px solid #009E73} .verdict.tie{border-left-color:#E69F00}
.cs-thumb{margin:1em 0} .cs-pair{display:grid;grid-template-columns:repeat(2,minmax(0,420px));gap:12px}
"""
LEADERBOARD_COLUMNS = ["chunking", "status", "chunks", "mean tok", *METRICS, "score", "broken blocks", "split pairs",
                       "out-of-size", "seconds"]


def _leaderboard_row(row: dict[str, Any], c: Any) -> str:
    """One leaderboard row: name, status, sizes, shaded metrics with their intervals, problems, seconds."""
    e = html.escape
    pc = problem_counts(c)
    name = e(c.id) + (" 🏆" if row["winner"] else "") + (" <small>(candidate)</small>" if c.candidate else "")
    cells = [f"<td>{name}</td>", f"<td>{e(c.status)}{(': ' + e(c.reason)) if c.reason else ''}</td>",
             *(f"<td>{row[k] if c.ok else '–'}</td>" for k in ("chunks", "mean tokens"))]
    cells += [f"<td{_cell_shade(c.metrics.get(m))}>{'–' if c.metrics.get(m) is None else f'{c.metrics[m]:.3f}'}"
              f"{_pm(c.metric_intervals.get(m))}</td>" for m in METRICS]
    cells += [f"<td><b>{'–' if c.score is None else f'{c.score:.3f}'}</b>{_ci_small(c.score_interval)}</td>",
              *(f"<td>{'–' if pc[k] is None else pc[k]}</td>" for k in ("broken blocks", "split pairs",
                                                                         "out-of-size chunks")),
              f"<td>{c.seconds:.2f}</td>"]
    return "<tr>" + "".join(cells) + "</tr>"


def _report_figures(report: Report, ex: Any) -> tuple[str, str, str]:
    """The radar of the winner vs the runner-up (plotly.js inlined here, once), the radar of every chunking,
    and the chunk sizes, as HTML."""
    ok_ids = [c.id for c in report.ranked]
    radar_ids = [i for i in (ex.winner, ex.runner) if i] if ex.winner else ok_ids[:2]
    radar = radar_figure(report, radar_ids or ok_ids, bands=True).to_html(full_html=False, include_plotlyjs=True)
    radar += _muted(radar_note(report, radar_ids or ok_ids, bands=True))
    radar_all = radar_figure(report, ok_ids).to_html(full_html=False, include_plotlyjs=False)
    radar_all += _muted(radar_note(report, ok_ids))
    sizes = size_figure(report, ok_ids).to_html(full_html=False, include_plotlyjs=False)
    return radar, radar_all, sizes


def html_report(report: Report, doc: Any = None) -> str:
    """A self-contained HTML page (plotly.js inlined once) a stakeholder can open offline.

    ``doc``: the analysed Document; for a PDF with page boxes the report adds thumbnails of the
    pages where the winner and the runner-up differ most, with their chunks' boxes drawn."""
    d = report.document
    e = html.escape
    ex = explain(report)  # the same runner-up, flags and warnings as the app and the CLI
    radar, radar_all, sizes = _report_figures(report, ex)
    head = "".join(f"<th>{e(h)}</th>" for h in LEADERBOARD_COLUMNS)
    body = [_leaderboard_row(row, c) for row, c in zip(leaderboard_rows(report), report.leaderboard)]
    settings = e(json.dumps({k: v for k, v in report.settings.items() if not k.startswith("_")}, indent=1,
                            ensure_ascii=False))
    warn = "".join(f"<li>{e(w)}</li>" for w in report.warnings)
    flags = ", ".join(e(f) for f in ex.flags) or "none"
    cautions = "".join(f'<p class="warn">⚠️ {e(w)}</p>' for w in ex.cautions())
    pages = _pages_section(report, doc, ex.winner or report.winner, ex.runner)
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>ChunkScope report: {e(d.get('name', ''))}</title>
<style>{REPORT_CSS}</style></head><body>
<h1>ChunkScope report</h1>
<p class="muted">{e(d.get('name', ''))} · {d.get('chars', 0):,} characters · {d.get('tokens', 0):,} o200k tokens ·
{len(d.get('pages', []))} pages · {len(d.get('blocks', []))} blocks · language {e(str(d.get('language')))} ·
sha256 {e(str(d.get('sha256', ''))[:16])}…</p>
<div class="card"><h2>Adaptive winner: {e(report.winner or "none")}</h2>{_verdict_html(report)}<p>{e(ex.text or report.explanation)}</p>
{cautions}<p class="muted">flags: {flags}</p></div>
{('<h3>Warnings</h3><ul>' + warn + '</ul>') if warn else ''}
<h2>Leaderboard</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>
<p class="muted">± half the 95% interval of each metric and score: a bootstrap over the document's blocks
(hover a ± for the interval). The verdict compares chunkings on the same resamples.</p>
<h2>{"Winner vs runner-up" if ex.runner else "Winner"}{(": " + e(ex.winner or "") + " vs " + e(ex.runner)) if ex.runner else ""}</h2>{radar}
{pages}
<h2>All chunkings</h2>{radar_all}
<h2>Chunk sizes</h2>{sizes}
<h2>Settings</h2><pre>{settings}</pre>
<p class="muted">Coreference: {e(_coref_words(report.coref))} · Embeddings: {e(_embedder_words(report.embedder))}</p>
</body></html>"""


# ------------------------------------------------------------------ corpus run

def _html_table(headers: list[str], rows: list[list[Any]], bold_last: bool = False) -> str:
    out = ["<table><thead><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in headers) + "</tr></thead><tbody>"]
    for i, r in enumerate(rows):
        cls = ' class="adaptive"' if bold_last and i == len(rows) - 1 else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


CORPUS_CSS = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;"
              "margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,"
              "th:first-child{text-align:left}tr.adaptive{font-weight:bold;background:#f3f3f3}caption{text-align:left}")


def _marked(r: dict[str, Any]) -> str:
    """A table row's chunker, ``* `` before a candidate (not before the Adaptive row)."""
    return ("* " if r.get("candidate") and r["chunker"] != ADAPTIVE else "") + r["chunker"]


def _corpus_figures_html(res: CorpusResults, dom: list[dict[str, Any]], selection: list[dict[str, Any]]) -> list[str]:
    """The correlation heatmap (plotly.js inlined here, once), selection and score charts, and the per-domain
    chart when some document has a domain."""
    figs = [corpus_correlation_figure(spearman(res)), corpus_selection_figure(selection), corpus_score_figure(res)]
    if len([d for d in dom if d["domain"] != "(none)"]) >= 1:
        figs.append(corpus_domain_figure(res, dom))
    return [f.to_html(full_html=False, include_plotlyjs=("inline" if i == 0 else False),
                      config={"displaylogo": False}) for i, f in enumerate(figs)]


def _chunk_sizes_html(res: CorpusResults) -> str:
    """Table 2: chunk sizes and runtime."""
    return _html_table(["Chunking method", "n", "mean", "max", "min", "std. dev.", "# chunks", "time/doc [s]"],
                       [[_marked(r), r["n"], fmt_number(r["mean"], 0), fmt_number(r["max"], 0), fmt_number(r["min"], 0), fmt_number(r["std"], 0), r["chunks"],
                         fmt_number(r["time"], 2)] for r in chunk_size_table(res)], bold_last=True)


def _metrics_html(res: CorpusResults) -> str:
    """Table 3: metrics x100, mean ± std. dev. over documents."""
    return _html_table(["Chunking method", "n", *METRICS, "mean", "score"],
                       [[_marked(r), r["n"]] + [f"{fmt_number(r[m])} ± {fmt_number(r[m + '_std'])}" if r[f"{m}_n"] else "–"
                                                for m in METRICS]
                        + [fmt_number(r["mean"], 2), fmt_number(r["score"], 2)] for r in metric_table(res)], bold_last=True) + (
        f'<p class="muted">{html.escape(comparison_note(res))}</p>')


def _domains_html(res: CorpusResults, dom: list[dict[str, Any]]) -> str:
    """The per-domain breakdown with its clear winners and ties."""
    vd = verdicts_by_domain(res)
    return _html_table(["domain", "documents", "tokens", "adaptive score", "best candidate", "its score", "selected",
                        "clear winners", "ties"],
                       [[d["domain"], d["documents"], d["tokens"], fmt_number(d["adaptive"], 2), d["best"],
                         fmt_number(d["best_score"], 2), ", ".join(f"{k} {v}" for k, v in d["selection"].items()),
                         vd.get(d["domain"], {}).get("clear", "–"), vd.get(d["domain"], {}).get("tie", "–")]
                        for d in dom])


def _ties_html(res: CorpusResults) -> str:
    """Table 4 with ties counted separately: the totals, then one row per chunker."""
    t = selection_with_ties(res)
    tot = t["totals"]
    return (f"<p>{tot['clear']} document(s) with a clear winner, {tot['tie']} tie(s) (broken by: "
            + (", ".join(f"{html.escape(k)} {v}" for k, v in sorted(t["tie_breaks"].items())) or "none") + ")"
            + (f", {tot['no verdict']} without a verdict" if tot["no verdict"] else "") + ".</p>"
            + _html_table(["Chunking method", "top score (paper)", "clear wins", "% clear", "in a tie",
                           "picked in a tie"],
                          [[r["chunker"], r["top"], r["clear"], f"{r['percent_clear']:.0f}", r["tied"], r["picked"]]
                           for r in t["rows"]]))


def _wilcoxon_html(res: CorpusResults) -> str:
    """The Wilcoxon tests: per fixed chunker and measure, the median difference, Holm-adjusted p and n."""
    wil = wilcoxon_tests(res)
    by = {(r["chunker"], r["metric"]): r for r in wil}
    measures = list(dict.fromkeys(r["metric"] for r in wil))

    def cell(r: dict[str, Any]) -> str:
        """One test as a cell: the median difference, p and n, or a dash."""
        return "–" if not r["documents"] else f"{r['median_diff']:+.1f} (p {fmt_p_value(r['p_holm'])}, n {r['n']})"

    return _html_table(["vs chunker", *measures],
                       [[("* " if cid in res.candidates else "") + cid] + [cell(by[(cid, m)]) for m in measures]
                        for cid in dict.fromkeys(r["chunker"] for r in wil)])


def _gaps_html(res: CorpusResults, best: str | None) -> str:
    """The documents where the adaptive choice beats the global best most, or why there are none."""
    gaps = adaptive_gaps(res)
    if gaps:
        return _html_table(["document", "domain", "winner", "winner score", f"{best} score", "gap"],
                           [[g["document"], g["domain"], g["winner"], fmt_number(g["winner_score"] * 100, 2),
                             fmt_number(g["global_best_score"] * 100, 2), fmt_number(g["gap"] * 100, 2)] for g in gaps])
    if best is None:
        return "<p>No candidate scored, so there is no global best to compare with.</p>"
    return (f"<p>The adaptive policy picked the global best ({html.escape(str(best))}) for every document: no gap "
            "to show.</p>")


def _documents_html(res: CorpusResults) -> str:
    """Every document of the run: domain, language, tokens, status, winner, reason."""
    return _html_table(["document", "domain", "language", "tokens", "status", "winner", "reason"],
                       [[e.get("name", ""), e.get("domain", ""), e.get("language", ""), e.get("tokens", ""),
                         e.get("status", ""), e.get("winner") or "", e.get("reason", "")]
                        for e in res.summary.get("documents", [])])


def corpus_html_report(res: CorpusResults) -> str:
    """A self-contained HTML page: the tables, the heatmap and charts (plotly.js inlined once)."""
    selection = selection_table(res)
    docs = res.documents()
    dom = domain_breakdown(res)
    best = global_best(res)
    fig_html = _corpus_figures_html(res, dom, selection)
    t4h = _html_table(["Selected method", "% selection", "documents"],
                      [[r["chunker"], f"{r['percent']:.0f}", r["documents"]] for r in selection])
    c = res.summary.get("counts", {})
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>ChunkScope corpus report</title>"
        f"<style>{CORPUS_CSS}</style></head><body>"
        "<h1>ChunkScope corpus report</h1>"
        f"<p>{len(docs)} documents with a report ({c.get('failed', 0)} failed), "
        f"{sum(int(e.get('tokens') or 0) for e in docs):,} tokens. Candidates of the adaptive policy are marked *.</p>"
        + "".join(f"<p>Not in the tables: {html.escape(cid)} ({html.escape(v['status'])} on {v['documents']} "
                  f"document(s): {html.escape(v['reason'][:150])})</p>" for cid, v in res.not_run.items())
        + "<h2>Table 2: chunk sizes (o200k tokens) and runtime</h2>" + _chunk_sizes_html(res)
        + "<h2>Table 3: metrics ×100, mean ± std. dev. over documents</h2>" + _metrics_html(res)
        + "<h2>Table 4: selection by the adaptive policy</h2>" + t4h
        + "<h2>Table 4, ties counted separately</h2>" + _ties_html(res)
        + "<h2>Significance: Wilcoxon signed-rank, adaptive vs each chunker</h2>"
        + "<p>Paired by document, two-sided; each cell: median of (adaptive − chunker) ×100, Holm-adjusted p over "
          "the chunkers of that metric, n = documents where the adaptive choice differs from that chunker.</p>"
        + _wilcoxon_html(res)
        + "<h2>Figure 1: metric correlations</h2>" + fig_html[0]
        + "<h2>Selection and scores</h2>" + "".join(fig_html[1:3])
        + "<h2>Per domain</h2>" + _domains_html(res, dom) + ("".join(fig_html[3:]))
        + "<h2>Adaptive choice vs the global best" + (f" ({html.escape(str(best))})" if best else "") + "</h2>"
        + _gaps_html(res, best)
        + "<h2>Documents</h2>" + _documents_html(res)
        + "</body></html>"
    )
