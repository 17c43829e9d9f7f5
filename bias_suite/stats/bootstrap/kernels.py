"""Compiled loops of the closed-form bootstrap's set metrics (numba).

The set metrics (W1, AEG, the AUCs) need, for every resample, one pass over
the items of a class in score order: an item's weight is its template's
draw count times its term's draw count (where terms are resampled) times
its integer balance multiplier, and the quantities are running sums of
those weights. As numpy expressions each pass is several passes over a
(resamples x items) array (gather the weights, cumulative sums, masks,
products, a reduction); here it is one pass over the items whose inner
loop runs over the resamples: the running sums of all resamples sit side
by side in memory, so the processor updates several resamples with one
instruction (the resamples never depend on each other).

- :func:`u2_cells`: twice the Mann-Whitney U of high items over low items,
  summed per output cell, exact in 64-bit integers (ties count 1/2 and so
  1 in 2U);
- :func:`w1_groups`: W1 between each group and its background (all items
  or the rest), ``sum_i |F_t(x_i) - F_bg(x_i)| (x_{i+1} - x_i)``;
- :func:`w1_pairs`: W1 between the two groups of each pair;
- :func:`within_template_pairs`: U between the groups inside each
  template, with term weights, summed over templates with the weight of
  their copies (the AEG's pairs inside one template);
- :func:`tuple_weights`: the counterfactual tuples' weights;
- :func:`template_mean_gaps`: the per-template metrics of mean scores
  (the groups' term-weighted means inside each template, their differences
  per pair, summed over templates with the template draws).

The kernels take the draws resamples last: ``Wt`` (J, R) template draws
and ``Tt`` (n_terms, R) term draws (for the U and W1 sums a (0, R) array
where terms are not resampled), C-ordered, int64 for the exact U sums and
float64 for the others (:func:`draws_for_kernels`), and the items'
template, term and multiplier in the order the caller sorted them; their
outputs end with the resample axis too. They are compiled once and cached
on disk (``cache=True``).

Resamples are independent, so :func:`by_resamples` cuts the columns of
``Wt`` and ``Tt`` into contiguous blocks and runs the kernel on each in a
thread of its own (the kernels release the GIL): every resample's value is
computed by the same operations as in one thread, so the results do not
depend on the number of threads. :func:`kernel_threads` sets that number
for a block of code (the bootstrap sets it from ``n_jobs``).
"""
from __future__ import annotations

import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np
from numba import njit

#: Threads the kernels run in (set by :func:`kernel_threads`).
_THREADS = contextvars.ContextVar("bias_suite_kernel_threads", default=1)
#: Items x resamples below which a kernel runs in the calling thread.
MIN_THREADED_WORK = 200_000
_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()


def _forget_pool() -> None:  # a forked child has the pool's object but not its threads
    global _POOL, _POOL_SIZE
    _POOL, _POOL_SIZE = None, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


@njit(cache=True)
def _loaded(x):
    return x + 1


def load_compiler() -> None:
    """Set up numba's compiler state in this process (about a second, once;
    loading the first compiled loop from the disk cache does it), so that
    processes forked from it load their loops in milliseconds."""
    _loaded(np.int64(0))


@contextmanager
def kernel_threads(n: int):
    """Run the kernels called inside the block in up to ``n`` threads."""
    token = _THREADS.set(max(1, int(n)))
    try:
        yield
    finally:
        _THREADS.reset(token)


def _pool(n: int) -> ThreadPoolExecutor:
    global _POOL, _POOL_SIZE
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE < n:
            if _POOL is not None:
                _POOL.shutdown(wait=False)
            _POOL, _POOL_SIZE = ThreadPoolExecutor(max_workers=n, thread_name_prefix="bias_suite_kernel"), n
        return _POOL


def draws_for_kernels(W: np.ndarray, T: np.ndarray | None, dtype) -> tuple:
    """(Wt, Tt): the (R, J) template draws and (R, n_terms) term draws
    (None: not resampled) as the kernels take them, resamples last,
    C-ordered, of ``dtype``; ``Tt`` (0, R) without terms."""
    Wt = np.ascontiguousarray(np.asarray(W).T, dtype=dtype)
    Tt = np.zeros((0, Wt.shape[1]), dtype) if T is None else np.ascontiguousarray(np.asarray(T).T, dtype=dtype)
    return Wt, Tt


