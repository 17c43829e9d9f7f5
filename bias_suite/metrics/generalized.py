r"""Generalized bias metrics (Czarnowska et al. 2021), vectorized.

For one attribute with groups :math:`T = \{t_1..t_k\}`, a score function
:math:`\phi`, a comparison :math:`d`, a normalizer :math:`N` and a background
:math:`\beta`:

.. math::

    PCM = \frac{1}{N} \sum_{\{t_i, t_j\} \subset T} d(\phi(S^{t_i}), \phi(S^{t_j}))

    BCM = \frac{1}{N} \sum_{t \in T} d(\phi(\beta^t), \phi(S^t)),
    \quad \beta^t \in \{S, S \setminus S^t\}

    VBCM = [d(\phi(\beta^t), \phi(S^t))]_{t \in T}

    MCM = d(\phi(S^{t_1}), \dots, \phi(S^{t_k}))

Group view: :math:`S^t` is every example of group t. Counterfactual view:
the same formulas inside each counterfactual tuple (one example per group of
a template), averaged over tuples; or, with ``per_template``, on the sets
:math:`S_j^t` of each template, averaged over templates.

Each builder returns a list of result rows (dicts with the tidy columns).
Undefined values are ``None`` with a ``note``; an accumulated value with an
undefined part is ``None`` with a note naming the parts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import Callable

import numpy as np

from ..exceptions import MetricError
from .comparisons import COMPARISONS, get_comparison
from .scores import get_score, select_items
from .sets import NEG, POS, UNLABELLED, BlockHist

__all__ = ["AttributeData", "GENERALIZED", "POS", "NEG", "UNLABELLED", "group_metric", "counterfactual_metric",
           "member_values", "per_template_differences", "item_selection", "normalizer_value", "null_rows"]

_SELECT_CATS = {"all": [POS, NEG, UNLABELLED], "pos": [POS], "neg": [NEG]}

GENERALIZED = ("PCM", "BCM", "VBCM", "MCM")

# the built-in scalar comparisons: elementwise, so any array shape goes through in one call
_ELEMENTWISE = tuple(c.fn for c in COMPARISONS.values() if c.kind == "scalar")


# ------------------------------------------------------------------ data
@dataclass
class AttributeData:
    """Everything the builders need about one attribute, as arrays.

    ``items`` are the units that carry probabilities (examples for
    classification, token positions for sequence labelling); ``rows`` are
    examples (the units of counts, groups and tuples).
    """

    attribute: str
    groups: list
    classes: tuple
    # examples
    g: np.ndarray  # (n,) group code
    y: np.ndarray  # (n,) gold class index, -1 unlabelled
    yhat: np.ndarray  # (n,) predicted class index
    counts: Callable | None = None  # c -> dict of per-example count arrays
    # probability items
    item_row: np.ndarray | None = None  # (m,) example of each item
    item_P: np.ndarray | None = None  # (m, C)
    item_y: np.ndarray | None = None  # (m,) gold class per item, -1 unlabelled
    # counterfactual
    tuples: np.ndarray | None = None  # (M, k) example positions (attribute-local)
    tuple_template: np.ndarray | None = None
    templates: list = field(default_factory=list)  # complete templates
    row_template: np.ndarray | None = None  # (n,) index into templates, -1 if incomplete
    # (m,) aligned position of each item within its example; None: one item per example (item index == row)
    item_pos: np.ndarray | None = None
    # (n,) weight of each example in the group view (template balance); None: every example counts once
    row_weight: np.ndarray | None = None

    def hist(self, c) -> BlockHist:
        """Scores f(x, c) of all items, sorted once per class and counted per
        (positive / negative / unlabelled, group, distinct value); cached."""
        cache = self.__dict__.setdefault("_hist_cache", {})
        if c not in cache:
            yy = self.item_y
            cat = np.where(yy < 0, UNLABELLED, np.where(yy == c, POS, NEG))
            w = None if self.row_weight is None else self.row_weight[self.item_row]
            cache[c] = BlockHist(self.item_P[:, c], self.item_g(), self.k, cat, 3, weights=w)
        return cache[c]

    @property
    def k(self) -> int:
        return len(self.groups)

    def item_g(self) -> np.ndarray:
        return self.g[self.item_row]

    def pairs(self):
        return list(combinations(range(self.k), 2))

    def pair_names(self):
        return [f"{self.groups[a]}|{self.groups[b]}" for a, b in self.pairs()]

    def class_counts(self, c) -> dict:
        """Per-example counts for class c (None: class-free counts)."""
        return self.counts(c)

    def group_sums(self, c):
        """Per-group, total and rest-of-group sums of the class-c counts
        (weighted and raw; computed once per class, fresh dicts on every call)."""
        return _group_sums(self, c)


def normalizer_value(N, k: int) -> float:
    """N as a number: "1", "groups" (|T|), "pairs" (C(|T|,2)), a number, or
    a callable of |T|."""
    if N in (None, "1", 1):
        return 1.0
    if N in ("groups", "|T|"):
        return float(k)
    if N in ("pairs", "C(|T|,2)"):
        return float(comb(k, 2))
    if callable(N):
        return float(N(k))
    if isinstance(N, (int, float)):
        return float(N)
    raise MetricError(f"unknown normalizer {N!r}: use '1', 'groups', 'pairs', a number or a callable")


def _row(spec, ad, cls, group, value, n, note=None):
    if value is not None:
        value = float(value)
        if not np.isfinite(value):
            value, note = None, note or "undefined (non-finite value)"
    return {
        "metric": spec.name,
        "family": spec.generalized,
        "view": spec.view,
        "attribute": ad.attribute,
        "class": cls,
        "group": group,
        "value": value,
        "ci_low": None,
        "ci_high": None,
        "n": None if n is None else int(n),
        "note": note if value is None else None,
    }


def _accumulate(parts, bad, notes, N):
    """Sum of parts / N, or None with a note listing the undefined parts."""
    if len(parts) == 0:
        return None, "no groups to compare (the attribute needs at least two groups)"
    if np.any(bad):
        which = list(dict.fromkeys(notes[i] for i in np.flatnonzero(bad) if notes[i]))
        return None, "undefined because a part is undefined: " + "; ".join(which)
    if N == 0:
        return None, "normalizer N is 0"
    return float(np.sum(parts) / N), None


# ------------------------------------------------- group view: phi per set
def item_selection(ad: AttributeData, select: str, c: int) -> np.ndarray:
    """Items kept by a set score's selection for class c."""
    return select_items(ad.item_y, select, c)


