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

Where the bootstrap of a rate comparison degenerates (its events, or the
templates in which its two sides differ, are fewer than
``MIN_EVENT_TEMPLATES``), :func:`paired_bounds` gives the exact bound from
the number of templates whose predictions differ between the sides, which
the interval is then widened to.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..metrics.comparisons import get_comparison
from ..metrics.generalized import AttributeData
from ..metrics.materiality import RATIO_BAND
from ..metrics.scores import SCORES, get_score
from .signflip import EXACT_MAX, sign_flip_ps

__all__ = ["event_templates", "paired_bounds", "upper_share", "PairedBound", "MIN_EVENT_TEMPLATES", "OUTCOMES", "PARTS",
           "CHANCES"]

#: a row whose events come from fewer templates than this is inconclusive
MIN_EVENT_TEMPLATES = 5

#: the two outcomes each named rate separates, as count expressions (each rate's ``outcomes``)
OUTCOMES = {name: sc.outcomes for name, sc in SCORES.items() if getattr(sc, "outcomes", None) is not None}


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
    if score.own_background:  # an AUC: its positives against its negatives
        return True
    return spec.scale == "ratio"


def _presence(ad: AttributeData, score, c, tpl, J):
    """Per kind of event of ``score`` and class c: (presence, one, others,
    any), presence a list of (J, k) arrays (whether template j has an event
    of that kind for group t), then per kind the templates with one in each
    group, in any other group and in any group; None when the row count says
    it all. Cached on ``ad`` (metrics sharing a score share it)."""
    k = ad.k
    events = score.events()
    if events is None:
        return None  # every example is an event (or none is counted): the template count says it
    if events[0] == "counts":
        outcomes = events[1]
        key = ("rate", score.name, c)
    else:
        key = ("items", events[1], c)
    cache = ad.__dict__.setdefault("_event_presence", {})
    key = key + (id(tpl), J)
    if key not in cache:
        if key[0] == "rate":
            cnt = ad.class_counts(c)
            ones = np.ones(len(ad.g), bool)
            pres = [_present(_expression(cnt, o), ones, J, k, tpl, ad.g) for o in outcomes]
        else:
            iy, ig, it = ad.item_y, ad.item_g(), tpl[ad.item_row]
            pos, neg = iy == c, (iy >= 0) & (iy != c)
            sets = {"auc": (pos, neg), "pos": (pos,), "neg": (neg,)}[key[1]]
            pres = [_present(m.astype(float), m, J, k, it, ig) for m in sets]
        cache[key] = (pres, [P.sum(axis=0) for P in pres],
                      [((P.sum(axis=1)[:, None] - P) > 0).sum(axis=0) for P in pres],
                      [int(P.any(axis=1).sum()) for P in pres])
    return cache[key]


def _group_view(spec, ad: AttributeData, score, c, tpl, J) -> dict:
    k = ad.k
    counts = _presence(ad, score, c, tpl, J)
    if counts is None:
        return {}
    pres, one, others, anyg = counts
    sides = _sides(spec, score)
    bg_all = spec.background in ("all", "S")
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
        sides_of = score.event_sides()
        if sides_of is not None:  # each kind of event counted on its own side (an AUC's positives, negatives)
            na = one[0] if sides_of[0] == "group" else others[0]
            nb = one[1] if sides_of[1] == "group" else others[1]
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


# --------------------------------------------------------------------------
# intervals that cannot collapse: the exact paired bound for rates whose resampling degenerates
# --------------------------------------------------------------------------
#: each named rate as (numerator, denominator) count expressions: a set's rate is the sum of its
#: numerators over the sum of its denominators (F1 = 2 TP / (2 TP + FP + FN)) (each rate's ``parts``)
PARTS = {name: sc.parts for name, sc in SCORES.items() if getattr(sc, "parts", None) is not None}

#: the templates that give each rate a chance (its denominator), per class c: what "templates needed" counts
CHANCES = {
    "TPR": "'{c}' templates", "recall": "'{c}' templates", "FNR": "'{c}' templates",
    "identity_recall": "'{c}' templates", "identity_FNR": "'{c}' templates",
    "FPR": "templates not of '{c}'", "TNR": "templates not of '{c}'",
    "precision": "templates predicted '{c}'", "F1": "templates gold or predicted '{c}'",
    "positive_rate": "templates", "accuracy": "templates",
}


