"""What a value rests on: the number of templates that contribute its events.

A rate is a count of events over a count of chances (false negatives over
gold positives, say). When every false negative of a group comes from one
template, the rate and anything compared with it rest on that template
alone: resampling templates either repeats the value or makes it undefined,
and the interval collapses to a point. A value that rests on no event at all
(no gold-negative template flipped) is 0 with an interval of [0, 0], which
is not evidence that groups are alike either. :func:`event_templates` counts,
per row of a metric, the templates in which the events of its score occur;
:mod:`bias_suite.stats.verdicts` makes a row that rests on fewer than
``MIN_EVENT_TEMPLATES`` of them ``inconclusive``.

Events per kind of score phi (per class c, one-vs-rest):

- rates: each of the two outcomes the rate separates (TPR and FNR: true
  positives and false negatives; FPR and TNR: false positives and true
  negatives; precision: true and false positives; F1: true positives and
  errors; positive rate: predicted c and not; accuracy: correct and not).
  A rate that never varies (no false negative anywhere) rests on no
  template of that outcome;
- probability sets and AUCs: the examples the set selects (gold c for
  ``prob_pos``, gold other than c for ``prob_neg``, positives and negatives
  for an AUC);
- counterfactual metrics on gold-class examples (the TC variants): the
  complete templates with an example of gold class c.

A difference (or an absolute difference) rests on the events of both sets
together; a ratio or an AUC on those of its weaker side.
"""
from __future__ import annotations

import numpy as np

from ..metrics.comparisons import get_comparison
from ..metrics.generalized import AttributeData
from ..metrics.scores import AucScore, GoldProbScore, MeanScore, RateScore, SetScore, get_score

__all__ = ["event_templates", "MIN_EVENT_TEMPLATES", "OUTCOMES"]

#: a row whose events come from fewer templates than this is inconclusive
MIN_EVENT_TEMPLATES = 5

#: the two outcomes each named rate separates, as count expressions
OUTCOMES = {
    "TPR": ("tp", "fn"), "recall": ("tp", "fn"), "FNR": ("tp", "fn"),
    "FPR": ("fp", "tn"), "TNR": ("fp", "tn"),
    "precision": ("tp", "fp"), "F1": ("tp", "fp+fn"),
    "positive_rate": ("pp", "n-pp"), "accuracy": ("correct", "lab-correct"),
    "identity_recall": ("tp", "fn"), "identity_FNR": ("tp", "fn"),  # at the identity term's own span
}


def _expression(cnt: dict, expr: str) -> np.ndarray:
    """A per-example count from ``cnt`` by an expression like ``"fp+fn"`` or ``"n-pp"``."""
    out, sign, name = None, 1.0, ""
    for ch in expr + "+":
        if ch in "+-":
            v = sign * np.asarray(cnt[name], float)
            out = v if out is None else out + v
            sign, name = (1.0 if ch == "+" else -1.0), ""
        else:
            name += ch
    return out


def _present(values: np.ndarray, where: np.ndarray, J: int, k: int, tpl: np.ndarray, g: np.ndarray) -> np.ndarray:
    """(J, k) whether template j has an event for group t."""
    sel = where & (values > 0)
    return np.bincount(tpl[sel] * k + g[sel], minlength=J * k).reshape(J, k) > 0


def _sides(spec, score) -> bool:
    """Whether a row rests on its weaker side (ratios, AUCs) rather than on
    both sets together (differences)."""
    if isinstance(score, AucScore):
        return True
    return get_comparison(spec.comparison).name in ("ratio", "ratio_to_background")


