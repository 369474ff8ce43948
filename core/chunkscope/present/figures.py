"""Plotly figures: one document's report, Tune's sweeps and frontier, a corpus run's tables.

Pure functions of engine objects (no Streamlit), so the app and the HTML reports draw the same
things. The engine never imports this package.
"""

from __future__ import annotations

import html
import zlib
from typing import Any, Sequence

import plotly.graph_objects as go

from chunkscope.analysis.settings import size_bounds
from chunkscope.corpus.report import ADAPTIVE, CorpusResults, domain_breakdown, fmt_number
from chunkscope.present.highlight import Problems
from chunkscope.report import METRICS, ChunkingResult, Report

# One colour per chunker, identical in every view, in the order of _KNOWN: the candidates take Okabe-Ito's
# colour-blind-friendly first four; no two colours are closer than 26 in CIELAB (ΔE*76; the previous palette
# had orange/orange and blue/blue pairs at 3–10), nor closer than 20 to the colours that mark a broken block or
# a split pair (highlight.BROKEN_COLOR, SPLIT_COLOR); tests/test_ux.py checks both.
_PALETTE = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#9A6324", "#66A61E", "#490092",
    "#004949", "#DDCC77", "#661100", "#E7298A", "#7F7F7F", "#B66DFF", "#9467BD", "#F0E442",
]
_KNOWN = [
    "page+pp", "recursive-1100+pp", "recursive-600+pp", "llm-regex+pp", "page", "recursive-1100",
    "recursive-600", "langchain-default", "langchain-1100", "sentence-5", "fixed-512", "structure",
    "whole", "semantic", "semantic+pp", "llm-regex",
]


def chunker_color(chunking_id: str) -> str:
    """Stable colour for a chunking id (known ids get fixed slots, others a hashed one; a variant
    "base@param=value" never gets its base's colour, so the two can be told apart side by side)."""
    if chunking_id in _KNOWN:
        return _PALETTE[_KNOWN.index(chunking_id) % len(_PALETTE)]
    i = zlib.crc32(chunking_id.encode()) % len(_PALETTE)
    base = chunking_id.split("@", 1)[0]
    if base != chunking_id and _PALETTE[i] == chunker_color(base):
        i = (i + 1) % len(_PALETTE)
    return _PALETTE[i]


def rgba(hex_color: str, alpha: float) -> str:
    """A ``#rrggbb`` colour with opacity ``alpha``, as CSS ``rgba(r,g,b,alpha)``."""
    h = hex_color.lstrip("#")
    r, g, b = int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
    return f"rgba({r},{g},{b},{alpha})"


def _layout(fig: go.Figure, title: str = "", height: int = 420) -> go.Figure:
    # transparent backgrounds + neutral grid read well in light and dark themes
    fig.update_layout(
        title=title or None, height=height, margin=dict(l=40, r=20, t=50 if title else 20, b=40),
        paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)",
        legend=dict(orientation="h", yanchor="bottom", y=-0.25),
    )
    return fig


def radar_note(report: Report, ids: Sequence[str], bands: bool = False) -> str:
    """What ``radar_figure(report, ids, bands)`` shades and dashes, to show under it ("" when it
    does neither). Not in the figure's title: at half a window's width a title that long ran under
    Plotly's toolbar and was cut off at the plot's edge; a caption wraps."""
    cs = report.ok_chunkings(ids)
    out = []
    if bands and any(c.metric_intervals for c in cs):
        out.append("shaded: each metric's 95% interval")
    if any(c.metrics.get(m) is None for c in cs for m in METRICS):
        out.append("dashed: a metric not known (pending, not computed for this document, or undefined) is left "
                   "out, never drawn as 0")
    note = "; ".join(out)
    return note[:1].upper() + note[1:] + "." if note else ""