def _group_sums(ad, c):
    """Per-group, total and rest-of-group sums of the class-c counts
    (computed once per attribute and class; fresh dicts on every call)."""
    cache = ad.__dict__.setdefault("_group_sums_cache", {})
    if c not in cache:
        cnt = ad.class_counts(c)
        k = ad.k
        w = ad.row_weight
        sums = {name: np.bincount(ad.g, weights=v if w is None else v * w, minlength=k).astype(float)
                for name, v in cnt.items()}
        total = {name: v.sum() for name, v in sums.items()}
        rest = {name: total[name] - v for name, v in sums.items()}
        raw = sums if w is None else {name: np.bincount(ad.g, weights=cnt[name], minlength=k).astype(float)
                                      for name in ("n", "lab") if name in cnt}
        raw_total = {name: v.sum() for name, v in raw.items()}
        raw_rest = {name: raw_total[name] - v for name, v in raw.items()}
        cache[c] = (sums, total, rest, raw, raw_total, raw_rest)
    return tuple(dict(d) for d in cache[c])


# ------------------------------------------------------------ group view
def group_metric(spec, ad: AttributeData, c, cls_name) -> list:
    """Rows of one metric, one class, group view."""
    score = get_score(spec.score)
    comp = get_comparison(spec.comparison)
    gen = spec.generalized
    k = ad.k
    groups = ad.groups
    if gen in ("PCM", "MCM") and k < 2:
        if gen == "PCM":
            return [_row(spec, ad, cls_name, None, None, None, "needs at least two groups")]
        return [_row(spec, ad, cls_name, None, None, None, "needs at least two groups")]
    if score.set_valued:
        return _group_set_metric(spec, ad, score, comp, c, cls_name)
    phi = score.group_phi(ad, c)
    gv, gb, gnotes, gn = phi["group"]
    rows = []
    if gen == "PCM":
        if comp.kind != "scalar":
            raise MetricError(f"{spec.name}: comparison {comp.name!r} needs a set-valued score")
        N = normalizer_value(spec.normalizer, k)
        pairs = ad.pairs()
        a = np.array([p[0] for p in pairs])
        b = np.array([p[1] for p in pairs])
        val, dbad = comp.fn(gv[a], gv[b])
        bad = gb[a] | gb[b] | dbad
        notes = []
        for i, (x, z) in enumerate(pairs):
            if gb[x] or gb[z]:
                notes.append(gnotes[x] if gb[x] else gnotes[z])
            elif dbad[i]:
                notes.append(f"{comp.name} undefined for {groups[x]}|{groups[z]} (zero denominator)")
            else:
                notes.append(None)
        for i, (x, z) in enumerate(pairs):
            rows.append(_row(spec, ad, cls_name, f"{groups[x]}|{groups[z]}", None if bad[i] else val[i], gn[x] + gn[z], notes[i]))
        acc, note = _accumulate(val, bad, notes, N)
        rows.append(_row(spec, ad, cls_name, None, acc, gn.sum(), note))
        return rows
    if gen in ("BCM", "VBCM"):
        if comp.kind != "scalar":
            raise MetricError(f"{spec.name}: comparison {comp.name!r} needs a set-valued score")
        if score.own_background:  # an AUC holds its background in its sides: the value as it is
            bv, bb, bnotes = gv, np.zeros(k, bool), [None] * k
        else:
            key = {"all": "all", "S": "all", "rest": "rest", "S\\S^t": "rest"}.get(spec.background)
            if key is None:
                raise MetricError(f"{spec.name}: background must be 'all' or 'rest', got {spec.background!r}")
            bv, bb, bnotes, _ = phi[key]
        val, dbad = comp.fn(bv, gv)
        bad = gb | bb | dbad
        notes = []
        for t in range(k):
            if gb[t]:
                notes.append(gnotes[t])
            elif bb[t]:
                notes.append(bnotes[t])
            elif dbad[t]:
                notes.append(f"{comp.name} undefined for group {groups[t]!r} (zero denominator)")
            else:
                notes.append(None)
        for t in range(k):
            rows.append(_row(spec, ad, cls_name, groups[t], None if bad[t] else val[t], gn[t], notes[t]))
        if gen == "BCM":
            acc, note = _accumulate(val, bad, notes, normalizer_value(spec.normalizer, k))
            rows.append(_row(spec, ad, cls_name, None, acc, gn.sum(), note))
        return rows
    if gen == "MCM":
        if comp.kind != "multi":
            raise MetricError(f"{spec.name}: MCM needs a multi-group comparison (std, range), got {comp.name!r}")
        if gb.any():
            which = "; ".join(gnotes[t] for t in np.flatnonzero(gb))
            return [_row(spec, ad, cls_name, None, None, gn.sum(), "undefined because a part is undefined: " + which)]
        return [_row(spec, ad, cls_name, None, comp.fn(gv), gn.sum())]
    raise MetricError(f"unknown generalized metric {gen!r}")


