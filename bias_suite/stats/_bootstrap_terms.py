"""The term side of the two-way cluster bootstrap's closed form: every
quantity that depends on the term weights ``T[b, t]`` as well as the
template weights ``W[b, j]`` (:mod:`bias_suite.stats.terms` draws them,
:mod:`bias_suite.stats.bootstrap` has the method).

- counterfactual tuples: a tuple of template j weighs ``W[b, j]`` times the
  product of its members' term weights (:class:`TupleWeights`);
- per-template metrics: the group sets of a template weighted by ``T``
  (:func:`per_template_term_values`: weighted means, weighted W1);
- AEG: the pairs inside one template, weighted by ``T``, for the copy-pair
  correction (:func:`within_terms`), and the generic path's correction
  (:func:`aeg_without_copy_pairs`).

Everything here is used only where terms are resampled; without term
weights the closed form is the template-only one.
"""
from __future__ import annotations

import numpy as np

from ..exceptions import MetricError
from ..metrics.comparisons import get_comparison
from ..metrics.generalized import item_selection, normalizer_value
from ..metrics.scores import MeanScore, SetScore, get_score
from ._bootstrap_sets import CATS, BACKGROUND, ClassItems, Prepared, accumulated, item_multipliers, safe_ratio

#: target size (resamples x cells) of one chunk here
CHUNK_CELLS = 1_000_000


