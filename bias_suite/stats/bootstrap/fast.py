"""The fast path of the cluster bootstrap: every metric of one attribute on
all resamples at once, from template weights and, where terms are
resampled, term weights (rates from weighted count sums, counterfactual
tuples and per-template sets from weighted copies, set metrics per chunk of
resamples). :mod:`bias_suite.stats.bootstrap` has the method and the public
API, :mod:`bias_suite.stats.bootstrap.prepared` the shared pieces,
:mod:`bias_suite.stats.bootstrap.weighted_items` the weighted item sets,
:mod:`bias_suite.stats.bootstrap.term_kernels` the term-weighted quantities.
"""
from __future__ import annotations

import numpy as np

from ...exceptions import MetricError
from ...metrics.comparisons import get_comparison
from ...metrics.generalized import member_values, normalizer_value, per_template_differences
from ...metrics.scores import get_score
from .prepared import (BACKGROUND, RESAMPLES_PER_CHUNK, Prepared, accumulated, class_list, per_template_columns,
                       safe_ratio, scalar_values)
from .term_kernels import ACROSS_TEMPLATES, TupleWeights, aeg_excess, per_template_term_values
from .weighted_items import CATS, ClassItems


# --------------------------------------------------------------------------
# fast path
# --------------------------------------------------------------------------
def fast_attribute(prep: Prepared, specs, W, T=None, classes=None):
    """Replicate values of every fast-path metric on one attribute from the
    template weights ``W`` (B, J) and the term weights ``T`` (B, n_terms;
    None: terms not resampled), for the ``classes`` {metric name: class
    names} asked (None: every class); the last row of the internal weight
    matrices is all ones (the observed data) and is used only for the
    observed value of the verdict basis."""
    ad = prep.ad
    B = W.shape[0]
    Wx = np.vstack([W, np.ones((1, prep.J), dtype=W.dtype)]) if prep.J else np.zeros((B + 1, 0), dtype=np.int64)
    Wf = Wx.astype(np.float64)
    Tx = None if T is None else np.vstack([T, np.ones((1, T.shape[1]), dtype=T.dtype)])
    Tf = None if Tx is None else Tx.astype(np.float64)
    tuple_weights = {}  # the tuples' weights, built once per attribute where terms are resampled
    out, basis = {}, {}
    set_jobs = {}  # class index -> list of (spec, cls_name)
    sums_cache: dict = {}
    for spec in specs:
        if spec.two_groups and ad.k != 2:
            continue
        sc = get_score(spec.score)
        comp = get_comparison(spec.comparison)
        for c, cls in class_list(spec, ad):
            if classes is not None and cls not in classes.get(spec.name, ()):
                continue
            if spec.view == "group":
                if spec.generalized in ("PCM", "MCM") and ad.k < 2:
                    continue
                if sc.weighted_from == "counts":  # weighted count sums, all resamples at once
                    phi = _rate_phi(prep, sc, c, Wf, sums_cache, Tf)
                    _store(out, basis, spec, cls, *scalar_values(spec, ad, sc, comp, phi), B)
                else:
                    set_jobs.setdefault(c, []).append((spec, cls))
            else:
                if ad.k < 2 or len(ad.templates) == 0:
                    continue
                if spec.per_template:
                    res = (_per_template_values(spec, prep, sc, comp, c, Wf) if Tf is None
                           else per_template_term_values(spec, prep, sc, comp, c, Wf, Tf))
                else:
                    if Tf is not None and not tuple_weights:
                        tuple_weights[0] = TupleWeights(prep, Wf, Tf)
                    res = _tuple_values(spec, prep, sc, comp, c, Wf, tuple_weights.get(0), cls)
                if res is not None:
                    _store(out, basis, spec, cls, *res, B)
    if tuple_weights:
        for (spec, cls), res in tuple_weights[0].flush():
            _store(out, basis, spec, cls, *res, B)
    for c, jobs in set_jobs.items():
        _set_values(prep, c, jobs, Wx, out, basis, B, Tx)
    return out, basis


def _store(out, basis, spec, cls, values: dict, signed: dict, B):
    """Keep the replicate rows (first B) and the basis (replicates + observed)."""
    for g, v in values.items():
        out[(spec.name, cls, g)] = np.asarray(v, float)[:B]
    for g, (label, v) in signed.items():
        v = np.asarray(v, float)
        basis[(spec.name, cls, g)] = {"basis": label, "basis_reps": v[:B], "basis_obs": v[B]}


