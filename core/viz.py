"""Plotly figures and escaped HTML highlighting used by the app and the HTML report.

Pure functions of a Report (and the document text): no Streamlit here, so the HTML export
and the pages draw exactly the same things. Every piece of document text that ends up in
HTML goes through ``html.escape``.
"""

from __future__ import annotations

import html
import json
import zlib
from dataclasses import dataclass
from typing import Any, Sequence

import plotly.graph_objects as go

from core.report import METRICS, ChunkingResult, Report

# One colour per chunker, identical in every view (colour-blind friendly Okabe-Ito first).
_PALETTE = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#7F7F7F",
    "#1F77B4", "#8C564B", "#9467BD", "#17BECF", "#BCBD22", "#2CA02C", "#FF7F0E", "#D62728",
]
_KNOWN = [
    "page+pp", "recursive-1100+pp", "recursive-600+pp", "llm-regex+pp", "page", "recursive-1100",
    "recursive-600", "langchain-default", "langchain-1100", "sentence-5", "fixed-512", "structure",
    "whole", "semantic", "semantic+pp", "llm-regex",
]


def chunker_color(chunking_id: str) -> str:
    """Stable colour for a chunking id (known ids get fixed slots, others a hashed one)."""
    if chunking_id in _KNOWN:
        return _PALETTE[_KNOWN.index(chunking_id) % len(_PALETTE)]
    return _PALETTE[zlib.crc32(chunking_id.encode()) % len(_PALETTE)]


def _rgba(hex_color: str, alpha: float) -> str:
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


def radar_figure(report: Report, ids: Sequence[str]) -> go.Figure:
    """One polygon per chunking over the five metrics (missing metric -> drawn at 0, noted in hover)."""
    fig = go.Figure()
    theta = list(METRICS) + [METRICS[0]]
    for cid in ids:
        c = report.get(cid)
        if c is None or not c.ok:
            continue
        r = [c.metrics.get(m) for m in METRICS]
        vals = [v if v is not None else 0.0 for v in r] + [r[0] if r[0] is not None else 0.0]
        hover = [f"{m}: {'n/a' if v is None else f'{v:.3f}'}" for m, v in zip(METRICS, r)]
        fig.add_trace(go.Scatterpolar(
            r=vals, theta=theta, name=cid, fill="toself",
            line=dict(color=chunker_color(cid), width=2), fillcolor=_rgba(chunker_color(cid), 0.12),
            text=hover + hover[:1], hoverinfo="text+name",
        ))
    fig.update_layout(polar=dict(bgcolor="rgba(0,0,0,0)", radialaxis=dict(range=[0, 1], tickvals=[0.25, 0.5, 0.75, 1.0])))
    return _layout(fig, "Metrics per chunking")


def size_figure(report: Report, ids: Sequence[str], min_tokens: int | None = None,
                max_tokens: int | None = None) -> go.Figure:
    """Chunk-size distribution (box + points) per chunking, with the size bounds drawn."""
    st = report.settings
    lo = min_tokens if min_tokens is not None else st.get("min_tokens", 100)
    hi = max_tokens if max_tokens is not None else st.get("max_tokens", 1100)
    fig = go.Figure()
    for cid in ids:
        c = report.get(cid)
        if c is None or not c.ok:
            continue
        fig.add_trace(go.Box(
            y=[ch.tokens for ch in c.chunks], name=cid, boxpoints="all", jitter=0.4, pointpos=0,
            marker=dict(color=chunker_color(cid), size=4), line=dict(color=chunker_color(cid)),
            hovertemplate="%{y} tokens<extra>" + html.escape(cid) + "</extra>",
        ))
    # the bounds: a line across the plot (shape, data coordinates) and a label (annotations on a
    # log axis take log10 coordinates); the axis range always shows both bounds
    import math

    toks = [ch.tokens for cid in ids if report.get(cid) is not None for ch in report.get(cid).chunks if ch.tokens > 0]
    for y, name in ((lo, f"min {lo}"), (hi, f"max {hi}")):
        if y and y > 0:
            fig.add_shape(type="line", xref="paper", x0=0, x1=1, yref="y", y0=y, y1=y,
                          line=dict(dash="dash", color="#D55E00", width=1.5))
            fig.add_annotation(xref="paper", x=0, xanchor="left", yref="y", y=math.log10(y), yanchor="bottom",
                               text=name, showarrow=False, font=dict(color="#D55E00", size=11))
    ys = [t for t in toks] + [v for v in (lo, hi) if v and v > 0]
    if ys:
        fig.update_yaxes(range=[math.log10(max(1, min(ys)) / 1.6), math.log10(max(ys) * 1.6)])
    fig.update_yaxes(title="tokens (o200k, log scale)", type="log")
    fig.update_layout(showlegend=False)
    return _layout(fig, "Chunk sizes")


