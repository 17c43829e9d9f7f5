"""Cost of the cluster bootstrap (bias_suite.stats.bootstrap) against one
evaluation on the same data, templates alone and templates and terms.

Designs (every named metric, 3 classes, every template rendered with every
term of every group, a gold class per template):

- ``calibration`` (default): 6 groups x 3 terms, as in
  ``benchmarks/calibration.py``, at 30 and 150 templates;
- ``paper``: 8 groups x 10 terms x 60 templates (``metrics_scale.py --paper``).

For each, the best of ``--repeat`` runs of one ``evaluate`` (metric values
only) and of ``bootstrap(B)`` with ``resample_terms=False`` (templates only:
the verdicts' bootstrap), ``True`` (templates and every group's terms) and
``"auto"`` (the terms the model tells apart; the generated data have no term
effect, so few or none), wall clock and process CPU time, and their ratios
to the evaluation. The default evaluation runs the first and, for the
reading beyond the listed terms, the last on the metrics and classes with a claim in
an attribute whose terms the model tells apart (the claims of one untimed
``evaluate``): their sum is the default's cost (goal: within 4x one
evaluation at the default B = 200). Then the peak memory of the two-way
bootstrap (tracemalloc: Python/numpy allocations). ``--scored FILE``
measures a run's scored examples instead of a design (``make demo`` writes
``results/demo/scored.parquet``).

    python benchmarks/bootstrap_cost.py [--design calibration] [--templates 30,150] [--B 200] [--repeat 5] [--scored FILE]

Wall times are the best of ``--repeat`` runs (the machine is shared, so the
minimum is the least noisy estimate), each setting after one untimed call;
the CPU column (this process and the bootstrap's forked processes) is
steadier on a busy machine, and is the cost on one core. The bootstrap
uses the cores as it does by default (``$BIAS_SUITE_JOBS`` sets how many).
Every setting is timed as the first bootstrap of the data (the evidence
counts a run keeps on the data are dropped before each), except the
reading beyond the listed terms, which runs after the verdicts' bootstrap
of the same data and reuses its counts, as ``evaluate`` does.
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

from _machine import cpu_model  # noqa: E402
from metrics_scale import make_paper_scored  # noqa: E402

from bias_suite.stats.bootstrap.resamples import kernel_thread_count  # noqa: E402

DESIGNS = {"calibration": (6, 3), "paper": (8, 10)}


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (the
    bootstrap's forked processes)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def best_of(fn, repeat, setup=None):
    """(best wall seconds, best CPU seconds, last result); ``setup()``
    untimed before each run."""
    wall = cpu = float("inf")
    out = None
    for _ in range(repeat):
        if setup is not None:
            setup()
        t0, c0 = time.perf_counter(), cpu_seconds()
        out = fn()
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, cpu_seconds() - c0)
    return wall, cpu, out


def measure(templates, groups, terms, B, repeat, seed=0, data=None):
    """One design's timings; ``data``: scored examples to use instead of
    the generated ones (``--scored``)."""
    import pandas as pd

    import bias_suite.evaluation as evaluation
    from bias_suite.families import as_scored
    from bias_suite.metrics import compute as evaluate
    from bias_suite.stats.bootstrap import bootstrap
    from bias_suite.stats.scope import CLAIMS

    data = make_paper_scored(templates, groups, terms, seed=seed) if data is None else as_scored(data)
    ew, ec, results = best_of(lambda: evaluate(data), repeat)
    row = {"templates": templates, "groups": groups, "terms": terms, "rows": len(data), "evaluate_s": ew,
           "evaluate_cpu_s": ec}
    for label, mode in (("templates", False), ("terms", True), ("auto", "auto")):
        # one untimed call first: the first large allocations of a process page-fault (the allocator then
        # keeps the memory), which would count against whichever setting is timed first
        bootstrap(data, results, B=B, seed=seed, resample_terms=mode)
        # each setting as the first bootstrap of the data: without the evidence counts an earlier one keeps
        bw, bc, bs = best_of(lambda: bootstrap(data, results, B=B, seed=seed, resample_terms=mode), repeat,
                             setup=lambda: data.__dict__.pop("_bootstrap_evidence", None))
        row[f"{label}_s"], row[f"{label}_cpu_s"] = bw, bc
        row[f"{label}_ratio"], row[f"{label}_cpu_ratio"] = bw / ew, bc / ec
        if mode is True:
            assert bs.basis["terms_resampled"].all()
    from bias_suite.stats.bootstrap.terms import resampled_groups

    row["resampled_groups"] = sum(len(g) for g in resampled_groups(data, "auto").values())
    # the default: the verdicts' bootstrap (templates only) and the reading beyond the listed terms (the
    # two-way bootstrap, in the attributes whose terms the model tells apart, of the metrics and classes with a claim
    # there; nothing where there is none), as evaluate runs them; the claims come from one untimed evaluate
    from bias_suite.stats.bootstrap.terms import selected_blocks

    chosen = {a: b for a, b in selected_blocks(data, "auto").items() if b}
    judged = evaluation.evaluate(data, bootstrap=B, seed=seed)
    on = ["attribute", "metric", "class"]
    claimed = judged.loc[judged["verdict"].isin(CLAIMS) & judged["attribute"].isin(list(chosen)), on].drop_duplicates()
    keep = results.set_index(on).index.isin(pd.MultiIndex.from_frame(claimed))
    row["claimed"] = len(claimed)
    row["chosen_metrics"] = int(results.loc[results["attribute"].isin(list(chosen)), on]
                                .drop_duplicates().shape[0])
    row["beyond_s"] = row["beyond_cpu_s"] = 0.0
    if keep.any():
        rows = results[keep]
        bootstrap(data, rows, B=B, seed=seed, resample_terms=chosen)
        row["beyond_s"], row["beyond_cpu_s"], _ = best_of(
            lambda: bootstrap(data, rows, B=B, seed=seed, resample_terms=chosen), repeat)
    row["beyond_ratio"], row["beyond_cpu_ratio"] = row["beyond_s"] / ew, row["beyond_cpu_s"] / ec
    row["default_s"] = row["templates_s"] + row["beyond_s"]
    row["default_cpu_s"] = row["templates_cpu_s"] + row["beyond_cpu_s"]
    row["default_ratio"], row["default_cpu_ratio"] = row["default_s"] / ew, row["default_cpu_s"] / ec
    tracemalloc.start()
    bootstrap(data, results, B=B, seed=seed, resample_terms="auto")
    row["peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", choices=sorted(DESIGNS), default="calibration")
    ap.add_argument("--templates", default=None, help="comma-separated template counts (default 30,150; paper: 60)")
    ap.add_argument("--B", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scored", default=None, help="a scored file (a run's scored.parquet) instead of the design")
    args = ap.parse_args(argv)
    groups, terms = DESIGNS[args.design]
    counts = [int(x) for x in (args.templates or ("60" if args.design == "paper" else "30,150")).split(",")]
    print(f"CPU: {cpu_model()}; B = {args.B}; best of {args.repeat}; every named metric; "
          f"{kernel_thread_count(None)} threads or processes")
    rows = []
    for J in ([None] if args.scored else counts):
        r = measure(J, groups, terms, args.B, args.repeat, data=args.scored)
        rows.append(r)
        head = (f"{args.scored}" if args.scored else f"{J} templates x {groups} groups x {terms} terms")
        print(f"{head} ({r['rows']:,} rows): evaluate {r['evaluate_s'] * 1e3:.0f} ms "
              f"(CPU {r['evaluate_cpu_s'] * 1e3:.0f} ms)")
        for label, what in (("templates", "templates only (the verdicts)"),
                            ("terms", "templates and every group's terms"),
                            ("auto", f"templates and the terms told apart ({r['resampled_groups']} groups)"),
                            ("beyond", f"the reading beyond the listed terms ({r['claimed']} of "
                                       f"{r['chosen_metrics']} metrics and classes of those attributes with a claim)"),
                            ("default", "default: the verdicts and the reading beyond the listed terms")):
            print(f"  bootstrap, {what}: {r[f'{label}_s'] * 1e3:.0f} ms = {r[f'{label}_ratio']:.2f}x "
                  f"(CPU {r[f'{label}_cpu_s'] * 1e3:.0f} ms = {r[f'{label}_cpu_ratio']:.2f}x)")
        print(f"  peak traced memory of the two-way bootstrap: {r['peak_mib']:.0f} MiB")
    return rows


if __name__ == "__main__":
    main()
