"""Cost of a comparison of two models (bias_suite.comparison.compare)
against one evaluation with intervals of the same data
(bias_suite.evaluation.evaluate: metrics, B template resamples,
significance tests, Bernstein rows, verdicts, attribution).

A comparison evaluates both models on the same examples with the same seed,
so both draw the same template resamples (their replicates pair up), keeps
those replicates, judges the change of every judged value and attributes
spill-overs. What the two models share is computed once (the counterfactual
tuples of the examples). Target: a comparison costs at most 2x one
evaluation.

Data: the paper-scale table of benchmarks/metrics_scale.py (every template
x group x term once, a gold class per template; default 100 templates, 8
groups of 10 terms, 3 classes: 8,000 examples) for the baseline; the
candidate has the same examples with other probabilities (the negative
logit of one group shifted, every example's own noise drawn again), so
that some values change and spill-overs are attributed.

    python benchmarks/compare_cost.py [--templates 100] [--groups 8] [--terms 10] [--B 200] [--repeat 3]
    python benchmarks/compare_cost.py --runs BASE_RUN CANDIDATE_RUN   # two run folders of the same suites

With ``--runs`` the data are two runs' scored examples (e.g. ``bias-suite
run templates/sentiment_*.yaml --model default-sentiment --dtype onnx --out
onnx`` and the same with ``--dtype onnx-int8 --out int8``): real models,
whose findings the single evaluation attributes.

Each measurement is the best of ``--repeat`` runs, both in CPU time of the
process (what the work costs; stable on a busy machine) and in wall time,
with the shared counterfactual tuples forgotten before every run so that
no run reuses an earlier one's.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import cpu_model  # noqa: E402
from metrics_scale import make_paper_scored  # noqa: E402


def best_of(fn, repeat):
    """(best CPU seconds, best wall seconds, last result), every run cold."""
    from bias_suite.suites import views

    cpu, wall, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        views._VIEWS.clear()  # the benchmark's own reset: no run reuses the tuples of an earlier one
        c0, w0 = time.process_time(), time.perf_counter()
        out = fn()
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
    return cpu, wall, out


def candidate_probs(P, frame, seed):
    """Other probabilities for the same examples: group g0's negative logit
    shifted by 0.8 and fresh noise for every example."""
    rng = np.random.default_rng(seed + 1)
    logits = np.log(P) + rng.normal(0, 0.3, size=P.shape)
    logits[(frame["group"] == "g0").to_numpy(), 0] += 0.8
    Q = np.exp(logits - logits.max(axis=1, keepdims=True))
    return Q / Q.sum(axis=1, keepdims=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--templates", type=int, default=100)
    ap.add_argument("--groups", type=int, default=8)
    ap.add_argument("--terms", type=int, default=10)
    ap.add_argument("--B", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", nargs=2, metavar=("BASE", "CANDIDATE"), help="two run folders instead of the synthetic table")
    args = ap.parse_args(argv)

    from bias_suite.comparison import compare
    from bias_suite.evaluation import evaluate
    from bias_suite.families import scored_from_arrays

    print(f"CPU: {cpu_model()}")
    options = {}
    if args.runs:
        from bias_suite.comparison import read_model

        models = [read_model(r, f"model {k}") for k, r in enumerate(args.runs)]
        task = next(iter(models[0].parts))
        base, meta = models[0].parts[task], models[0].meta.get(task, {})
        options = dict(group_order_override=meta.get("group_orders"), thresholds=meta.get("thresholds") or None)
        cand = args.runs[1]
        print(f"runs: {args.runs[0]} ({len(base):,} examples) and {args.runs[1]}, B = {args.B}")
        base_arg = args.runs[0]
    else:
        base = make_paper_scored(args.templates, args.groups, args.terms, seed=args.seed)
        frame, P, classes = base.frame, base.probs, list(base.classes)
        cand = scored_from_arrays(frame.drop(columns=["pred"], errors="ignore"), candidate_probs(P, frame, args.seed),
                                  classes)
        base_arg = base
        print(f"table: {len(frame):,} rows, {len(classes)} classes, {args.groups} groups, {args.templates} templates, "
              f"B = {args.B}")
    evaluate(base, bootstrap=2)  # imports and first-call set-up, outside the timings
    compare(base_arg, cand, bootstrap=2)

    e_cpu, e_wall, res = best_of(lambda: evaluate(base, bootstrap=args.B, seed=args.seed, **options), args.repeat)
    print(f"evaluate (one model, intervals and verdicts): {e_cpu:.2f} s CPU, {e_wall:.2f} s wall, {len(res)} rows")
    c_cpu, c_wall, comp = best_of(lambda: compare(base_arg, cand, bootstrap=args.B, seed=args.seed), args.repeat)
    counts = comp.counts()
    print(f"compare (two models, paired): {c_cpu:.2f} s CPU, {c_wall:.2f} s wall, {len(comp)} rows "
          f"({', '.join(f'{n} {w}' for w, n in counts.items())})")
    print(f"ratio compare / evaluate: {c_cpu / e_cpu:.2f}x CPU, {c_wall / e_wall:.2f}x wall (target <= 2x)")
    return {"evaluate_cpu": e_cpu, "compare_cpu": c_cpu, "ratio_cpu": c_cpu / e_cpu, "ratio_wall": c_wall / e_wall}


if __name__ == "__main__":
    main()