#: rates whose chances span two kinds of template: gold-c ones (where a true positive and a false negative
#: trade places) and the others (a false positive and a true negative); a difference of such rates is the
#: sum of the two kinds' differences, and each kind is judged by its own count of differing templates
MIXED = ("precision", "F1", "positive_rate")
_KIND_TEXT = ("'{c}' templates", "templates not of '{c}'")
#: how far a ratio's bound may reach for "negligible": 1 − 1/1.25 below 1 (and 1/(1 − that) = 1.25 above)
RATIO_ROOM = 1.0 - 1.0 / RATIO_BAND
#: the upper end of a ratio's bound where it has none
RATIO_CAP = 1e12


@dataclass(frozen=True)
class PairedBound:
    """The exact paired bound of one rate comparison (:func:`paired_bounds`).

    ``scale``: "diff" (``low``/``high`` bound the row's value, a signed
    difference), "abs" (they bound its signed basis; the absolute value
    lies in [0, max(−low, high)]) or "log" (they bound the ratio itself).
    ``n``: templates that give either side a chance; ``differing``: those whose contribution to the difference is
    not 0; ``c``: the largest per-template contribution times n, so that
    the bound is U(d, n) · c (for a ratio: the largest template's share of
    a side's events times its m event templates, of the end that needs
    more templates, each of which stands for ``per`` templates with a
    chance); ``sd``: the standard deviation over the n templates of n times
    their contribution (for a ratio on the log scale, over the rate of its
    denominator side); ``unit``: what the n templates are ("'neg'
    templates"); ``alpha``: the one-sided level of U; ``exact``: whether the
    row's interval is the bound (set by the bootstrap's interval stage);
    ``extend``: for a rate of two kinds of template (:data:`MIXED`) whose
    templates differ enough in all but one kind, how far that kind's own
    bound reaches below and above its observed share of the difference
    (0, 0 otherwise), and ``sparse`` names it ("0 of 45 'pos' templates");
    ``p``: the two-sided sign-flip p-value of the templates' contributions
    (:mod:`bias_suite.stats.signflip`) where at most ``EXACT_MAX`` of them
    differ (exact there), the p-value of the row's claim where the interval
    is not the bound itself; None with more (the bootstrap's t decides)."""

    scale: str
    low: float
    high: float
    n: int
    differing: int
    c: float
    sd: float
    unit: str
    alpha: float
    exact: bool = False
    extend: tuple = (0.0, 0.0)
    sparse: str = ""
    per: float = 1.0
    p: float | None = None

    def templates_needed(self, need: float, target: float, z: float) -> float | None:
        """How many templates of :attr:`unit` would make the exact bound
        decide the row: with no differing template (the value is then at
        b), the n with U(0, n) · c = ``target`` (the room to the threshold
        in linear units: tau, or 1 − 1/1.25 for a ratio), ln(alpha) / ln(1 −
        target / c), times :attr:`per`; else with the paired design's standard error sd / √n,
        the n whose half-width z · sd / √n is ``need`` (as far as the value
        is from the threshold, or from b where it is past it). None when
        nothing can be said."""
        if self.differing == 0:
            if not (target > 0 and self.c > 0):
                return None
            return self.per * (1.0 if target >= self.c else math.log(self.alpha) / math.log1p(-target / self.c))
        if not (need > 0 and self.sd > 0):
            return None
        return (z * self.sd / need) ** 2

    def needed_text(self, halfwidth: float, need: float, target: float, z: float) -> str | None:
        """"about 19 more 'neg' templates (59 in all) would decide it": under
        the exact bound where the interval is that bound
        (:meth:`templates_needed`), else as the interval's half-width shrinks
        (1 / √n) to ``need``; None when nothing can be said."""
        if self.n <= 0:
            return None
        if self.exact:
            n_star = self.templates_needed(need, target, z)
        else:
            n_star = self.n * (halfwidth / need) ** 2 if halfwidth > 0 and need > 0 else None
        if n_star is None or not np.isfinite(n_star):
            return None
        if n_star > 100 * self.n:
            return f"it would take more than 100× the {self.unit} to decide"
        total = math.ceil(max(n_star, 1.1 * self.n))
        return f"about {total - self.n} more {self.unit} ({total} in all) would decide it"


def upper_share(k, n, alpha: float) -> np.ndarray:
    """U(k, n): the one-sided 1 − alpha Clopper-Pearson upper bound on a
    proportion with k of n (arrays; 1 where k = n, 1 − alpha^(1/n) at k = 0)."""
    from scipy.special import betaincinv  # the beta distribution's quantile (scipy.stats.beta.ppf) without its checks

    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = betaincinv(k + 1, np.maximum(n - k, 1e-300), 1.0 - alpha)
    return np.where(k >= n, 1.0, u)


