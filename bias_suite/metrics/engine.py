"""``evaluate``: scored examples in, tidy results out (docs/formats.md).

One row per metric x class x group/pair/accumulated value, with the columns
``metric, family, view, attribute, class, group, value, ci_low, ci_high, n,
note``. Undefined values are null with a note.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import MetricError
from ..scoring.scored import ScoredData, as_scored
from ..suites.views import counterfactual_view, group_order
from .catalog import NAMED_METRICS, MetricSpec, get_metric
from .generalized import AttributeData, counterfactual_metric, group_metric

RESULT_COLUMNS = ["metric", "family", "view", "attribute", "class", "group", "value", "ci_low", "ci_high", "n", "note"]


def empty_results() -> pd.DataFrame:
    return results_frame([])


OPTIONAL_COLUMNS = ["verdict", "threshold", "baseline", "effect", "reason"]  # the verdict stage, after `note`


def results_frame(rows: list) -> pd.DataFrame:
    """Rows (dicts) as a results table with the tidy columns and dtypes
    (plus the verdict columns when any row carries them)."""
    extra = [c for c in OPTIONAL_COLUMNS if any(isinstance(r, dict) and r.get(c) is not None for r in rows)]
    df = pd.DataFrame(rows, columns=RESULT_COLUMNS + extra)
    for c in extra:
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    df["value"] = pd.to_numeric(df["value"], errors="coerce").astype(float)
    for c in ("ci_low", "ci_high"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    df["n"] = pd.array(pd.to_numeric(df["n"], errors="coerce"), dtype="Int64")
    for c in ("group", "note"):
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df


def classification_counts(y: np.ndarray, yhat: np.ndarray):
    """Per-example counts for class c (one-vs-rest): tp, fp, fn, tn on
    labelled rows, pp (predicted c, any row), n, lab, correct."""
    lab = y >= 0
    correct = (lab & (yhat == y)).astype(np.int64)
    ones = np.ones(len(y), dtype=np.int64)
    lab_i = lab.astype(np.int64)

    def counts(c):
        pos = y == c
        neg = lab & ~pos
        ph = yhat == c
        return {
            "tp": (ph & pos).astype(np.int64),
            "fp": (ph & neg).astype(np.int64),
            "fn": (~ph & pos).astype(np.int64),
            "tn": (~ph & neg).astype(np.int64),
            "pp": ph.astype(np.int64),
            "n": ones,
            "lab": lab_i,
            "correct": correct,
        }

    return counts


def attribute_data(data: ScoredData, attribute: str, cf, groups: list) -> AttributeData:
    """Arrays of one attribute (attribute-local positions)."""
    fr = data.frame
    rows = np.flatnonzero(fr["attribute"].to_numpy(dtype=object) == attribute)
    local = np.full(len(fr), -1, dtype=np.int64)
    local[rows] = np.arange(len(rows))
    code = {g: i for i, g in enumerate(groups)}
    g = fr["group"].to_numpy(dtype=object)[rows]
    g = np.fromiter((code[x] for x in g), dtype=np.int64, count=len(g)) if len(g) else np.zeros(0, np.int64)
    y = data.y[rows]
    yhat = data.yhat[rows]
    row_template = np.full(len(rows), -1, dtype=np.int64)
    for j, t in enumerate(cf.templates):
        for members in cf.members[t]:
            row_template[local[members]] = j
    return AttributeData(
        attribute=attribute,
        groups=list(groups),
        classes=tuple(data.classes),
        g=g,
        y=y,
        yhat=yhat,
        counts=classification_counts(y, yhat),
        item_row=np.arange(len(rows)),
        item_P=data.probs[rows],
        item_y=y,
        tuples=local[cf.tuples] if len(cf.tuples) else np.zeros((0, len(groups)), dtype=np.int64),
        tuple_template=cf.tuple_template,
        templates=list(cf.templates),
        row_template=row_template,
    )


def not_applicable_rows(spec: MetricSpec, attribute: str, classes: Sequence[str], note: str) -> list:
    cls_list = list(classes) if spec.per_class else ["all"]
    return [
        {
            "metric": spec.name,
            "family": spec.generalized,
            "view": spec.view,
            "attribute": attribute,
            "class": c,
            "group": None,
            "value": None,
            "ci_low": None,
            "ci_high": None,
            "n": None,
            "note": note,
        }
        for c in cls_list
    ]


def metric_rows(spec: MetricSpec, ad: AttributeData) -> list:
    """All rows of one metric on one attribute."""
    if spec.two_groups and ad.k != 2:
        return not_applicable_rows(
            spec, ad.attribute, ad.classes, f"not applicable: needs exactly two groups, attribute has {ad.k}"
        )
    fn = group_metric if spec.view == "group" else counterfactual_metric
    if not spec.per_class:
        return fn(spec, ad, 0, "all")
    rows = []
    for c, name in enumerate(ad.classes):
        rows.extend(fn(spec, ad, c, name))
    return rows


def select_attributes(data, attributes) -> list[str]:
    """The requested attributes (default all, in order of first appearance);
    an unknown name is an error listing the data's attributes."""
    all_attrs = data.attributes()
    if attributes is None:
        return all_attrs
    wanted = [attributes] if isinstance(attributes, str) else list(attributes)
    missing = [a for a in wanted if a not in all_attrs]
    if missing:
        raise MetricError(f"unknown attribute(s) {missing}; the data has {all_attrs}")
    return wanted


