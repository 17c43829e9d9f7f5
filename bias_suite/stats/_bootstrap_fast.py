"""The fast path of the cluster bootstrap: every metric of one attribute on
all resamples at once, from template weights (rates from weighted count
sums, counterfactual tuples and per-template sets from weighted copies).
:mod:`bias_suite.stats.bootstrap` has the method and the public API,
:mod:`bias_suite.stats._bootstrap_sets` the shared pieces and set metrics.
"""
from __future__ import annotations

import numpy as np

from ..exceptions import MetricError
from ..metrics.comparisons import get_comparison
from ..metrics.generalized import _member_values, normalizer_value, per_template_differences
from ..metrics.scores import MeanScore, RateScore, get_score
from ._bootstrap_sets import _BACKGROUND, _class_list, _Prepared, _scalar_values, _set_values


# --------------------------------------------------------------------------
# fast path
# --------------------------------------------------------------------------
def _fast_attribute(prep: _Prepared, specs, W):
    """Replicate values of every fast-path metric on one attribute; the last
    row of the internal weight matrix is all ones (the observed data) and is
    used only for the observed value of the verdict basis."""
    ad = prep.ad
    B = W.shape[0]
    Wx = np.vstack([W, np.ones((1, prep.J), dtype=W.dtype)]) if prep.J else np.zeros((B + 1, 0), dtype=np.int64)
    Wf = Wx.astype(np.float64)
    out, basis = {}, {}
    set_jobs = {}  # class index -> list of (spec, cls_name)
    sums_cache: dict = {}
    for spec in specs:
        if spec.two_groups and ad.k != 2:
            continue
        sc = get_score(spec.score)
        comp = get_comparison(spec.comparison)
        for c, cls in _class_list(spec, ad):
            if spec.view == "group":
                if spec.generalized in ("PCM", "MCM") and ad.k < 2:
                    continue
                if isinstance(sc, RateScore):
                    phi = _rate_phi(prep, sc, c, Wf, sums_cache)
                    _store(out, basis, spec, cls, *_scalar_values(spec, ad, sc, comp, phi), B)
                else:
                    set_jobs.setdefault(c, []).append((spec, cls))
            else:
                if ad.k < 2 or len(ad.templates) == 0:
                    continue
                if spec.per_template:
                    res = _per_template_values(spec, prep, sc, comp, c, Wf)
                else:
                    res = _tuple_values(spec, prep, sc, comp, c, Wf)
                if res is not None:
                    _store(out, basis, spec, cls, *res, B)
    for c, jobs in set_jobs.items():
        _set_values(prep, c, jobs, Wx, out, basis, B)
    return out, basis


def _store(out, basis, spec, cls, values: dict, signed: dict, B):
    """Keep the replicate rows (first B) and the basis (replicates + observed)."""
    for g, v in values.items():
        out[(spec.name, cls, g)] = np.asarray(v, float)[:B]
    for g, (label, v) in signed.items():
        v = np.asarray(v, float)
        basis[(spec.name, cls, g)] = {"basis": label, "basis_reps": v[:B], "basis_obs": v[B]}


def _count_sums(prep, c, Wf, cache):
    """Per-group count sums (R, k) of every resample, one matmul per class:
    per-(template, group) counts C once, then W @ C."""
    if c not in cache:
        ad = prep.ad
        k, J = ad.k, prep.J
        cnt = ad.class_counts(c)
        names = list(cnt)
        key = prep.tpl * k + ad.g
        w = ad.row_weight
        C = np.concatenate([np.bincount(key, weights=cnt[n] if w is None else cnt[n] * w, minlength=J * k).reshape(J, k)
                            for n in names], axis=1)
        S = Wf @ C
        cache[c] = {n: S[:, i * k:(i + 1) * k] for i, n in enumerate(names)}
    return cache[c]


def _rate_phi(prep, score, c, Wf, cache):
    """Group / all / rest values of a rate score on every resample: (R, k)."""
    k = prep.ad.k
    S = _count_sums(prep, c, Wf, cache)
    total = {n: s.sum(1) for n, s in S.items()}
    rest = {n: total[n][:, None] - s for n, s in S.items()}
    R = Wf.shape[0]

    def phi(s, shape):
        v, bad, _ = score.fn(s)
        return (np.broadcast_to(np.asarray(v, float), shape), np.broadcast_to(np.asarray(bad, bool), shape))

    gv, gb = phi(S, (R, k))
    av, ab = phi(total, (R,))
    rv, rb = phi(rest, (R, k))
    return {
        "group": (gv, gb),
        "all": (np.repeat(av[:, None], k, 1), np.repeat(ab[:, None], k, 1)),
        "rest": (rv, rb),
    }


