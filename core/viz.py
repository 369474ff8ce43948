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
    for y, name in ((lo, f"min {lo}"), (hi, f"max {hi}")):
        fig.add_hline(y=y, line=dict(dash="dash", color="#888"), annotation_text=name, annotation_position="top left")
    fig.update_yaxes(title="tokens (o200k)", type="log")
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


def boundary_strip_figure(report: Report, ids: Sequence[str], text_length: int) -> go.Figure:
    """One row per chunking along the document: boundaries as ticks, broken blocks and split pairs as marks."""
    fig = go.Figure()
    rows = [cid for cid in ids if report.get(cid) is not None and report.get(cid).ok]
    for row, cid in enumerate(rows):
        c = report.get(cid)
        starts = [ch.start for ch in c.chunks[1:]]
        fig.add_trace(go.Scatter(
            x=starts, y=[row] * len(starts), mode="markers", name=f"{cid} boundaries",
            marker=dict(symbol="line-ns-open", size=16, color=chunker_color(cid), line=dict(width=2)),
            hovertemplate="boundary at %{x}<extra>" + html.escape(cid) + "</extra>", showlegend=False,
        ))
        bi = c.diagnostics.get("BI", {}).get("broken", [])
        if bi:
            fig.add_trace(go.Scatter(
                x=[b["boundary"] for b in bi], y=[row + 0.25] * len(bi), mode="markers",
                name="broken block", legendgroup="broken", showlegend=row == 0 or None,
                marker=dict(symbol="x", size=9, color="#D55E00"),
                hovertemplate="breaks block %{customdata}<extra>" + html.escape(cid) + "</extra>",
                customdata=[f"[{b['block'][0]}, {b['block'][1]})" for b in bi],
            ))
        rc = c.diagnostics.get("RC", {}).get("split", [])
        if rc:
            fig.add_trace(go.Scatter(
                x=[p["boundary"] for p in rc], y=[row - 0.25] * len(rc), mode="markers",
                name="split pair", legendgroup="split", showlegend=row == 0 or None,
                marker=dict(symbol="diamond", size=8, color="#CC79A7"),
                hovertemplate="splits a pair at %{x}<extra>" + html.escape(cid) + "</extra>",
            ))
    fig.update_yaxes(tickvals=list(range(len(rows))), ticktext=rows, range=[-0.7, len(rows) - 0.3])
    fig.update_xaxes(title="character offset", range=[0, max(1, text_length)])
    return _layout(fig, "Where the chunkings cut", height=140 + 45 * max(1, len(rows)))


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


# ------------------------------------------------------------------ highlighted text

@dataclass
class Problems:
    """What to highlight for one chunking, taken from its metric diagnostics."""

    broken: list[dict[str, Any]]
    split: list[dict[str, Any]]
    out_of_size: dict[int, dict[str, Any]]

    @classmethod
    def of(cls, c: ChunkingResult) -> "Problems":
        return cls(
            broken=list(c.diagnostics.get("BI", {}).get("broken", [])),
            split=list(c.diagnostics.get("RC", {}).get("split", [])),
            out_of_size={o["chunk"]: o for o in c.diagnostics.get("SC", {}).get("out_of_size", [])},
        )

    def positions(self, kind: str) -> list[int]:
        """Document offsets of each problem of ``kind`` (broken | split | size), for navigation."""
        if kind == "broken":
            return [b["block"][0] for b in self.broken]
        if kind == "split":
            return [min(p["entity"][0], p["pronoun"][0]) for p in self.split]
        return []


HIGHLIGHT_CSS = """
<style>
.cs-doc{white-space:pre-wrap;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px;
  line-height:1.55;border:1px solid rgba(128,128,128,.35);border-radius:6px;padding:10px;overflow-x:auto}
.cs-c0{background:rgba(0,114,178,.10)} .cs-c1{background:rgba(230,159,0,.13)}
.cs-ov{background:rgba(128,128,128,.30)}
.cs-b{display:inline-block;border-left:3px solid #0072B2;margin:0 1px;height:1.1em;vertical-align:middle}
.cs-cut{display:inline-block;border-left:3px solid #D55E00;margin:0 1px;height:1.3em;vertical-align:middle}
.cs-lbl{font-size:10px;color:#fff;background:#555;border-radius:3px;padding:0 3px;margin-right:2px;vertical-align:top}
.cs-lbl.cs-bad{background:#D55E00}
.cs-broken{text-decoration:underline wavy #D55E00;text-decoration-thickness:1px;outline:1px dashed rgba(213,94,0,.6)}
.cs-ent{background:rgba(204,121,167,.45);border-radius:2px;font-weight:600}
.cs-pro{background:rgba(204,121,167,.45);border-radius:2px;font-weight:600;outline:2px solid #CC79A7}
.cs-tag{font-size:9px;color:#CC79A7;font-weight:700;vertical-align:super}
</style>
"""


