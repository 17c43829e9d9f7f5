"""Rate comparisons on data where the groups share every template's
predictions: how the exact paired bound ("Intervals that cannot collapse"
in docs/statistics.md) judges them.

Generator (:func:`generate`): 3 classes, G groups of T terms, J templates
with the gold classes in turn (J / 3 each, shuffled); a template's logits
are N(0, 0.7) per class plus a gold margin N(``margin``, 0.9), and every
term of the template gets exactly these probabilities (no example noise),
so no template's prediction differs between any two groups and every rate
comparison's true value is 0 (ratios 1). ``margin`` sets the error rates:
1.0 gives FNR about 0.3 and FPR about 0.16 per class; 1.8 (the margin of
benchmarks/calibration.py) about 0.14 and 0.07.

Two parts, each evaluated at default settings (``evaluate(df, seed=s)``:
every metric, test and Bernstein row judged together):

- **identical** (6 groups of 3 terms; 30, 120 and 240 templates; both
  margins): of the rate, ratio and parity rows per group or pair (FNED,
  FPED and their starred forms, TPR-Gap, TNR-Gap, DisparityScore and
  DisparityScore*, ParityGap, FNR-Ratio, FPR-Ratio), the share
  ``negligible`` and the number ``material``, per metric kind;
- **shared** (8 groups of 3 terms, 120 templates, 40 per class, margin
  1.0): the TPR-Gap, ParityGap and DisparityScore rows (87 each, sums
  included): their intervals' half-widths, verdicts and what their reasons
  say would decide them (per pair: which templates, and how many in all).

Usage:
    python benchmarks/paired_rates.py [--seeds 3] [--templates 30 120 240] [--margins 1.0 1.8] [--skip-shared]

Goals checked (PASS/FAIL): at 240 templates with rates that are not tiny
(margin 1.0) at least 90% of the rows ``negligible``; no ``material`` row
anywhere.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CLASSES = ("negative", "neutral", "positive")
TEMPLATE_SD, MARGIN_SD = 0.7, 0.9
RATE_ROWS = ("FNED", "FPED", "FNED*", "FPED*", "TPR-Gap", "TNR-Gap", "DisparityScore", "DisparityScore*",
             "ParityGap", "FNR-Ratio", "FPR-Ratio")
KIND = {"FNR-Ratio": "ratio", "FPR-Ratio": "ratio", "ParityGap": "parity"}


def generate(J: int, seed: int = 0, *, groups: int = 6, terms: int = 3, margin: float = 1.0) -> pd.DataFrame:
    """Scored examples: J templates x groups x terms, every term of a
    template with the template's own probabilities."""
    rng = np.random.default_rng(seed)
    names = [(f"g{i}", f"g{i}_t{k}") for i in range(groups) for k in range(terms)]
    V = len(names)
    gold = np.arange(J) % len(CLASSES)
    rng.shuffle(gold)
    logits = rng.normal(0.0, TEMPLATE_SD, size=(J, len(CLASSES)))
    logits[np.arange(J), gold] += rng.normal(margin, MARGIN_SD, size=J)
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    tid = np.repeat(np.arange(J), V)
    term = np.array([t for _, t in names] * J, dtype=object)
    frame = pd.DataFrame({
        "id": [f"{j}-{t}" for j, t in zip(tid, term)],
        "template": [f"t{j}" for j in tid],
        "attribute": "identity",
        "group": np.array([g for g, _ in names] * J, dtype=object),
        "term": term,
        "text": [f"sentence {j} about {t}" for j, t in zip(tid, term)],
        "label": np.asarray(CLASSES, dtype=object)[gold[tid]],
    })
    frame["probs"] = [dict(zip(CLASSES, row)) for row in np.repeat(P, V, axis=0).tolist()]
    return frame


def rate_rows(res: pd.DataFrame) -> pd.DataFrame:
    """The rate, ratio and parity rows per group or pair."""
    return res[res["metric"].isin(RATE_ROWS) & res["group"].notna()]


def identical(J: int, seed: int, margin: float) -> dict:
    from bias_suite.evaluation import evaluate

    r = rate_rows(evaluate(generate(J, seed, margin=margin), seed=seed))
    kind = r["metric"].map(lambda m: KIND.get(m, "rate"))
    out = {"rows": len(r), "negligible": int((r["verdict"] == "negligible").sum()),
           "material": int((r["verdict"] == "material").sum())}
    for k in ("rate", "ratio", "parity"):
        sel = kind == k
        out[f"{k}_rows"], out[f"{k}_negligible"] = int(sel.sum()), int((r.loc[sel, "verdict"] == "negligible").sum())
    return out


