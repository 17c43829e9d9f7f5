"""The term side of the two-way cluster bootstrap's closed form: every
quantity that depends on the term weights ``T[b, t]`` as well as the
template weights ``W[b, j]`` (:mod:`bias_suite.stats.bootstrap.terms` draws them,
:mod:`bias_suite.stats.bootstrap` has the method).

- counterfactual tuples: a tuple of template j weighs ``W[b, j]`` times the
  product of its members' term weights (:class:`TupleWeights`);
- per-template metrics: the group sets of a template weighted by ``T``
  (:func:`per_template_term_values`: weighted means, weighted W1);
- AEG: the pairs inside one template, weighted by ``T``, for the copy-pair
  correction (:func:`within_terms`: one pass over the items sorted by
  template and score), and the generic path's correction
  (:func:`aeg_without_copy_pairs`).

Everything here is used only where terms are resampled; without term
weights the closed form is the template-only one.
"""
from __future__ import annotations

import numpy as np

from ...exceptions import MetricError
from ...metrics.comparisons import ROUND_OFF, get_comparison
from ...metrics.generalized import item_selection, normalizer_value
from ...metrics.scores import get_score
from .kernels import by_resamples, draws_for_kernels, template_mean_gaps, tuple_weights, within_template_pairs
from .prepared import BACKGROUND, Prepared, accumulated, per_template_columns, safe_ratio
from .weighted_items import CATS, ClassItems, block_ends, item_multipliers

#: target size (resamples x cells) of one chunk here
CHUNK_CELLS = 1_000_000
#: most cells (pairs x templates x items x terms) of the linear W1 plan (:func:`_w1_plan`; 256 MB)
LINEAR_CELLS = 32_000_000
ABS, DIFF = get_comparison("abs"), get_comparison("diff")