def runtime_figure(report: Report, ids: Sequence[str]) -> go.Figure:
    cs = [report.get(i) for i in ids]
    cs = [c for c in cs if c is not None]
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
    rows = [cid for cid in ids if report.get(cid) is not None and report.get(cid).ok]
    for row, cid in enumerate(rows):
        c = report.get(cid)
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
                x=[b["boundary"] for b in bi], y=[row + 0.25] * len(bi), mode="markers",
                name="broken block", legendgroup="broken", showlegend=row == 0 or None,
                marker=dict(symbol="x", size=9, color="#D55E00"),
                hovertemplate="breaks block %{customdata}<extra>" + html.escape(cid) + "</extra>",
                customdata=[f"[{b['block'][0]}, {b['block'][1]})" for b in bi],
            ))
        rc = probs.split
        if rc:
            fig.add_trace(go.Scatter(
                x=[p["boundary"] for p in rc], y=[row - 0.25] * len(rc), mode="markers",
                name="split pair", legendgroup="split", showlegend=row == 0 or None,
                marker=dict(symbol="diamond", size=8, color="#CC79A7"),
                hovertemplate="splits a pair at %{x}<extra>" + html.escape(cid) + "</extra>",
            ))
    fig.update_yaxes(tickvals=list(range(len(rows))), ticktext=rows, range=[-0.7, len(rows) - 0.3])
    fig.update_xaxes(title="character offset", range=[0, max(1, text_length)])
    _layout(fig, "Where the chunkings cut", height=140 + 45 * max(1, len(rows)))
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    return fig


def sweep_figure(rows: Sequence[dict[str, Any]], param: str) -> go.Figure:
    """Metrics and score along a parameter sweep, chunk count on a second axis."""
    from plotly.subplots import make_subplots

    fig = make_subplots(specs=[[{"secondary_y": True}]])
    xs = [r["value"] for r in rows]
    for m in (*METRICS, "score"):
        ys = [r["metrics"].get(m) if m != "score" else r.get("score") for r in rows]
        fig.add_trace(go.Scatter(x=xs, y=ys, name=m, mode="lines+markers",
                                 line=dict(width=4 if m == "score" else 2)), secondary_y=False)
    fig.add_trace(go.Bar(x=xs, y=[r["chunks"] for r in rows], name="chunks", opacity=0.25,
                         marker_color="#7F7F7F"), secondary_y=True)
    fig.update_yaxes(title_text="metric", range=[0, 1.02], secondary_y=False)
    fig.update_yaxes(title_text="chunks", secondary_y=True)
    fig.update_xaxes(title_text=param)
    return _layout(fig, f"Sweep of {param}")


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
            line=dict(color=color, width=2, dash=dashes[i % len(dashes)]), fillcolor=_rgba(color, 0.10),
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
    return _layout(fig, "Quality–cost frontier", height=460)


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


# ------------------------------------------------------------------ highlighted text

