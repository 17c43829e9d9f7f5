"""The sign-flip test of a sum of per-template contributions.

A rate comparison of the group view (the group's rate minus the rest's, or
a pair's) is a sum over templates of each template's contribution
(:func:`bias_suite.stats.evidence.paired_bounds` computes them: 0 where the
template treats both sides alike). Without a difference between the sides,
a template is as likely to raise one side as the other by the same amount,
so every pattern of signs on the contributions is as likely as the one
observed. The two-sided p-value is the share of the 2^k sign patterns of the
k non-zero contributions whose sum is at least as far from 0 as the
observed one: exact for k up to :data:`EXACT_MAX`; beyond it the sum over
the sign patterns is close to normal with variance the sum of squares, and
the normal tail is used.

Unlike a bootstrap t, the test does not estimate the sum's spread from the
few templates that carry events: the spread is known once the magnitudes
are. With the events of a rate in 9 templates, a t reference with 8 degrees
of freedom asks a claim at p < 0.01 for a statistic of 3.36 (2.58 on a
normal); the sign-flip test reads the 512 patterns themselves.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = ["sign_flip_p", "sign_flip_ps", "EXACT_MAX"]

#: up to this many non-zero contributions the p-value enumerates every sign pattern (2^14 = 16,384)
EXACT_MAX = 14


@lru_cache(maxsize=None)
def _patterns(k: int) -> np.ndarray:
    """The 2^(k-1) sign patterns of k contributions whose first sign is +,
    (2^(k-1), k) of ±1.0: the other half are their negatives, whose sums
    have the same absolute value, so the share of patterns at least as far
    from 0 is the same over either half as over all 2^k."""
    bits = (np.arange(2 ** (k - 1))[:, None] >> np.arange(k - 1)[None, :]) & 1
    return np.hstack([np.ones((bits.shape[0], 1)), 1.0 - 2.0 * bits])


def sign_flip_p(contributions, eps: float = 0.0) -> float:
    """Two-sided p-value of "the contributions are symmetric about 0" for
    their sum: contributions within ``eps`` of 0 are left out (a template
    that treats both sides alike says nothing); 1 when none is left."""
    d = np.asarray(contributions, dtype=float).reshape(1, -1)
    return float(sign_flip_ps(d, eps)[0])


def sign_flip_ps(rows, eps) -> np.ndarray:
    """:func:`sign_flip_p` of every row of ``rows`` (n, m) with its own
    ``eps`` (n,): the rows with the same number k of contributions left
    enumerate their 2^k patterns in one product (k up to
    :data:`EXACT_MAX`); beyond, the normal tail of the sum."""
    rows = np.asarray(rows, dtype=float)
    eps = np.broadcast_to(np.asarray(eps, dtype=float), rows.shape[:1])
    out = np.ones(rows.shape[0])
    if rows.size == 0:
        return out
    keep = np.abs(rows) > eps[:, None]
    ks = keep.sum(axis=1)
    kept = np.where(keep, rows, 0.0)
    observed = np.abs(kept.sum(axis=1))
    scale = np.abs(kept).sum(axis=1)
    live = (ks > 0) & ~(observed <= 1e-12 * scale)
    for k in np.unique(ks[live]):
        idx = np.flatnonzero(live & (ks == k))
        if k > EXACT_MAX:  # the sum over sign patterns is close to normal, variance the sum of squares
            z = observed[idx] / np.sqrt((kept[idx] ** 2).sum(axis=1))
            out[idx] = [math.erfc(v / math.sqrt(2.0)) for v in z.tolist()]
            continue
        d = rows[idx][keep[idx]].reshape(idx.size, int(k))  # each row's contributions, in their order
        sums = np.abs(_patterns(int(k)) @ d.T)  # (2^(k-1), rows)
        out[idx] = np.mean(sums >= (observed[idx] - 1e-9 * scale[idx])[None, :], axis=0)
    return out
