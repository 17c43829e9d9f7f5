"""The per-group answer as the terminal and the HTML report show it: the
rules that read it live in :mod:`bias_suite.stats.groups` (one place for the
report, the terminal and ``Results.by_group()``); this module draws it.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..stats.groups import (GROUP_COLUMNS, STATUSES, TRAIL_COLUMNS, by_group, class_valence,  # noqa: F401
                            harm_sign)

__all__ = ["by_group", "harm_sign", "class_valence", "STATUSES", "GROUP_COLUMNS", "TRAIL_COLUMNS", "group_lines",
           "groups_table", "render_groups", "group_rows_shown", "GROUP_FINDING_WIDTH", "groups_chart_svg",
           "STATUS_COLOURS", "chart_range"]


# ----------------------------------------------------------------- terminal
#: how each status is drawn: worse off in the colour of harm, better off in that of the other side
STATUS_STYLES = {"worse off": "bold #b2182b", "slightly worse off": "#d6604d", "better off": "bold #2166ac",
                 "slightly better off": "#4393c3", "mixed": "bold magenta", "undecided": "yellow",
                 "no difference shown": "dim", "cleared": "green"}
#: statuses listed by name on one line per attribute rather than a line each
QUIET = ("no difference shown", "cleared")


def _num(x) -> str:
    if x is None or not np.isfinite(x):
        return "unbounded" if x is not None and abs(x) == math.inf else "–"
    return f"{x:+.1f}".replace("-", "−")


#: the narrowest terminal that shows the finding / settle column (narrower: settle lines under the table)
GROUP_FINDING_WIDTH = 120


def group_rows_shown(bg: pd.DataFrame, max_rows: int | None = None) -> list[tuple]:
    """(attribute, group) of the groups that have a line of their own in :func:`group_lines`."""
    out, last = [], None
    for a, g, st, *_ in group_lines(bg, max_rows):
        last = a or last
        if st not in QUIET and not g.startswith("… "):
            out.append((last, g))
    return out


def group_lines(bg: pd.DataFrame, max_rows: int | None = None) -> list[tuple]:
    """The rows of the terminal's per-group table: (attribute, group text,
    status, effect text, finding text, counts text); groups that need no
    line of their own (:data:`QUIET`) share one per attribute and status.
    Attributes with a worse-off or undecided group come first."""
    rows: list = []
    rank = {s: i for i, s in enumerate(STATUSES)}
    def key(a):
        sub = bg[bg["attribute"] == a]
        worst = sub["effect"].abs().max() if sub["effect"].notna().any() else 0.0
        return (min(rank[s] for s in sub["status"]), -worst)

    order = sorted(pd.unique(bg["attribute"]), key=key)
    for a in order:
        sub = bg[bg["attribute"] == a]
        first = True
        for r in sub.itertuples(index=False):
            if r.status in QUIET:
                continue
            eff = (f"{_num(r.effect)} [{_num(r.effect_low)}, {_num(r.effect_high)}]"
                   if r.effect is not None and np.isfinite(r.effect) else "")
            counts = " ".join(f"{n}{k[0]}" for k, n in (("material", r.material), ("small", r.small),
                                                        ("negligible", r.negligible), ("inconclusive", r.inconclusive))
                              if n)
            what = r.settle if r.status == "undecided" and r.settle else (r.finding or "")
            rows.append((a if first else "", r.group, r.status, eff, what, counts))
            first = False
        for st in QUIET:
            names = sub.loc[sub["status"] == st, "group"].tolist()
            if names:
                rows.append((a if first else "", ", ".join(names), st, "", "", ""))
                first = False
    if max_rows is not None and len(rows) > max_rows:
        hidden = len(rows) - max_rows + 1
        rows = rows[: max_rows - 1] + [("", f"… {hidden} more", "", "", "", "")]
    return rows


def groups_table(bg: pd.DataFrame, *, max_rows: int | None = None, width: int | None = None):
    """The per-group answer as a rich table (the headline's first section)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True, padding=(0, 1))
    values = width is None or width >= 140  # its values by verdict, where the line has room for them
    finding = width is None or width >= GROUP_FINDING_WIDTH  # its largest finding, likewise
    t.add_column("attribute", no_wrap=True, overflow="ellipsis", max_width=18 if finding else 14)
    t.add_column("group", overflow="fold", min_width=10, max_width=28 if finding else 23)
    t.add_column("status", no_wrap=True, min_width=19)
    t.add_column("effect ×τ", no_wrap=True, min_width=18)
    if finding:  # (its width is what the other columns leave, so that the group's name is never squeezed out)
        room = 44 if width is None else max(16, min(44, width - (18 + 16 + 20 + 22 + 6) - (20 if values else 0)))
        t.add_column("largest own finding / what would settle it", overflow="ellipsis", no_wrap=True, max_width=room)
    if values:
        t.add_column("values", no_wrap=True, overflow="ellipsis", max_width=18)
    for a, g, st, eff, what, counts in group_lines(bg, max_rows):
        cells = [Text(a), Text(g), Text(st, style=STATUS_STYLES.get(st, "")), Text(eff)]
        if finding:
            cells.append(Text(what, style="dim" if st == "undecided" else ""))
        t.add_row(*cells, *([Text(counts, style="dim")] if values else []))
    return t


# ----------------------------------------------------------------- chart
#: the colour of each status in charts and the HTML table (worse off in the colour of harm)
STATUS_COLOURS = {"worse off": "#b2182b", "slightly worse off": "#d6604d", "better off": "#2166ac",
                  "slightly better off": "#4393c3", "mixed": "#8e44ad", "undecided": "#9a6700",
                  "no difference shown": "#6a737d", "cleared": "#1a7f37"}


def chart_range(sub: pd.DataFrame) -> float:
    """The half-width of a per-group chart's x axis (×τ): every interval and the ±τ band, symmetric about 0."""
    ends = pd.concat([sub["effect"], sub["effect_low"], sub["effect_high"]]).astype(float)
    ends = ends[np.isfinite(ends)]
    top = float(ends.abs().max()) if len(ends) else 0.0
    return max(1.5, top * 1.08)


def groups_chart_svg(bg: pd.DataFrame, attribute) -> str:
    """One attribute's per-group answer as an inline SVG: each group's effect (×τ, + = worse off) with its
    interval against the ±τ band, coloured by status; spill-overs counted beside the group's name."""
    from .htmlfmt import esc

    sub = bg[bg["attribute"] == attribute]
    if sub.empty:
        return ""
    half = chart_range(sub)
    left, right, top, row = 150, 118, 20, 14
    width = 520
    plot_w = width - left - right
    height = top + row * len(sub) + 26
    X = lambda v: left + (float(v) + half) / (2 * half) * plot_w  # noqa: E731
    parts = [f'<svg class="chart groups-chart" role="img" aria-label="{esc(attribute)}: effect per group" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="8" y="14" class="ct">{esc(attribute)}</text>',
             f'<rect x="{X(-1):.1f}" y="{top - 6}" width="{X(1) - X(-1):.1f}" height="{row * len(sub) + 4}" '
             'fill="#e8e8e8" opacity="0.6"><title>within ±τ: below the threshold</title></rect>',
             f'<line x1="{X(0):.1f}" x2="{X(0):.1f}" y1="{top - 6}" y2="{top + row * len(sub) - 2}" class="ref"/>']
    for t in sorted({-round(half), -1, 0, 1, round(half)}):
        if abs(t) <= half:
            parts.append(f'<text x="{X(t):.1f}" y="{height - 14}" class="tk" text-anchor="middle">{t:+d}</text>'
                         .replace("+0", "0").replace("-", "−"))
    for i, r in enumerate(sub.itertuples(index=False)):
        y = top + i * row + row / 2 - 4
        col = STATUS_COLOURS.get(r.status, "#333")
        label = r.group + (f" ({r.spillover} spill-over{'s' if r.spillover != 1 else ''})" if r.spillover else "")
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" class="gl" text-anchor="end">{esc(label)}</text>')
        parts.append(f'<text x="{width - right + 8}" y="{y + 4:.1f}" class="gl" fill="{col}">{esc(r.status)}</text>')
        if r.effect is None or not np.isfinite(r.effect):
            continue
        lo = r.effect_low if np.isfinite(r.effect_low) else -half
        hi = r.effect_high if np.isfinite(r.effect_high) else half
        tip = esc(f"{r.group}: {r.status}, effect {_num(r.effect)} [{_num(r.effect_low)}, {_num(r.effect_high)}] τ"
                  f" ({r.finding})")
        parts.append(f'<line x1="{X(max(lo, -half)):.1f}" x2="{X(min(hi, half)):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="{col}" stroke-width="2"/>')
        parts.append(f'<circle cx="{X(max(-half, min(half, r.effect))):.1f}" cy="{y:.1f}" r="3.5" fill="{col}">'
                     f"<title>{tip}</title></circle>")
    parts.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 2}" class="tk" text-anchor="middle">effect ×τ '
                 "(+ worse off for the group; shaded: within ±τ)</text></svg>")
    return "".join(parts)