@dataclass
class Problems:
    """What to highlight for one chunking, taken from its metric diagnostics."""

    broken: list[dict[str, Any]]
    split: list[dict[str, Any]]
    out_of_size: dict[int, dict[str, Any]]

    @classmethod
    def of(cls, c: ChunkingResult) -> "Problems":
        """From the diagnostics; malformed entries (a damaged or foreign report) are left out."""
        d = c.diagnostics if isinstance(c.diagnostics, dict) else {}

        def entries(metric: str, key: str, ok) -> list[dict[str, Any]]:
            got = (d.get(metric) or {}).get(key, []) if isinstance(d.get(metric) or {}, dict) else []
            return [x for x in (got if isinstance(got, list) else []) if isinstance(x, dict) and _safe(ok, x)]

        broken = entries("BI", "broken", lambda x: _span(x["block"]) and isinstance(x["boundary"], int))
        split = entries("RC", "split", lambda x: _span(x["entity"]) and _span(x["pronoun"])
                        and isinstance(x["boundary"], int))
        oos = entries("SC", "out_of_size", lambda x: isinstance(x["chunk"], int) and 0 <= x["chunk"] < len(c.chunks))
        return cls(broken=broken, split=split, out_of_size={o["chunk"]: o for o in oos})

    def positions(self, kind: str, c: ChunkingResult | None = None) -> list[int]:
        """Document offsets of each problem of ``kind`` (broken | split | size), for navigation.

        ``size`` needs the chunking ``c`` (the offsets are its out-of-size chunks' starts)."""
        if kind == "broken":
            return [b["block"][0] for b in self.broken]
        if kind == "split":
            return [min(p["entity"][0], p["pronoun"][0]) for p in self.split]
        if kind == "size" and c is not None:
            return [c.chunks[i].start for i in sorted(self.out_of_size) if i < len(c.chunks)]
        return []

    def spans(self, kind: str, c: ChunkingResult | None = None) -> list[tuple[int, int]]:
        """(start, end) of each problem of ``kind``: the broken block, the pair from its first
        mention to the end of its last, or the out-of-size chunk."""
        if kind == "broken":
            return [(b["block"][0], b["block"][1]) for b in self.broken]
        if kind == "split":
            return [(min(p["entity"][0], p["pronoun"][0]), max(p["entity"][1], p["pronoun"][1])) for p in self.split]
        if kind == "size" and c is not None:
            return [(c.chunks[i].start, c.chunks[i].end) for i in sorted(self.out_of_size) if i < len(c.chunks)]
        return []


def _span(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, int) for x in v) and v[0] <= v[1]


def _safe(check, x: dict[str, Any]) -> bool:
    try:
        return bool(check(x))
    except (KeyError, TypeError, IndexError):
        return False


# split pairs cycle through these, so that a pair's two ends share a colour and a P-tag
PAIR_COLORS = ["#CC79A7", "#9467BD", "#E377C2", "#8C564B", "#17BECF", "#BCBD22"]

HIGHLIGHT_CSS = """
<style>
.cs-hl{white-space:pre-wrap;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px;
  line-height:1.6;border:1px solid rgba(128,128,128,.35);border-radius:6px;padding:10px;overflow-x:auto;
  word-wrap:break-word}
.cs-c0{background:rgba(0,114,178,.10)} .cs-c1{background:rgba(230,159,0,.14)}
.cs-ov{background:rgba(128,128,128,.30)}
.cs-dim{opacity:.45}
.cs-b{display:inline-block;border-left:3px solid var(--cs-bc,#0072B2);margin:0 1px;height:1.15em;vertical-align:middle}
.cs-cut{display:inline-block;border-left:4px solid #D55E00;margin:0 1px;height:1.5em;vertical-align:middle;
  box-shadow:0 0 0 1px rgba(213,94,0,.35)}
.cs-lbl{font:600 10px sans-serif;color:#fff;background:#555;border-radius:3px;padding:0 3px;margin-right:2px;
  vertical-align:top}
.cs-lbl.cs-bad{background:#D55E00} .cs-lbl.cs-pbad{background:#A0407F}
.cs-pcut{border-left-color:#A0407F;box-shadow:0 0 0 1px rgba(160,64,127,.35)}
.cs-broken{outline:2px dashed #D55E00;outline-offset:1px;
  background-image:repeating-linear-gradient(135deg,rgba(213,94,0,.16) 0 6px,transparent 6px 12px)}
.cs-btag{font:700 10px sans-serif;color:#fff;background:#D55E00;border-radius:3px;padding:0 4px;margin-right:3px;
  vertical-align:top}
.cs-ent,.cs-pro{border-radius:2px;font-weight:700;background:color-mix(in srgb,var(--cs-pc) 35%,transparent);
  box-shadow:0 0 0 1px var(--cs-pc)}
.cs-pro{box-shadow:0 0 0 2px var(--cs-pc)}
.cs-ptag{font:700 10px sans-serif;color:#fff;background:var(--cs-pc);border-radius:3px;padding:0 3px;margin:0 2px;
  vertical-align:super}
.cs-focus{box-shadow:0 0 0 3px #F0E442}
.cs-here{font:700 10px sans-serif;color:#111;background:#F0E442;border-radius:3px;padding:0 4px;margin-right:3px;
  vertical-align:top}
</style>
"""


