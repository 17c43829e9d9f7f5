"""Metric engine at scale: 1,000,000 scored examples (3 classes, 8 groups,
200 templates), every named metric.

Reports wall seconds and peak memory (tracemalloc for Python/numpy
allocations, and the process's peak RSS) for
  (a) validation of the interchange DataFrame (probs as dicts) into columns,
  (b) every named metric on the validated data,
  (c) with --read, reading the same rows back from scored.jsonl and
      scored.parquet (read_scored: typed columns checked whole).
Targets: (b) <= 30 s and <= 4 GB on a 2-core machine.

With --paper, the paper-scale scored file instead (4,800 rows: 60 templates
x 8 groups x 10 terms, 3 classes, every row labelled, 100 sampled tuples per
template), timed in one run, best of --repeat:
  (a) every named metric (bias_suite.metrics.evaluate, max_tuples=100),
  (b) the significance tests (bias_suite.stats.significance.significance_tests),
  (c) a plain-Python reference loop of the kind research code uses (rows
      walked in Python, dicts per group and template; see `reference_loop`).
Target: (a) + (b) <= 0.13 s.

    python benchmarks/metrics_scale.py [--rows 1000000] [--groups 8] [--templates 200] [--read]
    python benchmarks/metrics_scale.py --paper [--repeat 7]
"""
from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np
import pandas as pd


def make_scored(rows: int, groups: int, templates: int, classes=("negative", "neutral", "positive"), seed=0):
    from bias_suite.families import scored_from_arrays

    rng = np.random.default_rng(seed)
    per_template = rows // templates
    tpl = np.repeat(np.arange(templates), per_template)
    n = tpl.size
    grp = rng.integers(groups, size=n)
    term = rng.integers(5, size=n)
    gold_of_template = rng.integers(len(classes), size=templates)
    label = np.asarray(classes, dtype=object)[gold_of_template[tpl]]
    label[rng.random(n) < 0.05] = None
    logits = rng.normal(size=(n, len(classes))) + 0.3 * grp[:, None] / groups
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    frame = pd.DataFrame(
        {
            "id": np.char.add("ex", np.arange(n).astype(str)).astype(object),
            "template": np.char.add("t", tpl.astype(str)).astype(object),
            "attribute": "attr",
            "group": np.char.add("g", grp.astype(str)).astype(object),
            "term": np.char.add("w", term.astype(str)).astype(object),
            "label": label,
        }
    )
    return frame, P, list(classes), scored_from_arrays


def make_paper_scored(templates=60, groups=8, terms=10, classes=("negative", "neutral", "positive"), seed=0):
    """The paper-scale scored data: every template x group x term once,
    a gold class per template, probabilities from a seeded RNG with a
    group-dependent shift."""
    from bias_suite.families import scored_from_arrays

    rng = np.random.default_rng(seed)
    tpl, grp, term = (a.ravel() for a in np.meshgrid(np.arange(templates), np.arange(groups), np.arange(terms),
                                                      indexing="ij"))
    n = tpl.size
    gold = rng.integers(len(classes), size=templates)[tpl]
    logits = rng.normal(size=(n, len(classes))) + 0.4 * np.eye(len(classes))[gold] + 0.2 * grp[:, None] / groups
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    frame = pd.DataFrame(
        {
            "id": [f"ex{i}" for i in range(n)],
            "template": [f"t{j}" for j in tpl],
            "attribute": "attr",
            "group": [f"g{g}" for g in grp],
            "term": [f"g{g}w{w}" for g, w in zip(grp, term)],
            "label": np.asarray(classes, dtype=object)[gold],
        }
    )
    return scored_from_arrays(frame, P, list(classes))


REFERENCE_COMPUTES = (
    "per class (one-vs-rest) and group: FNR, FPR, TPR, mean probability; FNED and FPED "
    "(sum over groups of |rate - overall rate|); pairwise differences of the group mean "
    "probabilities; per template, 100 counterfactual tuples (one term per group, Python's "
    "random) and the mean over tuples and templates of the tuple's max - min probability "
    "and of its mean pairwise |difference|; per template and group the mean probability "
    "(block scores) and a Friedman test per class (scipy)"
)


