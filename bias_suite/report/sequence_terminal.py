"""Terminal summary of sequence-labelling (NER) results: per attribute,
groups as rows.

Columns: the group's number of sentences, then per entity type with gold
spans in the attribute (the identity term's type first): span recall / F1
of the group, the per-group FNED value (|FNR(all) - FNR(group)|) and the mean
probability of the type at the identity term's (merged) position. A footer
holds the accumulated FNED; a second table the accumulated group and
counterfactual metrics per type; a third the significance tests of the
identity type; a fourth the values that are not negligible with their
verdicts (as for classification).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .terminal import _esc

__all__ = ["sequence_group_stats", "sequence_summary_tables", "print_sequence_summary"]

ACCUMULATED = ("FNED", "FNED*", "TPR-Gap", "ParityGap", "DisparityScore*", "F1-Diff", "Recall-Diff", "AvgGF",
               "CFGap", "CFGap-TC", "AvgIF", "PertSS")


def _fmt(v) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and not np.isfinite(v)):
        return "–"
    return f"{v:.3f}"


def _ratio(a, b):
    return a / b if b else None


def sequence_group_stats(data) -> pd.DataFrame:
    """Per attribute, group and entity type: sentences, gold and predicted
    spans, TP, recall, precision, F1, and the mean probability of the type at
    the identity position (``p_term``, when the data has probabilities and
    term spans)."""
    from ..families.sequence.metric_input import token_items

    fr = data.frame
    rows = []
    p_term = None
    if data.type_probs is not None and (data.term_span[:, 0] >= 0).any():
        _, _, item_P, _, ident = token_items(data.type_probs, data.tags, data.term_span, data.prob_classes)
        p_term = np.where(ident[:, None] >= 0, item_P[np.maximum(ident, 0)], np.nan)
    lab = data.labelled
    for (a, g), idx in fr.groupby(["attribute", "group"], sort=False).indices.items():
        c = data.span_counts[idx]
        for k, t in enumerate(data.types):
            tp, fp, fn = (int(c[lab[idx], k, j].sum()) for j in range(3))
            r, p = _ratio(tp, tp + fn), _ratio(tp, tp + fp)
            f1 = 2 * p * r / (p + r) if r is not None and p is not None and p + r else (0.0 if r is not None and p is not None else None)
            rows.append({"attribute": a, "group": g, "type": t, "n": len(idx), "gold": tp + fn, "predicted": tp + fp,
                         "tp": tp, "recall": r, "precision": p, "f1": f1,
                         "p_term": float(np.nanmean(p_term[idx, k])) if p_term is not None and np.isfinite(p_term[idx, k]).any() else None})
    return pd.DataFrame(rows)


def _term_types(data, attribute) -> list:
    """Gold types of the identity terms of an attribute, most frequent first."""
    fr = data.frame
    idx = np.flatnonzero((fr["attribute"] == attribute).to_numpy() & (data.term_span[:, 0] >= 0))
    cnt: dict = {}
    for i in idx:
        if data.tags[i] is None:
            continue
        t = data.tags[i][data.term_span[i, 0]]
        if t != "O":
            cnt[t[2:]] = cnt.get(t[2:], 0) + 1
    return sorted(cnt, key=lambda k: -cnt[k])


def sequence_summary_tables(results: pd.DataFrame, data, *, attributes=None) -> list:
    from rich.table import Table

    stats = sequence_group_stats(data)
    tables = []
    attrs = attributes or data.attributes()
    for a in attrs:
        res = results[results["attribute"] == a]
        st = stats[stats["attribute"] == a]
        term_types = _term_types(data, a)
        with_gold = [t for t in data.types if st.loc[st["type"] == t, "gold"].sum() > 0]
        types = term_types + [t for t in with_gold if t not in term_types]
        t = Table(title=f"[bold]{_esc(a)}[/bold] — NER, group view (identity term: {_esc(', '.join(term_types)) or '–'})",
                  title_justify="left", show_footer=True)
        t.add_column("group", footer="accumulated")
        t.add_column("n", justify="right")
        fned = res[(res["metric"] == "FNED")]
        for ty in types:
            acc = fned[(fned["class"] == ty) & fned["group"].isna()]["value"]
            t.add_column(_esc(f"{ty} recall/F1"), justify="right")
            t.add_column(_esc(f"FNED {ty}"), justify="right", footer=_fmt(acc.iloc[0]) if len(acc) else "")
            if ty in term_types and st["p_term"].notna().any():
                t.add_column(_esc(f"p({ty}) term"), justify="right")
        for g in pd.unique(st["group"]):
            sg = st[st["group"] == g].set_index("type")
            row = [_esc(g), str(int(sg["n"].iloc[0]))]
            for ty in types:
                s = sg.loc[ty]
                row.append(f"{_fmt(s['recall'])}/{_fmt(s['f1'])}")
                v = fned[(fned["class"] == ty) & (fned["group"] == g)]["value"]
                row.append(_fmt(v.iloc[0]) if len(v) else "")
                if ty in term_types and st["p_term"].notna().any():
                    row.append(_fmt(s["p_term"]))
            t.add_row(*row)
        tables.append(t)
        acc_rows = res[res["group"].isna() & res["value"].notna()]
        shown = [m for m in ACCUMULATED if (acc_rows["metric"] == m).any()]
        if shown:
            cls = types + (["O"] if (res["class"] == "O").any() else [])
            cls += ["all"] if acc_rows.loc[acc_rows["metric"].isin(shown), "class"].eq("all").any() else []
            t2 = Table(title=f"{_esc(a)} — NER accumulated group and counterfactual metrics", title_justify="left")
            t2.add_column("metric")
            t2.add_column("view")
            for c in cls:
                t2.add_column(_esc(c), justify="right")
            for m in shown:
                sub = res[(res["metric"] == m) & res["group"].isna()]
                if sub.empty:
                    continue
                vals = dict(zip(sub["class"], sub["value"]))
                t2.add_row(_esc(m), _esc(sub["view"].iloc[0]), *[_fmt(vals.get(c)) if c in vals else "" for c in cls])
            tables.append(t2)
        sig = res[(res["family"] == "significance") & res["class"].isin(term_types)]
        if not sig.empty:
            t3 = Table(title=f"{_esc(a)} — significance across templates (probability at the identity term)", title_justify="left")
            for col in ("class", "test", "statistic", "p", "p adj.", "effect", "templates"):
                t3.add_column(col, justify="right" if col != "class" else "left")
            for c in pd.unique(sig["class"]):
                s = sig[sig["class"] == c]
                test = "Wilcoxon" if s["metric"].str.startswith("Wilcoxon").any() else "Friedman"

                def get(suffix):
                    v = s.loc[s["metric"] == test + suffix, "value"]
                    return v.iloc[0] if len(v) else None

                adj = s[s["metric"].str.startswith(f"{test}-p-")]["value"]
                t3.add_row(_esc(c), test, _fmt(get("")), _fmt(get("-p")), _fmt(adj.iloc[0] if len(adj) else None),
                           _fmt(get("-r") if test == "Wilcoxon" else get("-W")),
                           str(s["n"].dropna().max()) if s["n"].notna().any() else "")
            tables.append(t3)
        from .terminal import _verdict_table, invariance_table
        from .theme import VERDICTS

        t4 = invariance_table(a, res)  # CheckList INV: tags outside the identity span must not change
        if t4 is not None:
            tables.append(t4)
        if "verdict" in res.columns and res["verdict"].isin(VERDICTS).any():
            tables.append(_verdict_table(a, res))
    return tables


def print_sequence_summary(results: pd.DataFrame, data, *, console=None, attributes=None) -> None:
    """Print the NER summary tables (see module doc)."""
    from .terminal import make_console

    console = console or make_console()
    for t in sequence_summary_tables(results, data, attributes=attributes):
        console.print(t)
        console.print()