def _group_set_metric(spec, ad, score, comp, c, cls_name):
    if comp.kind != "set":
        raise MetricError(f"{spec.name}: set-valued score {score.name!r} needs a set comparison (W1, AEG)")
    k, groups, gen = ad.k, ad.groups, spec.generalized
    h = ad.hist(c)
    G = h.counts[_SELECT_CATS[score.select]].sum(0)  # (k, nb): the groups' score sets
    ng = h.n_items[_SELECT_CATS[score.select]].sum(0)  # items per group (the weights of G may not be counts)
    fn = h.w1 if comp.name == "W1" else h.aeg
    what = {"all": "", "pos": f" with gold {ad.classes[c]!r}", "neg": f" with gold other than {ad.classes[c]!r}"}[score.select]
    rows = []
    if gen == "PCM":
        pairs = ad.pairs()
        a = [p[0] for p in pairs]
        b = [p[1] for p in pairs]
        val = fn(G[a], G[b])
        bad = ~np.isfinite(val)
        notes = [
            f"empty score set: no examples{what} in group {groups[x] if ng[x] == 0 else groups[z]!r}" if bad[i] else None
            for i, (x, z) in enumerate(pairs)
        ]
        for i, (x, z) in enumerate(pairs):
            rows.append(_row(spec, ad, cls_name, f"{groups[x]}|{groups[z]}", val[i], ng[x] + ng[z], notes[i]))
        acc, note = _accumulate(np.nan_to_num(val), bad, notes, normalizer_value(spec.normalizer, k))
        rows.append(_row(spec, ad, cls_name, None, acc, ng.sum(), note))
        return rows
    if gen in ("BCM", "VBCM"):
        if spec.background in ("all", "S"):
            B = np.broadcast_to(G.sum(0, keepdims=True), G.shape)
        elif spec.background in ("rest", "S\\S^t"):
            B = G.sum(0, keepdims=True) - G
        else:
            raise MetricError(f"{spec.name}: background must be 'all' or 'rest', got {spec.background!r}")
        val = fn(B, G)
        nb = B.sum(1)
        bad = ~np.isfinite(val)
        notes = []
        for t in range(k):
            if ng[t] == 0:
                notes.append(f"empty score set: no examples{what} in group {groups[t]!r}")
            elif nb[t] == 0:
                notes.append(f"empty background: no examples{what} outside group {groups[t]!r}")
            else:
                notes.append(None)
        for t in range(k):
            rows.append(_row(spec, ad, cls_name, groups[t], val[t], ng[t], notes[t]))
        if gen == "BCM":
            acc, note = _accumulate(np.nan_to_num(val), bad, notes, normalizer_value(spec.normalizer, k))
            rows.append(_row(spec, ad, cls_name, None, acc, ng.sum(), note))
        return rows
    raise MetricError(f"{spec.name}: {gen} with a set-valued score is not defined (use PCM, BCM or VBCM)")