def by_resamples(kernel, Wt, Tt, *args, items: int):
    """``kernel(Wt, Tt, *args)`` with the resamples (columns of ``Wt`` and
    ``Tt``) in contiguous blocks over :func:`kernel_threads` threads, the
    outputs joined on their last axis (each output, where the kernel
    returns a tuple); ``items``: the items one resample passes over (little
    work stays in the calling thread)."""
    R = Wt.shape[1]
    n = min(_THREADS.get(), R)
    if n <= 1 or R * max(items, 1) < MIN_THREADED_WORK:
        return kernel(Wt, Tt, *args)
    cuts = np.linspace(0, R, n + 1).astype(int)
    pool = _pool(n)
    parts = [pool.submit(kernel, np.ascontiguousarray(Wt[:, a:b]), np.ascontiguousarray(Tt[:, a:b]), *args)
             for a, b in zip(cuts[:-1], cuts[1:])]
    parts = [f.result() for f in parts]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(list(p), axis=-1) for p in zip(*parts))
    return np.concatenate(parts, axis=-1)


@njit(cache=True, nogil=True)
def u2_cells(Wt, Tt, tpl, term, mult, low, high, bend, new_segment, cell, n_cells):
    """(cells, R) int64: per resample, the sum over the high items i of
    ``w_i * (C_low(< x_i) + C_low(<= x_i))`` per output cell ``cell[i]``,
    with ``C_low`` the running sum of the low items' weights, restarted
    where ``new_segment``; ``bend[i]``: the last item of i's block of equal
    scores, read at the first item of a block (blocks never cross
    segments). ``Wt``, ``Tt`` int64."""
    R = Wt.shape[1]
    n = tpl.shape[0]
    out = np.zeros((n_cells, R), dtype=np.int64)
    run = np.zeros(R, dtype=np.int64)
    block = np.zeros(R, dtype=np.int64)
    has_t = Tt.shape[0] > 0
    i = 0
    while i < n:
        if new_segment[i]:
            run[:] = 0
        e = bend[i]
        if e == i:  # alone at its score: C_low(< x) + C_low(<= x) = 2 C_low(< x) + its own low weight
            m = np.int64(mult[i])
            Wi = Wt[tpl[i]]
            oc = out[cell[i]]
            lo, hi = low[i], high[i]
            if has_t:
                Ti = Tt[term[i]]
                if lo and hi:
                    for b in range(R):
                        w = Wi[b] * m * Ti[b]
                        oc[b] += w * (2 * run[b] + w)
                        run[b] += w
                elif lo:
                    for b in range(R):
                        run[b] += Wi[b] * m * Ti[b]
                elif hi:
                    for b in range(R):
                        oc[b] += Wi[b] * m * Ti[b] * (2 * run[b])
            else:
                if lo and hi:
                    for b in range(R):
                        w = Wi[b] * m
                        oc[b] += w * (2 * run[b] + w)
                        run[b] += w
                elif lo:
                    for b in range(R):
                        run[b] += Wi[b] * m
                elif hi:
                    for b in range(R):
                        oc[b] += Wi[b] * m * (2 * run[b])
            i += 1
            continue
        block[:] = 0  # a block of equal scores: its low weight, then each high item over 2 C_low(<) + it
        for q in range(i, e + 1):
            if low[q]:
                m = np.int64(mult[q])
                Wq = Wt[tpl[q]]
                if has_t:
                    Tq = Tt[term[q]]
                    for b in range(R):
                        block[b] += Wq[b] * m * Tq[b]
                else:
                    for b in range(R):
                        block[b] += Wq[b] * m
        for q in range(i, e + 1):
            if high[q]:
                m = np.int64(mult[q])
                Wq = Wt[tpl[q]]
                oc = out[cell[q]]
                if has_t:
                    Tq = Tt[term[q]]
                    for b in range(R):
                        oc[b] += Wq[b] * m * Tq[b] * (2 * run[b] + block[b])
                else:
                    for b in range(R):
                        oc[b] += Wq[b] * m * (2 * run[b] + block[b])
        for b in range(R):
            run[b] += block[b]
        i = e + 1
    return out