def _steps(R: int, width: int):
    step = int(max(1, CHUNK_CELLS // max(width, 1)))
    return [(s, min(R, s + step)) for s in range(0, R, step)]


# ------------------------------------------------------------ tuples
class TupleWeights:
    """Per resample, the weight of every counterfactual tuple of an
    attribute: ``W[b, j] * prod_i T[b, term of member i]`` (members of
    one-term groups weigh 1 and are left out of the product), and the
    tuple-weighted means of per-tuple values.

    The weights are one compiled pass per resample
    (:func:`~bias_suite.stats.bootstrap.kernels.tuple_weights`).
    Means are deferred (:meth:`defer`) and computed together
    (:meth:`flush`): one product of the weights with the values of every
    tuple metric of the attribute reads the weights once."""

    #: most weights (resamples x tuples) made at once; most values (tuples x columns) per product
    KEEP = 4_000_000
    BATCH = 4_000_000

    def __init__(self, prep: Prepared, Wf: np.ndarray, Tf: np.ndarray):
        ad = prep.ad
        self.R, self.M = Wf.shape[0], len(ad.tuple_template)
        self.Wf, self.Tf = Wf, Tf
        several = np.flatnonzero(np.bincount(prep.term_g, minlength=ad.k) > 1)
        members = prep.term[ad.tuples[:, several]] if self.M else np.zeros((0, several.size), np.int64)
        self.members = np.ascontiguousarray(members, dtype=np.int64)
        self.tt = np.ascontiguousarray(prep.complete_idx[ad.tuple_template], dtype=np.int64)
        self.steps = [(0, self.R)] if self.R * self.M <= self.KEEP else _steps(self.R, self.M)
        self.jobs = []

    def defer(self, cols: np.ndarray, ok: np.ndarray, finish, key) -> None:
        """Queue the tuple-weighted means of ``cols`` (Mv, C) over the tuples
        ``ok`` (M,); :meth:`flush` gives ``finish(means (R, C))`` for ``key``."""
        self.jobs.append((cols, ok, finish, key))

    def flush(self) -> list:
        """[(key, finish(means))] of every queued job, in order; means are
        NaN where no tuple weighs. Jobs over the same tuples share one
        product (their values side by side, one column of ones for the
        total weight; at most ``BATCH`` values a product); a product over
        part of the tuples reads only their weights. The weights of a chunk
        of resamples are made once for all products."""
        groups: dict = {}
        for n, job in enumerate(self.jobs):
            groups.setdefault(job[1].tobytes(), []).append(n)
        products = []  # (job numbers, tuple positions or None, values side by side with a column of ones)
        for members in groups.values():
            ok = self.jobs[members[0]][1]
            idx = None if ok.all() else np.flatnonzero(ok)
            rows = self.M if idx is None else idx.size
            batch, width = [], 1
            for n in members + [None]:
                w = None if n is None else self.jobs[n][0].shape[1]
                if n is not None and (not batch or (width + w) * rows <= self.BATCH):
                    batch.append(n)
                    width += w
                    continue
                if batch:
                    X = np.hstack([self.jobs[m][0] for m in batch] + [np.ones((rows, 1))])
                    products.append((batch, idx, X, np.empty((self.R, X.shape[1]))))
                batch, width = ([n], 1 + w) if n is not None else ([], 1)
        for s, e in self.steps:
            wt = by_resamples(tuple_weights, *draws_for_kernels(self.Wf[s:e], self.Tf[s:e], np.float64), self.tt,
                              self.members, items=self.tt.size)  # (tuples, resamples)
            for _, idx, X, sums in products:
                sums[s:e] = (wt if idx is None else np.take(wt, idx, axis=0)).T @ X
        done = {}
        with np.errstate(divide="ignore", invalid="ignore"):
            for batch, _, _, sums in products:
                off = 0
                for n in batch:
                    cols, _, finish, key = self.jobs[n]
                    v = sums[:, off:off + cols.shape[1]] / sums[:, -1:]
                    v[~np.isfinite(v)] = np.nan
                    done[n] = (key, finish(v))
                    off += cols.shape[1]
        out = [done[n] for n in range(len(self.jobs))]
        self.jobs = []
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


def _weighted_means(prep, x, seg, term, Jc):
    """Static part of the T-weighted means per template and group: (S, N)
    with (T @ S) / (T @ N) the means, S and N (n_terms, Jc * k)."""
    nT, k = prep.n_terms, prep.ad.k
    tg = prep.term_g
    col = seg * k + tg[term]  # (template, group) columns
    cell = term * (k * Jc) + col
    S = np.bincount(cell, weights=x, minlength=nT * k * Jc).reshape(nT, k * Jc)
    N = np.bincount(cell, minlength=nT * k * Jc).astype(np.float64).reshape(nT, k * Jc)
    return S, N


def _mean_cells(prep, x, seg, term, Jc):
    """The entries of the T-weighted means per template and group for
    :func:`~bias_suite.stats.bootstrap.kernels.template_mean_gaps`: cell
    starts (Jc * k + 1,), and per entry its term, the sum and the count of
    its scores, by (template, group, term)."""
    k = prep.ad.k
    g = prep.term_g[term]
    key = (seg * k + g) * max(prep.n_terms, 1) + term
    uniq, inv = np.unique(key, return_inverse=True)
    S = np.bincount(inv, weights=x, minlength=uniq.size)
    N = np.bincount(inv, minlength=uniq.size).astype(np.float64)
    cell = uniq // max(prep.n_terms, 1)
    starts = np.searchsorted(cell, np.arange(Jc * k + 1)).astype(np.int64)
    return starts, (uniq % max(prep.n_terms, 1)).astype(np.int64), S, N


def _segment_starts(seg):
    new = np.r_[True, seg[1:] != seg[:-1]] if seg.size else np.zeros(0, bool)
    return np.flatnonzero(new), np.cumsum(new) - 1


def _w1_plan(x, seg, g, term, pairs, term_g, Jc, Tf):
    """Plan of W1(a, b) for every pair in every template with the term
    weights ``Tf`` (R, n_terms) (items sorted by template, then value).

    Where a group's weight in a template is the same in every resample (its
    terms there make up whole blocks, each term with the same number of
    items in a block, as in the usual design: a block's term weights always
    sum to its size, so one form of every term, or every term once, weighs
    the same in every resample), F_a - F_b at each item is linear in T:
    ``G @ T[terms]`` with the gap to the pair's next item and the fixed
    weights folded into G, and W1 the sum of its absolute values over the
    template. Other templates where both groups have items go by weighted
    cumulative sums (:func:`_w1_general`). All pairs at once: each item is
    repeated for each pair of its group."""
    P = len(pairs)
    pa = np.array([p[0] for p in pairs], dtype=np.int64)
    pb = np.array([p[1] for p in pairs], dtype=np.int64)
    k = int(term_g.max()) + 1 if term_g.size else 0
    members = [np.flatnonzero(term_g == t) for t in range(k)]
    size_g = np.array([m.size for m in members], dtype=np.int64)
    within = np.zeros(len(term_g), dtype=np.int64)  # each term's place among its group's terms
    for m in members:
        within[m] = np.arange(m.size)
    na, nb = size_g[pa], size_g[pb]
    nTp = int((na + nb).max()) if P else 0
    terms = np.zeros((P, nTp), dtype=np.int64)  # each pair's terms: a's, then b's (padding: term 0, zero rows)
    for i, (a, b) in enumerate(pairs):
        terms[i, :na[i] + nb[i]] = np.r_[members[a], members[b]]
    # per group and template: its weight in every resample (its items' term weights summed), and whether fixed
    n_terms = len(term_g)
    counts = np.bincount(term * (k * Jc) + g * Jc + seg, minlength=n_terms * k * Jc).reshape(n_terms, k * Jc)
    weight = Tf @ counts  # (R, k * Jc): integer-valued, so exact
    total = weight[-1].reshape(k, Jc)  # the observed data: every term weighs 1
    fixed = (weight.min(axis=0) == weight.max(axis=0)).reshape(k, Jc)
    both = (total[pa] > 0) & (total[pb] > 0)
    linear = both & fixed[pa] & fixed[pb]
    # (pair, item) for every item of either group of the pair, in pair order, then item order
    in_pair = (g[None, :] == pa[:, None]) | (g[None, :] == pb[:, None])
    pr, it = np.nonzero(in_pair)
    xs, ss, ts = x[it], seg[it], term[it]
    isa = g[it] == pa[pr]
    plan = {"terms": terms, "both": both, "G": None, "general": []}
    tpl = np.flatnonzero(linear.any(axis=0))  # templates where some pair is linear
    width = int(np.bincount(pr * Jc + ss, minlength=P * Jc).max()) if pr.size else 0
    if P * tpl.size * width * nTp > LINEAR_CELLS:  # the linear plan's matrix would not fit: sums for all
        linear = np.zeros_like(linear)
    lin = linear[pr, ss]
    if lin.any():
        pr_l, xs_l, ss_l, isa_l = pr[lin], xs[lin], ss[lin], isa[lin]
        lt = within[ts[lin]] + np.where(isa_l, 0, na[pr_l])
        run = pr_l * Jc + ss_l
        n = run.size
        new = np.r_[True, run[1:] != run[:-1]]
        starts = np.flatnonzero(new)
        width = int(np.diff(np.r_[starts, n]).max())
        pos = np.arange(n) - starts[np.cumsum(new) - 1]  # each item's place in its (pair, template)
        dz = np.where(np.r_[~new[1:], False], np.r_[xs_l[1:], 0.0] - xs_l, 0.0)  # gap to the pair's next item
        row = np.searchsorted(tpl, ss_l)
        coef = np.where(isa_l, 1.0 / total[pa[pr_l], ss_l], -1.0 / total[pb[pr_l], ss_l])
        # Z[p, j, i, l]: the coefficient of term l's weight in F_a - F_b at the i-th item of the pair's
        # items in template j (a cumulative sum over the items up to it), times the gap to the next item
        Z = np.zeros((P, tpl.size, width, nTp))
        Z[pr_l, row, pos, lt] = coef
        for i in range(1, width):  # cumulative over the items (a short axis)
            Z[:, :, i] += Z[:, :, i - 1]
        gap = np.zeros((P, tpl.size, width))
        gap[pr_l, row, pos] = dz
        Z *= gap[..., None]
        plan["G"] = (Z.reshape(P, tpl.size * width, nTp), width, tpl)
    gen = both & ~linear
    for i in np.flatnonzero(gen.any(axis=1)):
        sel = (pr == i) & gen[i][ss]
        plan["general"].append((i, (xs[sel], ss[sel], isa[sel], ts[sel])))
    return plan


def _w1_general(xs, ss, isa, ts, Tf):
    """(Rc, templates) W1 by weighted cumulative sums (any design); the
    templates are ``ss[starts]``, in order; NaN where a side weighs 0."""
    starts, segi = _segment_starts(ss)
    last = np.r_[starts[1:], xs.size] - 1
    dx = np.zeros(xs.size)
    dx[:-1] = np.where(ss[1:] == ss[:-1], np.diff(xs), 0.0)
    w = Tf[:, ts]
    F, tot = [], []
    for side in (isa, ~isa):
        wt = w * side
        C = np.cumsum(wt, axis=1)
        C -= (C - wt)[:, starts[segi]]
        tot.append(C[:, last])
        with np.errstate(divide="ignore", invalid="ignore"):
            F.append(C / tot[-1][:, segi])
    d = np.abs(F[0] - F[1]) * dx
    d[~np.isfinite(d)] = 0.0
    v = np.add.reduceat(d, starts, axis=1)
    v[(tot[0] == 0) | (tot[1] == 0)] = np.nan
    return v, ss[starts]


def _weighted_w1(plan, Tf, Jc):
    """(pairs, Jc, Rc) W1 between the T-weighted sets of the two groups of
    each pair inside each template (:func:`_w1_plan`); NaN where a set is
    empty or weighs nothing."""
    R = Tf.shape[0]
    P = plan["both"].shape[0]
    out = np.zeros((P, Jc, R))
    if plan["G"] is not None:
        G, width, tpl = plan["G"]
        if width:
            TT = np.ascontiguousarray(Tf.T)
            for i in range(P):  # pair by pair: the products stay in cache
                L = G[i] @ TT[plan["terms"][i]]  # (templates * width, Rc)
                np.abs(L, out=L)
                out[i, tpl] = L.reshape(tpl.size, width, R).sum(axis=1)
    out[~plan["both"]] = np.nan
    for i, args in plan["general"]:
        v, tpl = _w1_general(*args, Tf)
        out[i, tpl] = v.T
    return out


def _mean_differences(comp, means, a_idx, b_idx, signed_on, bounded):
    """(D, signed) of the comparison between the groups' means of each pair,
    (Rc, Jc, pairs); the built-in |x - y| and x - y on means within [-1, 1]
    (``bounded``: means of values within it) by one matrix product (equal
    up to round-off: 0, as the comparisons say), others by the comparison
    itself."""
    Rc, Jc, k = means.shape
    if bounded and comp.fn in (ABS.fn, DIFF.fn):
        C = np.zeros((k, a_idx.size))
        C[a_idx, np.arange(a_idx.size)] = 1.0
        C[b_idx, np.arange(b_idx.size)] = -1.0
        Ds = (means.reshape(Rc * Jc, k) @ C).reshape(Rc, Jc, a_idx.size)
        with np.errstate(invalid="ignore"):
            Ds[np.abs(Ds) <= ROUND_OFF] = 0.0  # scale max(1, |x|, |y|) is 1 here
        D = np.abs(Ds) if comp.fn is ABS.fn else Ds
        return D, (Ds if signed_on else None)
    ma, mb = means[..., a_idx], means[..., b_idx]
    return comp.fn(ma, mb)[0], (DIFF.fn(ma, mb)[0] if signed_on else None)


def per_template_term_values(spec, prep: Prepared, score, comp, c, Wf, Tf):
    """Per-template metrics (AvgIF, AvgScoreDiff) with the group sets of
    each template weighted by the term weights: (values {label: (R,)},
    signed {label: (text, (R,))}), or None when no template counts in the
    observed data (the last row of ``Wf``/``Tf``); a template counts in a
    resample when every group weighs in it."""
    ad = prep.ad
    k, Jc = ad.k, len(ad.templates)
    pairs = ad.pairs()
    P = len(pairs)
    x, seg, g, term = _template_items(prep, score, c)
    # the closed form takes set scores (W1 of the weighted sets) and mean scores (d of the weighted means)
    if score.set_valued:
        if comp.name != "W1":
            raise MetricError(f"{spec.name}: per-template set scores are compared with W1")
        plan = _w1_plan(x, seg, g, term, pairs, prep.term_g, Jc, Tf)
    else:
        bounded = x.size == 0 or np.abs(x).max() <= 1.0
        compiled = bounded and comp.fn in (ABS.fn, DIFF.fn)
        if not compiled:
            S, Nn = _weighted_means(prep, x, seg, term, Jc)
    signed_on = not score.set_valued and comp.name == "abs"
    N = normalizer_value(spec.normalizer, k)
    R = Wf.shape[0]
    vals = np.empty((R, 2 * P + 1 if signed_on else P + 1))
    a_idx = np.array([p[0] for p in pairs], dtype=np.int64)
    b_idx = np.array([p[1] for p in pairs], dtype=np.int64)
    if not score.set_valued and compiled:  # |x - y| or x - y of means within [-1, 1]: one compiled pass
        cells = _mean_cells(prep, x, seg, term, Jc)
        num, sgn, den = by_resamples(template_mean_gaps, *draws_for_kernels(Wf, Tf, np.float64),
                                     prep.complete_idx.astype(np.int64), *cells, a_idx, b_idx, comp.fn is ABS.fn,
                                     ROUND_OFF, items=x.size)
        if den[-1] == 0:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            vals[:, :P] = (num / den).T
            vals[:, P] = vals[:, :P].sum(axis=1) / N
            if signed_on:
                vals[:, P + 1:] = (sgn / den).T
        vals[~np.isfinite(vals)] = np.nan
        return per_template_columns(ad, vals, signed_on)
    for s, e in _steps(R, Jc * (2 * P + k + 1)):
        if score.set_valued:
            D = _weighted_w1(plan, Tf[s:e], Jc)  # (P, Jc, Rc)
            ok = np.isfinite(D).all(axis=0)  # (Jc, Rc): the templates that count in each resample
            Wc = Wf[s:e, prep.complete_idx].T * ok
            D[:, ~ok] = 0.0
            num = np.einsum("jr,pjr->rp", Wc, D)
            ok = ok.T
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                means = ((Tf[s:e] @ S) / (Tf[s:e] @ Nn)).reshape(e - s, Jc, k)
            D, Ds = _mean_differences(comp, means, a_idx, b_idx, signed_on, bounded)  # (Rc, Jc, P)
            ok = np.isfinite(D).all(axis=2)  # (Rc, Jc)
            Wc = (Wf[s:e, prep.complete_idx] * ok).T
            D[~ok] = 0.0
            num = np.einsum("jr,rjp->rp", Wc, D)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / Wc.sum(axis=0)[:, None]
            vals[s:e, :P] = num * inv
            vals[s:e, P] = vals[s:e, :P].sum(axis=1) / N
            if signed_on:
                Ds[~ok] = 0.0
                vals[s:e, P + 1:] = np.einsum("jr,rjp->rp", Wc, Ds) * inv
        if e == R and not ok[-1].any():
            return None
    vals[~np.isfinite(vals)] = np.nan
    return per_template_columns(ad, vals, signed_on)


# ------------------------------------------------------------- AEG pairs
#: the verdict basis of an AEG row: the AEG over pairs of items of different templates
ACROSS_TEMPLATES = "AEG across templates (pairs inside one template left out)"


def within_terms(items: ClassItems, cats):
    """The pairs inside each template in the current chunk of resamples,
    items weighted by their term weights (and multipliers), summed over the
    templates with the weight of their copies: ``(U, NN)``, each (2, Bc, k,
    k), the sums of Q U_j(a, c) (U(group a over group c) inside template j,
    ties 1/2) and of Q N_j(a) N_j(c) (N_j(a) the weight of group a in j),
    with Q = W^2 - W in ``[0]`` and Q = W^2 in ``[1]``: one pass over the
    items sorted by template and score per resample
    (:func:`~bias_suite.stats.bootstrap.kernels.within_template_pairs`)."""
    def static():
        p = items.positions(cats)
        order = np.lexsort((items.x[p], items.tpl[p]))  # by template, then score
        q = p[order]
        tq, xq = items.tpl[q], items.x[q]
        rq = np.ones(q.size) if items.r is None else items.r[q].astype(np.float64)
        new_template = np.r_[True, tq[1:] != tq[:-1]] if q.size else np.zeros(0, bool)
        return (np.ascontiguousarray(tq, dtype=np.int64), np.ascontiguousarray(items.term[q], dtype=np.int64),
                np.ascontiguousarray(rq), np.ascontiguousarray(items.g[q], dtype=np.int64),
                block_ends(xq, new_template), new_template)

    def chunk():
        arrays = items.memo(("within_terms", cats), static)
        U, NN = by_resamples(within_template_pairs, *items.draws, *arrays, items.k, items=arrays[0].size)
        return np.ascontiguousarray(np.moveaxis(U, -1, 1)), np.ascontiguousarray(np.moveaxis(NN, -1, 1))

    return items.chunk_memo(("within_terms", cats), chunk)


def aeg_excess(items: ClassItems, cats, spec, across: bool = False):
    """The pairs between two copies of one template in the current chunk,
    with term weights: for PCM {(a, b): (U excess, pair-count excess)}, for
    BCM/VBCM (U excess (Bc, k), pair-count excess (Bc, k)) of U(group over
    its background). ``across``: every pair inside a template instead
    (W^2 times its own pairs rather than W^2 - W; the AEG across
    templates)."""
    U, NN = (x[1 if across else 0] for x in within_terms(items, cats))
    if spec.generalized == "PCM":
        return {(a, b): (U[:, a, b], NN[:, a, b]) for a in range(items.k) for b in range(items.k) if a < b}
    diag = np.arange(items.k)
    Ut, Nb = U.sum(axis=2), NN.sum(axis=2)  # U(t over the template's items), N_t times the template's weight
    if BACKGROUND.get(spec.background) == "rest":  # U(t over t) = N_t^2 / 2
        Ut, Nb = Ut - NN[:, diag, diag] / 2.0, Nb - NN[:, diag, diag]
    return Ut, Nb


def aeg_without_copy_pairs(prep: Prepared, spec, c: int, W: np.ndarray, values: dict, T=None,
                           across: bool = False) -> dict:
    """AEG values of resamples evaluated on copied templates (the generic
    path), with the pairs between two copies of one template left out as
    the closed form leaves them out: ``values`` {group label: (B,)} as the
    engine gives them on the resampled data, ``W`` (B, J) the template
    counts, ``T`` (B, n_terms) the term counts (None: terms not resampled).
    ``across``: leave out every pair inside a template instead (the AEG
    across templates, the verdict basis)."""
    ad = prep.ad
    sc = get_score(spec.score)
    cats = CATS[getattr(sc, "select", "all")]
    try:
        item_multipliers(ad.row_weight, ad.item_row)
        items = ClassItems(prep, c)
    except MetricError:  # multipliers too large for integers: the weights themselves (no exact sums needed here)
        items = ClassItems(prep, c, integer=False)
    if T is None:
        return _template_only(prep, spec, items, cats, W, values, across)
    B = W.shape[0]
    parts_n, parts_ex = [], []
    for s, e in _steps(B, items.m * max(ad.k, 1)):
        items.start(W[s:e].astype(np.int32), T[s:e].astype(np.int32))
        parts_n.append(items.n(cats))
        parts_ex.append(aeg_excess(items, cats, spec, across=across))
    n = np.concatenate(parts_n)
    if spec.generalized == "PCM":
        ex = {key: tuple(np.concatenate([p[key][i] for p in parts_ex]) for i in range(2)) for key in parts_ex[0]}
    else:
        ex = tuple(np.concatenate([p[i] for p in parts_ex]) for i in range(2))
    if spec.generalized == "PCM":
        return _without_excess(spec, ad, values, n, lambda a, b: ex[(a, b)])
    return _without_excess(spec, ad, values, n, lambda t: (ex[0][:, t], ex[1][:, t]))


def _without_excess(spec, ad, values, n, excess):
    """The AEG values with the excess pairs left out: ``n`` (B, k) item
    weights per group; ``excess(a, b)`` (pairs) or ``excess(t)`` (a group
    against its background) gives the (B,) excess U and pair count."""
    out = dict(values)
    k = ad.k
    if spec.generalized == "PCM":
        for (a, b), name in zip(ad.pairs(), ad.pair_names()):
            if name not in values:
                continue
            N = n[:, a] * n[:, b]
            U = (0.5 - values[name]) * N
            eu, en = excess(a, b)
            out[name] = 0.5 - safe_ratio(U - eu, N - en)
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
            eu, en = excess(t)
            out[name] = safe_ratio(V - eu, N - en) - 0.5
        parts = [out[nm] for nm in ad.groups if nm in out]
    if None in values and parts and spec.generalized in ("PCM", "BCM"):
        out[None] = accumulated(np.column_stack(parts), normalizer_value(spec.normalizer, k))
    return out


def _template_only(prep, spec, items, cats, W, values, across=False):
    """The correction without term weights (each template's own pairs from
    the data, counted once per copy; none with ``across``)."""
    ad = prep.ad
    M, Nj = items.within(cats)
    Wf = W.astype(np.float64)
    Q = Wf * Wf if across else Wf * Wf - Wf
    n = Wf @ Nj  # (B, k) item weights per group in each resample
    if spec.generalized == "PCM":
        return _without_excess(spec, ad, values, n, lambda a, b: (Q @ M[:, a, b], Q @ (Nj[:, a] * Nj[:, b])))
    k = ad.k
    Mt, Nall = M.sum(axis=2), Nj.sum(axis=1, keepdims=True)
    if BACKGROUND.get(spec.background) == "rest":
        Mt, Nall = Mt - M[:, np.arange(k), np.arange(k)], Nall - Nj
    return _without_excess(spec, ad, values, n,
                           lambda t: (Q @ Mt[:, t], Q @ (Nall[:, 0 if Nall.shape[1] == 1 else t] * Nj[:, t])))