def radar_figure(report: Report, ids: Sequence[str], bands: bool = False) -> go.Figure:
    """One polygon per chunking over the five metrics. A metric not known (pending in a provisional
    snapshot, or undefined: DCC of a single chunk) is a gap in a dashed outline, never drawn as 0.

    ``bands``: also draw each chunking's 95% intervals (``metric_intervals``) as a shaded ring.
    The title is short (it must fit a half-width column beside the toolbar): ``radar_note`` says
    what the shading and the dashes mean.
    """
    fig = go.Figure()
    theta = list(METRICS) + [METRICS[0]]
    for c in report.ok_chunkings(ids):
        cid = c.id
        r = [c.metrics.get(m) for m in METRICS]
        vals = r + r[:1]
        gaps = any(v is None for v in r)
        ci = c.metric_intervals or {}
        hover = [f"{m}: {'n/a' if v is None else f'{v:.3f}'}"
                 + (f" (95% interval {ci[m][0]:.3f}–{ci[m][1]:.3f})" if m in ci else "") for m, v in zip(METRICS, r)]
        if bands and ci:
            lo = [ci[m][0] if m in ci else (v or 0.0) for m, v in zip(METRICS, r)]
            hi = [ci[m][1] if m in ci else (v or 0.0) for m, v in zip(METRICS, r)]
            # a ring: around the high edge, then back around the low edge
            fig.add_trace(go.Scatterpolar(
                r=hi + hi[:1] + lo[:1] + lo[::-1], theta=theta + [METRICS[0]] + list(METRICS[::-1]),
                fill="toself", fillcolor=rgba(chunker_color(cid), 0.28), line=dict(width=0), mode="lines",
                name=f"{cid} 95%", legendgroup=cid, showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatterpolar(
            r=vals, theta=theta, name=cid, fill="none" if (bands and ci) or gaps else "toself", legendgroup=cid,
            line=dict(color=chunker_color(cid), width=2, dash="dash" if gaps else "solid"), connectgaps=False,
            fillcolor=rgba(chunker_color(cid), 0.12), text=hover + hover[:1], hoverinfo="text+name",
        ))
    fig.update_layout(polar=dict(bgcolor="rgba(0,0,0,0)", radialaxis=dict(range=[0, 1], tickvals=[0.25, 0.5, 0.75, 1.0])))
    return _layout(fig, "Metrics per chunking")


def score_interval_figure(report: Report, ids: Sequence[str] | None = None) -> go.Figure:
    """Each chunking's score with its 95% interval as an error bar (best first; the winner in bold)."""
    cs = [report.get(i) for i in ids] if ids is not None else list(report.ranked)
    cs = [c for c in cs if c is not None and c.ok and c.score is not None]
    cs.reverse()  # best at the top
    x = [c.score for c in cs]
    lo = [c.score - c.score_interval[0] if c.score_interval else 0.0 for c in cs]  # type: ignore[operator]
    hi = [c.score_interval[1] - c.score if c.score_interval else 0.0 for c in cs]  # type: ignore[operator]
    names = [(f"<b>{html.escape(c.id)}</b>" if c.id == report.winner else html.escape(c.id))
             + (" ◆" if c.candidate else "") for c in cs]
    hover = [f"{html.escape(c.id)}: {c.score:.3f}" + (f" (95% interval {c.score_interval[0]:.3f}–"
                                                     f"{c.score_interval[1]:.3f})" if c.score_interval else "")
             for c in cs]
    fig = go.Figure(go.Scatter(
        x=x, y=names, mode="markers", marker=dict(color=[chunker_color(c.id) for c in cs], size=9),
        error_x=dict(type="data", symmetric=False, array=hi, arrayminus=lo, thickness=2, width=4,
                     color="rgba(128,128,128,.8)"),
        text=hover, hovertemplate="%{text}<extra></extra>"))
    fig.update_xaxes(title="score (dot) and its 95% interval (bar)")
    fig.update_layout(showlegend=False, margin=dict(l=10, r=10, t=30, b=40))
    return _layout(fig, "", height=max(180, 26 * len(cs) + 80))


def size_figure(report: Report, ids: Sequence[str], min_tokens: int | None = None,
                max_tokens: int | None = None) -> go.Figure:
    """Chunk-size distribution (box + points) per chunking, with the size bounds drawn."""
    lo, hi = size_bounds(report.settings)
    lo = min_tokens if min_tokens is not None else lo
    hi = max_tokens if max_tokens is not None else hi
    fig = go.Figure()
    drawn = report.ok_chunkings(ids)
    for c in drawn:
        cid = c.id
        fig.add_trace(go.Box(
            y=[ch.tokens for ch in c.chunks], name=cid, boxpoints="all", jitter=0.4, pointpos=0,
            marker=dict(color=chunker_color(cid), size=4), line=dict(color=chunker_color(cid)),
            hovertemplate="%{y} tokens<extra>" + html.escape(cid) + "</extra>",
        ))
    # the bounds: a line across the plot (shape, data coordinates) and a label (annotations on a
    # log axis take log10 coordinates); the axis range always shows both bounds
    import math

    toks = [ch.tokens for c in drawn for ch in c.chunks if ch.tokens > 0]
    for y, name in ((lo, f"min {lo}"), (hi, f"max {hi}")):
        if y and y > 0:
            fig.add_shape(type="line", xref="paper", x0=0, x1=1, yref="y", y0=y, y1=y,
                          line=dict(dash="dash", color="#D55E00", width=1.5))
            fig.add_annotation(xref="paper", x=0, xanchor="left", yref="y", y=math.log10(y), yanchor="bottom",
                               text=name, showarrow=False, font=dict(color="#D55E00", size=11),
                               bgcolor="rgba(255,255,255,0.75)")  # readable over a box drawn there
    ys = [t for t in toks] + [v for v in (lo, hi) if v and v > 0]
    if ys:
        fig.update_yaxes(range=[math.log10(max(1, min(ys)) / 1.6), math.log10(max(ys) * 1.6)])
    fig.update_yaxes(title="tokens (o200k, log scale)", type="log", dtick=1)  # 10, 100, 1000: no "5, 2" between
    fig.update_layout(showlegend=False)
    return _layout(fig, "Chunk sizes")


def runtime_figure(report: Report, ids: Sequence[str]) -> go.Figure:
    """Seconds per chunking of ``ids`` that ran (a skipped or failed one has no bar: it did not run)."""
    cs = report.ok_chunkings(ids)
    fig = go.Figure(go.Bar(
        x=[c.id for c in cs], y=[c.seconds for c in cs], marker_color=[chunker_color(c.id) for c in cs],
        hovertemplate="%{x}: %{y:.3f} s<extra></extra>",
    ))
    fig.update_yaxes(title="seconds (chunking + metrics)")
    return _layout(fig, "Runtime per chunking", height=320)


def boundary_strip_figure(report: Report, ids: Sequence[str], text_length: int,
                          view: tuple[int, int] | None = None, focus: int | None = None) -> go.Figure:
    """One row per chunking along the document: boundaries as ticks, broken blocks and split pairs as marks.

    ``view`` (start, end) is shaded (the part shown below the strip); ``focus`` (an offset, the
    current problem) is a vertical line."""
    fig = go.Figure()
    if view is not None:
        fig.add_vrect(x0=view[0], x1=view[1], fillcolor="rgba(128,128,128,0.18)", line_width=0, layer="below")
    if focus is not None:
        fig.add_vline(x=focus, line=dict(color="#F0E442", width=3))
    rows = report.ok_chunkings(ids)
    in_legend: set[str] = set()  # each kind of mark once in the legend, whichever row has it first

    def first(group: str) -> bool:
        new = group not in in_legend
        in_legend.add(group)
        return new

    for k, c in enumerate(rows):
        row = -k  # the first chunking on top, in the order of the columns below the strip
        cid = c.id
        starts = [ch.start for ch in c.chunks[1:]]
        fig.add_trace(go.Scatter(
            x=starts, y=[row] * len(starts), mode="markers", name=f"{cid} boundaries",
            marker=dict(symbol="line-ns-open", size=16, color=chunker_color(cid), line=dict(width=2)),
            hovertemplate="boundary at %{x}<extra>" + html.escape(cid) + "</extra>", showlegend=False,
        ))
        probs = Problems.of(c)
        bi = probs.broken
        if bi:
            fig.add_trace(go.Scatter(
                x=[b.boundary for b in bi], y=[row + 0.25] * len(bi), mode="markers",
                name="broken block", legendgroup="broken", showlegend=first("broken"),
                marker=dict(symbol="x", size=9, color="#D55E00"),
                hovertemplate="breaks block %{customdata}<extra>" + html.escape(cid) + "</extra>",
                customdata=[f"[{b.block[0]}, {b.block[1]})" for b in bi],
            ))
        rc = probs.split
        if rc:
            fig.add_trace(go.Scatter(
                x=[p.boundary for p in rc], y=[row - 0.25] * len(rc), mode="markers",
                name="split pair", legendgroup="split", showlegend=first("split"),
                marker=dict(symbol="diamond", size=8, color="#CC79A7"),
                hovertemplate="splits a pair at %{x}<extra>" + html.escape(cid) + "</extra>",
            ))
    fig.update_yaxes(tickvals=[-k for k in range(len(rows))], ticktext=[c.id for c in rows], range=[0.3 - len(rows), 0.7])
    fig.update_xaxes(title="character offset", range=[0, max(1, text_length)])
    _layout(fig, "Where the chunkings cut", height=140 + 45 * max(1, len(rows)))
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    return fig


# ------------------------------------------------------------------ tune views

def radar_results_figure(results: Sequence[ChunkingResult], names: Sequence[str] | None = None,
                         title: str = "Metrics: tuned vs baseline") -> go.Figure:
    """Radar of chunking results given directly (e.g. a tuned configuration and its baseline)."""
    fig = go.Figure()
    theta = list(METRICS) + [METRICS[0]]
    dashes = ["solid", "dash", "dot", "dashdot"]
    for i, c in enumerate(results):
        if c is None or not c.ok:
            continue
        name = names[i] if names else c.id
        r = [c.metrics.get(m) for m in METRICS]
        vals = [v if v is not None else 0.0 for v in r]
        hover = [f"{m}: {'n/a' if v is None else f'{v:.3f}'}" for m, v in zip(METRICS, r)]
        color = chunker_color(c.id)
        fig.add_trace(go.Scatterpolar(
            r=vals + vals[:1], theta=theta, name=name, fill="toself",
            line=dict(color=color, width=2, dash=dashes[i % len(dashes)]), fillcolor=rgba(color, 0.10),
            text=hover + hover[:1], hoverinfo="text+name",
        ))
    fig.update_layout(polar=dict(bgcolor="rgba(0,0,0,0)", radialaxis=dict(range=[0, 1], tickvals=[0.25, 0.5, 0.75, 1.0])))
    return _layout(fig, title)


def sweep_cost_figure(rows: Sequence[dict[str, Any]], param: str, second: str = "tokens") -> go.Figure:
    """Metrics and score along a sweep; on the second axis the index cost (``tokens``: total
    tokens embedded) or the number of ``chunks``. Invalid points (no score) are left as gaps."""
    from plotly.subplots import make_subplots

    fig = make_subplots(specs=[[{"secondary_y": True}]])
    xs = [r["value"] for r in rows]
    palette = {"RC": "#CC79A7", "ICC": "#009E73", "DCC": "#56B4E9", "BI": "#E69F00", "SC": "#0072B2", "score": "#222"}
    for m in (*METRICS, "score"):
        ys = [(r.get("metrics") or {}).get(m) if m != "score" else r.get("score") for r in rows]
        if all(y is None for y in ys):
            continue
        fig.add_trace(go.Scatter(x=xs, y=ys, name=m, mode="lines+markers",
                                 line=dict(width=4 if m == "score" else 2, color=palette[m]),
                                 hovertemplate=f"{html.escape(param)}=%{{x}}<br>{m} %{{y:.3f}}<extra></extra>"),
                      secondary_y=False)
    label = "total tokens embedded" if second == "tokens" else "chunks"
    fig.add_trace(go.Bar(x=xs, y=[r.get(second) for r in rows], name=label, opacity=0.22, marker_color="#7F7F7F",
                         customdata=[[r.get("chunks"), r.get("tokens")] for r in rows],
                         hovertemplate="%{customdata[0]} chunks, %{customdata[1]} tokens<extra></extra>"),
                  secondary_y=True)
    fig.update_yaxes(title_text="metric / score", range=[0, 1.02], secondary_y=False)
    fig.update_yaxes(title_text=label, secondary_y=True, rangemode="tozero")
    fig.update_xaxes(title_text=param)
    return _layout(fig, f"Sweep of {param}")


def frontier_figure(points: Sequence[dict[str, Any]], front: Sequence[int], highlight: str | None = None) -> go.Figure:
    """Score against index cost for every configuration tried; Pareto-optimal ones ringed and joined.

    ``points``: dicts with ``name``, ``chunker`` (colour), ``tokens``, ``score``, ``chunks`` and
    ``source`` (analysis | tuned | sweep | variant). ``front``: indices of Pareto-optimal points.
    """
    fig = go.Figure()
    symbols = {"analysis": "circle", "tuned": "diamond", "sweep": "square", "variant": "star"}
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(points):
        if p.get("score") is not None and p.get("tokens") is not None:
            groups.setdefault(str(p.get("chunker") or p["name"]), []).append(i)
    for chunker, idx in groups.items():
        color = chunker_color(chunker)
        fig.add_trace(go.Scatter(
            x=[points[i]["tokens"] for i in idx], y=[points[i]["score"] for i in idx], mode="markers",
            name=chunker, marker=dict(color=color, size=10, opacity=0.85,
                                      symbol=[symbols.get(points[i].get("source", ""), "circle") for i in idx],
                                      line=dict(width=1, color="#333")),
            text=[html.escape(str(points[i]["name"])) for i in idx],
            customdata=[[points[i].get("chunks"), points[i].get("source", "")] for i in idx],
            hovertemplate="%{text}<br>score %{y:.3f}<br>%{x:,} tokens embedded, %{customdata[0]} chunks"
                          "<br>%{customdata[1]}<extra></extra>",
        ))
    fr = [i for i in front if points[i].get("score") is not None]
    if fr:
        fr = sorted(fr, key=lambda i: points[i]["tokens"])
        fig.add_trace(go.Scatter(
            x=[points[i]["tokens"] for i in fr], y=[points[i]["score"] for i in fr], mode="lines+markers",
            name="Pareto-optimal", line=dict(shape="hv", dash="dot", color="#D55E00", width=1.5),
            marker=dict(size=17, symbol="circle-open", color="#D55E00", line=dict(width=2)),
            text=[html.escape(str(points[i]["name"])) for i in fr],
            hovertemplate="Pareto-optimal: %{text}<extra></extra>",
        ))
    if highlight is not None:
        hi = [p for p in points if p["name"] == highlight and p.get("score") is not None]
        if hi:
            fig.add_trace(go.Scatter(x=[hi[0]["tokens"]], y=[hi[0]["score"]], mode="markers", name="current",
                                     marker=dict(size=22, symbol="x-thin-open", color="#000", line=dict(width=2)),
                                     hoverinfo="skip"))
    fig.update_xaxes(title_text="index cost (total tokens embedded)")
    fig.update_yaxes(title_text="score")
    _layout(fig, "Quality–cost frontier", height=460)
    # one legend entry per chunker (often many): a column right of the plot, clear of the x-axis title
    fig.update_layout(legend=dict(orientation="v", x=1.02, xanchor="left", y=1, yanchor="top"))
    return fig


def semantic_curve_figure(info: dict[str, Any], text_length: int | None = None) -> go.Figure:
    """The semantic chunker's neighbour-distance curve along the document, its threshold and cuts.

    ``info`` is ``ChunkResult.info`` of ``semantic``: ``sentences`` (spans), ``distances``,
    ``compared`` (the gradient for the gradient rule), ``threshold``, ``breakpoints``.
    x = character offset where the next sentence starts (the candidate cut).
    """
    sents = info.get("sentences") or []
    dist = info.get("distances") or []
    comp = info.get("compared") or dist
    xs = [sents[i + 1][0] for i in range(len(dist)) if i + 1 < len(sents)]
    fig = go.Figure()
    gradient = info.get("threshold_type") == "gradient"
    fig.add_trace(go.Scatter(x=xs, y=dist[:len(xs)], mode="lines", name="neighbour distance",
                             line=dict(color="#56B4E9", width=1.5),
                             hovertemplate="cut at %{x}: distance %{y:.4f}<extra></extra>"))
    if gradient:
        fig.add_trace(go.Scatter(x=xs, y=comp[:len(xs)], mode="lines", name="gradient (compared)",
                                 line=dict(color="#009E73", width=1.5),
                                 hovertemplate="cut at %{x}: gradient %{y:.4f}<extra></extra>"))
    thr = info.get("threshold")
    if thr is not None:
        fig.add_hline(y=thr, line=dict(color="#D55E00", dash="dash"),
                      annotation_text=f"threshold {thr:.4f}", annotation_position="top left")
    bps = [b for b in info.get("breakpoints") or [] if b < len(xs)]
    if bps:
        fig.add_trace(go.Scatter(x=[xs[b] for b in bps], y=[comp[b] for b in bps], mode="markers", name="cuts",
                                 marker=dict(symbol="triangle-down", size=10, color="#D55E00"),
                                 hovertemplate="cut at %{x}<extra></extra>"))
    fig.update_xaxes(title_text="character offset", range=[0, text_length] if text_length else None)
    fig.update_yaxes(title_text="gradient / distance" if gradient else "cosine distance")
    return _layout(fig, f"Semantic breakpoints ({len(bps)} cuts)", height=340)


# ------------------------------------------------------------------ corpus run

def corpus_correlation_figure(corr):
    """Heatmap of the Spearman correlations between the metrics over a corpus."""
    z = corr.values.tolist()
    text = [[fmt_number(v, 2) for v in row] for row in z]
    fig = go.Figure(go.Heatmap(z=z, x=list(corr.columns), y=list(corr.index), zmin=-1, zmax=1,
                               colorscale="RdBu", reversescale=True, text=text, texttemplate="%{text}",
                               hovertemplate="%{y} vs %{x}: ρ=%{z:.2f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, "Spearman correlation between metrics", height=420)


def corpus_selection_figure(rows: list[dict[str, Any]]):
    """Bars: the share of documents for which the adaptive policy chose each chunker."""
    fig = go.Figure(go.Bar(x=[r["chunker"] for r in rows], y=[r["percent"] for r in rows],
                           marker_color=[chunker_color(r["chunker"]) for r in rows],
                           text=[f"{r['percent']:.0f}% ({r['documents']})" for r in rows], textposition="auto"))
    fig.update_yaxes(title="% of documents", range=[0, 100])
    return _layout(fig, "Chunker selected by the adaptive policy", height=360)


def corpus_domain_figure(res: CorpusResults, rows: list[dict[str, Any]] | None = None):
    """Grouped bars: each candidate's mean score per domain, the adaptive policy's as diamonds."""
    rows = rows if rows is not None else domain_breakdown(res)
    fig = go.Figure()
    doms = [r["domain"] for r in rows]
    ids = [c for c in res.order if c in res.candidates] or res.order  # the chunkers the policy chooses from
    vals = []
    for cid in ids:
        ys = [r["scores"].get(cid) for r in rows]
        vals += [y for y in ys if y is not None and y == y]
        fig.add_trace(go.Bar(name=cid, x=doms, y=ys, marker_color=chunker_color(cid)))
    ad = [r["adaptive"] for r in rows]
    vals += [y for y in ad if y == y]
    fig.add_trace(go.Scatter(name=ADAPTIVE, x=doms, y=ad, mode="markers",
                             marker=dict(symbol="diamond", size=14, color="black")))
    fig.update_layout(barmode="group")
    lo = max(0.0, min(vals) - 5) if vals else 0.0
    fig.update_yaxes(title="mean score x100 (candidates)", range=[lo, 100])
    return _layout(fig, "Mean score per domain", height=420)


def corpus_score_figure(res: CorpusResults):
    """Box plots of every chunker's score over the corpus's documents."""
    w = res.wide()
    fig = go.Figure()
    for cid in res.order:
        g = w[w["chunker"] == cid]
        fig.add_trace(go.Box(y=(g["score"] * 100).tolist(), name=cid, text=g["document"].tolist(),
                             boxpoints="all", marker_color=chunker_color(cid)))
    g = w[w["winner"] == True]  # noqa: E712
    fig.add_trace(go.Box(y=(g["score"] * 100).tolist(), name=ADAPTIVE, text=g["document"].tolist(),
                         boxpoints="all", marker_color="black"))
    fig.update_layout(showlegend=False)
    fig.update_yaxes(title="score x100")
    return _layout(fig, "Score per document", height=420)


# ---------------------------------------------------------------------- HTML


def retrieval_curve_figure(block: dict[str, Any], ids: Sequence[str] | None = None) -> go.Figure:
    """Mean evidence recall against the token budget, one line per chunking (a report's or a
    ``chunkscope.retrieval/1`` block); the budget used for the leaderboard is a dotted line."""
    fig = go.Figure()
    rows = {c["id"]: c for c in block.get("chunkings", [])}
    for cid in (ids if ids is not None else list(rows)):
        c = rows.get(cid)
        if c is None or not c.get("curve"):
            continue
        xs = [p["budget"] for p in c["curve"]]
        ys = [p["recall"] for p in c["curve"]]
        sd = [p.get("recall_std") or 0.0 for p in c["curve"]]
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="lines+markers", name=cid, line=dict(color=chunker_color(cid), width=2),
            customdata=[[s, c["chunks"], c["mean_tokens"]] for s in sd],
            hovertemplate=f"<b>{html.escape(cid)}</b><br>budget %{{x}} tokens<br>recall %{{y:.3f}} ± %{{customdata[0]:.3f}}"
                          "<br>%{customdata[1]} chunks, mean %{customdata[2]:.0f} tokens<extra></extra>"))
    b = block.get("budget")
    if b:
        fig.add_vline(x=b, line=dict(dash="dot", color="#888"), annotation_text=f"budget {b}",
                      annotation_position="top left")
    fig.update_xaxes(title="token budget", type="log",
                     tickvals=[p for p in (block.get("curve_budgets") or [])], gridcolor="rgba(128,128,128,.25)")
    fig.update_yaxes(title="mean evidence recall", range=[0, 1.02], gridcolor="rgba(128,128,128,.25)")
    _layout(fig, height=420)
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.22), margin=dict(b=110))
    return fig
