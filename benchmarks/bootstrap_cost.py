"""Cost of the cluster bootstrap (bias_suite.stats.bootstrap) against one
evaluation on the same data.

A realistic table (default: 20,000 rows, 3 classes, 8 groups, 100 templates,
5% unlabelled rows, every named metric; optionally --rows 200000): times one
``evaluate`` call and ``bootstrap(B=1000)`` (intervals for every metric value,
the evaluation itself not included), prints their ratio (target <= ~10x) and
the peak memory of the bootstrap (tracemalloc: Python/numpy allocations;
ru_maxrss: the process's peak RSS so far).

    python benchmarks/bootstrap_cost.py [--rows 20000] [--groups 8] [--templates 100] [--B 1000] [--repeat 3]

Wall times are the best of ``--repeat`` runs (the machine is shared, so the
minimum is the least noisy estimate).
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics_scale import make_scored  # noqa: E402


def best_of(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--groups", type=int, default=8)
    ap.add_argument("--templates", type=int, default=100)
    ap.add_argument("--B", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from bias_suite.metrics import evaluate
    from bias_suite.stats.bootstrap import bootstrap

    frame, P, classes, scored_from_arrays = make_scored(args.rows, args.groups, args.templates, seed=args.seed)
    data = scored_from_arrays(frame, P, classes)
    print(f"table: {len(frame):,} rows, {len(classes)} classes, {args.groups} groups, {args.templates} templates")

    t_eval, results = best_of(lambda: evaluate(data), args.repeat)
    print(f"evaluate (every named metric): {t_eval:.3f} s, {len(results)} result rows")

    t_boot, bs = best_of(lambda: bootstrap(data, results, B=args.B, seed=args.seed), args.repeat)
    n_ci = int(bs.results["ci_low"].notna().sum())
    print(f"bootstrap B={args.B}: {t_boot:.3f} s, intervals for {n_ci} of {len(results)} rows")
    print(f"ratio bootstrap / evaluate: {t_boot / t_eval:.1f}x (target <= ~10x)")

    tracemalloc.start()
    bootstrap(data, results, B=args.B, seed=args.seed)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"bootstrap peak memory (tracemalloc): {peak / 2**20:.0f} MiB; process peak RSS: {rss:.0f} MiB")
    return {"evaluate_s": t_eval, "bootstrap_s": t_boot, "ratio": t_boot / t_eval, "peak_mib": peak / 2**20}


if __name__ == "__main__":
    main()
