"""Inline SVG and table charts of the HTML report: the per-group and
per-pair heatmaps (colour = distance from the no-bias value in units of tau,
red on the side that is worse for the group and blue on the better side;
verdict marked in the cell) and the per-group point-and-interval charts."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..io.values import is_null
from . import theme
from .data import Heatmap, class_rank, is_ratio, order_unique
from .htmlfmt import tooltip, direction_cell_style, esc, fmt, metric_title, verdict_mark

def render_heatmap(hm: Heatmap) -> str:
    """A heatmap table: raw values in the cells, colour = (value - b) / tau
    on the binned diverging scale of :mod:`~bias_suite.report.theme`, red on
    the metric's worse side for the group and blue on its better side (the
    cell's own no-bias value b and threshold tau; uncoloured without them;
    the size scale for a metric whose worse side is unknown), the verdict
    marked after the value, the accumulated value last."""
    dist = hm.distance
    acc_dist = hm.accumulated_distance
    worse = hm.worse
    what = "groups" if hm.kind == "group" else "pairs"
    head = "".join(f'<th scope="col">{esc(c)}</th>' for c in hm.columns)
    body = []
    prev = None
    for i, (m, c, view) in enumerate(hm.rows):
        first = m != prev
        prev = m
        tr = [f'<tr data-class="{esc(c)}" data-metric="{esc(m)}"{" class=first" if first else ""}>']
        vtag = '<span class="tag">cf</span>' if view == "counterfactual" else ""
        side = {"higher": "higher is worse", "lower": "lower is worse"}.get(worse[i], "")
        side = f'<div class="side">{side}</div>' if side and first else ""
        tr.append(f'<th scope="row" class="metric{"" if first else " rep"}" title="{esc(metric_title(m))}">{esc(m)} {vtag}{side}</th>'
                  f'<td class="cls">{esc(c)}</td>')
        for j in range(len(hm.columns)):
            rec = hm.cells.get((i, j))
            mark = verdict_mark(rec.get("verdict")) if rec is not None else ""
            src = rec.get("source") if rec is not None else None
            if isinstance(src, str) and src:  # a spill-over: another group's effect, drawn apart from real ones
                tr.append(f'<td class="cell spill" data-source="{esc(src)}" title="spill-over from {esc(src)}: '
                          f'{tooltip(rec)}">{fmt(hm.values[i, j])}{mark}↪</td>')
                continue
            tr.append(f'<td class="cell"{direction_cell_style(dist[i, j], worse[i])} title="{tooltip(rec)}">'
                      f'{fmt(hm.values[i, j])}{mark}</td>')
        rec = hm.cells.get((i, -1))
        if rec is not None:
            mark = verdict_mark(rec.get("verdict"))
            tr.append(f'<td class="acc"{direction_cell_style(acc_dist[i], worse[i])} title="{tooltip(rec)}">'
                      f'{fmt(hm.accumulated[i])}{mark}</td>')
        else:
            tr.append('<td class="acc"></td>')
        tr.append("</tr>")
        body.append("".join(tr))
    caption = (
        f"{esc(hm.attribute)}: per-{what[:-1]} values (rows: metric and class). Colour: distance from the metric's "
        f"no-bias value b in units of its threshold τ, red on the side that is worse for the group (for a pair: its "
        f"first group), blue on the better side (under each metric: which side is worse), full colour at "
        f"{theme.EFFECT_BINS[-1]:g} τ; white: within ±{theme.EFFECT_BINS[0]:g} τ or not judged; orange: size only, for "
        "a metric whose worse side is unknown. Marks: "
        + ", ".join(f"{esc(mk)} {v}" for v, mk in theme.VERDICT_MARKS.items() if mk)
        + ". Striped cells marked ↪ are spill-overs: the value moves because other groups (named on hover) are in "
        "the group's background, and it is no finding about the group. "
        "Hover a cell for b, τ, interval, n and the verdict's reason; a metric name for its meaning."
    )
    return (
        f'<div class="scroll"><table class="heatmap" data-attribute="{esc(hm.attribute)}" data-kind="{hm.kind}">'
        f"<caption>{caption}</caption>"
        f'<thead><tr><th scope="col">metric</th><th scope="col">class</th>{head}<th scope="col" class="acc">accumulated</th></tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def scale_legend(signed: bool = True) -> str:
    """The colour scale as a row of swatches: signed distance (heatmaps) or size (overview, findings)."""
    labels = theme.bin_labels(signed=signed)
    cols = theme.DIVERGING_COLOURS if signed else theme.EFFECT_COLOURS
    inks = [theme.signed_ink(z) for z in (-9, -3, -1.5, -0.7, 0, 0.7, 1.5, 3, 9)] if signed else \
        [theme.effect_ink(e) for e in (0, 0.7, 1.5, 3, 9)]
    sw = "".join(f'<span class="sw" style="background:{c};color:{k}">{esc(lab)}</span>' for lab, c, k in zip(labels, cols, inks))
    what = "blue better ← (value − b) / τ → red worse for the group" if signed else "|value − b| / τ"
    return f'<span class="scale" data-signed="{int(signed)}"><span class="muted">{what}</span> {sw}</span>'


#: the ticks of a ratio's log axis (the four-fifths band's ends among them)
RATIO_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.8, 1.0, 1.25, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, n)
    mag = 10 ** math.floor(math.log10(raw))
    step = min((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw), default=raw)
    start = math.ceil(lo / step) * step
    ticks, t = [], start
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def _tick(t: float) -> str:
    s = f"{t:.4g}"
    return s.replace("-", "−") if t < 0 else s


def render_group_chart(metric: str, sub: pd.DataFrame, classes, groups) -> str:
    """An inline SVG: groups down, value across, one point (and interval)
    per class."""
    cls = sorted(order_unique(sub["class"]), key=class_rank(classes))
    groups = [g for g in groups if g in set(sub["group"])] or order_unique(sub["group"])
    ratio = is_ratio(metric)
    vals = pd.concat([sub["value"], sub["ci_low"], sub["ci_high"]]).astype(float)
    vals = vals[np.isfinite(vals) & (vals > 0 if ratio else True)]
    if vals.empty:
        return ""
    # a ratio on a log axis: 0.8 and 1.25 equally far from 1, a bound of 0 at the axis' left end
    floor = float(vals.min()) / 2 if ratio else 0.0
    T = (lambda v: math.log(max(float(v), floor))) if ratio else float
    lo, hi = T(vals.min()), T(vals.max())
    refs = pd.to_numeric(sub["baseline"], errors="coerce").dropna().unique() if "baseline" in sub.columns else []
    ref = T(float(refs[0]) if len(refs) == 1 else 1.0 if ratio else 0.0)
    if lo - (hi - lo) * 0.5 <= ref <= hi + (hi - lo) * 0.5 or lo <= ref <= hi:
        lo, hi = min(lo, ref), max(hi, ref)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.06
    lo, hi = lo - pad, hi + pad
    left, right, top, band = 150, 20, 34, 8 + 11 * len(cls)
    width = 560
    plot_w = width - left - right
    height = top + band * len(groups) + 34
    X = lambda v: left + (T(v) - lo) / (hi - lo) * plot_w
    parts = [
        f'<svg class="chart" role="img" aria-label="{esc(metric)} per group" viewBox="0 0 {width} {height}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="8" y="14" class="ct">{esc(metric)}</text>',
    ]
    colours = [theme.class_colour(c, classes, k) for k, c in enumerate(cls)]
    lx = width - right - sum(22 + 6.5 * len(str(c)) for c in cls)
    for c, col in zip(cls, colours):
        parts.append(f'<circle cx="{lx + 6:.1f}" cy="10" r="4" fill="{col}"/><text x="{lx + 13:.1f}" y="14" class="lg">{esc(c)}</text>')
        lx += 22 + 6.5 * len(str(c))
    y0, y1 = top - 4, top + band * len(groups)
    ticks = [t for t in RATIO_TICKS if lo <= math.log(t) <= hi] if ratio else _nice_ticks(lo, hi)
    for t in ticks:
        x = X(t)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y0}" y2="{y1}" class="grid"/><text x="{x:.1f}" y="{y1 + 14}" class="tk" text-anchor="middle">{_tick(t)}</text>')
    if lo <= ref <= hi:
        xr = left + (ref - lo) / (hi - lo) * plot_w
        parts.append(f'<line x1="{xr:.1f}" x2="{xr:.1f}" y1="{y0}" y2="{y1}" class="ref"/>')
    for gi, g in enumerate(groups):
        yb = top + gi * band
        if gi % 2 == 0:
            parts.append(f'<rect x="{left}" y="{yb - 2}" width="{plot_w}" height="{band}" class="stripe"/>')
        parts.append(f'<text x="{left - 8}" y="{yb + band / 2 + 2:.1f}" class="gl" text-anchor="end">{esc(g)}</text>')
        for k, c in enumerate(cls):
            r = sub[(sub["group"] == g) & (sub["class"] == c)]
            if r.empty or is_null(r["value"].iloc[0]):
                continue
            rec = r.iloc[0]
            col = colours[k]
            y = yb + 6 + k * 11
            if not is_null(rec["ci_low"]):  # an interval without an upper bound reaches the axis' right end
                end = hi if is_null(rec["ci_high"]) else T(rec["ci_high"])
                x_hi = left + (min(end, hi) - lo) / (hi - lo) * plot_w
                parts.append(f'<line x1="{X(rec["ci_low"]):.1f}" x2="{x_hi:.1f}" y1="{y}" y2="{y}" stroke="{col}" stroke-width="1.6"/>')
            parts.append(f'<circle cx="{X(rec["value"]):.1f}" cy="{y}" r="3.6" fill="{col}"><title>{tooltip(rec.to_dict())}</title></circle>')
    axis = "value, log axis" if ratio else "value"
    ref_text = fmt(math.exp(ref) if ratio else ref, 0)
    parts.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 4}" class="tk" text-anchor="middle">{axis}{" (line: " + ref_text + ")" if lo <= ref <= hi else ""}</text>')
    parts.append("</svg>")
    return "".join(parts)