def highlight_html(text: str, c: ChunkingResult, start: int = 0, end: int | None = None,
                   problems: Problems | None = None, show: Sequence[str] = ("broken", "split", "size"),
                   block_kinds: Sequence[str] | None = None, focus: tuple[int, int] | None = None,
                   color: str | None = None, dim_outside: tuple[int, int] | None = None) -> str:
    """Escaped HTML of ``text[start:end]`` with chunk colours, boundaries and problems marked.

    Chunks alternate two tints; each boundary is a bar with the chunk number (in ``color``, the
    chunker's colour; red and taller when it breaks a block; tooltip with tokens). A broken block
    is outlined and hatched in red, tagged ``✂ <kind>`` where it starts. The entity and pronoun of
    each split pair share a colour and a ``P<n>`` tag (n = the pair's number in ``problems.split``).
    ``focus`` (start, end) is ringed in yellow and tagged "here"; text outside ``dim_outside`` is
    dimmed (context around one chunk). Nothing from ``text`` reaches the HTML unescaped.
    """
    end = len(text) if end is None else min(end, len(text))
    start = max(0, min(start, end))
    problems = problems or Problems.of(c)
    cuts = {b["boundary"] for b in problems.broken} if "broken" in show else set()
    pair_cuts = {p["boundary"] for p in problems.split} if "split" in show else set()
    classes_at: list[tuple[int, int, str, str, str]] = []  # (a, b, class, title, style)
    for i, ch in enumerate(c.chunks):
        if ch.end <= start or ch.start >= end:
            continue
        a, b = max(ch.start, start), min(ch.end, end)
        if a < b:
            classes_at.append((a, b, f"cs-c{i % 2}", f"chunk {i}: {ch.tokens} tokens", ""))
        if i and c.chunks[i - 1].end > ch.start:  # overlap with the previous chunk
            oa, ob = max(ch.start, start), min(c.chunks[i - 1].end, end)
            if oa < ob:
                classes_at.append((oa, ob, "cs-ov", f"overlap of chunks {i - 1} and {i}", ""))
    tags: dict[int, list[str]] = {}
    heads: dict[int, list[str]] = {}
    if "broken" in show:
        for bb in problems.broken:
            a, b = max(bb["block"][0], start), min(bb["block"][1], end)
            if a < b:
                j = bb.get("index")
                kind = block_kinds[j] if block_kinds is not None and j is not None and 0 <= j < len(block_kinds) else "block"
                title = (f"{kind} block #{(j or 0) + 1} [{bb['block'][0]}, {bb['block'][1]}) broken at "
                         f"{bb['boundary']}")
                classes_at.append((a, b, "cs-broken", title, ""))
                if a == bb["block"][0]:
                    heads.setdefault(a, []).append(
                        f'<span class="cs-btag" title="{html.escape(title)}">✂ broken {html.escape(kind)}</span>')
    if "split" in show:
        for n, p in enumerate(problems.split):
            pc = PAIR_COLORS[n % len(PAIR_COLORS)]
            for key, cls in (("entity", "cs-ent"), ("pronoun", "cs-pro")):
                a, b = max(p[key][0], start), min(p[key][1], end)
                if a < b:
                    classes_at.append((a, b, cls, f"P{n + 1} {key}: split at {p['boundary']}", f"--cs-pc:{pc}"))
                    if b == p[key][1]:
                        tags.setdefault(b, []).append(
                            f'<span class="cs-ptag" style="--cs-pc:{pc}" title="pair P{n + 1} ({key})">'
                            f'P{n + 1}</span>')
    if focus is not None:
        a, b = max(focus[0], start), min(focus[1], end)
        if a < b:
            classes_at.append((a, b, "cs-focus", "the current problem", ""))
            heads.setdefault(a, []).insert(0, '<span class="cs-here" id="cs-here">▶ here</span>')
    if dim_outside is not None:
        for a, b in ((start, dim_outside[0]), (dim_outside[1], end)):
            a, b = max(a, start), min(b, end)
            if a < b:
                classes_at.append((a, b, "cs-dim", "context outside the chunk", ""))
    bar = f' style="--cs-bc:{color}"' if color and _is_hex(color) else ""
    marks: dict[int, str] = {}
    for i, ch in enumerate(c.chunks):
        if start <= ch.start < end or (i == 0 and ch.start == start):
            oos = problems.out_of_size.get(i) if "size" in show else None
            bad = ch.start in cuts
            splits = ch.start in pair_cuts
            cls = "cs-cut" if bad else ("cs-cut cs-pcut" if splits else "cs-b")
            title = f"chunk {i} starts: {ch.tokens} tokens"
            if oos:
                title += f" ({oos['kind']}-size)"
            if bad:
                title += " — this boundary breaks a block"
            if splits:
                title += " — this boundary splits an entity–pronoun pair"
            lbl_cls = "cs-lbl cs-bad" if (bad or oos) else ("cs-lbl cs-pbad" if splits else "cs-lbl")
            marks[ch.start] = (f'<span class="{cls}"{bar if not (bad or splits) else ""} '
                               f'title="{html.escape(title)}"></span>'
                               f'<span class="{lbl_cls}" title="{html.escape(title)}">#{i}'
                               f'{" ✂" if bad else ""}{" ⛓" if splits else ""}{" ⚠" if oos else ""}</span>')
    # with overlapping chunks a chunk's end is a boundary of its own (BI / RC count it): mark it
    ends: dict[int, str] = {}
    for i, ch in enumerate(c.chunks):
        nxt = c.chunks[i + 1].start if i + 1 < len(c.chunks) else None
        if nxt is not None and nxt != ch.end and start < ch.end <= end:
            bad, splits = ch.end in cuts, ch.end in pair_cuts
            lbl_cls = "cs-lbl cs-bad" if bad else ("cs-lbl cs-pbad" if splits else "cs-lbl")
            title = f"chunk {i} ends (the chunks overlap)" + (" — this boundary breaks a block" if bad else "") + (
                " — this boundary splits an entity–pronoun pair" if splits else "")
            ends[ch.end] = (f'<span class="{lbl_cls}" title="{html.escape(title)}">#{i}⟧'
                            f'{" ✂" if bad else ""}{" ⛓" if splits else ""}</span>')
    points = {start, end, *marks, *tags, *heads, *ends}
    for a, b, *_ in classes_at:
        points.update((a, b))
    points = sorted(p for p in points if start <= p <= end)
    classes_at.sort()
    out = [HIGHLIGHT_CSS, '<div class="cs-hl">']
    for a, b in zip(points, points[1:] + [None]):
        if a in ends:
            out.append(ends[a])
        if a in marks:
            out.append(marks[a])
        if a in tags:
            out.append("".join(tags[a]))
        if a in heads:
            out.append("".join(heads[a]))
        if b is None or a >= b:
            continue
        active = [(cls, title, style) for (x, y, cls, title, style) in classes_at if x <= a and b <= y]
        seg = html.escape(text[a:b])
        if active:
            cls = " ".join(dict.fromkeys(k for k, _, _ in active))
            title = " | ".join(dict.fromkeys(t for _, t, _ in active))
            style = ";".join(s for _, _, s in active if s)
            style_attr = f' style="{style}"' if style else ""
            out.append(f'<span class="{cls}"{style_attr} title="{html.escape(title)}">{seg}</span>')
        else:
            out.append(seg)
    out.append("</div>")
    return "".join(out)