def _tuple_values(spec, prep, score, comp, c, Wf):
    """Counterfactual tuple metrics: per-tuple d once, template-weighted means."""
    ad = prep.ad
    k, gen = ad.k, spec.generalized
    V, ok = _member_values(ad, score, c)
    if V.ndim == 2:
        V, ok = V[:, :, None], ok[:, :, None]
    pos_ok = ok.all(axis=1)
    tup_ok = pos_ok.any(axis=1)
    if not tup_ok.any():
        return None
    V, pos_ok = V[tup_ok], pos_ok[tup_ok]
    tt = ad.tuple_template[tup_ok]
    w = pos_ok / pos_ok.sum(axis=1, keepdims=True)
    Vz = np.where(pos_ok[:, None, :], V, 0.0)

    def per_tuple(x):
        return np.sum(np.where(pos_ok, x, 0.0) * w, axis=1)

    labels, cols = [], []
    signed_labels, signed_cols = [], []
    phi_name = getattr(score, "name", "f")
    if gen == "PCM":
        N = normalizer_value(spec.normalizer, k)
        D = np.stack([per_tuple(comp.fn(Vz[:, a], Vz[:, b])[0]) for a, b in ad.pairs()], axis=1)
        labels = ad.pair_names() + [None]
        cols = np.column_stack([D, D.sum(axis=1) / N])
        if comp.name == "abs":  # the signed difference beneath |f(a) - f(b)|, per variant
            signed_labels = ad.pair_names()
            signed_cols = [per_tuple(Vz[:, a] - Vz[:, b]) for a, b in ad.pairs()]
    elif gen == "MCM":
        labels = [None]
        cols = per_tuple(comp.fn(np.moveaxis(Vz, 1, -1)))[:, None]
    elif gen in ("BCM", "VBCM"):
        total = Vz.sum(axis=1)
        D = []
        for t in range(k):
            bg = total / k if _BACKGROUND.get(spec.background) == "all" else (total - Vz[:, t]) / (k - 1)
            D.append(per_tuple(comp.fn(bg, Vz[:, t])[0]))
            if comp.name == "abs":
                signed_labels.append(ad.groups[t])
                signed_cols.append(per_tuple(Vz[:, t] - bg))
        D = np.stack(D, axis=1)
        labels = list(ad.groups)
        cols = D
        if gen == "BCM":
            labels = labels + [None]
            cols = np.column_stack([D, D.sum(axis=1) / normalizer_value(spec.normalizer, k)])
    else:
        raise MetricError(f"unknown generalized metric {gen!r}")
    n_signed = len(signed_cols)
    if n_signed:
        cols = np.column_stack([cols] + signed_cols)
    Jc = len(ad.templates)
    S = np.zeros((Jc, cols.shape[1]))
    np.add.at(S, tt, cols)
    M = np.bincount(tt, minlength=Jc).astype(float)
    Wc = Wf[:, prep.complete_idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = (Wc @ S) / (Wc @ M)[:, None]
    vals[~np.isfinite(vals)] = np.nan
    n = len(labels)
    text = (f"{phi_name}(first) - {phi_name}(second), mean over variants" if gen == "PCM"
            else f"{phi_name}(group) - {phi_name}(background), mean over variants")
    signed = {lab: (text, vals[:, n + i]) for i, lab in enumerate(signed_labels)}
    return {lab: vals[:, i] for i, lab in enumerate(labels)}, signed


def _per_template_values(spec, prep, score, comp, c, Wf):
    """AvgIF-style metrics: per-template values once, template-weighted means."""
    ad = prep.ad
    k = ad.k
    D = per_template_differences(spec, ad, score, comp, c)
    ok = np.isfinite(D).all(axis=1)
    if not ok.any():
        return None
    D = D[ok]
    cols = np.column_stack([D, D.sum(axis=1) / normalizer_value(spec.normalizer, k)])
    signed_on = comp.name == "abs" and isinstance(score, MeanScore)
    if signed_on:  # the signed difference of the template means beneath |mean f(a) - mean f(b)|
        cols = np.column_stack([cols, per_template_differences(spec, ad, score, get_comparison("diff"), c)[ok]])
    Wc = Wf[:, prep.complete_idx[ok]]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (Wc @ cols) / Wc.sum(axis=1)[:, None]
    out[~np.isfinite(out)] = np.nan
    labels = ad.pair_names() + [None]
    n = len(labels)
    signed = ({lab: ("mean f(first) - mean f(second), mean over templates", out[:, n + i])
               for i, lab in enumerate(ad.pair_names())} if signed_on else {})
    return {lab: out[:, i] for i, lab in enumerate(labels)}, signed