def highlight_html(text: str, c: ChunkingResult, start: int = 0, end: int | None = None,
                   problems: Problems | None = None, show: Sequence[str] = ("broken", "split", "size")) -> str:
    """Escaped HTML of ``text[start:end]`` with chunk colours, boundaries and problems marked.

    Chunks alternate two tints; each boundary is a bar with the chunk number (red when it
    breaks a block, tooltip with tokens); broken blocks get a wavy red underline; the entity
    and pronoun of each split pair are tinted and tagged ``P<n>`` (same tag on both ends).
    """
    end = len(text) if end is None else min(end, len(text))
    start = max(0, min(start, end))
    problems = problems or Problems.of(c)
    cuts = {b["boundary"] for b in problems.broken} if "broken" in show else set()
    # interval events inside the window: (pos, kind, payload)
    classes_at: list[tuple[int, int, str, str]] = []  # (a, b, class, title)
    for i, ch in enumerate(c.chunks):
        a, b = max(ch.start, start), min(ch.end, end)
        if a < b:
            classes_at.append((a, b, f"cs-c{i % 2}", f"chunk {i}: {ch.tokens} tokens"))
        if i and c.chunks[i - 1].end > ch.start:  # overlap with the previous chunk
            oa, ob = max(ch.start, start), min(c.chunks[i - 1].end, end)
            if oa < ob:
                classes_at.append((oa, ob, "cs-ov", f"overlap of chunks {i - 1} and {i}"))
    if "broken" in show:
        for bb in problems.broken:
            a, b = max(bb["block"][0], start), min(bb["block"][1], end)
            if a < b:
                classes_at.append((a, b, "cs-broken", f"block [{bb['block'][0]}, {bb['block'][1]}) broken at {bb['boundary']}"))
    tags: dict[int, list[str]] = {}
    if "split" in show:
        for n, p in enumerate(problems.split):
            for key, cls in (("entity", "cs-ent"), ("pronoun", "cs-pro")):
                a, b = max(p[key][0], start), min(p[key][1], end)
                if a < b:
                    classes_at.append((a, b, cls, f"P{n + 1} {key}: split at {p['boundary']}"))
                    if b == p[key][1]:
                        tags.setdefault(b, []).append(f"P{n + 1}")
    marks: dict[int, str] = {}
    for i, ch in enumerate(c.chunks):
        if start <= ch.start < end or (i == 0 and ch.start == start):
            oos = problems.out_of_size.get(i) if "size" in show else None
            bad = ch.start in cuts
            cls = "cs-cut" if bad else "cs-b"
            title = f"chunk {i} starts: {ch.tokens} tokens"
            if oos:
                title += f" ({oos['kind']}-size)"
            if bad:
                title += " — this boundary breaks a block"
            lbl_cls = "cs-lbl cs-bad" if (bad or oos) else "cs-lbl"
            marks[ch.start] = (f'<span class="{cls}" title="{html.escape(title)}"></span>'
                               f'<span class="{lbl_cls}" title="{html.escape(title)}">#{i}'
                               f'{" ⚠" if oos else ""}</span>')
    points = {start, end, *marks, *tags}
    for a, b, _, _ in classes_at:
        points.update((a, b))
    points = sorted(p for p in points if start <= p <= end)
    out = [HIGHLIGHT_CSS, '<div class="cs-doc">']
    for a, b in zip(points, points[1:] + [None]):
        if a in marks:
            out.append(marks[a])
        if a in tags:
            out.append("".join(f'<span class="cs-tag">{t}</span>' for t in tags[a]))
        if b is None or a >= b:
            continue
        active = [(cls, title) for (x, y, cls, title) in classes_at if x <= a and b <= y]
        seg = html.escape(text[a:b])
        if active:
            cls = " ".join(dict.fromkeys(k for k, _ in active))
            title = " | ".join(dict.fromkeys(t for _, t in active))
            out.append(f'<span class="{cls}" title="{html.escape(title)}">{seg}</span>')
        else:
            out.append(seg)
    out.append("</div>")
    return "".join(out)


def windows(text_length: int, pages: Sequence[Sequence[int]], max_chars: int = 12000,
            cuts: Sequence[int] = ()) -> list[tuple[int, int]]:
    """Views of a long document: its pages, or windows of about ``max_chars`` ending on a cut."""
    if pages:
        return [(int(a), int(b)) for a, b in pages]
    if text_length <= max_chars:
        return [(0, text_length)]
    import bisect

    cuts = sorted(c for c in cuts if 0 < c < text_length)
    out, a = [], 0
    while a < text_length:
        target = a + max_chars
        if target >= text_length:
            out.append((a, text_length))
            break
        i = bisect.bisect_right(cuts, target) - 1
        b = cuts[i] if i >= 0 and cuts[i] > a + max_chars // 3 else target
        out.append((a, b))
        a = b
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