def _count_sums(prep, c, Wf, cache, Tf=None):
    """Per-group count sums (R, k) of every resample, one matmul per class:
    per-(template, group) counts C once, then W @ C; with term weights
    per-(template, term) counts, W @ C weighted by T and summed per group."""
    if c not in cache:
        ad = prep.ad
        k, J = ad.k, prep.J
        cnt = ad.class_counts(c)
        names = list(cnt)
        n = k if Tf is None else prep.n_terms
        key = prep.tpl * n + (ad.g if Tf is None else prep.term)
        w = ad.row_weight
        C = np.concatenate([np.bincount(key, weights=cnt[m] if w is None else cnt[m] * w, minlength=J * n).reshape(J, n)
                            for m in names], axis=1)
        S = Wf @ C
        if Tf is not None:  # (R, names, terms) * T, then per group
            R = S.shape[0]
            S = ((S.reshape(R, len(names), n) * Tf[:, None, :]).reshape(R * len(names), n) @ prep.term_onehot()).reshape(R, -1)
        cache[c] = {m: S[:, i * k:(i + 1) * k] for i, m in enumerate(names)}
    return cache[c]


def _rate_phi(prep, score, c, Wf, cache, Tf=None):
    """Group / all / rest values of a rate score on every resample: (R, k);
    cached per score and class (FNED, FNED*, FNR-Ratio... share them)."""
    key = ("phi", score.name, score.fn, c)
    if key not in cache:
        cache[key] = _rate_phi_values(prep, score, c, Wf, cache, Tf)
    return cache[key]


def _rate_phi_values(prep, score, c, Wf, cache, Tf=None):
    k = prep.ad.k
    S = _count_sums(prep, c, Wf, cache, Tf)
    if ("sides", c) not in cache:  # the counts of all groups and of each group's rest
        total = {n: s.sum(1) for n, s in S.items()}
        cache[("sides", c)] = total, {n: total[n][:, None] - s for n, s in S.items()}
    total, rest = cache[("sides", c)]
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


def _tuple_values(spec, prep, score, comp, c, Wf, tuple_weights: TupleWeights | None = None, cls=None):
    """Counterfactual tuple metrics: per-tuple d once, template-weighted
    means; with term weights the means are queued on ``tuple_weights``
    (None is returned; its ``flush`` gives the values)."""
    ad = prep.ad
    k, gen = ad.k, spec.generalized
    V, ok = member_values(ad, score, c)
    one_position = V.ndim == 2  # one item per example: a tuple's value is its one position's
    if one_position:
        V, ok = V[:, :, None], ok[:, :, None]
    pos_ok = ok.all(axis=1)
    tup_ok = pos_ok.any(axis=1)
    if not tup_ok.any():
        return None
    V, pos_ok = V[tup_ok], pos_ok[tup_ok]
    tt = ad.tuple_template[tup_ok]
    if one_position:  # every kept tuple has its one position valid, weight 1
        Vz = V.astype(np.float64, copy=False)

        def per_tuple(x):
            return np.asarray(x, dtype=np.float64)[:, 0]
    else:
        w = pos_ok / pos_ok.sum(axis=1, keepdims=True)
        Vz = np.where(pos_ok[:, None, :], V, 0.0)

        def per_tuple(x):
            return np.sum(np.where(pos_ok, x, 0.0) * w, axis=1)

    phi_name = getattr(score, "name", "f")
    if tuple_weights is not None:  # weighted by templates and terms, with the attribute's other tuple metrics
        cols, finish = _tuple_columns_linear(spec, ad, comp, Vz, per_tuple, phi_name, one_position)
        tuple_weights.defer(cols, tup_ok, finish, (spec, cls))
        return None
    labels, cols = [], []
    signed_labels, signed_cols = [], []
    if gen == "PCM":
        N = normalizer_value(spec.normalizer, k)
        D, signed = _pair_columns(ad, comp, Vz, per_tuple, one_position)
        labels = ad.pair_names() + [None]
        cols = [D, D.sum(axis=1) / N]
        if signed is not None:  # the signed difference beneath |f(a) - f(b)|, per variant
            signed_labels = ad.pair_names()
            signed_cols = [signed]
    elif gen == "MCM":
        labels = [None]
        cols = [per_tuple(comp.fn(np.moveaxis(Vz, 1, -1)))]
    elif gen in ("BCM", "VBCM"):
        total = Vz.sum(axis=1)
        D = []
        for t in range(k):
            bg = total / k if BACKGROUND.get(spec.background) == "all" else (total - Vz[:, t]) / (k - 1)
            D.append(per_tuple(comp.fn(bg, Vz[:, t])[0]))
            if comp.name == "abs":
                signed_labels.append(ad.groups[t])
                signed_cols.append(per_tuple(Vz[:, t] - bg))
        D = np.stack(D, axis=1)
        labels = list(ad.groups)
        cols = [D]
        if gen == "BCM":
            labels = labels + [None]
            cols.append(D.sum(axis=1) / normalizer_value(spec.normalizer, k))
    else:
        raise MetricError(f"unknown generalized metric {gen!r}")
    Jc = len(ad.templates)
    S = template_sums(tt, cols + signed_cols, Jc)
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


