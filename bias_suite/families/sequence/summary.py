"""Per-group summary columns of sequence-labelling data (the detailed
terminal table): sentences, and per entity type span recall/F1, the recall
of the identity term's own span and the mean probability of the type at the
identity term's (merged) position."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...io.values import format_number
from .identity import identity_counts
from .metric_input import data_token_items


def _ratio(a, b):
    return a / b if b else None


def group_stats(data) -> pd.DataFrame:
    """Per attribute, group and entity type: sentences, gold and predicted
    spans, TP, recall, precision, F1, the recall of the identity term's own
    span (``id_recall``, over the sentences whose identity span has the
    type) and the mean probability of the type at the identity position
    (``p_term``, when the data has probabilities and term spans)."""
    fr = data.frame
    id_counts = identity_counts(data)
    rows = []
    p_term = None
    if data.type_probs is not None and (data.term_span[:, 0] >= 0).any():
        _, _, item_P, _, ident = data_token_items(data, np.arange(len(data)))  # the items evaluate computed
        p_term = np.where(ident[:, None] >= 0, item_P[np.maximum(ident, 0)], np.nan)
    lab = data.labelled
    for (a, g), idx in fr.groupby(["attribute", "group"], sort=False).indices.items():
        c = data.span_counts[idx]
        ic = id_counts[idx]
        for k, t in enumerate(data.types):
            tp, fp, fn = (int(c[lab[idx], k, j].sum()) for j in range(3))
            itp, ifn = int(ic[:, k, 0].sum()), int(ic[:, k, 2].sum())
            r, p = _ratio(tp, tp + fn), _ratio(tp, tp + fp)
            f1 = 2 * p * r / (p + r) if r is not None and p is not None and p + r else (0.0 if r is not None and p is not None else None)
            rows.append({"attribute": a, "group": g, "type": t, "n": len(idx), "gold": tp + fn, "predicted": tp + fp,
                         "tp": tp, "recall": r, "precision": p, "f1": f1, "id_recall": _ratio(itp, itp + ifn),
                         "p_term": float(np.nanmean(p_term[idx, k])) if p_term is not None and np.isfinite(p_term[idx, k]).any() else None})
    return pd.DataFrame(rows)


def term_types(data, attribute) -> list:
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


def _fmt(v) -> str:
    return format_number(v)


def summary_stats(data) -> pd.DataFrame:
    """One row per attribute and group: ``n`` (sentences) and, per entity
    type (the identity term's types first, then the types with gold spans),
    ``<type> recall/F1`` (all spans of the type) and, for the identity
    term's types, ``<type> identity recall`` (its own span) and
    ``p(<type>) term`` (the probability at the term)."""
    stats = group_stats(data)
    rows = []
    for a in data.attributes():
        st = stats[stats["attribute"] == a]
        tt = term_types(data, a)
        types = tt + [t for t in data.types if t not in tt and st.loc[st["type"] == t, "gold"].sum() > 0]
        for g in pd.unique(st["group"]):
            sg = st[st["group"] == g].set_index("type")
            row = {"attribute": a, "group": g, "n": int(sg["n"].iloc[0])}
            for t in types:
                row[f"{t} recall/F1"] = f"{_fmt(sg.loc[t, 'recall'])}/{_fmt(sg.loc[t, 'f1'])}"
                if t in tt:
                    row[f"{t} identity recall"] = sg.loc[t, "id_recall"]
                if t in tt and st["p_term"].notna().any():
                    row[f"p({t}) term"] = sg.loc[t, "p_term"]
            rows.append(row)
    return pd.DataFrame(rows)


def example_scores(data, cls):
    """Per example, the mean probability of entity type ``cls`` over the
    identity term (NaN without a term span; None without probabilities)."""
    pc = list(data.prob_classes)
    if data.type_probs is None or cls not in pc:
        return None
    k = pc.index(cls)
    out = np.full(len(data.frame), np.nan)
    for i, (s, e) in enumerate(data.term_span):
        if 0 <= s < e and data.type_probs[i] is not None:
            out[i] = float(np.mean(np.asarray(data.type_probs[i])[s:e, k]))
    return out
