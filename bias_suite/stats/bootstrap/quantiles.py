"""Percentile intervals of many bootstrap rows at once, with numpy's
default ("linear") quantile rule and arithmetic, so the numbers are those of
``np.quantile`` / ``np.nanquantile`` row by row."""
from __future__ import annotations

import numpy as np

__all__ = ["row_quantiles", "sorted_quantiles"]


def row_quantiles(V: np.ndarray, probs, ok: np.ndarray) -> np.ndarray:
    """(len(probs), rows) quantiles of each row of ``V`` over its entries
    ``ok`` (NaN for a row without any): the rows with every entry, and the
    rows with n entries, for each n, together (what ``np.nanquantile`` gives
    row by row, in a few sorts)."""
    q = np.full((len(probs), V.shape[0]), np.nan)
    n = ok.sum(axis=1)
    full = n == V.shape[1]
    if full.any():
        q[:, full] = sorted_quantiles(np.sort(V[full], axis=1), probs)
    for m in np.unique(n[(n > 0) & ~full]):
        rows = np.flatnonzero(n == m)
        q[:, rows] = sorted_quantiles(np.sort(V[rows][ok[rows]].reshape(rows.size, int(m)), axis=1), probs)
    return q


def sorted_quantiles(S: np.ndarray, probs) -> np.ndarray:
    """(len(probs), rows) quantiles of rows sorted in ascending order, by
    numpy's default ("linear") rule and arithmetic, so the numbers are
    those of ``np.quantile`` (a sort is faster than its partition around
    four order statistics)."""
    n = S.shape[1]
    out = np.empty((len(probs), S.shape[0]))
    for i, p in enumerate(np.asarray(probs, dtype=np.float64)):
        virtual = (n - 1) * p
        if virtual >= n - 1:
            out[i] = S[:, -1]
            continue
        lo = int(np.floor(virtual))
        gamma = virtual - lo
        a, b = S[:, lo], S[:, lo + 1]
        d = b - a
        out[i] = b - d * (1 - gamma) if gamma >= 0.5 else a + d * gamma
    return out