@njit(cache=True, nogil=True)
def _item_weights(Wt, Tt, tpl, term, mult, i, w):
    """Item i's weight in every resample into ``w`` (R,)."""
    m = np.float64(mult[i])
    Wi = Wt[tpl[i]]
    if Tt.shape[0] > 0:
        Ti = Tt[term[i]]
        for b in range(w.shape[0]):
            w[b] = Wi[b] * m * Ti[b]
    else:
        for b in range(w.shape[0]):
            w[b] = Wi[b] * m


@njit(cache=True, nogil=True)
def _term_weights(Tt, term, mult, i, w):
    """Item i's term weight (its term's draws times its multiplier) in
    every resample into ``w`` (R,)."""
    m = np.float64(mult[i])
    Ti = Tt[term[i]]
    for b in range(w.shape[0]):
        w[b] = m * Ti[b]


@njit(cache=True, nogil=True)
def _group_totals(Wt, Tt, tpl, term, mult, g, k):
    """(k, R): the items' summed weight per group."""
    R = Wt.shape[1]
    tot = np.zeros((k, R))
    w = np.empty(R)
    for i in range(tpl.shape[0]):
        _item_weights(Wt, Tt, tpl, term, mult, i, w)
        tg = tot[g[i]]
        for b in range(R):
            tg[b] += w[b]
    return tot


@njit(cache=True, nogil=True)
def w1_groups(Wt, Tt, tpl, term, mult, g, dx, k, rest):
    """(k, R) W1 between each group t and its background (``rest``: the
    other groups' items, else every item), NaN where either side weighs 0:
    ``sum_i |F_t(x_i) - F_bg(x_i)| dx_i`` with F the weighted share of a
    side's items at or below x_i and ``dx_i = x_{i+1} - x_i``. ``Wt``,
    ``Tt`` float64 (integer counts: the running sums are exact)."""
    R = Wt.shape[1]
    n = tpl.shape[0]
    tot = _group_totals(Wt, Tt, tpl, term, mult, g, k)
    everything = np.zeros(R)
    for t in range(k):
        for b in range(R):
            everything[b] += tot[t, b]
    inv_t = np.zeros((k, R))
    inv_b = np.zeros((k, R))
    for t in range(k):
        for b in range(R):
            nb = everything[b] - tot[t, b] if rest else everything[b]
            inv_t[t, b] = 1.0 / tot[t, b] if tot[t, b] > 0 else 0.0
            inv_b[t, b] = 1.0 / nb if nb > 0 else 0.0
    run = np.zeros((k, R))
    run_all = np.zeros(R)
    acc = np.zeros((k, R))
    w = np.empty(R)
    for i in range(n):
        _item_weights(Wt, Tt, tpl, term, mult, i, w)
        rg = run[g[i]]
        for b in range(R):
            rg[b] += w[b]
            run_all[b] += w[b]
        d = dx[i]
        if d == 0.0:
            continue
        for t in range(k):
            rt, it_, ib, at = run[t], inv_t[t], inv_b[t], acc[t]
            if rest:
                for b in range(R):
                    at[b] += abs(rt[b] * it_[b] - (run_all[b] - rt[b]) * ib[b]) * d
            else:
                for b in range(R):
                    at[b] += abs(rt[b] * it_[b] - run_all[b] * ib[b]) * d
    out = np.empty((k, R))
    for t in range(k):
        for b in range(R):
            nb = everything[b] - tot[t, b] if rest else everything[b]
            out[t, b] = np.nan if tot[t, b] == 0 or nb == 0 else acc[t, b]
    return out