def _presence(ad: AttributeData, score, c, tpl, J):
    """Per kind of event of ``score`` and class c, (J, k) whether template j
    has one for group t; None when the row count says it all. Cached on
    ``ad`` (metrics sharing a score share it)."""
    k = ad.k
    if isinstance(score, RateScore):
        outcomes = OUTCOMES.get(score.name)
        if outcomes is None:
            return None
        key = ("rate", score.name, c)
    elif isinstance(score, (SetScore, MeanScore, AucScore, GoldProbScore)):
        select = "auc" if isinstance(score, AucScore) else getattr(score, "select", "all")
        if select not in ("auc", "pos", "neg"):
            return None  # every example is an event: the template count says it
        key = ("items", select, c)
    else:
        return None
    cache = ad.__dict__.setdefault("_event_presence", {})
    key = key + (id(tpl), J)
    if key not in cache:
        if key[0] == "rate":
            cnt = ad.class_counts(c)
            ones = np.ones(len(ad.g), bool)
            cache[key] = [_present(_expression(cnt, o), ones, J, k, tpl, ad.g) for o in outcomes]
        else:
            iy, ig, it = ad.item_y, ad.item_g(), tpl[ad.item_row]
            pos, neg = iy == c, (iy >= 0) & (iy != c)
            sets = {"auc": (pos, neg), "pos": (pos,), "neg": (neg,)}[key[1]]
            cache[key] = [_present(m.astype(float), m, J, k, it, ig) for m in sets]
    return cache[key]


def _group_view(spec, ad: AttributeData, score, c, tpl, J) -> dict:
    k = ad.k
    pres = _presence(ad, score, c, tpl, J)
    if pres is None:
        return {}
    sides = _sides(spec, score)
    bg_all = spec.background in ("all", "S")
    # per kind of event: templates with one in each group, in any other group, in any group
    one = [P.sum(axis=0) for P in pres]
    others = [((P.sum(axis=1)[:, None] - P) > 0).sum(axis=0) for P in pres]
    anyg = [int(P.any(axis=1).sum()) for P in pres]
    out = {}
    groups = list(ad.groups)
    if spec.generalized == "PCM":
        pairs = ad.pairs()
        pa = np.array([p[0] for p in pairs], dtype=np.int64)
        pb = np.array([p[1] for p in pairs], dtype=np.int64)
        if sides:  # the weaker side
            n = np.min([np.minimum(o[pa], o[pb]) for o in one], axis=0)
        else:  # both sets together
            n = np.min([(P[:, pa] | P[:, pb]).sum(axis=0) for P in pres], axis=0)
        for (a, b), v in zip(pairs, n):
            out[f"{groups[a]}|{groups[b]}"] = int(v)
    elif spec.generalized in ("BCM", "VBCM"):
        if isinstance(score, AucScore):
            na = one[0] if score.pos_from == "group" else others[0]
            nb = one[1] if score.neg_from == "group" else others[1]
            n = np.minimum(na, nb)
        elif sides:  # the group against its background (all groups, or the others)
            n = np.min([np.minimum(o, np.full(k, y) if bg_all else r) for o, r, y in zip(one, others, anyg)], axis=0)
        else:  # a group or its background: a template with an event in any group
            n = np.full(k, min(anyg))
        for t in range(k):
            out[groups[t]] = int(n[t])
    return out


def _counterfactual_view(spec, ad: AttributeData, score, c) -> dict:
    select = getattr(score, "select", "all")
    if select not in ("pos", "neg") or not len(ad.templates):
        return {}
    rt = ad.row_template
    yy = ad.y
    hit = (yy == c) if select == "pos" else ((yy >= 0) & (yy != c))
    n = int(np.unique(rt[(rt >= 0) & hit]).size)
    labels = (ad.pair_names() + [None]) if spec.generalized == "PCM" else list(ad.groups) + [None]
    return {lab: n for lab in labels}


def event_templates(spec, ad: AttributeData, tpl: np.ndarray, J: int) -> dict:
    """{(class name, group or pair label): templates with events} for one
    metric on one attribute (rows the module doc says nothing about are
    left out). ``tpl`` is every example's template index among the
    attribute's ``J`` templates."""
    score = get_score(spec.score)
    classes = list(enumerate(ad.classes)) if spec.per_class else [(0, "all")]
    out = {}
    for c, name in classes:
        if spec.view == "group":
            got = _group_view(spec, ad, score, c, tpl, J)
        else:
            got = _counterfactual_view(spec, ad, score, c)
        for lab, n in got.items():
            out[(name, lab)] = n
    return out