def _is_hex(color: str) -> bool:
    h = color.lstrip("#")
    return color.startswith("#") and len(h) in (3, 6) and all(ch in "0123456789abcdefABCDEF" for ch in h)


def windows(text_length: int, pages: Sequence[Sequence[int]], max_chars: int = 12000,
            cuts: Sequence[int] = ()) -> list[tuple[int, int]]:
    """Character ranges to render a long document piece by piece, tiling ``[0, text_length)``.

    With pages: one range per page (text before the first page joins it, text after the last
    joins the last; a page over twice ``max_chars`` is split like unpaged text). Without pages:
    windows of about ``max_chars`` that end on one of ``cuts`` (block boundaries) when one is
    near. The one place the app decides how a document is cut for display (block view, Compare,
    Chunk inspector all use it through ``document_views``).
    """
    import bisect

    if text_length <= 0:
        return []
    cuts = sorted({int(x) for x in cuts if 0 < x < text_length})

    def split(a: int, b: int) -> list[tuple[int, int]]:
        out = []
        while b - a > max_chars:
            target = a + max_chars
            i = bisect.bisect_right(cuts, target) - 1
            m = cuts[i] if i >= 0 and cuts[i] > a + max_chars // 3 else target
            out.append((a, m))
            a = m
        out.append((a, b))
        return out

    if not pages:
        return split(0, text_length)
    edges = sorted({0, text_length, *(min(max(int(p[0]), 0), text_length) for p in pages[1:])})
    out: list[tuple[int, int]] = []
    for a, b in zip(edges, edges[1:]):
        out.extend(split(a, b) if b - a > 2 * max_chars else [(a, b)])
    return out


