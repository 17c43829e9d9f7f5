"""Score functions phi of the generalized metrics.

Five kinds, all per class c (one-vs-rest) unless ``per_class`` is False,
each a :class:`Score` that knows its own computation (its value, its tuple
members, its value under resampling weights, its events):

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
from .sets import NEG, POS, UNLABELLED, segmented_w1

#: where a score is measured: every unit of an example, or the identity term only
AT = ("all", "identity")
IDENTITY = "identity"

# Count columns every scored table provides per example and class:
# tp, fp, fn, tn (labelled rows), pp (predicted positives, any row),
# n (rows), lab (labelled rows), correct (class-free, labelled rows).
COUNT_NAMES = ("tp", "fp", "fn", "tn", "pp", "n", "lab", "correct")


class Score:
    """What every kind of score knows about its own computation, so that the
    metric builders, the bootstrap, the evidence counts and the tie checks
    ask the score instead of switching on its type.

    Facts (class attributes):

    - ``set_valued``: phi is a set of values compared with a set comparison
      (W1, AEG), not a scalar per group;
    - ``needs_probabilities``: phi reads f(x, c) (else counts of predictions);
    - ``own_background``: the score holds its background itself (an AUC's
      sides), so a background comparison compares the value as it is;
    - ``weighted_from``: what its value under resampling weights is computed
      from: ``"counts"`` (weighted count sums, read by ``fn(sums)`` as for
      the observed sums) or ``"items"`` (weighted probability items sorted
      once: W1 or AEG of the sets for a set-valued score, :meth:`weighted`
      for a scalar one).

    Computations (methods, ``ad`` an
    :class:`~bias_suite.metrics.generalized.AttributeData`): :meth:`group_phi`
    (scalar phi per group, of all examples and of each group's rest),
    :meth:`members` (values of counterfactual tuple members),
    :meth:`template_differences` (d between the groups' sets inside each
    template), :meth:`weighted` (under resampling weights), :meth:`events`
    (what a template must hold to give the score evidence;
    :meth:`event_sides`), :meth:`tie_sides` (the two item sets a set or AUC
    row compares; :meth:`compares_items`) and :meth:`closed_form` (whether
    the bootstrap's closed form covers a metric on the score).
    """

    set_valued = False
    needs_probabilities = True
    own_background = False
    weighted_from = "items"

    def group_phi(self, ad, c) -> dict:
        """``{"group": (values (k,), bad (k,), notes, n (k,)), "all": ..., "rest": ...}``."""
        raise MetricError(f"score {self.name!r} is not scalar per group; use a set comparison (W1, AEG)")

    def members(self, ad, c):
        """Values of tuple members (M, k), or (M, k, L) at aligned positions
        where examples hold several items, and the mask of valid entries."""
        raise MetricError(f"{self.name!r} cannot be a per-member score in the counterfactual view")

    def no_tuple_note(self, ad, c) -> str:
        """The note of a counterfactual metric without a valid tuple."""
        return {
            "all": "no counterfactual tuple",
            "pos": f"no counterfactual tuple whose members all have gold class {ad.classes[c]!r}" if c is not None else "",
            "neg": "no counterfactual tuple whose members are all labelled negatives",
        }.get(getattr(self, "select", "all"), "no valid tuple")

    def template_differences(self, spec, comp, values, segment, n_segments, group, k, pairs) -> np.ndarray:
        """(templates, pairs) d between the groups' sets inside each template,
        from the selected items' ``values``, ``segment`` (template) and ``group``."""
        raise MetricError(f"{spec.name}: per-template metrics take a set or mean score")

    def weighted(self, items, pos, neg):
        """A scalar item score's (R, k) values per group and (R,) value of all
        examples under resampling weights (``items``: the weighted items of
        one class; ``pos``/``neg``: the categories of gold c and of the other
        labelled items)."""
        raise MetricError(f"score {self.name!r} has no value under resampling weights of items")

    def weighted_sides(self, items, pos, neg) -> tuple[dict, np.ndarray]:
        """The sides a background comparison reads under resampling weights, as the engine's ``group_phi``
        gives them ({"group": (values, undefined)}, and "rest"/"all" where the score has them), and the (R,)
        value of all examples."""
        gv, overall = self.weighted(items, pos, neg)
        return {"group": (gv, ~np.isfinite(gv))}, overall

    def events(self):
        """What makes a template evidence for the score: ``("counts", outcomes)``
        (the count expressions of the outcomes a rate separates), ``("items",
        selection)`` (items of a selection: "pos", "neg", or "auc" for an
        AUC's positives and negatives), or None (every example is an event)."""
        select = getattr(self, "select", "all")
        return ("items", select) if select in ("pos", "neg") else None

    def event_sides(self):
        """Where each kind of event of :meth:`events` is counted, ``"group"``
        or ``"rest"`` (an AUC's positives and negatives), or None: on both
        sides of a comparison."""
        return None

    def compares_items(self, comp) -> bool:
        """Whether a group-view background row on this score with comparison
        ``comp`` compares two sets of items (an AUC's sides, W1 or AEG of
        two score sets), so that tied scores across them matter."""
        return False

    def tie_sides(self, spec, iy, c, in_group):
        """The two item masks (the group's side, the background's side) a
        group-view row compares: ``iy`` the items' gold class, ``in_group``
        whether an item belongs to the row's group."""
        sel = select_items(iy, getattr(self, "select", "all"), c)
        return sel & in_group, sel & (np.ones_like(in_group) if spec.background in ("all", "S") else ~in_group)

    def closed_form(self, spec, comp) -> bool:
        """Whether the closed-form bootstrap covers a metric on this score."""
        return False


def select_items(iy, select: str, c) -> np.ndarray:
    """Items kept by a selection for class c: all, gold c ("pos"), or
    labelled with another class ("neg"); ``iy`` the items' gold class
    (-1 unlabelled)."""
    if select == "all":
        return np.ones(len(iy), dtype=bool)
    if select == "pos":
        return iy == c
    if select == "neg":
        return (iy >= 0) & (iy != c)
    raise MetricError(f"unknown selection {select!r}")


#: the selections the closed-form bootstrap takes
_SELECTIONS = ("all", "pos", "neg")


@dataclass(frozen=True)
class RateScore(Score):
    """phi = numerator / denominator of summed counts (or F1 of them).

    ``fn(sums)`` takes a dict of count arrays (summed over a set of
    examples) and returns ``(value, undefined_mask, reason)``. ``outcomes``:
    the two outcomes it separates and ``parts``: its (numerator,
    denominator), as count expressions (``"tp"``, ``"fp+fn"``, ``"n-pp"``;
    the built-in rates: a proportion of summed counts).
    """

    name: str
    fn: Callable
    formula: str
    label_based: bool = True
    per_class: bool = True
    kind: str = "rate"
    at: str = "all"
    outcomes: tuple | None = None
    parts: tuple | None = None

    needs_probabilities = False
    weighted_from = "counts"

    def values(self, sums):
        """phi of summed counts: ``(values, undefined, reason)``, at least 1-d."""
        val, bad, reason = self.fn(sums)
        return np.atleast_1d(val), np.atleast_1d(bad), reason

    def _n_used(self, sums):
        return sums["lab"] if self.label_based else sums["n"]

    def group_phi(self, ad, c) -> dict:
        k = ad.k
        sums, total, rest, raw, raw_total, raw_rest = ad.group_sums(c)
        gv, gb, reason = self.values(sums)
        av, ab, _ = self.values(total)
        rv, rb, _ = self.values(rest)
        n = self._n_used(raw)
        notes = [f"{reason} for group {ad.groups[t]!r}" for t in range(k)]
        return dict(
            group=(gv, gb, notes, n),
            all=(np.repeat(av, k), np.repeat(ab, k), [f"{reason} for all examples"] * k,
                 np.repeat(self._n_used(raw_total), k)),
            rest=(rv, rb, [f"{reason} for the rest of group {ad.groups[t]!r}" for t in range(k)], self._n_used(raw_rest)),
        )

    def members(self, ad, c):
        cnt = ad.class_counts(c)
        sums = {name: v[ad.tuples].astype(float) for name, v in cnt.items()}
        V, bad, _ = self.fn(sums)
        return V, ~bad

    def events(self):
        return None if self.outcomes is None else ("counts", self.outcomes)

    def closed_form(self, spec, comp) -> bool:
        if not any(self is s for s in SCORES.values()):
            return False  # a user rate function may not broadcast over resamples
        return spec.view == "group" or not spec.per_template


def _item_members(ad, c, value, selected, row_labels=False):
    """Member values of an item score: ``value(P, iy)`` the items' values,
    ``selected(iy)`` the items that count (``row_labels``: with one item per
    example, the examples' gold classes rather than the items')."""
    T = ad.tuples
    if ad.item_pos is None:  # one item per example; item index == example index
        iy = ad.y if row_labels else ad.item_y
        return value(ad.item_P, iy)[T], selected(iy)[T]
    n = len(ad.g)
    L = int(ad.item_pos.max()) + 1 if len(ad.item_pos) else 1
    at = (ad.item_row, ad.item_pos)
    valid = np.zeros((n, L), dtype=bool)
    valid[at] = True
    sel = np.zeros((n, L), dtype=bool)
    Vx = np.zeros((n, L))
    Vx[at] = value(ad.item_P, ad.item_y)
    sel[at] = selected(ad.item_y)
    return Vx[T], (valid & sel)[T]


@dataclass(frozen=True)
class SetScore(Score):
    """phi = {f(x, c): x in A, select}; select in {"all", "pos", "neg"}
    (pos: y = c; neg: labelled with y != c)."""

    name: str
    select: str = "all"
    formula: str = ""
    per_class: bool = True
    kind: str = "set"
    at: str = "all"

    set_valued = True

    @property
    def label_based(self) -> bool:
        return self.select != "all"

    def members(self, ad, c):
        return _item_members(ad, c, lambda P, iy: P[:, c], lambda iy: select_items(iy, self.select, c))

    def template_differences(self, spec, comp, values, segment, n_segments, group, k, pairs) -> np.ndarray:
        if comp.name != "W1":
            raise MetricError(f"{spec.name}: per-template set scores are compared with W1")
        return segmented_w1(values, segment, n_segments, group, k, pairs)

    def compares_items(self, comp) -> bool:
        return comp.name in ("AEG", "W1")

    def closed_form(self, spec, comp) -> bool:
        if spec.view == "group":
            return comp.name in ("W1", "AEG") and self.select in _SELECTIONS
        return comp.name == "W1" if spec.per_template else True


@dataclass(frozen=True)
class AucScore(Score):
    """ROC AUC of f(x, c) vs [y = c], positives taken from ``pos_from`` and
    negatives from ``neg_from`` ("group" or "rest")."""

    name: str
    pos_from: str
    neg_from: str
    formula: str = ""
    label_based: bool = True
    per_class: bool = True
    kind: str = "auc"

    own_background = True

    def group_phi(self, ad, c) -> dict:
        """AUC per group with positives/negatives from the group or its rest."""
        h = ad.hist(c)
        pos_g, neg_g = h.counts[POS], h.counts[NEG]  # (k, nb)
        side = {
            "group": (pos_g, neg_g),
            "rest": (pos_g.sum(0, keepdims=True) - pos_g, neg_g.sum(0, keepdims=True) - neg_g),
        }
        P = side[self.pos_from][0]
        Nn = side[self.neg_from][1]
        auc = h.auc(P, Nn)
        npos, nneg = P.sum(1), Nn.sum(1)  # (weighted: > 0 exactly when an item is there)
        notes = []
        for t in range(ad.k):
            why = []
            if npos[t] == 0:
                why.append(f"no positives (gold {ad.classes[c]!r}) in the {self.pos_from} of {ad.groups[t]!r}")
            if nneg[t] == 0:
                why.append(f"no negatives in the {self.neg_from} of {ad.groups[t]!r}")
            notes.append("AUC undefined: " + " and ".join(why) if why else None)
        n_group = h.n_items[POS] + h.n_items[NEG]
        return dict(group=(auc, ~np.isfinite(auc), notes, n_group))

    def weighted(self, items, pos, neg):
        """(R, k) AUC per group and the (R,) AUC of all examples under
        resampling weights, from ``items`` (the weighted item sets of one
        class: ``n(cats)``, ``u_grp``, ``u_over_all``; ``pos``/``neg`` their
        categories): AUC = U(positives over negatives) / (n_pos n_neg),
        rest-of-group sets by linearity of U in each argument."""
        npos, nneg = items.n(pos), items.n(neg)
        npa, nna = npos.sum(1, keepdims=True), nneg.sum(1, keepdims=True)
        Ugg = items.u_grp(pos, neg)  # U(pos_t over neg_t)
        Uta = items.u_over_all(pos, neg)  # U(pos_t over neg_all)
        Utot = Uta.sum(1, keepdims=True)  # U(pos_all over neg_all)
        side = (self.pos_from, self.neg_from)
        if side == ("group", "group"):
            U, nP, nN = Ugg, npos, nneg
        elif side == ("group", "rest"):
            U, nP, nN = Uta - Ugg, npos, nna - nneg
        else:
            Uat = npa * nneg - items.u_over_all(neg, pos)  # U(pos_all over neg_t) = |P||N| - U(neg_t over pos_all)
            if side == ("rest", "group"):
                U, nP, nN = Uat - Ugg, npa - npos, nneg
            elif side == ("rest", "rest"):
                U, nP, nN = Utot - Uta - Uat + Ugg, npa - npos, nna - nneg
            else:
                raise MetricError(f"AUC sides must be 'group' or 'rest', got {side}")
        return _safe_ratio(U, nP * nN), _safe_ratio(Utot[:, 0], (npa * nna)[:, 0])

    def events(self):
        return ("items", "auc")

    def event_sides(self):
        return self.pos_from, self.neg_from

    def compares_items(self, comp) -> bool:
        return True

    def tie_sides(self, spec, iy, c, in_group):
        side = {"group": in_group, "rest": ~in_group}
        return (iy == c) & side[self.pos_from], (iy >= 0) & (iy != c) & side[self.neg_from]

    def closed_form(self, spec, comp) -> bool:
        return spec.view == "group"


@dataclass(frozen=True)
class GoldProbScore(Score):
    """f(x, y(x)): each example's probability of its own gold class."""

    name: str = "gold_prob"
    formula: str = "f(x, y(x))"
    label_based: bool = True
    per_class: bool = False
    select: str = "all"
    kind: str = "gold"

    set_valued = True

    def no_tuple_note(self, ad, c) -> str:
        return "no counterfactual tuple whose members are all labelled"

    def members(self, ad, c):
        return _item_members(ad, c, lambda P, iy: P[np.arange(len(iy)), np.where(iy >= 0, iy, 0)],
                             lambda iy: iy >= 0, row_labels=True)

    def closed_form(self, spec, comp) -> bool:
        if spec.view == "group":
            return comp.name in ("W1", "AEG") and self.select in _SELECTIONS
        return not spec.per_template


@dataclass(frozen=True)
class MeanScore(Score):
    """mean{f(x, c): x in A}."""

    name: str = "mean_prob"
    select: str = "all"
    formula: str = "mean{f(x,c): x in A}"
    per_class: bool = True
    kind: str = "mean"

    @property
    def label_based(self) -> bool:
        return self.select != "all"

    def group_phi(self, ad, c) -> dict:
        k = ad.k
        sel = select_items(ad.item_y, self.select, c)
        ig = ad.item_g()
        vals = ad.item_P[:, c]
        w = np.ones(len(ig)) if ad.row_weight is None else ad.row_weight[ad.item_row]
        cnt = np.bincount(ig[sel], weights=w[sel], minlength=k).astype(float)
        s = np.bincount(ig[sel], weights=vals[sel] * w[sel], minlength=k)
        n_raw = np.bincount(ig[sel], minlength=k).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            gv = s / cnt
            rv = (s.sum() - s) / (cnt.sum() - cnt)
        av = np.repeat(s.sum() / cnt.sum() if cnt.sum() else np.nan, k)
        notes = [f"empty score set for group {ad.groups[t]!r}" for t in range(k)]
        return dict(
            group=(gv, n_raw == 0, notes, n_raw),
            all=(av, np.repeat(n_raw.sum() == 0, k), ["empty score set"] * k, np.repeat(n_raw.sum(), k)),
            rest=(rv, (n_raw.sum() - n_raw) == 0, [f"empty rest of {ad.groups[t]!r}" for t in range(k)], n_raw.sum() - n_raw),
        )

    def weighted_sides(self, items, pos, neg) -> tuple[dict, np.ndarray]:
        """Group, rest and all means of f(x, c) under resampling weights (the template balance's multipliers
        scale sums and counts alike, so a mean is that of the examples)."""
        cats = {"all": (POS, NEG, UNLABELLED), "pos": (POS,), "neg": (NEG,)}[self.select]
        n, s = items.n(cats), items.sums(cats)
        na, sa = n.sum(1, keepdims=True), s.sum(1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            gv, rv, av = s / n, (sa - s) / (na - n), np.broadcast_to(sa / na, n.shape)
        return {"group": (gv, n == 0), "rest": (rv, (na - n) == 0), "all": (av, np.broadcast_to(na == 0, n.shape))}, av[:, 0]

    def template_differences(self, spec, comp, values, segment, n_segments, group, k, pairs) -> np.ndarray:
        J = n_segments
        cell = segment * k + group  # sums in item order, as np.add.at would add them
        cnt = np.bincount(cell, minlength=J * k).astype(float).reshape(J, k)
        s = np.bincount(cell, weights=values, minlength=J * k).reshape(J, k)
        with np.errstate(divide="ignore", invalid="ignore"):
            m = np.where(cnt > 0, s / np.where(cnt > 0, cnt, 1), np.nan)
        return np.stack([comp.fn(m[:, a], m[:, b])[0] for a, b in pairs], axis=1)

    def closed_form(self, spec, comp) -> bool:
        if spec.view == "group":  # a scalar comparison of the sides' weighted means (ProbGap)
            return comp.kind == "scalar" and self.select in _SELECTIONS
        return spec.per_template


def _safe_ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, np.nan, num / np.where(den == 0, 1.0, den))


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
        RateScore("TPR", _tpr, "TP / (TP + FN)", outcomes=("tp", "fn"), parts=("tp", "tp+fn")),
        RateScore("recall", _tpr, "TP / (TP + FN)", outcomes=("tp", "fn"), parts=("tp", "tp+fn")),
        RateScore("FNR", _fnr, "FN / (TP + FN)", outcomes=("tp", "fn"), parts=("fn", "tp+fn")),
        RateScore("FPR", _fpr, "FP / (FP + TN)", outcomes=("fp", "tn"), parts=("fp", "fp+tn")),
        RateScore("TNR", _tnr, "TN / (FP + TN)", outcomes=("fp", "tn"), parts=("tn", "fp+tn")),
        RateScore("precision", _precision, "TP / (TP + FP)", outcomes=("tp", "fp"), parts=("tp", "tp+fp")),
        RateScore("F1", _f1, "2PR / (P + R)", outcomes=("tp", "fp+fn"), parts=("tp+tp", "tp+tp+fp+fn")),
        RateScore("positive_rate", _positive_rate, "|{yhat = c}| / |A|", label_based=False, outcomes=("pp", "n-pp"),
                  parts=("pp", "n")),
        RateScore("accuracy", _accuracy, "|{yhat = y}| / |A|", per_class=False, outcomes=("correct", "lab-correct"),
                  parts=("correct", "lab")),
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
        RateScore("identity_recall", _identity_tpr, "TP / (TP + FN) of identity spans", at=IDENTITY,
                  outcomes=("tp", "fn"), parts=("tp", "tp+fn")),
        RateScore("identity_FNR", _identity_fnr, "FN / (TP + FN) of identity spans", at=IDENTITY,
                  outcomes=("tp", "fn"), parts=("fn", "tp+fn")),
        SetScore("identity_prob", "all", "{f(x,c) at the identity term}", at=IDENTITY),
        SetScore("identity_prob_pos", "pos", "{f(x,c) at the identity term, y = c}", at=IDENTITY),
    ]
}


def get_score(phi):
    """Look up a registered score by name, or return a score object as is."""
    if isinstance(phi, Score):
        return phi
    if isinstance(phi, str):
        try:
            return SCORES[phi]
        except KeyError:
            raise MetricError(f"unknown score {phi!r}; known: {sorted(SCORES)}") from None
    raise MetricError(f"score must be a name or a score object, got {phi!r}")


def rate_score(name: str, fn: Callable, formula: str = "", *, label_based: bool = True, per_class: bool = True,
               at: str = "all", outcomes: tuple | None = None, parts: tuple | None = None):
    """Define a new prediction-based rate from summed counts.

    ``fn(sums)`` gets a dict with arrays ``tp, fp, fn, tn, pp, n, lab,
    correct`` and returns ``(value, undefined_mask, reason)``. ``at="identity"``:
    the counts of the identity term's own span (taggers only). ``outcomes``
    and ``parts`` (count expressions, as :class:`RateScore` has them): what
    the evidence counts and the exact paired bound read (None: not counted).
    """
    if at not in AT:
        raise MetricError(f"{name}: at must be one of {list(AT)}, got {at!r}")
    return RateScore(name, fn, formula, label_based=label_based, per_class=per_class, at=at, outcomes=outcomes,
                     parts=parts)
