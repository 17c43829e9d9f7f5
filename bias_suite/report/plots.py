"""Publication figures of a results folder (matplotlib, Agg backend).

``write_figures(results_dir, out_dir, fmt="png")`` writes, per attribute,

- ``<attribute>_groups_answer.<fmt>``: the per-group answer (each group's
  effect in units of τ with its interval against the ±τ band, coloured by
  status), as the HTML report opens with it;
- ``<attribute>_heatmap_groups.<fmt>``: metrics × groups, raw values in the
  cells, colour = distance from the metric's no-bias value b in units of its
  threshold tau, ``(value - b) / tau``, on the binned diverging scale of
  :mod:`bias_suite.report.theme` (red on the side that is worse for the
  group, blue on the better side; the size scale for a metric whose worse
  side is unknown), the verdict mark
  after the value, the accumulated value in the last column, with a colour
  bar;
- ``<attribute>_heatmap_pairs.<fmt>``: the same for pairwise metrics;
- ``<attribute>_groups_<metric>.<fmt>``: per-group point charts of each
  vector-valued metric (VBCM, BCM parts, Bernstein deltas), one marker per
  class, with the ``ci_low``/``ci_high`` interval when present.

Figures are sized for a single column (3.4 in wide) with 7-pt text, so they
stay readable when printed at column width; vector formats (svg, pdf) keep
text as text.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..io.values import is_null
from . import theme
from .data import ReportData, class_rank, order_unique, group_metric_rows, heatmap_tables, load_report_data
from ..io import atomic_path, ensure_folder

FORMATS = ("png", "svg", "pdf")
COLUMN_WIDTH_IN = 3.4
FONT_PT = 7


def _rc():
    return {
        "font.size": FONT_PT, "axes.titlesize": FONT_PT + 1, "axes.labelsize": FONT_PT, "xtick.labelsize": FONT_PT - 0.5,
        "ytick.labelsize": FONT_PT - 0.5, "legend.fontsize": FONT_PT - 0.5, "axes.linewidth": 0.6, "xtick.major.width": 0.6,
        "ytick.major.width": 0.6, "savefig.dpi": 300, "pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none",
        "font.family": "DejaVu Sans", "figure.dpi": 100,
    }


def _safe(name: str) -> str:
    s = str(name).replace("*", "_star").replace("|", "_vs_")
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-") or "x"


def _decimals(row_max: float) -> int:
    """Decimals for a heatmap row: the same for every cell of the row."""
    if is_null(row_max) or not np.isfinite(row_max):
        return 2
    return 3 if row_max < 0.1 else 2 if row_max < 10 else 1 if row_max < 100 else 0


def _fmt_cell(v: float, decimals: int = 2) -> str:
    if is_null(v) or not np.isfinite(v):
        return "–"
    s = f"{v:,.{decimals}f}"
    return s[1:] if s.startswith("-") and float(s.replace(",", "")) == 0 else s


def heatmap_figure(hm, *, width: float = COLUMN_WIDTH_IN):
    """A matplotlib Figure of one :class:`~bias_suite.report.html.Heatmap`."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.colors import BoundaryNorm, ListedColormap

    R, C = hm.values.shape
    labels = [f"{m} ({c})" if c != "all" else m for m, c, _ in hm.rows]
    cols = list(hm.columns) + ["acc."]
    with plt.rc_context(_rc()):
        longest = max(len(x) for x in labels)
        left_in = min(1.6, 0.06 + 0.052 * longest)
        col_in = min(0.6, max(0.38, (width - left_in - 0.55) / (C + 1)))
        fig_w = left_in + col_in * (C + 1) + 0.55
        cell_h = max(0.16, 0.9 / R)
        top_in = 0.15 + 0.055 * max(len(str(c)) for c in cols)
        fig_h = top_in + R * cell_h + 0.25
        fig = plt.figure(figsize=(fig_w, fig_h))
        ax = fig.add_axes([left_in / fig_w, 0.25 / fig_h, col_in * (C + 1) / fig_w, R * cell_h / fig_h])
        cax = fig.add_axes([(left_in + col_in * (C + 1) + 0.12) / fig_w, 0.25 / fig_h, 0.09 / fig_w, R * cell_h / fig_h])
        dist = np.column_stack([hm.distance, hm.accumulated_distance])
        sign = np.array([theme.worse_sign(w) for w in hm.worse], dtype=float)[:, None]
        harm = dist * sign  # > 0: on the worse side for the group
        top = 2 * theme.EFFECT_BINS[-1]
        bounds = [-top] + [-b for b in reversed(theme.EFFECT_BINS)] + list(theme.EFFECT_BINS) + [top]
        cmap = ListedColormap(theme.DIVERGING_COLOURS).with_extremes(bad="white")
        im = ax.imshow(np.ma.masked_invalid(np.where(sign != 0, np.clip(harm, -top, top), np.nan)), cmap=cmap,
                       norm=BoundaryNorm(bounds, cmap.N), aspect="auto", interpolation="nearest")
        if (sign == 0).any():  # worse side unknown: size only
            size_map = ListedColormap(theme.EFFECT_COLOURS).with_extremes(bad=(0, 0, 0, 0))
            ax.imshow(np.ma.masked_invalid(np.where(sign == 0, np.clip(np.abs(dist), 0, top), np.nan)), cmap=size_map,
                      norm=BoundaryNorm([0, *theme.EFFECT_BINS, top], size_map.N), aspect="auto", interpolation="nearest")
        absmax = np.nanmax(np.abs(np.where(np.isnan(hm.values), 0.0, hm.values)), axis=1, initial=0.0)
        for i in range(R):
            dec = _decimals(max(absmax[i], abs(hm.accumulated[i]) if not is_null(hm.accumulated[i]) else 0))
            for j in list(range(C)) + [-1]:
                rec = hm.cells.get((i, j))
                if j == -1 and rec is None:
                    continue
                v = hm.values[i, j] if j >= 0 else hm.accumulated[i]
                mark = theme.VERDICT_MARKS.get(rec.get("verdict"), "") if rec is not None else ""
                ink = theme.direction_ink(dist[i, j if j >= 0 else C], hm.worse[i])
                ax.text(j if j >= 0 else C, i, _fmt_cell(v, dec) + mark, ha="center", va="center", fontsize=FONT_PT - 1,
                        color=ink, fontweight="bold" if j == -1 else "normal")
        ax.set_xticks(range(C + 1))
        ax.set_xticklabels(cols, rotation=45, ha="left", rotation_mode="anchor")
        ax.xaxis.tick_top()
        ax.set_yticks(range(R))
        ax.set_yticklabels(labels)
        ax.tick_params(length=0, pad=2)
        ax.set_xticks(np.arange(-0.5, C + 1, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, R, 1), minor=True)
        ax.grid(which="minor", color=theme.FIGURE_COLOURS["cell-grid"], linewidth=0.6)
        ax.tick_params(which="minor", length=0)
        ax.axvline(C - 0.5, color=theme.FIGURE_COLOURS["divider"], linewidth=0.9)
        for k in range(1, R):  # separate metrics
            if hm.rows[k][0] != hm.rows[k - 1][0]:
                ax.axhline(k - 0.5, color=theme.FIGURE_COLOURS["rule"], linewidth=0.6)
        for spine in ax.spines.values():
            spine.set_linewidth(0.6)
        cb = fig.colorbar(im, cax=cax)
        cb.set_label("(value − b) / τ, worse side up", fontsize=FONT_PT - 1)
        cb.set_ticks(bounds[1:-1])
        cb.ax.tick_params(labelsize=FONT_PT - 1.5, length=2)
        cb.outline.set_linewidth(0.5)
    return fig