def template_sums(tt: np.ndarray, parts, J: int) -> np.ndarray:
    """(J, columns) sums per template ``tt`` of the columns of ``parts``
    (arrays of one row per tuple: 1-d, or 2-d with a column each), side by
    side: one ``np.add.reduceat`` per part over each template's run of
    rows, read where the part lies in memory. The counterfactual view lists
    the tuples in template order; tuples in any other order are sorted
    first."""
    parts = [np.asarray(p, dtype=np.float64) for p in parts]
    parts = [p[:, None] if p.ndim == 1 else p for p in parts]
    n = len(tt)
    if any(p.shape[0] != n for p in parts):
        raise MetricError(f"per-tuple columns of {[p.shape[0] for p in parts]} rows for {n} tuples")
    out = np.zeros((J, sum(p.shape[1] for p in parts)))
    if n == 0:
        return out
    tt = np.asarray(tt)
    if not np.all(tt[1:] >= tt[:-1]):  # (not from the counterfactual view: put the tuples in template order)
        order = np.argsort(tt, kind="stable")
        tt, parts = tt[order], [p[order] for p in parts]
    starts = np.flatnonzero(np.r_[True, tt[1:] != tt[:-1]])
    rows = tt[starts]
    i = 0
    for p in parts:
        out[rows, i:i + p.shape[1]] = np.add.reduceat(p, starts, axis=0)
        i += p.shape[1]
    return out


def _pair_columns(ad, comp, Vz, per_tuple, one_position):
    """(Mv, pairs) per-tuple d(f(a), f(b)) of every pair, and f(a) - f(b)
    where d = |x - y| (else None); every pair in one call when each example
    holds one item (the comparisons are elementwise)."""
    pairs = ad.pairs()
    signed_on = comp.name == "abs"
    if one_position:
        X = Vz[:, :, 0]
        a = np.array([p[0] for p in pairs], dtype=np.int64)
        b = np.array([p[1] for p in pairs], dtype=np.int64)
        xa, xb = X[:, a], X[:, b]
        return comp.fn(xa, xb)[0], (xa - xb if signed_on else None)
    D = np.stack([per_tuple(comp.fn(Vz[:, a], Vz[:, b])[0]) for a, b in pairs], axis=1)
    return D, (np.column_stack([per_tuple(Vz[:, a] - Vz[:, b]) for a, b in pairs]) if signed_on else None)