def reference_loop(records, classes, max_tuples=100, seed=0):
    """Group and counterfactual quantities computed the way research code
    does: Python loops over rows, groups, templates and tuples, with dicts."""
    import random
    from itertools import combinations

    from scipy import stats

    out = {}
    by_attr = {}
    for r in records:
        by_attr.setdefault(r["attribute"], []).append(r)
    for attr, rows in by_attr.items():
        groups = []
        for r in rows:
            if r["group"] not in groups:
                groups.append(r["group"])
        for ci, c in enumerate(classes):
            # group view: confusion counts per group
            cnt = {g: {"tp": 0, "fp": 0, "fn": 0, "tn": 0} for g in groups + ["__all__"]}
            psum = {g: 0.0 for g in groups}
            nrow = {g: 0 for g in groups}
            for r in rows:
                pred = max(range(len(classes)), key=lambda i: r["probs"][i]) == ci
                gold = r["label"] == c
                key = ("tp" if gold else "fp") if pred else ("fn" if gold else "tn")
                cnt[r["group"]][key] += 1
                cnt["__all__"][key] += 1
                psum[r["group"]] += r["probs"][ci]
                nrow[r["group"]] += 1

            def rate(d, num, other):
                den = d[num] + d[other]
                return d[num] / den if den else float("nan")

            fnr = {g: rate(cnt[g], "fn", "tp") for g in cnt}
            fpr = {g: rate(cnt[g], "fp", "tn") for g in cnt}
            tpr = {g: rate(cnt[g], "tp", "fn") for g in cnt}
            mean = {g: psum[g] / nrow[g] for g in groups}
            out[(attr, c, "FNED")] = sum(abs(fnr[g] - fnr["__all__"]) for g in groups)
            out[(attr, c, "FPED")] = sum(abs(fpr[g] - fpr["__all__"]) for g in groups)
            out[(attr, c, "TPR")] = dict(tpr)
            for a, b in combinations(groups, 2):
                out[(attr, c, "mean-diff", a, b)] = mean[a] - mean[b]
            # counterfactual view: sets per template and group
            sets = {}
            for r in rows:
                sets.setdefault(r["template"], {}).setdefault(r["group"], []).append(r["probs"][ci])
            rnd = random.Random(seed)
            gaps, pair_gaps, blocks = [], [], []
            for t, members in sets.items():
                if any(g not in members for g in groups):
                    continue
                total = 1
                for g in groups:
                    total *= len(members[g])
                seen = set()
                while len(seen) < min(max_tuples, total):
                    seen.add(tuple(rnd.randrange(len(members[g])) for g in groups))
                t_gap, t_pair = 0.0, 0.0
                for tup in seen:
                    vals = [members[g][i] for g, i in zip(groups, tup)]
                    t_gap += max(vals) - min(vals)
                    t_pair += sum(abs(x - z) for x, z in combinations(vals, 2)) / (len(vals) * (len(vals) - 1) / 2)
                gaps.append(t_gap / len(seen))
                pair_gaps.append(t_pair / len(seen))
                blocks.append([sum(members[g]) / len(members[g]) for g in groups])
            out[(attr, c, "CF-range")] = sum(gaps) / len(gaps)
            out[(attr, c, "CF-pairwise")] = sum(pair_gaps) / len(pair_gaps)
            out[(attr, c, "Friedman")] = stats.friedmanchisquare(*zip(*blocks))
    return out


