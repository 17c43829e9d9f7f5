"""The headline of a results table, as data: what a person reads first.

- :func:`findings`: judged values ranked by verdict (material, then small,
  then inconclusive, then negligible and undefined: :data:`FINDING_ORDER`)
  and within a verdict by effect (size in units of the metric's threshold
  tau), optionally one verdict only;
- :func:`overview`: one row per attribute and metric topic with the worst
  verdict and the largest effect among the rows with that verdict;
- :func:`verdict_counts`: how many values got each verdict;
- :func:`multiplicity`: how the error rate across the many judged values is
  controlled (from the verdict stage).

The terminal headline and the HTML report render these
(:mod:`bias_suite.report.headline`); ``bias_suite.Results`` gives them as
methods (``.findings()``, ``.summary()``, ``.counts()``).
"""
from __future__ import annotations

import pandas as pd

from ..stats.verdicts import VERDICTS

__all__ = ["grid_cells", "findings", "overview", "verdict_counts", "multiplicity", "topic_of", "spill_over", "SEVERITY", "FINDING_ORDER",
           "TOPIC_ORDER", "ordered_topics"]

from ..stats.topics import (FINDING_ORDER, SEVERITY, TOPIC_ORDER, ordered_topics,  # noqa: F401 (re-exported)
                            severity_rank as _severity, topic_of)


def grid_cells(frame: pd.DataFrame, attributes, topics):
    """The attribute x topic grid of an overview-like ``frame`` (one row per
    attribute and topic): ``[(attribute, [(topic, row dict or None), ...]), ...]``
    in the order of ``attributes`` and ``topics``."""
    cells = {(r["attribute"], r["topic"]): r for r in frame.to_dict("records")}
    return [(a, [(t, cells.get((a, t))) for t in topics]) for a in attributes]


def findings(results: pd.DataFrame, verdict=None, top: int | None = None) -> pd.DataFrame:
    """Judged rows, ranked by verdict in :data:`FINDING_ORDER` (material,
    small, inconclusive, negligible, undefined), then largest effect first;
    rows that tell no size (no effect, or an effect below 0.05 τ: a
    significance test, a small value of 0.0 τ) after all the others.

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
    rank = f["verdict"].map({v: k for k, v in enumerate(FINDING_ORDER)}).fillna(len(FINDING_ORDER))
    effect = pd.to_numeric(f["effect"], errors="coerce") if "effect" in f.columns else pd.Series(float("nan"), index=f.index)
    f = f.assign(_s=sizeless(f["verdict"], effect), _r=rank, _e=-effect.fillna(-float("inf"))).sort_values(
        ["_s", "_r", "_e"], kind="stable").drop(columns=["_s", "_r", "_e"])
    return (f.head(top) if top else f).reset_index(drop=True)


#: an effect below this many tau says no size: such a row (a significance test, a small value of 0.0 tau) never
#: leads the findings
SIZELESS = 0.05


def sizeless(verdict: pd.Series, effect: pd.Series) -> pd.Series:
    """1 for rows that tell no direction or size (no effect, or below
    :data:`SIZELESS`) unless material, else 0: ranked after every row that
    does, whatever their verdicts."""
    return ((verdict != "material") & (effect.isna() | (effect.abs() < SIZELESS))).astype(int)


def spill_over(res: pd.DataFrame) -> pd.Series:
    """True for rows whose optional ``source`` column names the groups that
    cause them (a non-empty string: a spill-over); False everywhere without
    that column."""
    if "source" not in res.columns:
        return pd.Series(False, index=res.index)
    return res["source"].map(lambda s: isinstance(s, str) and bool(s.strip())).astype(bool)


def overview(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (attribute, topic): the worst ``verdict`` (in
    :data:`SEVERITY`), the largest ``effect`` among the rows with that
    verdict and where it is (``metric``, ``class``, ``group``), and the
    count of each verdict. Rows caused by other groups in the background
    (a ``source``, when the results have that column) give the effect and
    the place only when no other row has the worst verdict; ``source`` is
    then theirs (else None)."""
    j = findings(results)
    cols = ["attribute", "topic", "verdict", "effect", "metric", "class", "group", "source", *VERDICTS]
    if j.empty:
        return pd.DataFrame(columns=cols)
    j = j.assign(topic=[topic_of(m, f) for m, f in zip(j["metric"], j["family"])],
                 _s=j["verdict"].map(_severity), _x=spill_over(j))
    rows = []
    for (a, t), g in j.groupby(["attribute", "topic"], sort=False):
        worst = g[g["_s"] == g["_s"].min()]
        if not worst["_x"].all():
            worst = worst[~worst["_x"]]
        top = worst.iloc[0]  # ranked: the first row has the largest effect
        row = {"attribute": a, "topic": t, "verdict": top["verdict"],
               "effect": pd.to_numeric(worst["effect"], errors="coerce").max(), "metric": top["metric"],
               "class": top["class"], "group": top["group"], "source": top["source"] if top["_x"] else None}
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