def group_chart_figure(metric: str, sub: pd.DataFrame, classes, groups, *, width: float = COLUMN_WIDTH_IN):
    """Points (and intervals) per group and class of one metric."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    cls = sorted(order_unique(sub["class"]), key=class_rank(classes))
    groups = [g for g in groups if g in set(sub["group"])] or order_unique(sub["group"])
    G, K = len(groups), len(cls)
    with plt.rc_context(_rc()):
        fig_h = 0.45 + 0.12 * max(1, K) * G + 0.12 * G
        fig, ax = plt.subplots(figsize=(width, max(1.3, fig_h)), constrained_layout=True)
        offs = (np.arange(K) - (K - 1) / 2) * (0.7 / max(K, 1))
        any_ci = False
        for k, c in enumerate(cls):
            colour = theme.class_colour(c, classes, k)
            ys, xs, lo, hi = [], [], [], []
            for gi, g in enumerate(groups):
                r = sub[(sub["group"] == g) & (sub["class"] == c)]
                if r.empty or is_null(r["value"].iloc[0]):
                    continue
                ys.append(gi + offs[k])
                xs.append(float(r["value"].iloc[0]))
                l, h = r["ci_low"].iloc[0], r["ci_high"].iloc[0]
                lo.append(np.nan if is_null(l) else float(l))
                hi.append(np.nan if is_null(h) else float(h))
            if not xs:
                continue
            xs, lo, hi = np.array(xs), np.array(lo), np.array(hi)
            has = np.isfinite(lo) & np.isfinite(hi)
            if has.any():
                any_ci = True
                ax.hlines(np.array(ys)[has], lo[has], hi[has], color=colour, linewidth=1.1)
            ax.plot(xs, ys, "o", color=colour, markersize=3.2, label=str(c), zorder=3)
        refs = pd.to_numeric(sub["baseline"], errors="coerce").dropna().unique() if "baseline" in sub.columns else []
        ref = float(refs[0]) if len(refs) == 1 else 1.0 if "Ratio" in metric else 0.0
        lo_x, hi_x = ax.get_xlim()
        if lo_x <= ref <= hi_x or "Ratio" in metric:
            ax.axvline(ref, color=theme.FIGURE_COLOURS["ref"], linewidth=0.6, linestyle="--", zorder=1)
        ax.set_yticks(range(G))
        ax.set_yticklabels(groups)
        ax.set_ylim(G - 0.5, -0.5)
        ax.set_xlabel(metric + (" (points: value; lines: interval)" if any_ci else ""))
        ax.grid(axis="x", color=theme.FIGURE_COLOURS["grid"], linewidth=0.5)
        ax.set_axisbelow(True)
        for s in ("top", "right"):
            ax.spines[s].set_visible(False)
        if K > 1:
            ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(K, 4), frameon=False,
                      handletextpad=0.2, columnspacing=0.8, borderaxespad=0)
    return fig


def group_answer_figure(bg: pd.DataFrame, attribute, *, width: float = COLUMN_WIDTH_IN):
    """The per-group answer of one attribute (the HTML report's opening chart): each group's effect (×τ,
    + = worse off) with its interval against the ±τ band, coloured by status, spill-overs beside the name."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .groups import STATUS_COLOURS, chart_range

    sub = bg[bg["attribute"] == attribute]
    half = chart_range(sub)
    with plt.rc_context(_rc()):
        fig, ax = plt.subplots(figsize=(width, max(1.2, 0.45 + 0.2 * len(sub))), constrained_layout=True)
        ax.axvspan(-1, 1, color="#e8e8e8", zorder=0)
        ax.axvline(0, color=theme.FIGURE_COLOURS["ref"], linewidth=0.6, linestyle="--", zorder=1)
        labels = []
        for i, r in enumerate(sub.itertuples(index=False)):
            col = STATUS_COLOURS.get(r.status, "#333333")
            labels.append(f"{r.group} ({r.status}" + (f", {r.spillover} spill-overs)" if r.spillover else ")"))
            if r.effect is None or not np.isfinite(r.effect):
                continue
            lo = r.effect_low if np.isfinite(r.effect_low) else -half
            hi = r.effect_high if np.isfinite(r.effect_high) else half
            ax.hlines(i, max(lo, -half), min(hi, half), color=col, linewidth=1.4, zorder=2)
            ax.plot(max(-half, min(half, r.effect)), i, "o", color=col, markersize=3.6, zorder=3)
        ax.set_xlim(-half, half)
        ax.set_yticks(range(len(sub)))
        ax.set_yticklabels(labels)
        ax.set_ylim(len(sub) - 0.5, -0.5)
        ax.set_xlabel(f"{attribute}: effect ×τ (+ worse off for the group; shaded: within ±τ)")
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    return fig


def _save(fig, path: Path, fmt: str) -> Path:
    import matplotlib.pyplot as plt

    with atomic_path(path) as tmp:
        meta = {"png": {"Software": "bias_suite"}, "svg": {"Creator": "bias_suite", "Date": None},
                "pdf": {"Creator": "bias_suite", "CreationDate": None}}.get(fmt)
        fig.savefig(tmp, format=fmt, dpi=300, bbox_inches="tight", pad_inches=0.03, metadata=meta)
    plt.close(fig)
    return path


def write_figures(results, out_dir, *, fmt: str = "png", attributes=None, metrics=None) -> list:
    """Write the heatmaps and per-group charts of a results folder (or a
    loaded :class:`ReportData`) to ``out_dir``; return the written paths.

    ``attributes`` / ``metrics`` restrict the figures (default: all)."""
    fmt = fmt.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {fmt!r}")
    data = results if isinstance(results, ReportData) else load_report_data(results)
    out = ensure_folder(out_dir)  # one clear error for a bad --out; ".." resolved
    res = data.results
    if metrics:
        wanted = {m.lower() for m in metrics}
        res = res[res["metric"].astype(str).str.lower().isin(wanted)]
        if res.empty:
            raise ValueError(f"none of the metrics {list(metrics)} is in the results")
    classes = data.classes
    written = []
    from ..stats.groups import by_group

    bg = by_group(data.results) if "verdict" in data.results.columns else pd.DataFrame(columns=["attribute"])
    for a in attributes or [x for x in data.attributes if (res["attribute"] == x).any()]:
        if (bg["attribute"] == a).any():  # the per-group answer first, as the report opens with it
            written.append(_save(group_answer_figure(bg, a), out / f"{_safe(a)}_groups_answer.{fmt}", fmt))
        for hm in heatmap_tables(res, a, classes):
            written.append(_save(heatmap_figure(hm), out / f"{_safe(a)}_heatmap_{hm.kind}s.{fmt}", fmt))
        ra = res[res["attribute"] == a]
        groups = order_unique(ra.loc[ra["group"].notna() & ~ra["group"].astype(str).str.contains("|", regex=False), "group"])
        for m, sub in group_metric_rows(res, a).items():
            written.append(_save(group_chart_figure(m, sub, classes, groups), out / f"{_safe(a)}_groups_{_safe(m)}.{fmt}", fmt))
    return written