def resolve_metrics(metrics) -> list[MetricSpec]:
    if metrics is None:
        return list(NAMED_METRICS)
    if isinstance(metrics, (str, MetricSpec)):
        metrics = [metrics]
    out = []
    for m in metrics:
        if isinstance(m, str) and "," in m:
            out.extend(get_metric(x.strip()) for x in m.split(",") if x.strip())
        else:
            out.append(get_metric(m))
    return out


def evaluate(
    scored,
    *,
    metrics: Iterable | None = None,
    attributes: Iterable[str] | str | None = None,
    max_tuples: int | None = 100,
    seed: int = 0,
    group_order_override: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """The metric values of scored examples (no intervals, tests or verdicts:
    :func:`bias_suite.evaluation.evaluate` adds those).

    Parameters
    ----------
    scored : DataFrame, list of dicts, path, or ScoredData
        Scored examples (docs/formats.md); validated once here.
    metrics : names or :class:`MetricSpec` objects, default every named metric.
    attributes : restrict to these attributes (default: all, in order of first appearance).
    max_tuples : int or None, default 100
        Counterfactual tuples per template above which tuples are sampled.
    seed : int, default 0
        Seed of the tuple sampler. Tuples are drawn for every attribute of
        the input in order, so an attribute's values do not depend on which
        attributes are requested.
    group_order_override : {attribute: [groups...]}
        Group order (first minus second in two-group metrics); default the
        order of first appearance.

    Returns
    -------
    DataFrame with the tidy result columns (``RESULT_COLUMNS``).

    Examples
    --------
    >>> res = evaluate("scored.jsonl", metrics=["FNED", "CFGap"])  # doctest: +SKIP
    >>> res.query("group.isna()")  # accumulated values  # doctest: +SKIP
    """
    data = as_scored(scored)
    specs = resolve_metrics(metrics)
    if getattr(data, "task", "classification") != "classification":
        from .sequence import evaluate_sequence

        res = evaluate_sequence(data, metrics=metrics, attributes=attributes, max_tuples=max_tuples, seed=seed,
                                group_order_override=group_order_override)
        return single_group_nulls(res, data.frame, specs, group_order_override)
    wanted = select_attributes(data, attributes)
    cfs = counterfactual_view(data.frame, max_tuples=max_tuples, seed=seed, group_order_override=group_order_override)
    rows = []
    for a in wanted:
        ad = attribute_data(data, a, cfs[a], group_order(data.frame, a, group_order_override))
        for spec in specs:
            rows.extend(metric_rows(spec, ad))
    return single_group_nulls(results_frame(rows), data.frame, specs, group_order_override)


def _compares_groups(spec) -> bool:
    """Whether a metric's value compares groups (or a group with a
    background): everything but a VBCM with d = value (SubgroupAUC)."""
    return not (spec.generalized == "VBCM" and spec.comparison == "value")


def single_group_nulls(res: pd.DataFrame, frame: pd.DataFrame, specs, group_order_override=None) -> pd.DataFrame:
    """On an attribute with a single group a comparison has nothing to
    compare (a BCM against S = the group itself would read 0): its rows get
    value, interval and verdict null with a note saying so."""
    if res.empty:
        return res
    names = {s.name for s in specs if _compares_groups(s)}
    for a in pd.unique(res["attribute"]):
        groups = group_order(frame, a, group_order_override)
        if len(groups) >= 2:
            continue
        sel = ((res["attribute"] == a) & res["metric"].isin(names)).to_numpy()
        if not sel.any():
            continue
        note = (f"needs at least two groups; attribute {a!r} has one ({groups[0]!r})" if groups
                else f"needs at least two groups; attribute {a!r} has none")
        res = res.copy()
        for c in ("value", "ci_low", "ci_high", "verdict", "note"):
            if c not in res.columns:
                continue
            col = res[c].copy()
            if c == "note" or col.dtype == object:
                col = col.astype(object)
                col[sel] = note if c == "note" else None
            else:
                col[sel] = np.nan  # numeric columns keep their dtype; nulls are NaN as elsewhere
            res[c] = col
    return res