def shared(seed: int) -> pd.DataFrame:
    """The TPR-Gap, ParityGap and DisparityScore rows of the 8-group data."""
    from bias_suite.evaluation import evaluate

    res = evaluate(generate(120, seed, groups=8, margin=1.0), seed=seed)
    return res[res["metric"].isin(["TPR-Gap", "ParityGap", "DisparityScore"])]


def _needed(reason) -> tuple[str, float]:
    """(what templates, how many in all) a reason says would decide its row."""
    reason = str(reason)
    m = re.search(r"about \d+ more (.+?) \((\d+) in all\) would decide it", reason)
    if m:
        return re.sub(r"'[^']*'", "'c'", m.group(1)), float(m.group(2))
    m = re.search(r"about (\d+) templates \(now \d+\) would decide it", reason)
    if m:
        return "templates (of every class)", float(m.group(1))
    return ("more than 100x" if "more than 100" in reason else "-"), float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--templates", type=int, nargs="+", default=[30, 120, 240])
    ap.add_argument("--margins", type=float, nargs="+", default=[1.0, 1.8])
    ap.add_argument("--skip-shared", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    goals = []
    print("identical probabilities for every term of a template (6 groups x 3 terms, every metric)")
    print(f"{'margin':>6} {'J':>4} {'seeds':>5}  {'rows':>5}  {'negligible':>10}  {'rates':>6}  {'ratios':>6}  "
          f"{'parity':>6}  {'material':>8}")
    for margin in args.margins:
        for J in args.templates:
            recs = [identical(J, s, margin) for s in range(args.seeds)]
            tot = {k: sum(r[k] for r in recs) for k in recs[0]}
            pct = lambda a, b: f"{100 * a / b:.0f}%" if b else "-"  # noqa: E731
            kinds = "  ".join(f"{pct(tot[f'{k}_negligible'], tot[f'{k}_rows']):>6}" for k in ("rate", "ratio", "parity"))
            print(f"{margin:>6g} {J:>4} {args.seeds:>5}  {tot['rows']:>5}  {pct(tot['negligible'], tot['rows']):>10}  "
                  f"{kinds}  {tot['material']:>8}", flush=True)
            goals.append((f"margin {margin:g}, J={J}: no material row", f"{tot['material']}", tot["material"] == 0))
            if J >= 240 and margin <= 1.0:
                share = tot["negligible"] / tot["rows"]
                goals.append((f"margin {margin:g}, J={J}: at least 90% negligible", f"{100 * share:.1f}%",
                              share >= 0.9))
    if not args.skip_shared:
        print("\n8 groups x 3 terms, 120 templates (40 per class), no template's predictions differ between groups")
        rows = pd.concat([shared(s) for s in range(args.seeds)], ignore_index=True)
        print(f"{'metric':<15} {'rows':>5}  {'half-width of the signed interval':>34}  {'negligible':>10}  "
              f"{'inconclusive':>12}  templates needed (pairs)")
        for m, sub in rows.groupby("metric", sort=False):
            per = sub[sub["group"].notna()]
            hw = per["reason"].str.extract(r"signed [-0-9.e]+ \[([-0-9.e]+), ([-0-9.e]+)\]").astype(float)
            width = (hw[1] - hw[0]) / 2
            said = pd.DataFrame(per["reason"].map(_needed).tolist(), columns=["unit", "total"])
            needed = "; ".join(f"{u}: {g['total'].min():.0f}..{g['total'].max():.0f} ({len(g)} rows)"
                               if g["total"].notna().any() else f"{u} ({len(g)} rows)"
                               for u, g in said.groupby("unit", sort=False))
            print(f"{m:<15} {len(sub):>5}  {width.min():>16.4f} .. {width.max():<15.4f}  "
                  f"{(sub['verdict'] == 'negligible').sum():>10}  {(sub['verdict'] == 'inconclusive').sum():>12}  "
                  + needed)
    print()
    for what, got, ok in goals:
        print(f"{'PASS' if ok else 'FAIL'}  {what}: {got}")
    print(f"\n{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