# ---------------------------------------------------- counterfactual view
def member_values(ad, score, c):
    """Values of tuple members (M, k) or, when examples hold several items
    (``item_pos``), (M, k, L) at aligned positions, plus the mask of valid
    entries (the score's :meth:`~bias_suite.metrics.scores.Score.members`)."""
    return score.members(ad, c)


def null_rows(spec, ad, cls_name, note, n=None) -> list:
    """The rows a metric would have, all null with ``note``: PCM one per pair
    plus the accumulated value, BCM one per group plus the accumulated value,
    VBCM one per group, MCM the accumulated value."""
    gen = spec.generalized
    rows = []
    if gen == "PCM":
        rows = [_row(spec, ad, cls_name, p, None, n, note) for p in ad.pair_names()]
    elif gen in ("BCM", "VBCM"):
        rows = [_row(spec, ad, cls_name, g, None, n, note) for g in ad.groups]
    if gen != "VBCM":
        rows.append(_row(spec, ad, cls_name, None, None, n, note))
    return rows


def _tuple_values(ad, score, c):
    """The tuples' member values of one score and class, shared by every
    metric on that score: ``(Mv, pos_ok, w, Vz, one_position)`` with Mv the
    number of valid tuples (a tuple is valid when some aligned position is
    valid for every member), ``pos_ok`` (Mv, L) those positions, ``w`` their
    weights per tuple (None with one position), ``Vz`` (Mv, k, L) the values,
    0 at invalid positions. Cached on ``ad``; read-only."""
    cache = ad.__dict__.setdefault("_tuple_cache", {})
    key = (getattr(score, "name", None) or id(score), type(score).__name__, c)
    if key in cache:
        return cache[key]
    V, ok = member_values(ad, score, c)
    if V.ndim == 2:
        V, ok = V[:, :, None], ok[:, :, None]
    # a position counts when it is valid for every member; a tuple when it has such a position
    pos_ok = ok.all(axis=1)  # (M, L)
    tup_ok = pos_ok.any(axis=1)
    Mv = int(tup_ok.sum())
    if 0 < Mv < len(tup_ok):
        V, pos_ok = V[tup_ok], pos_ok[tup_ok]
    one_position = V.shape[2] == 1  # one item per example: every kept tuple has its one position valid
    if one_position and V.dtype == np.float64:
        w, Vz = None, V  # weight 1 on the one position, which is valid
    else:
        w = pos_ok / pos_ok.sum(axis=1, keepdims=True) if Mv else None  # weights of positions per tuple
        Vz = np.where(pos_ok[:, None, :], V, 0.0)
    cache[key] = (Mv, pos_ok, w, Vz, one_position)
    return cache[key]


