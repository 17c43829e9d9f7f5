"""Whose effect is it? Group-vs-background findings attributed to their source.

A metric that compares a group with the rest (or with all examples) carries
the other groups in its background. When one group is treated very
differently (a model that misses 'mental_illness' far more often), every
other group looks different from a background that holds it: 'deaf' gets a
material "FNR lower than the rest" although the model treats deaf terms like
any other. :func:`attribute_sources` tells the two apart.

Rule. For an attribute, a metric and a class, take the group-vs-background
rows that are ``material``, largest effect first. For each, the candidate
sources are the other material groups of the same metric and class with a
larger effect. The value is computed again with those groups' examples left
out of the attribute (so out of the background); when it is then below the
threshold (``effect < 1``), the row is a spill-over: its value and verdict
stay, its ``source`` column names the groups that cause it, and its reason
says so with the value without them. A row whose effect survives is the
group's own. The largest effect of a metric and class never has a source, so
a real effect is never explained away by a smaller one.

Scope: metrics with a fixed no-bias value (rates, differences, ratios,
AEGs). The AUC metrics are judged against the overall AUC, which changes
when groups are left out; they keep ``source`` null.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..metrics.catalog import get_metric
from ..metrics.engine import metric_values
from ..metrics.materiality import RATIO_BAND
from ..exceptions import MetricError

__all__ = ["attribute_sources"]

_BACKGROUNDS = ("rest", "all", "S", "S\\S^t")


def _effect(spec, value, tau):
    if value is None or not np.isfinite(value):
        return None
    if spec.d.name in ("ratio", "ratio_to_background"):
        return abs(math.log(value)) / math.log(RATIO_BAND) if value > 0 else None
    return abs(value) / tau if tau else None


def _candidates(res: pd.DataFrame) -> pd.DataFrame:
    if "verdict" not in res.columns or res.empty:
        return res.iloc[0:0]
    m = (res["family"].isin(["BCM", "VBCM"]) & (res["view"] == "group") & (res["verdict"] == "material")
         & res["group"].map(lambda g: isinstance(g, str) and "|" not in g))
    return res[m]


def attribute_sources(res: pd.DataFrame, data, *, max_tuples=100, seed: int = 0, group_order_override=None,
                      weighting: str = "balanced") -> pd.DataFrame:
    """``res`` with a ``source`` column (after ``reason``): the groups that
    cause a spill-over row, comma-separated, else null (module doc)."""
    out = res.copy()
    if "source" not in out.columns:
        cols = list(out.columns)
        pos = cols.index("reason") + 1 if "reason" in cols else len(cols)
        out.insert(pos, "source", None)
    out["source"] = out["source"].astype(object)
    cand = _candidates(out)
    if cand.empty:
        return out
    frame = data.frame
    attr_col = frame["attribute"].to_numpy(dtype=object)
    group_col = frame["group"].to_numpy(dtype=object)
    cache: dict = {}
    for (attr, metric, cls), rows in cand.groupby(["attribute", "metric", "class"], sort=False):
        if len(rows) < 2:
            continue
        try:
            spec = get_metric(metric)
        except MetricError:
            continue
        if spec.background not in _BACKGROUNDS or type(spec.phi).__name__ == "AucScore":
            continue
        rows = rows.sort_values("effect", ascending=False)
        effects = dict(zip(rows["group"], rows["effect"]))
        for idx, r in rows.iterrows():
            sources = tuple(g for g, e in effects.items() if g != r["group"] and e > r["effect"])
            if not sources:
                continue
            key = (attr, sources)
            if key not in cache:
                keep = np.flatnonzero((attr_col == attr) & ~np.isin(group_col, list(sources)))
                cache[key] = data.take(keep)
            sub = cache[key]
            vals = metric_values(sub, metrics=[spec], attributes=[attr], max_tuples=max_tuples, seed=seed,
                                 group_order_override=group_order_override, weighting=weighting)
            hit = vals[(vals["class"] == cls) & (vals["group"] == r["group"])]
            if hit.empty:
                continue
            v = hit["value"].iloc[0]
            v = None if v is None or pd.isna(v) else float(v)
            eff = _effect(spec, v, r["threshold"])
            if eff is None or eff >= 1:
                continue
            names = ", ".join(f"'{g}'" for g in sources)
            out.at[idx, "source"] = ", ".join(sources)
            out.at[idx, "reason"] = (f"{r['reason']}; the background is shifted by {names}: without "
                                     f"{'it' if len(sources) == 1 else 'them'} the value is {v:.3g}, below the "
                                     "threshold, so this is their effect, not this group's")
    return out