def paper_main(repeat: int):
    from bias_suite.metrics import NAMED_METRICS, compute as evaluate
    from bias_suite.stats.significance import significance_tests

    data = make_paper_scored()
    classes = list(data.classes)
    fr = data.frame
    records = [
        {"attribute": a, "template": t, "group": g, "label": lab, "probs": list(p)}
        for a, t, g, lab, p in zip(fr["attribute"], fr["template"], fr["group"], fr["label"], data.probs.tolist())
    ]

    def best(fn):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    evaluate(data)  # warm-up (imports, caches)
    significance_tests(data)
    t_metrics = best(lambda: evaluate(data, max_tuples=100))
    t_sig = best(lambda: significance_tests(data))
    t_both = best(lambda: (evaluate(data, max_tuples=100), significance_tests(data)))
    t_ref = best(lambda: reference_loop(records, classes))
    res = evaluate(data)
    print(f"paper scale: rows={len(fr):,} templates=60 groups=8 terms=10 classes={len(classes)} "
          f"max_tuples=100; best of {repeat}")
    print(f"(a) every named metric ({len(NAMED_METRICS)} named, {res['metric'].nunique()} run): {t_metrics:7.3f} s")
    print(f"(b) significance tests:                 {t_sig:7.3f} s")
    print(f"(a) + (b) in one call each:             {t_both:7.3f} s   target <= 0.13 s  ratio {t_both / 0.13:.2f}")
    print(f"(c) plain-Python reference loop:        {t_ref:7.3f} s   reference / bias_suite {t_ref / t_both:.1f}x")
    print(f"    the reference loop computes: {REFERENCE_COMPUTES}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--groups", type=int, default=8)
    ap.add_argument("--templates", type=int, default=200)
    ap.add_argument("--dict-rows", type=int, default=200_000, help="rows for the dict-validation timing")
    ap.add_argument("--read", action="store_true", help="also time read_scored on JSONL and Parquet files")
    ap.add_argument("--paper", action="store_true", help="time the paper-scale file (4,800 rows) instead")
    ap.add_argument("--repeat", type=int, default=7, help="--paper: repeats, the best is reported")
    args = ap.parse_args()
    if args.paper:
        return paper_main(args.repeat)

    from bias_suite.metrics import NAMED_METRICS, compute as evaluate
    from bias_suite.families import check_scored

    frame, P, classes, build = make_scored(args.rows, args.groups, args.templates)
    t0 = time.perf_counter()
    data = build(frame, P, classes)
    t_build = time.perf_counter() - t0

    # validation of the interchange layout (probs as dicts), on a slice
    m = min(args.dict_rows, len(frame))
    df = frame.iloc[:m].copy()
    df["probs"] = [dict(zip(classes, row)) for row in P[:m].tolist()]
    t0 = time.perf_counter()
    check_scored(df)
    t_check = time.perf_counter() - t0

    tracemalloc.start()
    t0 = time.perf_counter()
    res = evaluate(data)  # the metric values alone (bias_suite.metrics.evaluate)
    t_eval = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024

    # the named metrics a classifier gets (the identity-span metrics are the taggers')
    from bias_suite.metrics.engine import metric_input_kind

    named = [spec for spec in NAMED_METRICS if metric_input_kind(data, spec)[0] is not None]
    per_metric = {}
    for spec in named:
        t1 = time.perf_counter()
        evaluate(data, metrics=[spec])
        per_metric[spec.name] = time.perf_counter() - t1

    print(f"rows={len(frame):,} groups={args.groups} templates={args.templates} classes={len(classes)}")
    print(f"columnar build + validation:           {t_build:7.2f} s")
    print(f"dict-probs validation ({m:,} rows):     {t_check:7.2f} s  (~{t_check * len(frame) / m:.1f} s per {len(frame):,})")
    print(f"all {len(named)} named metrics:                {t_eval:7.2f} s   target <= 30 s  ratio {t_eval / 30:.2f}")
    print(f"peak traced memory during evaluate:    {peak / 2**30:7.2f} GiB target <= 4 GiB ratio {peak / 2**30 / 4:.2f}")
    print(f"peak process RSS (whole run so far):   {rss:7.2f} GiB")
    print(f"result rows: {len(res):,}; null values: {int(res['value'].isna().sum())}")
    if args.read:
        import tempfile

        from bias_suite.families import read_scored, write_scored

        with tempfile.TemporaryDirectory() as tmp:
            files = write_scored(data, tmp)
            for kind, path in files.items():
                t0 = time.perf_counter()
                back = read_scored(path)
                t_read = time.perf_counter() - t0
                assert np.array_equal(back.probs, data.probs) and np.array_equal(back.yhat, data.yhat)
                print(f"read_scored {kind:8s} ({path.stat().st_size / 2**20:6.0f} MiB):   {t_read:7.2f} s")
    print("slowest metrics (s):", ", ".join(f"{k} {v:.2f}" for k, v in sorted(per_metric.items(), key=lambda kv: -kv[1])[:8]))


if __name__ == "__main__":
    main()
