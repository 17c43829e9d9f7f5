"""How the p-values of rate comparisons behave without any effect.

A rate row's p-value feeds the error control, which reads its tail: on
data without a group effect the share of rows with p below x should be at
most x. This script draws data sets from the calibration generator
(``benchmarks/calibration.py``) without a planted effect and with more
example noise (``--example-sd``, 0.4 by default instead of 0.05, so that
predictions, and so rates, differ between the terms of a template: the
group's and the rest's per-template contributions are then skewed, the
case where a sign-flip test is least exact), evaluates the rate metrics of
the group view (every class, group and pair), and prints, per size, the
share of their p-values below x divided by x (1 is exact; above 1, too many
small p-values), over the rows with a p-value.

    python benchmarks/rate_null_tails.py [--datasets 40] [--templates 30 150] [--example-sd 0.4]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calibration as C  # noqa: E402
from _machine import cpu_model  # noqa: E402

LEVELS = (0.05, 0.01, 0.001)


def rate_metrics() -> list[str]:
    from bias_suite.metrics.catalog import PUBLISHED_METRICS
    from bias_suite.metrics.scores import RateScore, get_score

    return [m.name for m in PUBLISHED_METRICS
            if m.view == "group" and isinstance(get_score(m.score), RateScore)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=40)
    ap.add_argument("--templates", type=int, nargs="+", default=[30, 150])
    ap.add_argument("--example-sd", type=float, default=0.4)
    args = ap.parse_args(argv)
    import bias_suite as bs

    C.EXAMPLE_SD = args.example_sd
    metrics = rate_metrics()
    print(f"CPU: {cpu_model()}; rate metrics: {', '.join(metrics)}; example noise sd {args.example_sd}")
    print(f"{'templates':>9} {'rows':>7} " + " ".join(f"{'p<' + str(x):>9}" for x in LEVELS) + "   (share / x)")
    for J in args.templates:
        ps = []
        t0 = time.perf_counter()
        for seed in range(args.datasets):
            res = bs.evaluate(C.generate(J, seed=10_000 + seed, shift=0.0), metrics=metrics, significance=False,
                              bernstein=False, seed=seed)
            p = res.loc[res["group"].notna(), "p"].to_numpy(dtype=float)
            ps.append(p[np.isfinite(p)])
        p = np.concatenate(ps)
        print(f"{J:>9} {len(p):>7} " + " ".join(f"{np.mean(p < x) / x:>9.2f}" for x in LEVELS)
              + f"   ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
