"""The headline of a results table, as data: what a person reads first.

- :func:`findings`: judged values ranked by effect (size in units of the
  metric's threshold tau), optionally one verdict only;
- :func:`overview`: one row per attribute and metric topic with the worst
  verdict and the largest effect;
- :func:`verdict_counts`: how many values got each verdict;
- :func:`multiplicity`: how the error rate across the many judged values is
  controlled (from the verdict stage).

The terminal headline and the HTML report render these
(:mod:`bias_suite.report.headline`).
"""
from __future__ import annotations

import pandas as pd

from .verdicts import VERDICTS

__all__ = ["Results", "findings", "overview", "verdict_counts", "multiplicity", "SEVERITY"]

#: worst first: what a reader must look at before the rest
SEVERITY = ("material", "inconclusive", "small", "negligible", "undefined")


def _severity(v) -> int:
    return SEVERITY.index(v) if v in SEVERITY else len(SEVERITY)


def _topic(metric: str, family: str) -> str:
    from ..metrics.catalog import REGISTRY

    spec = REGISTRY.get(metric)
    if spec is not None:
        return spec.topic
    if str(metric).startswith("Bernstein-"):
        return "Bernstein"
    return {"significance": "significance"}.get(str(family), str(family))


def findings(results: pd.DataFrame, verdict=None, top: int | None = None) -> pd.DataFrame:
    """Judged rows, largest effect first (rows without an effect last).

    Parameters
    ----------
    results : tidy results with the verdict columns.
    verdict : one verdict or a list of them to keep (default: all five).
    top : keep the first ``top`` rows.
    """
    if "verdict" not in results.columns:
        return results.iloc[0:0]
    keep = [verdict] if isinstance(verdict, str) else list(verdict) if verdict is not None else list(VERDICTS)
    f = results[results["verdict"].isin(keep)]
    f = f.assign(_e=pd.to_numeric(f.get("effect"), errors="coerce")).sort_values(
        "_e", ascending=False, kind="stable", na_position="last").drop(columns="_e")
    return (f.head(top) if top else f).reset_index(drop=True)


def overview(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (attribute, topic): the worst ``verdict``, the largest
    ``effect`` and where it is (``metric``, ``class``, ``group``), and the
    count of each verdict."""
    j = findings(results)
    cols = ["attribute", "topic", "verdict", "effect", "metric", "class", "group", *VERDICTS]
    if j.empty:
        return pd.DataFrame(columns=cols)
    j = j.assign(topic=[_topic(m, f) for m, f in zip(j["metric"], j["family"])],
                 _s=j["verdict"].map(_severity))
    rows = []
    for (a, t), g in j.groupby(["attribute", "topic"], sort=False):
        top = g.iloc[0]
        row = {"attribute": a, "topic": t, "verdict": g.sort_values("_s", kind="stable")["verdict"].iloc[0],
               "effect": pd.to_numeric(g["effect"], errors="coerce").max(), "metric": top["metric"],
               "class": top["class"], "group": top["group"]}
        row.update({v: int((g["verdict"] == v).sum()) for v in VERDICTS})
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def verdict_counts(results: pd.DataFrame) -> dict:
    """``{verdict: number of values}`` for the five verdicts."""
    v = results["verdict"] if "verdict" in results.columns else pd.Series([], dtype=object)
    return {k: int((v == k).sum()) for k in VERDICTS}


def multiplicity(results: pd.DataFrame) -> dict | None:
    """How the verdict stage controlled the error rate across values
    (``results.attrs["intervals"]``), or None."""
    return results.attrs.get("intervals")


class Results(pd.DataFrame):
    """Tidy results (a pandas DataFrame) with the headline at hand:
    ``results.summary()`` is :func:`overview`, ``results.findings(verdict=
    "material")`` is :func:`findings`."""

    @property
    def _constructor(self):
        return Results

    def summary(self) -> pd.DataFrame:
        """One row per attribute and topic: worst verdict, largest effect."""
        return overview(self)

    def findings(self, verdict=None, top: int | None = None) -> pd.DataFrame:
        """Judged values, largest effect first (``verdict`` to keep one kind)."""
        return findings(self, verdict=verdict, top=top)

    def verdict_counts(self) -> dict:
        return verdict_counts(self)
