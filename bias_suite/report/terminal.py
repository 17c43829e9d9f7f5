"""Detailed terminal tables of a run (``--detail``), for every task family:
per attribute, groups as rows.

Columns: the family's summary columns of the group (its size; for
classification accuracy and mean probability per class, for NER span
recall/F1 per entity type; :attr:`TaskFamily.summary_stats`), then the
per-group values of the group-view metrics (one value per class, one line
each). A footer row holds the accumulated values;
counterfactual metrics and significance tests have their own blocks.

When the results carry intervals and verdicts, every value is written
``0.123 [0.05,0.20]●``: the interval, then the verdict's mark
(:data:`bias_suite.report.theme.VERDICT_MARKS`; see :data:`LEGEND`); the
per-group metrics are then split over tables of at most four metrics, and a
findings table per attribute lists the values that are not negligible,
material first, then small, then inconclusive, largest effect first within
each, with their reasons. The one-screen summary is
:mod:`bias_suite.report.headline`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..io.values import format_number
from .theme import VERDICT_MARKS, VERDICT_STYLES, VERDICTS

LEGEND = ("value [interval] and the verdict's mark: " + ", ".join(f"{m} {v}" for v, m in VERDICT_MARKS.items() if m)
          + ", no mark: negligible; verdicts, thresholds and reasons in results.csv")
VERDICT_ROWS = 30  # findings listed per attribute


def _esc(x) -> str:
    """User text (attributes, groups, classes, metric names) as rich shows it literally."""
    from rich.markup import escape

    return escape(str(x))


def _mark(verdict) -> str:
    return VERDICT_MARKS.get(verdict, "") if isinstance(verdict, str) else ""


def _ci(lo, hi) -> str:
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return ""
    return f" [{lo:.3f},{hi:.3f}]"


def _has_intervals(res: pd.DataFrame) -> bool:
    return "ci_low" in res.columns and bool(res.loc[res["family"].isin(["PCM", "BCM", "VBCM", "MCM"]), "ci_low"].notna().any())


def _fmt(v) -> str:
    return format_number(v)


def _cell(res: pd.DataFrame, metric: str, group, classes, sep: str = "/", intervals: bool = False) -> str:
    sub = res[(res["metric"] == metric)]
    sub = sub[sub["group"].isna()] if group is None else sub[sub["group"] == group]
    if sub.empty:
        return ""
    def one(r):
        if r is None:
            return "–"
        lo, hi = (r.get("ci_low"), r.get("ci_high")) if intervals else (None, None)
        return _fmt(r["value"]) + ("" if _fmt(r["value"]) == "–" else _ci(lo, hi) + _mark(r.get("verdict")))

    recs = sub.to_dict("records")
    if (sub["class"] == "all").all():
        return one(recs[0])
    by_class = {r["class"]: r for r in recs}
    return sep.join(one(by_class.get(c)) for c in classes)


def shown_metrics(res: pd.DataFrame, view: str, where: str) -> list:
    """The registered metrics of ``res`` of one view that the detailed
    tables show ``where`` ("column": a per-group column, "line": a line of
    the accumulated and counterfactual table), in their records' ``order``;
    those without one (a user's) after them, in the order of ``res``. A
    column needs the metric's rows per group."""
    from ..metrics.catalog import REGISTRY

    out = []
    for k, m in enumerate(pd.unique(res["metric"])):
        spec = REGISTRY.get(m)
        if spec is None or spec.view != view or where not in spec.shown:
            continue
        if where == "column" and not res.loc[res["metric"] == m, "group"].notna().any():
            continue
        out.append((spec.order is None, spec.order or 0, k, m))
    return [m for *_, m in sorted(out)]


def _footer(metric) -> bool:
    from ..metrics.catalog import REGISTRY

    spec = REGISTRY.get(metric)
    return spec is not None and "footer" in spec.shown


def _stat_cell(v) -> str:
    if isinstance(v, (tuple, list)):
        return "\n".join(_fmt(x) for x in v)
    if isinstance(v, str):
        return _esc(v)
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return ""
    return str(int(v)) if isinstance(v, (int, np.integer)) else _fmt(v)


def summary_tables(examples_stats: pd.DataFrame | None, results: pd.DataFrame, classes, *, attributes=None,
                   label: str = ""):
    """Build rich Tables, one per attribute (plus its counterfactual block);
    ``examples_stats``: the family's summary columns per attribute and group."""
    from rich.table import Table

    tables = []
    attrs = attributes or list(pd.unique(results["attribute"]))
    short = _esc("/".join(str(c)[:3] for c in classes))
    what = f"{label}, group view" if label else "group view"
    for a in attrs:
        res = results[results["attribute"] == a]
        ivals = _has_intervals(res)
        shown_all = [m for m in shown_metrics(res, "group", "column")
                     if res.loc[res["metric"] == m, "value"].notna().any()]  # (not applicable: not shown)
        chunks = [shown_all[i:i + 4] for i in range(0, len(shown_all), 4)] if ivals and shown_all else [shown_all]
        stats = None
        if examples_stats is not None:
            stats = examples_stats[examples_stats["attribute"] == a].set_index("group").drop(columns="attribute")
            stats = stats.loc[:, stats.notna().any()]
        for part, shown in enumerate(chunks):
            if part:
                tables.append(t)
            more = f" ({part + 1}/{len(chunks)})" if len(chunks) > 1 else ""
            t = Table(
                title=f"[bold]{_esc(a)}[/bold] — {_esc(what)}{more} (one line per class: {_esc(', '.join(map(str, classes)))})",
                title_justify="left", show_footer=True, show_lines=True,
            )
            t.add_column("group", footer="accumulated")
            cols = list(stats.columns) if stats is not None and part == 0 else []
            for c in cols:
                t.add_column(_esc(c), justify="right")
            for m in shown:
                t.add_column(_esc(m), justify="right", min_width=6, footer=_cell(res, m, None, classes, "\n", ivals) if _footer(m) else "")
            groups = list(pd.unique(res.loc[res["family"].isin(["BCM", "VBCM"]), "group"].dropna()))
            if not groups and stats is not None:
                groups = list(stats.index)
            for g in groups:
                row = [_esc(g)]
                row += [_stat_cell(stats.at[g, c]) if g in stats.index else "" for c in cols]
                row += [_cell(res, m, g, classes, "\n", ivals) for m in shown]
                t.add_row(*row)
        tables.append(t)
        acc, cf = shown_metrics(res, "group", "line"), shown_metrics(res, "counterfactual", "line")
        if acc or cf:
            t2 = Table(title=f"{_esc(a)} — accumulated group metrics and counterfactual metrics", title_justify="left", show_lines=ivals)
            t2.add_column("metric")
            t2.add_column("view")
            t2.add_column(f"value ({short} or all)" if not ivals else _esc("value [interval] (one line per class or all)"), justify="right")
            t2.add_column("n", justify="right")
            for m in acc + cf:
                sub = res[(res["metric"] == m) & res["group"].isna()]
                if sub.empty:
                    continue
                n = sub["n"].dropna()
                t2.add_row(_esc(m), _esc(sub["view"].iloc[0]), _cell(res, m, None, classes, "\n" if ivals else "/", ivals), str(int(n.max())) if len(n) else "")
            tables.append(t2)
        sig = res[res["family"] == "significance"]
        if not sig.empty:
            t3 = Table(title=f"{_esc(a)} — significance across templates", title_justify="left")
            has_v = "verdict" in sig.columns and sig["verdict"].notna().any()
            for col in ("class", "test", "statistic", "p", "p adj.", "effect", "templates") + (("verdict",) if has_v else ()):
                t3.add_column(col, justify="right" if col not in ("class", "verdict") else "left")
            for c in pd.unique(sig["class"]):
                s = sig[sig["class"] == c]
                test = "Wilcoxon" if s["metric"].str.startswith("Wilcoxon").any() else "Friedman"
                get = lambda suffix: s.loc[s["metric"] == test + suffix, "value"]
                adj = s[s["metric"].str.startswith(f"{test}-p-")]["value"]
                eff = get("-r") if test == "Wilcoxon" else get("-W")
                stat = get("")
                vs = [v for v in s["verdict"] if isinstance(v, str)] if has_v else []
                t3.add_row(
                    _esc(c), test, _fmt(stat.iloc[0] if len(stat) else None), _fmt(get("-p").iloc[0] if len(get("-p")) else None),
                    _fmt(adj.iloc[0] if len(adj) else None), _fmt(eff.iloc[0] if len(eff) else None),
                    str(s["n"].dropna().max()) if s["n"].notna().any() else "", *([_esc(vs[0]) if vs else ""] if has_v else []),
                )
            tables.append(t3)
        t4 = invariance_table(a, res)
        if t4 is not None:
            tables.append(t4)
        if "verdict" in res.columns and res["verdict"].isin(VERDICTS).any():
            tables.append(_verdict_table(a, res))
    return tables


def invariance_table(a, res: pd.DataFrame):
    """CheckList INV fail rates of one attribute's results (None if there are none)."""
    from rich.table import Table

    inv = res[res["family"] == "invariance"]
    if inv.empty:
        return None
    rule = ("CheckList INV fail rate" if "metric" not in inv or set(inv["metric"]) <= {"INV-FailRate"}
            else "prob-shift fail rate")  # INV-ProbShift-FailRate is not CheckList's rule
    t = Table(title=f"{_esc(a)} — invariance ({rule})", title_justify="left")
    for col in ("groups", "fail rate", "test cases"):
        t.add_column(col, justify="left" if col == "groups" else "right")
    for r in inv.itertuples(index=False):
        t.add_row("all" if r.group is None or pd.isna(r.group) else _esc(r.group), _fmt(r.value),
                  "" if pd.isna(r.n) else str(int(r.n)))
    return t


def _verdict_table(a, res: pd.DataFrame):
    """The values of an attribute that are not negligible (material, then
    small, then inconclusive; metric rows, pairs, Bernstein rows, tests),
    largest effect first within each, with interval, tau and reason; the
    title counts every verdict."""
    from rich.markup import escape
    from rich.table import Table

    v = res["verdict"].where(res["verdict"].isin(VERDICTS), None)
    counts = {k: int((v == k).sum()) for k in VERDICTS}
    from .summary import findings as ranked

    hit = ranked(res[v.isin(["material", "inconclusive", "small"])])
    title = ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "no verdicts"
    t = Table(title=f"{escape(str(a))} — verdicts: {title}", title_justify="left")
    for col in ("metric", "class", "group", "value [interval]", "τ", "×τ", "verdict", "reason"):
        t.add_column(escape(col), justify="right" if col in ("value [interval]", "τ", "×τ") else "left", overflow="fold")
    for r in hit.head(VERDICT_ROWS).to_dict("records"):
        g = r["group"] if isinstance(r["group"], str) else "(accumulated)"
        src = r.get("source")
        g += f" (via {src})" if isinstance(src, str) and src.strip() else ""  # caused by other groups in the background
        t.add_row(escape(str(r["metric"])), escape(str(r["class"])), escape(g), _fmt(r["value"]) + _ci(r.get("ci_low"), r.get("ci_high")),
                  _fmt(r.get("threshold")), "–" if _fmt(r.get("effect")) == "–" else f"{float(r['effect']):.1f}",
                  f"[{VERDICT_STYLES[r['verdict']] or 'none'}]{r['verdict']}[/]", escape(str(r.get("reason") or "")))
    if len(hit) > VERDICT_ROWS:
        t.add_row("…", "", "", "", "", "", "", f"{len(hit) - VERDICT_ROWS} more in results.csv (column verdict)")
    return t


NOTEBOOK_WIDTH = 110  # columns of text in a notebook cell's output


def make_console(stderr: bool = False):
    """A rich console that keeps tables readable when output goes to a file,
    a pipe or a notebook (rich would otherwise assume 80 columns); in a
    notebook it writes text to the cell's output, as to a pipe."""
    import os
    import sys

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    cols = os.environ.get("COLUMNS", "")
    cols = int(cols) if cols.isdigit() and int(cols) > 0 else None  # an exported COLUMNS wins
    if Console().is_jupyter:  # plain text at a width that fits a cell
        return Console(stderr=stderr, width=cols or NOTEBOOK_WIDTH, force_jupyter=False, force_terminal=False)
    tty = hasattr(stream, "isatty") and stream.isatty()
    return Console(stderr=stderr, width=None if tty else cols or 200)


def console_for(file=None, width: int | None = None):
    """The console a ``print()`` of the Python API prints on: stdout as the
    command line sees it (:func:`make_console`), or ``file`` at ``width``."""
    if file is None and width is None:
        return make_console()
    from rich.console import Console

    return Console(file=file, width=width or make_console().width, force_jupyter=False)


def print_summary(results: pd.DataFrame, scored=None, *, classes=None, console=None, attributes=None) -> None:
    """Print the per-attribute summary tables of one task family's results
    (``scored``: its scored data, for the summary columns and classes)."""
    from ..families import family_of

    console = console or make_console()
    fam = family_of(scored) if scored is not None else None
    if classes is None and scored is not None:
        present = set(results["class"])
        classes = [c for c in getattr(scored, "prob_classes", scored.classes) if c in present] or list(scored.classes)
    classes = list(classes or pd.unique(results.loc[results["class"] != "all", "class"]))
    stats = fam.summary_stats(scored) if fam is not None and fam.summary_stats is not None else None
    for t in summary_tables(stats, results, classes, attributes=attributes, label=fam.label if fam else ""):
        console.print(t)
        console.print()
    if "verdict" in results.columns and results["verdict"].isin(VERDICTS).any():
        console.print(LEGEND, highlight=False, markup=False)
