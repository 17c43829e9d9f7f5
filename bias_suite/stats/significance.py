"""Significance tests of counterfactual differences (docs/metrics.md, "Significance
tests").

Per attribute and class c, every template that contains every group of the
attribute is a block; the block's score for group t is the mean f(x, c) over
the group's terms in that template (labels are not needed, so unlabelled rows
are used). With 2 groups the blocks are compared with the Wilcoxon signed-rank
test (``scipy.stats.wilcoxon``, two-sided, scipy's defaults), with 3 or more
with the Friedman test (``scipy.stats.friedmanchisquare``).

Rows (family ``significance``, view ``counterfactual``, group null, n = number
of templates used):

* ``Wilcoxon`` (scipy's statistic, min(W+, W-)), ``Wilcoxon-p``,
  ``Wilcoxon-r`` (matched-pairs rank-biserial r = (R+ - R-)/(R+ + R-) on
  d = first group - second group, zero differences dropped, |d| ranked with
  average ties), ``Wilcoxon-p-holm``;
* ``Friedman`` (chi-square), ``Friedman-p``, ``Friedman-W`` (Kendall's
  W = chi2 / (n (k - 1))), ``Friedman-p-holm``.

The adjusted p-values (``-p-holm``, or ``-p-bh`` with ``adjust="bh"``) are
adjusted across all tests of one call (every attribute x class); tests whose
p-value is undefined take no part in the adjustment (they do not count in m).

Undefined cases never raise: fewer than 2 complete templates, a single group,
all differences zero (Wilcoxon) or every template tied across groups
(Friedman) give rows with value null and a note.

For sequence labelling (or any other source of block scores) use
:func:`significance_from_block_scores` on a template x group table and then
:func:`add_adjusted_pvalues` on the concatenated rows of the whole run.
"""
from __future__ import annotations

import warnings
from typing import Iterable

import numpy as np
import pandas as pd
from scipy import stats

from bias_suite.exceptions import MetricError, did_you_mean

from ..families import family_of
from ..metrics.comparisons import ROUND_OFF
from ._common import (
    empty_results, make_row, rows_to_frame, scored_data,
    select_attributes,
)

FAMILY = "significance"
VIEW = "counterfactual"
ADJUST_METHODS = ("holm", "bh")

__all__ = [
    "adjust_pvalues", "template_group_scores", "block_test",
    "significance_from_block_scores", "add_adjusted_pvalues",
    "significance_tests",
]


# --------------------------------------------------------------------------
# multiple-testing adjustment
# --------------------------------------------------------------------------
def _check_method(method):
    if method is None:
        return None
    if not isinstance(method, str) or method.lower() not in ADJUST_METHODS:
        raise MetricError(
            f"adjust must be one of {list(ADJUST_METHODS)} or None, got {method!r}")
    return method.lower()


def adjust_pvalues(pvalues, method: str | None = "holm") -> np.ndarray:
    """Adjust p-values for multiple testing.

    ``method``: ``"holm"`` (Holm step-down: the i-th smallest p becomes
    max_{j<=i} min(1, (m - j + 1) p_(j))), ``"bh"`` (Benjamini-Hochberg
    step-up: min_{j>=i} min(1, m/j p_(j))) or ``None`` (returned unchanged).
    NaN entries (undefined tests) are passed through and do not count in m.
    Returns a float array in the input order.
    """
    method = _check_method(method)
    p = np.asarray(pvalues, dtype=float).copy()
    if p.ndim != 1:
        p = p.ravel()
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise MetricError(f"p-values must lie in [0, 1], got {p[ok].tolist()}")
    if method is None or not ok.any():
        return p
    q = p[ok]
    m = q.size
    order = np.argsort(q, kind="stable")
    sorted_p = q[order]
    i = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * sorted_p))
    else:  # bh
        adj = np.minimum.accumulate(np.minimum(1.0, m / i * sorted_p)[::-1])[::-1]
    out_q = np.empty(m)
    out_q[order] = adj
    p[ok] = out_q
    return p


