"""Terminal summary of a run: per attribute, groups as rows.

Columns: the group's size, accuracy, mean probability per class, then the
per-group values of the group-view metrics (one value per class, written
``neg/neu/pos`` in class order). A footer row holds the accumulated values;
counterfactual metrics and significance tests have their own blocks.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

PER_GROUP_METRICS = ("FNED", "FPED", "AvgGF", "PosAEG", "NegAEG", "SubgroupAUC", "BPSN", "BNSP")
ACCUMULATED_GROUP = ("FNED*", "FPED*", "AvgGF", "TPR-Gap", "TNR-Gap", "ParityGap", "DisparityScore*", "AccuracyDiff")
COUNTERFACTUAL = ("CFGap", "CFGap-TC", "AvgIF", "AvgScoreDiff", "PertSS", "PertSD", "PertSR")


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)) or v is pd.NA:
        return "–"
    return f"{v:.3f}"


def _cell(res: pd.DataFrame, metric: str, group, classes, sep: str = "/") -> str:
    sub = res[(res["metric"] == metric)]
    sub = sub[sub["group"].isna()] if group is None else sub[sub["group"] == group]
    if sub.empty:
        return ""
    if (sub["class"] == "all").all():
        return _fmt(sub["value"].iloc[0])
    vals = {c: v for c, v in zip(sub["class"], sub["value"])}
    return sep.join(_fmt(vals.get(c)) for c in classes)


def summary_tables(examples_stats: pd.DataFrame | None, results: pd.DataFrame, classes, *, attributes=None):
    """Build rich Tables, one per attribute (plus its counterfactual block)."""
    from rich.table import Table

    tables = []
    attrs = attributes or list(pd.unique(results["attribute"]))
    short = "/".join(c[:3] for c in classes)
    for a in attrs:
        res = results[results["attribute"] == a]
        t = Table(
            title=f"[bold]{a}[/bold] — group view (one line per class: {', '.join(classes)})",
            title_justify="left", show_footer=True, show_lines=True,
        )
        t.add_column("group", footer="accumulated")
        stats = None
        if examples_stats is not None:
            stats = examples_stats[examples_stats["attribute"] == a].set_index("group")
            t.add_column("n", justify="right")
            t.add_column("accuracy", justify="right")
            t.add_column("mean p", justify="right")
        shown = [m for m in PER_GROUP_METRICS if (res["metric"] == m).any()]
        for m in shown:
            t.add_column(m, justify="right", min_width=6, footer=_cell(res, m, None, classes, "\n") if m in ("FNED", "FPED", "AvgGF") else "")
        groups = list(pd.unique(res.loc[res["family"].isin(["BCM", "VBCM"]), "group"].dropna()))
        if not groups and stats is not None:
            groups = list(stats.index)
        for g in groups:
            row = [g]
            if stats is not None:
                s = stats.loc[g] if g in stats.index else None
                row += [
                    str(int(s["n"])) if s is not None else "",
                    _fmt(s["accuracy"]) if s is not None else "",
                    "\n".join(_fmt(s[f"p_{c}"]) for c in classes) if s is not None else "",
                ]
            row += [_cell(res, m, g, classes, "\n") for m in shown]
            t.add_row(*row)
        tables.append(t)
        acc = [m for m in ACCUMULATED_GROUP if (res["metric"] == m).any()]
        cf = [m for m in COUNTERFACTUAL if (res["metric"] == m).any()]
        if acc or cf:
            t2 = Table(title=f"{a} — accumulated group metrics and counterfactual metrics", title_justify="left")
            t2.add_column("metric")
            t2.add_column("view")
            t2.add_column(f"value ({short} or all)", justify="right")
            t2.add_column("n", justify="right")
            for m in acc + cf:
                sub = res[(res["metric"] == m) & res["group"].isna()]
                if sub.empty:
                    continue
                n = sub["n"].dropna()
                t2.add_row(m, sub["view"].iloc[0], _cell(res, m, None, classes), str(int(n.max())) if len(n) else "")
            tables.append(t2)
        sig = res[res["family"] == "significance"]
        if not sig.empty:
            t3 = Table(title=f"{a} — significance across templates", title_justify="left")
            for col in ("class", "test", "statistic", "p", "p adj.", "effect", "templates"):
                t3.add_column(col, justify="right" if col != "class" else "left")
            for c in pd.unique(sig["class"]):
                s = sig[sig["class"] == c]
                test = "Wilcoxon" if s["metric"].str.startswith("Wilcoxon").any() else "Friedman"
                get = lambda suffix: s.loc[s["metric"] == test + suffix, "value"]
                adj = s[s["metric"].str.startswith(f"{test}-p-")]["value"]
                eff = get("-r") if test == "Wilcoxon" else get("-W")
                stat = get("")
                t3.add_row(
                    str(c), test, _fmt(stat.iloc[0] if len(stat) else None), _fmt(get("-p").iloc[0] if len(get("-p")) else None),
                    _fmt(adj.iloc[0] if len(adj) else None), _fmt(eff.iloc[0] if len(eff) else None),
                    str(s["n"].dropna().max()) if s["n"].notna().any() else "",
                )
            tables.append(t3)
        inv = res[res["family"] == "invariance"]
        if not inv.empty:  # CheckList INV fail rates (bias_suite.interop.checklist)
            t4 = Table(title=f"{a} — invariance (CheckList INV fail rate)", title_justify="left")
            for col in ("groups", "fail rate", "test cases"):
                t4.add_column(col, justify="left" if col == "groups" else "right")
            for r in inv.itertuples(index=False):
                t4.add_row("all" if r.group is None else str(r.group), _fmt(r.value), "" if pd.isna(r.n) else str(int(r.n)))
            tables.append(t4)
    return tables


def group_stats(scored) -> pd.DataFrame:
    """Per attribute and group: n, accuracy (labelled rows) and mean
    probability per class."""
    fr = scored.frame
    df = pd.DataFrame({"attribute": fr["attribute"], "group": fr["group"]})
    lab = scored.y >= 0
    df["correct"] = np.where(lab, (scored.yhat == scored.y).astype(float), np.nan)
    for k, c in enumerate(scored.classes):
        df[f"p_{c}"] = scored.probs[:, k]
    g = df.groupby(["attribute", "group"], sort=False)
    out = g.mean(numeric_only=True).rename(columns={"correct": "accuracy"})
    out["n"] = g.size()
    return out.reset_index()


def make_console(stderr: bool = False):
    """A rich console that keeps tables readable when output goes to a file,
    a pipe or a notebook (rich would otherwise assume 80 columns)."""
    import sys

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    tty = hasattr(stream, "isatty") and stream.isatty()
    return Console(stderr=stderr, width=None if tty else 200)


def print_summary(results: pd.DataFrame, scored=None, *, classes=None, console=None, attributes=None) -> None:
    """Print the per-attribute summary tables."""
    console = console or make_console()
    classes = list(classes or (scored.classes if scored is not None else pd.unique(results.loc[results["class"] != "all", "class"])))
    stats = group_stats(scored) if scored is not None else None
    for t in summary_tables(stats, results, classes, attributes=attributes):
        console.print(t)
        console.print()
