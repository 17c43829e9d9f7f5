"""Intervals of no width that come from ties.

An interval of no width says that every template resample repeats the value.
That is the strongest evidence there is when a model shifts a group by the
same amount in many templates, and no evidence at all when it only means
that the value cannot move: the rates' version of this (events in a few
templates) is :mod:`bias_suite.stats.evidence`'s. The set comparisons of the
group view (the AEGs, the W1 distances, the AUCs) compare the scores of two
sets of examples (a group's and its background's; an AUC's positives and
negatives), and their value moves only through the pairs whose scores
differ. When most scores tie (a model that gives every sentence without a
word it knows the same probabilities), the value rests on the few examples
that break the ties, and resampling templates cannot move it: a keyword
model that lowers 'Muslim' sentences gives 'christian' a PosAEG of exactly
1/12 in every resample, from its ties with five groups and its wins over
the 12 Muslim sentences.

Rule. A ``material`` or ``small`` row of such a metric whose interval has
no width rests, on each side, on its *untied* examples: those whose score
differs from at least one score of the other side. On each side they must
come from at least ``MIN_EVENT_TEMPLATES`` (5) templates (as a rate's events
must), and the groups they belong to must hold at least ``MIN_N`` (20) of
the side's examples (as a group must for any claim about it): a claim
cannot rest on examples that could not carry a claim about their own
group. Otherwise the row is ``inconclusive`` and its reason says which
examples it rests on. The 'christian' row above rests, on its background's
side, on the Muslim sentences alone: 12 examples of a group whose own rows
are ``inconclusive`` for having fewer than 20. A group shifted in every
template (or one of a group's terms missed in every template) has untied
examples in every template, from groups large enough, and keeps its claim.
Rows with an interval of positive width, rates and the counterfactual rows
are not concerned (a counterfactual row has no width only when its
difference is the same in every complete template).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..exceptions import MetricError
from ..metrics.catalog import get_metric
from ..metrics.comparisons import get_comparison
from .evidence import MIN_EVENT_TEMPLATES
from .verdicts import MIN_N

__all__ = ["tied_claims", "untied_support"]


def _concerned(spec) -> bool:
    if spec.view != "group" or spec.generalized not in ("BCM", "VBCM"):
        return False
    return spec.phi.compares_items(get_comparison(spec.comparison))


def _untied(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Items of ``a`` (a mask) whose score differs from at least one score of ``b``."""
    xb = np.unique(x[b])
    if xb.size == 0:
        return np.zeros_like(a)
    if xb.size > 1:
        return a.copy()
    return a & (x != xb[0])


def untied_support(spec, ad, tpl: np.ndarray, cls: str, group: str) -> list | None:
    """Per side of one row (the group's and its background's; an AUC's
    positives and negatives), what its untied examples (module doc) rest on:
    ``(examples, templates, groups, held)``, ``groups`` the groups they
    belong to and ``held`` those groups' examples on that side; None when
    the row is not concerned. ``tpl``: every example's template code (the
    attribute's examples, in order)."""
    if cls not in ad.classes or group not in ad.groups:
        return None
    ci, t = list(ad.classes).index(cls), list(ad.groups).index(group)
    x = ad.item_P[:, ci]
    ig, iy = ad.item_g(), ad.item_y
    in_group = ig == t
    a, b = spec.phi.tie_sides(spec, iy, ci, in_group)
    out = []
    for u, s in ((_untied(x, a, b), a), (_untied(x, b, a), b)):
        rows = np.unique(ad.item_row[u])
        codes = np.unique(ig[u])
        held = np.unique(ad.item_row[s & np.isin(ig, codes)]).size
        out.append((int(rows.size), int(np.unique(tpl[rows]).size), [ad.groups[c] for c in codes], int(held)))
    return out


def tied_claims(res: pd.DataFrame, data, *, max_tuples=100, seed: int = 0, group_order_override=None,
                weighting: str = "balanced") -> pd.DataFrame:
    """``res`` with the claims whose zero-width interval comes from ties made
    ``inconclusive`` (module doc)."""
    if "verdict" not in res.columns or res.empty:
        return res
    from ..metrics.engine import attribute_data, metric_input_kind
    from ..suites.views import counterfactual_view, group_order

    lo = pd.to_numeric(res["ci_low"], errors="coerce").to_numpy(dtype=float)
    hi = pd.to_numeric(res["ci_high"], errors="coerce").to_numpy(dtype=float)
    val = pd.to_numeric(res["value"], errors="coerce").to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        flat = (hi - lo) <= 1e-12 * np.maximum(1.0, np.abs(val))  # no width (NaN: no interval, False)
    group = res["group"].to_numpy(dtype=object)
    m = (flat & res["verdict"].isin(["material", "small"]).to_numpy() & (res["view"] == "group").to_numpy()
         & res["family"].isin(["BCM", "VBCM"]).to_numpy()
         & np.array([isinstance(g, str) and "|" not in g for g in group], dtype=bool))
    todo = []
    for idx, r in res[m].iterrows():
        try:
            spec = get_metric(r["metric"])
        except MetricError:
            continue
        if _concerned(spec):
            todo.append((idx, r, spec))
    if not todo:
        return res
    out = res.copy()
    frame = data.frame
    inputs: dict = {}
    cf = None
    for idx, r, spec in todo:
        attr = r["attribute"]
        kind = metric_input_kind(data, spec)[0]
        if kind is None:
            continue
        if (attr, kind) not in inputs:
            order = group_order(frame, attr, group_order_override)
            if cf is None:
                # the run's own view (computed for its values, and kept)
                cf = counterfactual_view(frame, max_tuples=max_tuples, seed=seed,
                                         group_order_override=group_order_override)
            ad = attribute_data(data, attr, cf[attr], order, probabilities=kind, weighting=weighting)
            tpl = pd.factorize(frame.loc[(frame["attribute"] == attr).to_numpy(), "template"])[0]
            inputs[(attr, kind)] = (ad, tpl)
        ad, tpl = inputs[(attr, kind)]
        got = untied_support(spec, ad, tpl, r["class"], r["group"])
        if got is None:
            continue
        weak = [(side, *g) for side, g in zip(("the group's", "the background's"), got)
                if g[1] < MIN_EVENT_TEMPLATES or g[3] < MIN_N]
        if not weak:
            continue
        side, n, k, groups, held = weak[0]
        names = ", ".join(f"'{g}'" for g in groups) or "no group"
        out.at[idx, "verdict"] = "inconclusive"
        out.at[idx, "reason"] = (
            f"{r['reason']}; but the interval has no width because the scores tie: on {side} side only "
            f"{n} example{'s' if n != 1 else ''} in {k} template{'s' if k != 1 else ''} differ from the other "
            f"side's, of {names} ({held} example{'s' if held != 1 else ''}), fewer than a claim about "
            f"{'them' if len(groups) > 1 else 'it'} needs ({MIN_N} examples, {MIN_EVENT_TEMPLATES} templates)")
        for c in ("p", "q"):
            if c in out.columns:
                out.at[idx, c] = np.nan
    return out