# --------------------------------------------------------------------------
# block scores
# --------------------------------------------------------------------------
def template_group_scores(scored: pd.DataFrame, attribute, cls: str | None = None,
                          *, complete_only: bool = True):
    """Template x group table of mean f(x, c) (rows: templates in order of
    first appearance; columns: the attribute's groups in order of first
    appearance). With ``cls=None`` returns a dict class -> table for every
    class. ``complete_only`` keeps only templates that contain every group.
    """
    data = scored_data(scored)
    classes = list(data.classes)
    if cls is not None and cls not in classes:
        raise MetricError(f"unknown class {cls!r} (classes: {classes}){did_you_mean(cls, classes)}")
    if not (data.frame["attribute"] == attribute).any():
        raise MetricError(f"no rows for attribute {attribute!r}")
    tables = family_of(data).block_scores(data, attribute, None, complete_only)
    return tables if cls is None else tables[cls]


# --------------------------------------------------------------------------
# one test
# --------------------------------------------------------------------------
def block_test(block_scores: pd.DataFrame) -> dict:
    """Run the test on one template x group table (templates with a missing
    group are dropped first).

    Returns a dict with keys ``test`` ("Wilcoxon" for <= 2 groups, else
    "Friedman"), ``statistic``, ``pvalue``, ``effect`` (rank-biserial r or
    Kendall's W), ``n`` (templates used), ``k`` (groups) and ``note`` (None,
    or why the values are None).
    """
    if not isinstance(block_scores, pd.DataFrame):
        block_scores = pd.DataFrame(block_scores)
    x = block_scores.to_numpy(dtype=float, na_value=np.nan)
    x = x[~np.isnan(x).any(axis=1)]  # templates with a missing group are dropped
    n, k = x.shape
    test = "Wilcoxon" if k <= 2 else "Friedman"
    res = {"test": test, "statistic": None, "pvalue": None, "effect": None,
           "n": int(n), "k": int(k), "note": None}

    def undefined(why):
        res["note"] = why
        return res

    if k < 2:
        return undefined(f"a test needs at least 2 groups; found {k}")
    if n < 2:
        return undefined(
            f"a test needs at least 2 templates that contain every group; found {n}")
    if not np.isfinite(x).all():
        return undefined("block scores contain non-finite values")
    x = tie_round_off(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if k == 2:
            d = x[:, 0] - x[:, 1]
            nz = d[d != 0]
            if nz.size == 0:
                return undefined("all differences between the two groups are zero")
            try:
                out = stats.wilcoxon(x[:, 0], x[:, 1])
            except ValueError as err:  # pragma: no cover (guarded above)
                return undefined(f"scipy.stats.wilcoxon failed: {err}")
            ranks = stats.rankdata(np.abs(nz))  # average ties
            r_plus = ranks[nz > 0].sum()
            r_minus = ranks[nz < 0].sum()
            effect = (r_plus - r_minus) / (r_plus + r_minus)
        else:
            if np.all(x == x[:, :1]):
                return undefined("every template has equal scores for all groups")
            try:
                out = stats.friedmanchisquare(*x.T)
            except ValueError as err:  # pragma: no cover
                return undefined(f"scipy.stats.friedmanchisquare failed: {err}")
            effect = out.statistic / (n * (k - 1))
    stat, p = float(out.statistic), float(out.pvalue)
    if not (np.isfinite(stat) and np.isfinite(p)):
        return undefined(f"scipy returned a non-finite {test} result")
    res.update(statistic=stat, pvalue=p, effect=float(effect))
    return res


def tie_round_off(x: np.ndarray) -> np.ndarray:
    """Scores of one template (a row) that are equal up to round-off
    (:data:`bias_suite.metrics.comparisons.ROUND_OFF`) made exactly equal, so
    the rank tests see ties, not round-off, as ties."""
    x = np.array(x, dtype=float)
    if x.size == 0:
        return x
    order = np.argsort(x, axis=1, kind="stable")
    xs = np.take_along_axis(x, order, axis=1)
    scale = np.maximum(1.0, np.abs(xs).max(axis=1, keepdims=True))
    new = np.ones(xs.shape, dtype=bool)
    new[:, 1:] = np.diff(xs, axis=1) > ROUND_OFF * scale
    start = np.where(new, np.arange(xs.shape[1]), 0)
    np.maximum.accumulate(start, axis=1, out=start)
    snapped = np.take_along_axis(xs, start, axis=1)
    np.put_along_axis(x, order, snapped, axis=1)
    return x


_EFFECT = {"Wilcoxon": "r", "Friedman": "W"}


def _result_rows(res: dict, attribute, cls) -> list[dict]:
    t, n, note = res["test"], res["n"], res["note"]
    return [
        make_row(t, FAMILY, VIEW, attribute, cls, None, res["statistic"], n=n, note=note),
        make_row(f"{t}-p", FAMILY, VIEW, attribute, cls, None, res["pvalue"], n=n, note=note),
        make_row(f"{t}-{_EFFECT[t]}", FAMILY, VIEW, attribute, cls, None, res["effect"],
                 n=n, note=note),
    ]


def significance_from_block_scores(block_scores: pd.DataFrame, *, attribute=None,
                                   cls: str = "all", adjust: str | None = None
                                   ) -> pd.DataFrame:
    """Tidy rows of one test on a template x group table (e.g. from NER).

    Without ``adjust`` the adjusted row is not added (adjust across a whole
    run with :func:`add_adjusted_pvalues`); with ``adjust`` it is adjusted
    over this single test (i.e. equal to the raw p-value).
    """
    res = block_test(block_scores)
    rows = rows_to_frame(_result_rows(res, attribute, cls))
    return rows if adjust is None else add_adjusted_pvalues(rows, adjust)


def add_adjusted_pvalues(rows: pd.DataFrame, adjust: str | None = "holm") -> pd.DataFrame:
    """Add ``<Test>-p-<adjust>`` rows, adjusting every ``Wilcoxon-p`` and
    ``Friedman-p`` row of ``rows`` together. Each adjusted row is placed after
    its test's effect-size row (or its p row when there is none)."""
    adjust = _check_method(adjust)
    if adjust is None or rows.empty:
        return rows.reset_index(drop=True)
    rows = rows.reset_index(drop=True)
    is_p = rows["metric"].isin(["Wilcoxon-p", "Friedman-p"]).to_numpy()
    pidx = np.flatnonzero(is_p)
    raw = np.array([np.nan if v is None else float(v) for v in rows.loc[pidx, "value"]])
    adj = adjust_pvalues(raw, adjust)
    records = rows.to_dict("records")
    insert_after = {}
    for j, i in enumerate(pidx):
        r = records[i]
        test = r["metric"][:-2]
        pos = i
        if (i + 1 < len(records) and records[i + 1]["metric"] == f"{test}-{_EFFECT[test]}"
                and records[i + 1]["attribute"] == r["attribute"]
                and records[i + 1]["class"] == r["class"]):
            pos = i + 1
        undefined = np.isnan(adj[j])
        insert_after[pos] = make_row(
            f"{test}-p-{adjust}", FAMILY, VIEW, r["attribute"], r["class"], r["group"],
            None if undefined else adj[j], n=r["n"],
            note=(r["note"] or "p-value undefined") if undefined else None)
    out = []
    for i, r in enumerate(records):
        out.append(r)
        if i in insert_after:
            out.append(insert_after[i])
    return rows_to_frame(out)


# --------------------------------------------------------------------------
# whole run
# --------------------------------------------------------------------------
def significance_tests(scored, *, attributes: Iterable[str] | None = None, adjust: str | None = "holm",
                       group_order_override=None) -> pd.DataFrame:
    """Wilcoxon (2 groups) or Friedman (>= 3 groups) per attribute and class
    on the block scores of the data's task family (mean class probability per
    template and group; for NER at the identity position), with p-values
    adjusted across all tests of the call (see module doc)."""
    adjust = _check_method(adjust)
    if isinstance(scored, pd.DataFrame) and scored.empty:
        return empty_results()
    data = scored_data(scored)
    fam = family_of(data)
    rows: list[dict] = []
    for attribute in select_attributes(data.frame, attributes):
        tables = fam.block_scores(data, attribute, (group_order_override or {}).get(attribute))
        if tables is None:  # the data has no block scores (e.g. NER without tag probabilities)
            return empty_results()
        for c, tab in tables.items():
            rows.extend(_result_rows(block_test(tab), attribute, c))
    return add_adjusted_pvalues(rows_to_frame(rows), adjust)


