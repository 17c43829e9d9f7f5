"""The per-group answer on data whose truth is known (docs/verdicts.md,
"What a verdict is about, and the answer per group").

Part 1, generated designs: the calibration generator (benchmarks/calibration.py:
3 classes, 3 terms per group, template noise N(0, 0.7), example noise N(0,
0.05)) with k = 2, 3, 4 and 7 groups and 150 templates, under

- ``one``: g0's negative logit shifted so that its CFGap against an unshifted
  group is 3 τ (the calibrated shift of benchmarks/calibration_cache.json);
- ``one+small``: the same, and g1 shifted by the 0.5 τ shift;
- ``two alike`` (k = 3 only): g0 and g1 both shifted by the 3 τ shift;
- ``null``: no shift.

Each data set is evaluated at default settings (``bs.evaluate(df, seed=s)``)
and read with ``by_group()``. Printed per design: the share of data sets in
which only the shifted group gets a direction (with two groups: the other is
its exact mirror), the 0.5 τ group's statuses, null data sets with any
direction, and for ``two alike`` whether the statuses name the two as worse
off or the third as better off (never a mix).

Part 2, keyword models on the bundled ``sentiment_religion`` suite: a
lexicon sentiment model whose sentences with 'Muslim(s)' get P' = (1 − p) P
+ p e_negative (a penalty p = 0.4 and 0.2 on the probability of
'negative'); printed: the penalised group's headline effect against the
model's true harm-directed probability gap (mean P(negative) of its
sentences minus the other groups', computed on the scored examples), and
``Comparison.by_group()`` of the 0.2 model against the 0.4 one.

    python benchmarks/group_answer.py [--seeds 40] [--jobs 2] [--part 1|2|both]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[0]))

from _machine import cpu_model  # noqa: E402

CLASSES = ("negative", "neutral", "positive")
DIRECTED = ("worse off", "slightly worse off", "better off", "slightly better off")
TEMPLATES = 150


def _shifts() -> tuple[float, float]:
    cache = json.loads((HERE / "calibration_cache.json").read_text())
    s = next(iter(cache.values()))["shifts"]
    return s["CFGap@3"]["shift"], s["CFGap@0.5"]["shift"]


def generate(k: int, shifts: dict, seed: int, J: int = TEMPLATES) -> pd.DataFrame:
    """The calibration generator's design with k groups and the negative logits of ``shifts`` moved."""
    rng = np.random.default_rng(seed)
    groups = [f"g{i}" for i in range(k)]
    terms = [(g, f"{g}_t{t}") for g in groups for t in range(3)]
    V = len(terms)
    gold = rng.integers(0, 3, size=J)
    logits = rng.normal(0.0, 0.7, size=(J, 3))
    logits[np.arange(J), gold] += rng.normal(1.8, 0.9, size=J)
    x = np.repeat(logits, V, axis=0) + rng.normal(0.0, 0.05, size=(J * V, 3))
    grp = np.array([g for g, _ in terms] * J, dtype=object)
    for g, s in shifts.items():
        x[grp == g, 0] += s
    P = np.exp(x - x.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    tid = np.repeat(np.arange(J), V)
    term = np.array([t for _, t in terms] * J, dtype=object)
    df = pd.DataFrame({"id": [f"{j}-{t}" for j, t in zip(tid, term)], "template": [f"t{j}" for j in tid],
                       "attribute": "identity", "group": grp, "term": term,
                       "text": [f"sentence {j} about {t}" for j, t in zip(tid, term)],
                       "label": np.asarray(CLASSES, dtype=object)[np.repeat(gold, V)]})
    df["probs"] = [dict(zip(CLASSES, r)) for r in P.tolist()]
    return df


def _one(args) -> dict:
    import bias_suite as bs

    design, k, seed = args
    big, small = _shifts()
    shifts = {"one": {"g0": big}, "one+small": {"g0": big, "g1": small}, "two alike": {"g0": big, "g1": big},
              "null": {}}[design]
    bg = bs.evaluate(generate(k, shifts, 1000 * k + seed), seed=seed).by_group().set_index("group")
    st = bg["status"].to_dict()
    mirror = None
    if k == 2:
        mirror = bool(bg.at["g1", "effect"] == -bg.at["g0", "effect"]) if np.isfinite(bg.at["g0", "effect"]) else \
            st["g0"] not in DIRECTED and st["g1"] not in DIRECTED
    return dict(design=design, k=k, seed=seed, status=st, mirror=mirror)


def part1(seeds: int, jobs: int) -> list:
    work = [(d, k, s) for k in (2, 3, 4, 7) for d in ("one", "one+small", "null") if not (d == "one+small" and k == 2)
            for s in range(seeds)]
    work += [("two alike", 3, s) for s in range(seeds)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        recs = list(ex.map(_one, work, chunksize=2))
    print(f"part 1: {len(recs)} evaluations in {time.perf_counter() - t0:.0f} s ({jobs} processes, {cpu_model()})")
    return recs


def report1(recs: list) -> None:
    df = pd.DataFrame(recs)
    print("\n| design | groups | data sets | only the shifted group has a direction | 0.5 τ group: statuses | "
          "notes |\n|---|---:|---:|---:|---|---|")
    for (design, k), g in df.groupby(["design", "k"], sort=False):
        n = len(g)
        if design == "null":
            any_dir = sum(any(s in DIRECTED for s in st.values()) for st in g["status"])
            print(f"| null | {k} | {n} | – | – | a direction to any group in {any_dir} of {n} |")
            continue
        if design == "two alike":
            two = sum(st["g0"] == st["g1"] == "worse off" and st["g2"] not in DIRECTED for st in g["status"])
            third = sum(st["g2"] == "better off" and st["g0"] not in DIRECTED and st["g1"] not in DIRECTED
                        for st in g["status"])
            print(f"| two of three alike | {k} | {n} | – | – | the two worse off: {two}; the third better off: "
                  f"{third}; anything else: {n - two - third} |")
            continue
        shifted = {"g0"} | ({"g1"} if design == "one+small" else set())
        only = sum(st["g0"] in ("worse off",) and all(st[x] not in DIRECTED for x in st if x not in shifted | {
            "g1" if k == 2 else ""}) for st in g["status"])
        small = Counter(st["g1"] for st in g["status"]) if design == "one+small" else None
        note = ""
        if k == 2:
            note = f"the other group its exact mirror in {int(g['mirror'].sum())} of {n}"
        print(f"| {design} | {k} | {n} | {only} of {n} ({only / n:.0%}) | "
              f"{', '.join(f'{s} {c}' for s, c in small.most_common()) if small else '–'} | {note} |")


def _keyword_scored(penalty: float):
    sys.path.insert(0, str(HERE.parents[0] / "tests"))
    from _tiny_models import lexicon_model

    from bias_suite.models.base import CallablePredictor
    from bias_suite.pipeline import run
    from truth_known import SENTIMENT

    base = lexicon_model(SENTIMENT)

    def predict(texts):
        P = base(texts)
        hit = np.array([any(w in t.lower().split() or w in t.lower() for w in ("muslim",)) for t in texts])
        P[hit] = (1 - penalty) * P[hit] + penalty * np.array([1.0, 0.0, 0.0])
        return P

    return run([str(HERE.parents[0] / "templates" / "sentiment_religion.yaml")], CallablePredictor(predict, list(CLASSES)),
               None, progress=False, cache=False, bootstrap=0).scored


def part2() -> None:
    import bias_suite as bs

    print(f"\npart 2: keyword models on sentiment_religion ({cpu_model()})")
    print("\n| penalty | group | status | headline effect ×τ | finding | true gap ×τ | effect / truth |\n"
          "|---:|---|---|---:|---|---:|---:|")
    scored = {}
    for pen in (0.4, 0.2):
        sc = scored[pen] = _keyword_scored(pen)
        frame = sc.frame
        res = bs.evaluate(sc, seed=0)
        bg = res.by_group()
        p = pd.Series(np.asarray(sc.probs)[:, list(sc.classes).index("negative")], index=frame.index)
        for r in bg.itertuples(index=False):
            if r.status not in DIRECTED:
                continue
            truth = float(p[frame["group"] == r.group].mean() - p[frame["group"] != r.group].mean()) / 0.05
            print(f"| {pen} | {r.group} | {r.status} | {r.effect:+.2f} [{r.effect_low:+.2f}, {r.effect_high:+.2f}] | "
                  f"{r.finding} | {truth:+.2f} | {r.effect / truth:.3f} |")
        quiet = bg[~bg["status"].isin(DIRECTED)]
        print(f"| {pen} | the other {len(quiet)} groups | {', '.join(sorted(set(quiet['status'])))} | | | | |")
    comp = bs.compare(scored[0.4], scored[0.2], seed=0)
    ch = comp.by_group()
    print("\nComparison.by_group(), penalty 0.4 → 0.2:\n")
    print("| group | before | after | effect before → after ×τ | change ×τ [interval] | status |\n"
          "|---|---|---|---|---|---|")
    for r in ch.itertuples(index=False):
        eff = (f"{r.effect_before:+.2f} → {r.effect_after:+.2f}" if np.isfinite(r.effect_before) else "")
        chg = (f"{r.change:+.2f} [{r.change_low:+.2f}, {r.change_high:+.2f}]" if np.isfinite(r.change) else "")
        print(f"| {r.group} | {r.status_before} | {r.status_after} | {eff} | {chg} | {r.status} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--part", choices=("1", "2", "both"), default="both")
    a = ap.parse_args(argv)
    if a.part in ("1", "both"):
        report1(part1(a.seeds, a.jobs))
    if a.part in ("2", "both"):
        part2()
    return 0


if __name__ == "__main__":
    sys.exit(main())