def _tuple_columns_linear(spec, ad, comp, Vz, per_tuple, phi_name, one_position):
    """The per-tuple columns a weighted mean is needed of, and how the
    metric's values follow from those means: the comparisons per pair or
    group, and the member values per group, from which the accumulated
    value and the signed differences follow linearly (a mean of sums or
    differences is the sum or difference of the means)."""
    k, gen = ad.k, spec.generalized
    signed_on = comp.name == "abs"
    if gen == "MCM":
        return per_tuple(comp.fn(np.moveaxis(Vz, 1, -1)))[:, None], lambda v: ({None: v[:, 0]}, {})
    if gen == "PCM":
        pairs = ad.pairs()
        D = _pair_columns(ad, comp, Vz, per_tuple, one_position)[0]
        labels, text = ad.pair_names(), f"{phi_name}(first) - {phi_name}(second), mean over variants"
        N = normalizer_value(spec.normalizer, k)
    elif gen in ("BCM", "VBCM"):
        total = Vz.sum(axis=1)
        rest = BACKGROUND.get(spec.background) != "all"
        D = np.column_stack([per_tuple(comp.fn((total - Vz[:, t]) / (k - 1) if rest else total / k, Vz[:, t])[0])
                             for t in range(k)])
        labels, text = list(ad.groups), f"{phi_name}(group) - {phi_name}(background), mean over variants"
        N = normalizer_value(spec.normalizer, k) if gen == "BCM" else None
    else:
        raise MetricError(f"unknown generalized metric {gen!r}")
    cols = [D] + ([per_tuple(Vz[:, t])[:, None] for t in range(k)] if signed_on else [])
    P = D.shape[1]

    def finish(v):
        values = {lab: v[:, i] for i, lab in enumerate(labels)}
        if N is not None:
            values[None] = v[:, :P].sum(axis=1) / N
        signed = {}
        if signed_on:
            m = v[:, P:]
            if gen == "PCM":
                signed = {lab: (text, m[:, a] - m[:, b]) for lab, (a, b) in zip(labels, pairs)}
            else:
                tot = m.sum(axis=1)
                signed = {lab: (text, m[:, t] - ((tot - m[:, t]) / (k - 1) if rest else tot / k))
                          for t, lab in enumerate(labels)}
        return values, signed

    return np.hstack(cols), finish


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
    signed_on = comp.name == "abs" and not score.set_valued
    if signed_on:  # the signed difference of the template means beneath |mean f(a) - mean f(b)|
        cols = np.column_stack([cols, per_template_differences(spec, ad, score, get_comparison("diff"), c)[ok]])
    Wc = Wf[:, prep.complete_idx[ok]]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (Wc @ cols) / Wc.sum(axis=1)[:, None]
    out[~np.isfinite(out)] = np.nan
    return per_template_columns(ad, out, signed_on)


# --------------------------------------------------------------------------
# set metrics (W1, AEG, AUC) per chunk of resamples
# --------------------------------------------------------------------------
def _set_values(prep: Prepared, c: int, jobs, Wx, out, basis, B, Tx=None):
    """Set and AUC metrics of one class, in chunks of ``RESAMPLES_PER_CHUNK``
    resamples (``Tx``: term weights, None when terms are not resampled):
    the compiled loops keep one resample's running sums, so a chunk holds
    only (resamples x groups x groups) arrays."""
    ad = prep.ad
    items = ClassItems(prep, c)
    R = Wx.shape[0]
    Bc = RESAMPLES_PER_CHUNK
    Wi32 = Wx.astype(np.int32)
    Ti32 = None if Tx is None else Tx.astype(np.int32)
    acc: dict = {}
    for s in range(0, R, Bc):
        items.start(Wi32[s:s + Bc], None if Ti32 is None else Ti32[s:s + Bc])
        for spec, cls in jobs:
            sc = get_score(spec.score)
            comp = get_comparison(spec.comparison)
            if not sc.set_valued:  # a scalar of weighted items (an AUC), then the engine's comparisons
                phi, overall = sc.weighted_sides(items, CATS["pos"], CATS["neg"])
                contrast = phi["group"][0] - overall[:, None]
                vals, signed = scalar_values(spec, ad, sc, comp, phi, contrast=contrast)
            else:
                vals, signed = _set_metric_chunk(spec, ad, sc, comp, items)
            for g, v in vals.items():
                acc.setdefault((spec.name, cls, g), []).append(v)
            for g, (label, v) in signed.items():
                acc.setdefault(("basis", spec.name, cls, g), [label]).append(v)
    for key, parts in acc.items():
        if key[0] == "basis":
            label, parts = parts[0], parts[1:]
            v = np.concatenate(parts)
            basis[key[1:]] = {"basis": label, "basis_reps": v[:B], "basis_obs": v[B]}
        else:
            out[key] = np.concatenate(parts)[:B]


