"""Score sets sorted once, compared many times.

All set comparisons of one (attribute, class) share one sort of the scores
(:class:`BlockHist`): a set is a vector of counts over the distinct score
values, and W1 and the Mann-Whitney U statistic follow from cumulative sums
of those vectors, so comparing a group with the background or the rest costs
O(distinct values) with no further sorting. :func:`segmented_w1` does the
same inside every template at once.
"""
from __future__ import annotations

import numpy as np

#: item categories of a class c in the per-class histogram: gold c, labelled with another class, unlabelled
POS, NEG, UNLABELLED = 0, 1, 2

_CHUNK = 1 << 20  # elements of one (pairs, items) temporary of segmented_w1


class BlockHist:
    """Scores sorted once and counted per (category, group, distinct value).

    ``counts[c, t, b]`` is the number of items of category ``c`` (e.g.
    positive / negative / unlabelled) and group ``t`` whose score is the
    ``b``-th distinct value ``xu[b]`` (or their summed ``weights``). Any set that is a union of categories
    and groups (a group, the background, the rest of a group) is a count
    vector over the distinct values, and W1 and Mann-Whitney U follow from
    cumulative sums of those vectors.
    """

    def __init__(self, values, group, k: int, category=None, n_categories: int = 1, weights=None):
        values = np.asarray(values, dtype=np.float64)
        order = np.argsort(values, kind="stable")
        x = values[order]
        if x.size:
            new = np.r_[True, x[1:] != x[:-1]]
            block = np.cumsum(new) - 1
            self.xu = x[new]
        else:
            block = np.zeros(0, dtype=np.int64)
            self.xu = x
        nb = self.xu.size
        cat = np.zeros(values.size, dtype=np.int64) if category is None else np.asarray(category)[order]
        key = (cat * k + np.asarray(group)[order]) * nb + block
        w = None if weights is None else np.asarray(weights, dtype=np.float64)[order]
        self.counts = np.bincount(key, weights=w, minlength=n_categories * k * nb).reshape(n_categories, k, nb).astype(np.float64)
        #: items per (category, group), not weighted (the ``n`` of a result row)
        self.n_items = np.bincount(cat * k + np.asarray(group)[order], minlength=n_categories * k).reshape(n_categories, k)
        self.dxu = np.diff(self.xu)

    def w1(self, a, b):
        r"""1-Wasserstein distance between count vectors ``a`` and ``b``
        (..., nb): :math:`\sum_i |F_A(x_i) - F_B(x_i)| (x_{i+1} - x_i)`;
        NaN where a set is empty. Equals ``scipy.stats.wasserstein_distance``."""
        na, nb_ = a.sum(-1), b.sum(-1)
        if self.xu.size < 2:
            out = np.zeros(np.broadcast(na, nb_).shape)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                fa = np.cumsum(a, -1)[..., :-1] / na[..., None]
                fb = np.cumsum(b, -1)[..., :-1] / nb_[..., None]
            out = np.sum(np.abs(fa - fb) * self.dxu, -1)
        return np.where((na == 0) | (nb_ == 0), np.nan, out)

    @staticmethod
    def u_statistic(a, b):
        r"""Mann-Whitney U of ``a`` over ``b`` from count vectors:
        :math:`\sum_i a_i (\sum_{j<i} b_j + b_i / 2)`."""
        before = np.cumsum(b, -1) - b
        return np.sum(a * (before + 0.5 * b), -1)

    def auc(self, pos, neg):
        """ROC AUC with ``pos`` as positives and ``neg`` as negatives (ties 1/2)."""
        npos, nneg = pos.sum(-1), neg.sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where((npos == 0) | (nneg == 0), np.nan, self.u_statistic(pos, neg) / (npos * nneg))

    def aeg(self, background, group):
        """1/2 - U(background over group) / (|B||G|)."""
        nb_, ng = background.sum(-1), group.sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where((nb_ == 0) | (ng == 0), np.nan, 0.5 - self.u_statistic(background, group) / (nb_ * ng))


def segmented_w1(values: np.ndarray, segment: np.ndarray, n_segments: int, group: np.ndarray, k: int, pairs):
    r"""W1 between groups inside each segment (template), all segments at once.

    Parameters
    ----------
    values, segment, group : ndarray (n,)
        Score, segment code (0..n_segments-1) and group code (0..k-1) of each item.
    pairs : list of (a, b) group-code pairs.

    Returns
    -------
    ndarray (n_segments, len(pairs))
        :math:`W_1(S_j^a, S_j^b)`; NaN where one of the two sets is empty.
    """
    order = np.lexsort((values, segment))
    x = values[order]
    seg = segment[order]
    g = group[order]
    n = x.size
    out = np.full((n_segments, len(pairs)), np.nan)
    if n == 0 or not pairs:
        return out
    counts = np.bincount(seg * k + g, minlength=n_segments * k).reshape(n_segments, k)
    seg_start = np.searchsorted(seg, np.arange(n_segments), side="left")
    present = np.flatnonzero(np.bincount(seg, minlength=n_segments) > 0)
    # dx is zero across segment boundaries and after the last item.
    dx = np.zeros(n)
    dx[:-1] = np.where(seg[1:] == seg[:-1], np.diff(x), 0.0)
    starts = seg_start[present]
    used = sorted({p for pair in pairs for p in pair})
    row = np.full(k, -1, dtype=np.int64)
    row[used] = np.arange(len(used))
    cdf = np.empty((len(used), n))  # each group's CDF inside its segment
    for i, a in enumerate(used):
        m = (g == a).astype(np.int64)
        c = np.cumsum(m)
        offset = (c - m)[np.minimum(seg_start, n - 1)][seg]  # count before the segment start
        with np.errstate(divide="ignore", invalid="ignore"):
            cdf[i] = (c - offset) / counts[seg, a]
    pa = np.array([p[0] for p in pairs], dtype=np.int64)
    pb = np.array([p[1] for p in pairs], dtype=np.int64)
    step = _CHUNK // n  # pairs at a time: (step, n) temporaries stay small on large inputs
    if step < 2:  # large inputs: one pair at a time, on views of the CDFs
        for j, (a, b) in enumerate(pairs):
            contrib = np.nan_to_num(np.abs(cdf[row[a]] - cdf[row[b]]) * dx, nan=0.0)
            out[present, j] = np.add.reduceat(contrib, starts)
    else:
        for lo in range(0, len(pairs), step):
            a, b = row[pa[lo:lo + step]], row[pb[lo:lo + step]]
            contrib = np.nan_to_num(np.abs(cdf[a] - cdf[b]) * dx, nan=0.0)  # (pairs, n)
            out[present, lo:lo + step] = np.add.reduceat(contrib, starts, axis=1).T
    out[(counts[:, pa] == 0) | (counts[:, pb] == 0)] = np.nan
    return out
