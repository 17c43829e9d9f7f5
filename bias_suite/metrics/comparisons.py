"""Comparison functions d of the generalized metrics (Czarnowska et al. 2021).

Scalar comparisons are vectorized: they take arrays of equal shape and return
``(value, undefined_mask)``.  Set comparisons (W1, AEG) work on score sets
held by :class:`bias_suite.metrics.sets.BlockHist`; multi-group comparisons
(std, range) reduce the last axis of an array.

Argument order follows docs/metrics.md: in BCM/VBCM ``d(phi(background), phi(group))``;
in PCM ``d(phi(first), phi(second))`` for a pair ``first|second``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..exceptions import MetricError

#: Round-off: two scores closer than ROUND_OFF times their scale (at least 1,
#: the scale of a probability or a rate) are equal. Sums and means of the same
#: probabilities taken in a different order differ by about 1e-16; no
#: difference a user acts on is below 1e-9. Differences within it are exactly
#: 0, ratios exactly 1, spreads exactly 0, so a model that treats groups alike
#: gets exact ties, not round-off read as an effect.
ROUND_OFF = 1e-9


def equal_within_round_off(x, y) -> np.ndarray:
    """Where ``x`` and ``y`` are equal up to :data:`ROUND_OFF` (NaN: False)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    return _difference(x, y)[1]


#: below this many values :func:`_difference` computes the scale everywhere (fewer calls); above it only
#: near ties (fewer passes over large arrays)
SMALL = 8192


def _difference(x, y):
    """``x - y`` and where the two are equal up to :data:`ROUND_OFF`, with
    as few temporary arrays as possible (the bootstrap calls this on
    arrays of every resample)."""
    with np.errstate(invalid="ignore"):
        d = np.asarray(np.subtract(x, y))
        if d.size < SMALL:  # few values: the scale itself, in fewer calls
            scale = np.asarray(np.maximum(np.abs(x), np.abs(y)))
            np.maximum(scale, 1.0, out=scale)
            scale *= ROUND_OFF
            return d, np.abs(d) <= scale
        ad = np.abs(d)
        same = np.asarray(ad <= ROUND_OFF)  # the scale max(1, |x|, |y|) is 1 for probabilities and rates
        big = max(_abs_max(x), _abs_max(y))
        if big > 1.0:  # where |x| or |y| passes 1 the scale is that value: only the near-ties can change
            ad, same = np.atleast_1d(ad), np.atleast_1d(same)
            near = np.flatnonzero((ad > ROUND_OFF) & (ad <= ROUND_OFF * big))
            if near.size:
                xs, ys = (np.broadcast_to(np.asarray(v, float), d.shape).ravel()[near] for v in (x, y))
                scale = np.maximum(np.maximum(np.abs(xs), np.abs(ys)), 1.0) * ROUND_OFF
                flat = same.reshape(-1)
                flat[near] = ad.reshape(-1)[near] <= scale
            same = same.reshape(d.shape)
        return d, same


def _abs_max(x) -> float:
    """The largest |x| (NaN left out; 0 where there is none)."""
    x = np.asarray(x, float)
    if x.size == 0:
        return 0.0
    m = max(abs(float(np.fmax.reduce(x, axis=None))), abs(float(np.fmin.reduce(x, axis=None))))
    return 0.0 if np.isnan(m) else m


@dataclass(frozen=True)
class Distance:
    """A comparison function d of a generalized metric (how phi of a group
    is compared with phi of the background: ``abs``, ``diff``, ``ratio``,
    ``W1``, ``AEG``, ``std``, ...). Named ``Distance`` so that it is not
    mistaken for :class:`bias_suite.Comparison`, the comparison of models.

    kind : "scalar" (two arrays -> array), "set" (two score sets -> number),
        "multi" (array (..., k) -> array (...)).
    fn : the function; scalar ones return ``(values, undefined_mask)``.
    signed : whether the result carries a direction.
    formula : the math, for tables and docs.
    """

    name: str
    kind: str
    fn: Callable
    signed: bool
    formula: str


def _abs(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    d, same = _difference(x, y)
    np.abs(d, out=d)
    d[same] = 0.0
    return d, np.zeros(d.shape, bool)


def _diff(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    d, same = _difference(x, y)
    d[same] = 0.0
    return d, np.zeros(d.shape, bool)


def _ratio(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    bad = y == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(bad, np.nan, x / np.where(bad, 1.0, y))
    return np.where(~bad & equal_within_round_off(x, y), 1.0, out), bad


def _ratio_to_background(background, group):
    return _ratio(group, background)


def _diff_to_background(background, group):
    return _diff(group, background)


def _value(background, group):
    """VBCM whose phi already compares group and background (the AUCs)."""
    g = np.asarray(group, float)
    return g, np.zeros(g.shape, bool)


def _std(v):
    v = np.asarray(v, float)
    out = np.std(v, axis=-1, ddof=0)
    return np.where(equal_within_round_off(v.max(axis=-1), v.min(axis=-1)), 0.0, out)


def _range(v):
    v = np.asarray(v, float)
    hi, lo = v.max(axis=-1), v.min(axis=-1)
    return np.where(equal_within_round_off(hi, lo), 0.0, hi - lo)


COMPARISONS: dict[str, Distance] = {
    c.name: c
    for c in [
        Distance("abs", "scalar", _abs, False, "|x - y|"),
        Distance("diff", "scalar", _diff, True, "x - y"),
        Distance("ratio", "scalar", _ratio, True, "x / y"),
        Distance("ratio_to_background", "scalar", _ratio_to_background, True, "phi(group) / phi(background)"),
        Distance("diff_to_background", "scalar", _diff_to_background, True, "phi(group) - phi(background)"),
        Distance("value", "scalar", _value, False, "phi(group) (phi compares group and background itself)"),
        Distance("W1", "set", None, False, "1-Wasserstein distance between score sets"),
        Distance("AEG", "set", None, True, "1/2 - P(b > g), b ~ background, g ~ group, ties 1/2"),
        Distance("std", "multi", _std, False, "population standard deviation (ddof=0)"),
        Distance("range", "multi", _range, False, "max - min"),
    ]
}


def get_comparison(d) -> Distance:
    """Look up a comparison by name, or wrap a user's callable.

    A user callable ``d(x, y)`` on two numbers/arrays becomes a scalar
    comparison (vectorized with ``np.vectorize`` if it is not already).
    """
    if isinstance(d, Distance):
        return d
    if isinstance(d, str):
        try:
            return COMPARISONS[d]
        except KeyError:
            raise MetricError(f"unknown comparison {d!r}; known: {sorted(COMPARISONS)}") from None
    if callable(d):
        vec = np.vectorize(d, otypes=[float])

        def fn(x, y):
            x, y = np.asarray(x, float), np.asarray(y, float)
            out = vec(x, y)
            return out, ~np.isfinite(out)

        return Distance(getattr(d, "__name__", "custom"), "scalar", fn, True, "user-defined")
    raise MetricError(f"comparison must be a name or a callable, got {d!r}")