def _set_metric_chunk(spec, ad, score, comp, items: ClassItems):
    """W1 / AEG metrics of one chunk: ({group label: (Bc,)}, {group label:
    (basis text, (Bc,))}); mirrors the engine's set metrics (accumulated
    value undefined if any part is). An AEG row's basis is the AEG over
    pairs of different templates (``ACROSS_TEMPLATES``) from the same
    resamples: every pair inside one template, of any of its copies, left
    out."""
    k, gen = ad.k, spec.generalized
    cats = CATS[getattr(score, "select", "all")]
    n = items.n(cats)  # (Bc, k)
    n_all = n.sum(1)
    out, signed = {}, {}
    aeg = comp.name != "W1"
    Wf = items.Wf
    if gen == "PCM":
        vals = []
        excess = aeg_excess(items, cats, spec) if aeg and items.Tc is not None else None
        between = aeg_excess(items, cats, spec, across=True) if excess is not None else None
        w1 = None if aeg else items.w1_pairs(cats)
        for i, ((a, b), name) in enumerate(zip(ad.pairs(), ad.pair_names())):
            if not aeg:
                vals.append(w1[:, i])
                continue
            U, Npairs = items.u_pair(cats, cats, a, b), n[:, a] * n[:, b]
            if excess is not None:  # term weights: a template's own pairs weighted by its terms' draws
                (Ux, Nx), (Uy, Ny) = excess[(a, b)], between[(a, b)]
            else:  # AEG(background a, group b) = 1/2 - U(a over b) / (|a||b|), pairs of copies of one template left out
                M, Nj = items.within(cats)
                Q = items.within_excess()
                Mab, Nab = M[:, a, b], Nj[:, a] * Nj[:, b]
                Ux, Nx = Q @ Mab, Q @ Nab
                Uy, Ny = Ux + Wf @ Mab, Nx + Wf @ Nab
            vals.append(0.5 - safe_ratio(U - Ux, Npairs - Nx))
            signed[name] = (ACROSS_TEMPLATES, 0.5 - safe_ratio(U - Uy, Npairs - Ny))
        V = np.column_stack(vals) if vals else np.zeros((n.shape[0], 0))
        for i, name in enumerate(ad.pair_names()):
            out[name] = V[:, i]
        N = normalizer_value(spec.normalizer, k)
        out[None] = accumulated(V, N)
        return out, signed
    if gen not in ("BCM", "VBCM"):
        raise MetricError(f"{spec.name}: {gen} with a set-valued score is not defined (use PCM, BCM or VBCM)")
    bg = BACKGROUND.get(spec.background)
    if bg is None:
        raise MetricError(f"{spec.name}: background must be 'all' or 'rest', got {spec.background!r}")
    if not aeg:
        V = items.w1_groups(cats, bg)
    else:  # AEG = 1/2 - U(bg over t)/(|bg||t|) = U(t over bg)/(|bg||t|) - 1/2
        U = items.u_over_all(cats, cats)
        nb = np.repeat(n_all[:, None], k, 1)
        if bg == "rest":
            U = U - items.u_grp(cats, cats)
            nb = nb - n
        if items.Tc is not None:  # the same with term weights inside each template
            Ux, Nx = aeg_excess(items, cats, spec)
            Uy, Ny = aeg_excess(items, cats, spec, across=True)
        else:
            M, Nj = items.within(cats)  # a template drawn W times: its own pairs once per copy, not W^2 times
            Q = items.within_excess()
            Mt = M.sum(axis=2)  # (J, k): U(t over all) inside each template
            Nall = Nj.sum(axis=1, keepdims=True)
            if bg == "rest":
                Mt = Mt - M[:, np.arange(k), np.arange(k)]
                Nall = Nall - Nj
            Ux, Nx = Q @ Mt, Q @ (Nall * Nj)
            Uy, Ny = Ux + Wf @ Mt, Nx + Wf @ (Nall * Nj)
        V = safe_ratio(U - Ux, nb * n - Nx) - 0.5
        Vy = safe_ratio(U - Uy, nb * n - Ny) - 0.5
        for t, name in enumerate(ad.groups):
            signed[name] = (ACROSS_TEMPLATES, Vy[:, t])
    for t, name in enumerate(ad.groups):
        out[name] = V[:, t]
    if gen == "BCM":
        out[None] = accumulated(V, normalizer_value(spec.normalizer, k))
    return out, signed
