"""Empirical coverage of the Bernstein interval (bias_suite.stats.bernstein).

Simulates populations with a known bias: two groups (protected with
probability ``prop``, otherwise unprotected), Bernoulli costs with rate
``p_a`` in the protected group and ``p_b`` in the other, so the true
amortized disparity is p_a - p_b. Optionally only a fraction ``annotated`` of
the rows is annotated (+1/-1), the rest 0 (as for EqualOpportunity, where only
gold-positive rows are annotated). For each setting it draws ``reps`` samples
of size n, computes the 95% Bernstein interval with gamma estimated from the
sample, and reports how often the interval contains the true bias (should be
>= 95%; Bernstein is conservative, so expect ~100%) and the mean half-width.
It also prints the WinoBias check of Ethayarajh (2020).

Usage:  python benchmarks/bernstein_coverage.py [--reps 1000] [--seed 0]
Runs in well under a minute (about a minute more with the bootstrap column).

HOOK: set ``bootstrap_interval_fn`` (below, or pass it to :func:`run`) to
compare a cluster-bootstrap interval on the same samples. It is called as

    bootstrap_interval_fn(costs, annotations, clusters, confidence=0.95, seed=int)
        -> (low, high)      # for the same delta_bar = mean_A(c) - mean_B(c)

where ``clusters`` are template ids (consecutive blocks of ``CLUSTER_SIZE``
rows). It is set to the package's cluster bootstrap
(``benchmarks/cluster_difference.py``, B = 1000). It is evaluated on the first ``bootstrap_reps`` repetitions of each
setting only (bootstraps are slow). When None, the bootstrap column is skipped.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bias_suite.stats.bernstein import (  # noqa: E402
    bernstein_interval, min_detectable_bias, sample_size,
)

# ---------------------------------------------------------------------------
# HOOK for a later comparison with the cluster bootstrap (skipped when None).
def bootstrap_interval_fn(costs, annotations, clusters, confidence=0.95, seed=0):
    """The cluster bootstrap (templates = clusters, benchmarks/cluster_difference.py), B = 1000."""
    from cluster_difference import cluster_bootstrap_difference

    return cluster_bootstrap_difference(costs, annotations, clusters, confidence=confidence, seed=seed, B=1000)
# ---------------------------------------------------------------------------

CONFIDENCE = 0.95
CLUSTER_SIZE = 4

#: (n, prop protected, p_a, p_b, fraction annotated)
SETTINGS = [
    (n, prop, pa, pb, 1.0)
    for n in (100, 500, 2000)
    for prop in (0.5, 0.2, 0.05)
    for pa, pb in ((0.3, 0.3), (0.4, 0.3), (0.1, 0.05))
] + [
    (500, 0.5, 0.4, 0.3, 0.5),
    (2000, 0.2, 0.1, 0.05, 0.3),
]


def simulate(n, prop, p_a, p_b, annotated, reps, rng):
    """Arrays (reps, n) of costs and annotations."""
    protected = rng.random((reps, n)) < prop
    rate = np.where(protected, p_a, p_b)
    costs = (rng.random((reps, n)) < rate).astype(float)
    ann = np.where(protected, 1, -1)
    if annotated < 1.0:
        ann = np.where(rng.random((reps, n)) < annotated, ann, 0)
    return costs, ann


def run(reps=1000, seed=0, bootstrap_fn=None, bootstrap_reps=200, out=print):
    bootstrap_fn = bootstrap_fn if bootstrap_fn is not None else bootstrap_interval_fn
    rng = np.random.default_rng(seed)
    header = (f"{'n':>5} {'prop':>5} {'p_a':>5} {'p_b':>5} {'annot':>5} {'bias':>6} "
              f"{'cover':>6} {'undef':>5} {'half-w':>7}")
    if bootstrap_fn is not None:
        header += f" {'boot-cov':>8} {'boot-hw':>7}"
    out(f"Bernstein interval coverage, confidence {CONFIDENCE}, {reps} repetitions each")
    out(header)
    out("-" * len(header))
    results = []
    for n, prop, p_a, p_b, annotated in SETTINGS:
        truth = p_a - p_b
        costs, ann = simulate(n, prop, p_a, p_b, annotated, reps, rng)
        hit = defined = 0
        widths = []
        b_hit = b_def = 0
        b_widths = []
        clusters = np.arange(n) // CLUSTER_SIZE
        for r in range(reps):
            d, lo, hi, _ = bernstein_interval(costs[r], ann[r], confidence=CONFIDENCE)
            if d is None:
                continue
            defined += 1
            hit += lo <= truth <= hi
            widths.append((hi - lo) / 2)
            if bootstrap_fn is not None and r < bootstrap_reps:
                blo, bhi = bootstrap_fn(costs[r], ann[r], clusters,
                                        confidence=CONFIDENCE, seed=seed + r)
                if blo is not None and bhi is not None:
                    b_def += 1
                    b_hit += blo <= truth <= bhi
                    b_widths.append((bhi - blo) / 2)
        cover = hit / defined if defined else float("nan")
        row = dict(n=n, prop=prop, p_a=p_a, p_b=p_b, annotated=annotated, bias=truth,
                   coverage=cover, undefined=reps - defined,
                   half_width=float(np.mean(widths)) if widths else float("nan"))
        line = (f"{n:>5} {prop:>5.2f} {p_a:>5.2f} {p_b:>5.2f} {annotated:>5.2f} "
                f"{truth:>6.3f} {cover:>6.3f} {reps - defined:>5d} {row['half_width']:>7.4f}")
        if bootstrap_fn is not None:
            row["boot_coverage"] = b_hit / b_def if b_def else float("nan")
            row["boot_half_width"] = float(np.mean(b_widths)) if b_widths else float("nan")
            line += f" {row['boot_coverage']:>8.3f} {row['boot_half_width']:>7.4f}"
        out(line)
        results.append(row)
    worst = min(r["coverage"] for r in results if not math.isnan(r["coverage"]))
    out(f"minimum coverage over settings: {worst:.3f} (target >= {CONFIDENCE})")
    return results


def winobias_check(out=print):
    """Ethayarajh (2020): WinoBias' 3,160 examples support only |bias| >= 0.0975
    (C = 1, gamma = 0.5, rho = 0.95, worst-case sigma^2 = (C/gamma)^2 = 4)."""
    d = min_detectable_bias(3160, confidence=0.95, gamma=0.5, max_cost=1.0)
    out("")
    out("WinoBias check (C=1, gamma=0.5, rho=0.95, sigma^2=(C/gamma)^2=4):")
    out(f"  min detectable |bias| with n=3160: {d:.5f} "
        f"(to 4 decimals, rounded up: {math.ceil(d * 1e4) / 1e4:.4f})")
    out(f"  sample-size bound at 0.0975: {sample_size(0.0975).bound:.1f} (< 3160)")
    out(f"  sample-size bound at 0.0974: {sample_size(0.0974).bound:.1f} (> 3160)")
    s = sample_size(0.05)
    out(f"  spec check: bias 0.05 needs n > {s.bound:.2f}, i.e. n >= {s.n}")
    return d


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    run(reps=args.reps, seed=args.seed)
    winobias_check()
    print(f"\n({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
