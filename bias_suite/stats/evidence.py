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

import statistics

import numpy as np

from ..metrics.comparisons import get_comparison
from ..metrics.generalized import AttributeData
from ..metrics.scores import AucScore, GoldProbScore, MeanScore, RateScore, SetScore, get_score

__all__ = ["event_templates", "sparse_margins", "wilson_margins", "MIN_EVENT_TEMPLATES", "OUTCOMES"]

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
    """Per kind of event of ``score`` and class c: (presence, one, others,
    any), presence a list of (J, k) arrays (whether template j has an event
    of that kind for group t), then per kind the templates with one in each
    group, in any other group and in any group; None when the row count says
    it all. Cached on ``ad`` (metrics sharing a score share it)."""
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


# --------------------------------------------------------------------------
# intervals that cannot collapse: the fallback for rates that rest on few templates
# --------------------------------------------------------------------------
def wilson_margins(p: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """(p - lower, upper - p) of the Wilson score interval of a proportion
    ``p`` observed on ``n`` independent units (arrays; n >= 1)."""
    p, n = np.asarray(p, float), np.asarray(n, float)
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return np.maximum(p - (centre - half), 0.0), np.maximum(centre + half - p, 0.0)


def sparse_margins(spec, ad: AttributeData, tpl: np.ndarray, J: int, confidence: float = 0.95) -> dict:
    """{(class name, group or pair label): (scale, sides, discord, k)}: how
    far a rate comparison of the group view can be from its value with the
    templates as the units of evidence, for rows whose bootstrap interval
    cannot be trusted (events in a few templates, or the two sides differing
    in a few; :func:`bias_suite.stats.bootstrap.intervals.fill` decides).

    Two margins:

    - ``sides``: each side's rate p (phi of the group, its background, or a pair's
      member) is a proportion of n templates, n the templates that give the
      side a chance (gold-c examples for FNR, say): a Wilson score interval
      on n units, which has positive width even at 0 events, bounds it; the
      two sides are combined by the square-root rule of the MOVER method
      (Newcombe's hybrid score interval for a difference; on the log scale
      for a ratio), the larger one-sided margin. It bounds a value whose
      events come from a few templates;
    - ``discord``: the two sides differ only in the templates where their rates differ
      (k of the n templates where both have a chance): a
      difference of rates moves by at most the share of such templates,
      whose Wilson upper bound on n templates exceeds k / n by the margin
      (for a ratio, that margin over the smaller rate, on the log scale).
      This is what a bootstrap misses when k is small: with no template
      discordant it repeats the value, however few templates there are.

    ``scale`` is ``"diff"`` (value ± margin), ``"abs"`` (an absolute
    difference: the same, on its signed basis where there is one, else
    never below 0) or ``"log"`` (value × exp(± margin)), so the margin does
    not depend on the row's orientation.
    Rows the module doc says nothing about are left out."""
    score = get_score(spec.score)
    if spec.view != "group" or not isinstance(score, RateScore) or score.name not in OUTCOMES:
        return {}
    comp = get_comparison(spec.comparison).name
    if comp in ("abs", "diff"):
        scale = comp
    elif comp in ("ratio", "ratio_to_background"):
        scale = "log"
    else:
        return {}
    if spec.generalized not in ("PCM", "BCM", "VBCM"):
        return {}
    background = "rest" if spec.background not in ("all", "S") else "all"
    # metrics that compare one rate the same way share their margins (FNED and FNED*, TPR-Gap and TPR-Diff)
    cache = ad.__dict__.setdefault("_sparse_margins", {})
    key = (score.name, scale, spec.generalized == "PCM", background, bool(spec.per_class), float(confidence),
           id(tpl), J)
    if key not in cache:
        cache[key] = _margins(score, scale, spec.generalized == "PCM", background, bool(spec.per_class), ad, tpl,
                              J, confidence)
    return cache[key]


def _margins(score, scale, pcm, background, per_class, ad, tpl, J, confidence) -> dict:
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    groups = list(ad.groups)
    if pcm:
        pairs = ad.pairs()
        a = np.array([x for x, _ in pairs], dtype=np.int64)
        b = np.array([y for _, y in pairs], dtype=np.int64)
        labels = [f"{groups[x]}|{groups[y]}" for x, y in pairs]
    else:
        a = b = np.arange(ad.k)
        labels = groups
    classes = list(enumerate(ad.classes)) if per_class else [(0, "all")]
    # every class at once: a leading class axis on every table (elementwise, so each class's numbers are
    # those it would get alone)
    tables = [_rate_tables(ad, score, c, tpl, J) for c, _ in classes]
    # each side as (rate, templates with a chance, per-template rates): a pair's members, or a group and
    # its background
    first = [(t["p"][a], t["n"][a], t["R"][:, a]) for t in tables]
    second = [(t["p"][b], t["n"][b], t["R"][:, b]) if pcm else t[background] for t in tables]
    p1, n1, r1 = (np.stack(x) for x in zip(*first))
    p2, n2, r2 = (np.stack(x) for x in zip(*second))
    both = np.isfinite(r1) & np.isfinite(r2)
    n = both.sum(axis=1)
    disc = (both & (np.abs(np.where(both, r1 - r2, 0.0)) > 1e-12)).sum(axis=1)
    ok = np.isfinite(p1) & np.isfinite(p2) & (n1 >= 1) & (n2 >= 1)
    # a rate that is not a proportion (a tagger's positive rate counts spans per sentence, and can pass 1)
    # has no score interval: its rows are left out
    ok &= _proportion(p1) & _proportion(p2) & _proportion(r1).all(axis=1) & _proportion(r2).all(axis=1)
    p1, p2 = np.clip(np.where(ok, p1, 0.0), 0.0, 1.0), np.clip(np.where(ok, p2, 0.0), 0.0, 1.0)
    nn = np.maximum(n, 1)
    discord = np.where(n > 0, wilson_margins(disc / nn, nn, z)[1], 0.0)
    lo1, hi1 = wilson_margins(p1, np.maximum(n1, 1), z)
    lo2, hi2 = wilson_margins(p2, np.maximum(n2, 1), z)
    if scale != "log":
        sides = np.maximum(np.hypot(lo1, hi2), np.hypot(hi1, lo2))
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            l1, u1, l2, u2 = p1 - lo1, p1 + hi1, p2 - lo2, p2 + hi2
            ok &= (p1 > 0) & (p2 > 0) & (l1 > 0) & (l2 > 0)
            sides = np.maximum(np.hypot(np.log(p1 / l1), np.log(u2 / p2)),
                               np.hypot(np.log(u1 / p1), np.log(p2 / l2)))
            discord = np.log1p(discord / np.minimum(p1, p2))
    out = {}
    for ci, i in zip(*np.nonzero(ok)):
        out[(classes[ci][1], labels[i])] = (scale, float(sides[ci, i]), float(discord[ci, i]), int(disc[ci, i]))
    return out


def _proportion(x) -> np.ndarray:
    """Where ``x`` is a proportion up to round-off, or undefined (NaN)."""
    x = np.asarray(x, float)
    return ~np.isfinite(x) | ((x >= -1e-9) & (x <= 1 + 1e-9))


def _class_sums(ad: AttributeData, c, tpl, J):
    """Per class c, the count sums every rate is made of, by count name:
    (J, k) per template and group, and those of the six tables of
    :func:`_rate_tables` (per template and group; per group; all, pooled;
    all, per template; each group's rest, pooled; and per template) joined
    into one flat array. Cached on ``ad`` (shared by every score)."""
    cache = ad.__dict__.setdefault("_class_sums", {})
    key = (c, id(tpl), J)
    if key not in cache:
        k = ad.k
        cell = tpl * k + ad.g
        sums, joined = {}, {}
        for name, v in ad.class_counts(c).items():
            S = np.bincount(cell, weights=np.asarray(v, float), minlength=J * k).reshape(J, k)
            total, pooled = S.sum(axis=1), S.sum(axis=0)
            joined[name] = np.concatenate([S.ravel(), pooled, [pooled.sum()], total, pooled.sum() - pooled,
                                           (total[:, None] - S).ravel()])
            sums[name] = S
        cache[key] = sums, joined
    return cache[key]


def _rate_tables(ad: AttributeData, score, c, tpl, J) -> dict:
    """Per class c, the rates of ``score`` that :func:`sparse_margins` compares:
    ``R`` (J, k) per template and group (NaN where the group has no chance
    there), ``p`` (k,) pooled per group, ``n`` (k,) the templates that give
    each group a chance, and the same (p, n, per-template rates) for the
    background of all groups and for each group's rest. Cached on ``ad``
    (metrics sharing a score share them)."""
    cache = ad.__dict__.setdefault("_rate_tables", {})
    key = (score.name, c, id(tpl), J)
    if key in cache:
        return cache[key]
    k = ad.k
    sums, joined = _class_sums(ad, c, tpl, J)
    chances = sum(_expression(sums, o) for o in OUTCOMES[score.name])  # (J, k)
    ch_all = chances.sum(axis=1)
    ch_rest = ch_all[:, None] - chances
    # the six tables' rates in one call of the score (elementwise: the same numbers as six calls)
    has = [chances > 0, chances.sum(axis=0) > 0, np.array([ch_all.sum() > 0]), ch_all > 0,
           chances.sum() - chances.sum(axis=0) > 0, ch_rest > 0]
    flat_has = np.concatenate([h.ravel() for h in has])
    with np.errstate(divide="ignore", invalid="ignore"):
        value, bad = score.fn(joined)[:2]
    value = np.asarray(value, float) * np.ones(flat_has.shape)
    flat = np.where(np.broadcast_to(np.asarray(bad, bool), flat_has.shape) | ~flat_has, np.nan, value)
    R, p, all_p, all_R, rest_p, rest_R = (piece.reshape(h.shape) for piece, h in
                                          zip(np.split(flat, np.cumsum([h.size for h in has])[:-1]), has))
    out = {
        "R": R, "p": p, "n": (chances > 0).sum(axis=0),
        "all": (np.full(k, all_p[0]), np.full(k, int((ch_all > 0).sum())), np.repeat(all_R[:, None], k, axis=1)),
        "rest": (rest_p, (ch_rest > 0).sum(axis=0), rest_R),
    }
    cache[key] = out
    return out