# ----------------------------------------------------------------- HTML
def render_groups(results: pd.DataFrame, *, counts: str = "") -> str:
    """The per-group answer as the HTML report's opening section (every
    group a row, with its values by verdict; empty string when no group is
    judged)."""
    from .htmlfmt import esc

    bg = by_group(results)
    if bg.empty:
        return ""
    colours = STATUS_COLOURS
    head = ("<tr><th>attribute</th><th>group</th><th>status</th><th>effect ×τ (+ worse off)</th>"
            "<th>largest own finding</th><th>value [interval]</th><th>material</th><th>small</th><th>negligible</th>"
            "<th>inconclusive</th><th>spill-overs</th><th>what would settle it</th></tr>")
    body = []
    for r in bg.itertuples(index=False):
        eff = f"{_num(r.effect)} [{_num(r.effect_low)}, {_num(r.effect_high)}]" if np.isfinite(r.effect) else ""
        val = (f"{r.value:.3g} [{r.low:.3g}, {r.high:.3g}]" if r.value is not None and np.isfinite(r.value)
               and np.isfinite(r.low) and np.isfinite(r.high) else "")
        body.append(
            f'<tr data-status="{esc(r.status)}"><td>{esc(r.attribute)}</td><td>{esc(r.group)}</td>'
            f'<td style="color:{colours.get(r.status, "inherit")};font-weight:600">{esc(r.status)}</td>'
            f"<td>{esc(eff)}</td><td>{esc(r.finding or '')}</td><td>{esc(val)}</td><td>{r.material}</td>"
            f"<td>{r.small}</td><td>{r.negligible}</td><td>{r.inconclusive}</td>"
            f'<td class="muted">{r.spillover}</td><td class="muted">{esc(r.settle or "")}</td></tr>')
    charts = "".join(groups_chart_svg(bg, a) for a in pd.unique(bg["attribute"]))
    return ('<section id="groups"><h2>How the model treats each group</h2>' + counts +
            f'<div class="groups-charts" style="display:flex;flex-wrap:wrap;gap:4px 16px">{charts}</div>'
            '<p class="muted">Per attribute, worst off first. The effect is the group\'s own effect in units '
            "of τ, positive when it is worse for the group; the counts are its own values by verdict, and spill-overs "
            "(values about the group caused by other groups) are counted apart and never a claim about it.</p>"
            f'<table class="groups">{head}{"".join(body)}</table></section>')
