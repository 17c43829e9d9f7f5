"""Minimal stand-ins for :mod:`bias_suite.stats.summary` (the summary
contract), used only when that module is not available."""
from __future__ import annotations

import pandas as pd

from .theme import VERDICTS, severity


def _topic(metric: str, family: str) -> str:
    try:
        from ..metrics.catalog import REGISTRY

        t = getattr(REGISTRY.get(metric), "topic", None)
    except Exception:
        t = None
    return t or str(family)


def _judged(results: pd.DataFrame) -> pd.DataFrame:
    return results[results["verdict"].isin(VERDICTS)]


def findings(results: pd.DataFrame, verdict=None, top=None) -> pd.DataFrame:
    f = _judged(results)
    if verdict is not None:
        f = f[f["verdict"].isin([verdict] if isinstance(verdict, str) else list(verdict))]
    f = f.assign(_e=pd.to_numeric(f["effect"], errors="coerce")).sort_values("_e", ascending=False, kind="stable",
                                                                            na_position="last").drop(columns="_e")
    return (f.head(top) if top else f).reset_index(drop=True)


def overview(results: pd.DataFrame) -> pd.DataFrame:
    j = findings(results)
    if j.empty:
        return pd.DataFrame(columns=["attribute", "topic", "verdict", "effect", "metric", "class", "group", *VERDICTS])
    j = j.assign(topic=[_topic(m, f) for m, f in zip(j["metric"], j["family"])], _s=j["verdict"].map(severity))
    rows = []
    for (a, t), g in j.groupby(["attribute", "topic"], sort=False):
        top = g.iloc[0]
        row = {"attribute": a, "topic": t, "verdict": g.sort_values("_s", kind="stable")["verdict"].iloc[0],
               "effect": pd.to_numeric(g["effect"], errors="coerce").max(), "metric": top["metric"],
               "class": top["class"], "group": top["group"]}
        row.update({v: int((g["verdict"] == v).sum()) for v in VERDICTS})
        rows.append(row)
    return pd.DataFrame(rows)


def verdict_counts(results: pd.DataFrame) -> dict:
    v = results["verdict"] if "verdict" in results.columns else pd.Series([], dtype=object)
    return {k: int((v == k).sum()) for k in VERDICTS}