def _steps(R: int, width: int):
    step = int(max(1, CHUNK_CELLS // max(width, 1)))
    return [(s, min(R, s + step)) for s in range(0, R, step)]


# ------------------------------------------------------------ tuples
class TupleWeights:
    """Per resample, the weight of every counterfactual tuple of an
    attribute: ``W[b, j] * prod_i T[b, term of member i]`` (members of
    one-term groups weigh 1 and are skipped), built in chunks of resamples
    and kept when small."""

    KEEP = 4_000_000

    def __init__(self, prep: Prepared, Wf: np.ndarray, Tf: np.ndarray):
        ad = prep.ad
        self.R, self.M = Wf.shape[0], len(ad.tuple_template)
        self.Wt = Wf[:, prep.complete_idx[ad.tuple_template]] if self.M else np.zeros((self.R, 0))
        counts = np.bincount(prep.term_g, minlength=ad.k)
        several = np.flatnonzero(counts > 1)
        self.members = prep.term[ad.tuples[:, several]] if self.M else np.zeros((0, 0), np.int64)
        self.Tf = Tf
        self.steps = _steps(self.R, self.M)
        self._kept = None
        if self.R * self.M <= self.KEEP:
            self._kept = [self._make(s, e) for s, e in self.steps]

    def _make(self, s, e):
        w = self.Wt[s:e].copy()
        for i in range(self.members.shape[1]):
            w *= self.Tf[s:e, self.members[:, i]]
        return w

    def weighted_means(self, cols: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """(R, C): per resample, the tuple-weighted mean of ``cols`` (Mv, C)
        over the tuples ``ok`` (M,) (NaN where no tuple weighs)."""
        full = np.zeros((self.M, cols.shape[1] + 1))
        full[ok, :-1] = cols
        full[ok, -1] = 1.0
        out = np.empty((self.R, cols.shape[1]))
        for i, (s, e) in enumerate(self.steps):
            w = self._kept[i] if self._kept is not None else self._make(s, e)
            sums = w @ full
            with np.errstate(divide="ignore", invalid="ignore"):
                out[s:e] = sums[:, :-1] / sums[:, -1:]
        out[~np.isfinite(out)] = np.nan
        return out


# ------------------------------------------------------ per-template sets
def _template_items(prep: Prepared, score, c):
    """Items of complete templates kept by the score's selection: value,
    template (complete index), group and term, sorted by template, then value."""
    ad = prep.ad
    sel = item_selection(ad, getattr(score, "select", "all"), c)
    it_tpl = ad.row_template[ad.item_row]
    keep = sel & (it_tpl >= 0)
    x = ad.item_P[keep, c]
    seg = it_tpl[keep]
    order = np.lexsort((x, seg))
    return x[order], seg[order], ad.item_g()[keep][order], prep.term[ad.item_row[keep]][order]


def _weighted_means(prep, x, seg, term, Tf, Jc):
    """(Rc, Jc, k) T-weighted mean of x per template and group (NaN: no weight)."""
    nT = prep.n_terms
    cell = seg * nT + term
    s = np.bincount(cell, weights=x, minlength=Jc * nT).reshape(Jc, nT)
    n = np.bincount(cell, minlength=Jc * nT).astype(float).reshape(Jc, nT)
    onehot = prep.term_onehot()
    t = Tf[:, None, :]
    num, den = (s * t) @ onehot, (n * t) @ onehot
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _weighted_w1(x, seg, g, term, Tf, Jc, pairs):
    """(Rc, Jc, pairs) W1 between the T-weighted sets of two groups inside
    each template: the sum over the template's sorted items of
    |F_a - F_b| (x_next - x); NaN where a set weighs nothing."""
    m, R = x.size, Tf.shape[0]
    out = np.full((R, Jc, len(pairs)), np.nan)
    if m == 0 or not pairs:
        return out
    dx = np.zeros(m)
    dx[:-1] = np.where(seg[1:] == seg[:-1], np.diff(x), 0.0)
    new = np.r_[True, seg[1:] != seg[:-1]]
    starts = np.flatnonzero(new)
    segi = np.cumsum(new) - 1  # each item's segment (among present ones)
    last = np.r_[starts[1:], m] - 1
    w = Tf[:, term]
    F, tot = {}, {}
    for t in sorted({p for pair in pairs for p in pair}):
        wt = w * (g == t)
        C = np.cumsum(wt, axis=1)
        C -= (C - wt)[:, starts[segi]]
        tot[t] = C[:, last]  # (Rc, segments)
        with np.errstate(divide="ignore", invalid="ignore"):
            F[t] = C / tot[t][:, segi]
    for i, (a, b) in enumerate(pairs):
        d = np.abs(F[a] - F[b])
        d *= dx
        d[~np.isfinite(d)] = 0.0
        v = np.add.reduceat(d, starts, axis=1)
        v[(tot[a] == 0) | (tot[b] == 0)] = np.nan
        out[:, seg[starts], i] = v
    return out


def per_template_term_values(spec, prep: Prepared, score, comp, c, Wf, Tf):
    """Per-template metrics (AvgIF, AvgScoreDiff) with the group sets of
    each template weighted by the term weights: (values {label: (R,)},
    signed {label: (text, (R,))}), or None when no template counts in the
    observed data (the last row of ``Wf``/``Tf``); a template counts in a
    resample when every group weighs in it."""
    ad = prep.ad
    k, Jc = ad.k, len(ad.templates)
    pairs = ad.pairs()
    x, seg, g, term = _template_items(prep, score, c)
    if isinstance(score, SetScore):
        if comp.name != "W1":
            raise MetricError(f"{spec.name}: per-template set scores are compared with W1")
    elif not isinstance(score, MeanScore):
        raise MetricError(f"{spec.name}: per-template metrics take a set or mean score")
    signed_on = isinstance(score, MeanScore) and comp.name == "abs"
    N = normalizer_value(spec.normalizer, k)
    R = Wf.shape[0]
    width = len(pairs) * 2 + 1
    vals = np.empty((R, width if signed_on else len(pairs) + 1))
    diff = get_comparison("diff")
    for s, e in _steps(R, max(Jc * max(prep.n_terms, width), x.size * 4)):
        if isinstance(score, SetScore):
            D = _weighted_w1(x, seg, g, term, Tf[s:e], Jc, pairs)
        else:
            means = _weighted_means(prep, x, seg, term, Tf[s:e], Jc)
            D = np.stack([comp.fn(means[..., a], means[..., b])[0] for a, b in pairs], axis=-1)
        ok = np.isfinite(D).all(axis=2)  # (Rc, Jc)
        Dz = np.where(ok[..., None], D, 0.0)
        cols = [Dz, Dz.sum(axis=2, keepdims=True) / N]
        if signed_on:
            S = np.stack([diff.fn(means[..., a], means[..., b])[0] for a, b in pairs], axis=-1)
            cols.append(np.where(ok[..., None], S, 0.0))
        Wc = Wf[s:e, prep.complete_idx] * ok
        with np.errstate(divide="ignore", invalid="ignore"):
            vals[s:e] = np.einsum("rj,rjc->rc", Wc, np.concatenate(cols, axis=2)) / Wc.sum(axis=1)[:, None]
        if e == R and not ok[-1].any():
            return None
    vals[~np.isfinite(vals)] = np.nan
    labels = ad.pair_names() + [None]
    n = len(labels)
    signed = ({lab: ("mean f(first) - mean f(second), mean over templates", vals[:, n + i])
               for i, lab in enumerate(ad.pair_names())} if signed_on else {})
    return {lab: vals[:, i] for i, lab in enumerate(labels)}, signed


# ------------------------------------------------------------- AEG pairs
def within_terms(items: ClassItems, cats, pairs: bool):
    """The pairs inside each template in the current chunk of resamples,
    items weighted by their term weights (and multipliers):
    ``(U, N)`` with N (Bc, J, k) the weight of each group in each template
    and U (Bc, J, k) U(group over all items of the template), or with
    ``pairs`` U (Bc, J, k, k) U(group a over group b) inside each template
    (ties count 1/2)."""
    def static():
        p = items.positions(cats)
        order = np.lexsort((items.x[p], items.tpl[p]))  # by template, then score
        q = p[order]
        tq, gq, xq = items.tpl[q], items.g[q], items.x[q]
        rq = np.ones(q.size) if items.r is None else items.r[q].astype(np.float64)
        new_block = np.r_[True, (xq[1:] != xq[:-1]) | (tq[1:] != tq[:-1])] if q.size else np.zeros(0, bool)
        block = np.cumsum(new_block) - 1
        bstart = np.flatnonzero(new_block)
        bend = np.r_[bstart[1:], q.size] - 1
        new_seg = np.r_[True, tq[1:] != tq[:-1]] if q.size else np.zeros(0, bool)
        seg_first = np.flatnonzero(new_seg)[np.cumsum(new_seg) - 1]
        return q, tq, gq, rq, bstart[block], bend[block], seg_first, tq * items.k + gq

    def chunk():
        q, tq, gq, rq, bs, be, sf, cell = items.memo(("within_terms", cats), static)
        Bc, J, k = items.Tc.shape[0], items.J, items.k
        wt = items.Tf[:, items.term[q]] * rq
        idx = (np.arange(Bc)[:, None] * (J * k) + cell[None, :]).ravel()

        def per_cell(v):
            return np.bincount(idx, weights=v.ravel(), minlength=Bc * J * k).reshape(Bc, J, k)

        def u_over(wl):  # each item's U contribution as the higher one over the weights wl of its template
            cum = np.cumsum(wl, axis=1)
            base = (cum - wl)[:, sf]
            leq = cum[:, be] - base
            less = (cum - wl)[:, bs] - base
            return wt * 0.5 * (leq + less)

        N = per_cell(wt)
        if q.size == 0:
            return (np.zeros((Bc, J, k, k)) if pairs else np.zeros((Bc, J, k))), N
        if not pairs:
            return per_cell(u_over(wt)), N
        U = np.empty((Bc, J, k, k))
        for b in range(k):
            U[..., b] = per_cell(u_over(wt * (gq == b)))
        return U, N

    return items.chunk_memo(("within_terms", cats, pairs), chunk)


def aeg_excess(items: ClassItems, cats, spec):
    """The pairs between two copies of one template in the current chunk,
    with term weights: for PCM {(a, b): (U excess, pair-count excess)}, for
    BCM/VBCM (U excess (Bc, k), pair-count excess (Bc, k)) of U(group over
    its background)."""
    Q = items.within_excess()  # (Bc, J): W^2 - W
    if spec.generalized == "PCM":
        U, N = within_terms(items, cats, pairs=True)
        return {(a, b): (np.einsum("bj,bj->b", Q, U[:, :, a, b]), np.einsum("bj,bj->b", Q, N[:, :, a] * N[:, :, b]))
                for a in range(items.k) for b in range(items.k) if a < b}
    Ut, N = within_terms(items, cats, pairs=False)
    Nb = N.sum(axis=2, keepdims=True)
    if BACKGROUND.get(spec.background) == "rest":
        Ut, Nb = Ut - N * N / 2.0, Nb - N
    return np.einsum("bj,bjt->bt", Q, Ut), np.einsum("bj,bjt->bt", Q, Nb * N)


def aeg_without_copy_pairs(prep: Prepared, spec, c: int, W: np.ndarray, values: dict, T=None) -> dict:
    """AEG values of resamples evaluated on copied templates (the generic
    path), with the pairs between two copies of one template left out as
    the closed form leaves them out: ``values`` {group label: (B,)} as the
    engine gives them on the resampled data, ``W`` (B, J) the template
    counts, ``T`` (B, n_terms) the term counts (None: terms not resampled)."""
    ad = prep.ad
    sc = get_score(spec.score)
    cats = CATS[getattr(sc, "select", "all")]
    try:
        item_multipliers(ad.row_weight, ad.item_row)
        items = ClassItems(prep, c)
    except MetricError:  # multipliers too large for integers: the weights themselves (no exact sums needed here)
        items = ClassItems(prep, c, integer=False)
    if T is None:
        return _template_only(prep, spec, items, cats, W, values)
    B = W.shape[0]
    parts_n, parts_ex = [], []
    for s, e in _steps(B, items.m * max(ad.k, 1)):
        items.start(W[s:e].astype(np.int32), T[s:e].astype(np.int32))
        parts_n.append(items.n(cats))
        parts_ex.append(aeg_excess(items, cats, spec))
    n = np.concatenate(parts_n)
    if spec.generalized == "PCM":
        ex = {key: tuple(np.concatenate([p[key][i] for p in parts_ex]) for i in range(2)) for key in parts_ex[0]}
    else:
        ex = tuple(np.concatenate([p[i] for p in parts_ex]) for i in range(2))
    out = dict(values)
    k = ad.k
    if spec.generalized == "PCM":
        for (a, b), name in zip(ad.pairs(), ad.pair_names()):
            if name not in values:
                continue
            N = n[:, a] * n[:, b]
            U = (0.5 - values[name]) * N
            out[name] = 0.5 - safe_ratio(U - ex[(a, b)][0], N - ex[(a, b)][1])
        parts = [out[nm] for nm in ad.pair_names() if nm in out]
    else:
        nb = np.repeat(n.sum(1, keepdims=True), k, 1)
        if BACKGROUND.get(spec.background) == "rest":
            nb = nb - n
        for t, name in enumerate(ad.groups):
            if name not in values:
                continue
            N = nb[:, t] * n[:, t]
            V = (values[name] + 0.5) * N
            out[name] = safe_ratio(V - ex[0][:, t], N - ex[1][:, t]) - 0.5
        parts = [out[nm] for nm in ad.groups if nm in out]
    if None in values and parts and spec.generalized in ("PCM", "BCM"):
        out[None] = accumulated(np.column_stack(parts), normalizer_value(spec.normalizer, k))
    return out


def _template_only(prep, spec, items, cats, W, values):
    """The correction without term weights (each template's own pairs from
    the data, counted once per copy)."""
    ad = prep.ad
    M, Nj = items.within(cats)
    Wf = W.astype(np.float64)
    Q = Wf * Wf - Wf
    n = Wf @ Nj  # (B, k) item weights per group in each resample
    out = dict(values)
    k = ad.k
    if spec.generalized == "PCM":
        for (a, b), name in zip(ad.pairs(), ad.pair_names()):
            if name not in values:
                continue
            N = n[:, a] * n[:, b]
            U = (0.5 - values[name]) * N
            out[name] = 0.5 - safe_ratio(U - Q @ M[:, a, b], N - Q @ (Nj[:, a] * Nj[:, b]))
        parts = [out[nm] for nm in ad.pair_names() if nm in out]
    else:
        Mt, Nall = M.sum(axis=2), Nj.sum(axis=1, keepdims=True)
        nb = np.repeat(n.sum(1, keepdims=True), k, 1)
        if BACKGROUND.get(spec.background) == "rest":
            Mt, Nall, nb = Mt - M[:, np.arange(k), np.arange(k)], Nall - Nj, nb - n
        for t, name in enumerate(ad.groups):
            if name not in values:
                continue
            N = nb[:, t] * n[:, t]
            V = (values[name] + 0.5) * N
            out[name] = safe_ratio(V - Q @ Mt[:, t], N - Q @ (Nall[:, 0 if Nall.shape[1] == 1 else t] * Nj[:, t])) - 0.5
        parts = [out[nm] for nm in ad.groups if nm in out]
    if None in values and parts and spec.generalized in ("PCM", "BCM"):
        out[None] = accumulated(np.column_stack(parts), normalizer_value(spec.normalizer, k))
    return out
