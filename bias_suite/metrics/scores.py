"""Score functions phi of the generalized metrics.

Three kinds, all per class c (one-vs-rest) unless ``per_class`` is False:

- :class:`RateScore` — prediction-based rates from summed counts
  (``TP/(TP+FN)`` and friends); summing per-example counts makes the same
  score work for classification (one count per example) and for sequence
  labelling (span counts per sentence).
- :class:`SetScore` — a set of probabilities ``{f(x, c): x in A, select}``;
  in the counterfactual view each tuple member contributes its own value.
- :class:`AucScore` — ROC AUC of f(x, c) against [y = c] on a set built
  from the group's and the background's positives and negatives.
- :class:`GoldProbScore` — f(x, y(x)), the probability of each example's
  own gold class (PertSS/PertSD/PertSR), class "all".
- :class:`MeanScore` — the mean of a set (AvgScoreDiff, per template).

Rate and set scores say where they are measured (``at``): ``"all"`` (every
unit of an example: for a tagger every span and token) or ``"identity"``
(only the identity term's own span or position: the identity-span metrics
of taggers; a family that has no such unit does not report them).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..exceptions import MetricError

#: where a score is measured: every unit of an example, or the identity term only
AT = ("all", "identity")
IDENTITY = "identity"

# Count columns every scored table provides per example and class:
# tp, fp, fn, tn (labelled rows), pp (predicted positives, any row),
# n (rows), lab (labelled rows), correct (class-free, labelled rows).
COUNT_NAMES = ("tp", "fp", "fn", "tn", "pp", "n", "lab", "correct")


@dataclass(frozen=True)
class RateScore:
    """phi = numerator / denominator of summed counts (or F1 of them).

    ``fn(sums)`` takes a dict of count arrays (summed over a set of
    examples) and returns ``(value, undefined_mask, reason)``.
    """

    name: str
    fn: Callable
    formula: str
    label_based: bool = True
    per_class: bool = True
    kind: str = "rate"
    at: str = "all"


@dataclass(frozen=True)
class SetScore:
    """phi = {f(x, c): x in A, select}; select in {"all", "pos", "neg"}
    (pos: y = c; neg: labelled with y != c)."""

    name: str
    select: str = "all"
    formula: str = ""
    per_class: bool = True
    kind: str = "set"
    at: str = "all"

    @property
    def label_based(self) -> bool:
        return self.select != "all"


@dataclass(frozen=True)
class AucScore:
    """ROC AUC of f(x, c) vs [y = c], positives taken from ``pos_from`` and
    negatives from ``neg_from`` ("group" or "rest")."""

    name: str
    pos_from: str
    neg_from: str
    formula: str = ""
    label_based: bool = True
    per_class: bool = True
    kind: str = "auc"


@dataclass(frozen=True)
class GoldProbScore:
    """f(x, y(x)): each example's probability of its own gold class."""

    name: str = "gold_prob"
    formula: str = "f(x, y(x))"
    label_based: bool = True
    per_class: bool = False
    select: str = "all"
    kind: str = "gold"


@dataclass(frozen=True)
class MeanScore:
    """mean{f(x, c): x in A}."""

    name: str = "mean_prob"
    select: str = "all"
    formula: str = "mean{f(x,c): x in A}"
    per_class: bool = True
    kind: str = "mean"

    @property
    def label_based(self) -> bool:
        return self.select != "all"


def _ratio(num, den, what, den_name):
    num = np.asarray(num, float)
    den = np.asarray(den, float)
    bad = den == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.where(bad, np.nan, num / np.where(bad, 1, den))
    return val, bad, f"{what} undefined: {den_name} = 0"


def _tpr(s):
    return _ratio(s["tp"], s["tp"] + s["fn"], "TPR", "no positives (TP+FN)")


def _fnr(s):
    return _ratio(s["fn"], s["tp"] + s["fn"], "FNR", "no positives (TP+FN)")


def _identity_tpr(s):
    return _ratio(s["tp"], s["tp"] + s["fn"], "identity-span recall", "no identity span of the type (TP+FN)")


def _identity_fnr(s):
    return _ratio(s["fn"], s["tp"] + s["fn"], "identity-span FNR", "no identity span of the type (TP+FN)")


