"""How much evidence do the calibration benchmark's planted rate effects
carry? Two exact tests of the target rate rows (FNED, FPR-Ratio), beside the
package's.

On the data sets of ``benchmarks/calibration.py`` (same generator, same data
sets: :func:`calibration.cell_seed`), per template j with a chance of the
event (its gold-c examples for FNED, its other examples for FPR-Ratio), the
planted group's rate r_j and the other groups' rate s_j:

- **across templates** (the question a rate row answers: is the group's rate
  different from the rest's over templates like these?): the sign-flip test
  of the templates' differences d_j = r_j - s_j, exact over all 2^k sign
  patterns of the k templates where d_j is not 0 (Monte Carlo, 200,000
  patterns, above 18). It treats templates as the sample, as the package
  does, and assumes d_j symmetric about 0 without an effect;
- **within templates** (is the group treated differently anywhere?): the
  examples of a template differ only by their terms, and the generator gives
  terms no effect of their own, so without a group effect the 18 terms of a
  template are exchangeable and the group's event count is hypergeometric
  per template, independently across templates; the exact test of its sum
  (a stratified exact test in the manner of Cochran-Mantel-Haenszel). It
  tests a sharp null (no effect in any template) and knows that terms do
  not matter, which the package may not assume; it is what the
  counterfactual rows (CFGap, AvgScoreDiff), which compare a template's
  terms with each other, measure on probabilities.

Both p-values are two-sided. Printed per metric, templates and level: the
share of data sets with p below 0.05, 0.01 and 0.001, for each test. Under
the error control of a default run the target row is claimed at about
p < 0.01 (the largest p claimed for FNED and FPED at 1.5 and 3 tau with 150
templates in the calibration sweep: 0.011 and 0.010).

Usage:
    python benchmarks/rate_power_bound.py [--seeds 40] [--templates 30 150] [--levels 0 0.5 0.8 1.5 3]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration as C  # noqa: E402

RATE_TARGETS = ("FNED", "FPR-Ratio")


def events(metric: str, J: int, seed: int, shift: float):
    """(n, k, e, x) per template that gives the event a chance: its examples
    at risk (gold-c for FNED, another gold class for FPR-Ratio), the planted
    group's among them, the events among them (c missed; c predicted) and
    the planted group's events."""
    frame, P = C.generate_arrays(J, seed, C.PLANTED, shift)
    c = C.CLASSES.index(C.TARGET_CLASS)
    pred = P.argmax(axis=1)
    gold = frame["label"].to_numpy() == C.TARGET_CLASS
    at_risk, event = (gold, pred != c) if metric == "FNED" else (~gold, pred == c)
    tpl = pd.factorize(frame["template"])[0][at_risk]  # templates come in order: their index
    g0 = (frame["group"].to_numpy() == C.PLANTED)[at_risk]
    event = event[at_risk]
    n = np.bincount(tpl, minlength=J)
    k = np.bincount(tpl, weights=g0, minlength=J)
    e = np.bincount(tpl, weights=event, minlength=J)
    x = np.bincount(tpl, weights=event & g0, minlength=J)
    on = n > 0
    return n[on], k[on].astype(int), e[on].astype(int), x[on].astype(int)


def within_p(n, k, e, x) -> float:
    """Two-sided p of T = sum x_j, x_j ~ Hypergeom(n_j, e_j, k_j) independently."""
    pmf = np.ones(1)
    for nj, kj, ej in zip(n, k, e):
        if ej == 0 or ej == nj:
            continue  # a template without both outcomes says nothing
        support = np.arange(0, min(kj, ej) + 1)
        pmf = np.convolve(pmf, stats.hypergeom.pmf(support, nj, ej, kj))
    # templates where every example had the event add k_j to T whatever the groups
    t = int(x.sum()) - int(sum(kj for nj, kj, ej in zip(n, k, e) if ej == nj))
    lower, upper = pmf[:t + 1].sum(), pmf[t:].sum()
    return float(min(1.0, 2 * min(lower, upper)))


def across_p(n, k, e, x, *, draws: int = 200_000, exact_up_to: int = 18) -> float:
    """Two-sided sign-flip p of the templates' rate differences."""
    d = x / k - (e - x) / (n - k)
    d = d[np.abs(d) > 1e-12]
    if not d.size:
        return 1.0
    if d.size <= exact_up_to:
        signs = ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1) * 2 - 1
    else:
        signs = np.random.default_rng(0).choice(np.array([-1, 1]), size=(draws, d.size))
    return float(np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--templates", type=int, nargs="+", default=list(C.TEMPLATES))
    ap.add_argument("--levels", type=float, nargs="+", default=list(C.LEVELS))
    args = ap.parse_args(argv)
    cols = "  ".join(f"{'p<' + format(a, 'g'):>7}" for a in (0.05, 0.01, 0.001))
    print(f"{'':<26}{'across templates':^27}  {'within templates':^27}")
    print(f"{'metric':<10} {'J':>4} {'level':>5} {'n':>3}  {cols}  {cols}")
    for metric in RATE_TARGETS:
        for J in args.templates:
            for L in sorted(set(args.levels)):
                shift = 0.0 if L == 0 else C.calibrate(metric, L)[0]
                ps = np.array([[f(*ev) for f in (across_p, within_p)]
                               for ev in (events(metric, J, C.cell_seed(metric, L, s), shift)
                                          for s in range(args.seeds))])
                print(f"{metric:<10} {J:>4} {L:>5g} {len(ps):>3}  " + "  ".join(
                    "  ".join(f"{100 * np.mean(ps[:, i] < a):>6.0f}%" for a in (0.05, 0.01, 0.001))
                    for i in (0, 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