@njit(cache=True, nogil=True)
def w1_pairs(Wt, Tt, tpl, term, mult, g, x, k, pa, pb, pair_start, pair_of):
    """(pairs, R) W1 between groups ``pa[p]`` and ``pb[p]``, NaN where
    either weighs 0. ``|F_a - F_b|`` is a step function that moves only at
    the items of a or b, so each pair's integral is taken up to x_i when an
    item of one of its groups arrives (``pair_of[pair_start[t]:pair_start[t + 1]]``:
    the pairs of group t), not at every item. ``Wt``, ``Tt`` float64."""
    R = Wt.shape[1]
    n = tpl.shape[0]
    P = pa.shape[0]
    out = np.zeros((P, R))
    if n == 0:
        out[:] = np.nan
        return out
    tot = _group_totals(Wt, Tt, tpl, term, mult, g, k)
    inv = np.zeros((k, R))
    for t in range(k):
        for b in range(R):
            inv[t, b] = 1.0 / tot[t, b] if tot[t, b] > 0 else 0.0
    run = np.zeros((k, R))
    F = np.zeros((k, R))
    cur = np.zeros((P, R))
    acc = np.zeros((P, R))
    last = np.full(P, x[0])
    w = np.empty(R)
    for i in range(n):
        t = g[i]
        xi = x[i]
        for q in range(pair_start[t], pair_start[t + 1]):
            p = pair_of[q]
            step = xi - last[p]
            if step != 0.0:
                ap, cp = acc[p], cur[p]
                for b in range(R):
                    ap[b] += cp[b] * step
            last[p] = xi
        _item_weights(Wt, Tt, tpl, term, mult, i, w)
        rt, Ft, it_ = run[t], F[t], inv[t]
        for b in range(R):
            rt[b] += w[b]
            Ft[b] = rt[b] * it_[b]
        for q in range(pair_start[t], pair_start[t + 1]):
            p = pair_of[q]
            Fa, Fb, cp = F[pa[p]], F[pb[p]], cur[p]
            for b in range(R):
                cp[b] = abs(Fa[b] - Fb[b])
    for p in range(P):
        step = x[n - 1] - last[p]
        for b in range(R):
            v = acc[p, b] + cur[p, b] * step
            out[p, b] = np.nan if tot[pa[p], b] == 0 or tot[pb[p], b] == 0 else v
    return out


@njit(cache=True, nogil=True)
def within_template_pairs(Wt, Tt, tpl, term, mult, g, bend, new_template, k):
    """The pairs inside one template, with term weights, summed over the
    templates with the weight of their copies (items sorted by template,
    then score; ``new_template`` where a template's items start;
    ``bend[i]``: the last item of i's block of equal scores in its
    template, read at a block's first item). Per resample b and template j
    with draws W = ``Wt[j, b]``, U_j(a, c) = U(group a over group c) inside
    the template (ties 1/2) and N_j(a) its items of group a weighted by
    their terms: ``U`` (2, k, k, R) and ``NN`` (2, k, k, R) the sums over
    templates of Q U_j(a, c) and Q N_j(a) N_j(c), with Q = W^2 - W (the
    pairs between two copies of a template) in ``[0]`` and Q = W^2 (every
    pair inside a template) in ``[1]``. ``Wt``, ``Tt`` float64."""
    R = Wt.shape[1]
    n = tpl.shape[0]
    U = np.zeros((2, k, k, R))
    NN = np.zeros((2, k, k, R))
    run = np.zeros((k, R))  # the template's items so far, per group (at its end: N_j)
    block = np.zeros((k, R))
    u = np.zeros((k, k, R))
    w = np.empty(R)
    q0 = np.empty(R)
    q1 = np.empty(R)
    i = 0
    while i < n:
        j0 = tpl[i]
        if new_template[i]:  # a template starts: its sums from 0
            run[:, :] = 0.0
            u[:, :, :] = 0.0
        e = bend[i]
        if e == i:  # an item alone at its score: over the lower items, and half of its pair with itself
            a = g[i]
            _term_weights(Tt, term, mult, i, w)
            for c in range(k):
                uac, rc = u[a, c], run[c]
                for b in range(R):
                    uac[b] += w[b] * rc[b]
            uaa, ra = u[a, a], run[a]
            for b in range(R):
                uaa[b] += 0.5 * w[b] * w[b]
                ra[b] += w[b]
        else:  # a block of equal scores: over the lower items, and half of the block
            block[:, :] = 0.0
            for q in range(i, e + 1):
                m = np.float64(mult[q])
                Tq, bq = Tt[term[q]], block[g[q]]
                for b in range(R):
                    bq[b] += m * Tq[b]
            for q in range(i, e + 1):
                a = g[q]
                _term_weights(Tt, term, mult, q, w)
                for c in range(k):
                    uac, rc, bc = u[a, c], run[c], block[c]
                    for b in range(R):
                        uac[b] += w[b] * (rc[b] + 0.5 * bc[b])
            for c in range(k):
                rc, bc = run[c], block[c]
                for b in range(R):
                    rc[b] += bc[b]
        i = e + 1
        if i == n or new_template[i]:  # the template ends: add it with its copies' weights
            _add_template(Wt[j0], u, run, U, NN, q0, q1)
    return U, NN