def _fpr(s):
    return _ratio(s["fp"], s["fp"] + s["tn"], "FPR", "no negatives (FP+TN)")


def _tnr(s):
    return _ratio(s["tn"], s["fp"] + s["tn"], "TNR", "no negatives (FP+TN)")


def _precision(s):
    return _ratio(s["tp"], s["tp"] + s["fp"], "precision", "no predicted positives (TP+FP)")


def _f1(s):
    p, pbad, _ = _precision(s)
    r, rbad, _ = _tpr(s)
    zero = ~pbad & ~rbad & (p + r == 0)
    bad = pbad | rbad | zero
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.where(bad, np.nan, 2 * p * r / np.where(bad, 1, p + r))
    return val, bad, "F1 undefined: precision or recall undefined (no predicted or no gold positives) or P+R = 0"


def _positive_rate(s):
    return _ratio(s["pp"], s["n"], "positive rate", "no examples")


def _accuracy(s):
    return _ratio(s["correct"], s["lab"], "accuracy", "no labelled examples")


SCORES: dict[str, object] = {
    sc.name: sc
    for sc in [
        RateScore("TPR", _tpr, "TP / (TP + FN)"),
        RateScore("recall", _tpr, "TP / (TP + FN)"),
        RateScore("FNR", _fnr, "FN / (TP + FN)"),
        RateScore("FPR", _fpr, "FP / (FP + TN)"),
        RateScore("TNR", _tnr, "TN / (FP + TN)"),
        RateScore("precision", _precision, "TP / (TP + FP)"),
        RateScore("F1", _f1, "2PR / (P + R)"),
        RateScore("positive_rate", _positive_rate, "|{yhat = c}| / |A|", label_based=False),
        RateScore("accuracy", _accuracy, "|{yhat = y}| / |A|", per_class=False),
        SetScore("prob", "all", "{f(x,c): x in A}"),
        SetScore("prob_pos", "pos", "{f(x,c): x in A, y = c}"),
        SetScore("prob_neg", "neg", "{f(x,c): x in A, y != c}"),
        AucScore("subgroup_auc", "group", "group", "AUC of f(x,c) vs [y=c] on S^t"),
        AucScore("bpsn_auc", "rest", "group", "AUC on background positives + group negatives"),
        AucScore("bnsp_auc", "group", "rest", "AUC on background negatives + group positives"),
        GoldProbScore(),
        MeanScore(),
        MeanScore("mean_prob_pos", "pos", "mean{f(x,c): x in A, y = c}"),
        # measured at the identity term only (taggers: the span / merged position the identity slot filled)
        RateScore("identity_recall", _identity_tpr, "TP / (TP + FN) of identity spans", at=IDENTITY),
        RateScore("identity_FNR", _identity_fnr, "FN / (TP + FN) of identity spans", at=IDENTITY),
        SetScore("identity_prob", "all", "{f(x,c) at the identity term}", at=IDENTITY),
        SetScore("identity_prob_pos", "pos", "{f(x,c) at the identity term, y = c}", at=IDENTITY),
    ]
}


def get_score(phi):
    """Look up a registered score by name, or return a score object as is."""
    if isinstance(phi, (RateScore, SetScore, AucScore, GoldProbScore, MeanScore)):
        return phi
    if isinstance(phi, str):
        try:
            return SCORES[phi]
        except KeyError:
            raise MetricError(f"unknown score {phi!r}; known: {sorted(SCORES)}") from None
    raise MetricError(f"score must be a name or a score object, got {phi!r}")


def rate_score(name: str, fn: Callable, formula: str = "", *, label_based: bool = True, per_class: bool = True,
               at: str = "all"):
    """Define a new prediction-based rate from summed counts.

    ``fn(sums)`` gets a dict with arrays ``tp, fp, fn, tn, pp, n, lab,
    correct`` and returns ``(value, undefined_mask, reason)``. ``at="identity"``:
    the counts of the identity term's own span (taggers only).
    """
    if at not in AT:
        raise MetricError(f"{name}: at must be one of {list(AT)}, got {at!r}")
    return RateScore(name, fn, formula, label_based=label_based, per_class=per_class, at=at)