def paired_bounds(spec, ad: AttributeData, tpl: np.ndarray, J: int, confidence: float = 0.95) -> dict:
    """{(class name, group or pair label): :class:`PairedBound`}: how far a
    rate comparison of the group view (a pair's members, or a group and
    its background; a difference, an absolute difference through its signed
    basis, or a ratio) can be from no bias with the templates as paired
    units, for rows whose bootstrap interval degenerates (events in a few
    templates, or the two sides differing in a few;
    :func:`bias_suite.stats.bootstrap.intervals.fill` decides).

    With side A (the group, a pair's first member) and side B (the
    background, the second member), per template j their numerators a_j,
    b_j, denominators u_j, v_j and example weights w_j, x_j (sums N, D, W,
    X over templates; rates p_A = N_A / D_A, p_B = N_B / D_B)::

        D_j = ((a_j − p_B u_j) / W_A − (b_j − p_B v_j) / X_B) · W_A / D_A

    sums to p_A − p_B over templates and is 0 wherever the two sides' counts
    are in proportion to their weights (the template treats them alike). Of
    the n templates where either side has a chance, d+ have D_j > 0 and d−
    D_j < 0, and no D_j is larger than s_j = max(u_j / W_A, v_j / X_B) ·
    W_A / D_A (0 ≤ a ≤ u, 0 ≤ b ≤ v). With c = n · max_j s_j (1 when every
    template carries the same share), the difference lies in

        [−U(d−, n) · c, U(d+, n) · c],

    U(k, n) the one-sided 1 − alpha Clopper-Pearson upper bound on a
    proportion (alpha = 1 − confidence): at most a share U(d+, n) of such
    templates raise A above B, each by at most c / n. Each end holds with
    probability 1 − alpha, which is the two one-sided tests' reading of
    "within ±tau" at level alpha; the bound always holds 0. A ratio p_A /
    p_B is at least 1 − (the share of B's events that could lie where A
    is below B, :func:`_fall`) and at most 1 / (1 − the same with the sides
    swapped), counted over each side's event templates.
    Rows the module doc says nothing about, and rates that are not
    proportions (a tagger's positive rate counts spans per sentence), are
    left out."""
    score = get_score(spec.score)
    if spec.view != "group" or getattr(score, "parts", None) is None:
        return {}
    if spec.generalized not in ("PCM", "BCM", "VBCM"):
        return {}
    comp = get_comparison(spec.comparison).name
    pcm = spec.generalized == "PCM"
    if comp in ("abs", "diff"):
        scale = comp
    elif spec.scale == "ratio":
        scale = "log"
    else:
        return {}
    # the row's orientation: +1 when it reads side A against side B (a pair's first − second, phi(group) −
    # phi(background), an absolute difference's signed basis, phi(group) / phi(rest)); d(background, group)
    # of a group's own "diff" or "ratio" reads B against A
    sign = -1.0 if (not pcm and comp in ("diff", "ratio")) else 1.0
    background = "rest" if spec.background not in ("all", "S") else "all"
    # metrics that compare one rate the same way share their bounds (FNED and FNED*, TPR-Gap and TPR-Diff)
    cache = ad.__dict__.setdefault("_paired_bounds", {})
    key = (score.name, scale, sign, pcm, background, bool(spec.per_class), float(confidence), id(tpl), J)
    if key not in cache:
        cache[key] = _bounds(score, scale, sign, pcm, background, bool(spec.per_class), ad, tpl, J, confidence)
    return cache[key]