@njit(cache=True, nogil=True)
def _add_template(Wj, u, run, U, NN, q0, q1):
    """Add a template's pairs ``u`` (k, k, R) and group weights ``run``
    (k, R) to the sums with Q = W^2 - W (``[0]``) and Q = W^2 (``[1]``)."""
    k, R = run.shape
    for b in range(R):
        d = Wj[b]
        q0[b] = d * d - d
        q1[b] = d * d
    for a in range(k):
        for c in range(k):
            uac, ra, rc = u[a, c], run[a], run[c]
            U0, U1, N0, N1 = U[0, a, c], U[1, a, c], NN[0, a, c], NN[1, a, c]
            for b in range(R):
                nn = ra[b] * rc[b]
                U0[b] += q0[b] * uac[b]
                U1[b] += q1[b] * uac[b]
                N0[b] += q0[b] * nn
                N1[b] += q1[b] * nn


@njit(cache=True, nogil=True)
def tuple_weights(Wt, Tt, tpl, members):
    """(tuples, R): a counterfactual tuple's weight in each resample, its
    template's draws ``Wt[tpl[i], b]`` times the draws of its members'
    terms ``Tt[members[i, :], b]``. ``Wt``, ``Tt`` float64."""
    R = Wt.shape[1]
    n = tpl.shape[0]
    out = np.empty((n, R))
    for i in range(n):
        oi = out[i]
        Wi = Wt[tpl[i]]
        for b in range(R):
            oi[b] = Wi[b]
        for q in range(members.shape[1]):
            Tq = Tt[members[i, q]]
            for b in range(R):
                oi[b] *= Tq[b]
    return out


@njit(cache=True, nogil=True)
def template_mean_gaps(Wt, Tt, tpl, cell_start, term, S, N, pa, pb, absolute, round_off):
    """Per resample, the sums over templates of the differences of the
    groups' means per pair: template j (all-template index ``tpl[j]``) and
    group g hold the entries ``e`` in ``cell_start[j * k + g]`` to
    ``cell_start[j * k + g + 1]``, each a term ``term[e]`` with the sum
    ``S[e]`` and count ``N[e]`` of its scores there; the group's mean in
    resample b is ``sum T S / sum T N`` over its entries (T = ``Tt[term, b]``).
    A template counts in a resample where every group weighs in it; there
    d = mean(a) - mean(b) per pair, 0 within ``round_off``, |d| where
    ``absolute``. Returns (pairs, R) sums of ``Wt[tpl[j], b] * d`` (|d| or
    d), (pairs, R) sums of the signed d, and (R,) the counting templates'
    summed draws. ``Wt``, ``Tt`` float64."""
    R = Wt.shape[1]
    Jc = tpl.shape[0]
    P = pa.shape[0]
    k = (cell_start.shape[0] - 1) // max(Jc, 1)
    num = np.zeros((P, R))
    signed = np.zeros((P, R))
    den = np.zeros(R)
    mean = np.empty((k, R))
    sn = np.empty(R)
    sd = np.empty(R)
    ok = np.empty(R, dtype=np.bool_)
    for j in range(Jc):
        for g in range(k):
            sn[:] = 0.0
            sd[:] = 0.0
            for e in range(cell_start[j * k + g], cell_start[j * k + g + 1]):
                Te = Tt[term[e]]
                se, ne = S[e], N[e]
                for b in range(R):
                    sn[b] += Te[b] * se
                    sd[b] += Te[b] * ne
            mg = mean[g]
            for b in range(R):
                mg[b] = sn[b] / sd[b] if sd[b] > 0.0 else np.nan
        Wj = Wt[tpl[j]]
        for b in range(R):
            ok[b] = True
        for g in range(k):
            mg = mean[g]
            for b in range(R):
                if not np.isfinite(mg[b]):
                    ok[b] = False
        for b in range(R):
            if ok[b]:
                den[b] += Wj[b]
        for p in range(P):
            ma, mb, np_, sp = mean[pa[p]], mean[pb[p]], num[p], signed[p]
            for b in range(R):
                if ok[b]:
                    d = ma[b] - mb[b]
                    if abs(d) <= round_off:
                        d = 0.0
                    np_[b] += Wj[b] * (abs(d) if absolute else d)
                    sp[b] += Wj[b] * d
    return num, signed, den
