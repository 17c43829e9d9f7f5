"""Does the reading beyond the listed terms cover the population value?

Generator: one attribute, two groups (a, b) of ``--terms`` terms each, ``J``
templates each rendered with every term. Every term's effect on the
probability of 'positive' (moved to or from 'negative') is drawn from one
population, N(0, ``--term-sd``), with ``--gap`` added for the terms of a: the
**population** gap between the groups is ``--gap``, while the **listed**
terms' gap is that plus the difference of the drawn terms' mean effects.
Templates have their own gold class and base probabilities; every example
adds a little noise.

For each data set (``--seeds``): ``bias_suite.evaluate(metrics=["CFGap"])``
at default settings (the verdict on the listed terms, and the reading
beyond them), and, for every data set whatever its verdict, the interval of
the reading beyond the listed terms (the two-way bootstrap over templates
and the blocks of terms the model tells apart, widened for the few terms it
resamples: bias_suite.stats.scope). Printed: how often that interval holds
the population gap (goal >= 90%), and how often the bootstrap's own
percentile interval does; how often the listed-terms interval holds
the listed terms' gap; how often the verdict claims a gap (``material`` or
``small``) and how often the reading says ``holds``, which, at ``--gap 0``,
is a claim about the population that is false.

    python benchmarks/beyond_coverage.py [--seeds 60] [--templates 30] [--terms 3] [--term-sd 0.08] [--gap 0]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import cpu_model  # noqa: E402

CLASSES = ("negative", "neutral", "positive")
BASES = {"positive": (0.15, 0.3, 0.55), "negative": (0.5, 0.3, 0.2), "neutral": (0.2, 0.5, 0.3)}


def generate(J: int, terms: int, term_sd: float, gap: float, seed: int):
    """(scored data, listed-terms gap of P(positive), a − b)."""
    from bias_suite.families import scored_from_arrays

    rng = np.random.default_rng(seed)
    eff = {g: rng.normal(scale=term_sd, size=terms) + (gap if g == "a" else 0.0) for g in ("a", "b")}
    rows, P = [], []
    for j in range(J):
        gold = CLASSES[rng.integers(3)]
        base = np.array(BASES[gold]) + rng.normal(scale=0.03, size=3)
        for g in ("a", "b"):
            for k in range(terms):
                p = base.copy()
                d = float(np.clip(eff[g][k], -0.14, 0.14))  # keep every probability positive
                p[2] += d
                p[0] -= d
                p = np.clip(p + rng.normal(scale=0.005, size=3), 1e-3, None)
                rows.append(dict(id=f"r{len(rows)}", template=f"t{j}", attribute="attr", group=g, term=f"{g}{k}",
                                 text=f"{g}{k} {j}", label=gold))
                P.append(p / p.sum())
    listed = float(np.mean(np.clip(eff["a"], -0.14, 0.14)) - np.mean(np.clip(eff["b"], -0.14, 0.14)))
    return scored_from_arrays(pd.DataFrame(rows), np.array(P), list(CLASSES)), listed


def one(J, terms, term_sd, gap, seed, B):
    import bias_suite as bs
    from bias_suite.stats.bootstrap import bootstrap
    from bias_suite.stats.bootstrap.terms import selected_blocks

    data, listed = generate(J, terms, term_sd, gap, seed)
    res = bs.evaluate(data, metrics=["CFGap"], bootstrap=B, seed=seed)
    row = res[(res["group"] == "a|b") & (res["class"] == "positive")].iloc[0]
    chosen = {a: b for a, b in selected_blocks(data, "auto").items() if b}
    metric_rows = res[res["family"] != "significance"][["metric", "family", "view", "attribute", "class", "group",
                                                        "value", "ci_low", "ci_high", "n", "note"]]
    two = bootstrap(data, metric_rows, metrics=["CFGap"], B=B, seed=seed, resample_terms=chosen or False).basis
    b = two[(two["group"] == "a|b") & (two["class"] == "positive")].iloc[0]
    # the reading's interval, for every data set whatever its verdict (the results hold it for judged rows)
    from bias_suite.stats.scope import _beyond_reading, term_sizes

    sizes = term_sizes(data, chosen)
    ks = [sizes[("attr", g)] for g in ("a", "b") if ("attr", g) in sizes]
    v, lo, hi = (float(row[c]) for c in ("signed", "signed_low", "signed_high"))
    blo, bhi, *_ = _beyond_reading(v, lo, hi, min(float(b["basis_low"]), lo), max(float(b["basis_high"]), hi), ks,
                                   0.95)
    return dict(listed=listed, verdict=row["verdict"], beyond=row["beyond"], lo=lo, hi=hi, blo=blo, bhi=bhi,
                rlo=float(b["basis_low"]), rhi=float(b["basis_high"]), resampled=bool(chosen))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=60)
    ap.add_argument("--templates", type=int, default=30)
    ap.add_argument("--terms", type=int, default=3)
    ap.add_argument("--term-sd", type=float, default=0.08)
    ap.add_argument("--gap", type=float, default=0.0)
    ap.add_argument("--bootstrap", type=int, default=200)
    args = ap.parse_args(argv)
    # the population gap of the effects as the generator applies them (clipped to keep probabilities positive)
    z = np.random.default_rng(12345).normal(scale=args.term_sd, size=2_000_000)
    args.gap = float(np.clip(z + args.gap, -0.14, 0.14).mean() - np.clip(z, -0.14, 0.14).mean())
    t0 = time.perf_counter()
    recs = [one(args.templates, args.terms, args.term_sd, args.gap, s, args.bootstrap) for s in range(args.seeds)]
    df = pd.DataFrame(recs)
    cover_pop = ((df["blo"] <= args.gap) & (args.gap <= df["bhi"])).mean()
    cover_raw = ((df["rlo"] <= args.gap) & (args.gap <= df["rhi"])).mean()
    cover_listed = ((df["lo"] <= df["listed"]) & (df["listed"] <= df["hi"])).mean()
    claims = df["verdict"].isin(["material", "small"])
    holds = claims & (df["beyond"] == "holds")
    print(f"CPU: {cpu_model()}; {args.seeds} data sets, {args.templates} templates, 2 groups x {args.terms} terms, "
          f"term sd {args.term_sd}, population gap {args.gap}, B = {args.bootstrap}: {time.perf_counter() - t0:.0f} s")
    print(f"terms told apart (two-way bootstrap run): {df['resampled'].mean():.0%} of data sets")
    print(f"the reading's interval holds the population gap: {cover_pop:.0%} (goal >= 90%); the two-way "
          f"bootstrap's percentile interval alone: {cover_raw:.0%}")
    print(f"listed-terms interval holds the listed terms' gap: {cover_listed:.0%}")
    print(f"verdict claims a gap (listed terms): {claims.mean():.0%}; of those, 'holds' beyond the listed terms: "
          f"{holds.sum()} of {claims.sum()}" + (" (each a false claim about the population)" if args.gap == 0 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