def _bounds(score, scale, sign, pcm, background, per_class, ad, tpl, J, confidence) -> dict:
    alpha = 1.0 - float(confidence)
    groups = list(ad.groups)
    if pcm:
        pairs = ad.pairs()
        ia = np.array([x for x, _ in pairs], dtype=np.int64)
        ib = np.array([y for _, y in pairs], dtype=np.int64)
        labels = [f"{groups[x]}|{groups[y]}" for x, y in pairs]
    else:
        ia = ib = np.arange(ad.k)
        labels = groups
    classes = list(enumerate(ad.classes)) if per_class else [(0, "all")]
    num_e, den_e = score.parts
    # per class, template and side: numerators, denominators and example weights, (C, J, rows) each;
    # every class at once (elementwise, so each class's numbers are those it would get alone)
    sides = []
    for c, _ in classes:
        S = _class_sums(ad, c, tpl, J)
        gold = _expression(S, "tp+fn") if {"tp", "fn"} <= set(S) else np.zeros(S["n"].shape)  # gold-c chances
        parts = [_expression(S, num_e), _expression(S, den_e), np.asarray(S["n"], float), gold]
        first = [x[:, ia] for x in parts]
        if pcm:
            second = [x[:, ib] for x in parts]
        else:
            total = [x.sum(axis=1, keepdims=True) for x in parts]
            second = ([np.broadcast_to(t, x.shape) for t, x in zip(total, parts)] if background == "all"
                      else [t - x for t, x in zip(total, parts)])
        sides.append(first + second)
    a, u, w, gold_a, b, v, x, gold_b = (np.stack(z) for z in zip(*sides))
    N_A, D_A, W_A, N_B, D_B, X_B = (z.sum(axis=1) for z in (a, u, w, b, v, x))
    ok = (D_A > 0) & (D_B > 0) & (W_A > 0) & (X_B > 0)
    # a rate that is not a proportion (a tagger's positive rate counts predicted spans per sentence, and can
    # pass 1) has no such bound: its rows are left out
    tol = 1e-9 * np.maximum(np.maximum(u, v).max(axis=1), 1.0)
    ok &= ((a >= -tol[:, None]) & (a <= u + tol[:, None]) & (b >= -tol[:, None]) & (b <= v + tol[:, None])).all(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pA, pB = N_A / D_A, N_B / D_B
        scaleA = W_A / D_A
        D = ((a - pB[:, None] * u) / W_A[:, None] - (b - pB[:, None] * v) / X_B[:, None]) * scaleA[:, None]
        s = np.maximum(u / W_A[:, None], v / X_B[:, None]) * scaleA[:, None]
    ok &= np.isfinite(pA) & np.isfinite(pB)
    D, s = np.where(ok[:, None], D, 0.0), np.where(ok[:, None], s, 0.0)
    chance = (u + v) > 0
    n = chance.sum(axis=1)
    c = n * s.max(axis=1)
    eps = 1e-9 * s.max(axis=1, keepdims=True)
    d_pos, d_neg = (D > eps).sum(axis=1), (D < -eps).sum(axis=1)
    value = D.sum(axis=1)
    ext_low, ext_high, sparse = _kinds(score.name, chance, (gold_a + gold_b) > 0, D, s, eps, alpha)
    nn = np.maximum(n, 2)
    dev = np.where(chance, n[:, None] * D - value[:, None], 0.0)
    sd = np.sqrt((dev ** 2).sum(axis=1) / (nn - 1))
    up, down = (np.minimum(upper_share(d, np.maximum(n, 1), alpha) * c, 1.0) for d in (d_pos, d_neg))
    ok &= n >= 1
    if sign < 0:
        ext_low, ext_high = -ext_high, -ext_low
    per = np.ones(n.shape)
    if scale != "log":
        low, high = (-down, up) if sign > 0 else (-up, down)
        unit_c, unit_sd = c, sd
    else:  # a ratio: how far each side can fall below the other, as a share of the other's own events
        ref = pB if sign > 0 else pA
        ok &= (pA > 0) & (pB > 0)
        falls = [_fall(a, u, w, b, v, x, alpha), _fall(b, v, x, a, u, w, alpha)]  # A below B, B below A
        (fall_num, m_num, c_num), (fall_den, m_den, c_den) = falls if sign > 0 else falls[::-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            low = np.maximum(1.0 - fall_num, 0.0)
            # (no upper end where a side's events could all move: 1e12, as the verdicts read a ratio of 0 as 1e-12)
            high = np.minimum(np.where(fall_den < 1.0, 1.0 / (1.0 - fall_den), RATIO_CAP), RATIO_CAP)
            unit_sd = sd / ref
            ext_low, ext_high = ext_low / ref, ext_high / ref
            # "templates needed" (no differing template): the end that needs more templates
            need = [n / np.maximum(m, 1) * np.log(alpha) / np.log1p(-np.minimum(RATIO_ROOM / cc, 1 - 1e-12))
                    for m, cc in ((m_num, c_num), (m_den, c_den))]
            first_end = need[0] >= need[1]
            unit_c = np.where(first_end, c_num, c_den)
            per = np.where(first_end, n / np.maximum(m_num, 1), n / np.maximum(m_den, 1))
    out = {}
    # the sign-flip test where it is exact; with more differing templates the bootstrap's t, whose
    # spread (centred on the value) is the tighter one once an effect moves most of them one way
    cis, iis = np.nonzero(ok & (d_pos + d_neg <= EXACT_MAX))
    flips = dict(zip(zip(cis.tolist(), iis.tolist()),
                     sign_flip_ps(np.moveaxis(D, 1, 2)[cis, iis], eps[cis, 0, iis]).tolist()))
    for ci, i in zip(*np.nonzero(ok)):
        p_flip = flips.get((int(ci), int(i)))
        cls = classes[ci][1]
        unit = CHANCES[score.name].format(c=cls) if per_class else "templates"
        said = "; ".join(f"{int(d_k[ci, i])} of {int(n_k[ci, i])} " + _KIND_TEXT[k].format(c=cls)
                         for k, d_k, n_k in sparse if d_k[ci, i] >= 0)
        out[(cls, labels[i])] = PairedBound(scale, float(low[ci, i]), float(high[ci, i]), int(n[ci, i]),
                                            int(d_pos[ci, i] + d_neg[ci, i]), float(unit_c[ci, i]),
                                            float(unit_sd[ci, i]), unit, alpha,
                                            extend=(float(ext_low[ci, i]), float(ext_high[ci, i])), sparse=said,
                                            per=float(per[ci, i]), p=p_flip)
    return out


def _fall(a, u, w, b, v, x, alpha):
    """How far side A's rate can fall below side B's, as a share of B's
    own: (p_B − p_A) / p_B is at most the share of B's events (and of any
    denominator A has beyond B's, at B's rate) in the templates where A is
    below B. Of the m templates that could hold such a share (t_j > 0), d
    have A below B: the bound is U(d, m) · c, c = m · max_j t_j. Returns
    (bound, m, c), each (classes, rows)."""
    N_B, D_A, D_B, W_A, X_B = b.sum(axis=1), u.sum(axis=1), v.sum(axis=1), w.sum(axis=1), x.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pB = (N_B / D_B)[:, None]
        Wa, Xb, Da = W_A[:, None], X_B[:, None], D_A[:, None]
        below = ((a - pB * u) / Wa - (b - pB * v) / Xb) * Wa / Da
        t = (b / Xb + pB * np.maximum(u / Wa - v / Xb, 0.0)) * Wa / Da / pB
    t = np.where(np.isfinite(t), t, 0.0)
    eps = 1e-9 * np.maximum(t.max(axis=1, keepdims=True), 1e-300)
    can = t > eps
    m = can.sum(axis=1)
    d = (can & (np.where(np.isfinite(below), below, 0.0) < -eps)).sum(axis=1)
    c = m * t.max(axis=1)
    return upper_share(d, np.maximum(m, 1), alpha) * c, m, c


def _kinds(name, chance, gold, D, s, eps, alpha):
    """A rate of two kinds of template (:data:`MIXED`): per kind k (the
    gold-c templates, the others) with n_k templates and fewer than
    ``MIN_EVENT_TEMPLATES`` differing, how far its exact bound
    [−U(d−_k, n_k) c_k, U(d+_k, n_k) c_k] (c_k = n_k times its largest
    template share) reaches below and above its observed share of the
    difference: the bootstrap holds that share fixed. Returns (extend
    below, extend above, [(kind, differing or −1, n_k)])."""
    zero = np.zeros(chance.shape[::2])
    if name not in MIXED:
        return zero, zero, []
    lo, hi, sparse = zero.copy(), zero.copy(), []
    for k, K in enumerate((chance & gold, chance & ~gold)):
        n_k = K.sum(axis=1)
        pos, neg = (K & (D > eps)).sum(axis=1), (K & (D < -eps)).sum(axis=1)
        c_k = n_k * np.where(K, s, 0.0).max(axis=1)
        few = (n_k > 0) & (pos + neg < MIN_EVENT_TEMPLATES)
        seen = np.where(K, D, 0.0).sum(axis=1)
        m = np.maximum(n_k, 1)
        lo += np.where(few, -upper_share(neg, m, alpha) * c_k - seen, 0.0)
        hi += np.where(few, upper_share(pos, m, alpha) * c_k - seen, 0.0)
        sparse.append((k, np.where(few, pos + neg, -1), n_k))
    return lo, hi, sparse


def _class_sums(ad: AttributeData, c, tpl, J) -> dict:
    """Per class c, the (J, k) sums per template and group of every count,
    each example weighted as the group view weighs it (template balance),
    by count name. Cached on ``ad`` (shared by every score)."""
    cache = ad.__dict__.setdefault("_class_sums", {})
    key = (c, id(tpl), J)
    if key not in cache:
        k = ad.k
        cell = tpl * k + ad.g
        rw = getattr(ad, "row_weight", None)
        cache[key] = {name: np.bincount(cell, weights=np.asarray(v, float) * (1.0 if rw is None else rw),
                                        minlength=J * k).reshape(J, k)
                      for name, v in ad.class_counts(c).items()}
    return cache[key]
