"""Metric engine at scale: 1,000,000 scored examples (3 classes, 8 groups,
200 templates), every named metric.

Reports wall seconds and peak memory (tracemalloc for Python/numpy
allocations, and the process's peak RSS) for
  (a) validation of the interchange DataFrame (probs as dicts) into columns,
  (b) every named metric on the validated data,
  (c) with --read, reading the same rows back from scored.jsonl and
      scored.parquet (read_scored: typed columns checked whole).
Targets: (b) <= 30 s and <= 4 GB on a 2-core machine.

    python benchmarks/metrics_scale.py [--rows 1000000] [--groups 8] [--templates 200] [--read]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--groups", type=int, default=8)
    ap.add_argument("--templates", type=int, default=200)
    ap.add_argument("--dict-rows", type=int, default=200_000, help="rows for the dict-validation timing")
    ap.add_argument("--read", action="store_true", help="also time read_scored on JSONL and Parquet files")
    args = ap.parse_args()

    from bias_suite.metrics import NAMED_METRICS, evaluate
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

    per_metric = {}
    for spec in NAMED_METRICS:
        t1 = time.perf_counter()
        evaluate(data, metrics=[spec])
        per_metric[spec.name] = time.perf_counter() - t1

    print(f"rows={len(frame):,} groups={args.groups} templates={args.templates} classes={len(classes)}")
    print(f"columnar build + validation:           {t_build:7.2f} s")
    print(f"dict-probs validation ({m:,} rows):     {t_check:7.2f} s  (~{t_check * len(frame) / m:.1f} s per {len(frame):,})")
    print(f"all {len(NAMED_METRICS)} named metrics:                {t_eval:7.2f} s   target <= 30 s  ratio {t_eval / 30:.2f}")
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
