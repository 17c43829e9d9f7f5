"""``evaluate``: scored examples in, tidy results out (docs/formats.md).

One row per metric x class x group/pair/accumulated value, with the columns
``metric, family, view, attribute, class, group, value, ci_low, ci_high, n,
note``. Undefined values are null with a note.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import MetricError, did_you_mean
from ..families import as_scored, family_of
from ..io.results import OPTIONAL_COLUMNS, RESULT_COLUMNS, empty_results, results_frame  # noqa: F401 (re-exported)
from ..suites.views import counterfactual_view, group_order
from .catalog import REGISTRY, MetricSpec, get_metric
from .generalized import AttributeData, counterfactual_metric, group_metric
from .scores import IDENTITY, get_score

#: how the group view weighs examples: "balanced" (every template counts
#: equally for every group) or "pooled" (every example counts once)
WEIGHTINGS = ("balanced", "pooled")


def check_weighting(weighting: str) -> str:
    if weighting not in WEIGHTINGS:
        raise MetricError(f"weighting must be one of {list(WEIGHTINGS)}, got {weighting!r}")
    return weighting


def balance_weights(frame: pd.DataFrame, attribute: str) -> np.ndarray | None:
    """Group-view weights of an attribute's examples (in frame order): 1 /
    the number of examples of the same group in the same template, so that
    each template counts once for each group whatever the number of its
    terms; None when every weight would be 1 (a balanced design, or no
    template ids)."""
    if "template" not in frame.columns:
        return None
    sub = frame.loc[(frame["attribute"] == attribute).to_numpy(), ["template", "group"]]
    if sub["template"].isna().any():
        return None
    size = sub.groupby(["template", "group"], sort=False, dropna=False)["group"].transform("size").to_numpy(float)
    if size.size == 0 or np.all(size == 1):
        return None
    return 1.0 / size


def attribute_data(data, attribute: str, cf, groups: list, *, probabilities: bool | str = True,
                   weighting: str = "balanced") -> AttributeData:
    """The builders' input for one attribute, from the data's task family,
    with the group view's example weights (``weighting``); ``probabilities``:
    the input kind of :func:`metric_input_kind`."""
    ad = AttributeData(**family_of(data).metric_input(data, attribute, cf, groups, probabilities))
    if check_weighting(weighting) == "balanced":
        ad.row_weight = _attribute_weights(data, attribute)
    return ad


def _attribute_weights(data, attribute: str):
    """:func:`balance_weights` of one attribute, computed once per data set
    (every input kind of the attribute shares them)."""
    cache = data.__dict__.setdefault("_balance_weights", {})
    if attribute not in cache:
        cache[attribute] = balance_weights(data.frame, attribute)
    return cache[attribute]


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
        raise MetricError(f"unknown attribute(s) {missing} (the data has {all_attrs})"
                          f"{did_you_mean(missing[0], all_attrs)}")
    return wanted


def resolve_metrics(metrics) -> list[MetricSpec]:
    if metrics is None:
        return list(REGISTRY.values())  # the named metrics and every registered one
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
    weighting: str = "balanced",
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
    weighting : "balanced" (default) or "pooled"
        How the group view weighs examples. "balanced": each example by 1 /
        the number of its group's examples in its template, so every
        template counts equally for every group (a group with two terms in
        some templates and one in others does not weigh the first ones
        twice); "pooled": every example once, the published definitions.
        Equal on designs where each group has the same number of examples in
        every template; the counterfactual view is not weighted.

    Returns
    -------
    DataFrame with the tidy result columns (``RESULT_COLUMNS``).

    Examples
    --------
    >>> res = evaluate("scored.jsonl", metrics=["FNED", "CFGap"])  # doctest: +SKIP
    >>> res.query("group.isna()")  # accumulated values  # doctest: +SKIP
    """
    data = as_scored(scored)
    res = metric_values(data, metrics=metrics, attributes=attributes, max_tuples=max_tuples, seed=seed,
                        group_order_override=group_order_override, weighting=weighting)
    return single_group_nulls(res, data.frame, resolve_metrics(metrics), group_order_override)


def metric_values(data, *, metrics=None, attributes=None, max_tuples: int | None = 100, seed: int = 0,
                  group_order_override=None, weighting: str = "balanced") -> pd.DataFrame:
    """The rows of :func:`evaluate` on validated scored data, before the
    rows of single-group attributes are nulled (the resampling bootstrap
    evaluates each resample with this)."""
    return results_frame(metric_row_dicts(data, metrics=metrics, attributes=attributes, max_tuples=max_tuples,
                                          seed=seed, group_order_override=group_order_override,
                                          weighting=weighting))


def metric_row_dicts(data, *, metrics=None, attributes=None, max_tuples: int | None = 100, seed: int = 0,
                     group_order_override=None, weighting: str = "balanced") -> list:
    """The rows of :func:`metric_values` as a list of dicts (no frame)."""
    check_weighting(weighting)
    specs = resolve_metrics(metrics)
    fam = family_of(data)
    wanted = select_attributes(data, attributes)
    cfs = counterfactual_view(data.frame, max_tuples=max_tuples, seed=seed, group_order_override=group_order_override)
    missing = fam.missing_probabilities(data)
    rows = []
    for a in wanted:
        groups = group_order(data.frame, a, group_order_override)
        inputs: dict = {}  # input kind -> AttributeData, built when first needed
        for spec in specs:
            probabilities, note, classes = metric_input_kind(data, spec, fam, missing)
            if probabilities is None:
                if note is not None:
                    rows.extend(not_applicable_rows(spec, a, classes, note))
                continue
            if probabilities not in inputs:
                inputs[probabilities] = attribute_data(data, a, cfs[a], groups, probabilities=probabilities,
                                                       weighting=weighting)
            rows.extend(metric_rows(spec, inputs[probabilities]))
    return rows


def metric_input_kind(data, spec, fam=None, missing=None) -> tuple:
    """Which input a metric reads on this data: ``(kind, None, None)`` with
    ``kind`` the ``probabilities`` argument of :func:`attribute_data` (False:
    counts suffice, True: probability items, ``"identity"``: the counts and
    items of the identity term only, for scores with ``at="identity"``), or
    ``(None, note, classes)`` when the metric does not apply (``note`` None:
    not reported at all: the family's ``score_notes``, and the scores
    measured at the identity term for a family without ``identity_span``,
    such as a text classifier, whose unit is the whole text). ``missing``:
    the family's note on data without probabilities (looked up when not
    given)."""
    fam = family_of(data) if fam is None else fam
    score = get_score(spec.score)
    name = getattr(score, "name", "")
    if name in fam.score_notes:
        return None, fam.score_notes[name], data.classes
    at_term = getattr(score, "at", "all") == IDENTITY
    if at_term and not fam.identity_span:
        return None, None, data.classes
    probabilities = fam.items_are_examples or score.needs_probabilities
    missing = fam.missing_probabilities(data) if missing is None else missing
    if probabilities and missing:
        return None, missing, getattr(data, "prob_classes", data.classes)
    if at_term:
        return IDENTITY, None, None
    return probabilities, None, None


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
