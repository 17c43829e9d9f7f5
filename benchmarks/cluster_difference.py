"""The cluster bootstrap of a difference of two means, for
``benchmarks/bernstein_coverage.py``'s comparison with the Bernstein intervals: the
template resampling scheme of :func:`bias_suite.stats.bootstrap.template_weights`
on plain costs, outside the package (only the benchmark uses it)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bias_suite.stats.bootstrap import DEFAULT_B, template_weights  # noqa: E402
from bias_suite.stats.bootstrap.intervals import MAX_UNDEFINED  # noqa: E402


def cluster_bootstrap_difference(costs, annotations, clusters, *, confidence: float = 0.95, seed: int = 0,
                                 B: int = DEFAULT_B):
    """Cluster-bootstrap percentile interval of mean_A(c) - mean_B(c), A the
    rows annotated +1 and B those annotated -1, resampling ``clusters``
    (e.g. templates) with the same multinomial scheme as :func:`bootstrap`.
    Returns ``(low, high)`` or ``(None, None)`` when undefined in more than
    half of the resamples."""
    c = np.asarray(costs, float).ravel()
    f = np.asarray(annotations).ravel()
    codes, _ = pd.factorize(pd.Series(np.asarray(clusters).ravel()), sort=False)
    J = int(codes.max()) + 1 if codes.size else 0
    if J < 2:
        return None, None
    W = template_weights(J, B, np.random.default_rng(seed)).astype(float)
    cell = np.zeros((J, 4))
    a, b = f == 1, f == -1
    cell[:, 0] = np.bincount(codes, weights=c * a, minlength=J)
    cell[:, 1] = np.bincount(codes, weights=a.astype(float), minlength=J)
    cell[:, 2] = np.bincount(codes, weights=c * b, minlength=J)
    cell[:, 3] = np.bincount(codes, weights=b.astype(float), minlength=J)
    S = W @ cell
    with np.errstate(divide="ignore", invalid="ignore"):
        d = S[:, 0] / S[:, 1] - S[:, 2] / S[:, 3]
    d = d[np.isfinite(d)]
    if d.size < B * (1 - MAX_UNDEFINED):
        return None, None
    alpha = 1.0 - confidence
    lo, hi = np.quantile(d, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)