@dataclass(frozen=True)
class View:
    """A piece of the document to render: characters ``[start, end)`` and the blocks that start
    in it, ``first..last`` (inclusive; ``last < first`` when none does), with a label."""

    label: str
    start: int
    end: int
    first: int
    last: int

    @property
    def has_blocks(self) -> bool:
        return self.last >= self.first


def document_views(doc: Any, max_chars: int = 12000) -> list[View]:
    """``windows()`` of a Document, labelled ("page 3", "page 3 (2/2)", "part 2 of 9") with block ranges.

    Views that hold neither a block start nor any non-blank text are left out."""
    import bisect

    text = doc.text
    ranges = windows(len(text), [[p.start, p.end] for p in doc.pages], max_chars, cuts=doc.split_points)
    starts = [b.start for b in doc.blocks]
    page_starts = [p.start for p in doc.pages]
    raw = []
    for k, (a, b) in enumerate(ranges):
        first = bisect.bisect_left(starts, a) if k else 0
        last = bisect.bisect_left(starts, b) - 1 if k < len(ranges) - 1 else len(starts) - 1
        if last < first and not text[a:b].strip():
            continue
        page = (max(1, bisect.bisect_right(page_starts, a))) if doc.pages else None
        raw.append((page, a, b, first, last))
    out: list[View] = []
    n = len(raw)
    for k, (page, a, b, first, last) in enumerate(raw):
        if page is None:
            label = f"part {k + 1} of {n}"
        else:
            same = [r for r in raw if r[0] == page]
            label = f"page {page}" if len(same) == 1 else f"page {page} ({same.index(raw[k]) + 1}/{len(same)})"
        out.append(View(label, a, b, first, last))
    return out


def view_index(views: Sequence[View], pos: int) -> int:
    """Index of the view holding character ``pos`` (the last one for ``pos`` past the end)."""
    import bisect

    if not views:
        return 0
    return max(0, min(len(views) - 1, bisect.bisect_right([v.start for v in views], pos) - 1))


