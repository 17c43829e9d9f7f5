"""Score sets sorted once, compared many times.

All set comparisons of one (attribute, class) share one sort of the scores:
a set is a boolean mask in sorted order, and W1 and the Mann-Whitney U
statistic follow from cumulative counts of those masks, so comparing a group
with the background or the rest costs O(n) with no further sorting.
"""
from __future__ import annotations

import numpy as np


class SortedSets:
    """Scores sorted once; sets are masks (..., n) over the sorted order.

    Parameters
    ----------
    values : ndarray (n,)
        The scores of every item that any compared set may contain.
    """

    def __init__(self, values: np.ndarray):
        values = np.asarray(values, dtype=np.float64)
        self.order = np.argsort(values, kind="mergesort")
        self.x = values[self.order]
        self.dx = np.diff(self.x)
        n = self.x.size
        if n:
            starts = np.flatnonzero(np.r_[True, self.x[1:] != self.x[:-1]])
        else:
            starts = np.zeros(0, dtype=np.int64)
        self.block_starts = starts

    def sort_mask(self, mask: np.ndarray) -> np.ndarray:
        """Reorder masks (..., n) given in item order into sorted order."""
        return np.asarray(mask, dtype=bool)[..., self.order]

    def w1(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        r"""1-Wasserstein distance between the sets ``a`` and ``b``.

        .. math:: W_1(A, B) = \int |F_A(x) - F_B(x)|\,dx
                  = \sum_i |F_A(x_i) - F_B(x_i)| (x_{i+1} - x_i)

        ``a`` and ``b`` are boolean masks (..., n) in sorted order (they
        broadcast). Returns NaN where a set is empty. Equals
        ``scipy.stats.wasserstein_distance`` on the same sets.
        """
        a = np.asarray(a, dtype=bool)
        b = np.asarray(b, dtype=bool)
        na = a.sum(axis=-1)
        nb = b.sum(axis=-1)
        if self.x.size < 2:
            out = np.zeros(np.broadcast(na, nb).shape)
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                fa = np.cumsum(a, axis=-1)[..., :-1] / np.expand_dims(na, -1)
                fb = np.cumsum(b, axis=-1)[..., :-1] / np.expand_dims(nb, -1)
            out = np.sum(np.abs(fa - fb) * self.dx, axis=-1)
        return np.where((na == 0) | (nb == 0), np.nan, out)

    def u_statistic(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        r"""Mann-Whitney U of ``a`` over ``b``:
        :math:`U = \sum_{x\in A}\sum_{y\in B} ([x > y] + \tfrac12 [x = y])`
        (``scipy.stats.mannwhitneyu(A, B).statistic``)."""
        a = np.asarray(a, dtype=bool)
        b = np.asarray(b, dtype=bool)
        if self.x.size == 0:
            return np.zeros(np.broadcast(a[..., :0].sum(-1), b[..., :0].sum(-1)).shape)
        a, b = np.broadcast_arrays(a, b)
        block_a = np.add.reduceat(a.astype(np.int64), self.block_starts, axis=-1)
        block_b = np.add.reduceat(b.astype(np.int64), self.block_starts, axis=-1)
        before_b = np.cumsum(block_b, axis=-1) - block_b
        return np.sum(block_a * (before_b + 0.5 * block_b), axis=-1)

    def auc(self, pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
        r"""ROC AUC of scores with ``pos`` as positives and ``neg`` as
        negatives: :math:`U_{pos,neg} / (|P|\,|N|)` (ties count 1/2, as
        ``sklearn.metrics.roc_auc_score``). NaN when a side is empty."""
        npos = np.asarray(pos, bool).sum(-1)
        nneg = np.asarray(neg, bool).sum(-1)
        u = self.u_statistic(pos, neg)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where((npos == 0) | (nneg == 0), np.nan, u / (npos * nneg))

    def aeg(self, background: np.ndarray, group: np.ndarray) -> np.ndarray:
        r"""Average equality gap :math:`\tfrac12 - U_{bg}/(|B||G|)` with
        :math:`U_{bg}` the Mann-Whitney U of the background over the group."""
        nb = np.asarray(background, bool).sum(-1)
        ng = np.asarray(group, bool).sum(-1)
        u = self.u_statistic(background, group)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where((nb == 0) | (ng == 0), np.nan, 0.5 - u / (nb * ng))


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
    counts = np.zeros((n_segments, k), dtype=np.int64)
    np.add.at(counts, (seg, g), 1)
    seg_start = np.searchsorted(seg, np.arange(n_segments), side="left")
    present = np.flatnonzero(np.bincount(seg, minlength=n_segments) > 0)
    # dx is zero across segment boundaries and after the last item.
    dx = np.zeros(n)
    dx[:-1] = np.where(seg[1:] == seg[:-1], np.diff(x), 0.0)
    starts = seg_start[present]
    cdf = {}
    for a in sorted({p for pair in pairs for p in pair}):
        m = (g == a).astype(np.int64)
        c = np.cumsum(m)
        offset = (c - m)[np.minimum(seg_start, n - 1)][seg]  # count before the segment start
        with np.errstate(divide="ignore", invalid="ignore"):
            cdf[a] = (c - offset) / counts[seg, a]
    for j, (a, b) in enumerate(pairs):
        contrib = np.abs(cdf[a] - cdf[b]) * dx
        contrib = np.nan_to_num(contrib, nan=0.0)
        sums = np.add.reduceat(contrib, starts)
        out[present, j] = sums
        empty = (counts[:, a] == 0) | (counts[:, b] == 0)
        out[empty, j] = np.nan
    return out