def counterfactual_metric(spec, ad: AttributeData, c, cls_name) -> list:
    """Rows of one counterfactual metric for one class."""
    k, groups, gen = ad.k, ad.groups, spec.generalized
    if k < 2:
        return [_row(spec, ad, cls_name, None, None, None, "needs at least two groups")]
    if len(ad.templates) == 0:
        return null_rows(spec, ad, cls_name, "no template contains every group", 0)
    if spec.per_template:
        return _per_template_metric(spec, ad, c, cls_name)
    score = get_score(spec.score)
    comp = get_comparison(spec.comparison)
    why = score.no_tuple_note(ad, c)
    Mv, pos_ok, w, Vz, one_position = _tuple_values(ad, score, c)
    if Mv == 0:
        return null_rows(spec, ad, cls_name, why, 0)

    def per_tuple(x):  # x (M, L) -> position-average per tuple
        if one_position:  # weights 1 on the single position: the value itself
            return x[:, 0]
        return np.sum(np.where(pos_ok, x, 0.0) * w, axis=1)

    rows = []
    if gen == "PCM":
        if comp.kind != "scalar":
            raise MetricError(f"{spec.name}: counterfactual PCM needs a scalar comparison")
        N = normalizer_value(spec.normalizer, k)
        pairs = ad.pairs()
        if one_position and comp.fn in _ELEMENTWISE:  # every pair in one call
            a_idx = np.array([p[0] for p in pairs], dtype=np.int64)
            b_idx = np.array([p[1] for p in pairs], dtype=np.int64)
            X = Vz[:, :, 0]
            D, dbad = comp.fn(X[:, a_idx], X[:, b_idx])  # (M, pairs)
            if np.any(dbad):
                raise MetricError(f"{spec.name}: comparison undefined inside a tuple")
        else:
            D = []
            for a, b in pairs:
                d, dbad = comp.fn(Vz[:, a], Vz[:, b])
                if np.any(dbad & pos_ok):
                    raise MetricError(f"{spec.name}: comparison undefined inside a tuple")
                D.append(per_tuple(d))
            D = np.stack(D, axis=1)  # (M, pairs)
        means = np.ascontiguousarray(D.T).mean(axis=1)  # per pair, summed as D[:, i].mean() sums
        for i, name in enumerate(ad.pair_names()):
            rows.append(_row(spec, ad, cls_name, name, means[i], Mv))
        rows.append(_row(spec, ad, cls_name, None, (D.sum(axis=1) / N).mean(), Mv))
        return rows
    if gen == "MCM":
        if comp.kind != "multi":
            raise MetricError(f"{spec.name}: MCM needs a multi-group comparison (std, range)")
        d = comp.fn(np.moveaxis(Vz, 1, -1))  # (M, L)
        return [_row(spec, ad, cls_name, None, per_tuple(d).mean(), Mv)]
    if gen in ("BCM", "VBCM"):
        if comp.kind != "scalar":
            raise MetricError(f"{spec.name}: counterfactual {gen} needs a scalar comparison")
        total = Vz.sum(axis=1)  # (M, L)
        D = []
        for t in range(k):
            if spec.background in ("all", "S"):
                bg = total / k
            elif spec.background in ("rest", "S\\S^t"):
                bg = (total - Vz[:, t]) / (k - 1)
            else:
                raise MetricError(f"{spec.name}: background must be 'all' or 'rest'")
            d, _ = comp.fn(bg, Vz[:, t])
            D.append(per_tuple(d))
        D = np.stack(D, axis=1)
        for t in range(k):
            rows.append(_row(spec, ad, cls_name, groups[t], D[:, t].mean(), Mv))
        if gen == "BCM":
            rows.append(_row(spec, ad, cls_name, None, (D.sum(axis=1) / normalizer_value(spec.normalizer, k)).mean(), Mv))
        return rows
    raise MetricError(f"unknown generalized metric {gen!r}")


def per_template_differences(spec, ad, score, comp, c) -> np.ndarray:
    """d between the groups' sets S_j^a, S_j^b inside each complete template:
    an array (templates, pairs), NaN where a group has no items in the
    template (W1 for set scores, the comparison of the means for mean scores)."""
    k, J = ad.k, len(ad.templates)
    sel = item_selection(ad, getattr(score, "select", "all"), c)
    it_tpl = ad.row_template[ad.item_row]  # -1 for items of incomplete templates
    keep = sel & (it_tpl >= 0)
    vals = ad.item_P[keep, c]
    seg = it_tpl[keep]
    ig = ad.item_g()[keep]
    return score.template_differences(spec, comp, vals, seg, J, ig, k, ad.pairs())


def _per_template_metric(spec, ad, c, cls_name):
    """AvgIF-style metrics: compare the sets S_j^t of each template, then
    average over templates."""
    score = get_score(spec.score)
    comp = get_comparison(spec.comparison)
    k, gen = ad.k, spec.generalized
    if gen != "PCM":
        raise MetricError(f"{spec.name}: per-template counterfactual metrics are PCM")
    D = per_template_differences(spec, ad, score, comp, c)
    ok = np.isfinite(D).all(axis=1)  # templates where some group has no items are skipped
    nt = int(ok.sum())
    rows = []
    if nt == 0:
        note = (
            f"no template where every group has examples with gold class {ad.classes[c]!r}"
            if getattr(score, "select", "all") == "pos"
            else "no template contains every group"
        )
        return null_rows(spec, ad, cls_name, note, 0)
    D = D[ok]
    for i, name in enumerate(ad.pair_names()):
        rows.append(_row(spec, ad, cls_name, name, D[:, i].mean(), nt))
    rows.append(_row(spec, ad, cls_name, None, (D.sum(axis=1) / normalizer_value(spec.normalizer, k)).mean(), nt))
    return rows