# ------------------------------------------------------------------ winner card

def winner_summary(report: Report, near: float = 0.01) -> dict[str, Any]:
    """What the winner card shows: runner-up, margin, metrics where the winner leads and trails
    the runner-up (by weighted difference), and warnings for degenerate or fragile wins."""
    out: dict[str, Any] = {"winner": report.winner, "runner": None, "margin": None, "leads": [], "trails": [],
                           "warnings": []}
    if report.winner is None:
        return out
    best = report.get(report.winner)
    weights = report.settings.get("weights") or {}
    pool = [c for c in report.ranked if c.candidate and c.id != best.id]
    runner = pool[0] if pool else None
    if runner is not None:
        out["runner"], out["margin"] = runner.id, (best.score or 0) - (runner.score or 0)
        for m in METRICS:
            a, b = best.metrics.get(m), runner.metrics.get(m)
            if a is None or b is None or weights.get(m, 1.0) <= 0 or abs(a - b) <= 0.0005:
                continue
            (out["leads"] if a > b else out["trails"]).append({"metric": m, "winner": a, "runner": b, "delta": a - b})
        out["leads"].sort(key=lambda x: -x["delta"])
        out["trails"].sort(key=lambda x: x["delta"])
    w = out["warnings"]
    flags = set(report.flags)
    if "single-chunk" in flags or len(best.chunks) == 1:
        w.append("Degenerate win: the winner is a single chunk (the whole document). BI and RC are trivially "
                 "perfect; check that this is what you want.")
    if "metrics-missing" in flags:
        missing = [m for m in METRICS if best.metrics.get(m) is None and weights.get(m, 1.0) > 0]
        w.append(f"The winner's score averages fewer than five metrics (missing: {', '.join(missing) or '?'}).")
    if "tie" in flags:
        w.append("Tie on score with the runner-up: decided by fewer chunks, then id.")
    elif out["margin"] is not None and out["margin"] < near:
        w.append(f"Narrow win: {out['margin']:.3f} ahead of {out['runner']}, within what a small settings change "
                 "can flip. Compare the two before deciding.")
    if "single-candidate" in flags:
        w.append("Only one candidate produced a score, so there was nothing to compare it with.")
    sc = best.metrics.get("SC")
    if sc is not None and sc < 0.5:
        w.append(f"Most of the winner's chunks are out of the size bounds (SC {sc:.2f}).")
    return out


# ------------------------------------------------------------------ HTML report

def _cell_shade(v: float | None) -> str:
    if v is None:
        return ""
    # red (low) -> green (high), light alpha so both themes stay readable
    r, g = int(213 + (0 - 213) * v), int(94 + (158 - 94) * v)
    return f' style="background:rgba({r},{g},{115 if v > .5 else 0},{0.15 + 0.25 * abs(v - .5) * 2:.2f})"'


def problem_counts(c: ChunkingResult) -> dict[str, int]:
    p = Problems.of(c)
    return {"broken blocks": len(p.broken), "split pairs": len(p.split), "out-of-size chunks": len(p.out_of_size)}


def leaderboard_rows(report: Report) -> list[dict[str, Any]]:
    """One row per chunking (ranked first, then the rest), as shown in the app and the HTML report."""
    order = report.ranked + [c for c in report.chunkings if c not in report.ranked]
    rows = []
    for c in order:
        st = c.token_stats()
        row: dict[str, Any] = {
            "chunking": c.id, "winner": c.id == report.winner, "candidate": c.candidate, "status": c.status,
            "chunks": st["chunks"], "mean tokens": round(st["mean"]), "min": st["min"], "max": st["max"],
        }
        row.update({m: c.metrics.get(m) for m in METRICS})
        row.update({"score": c.score, "seconds": round(c.seconds, 3), "note": c.reason})
        rows.append(row)
    return rows


