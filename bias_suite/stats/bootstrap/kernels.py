"""Compiled loops of the closed-form bootstrap's set metrics (numba).

The set metrics (W1, AEG, the AUCs) need, for every resample, one pass over
the items of a class in score order: an item's weight is its template's
draw count times its term's draw count (where terms are resampled) times
its integer balance multiplier, and the quantities are running sums of
those weights. As numpy expressions each pass is several passes over a
(resamples x items) array (gather the weights, cumulative sums, masks,
products, a reduction); here it is one loop per resample that reads the
template and term weights directly and keeps the running sums in
registers.

- :func:`u2_cells`: twice the Mann-Whitney U of high items over low items,
  summed per output cell, exact in 64-bit integers (ties count 1/2 and so
  1 in 2U);
- :func:`w1_groups`: W1 between each group and its background (all items
  or the rest), ``sum_i |F_t(x_i) - F_bg(x_i)| (x_{i+1} - x_i)``;
- :func:`w1_pairs`: W1 between the two groups of each pair;
- :func:`within_template_pairs`: U between the groups inside each
  template, with term weights, summed over templates with the weight of
  their copies (the AEG's pairs inside one template);
- :func:`tuple_weights`: the counterfactual tuples' weights.

The kernels take the weights as ``W`` (R, J) template draws, ``T``
(R, n_terms) term draws (for the U and W1 sums a (R, 0) array where terms
are not resampled) and the items' template, term and multiplier, in the
order the caller sorted them. They are compiled once and cached on disk
(``cache=True``).

Resamples are independent, so :func:`by_resamples` cuts the rows of ``W``
and ``T`` into contiguous blocks and runs the kernel on each in a thread of
its own (the kernels release the GIL): every resample's value is computed
by the same loop as in one thread, so the results do not depend on the
number of threads. :func:`kernel_threads` sets that number for a block of
code (the bootstrap sets it from ``n_jobs``).
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


def by_resamples(kernel, W, T, *args, items: int, axis: int = 0):
    """``kernel(W, T, *args)`` with the resamples (rows of ``W`` and ``T``)
    in contiguous blocks over :func:`kernel_threads` threads, the outputs
    joined on ``axis`` (each output, where the kernel returns a tuple);
    ``items``: the items one resample passes over (little work stays in
    the calling thread)."""
    R = W.shape[0]
    n = min(_THREADS.get(), R)
    if n <= 1 or R * max(items, 1) < MIN_THREADED_WORK:
        return kernel(W, T, *args)
    cuts = np.linspace(0, R, n + 1).astype(int)
    pool = _pool(n)
    parts = [pool.submit(kernel, W[a:b], T[a:b], *args) for a, b in zip(cuts[:-1], cuts[1:])]
    parts = [f.result() for f in parts]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(list(p), axis=axis) for p in zip(*parts))
    return np.concatenate(parts, axis=axis)


@njit(cache=True, nogil=True)
def u2_cells(W, T, tpl, term, mult, low, high, bend, new_segment, by_cell, cell_start):
    """(R, cells) int64: per resample, the sum over the high items i of
    ``w_i * (C_low(< x_i) + C_low(<= x_i))`` per output cell, with
    ``C_low`` the running sum of the low items' weights, restarted where
    ``new_segment``; ``bend[i]``: the last item of i's block of equal
    scores, read at the first item of a block (blocks never cross
    segments); cell c holds the items ``by_cell[cell_start[c]:cell_start[c + 1]]``.
    Each item's term is kept, then summed per cell (no chain of updates of
    one accumulator in memory)."""
    R = W.shape[0]
    n = tpl.shape[0]
    n_cells = cell_start.shape[0] - 1
    out = np.zeros((R, n_cells), dtype=np.int64)
    v = np.empty(n, dtype=np.int64)
    w = np.empty(n, dtype=np.int64)
    has_t = T.shape[1] > 0
    ties = False
    for i in range(n):
        if bend[i] != i:
            ties = True
    for b in range(R):
        run = np.int64(0)
        if not ties:  # C_low(< x) + C_low(<= x) = 2 C_low(< x) + the item's own low weight
            for i in range(n):
                if new_segment[i]:
                    run = 0
                wi = np.int64(W[b, tpl[i]]) * mult[i]
                if has_t:
                    wi *= T[b, term[i]]
                wl = wi * low[i]
                v[i] = wi * high[i] * (2 * run + wl)
                run += wl
        else:
            for i in range(n):
                wi = np.int64(W[b, tpl[i]]) * mult[i]
                if has_t:
                    wi *= T[b, term[i]]
                w[i] = wi
        i = n if not ties else 0
        while i < n:
            if new_segment[i]:
                run = 0
            e = bend[i]
            if e == i:
                wl = w[i] * low[i]
                v[i] = w[i] * high[i] * (2 * run + wl)
                run += wl
                i += 1
                continue
            block_low = np.int64(0)
            for j in range(i, e + 1):
                block_low += w[j] * low[j]
            twice = 2 * run + block_low
            for j in range(i, e + 1):
                v[j] = w[j] * high[j] * twice
            run += block_low
            i = e + 1
        for c in range(n_cells):
            total = np.int64(0)
            for q in range(cell_start[c], cell_start[c + 1]):
                total += v[by_cell[q]]
            out[b, c] = total
    return out


@njit(cache=True, nogil=True)
def _group_totals(W, T, tpl, term, mult, g, b, w, tot):
    """Item weights of resample b into ``w``, and their sum per group into ``tot``."""
    has_t = T.shape[1] > 0
    tot[:] = 0
    for i in range(tpl.shape[0]):
        wi = np.int64(W[b, tpl[i]]) * mult[i]
        if has_t:
            wi *= T[b, term[i]]
        w[i] = wi
        tot[g[i]] += wi


@njit(cache=True, nogil=True)
def w1_groups(W, T, tpl, term, mult, g, dx, k, rest):
    """(R, k) W1 between each group t and its background (``rest``: the
    other groups' items, else every item), NaN where either side weighs 0:
    ``sum_i |F_t(x_i) - F_bg(x_i)| dx_i`` with F the weighted share of a
    side's items at or below x_i and ``dx_i = x_{i+1} - x_i``."""
    R = W.shape[0]
    n = tpl.shape[0]
    out = np.zeros((R, k))
    w = np.empty(n, dtype=np.int64)
    tot = np.zeros(k, dtype=np.int64)
    run = np.zeros(k, dtype=np.int64)
    inv_t = np.zeros(k)
    inv_b = np.zeros(k)
    acc = np.zeros(k)
    for b in range(R):
        _group_totals(W, T, tpl, term, mult, g, b, w, tot)
        everything = tot.sum()
        for t in range(k):
            nb = everything - tot[t] if rest else everything
            inv_t[t] = 1.0 / tot[t] if tot[t] > 0 else 0.0
            inv_b[t] = 1.0 / nb if nb > 0 else 0.0
        run[:] = 0
        acc[:] = 0.0
        run_all = np.int64(0)
        for i in range(n):
            run[g[i]] += w[i]
            run_all += w[i]
            d = dx[i]
            if d == 0.0:
                continue
            if rest:
                for t in range(k):
                    acc[t] += abs(run[t] * inv_t[t] - (run_all - run[t]) * inv_b[t]) * d
            else:
                for t in range(k):
                    acc[t] += abs(run[t] * inv_t[t] - run_all * inv_b[t]) * d
        for t in range(k):
            nb = everything - tot[t] if rest else everything
            out[b, t] = np.nan if tot[t] == 0 or nb == 0 else acc[t]
    return out


@njit(cache=True, nogil=True)
def w1_pairs(W, T, tpl, term, mult, g, x, k, pa, pb, pair_start, pair_of):
    """(R, pairs) W1 between groups ``pa[p]`` and ``pb[p]``, NaN where
    either weighs 0. ``|F_a - F_b|`` is a step function that moves only at
    the items of a or b, so each pair's integral is taken up to x_i when
    an item of one of its groups arrives (``pair_of[pair_start[t]:pair_start[t + 1]]``:
    the pairs of group t), not at every item."""
    R = W.shape[0]
    n = tpl.shape[0]
    P = pa.shape[0]
    out = np.zeros((R, P))
    w = np.empty(n, dtype=np.int64)
    tot = np.zeros(k, dtype=np.int64)
    run = np.zeros(k, dtype=np.int64)
    inv = np.zeros(k)
    F = np.zeros(k)
    cur = np.zeros(P)
    last = np.zeros(P)
    acc = np.zeros(P)
    if n == 0:
        out[:] = np.nan
        return out
    for b in range(R):
        _group_totals(W, T, tpl, term, mult, g, b, w, tot)
        for t in range(k):
            inv[t] = 1.0 / tot[t] if tot[t] > 0 else 0.0
        run[:] = 0
        F[:] = 0.0
        cur[:] = 0.0
        acc[:] = 0.0
        last[:] = x[0]
        for i in range(n):
            if w[i] == 0:
                continue
            t = g[i]
            xi = x[i]
            for q in range(pair_start[t], pair_start[t + 1]):
                p = pair_of[q]
                acc[p] += cur[p] * (xi - last[p])
                last[p] = xi
            run[t] += w[i]
            F[t] = run[t] * inv[t]
            for q in range(pair_start[t], pair_start[t + 1]):
                p = pair_of[q]
                cur[p] = abs(F[pa[p]] - F[pb[p]])
        for p in range(P):
            acc[p] += cur[p] * (x[n - 1] - last[p])
            out[b, p] = np.nan if tot[pa[p]] == 0 or tot[pb[p]] == 0 else acc[p]
    return out


@njit(cache=True, nogil=True)
def within_template_pairs(W, T, tpl, term, mult, g, bend, new_template, k):
    """The pairs inside one template, with term weights, summed over the
    templates with the weight of their copies (items sorted by template,
    then score; ``new_template`` where a template's items start;
    ``bend[i]``: the last item of i's block of equal scores in its
    template, read at a block's first item). Per resample b and template j
    with draws W = ``W[b, j]``, U_j(a, c) = U(group a over group c) inside
    the template (ties 1/2) and N_j(a) its items of group a weighted by
    their terms: ``U`` (2, R, k, k) and ``NN`` (2, R, k, k) the sums over
    templates of Q U_j(a, c) and Q N_j(a) N_j(c), with Q = W^2 - W (the
    pairs between two copies of a template) in ``[0]`` and Q = W^2 (every
    pair inside a template) in ``[1]``."""
    R = W.shape[0]
    n = tpl.shape[0]
    U = np.zeros((2, R, k, k))
    NN = np.zeros((2, R, k, k))
    w = np.empty(n)
    run = np.zeros(k)  # the template's items so far, per group (at its end: N_j)
    block = np.zeros(k)
    u = np.zeros((k, k))
    for b in range(R):
        i = 0
        while i < n:
            j0 = tpl[i]
            if new_template[i]:  # a template starts: its sums from 0
                run[:] = 0.0
                u[:, :] = 0.0
            e = bend[i]
            if e == i:  # an item alone at its score: over the lower items, and half of its pair with itself
                wi = mult[i] * np.float64(T[b, term[i]])
                a = g[i]
                if wi != 0.0:
                    for c in range(k):
                        u[a, c] += wi * run[c]
                    u[a, a] += 0.5 * wi * wi
                    run[a] += wi
            else:  # a block of equal scores: over the lower items, and half of the block
                block[:] = 0.0
                for q in range(i, e + 1):
                    wq = mult[q] * np.float64(T[b, term[q]])
                    w[q] = wq
                    block[g[q]] += wq
                for q in range(i, e + 1):
                    if w[q] != 0.0:
                        for c in range(k):
                            u[g[q], c] += w[q] * (run[c] + 0.5 * block[c])
                for c in range(k):
                    run[c] += block[c]
            i = e + 1
            if i == n or new_template[i]:  # the template ends: add it with its copies' weights
                d = np.float64(W[b, j0])
                q0, q1 = d * d - d, d * d
                if q1 == 0.0:
                    continue
                for a in range(k):
                    for c in range(k):
                        U[0, b, a, c] += q0 * u[a, c]
                        U[1, b, a, c] += q1 * u[a, c]
                        nn = run[a] * run[c]
                        NN[0, b, a, c] += q0 * nn
                        NN[1, b, a, c] += q1 * nn
    return U, NN


@njit(cache=True, nogil=True)
def tuple_weights(W, T, tpl, members):
    """(R, tuples): a counterfactual tuple's weight in each resample, its
    template's draws ``W[b, tpl[i]]`` times the draws of its members' terms
    ``T[b, members[i, :]]``."""
    R = W.shape[0]
    n = tpl.shape[0]
    out = np.empty((R, n))
    for b in range(R):
        for i in range(n):
            v = np.float64(W[b, tpl[i]])
            for q in range(members.shape[1]):
                v *= T[b, members[i, q]]
            out[b, i] = v
    return out