def html_report(report: Report) -> str:
    """A self-contained HTML page (plotly.js inlined once) a stakeholder can open offline."""
    d = report.document
    e = html.escape
    ok_ids = [c.id for c in report.ranked]
    radar_ids = ok_ids[:2] if report.winner is None else [report.winner] + [i for i in ok_ids if i != report.winner][:1]
    radar = radar_figure(report, radar_ids or ok_ids).to_html(full_html=False, include_plotlyjs=True)
    radar_all = radar_figure(report, ok_ids).to_html(full_html=False, include_plotlyjs=False)
    sizes = size_figure(report, ok_ids).to_html(full_html=False, include_plotlyjs=False)
    head = "".join(f"<th>{e(h)}</th>" for h in ["chunking", "status", "chunks", "mean tok", *METRICS, "score",
                                                   "broken blocks", "split pairs", "out-of-size", "seconds"])
    body = []
    for row, c in zip(leaderboard_rows(report), report.ranked + [c for c in report.chunkings if c not in report.ranked]):
        pc = problem_counts(c)
        name = e(c.id) + (" 🏆" if row["winner"] else "") + (" <small>(candidate)</small>" if c.candidate else "")
        cells = [f"<td>{name}</td>", f"<td>{e(c.status)}{(': ' + e(c.reason)) if c.reason else ''}</td>",
                 f"<td>{row['chunks']}</td>", f"<td>{row['mean tokens']}</td>"]
        cells += [f"<td{_cell_shade(c.metrics.get(m))}>{'–' if c.metrics.get(m) is None else f'{c.metrics[m]:.3f}'}</td>"
                  for m in METRICS]
        cells += [f"<td><b>{'–' if c.score is None else f'{c.score:.3f}'}</b></td>",
                  f"<td>{pc['broken blocks']}</td>", f"<td>{pc['split pairs']}</td>",
                  f"<td>{pc['out-of-size chunks']}</td>", f"<td>{c.seconds:.2f}</td>"]
        body.append("<tr>" + "".join(cells) + "</tr>")
    settings = e(json.dumps({k: v for k, v in report.settings.items() if not k.startswith("_")}, indent=1,
                            ensure_ascii=False))
    warn = "".join(f"<li>{e(w)}</li>" for w in report.warnings)
    flags = ", ".join(e(f) for f in report.flags) or "none"
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>ChunkScope report: {e(d.get('name', ''))}</title>
<style>
body{{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;
  color:#222;background:#fff}}
@media (prefers-color-scheme: dark){{body{{color:#ddd;background:#111}} th{{background:#222!important}}}}
table{{border-collapse:collapse;width:100%;font-size:13px}} th,td{{border:1px solid rgba(128,128,128,.4);padding:4px 6px;text-align:right}}
th{{background:#f2f2f2}} td:first-child,td:nth-child(2){{text-align:left}}
.card{{border:2px solid #009E73;border-radius:10px;padding:1em 1.4em;margin:1em 0}}
.muted{{color:#888;font-size:13px}} pre{{font-size:12px;overflow:auto}}
</style></head><body>
<h1>ChunkScope report</h1>
<p class="muted">{e(d.get('name', ''))} · {d.get('chars', 0):,} characters · {d.get('tokens', 0):,} o200k tokens ·
{len(d.get('pages', []))} pages · {len(d.get('blocks', []))} blocks · language {e(str(d.get('language')))} ·
sha256 {e(str(d.get('sha256', ''))[:16])}…</p>
<div class="card"><h2>Adaptive winner: {e(report.winner or 'none')}</h2><p>{e(report.explanation)}</p>
<p class="muted">flags: {flags}</p></div>
{('<h3>Warnings</h3><ul>' + warn + '</ul>') if warn else ''}
<h2>Leaderboard</h2><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>
<h2>Winner vs runner-up</h2>{radar}
<h2>All chunkings</h2>{radar_all}
<h2>Chunk sizes</h2>{sizes}
<h2>Settings</h2><pre>{settings}</pre>
<p class="muted">Coreference: {e(json.dumps(report.coref, ensure_ascii=False))} · Embeddings: {e(json.dumps(report.embedder, ensure_ascii=False, default=str))}</p>
</body></html>"""
