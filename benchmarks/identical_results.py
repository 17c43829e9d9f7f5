"""Identical results before and after a change: save a snapshot, then check against it.

A refactoring must not move a number. This script evaluates a fixed set of
data sets whose scores are deterministic and stores everything the
evaluation returns; ``--check`` evaluates them again and compares: the same
rows in the same order, the same columns, numbers within 1e-12 (absolute,
NaN where NaN), every text column equal (verdicts, reasons, sources, term
breakdowns).

The data sets:

- every bundled sentiment suite, scored by a lexicon model (the sentiment
  words of ``benchmarks/truth_known.py``; 'Muslim(s)' and 'blind' penalised,
  'straight' a bonus);
- the bundled NER suites, tagged by a gazetteer tagger that finds the
  male names and misses the female ones (and tags nothing else);
- the calibration generator (``benchmarks/calibration.py``): 30 and 150
  templates, no effect and a shift of 1 on the planted group's negative
  logit;
- ``sentiment_religion`` again under non-default options: terms resampled
  (``resample_terms="yes"``), Holm's correction, and the per-group answer.

Every evaluation uses its defaults unless named (seed 0), so the snapshot
covers the paths a user's run takes: values, intervals, tests, verdicts,
attribution, term breakdowns and the reading beyond the listed terms.

    python benchmarks/identical_results.py --save DIR     # before the change
    python benchmarks/identical_results.py --check DIR    # after it
    python benchmarks/identical_results.py --check DIR --only sentiment_age
"""
from __future__ import annotations

import argparse
import glob
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _machine import cpu_model  # noqa: E402

TOL = 1e-12
CLASSES = ["negative", "neutral", "positive"]


def _lexicon():
    from _tiny_models import lexicon_model
    from truth_known import MODELS, SENTIMENT

    return lexicon_model({**SENTIMENT, **MODELS["lexicon"][0]})


def _scored_suite(path: str):
    from bias_suite.models.base import CallablePredictor
    from bias_suite.pipeline import run

    return run([path], CallablePredictor(_lexicon(), CLASSES), None, progress=False, cache=False,
               bootstrap=0).scored


def _scored_ner(path: str):
    import yaml
    from _tiny_ner import GazetteerTagger

    from bias_suite.pipeline import run
    from bias_suite.suites import load_suite

    groups = yaml.safe_load(open(ROOT / "identity_terms" / "names.yaml"))["groups"]
    female, male = groups["female"]["person"], groups["male"]["person"]
    suite = load_suite(path)
    context = [w for t in suite.templates for p, typ in (t.tags or {}).items() if typ == "PER" for w in p.split()]
    tagger = GazetteerTagger(female + male + context, missed=female)
    return run([path], tagger, None, progress=False, cache=False, bootstrap=0, significance=False).scored


def cases() -> dict:
    """name -> a function returning the evaluation's results (a DataFrame)."""
    import bias_suite as bs

    out = {}
    for path in sorted(glob.glob(str(ROOT / "templates" / "sentiment_*.yaml"))):
        name = Path(path).stem
        out[name] = (lambda p=path: bs.evaluate(_scored_suite(p)))
    for path in sorted(glob.glob(str(ROOT / "templates" / "ner_*.yaml"))):
        name = Path(path).stem
        out[name] = (lambda p=path: bs.evaluate(_scored_ner(p)))
    from calibration import generate

    for J in (30, 150):
        for shift in (0.0, 1.0):
            out[f"calibration_J{J}_shift{shift:g}"] = (
                lambda J=J, shift=shift: bs.evaluate(generate(J, seed=11, shift=shift)))
    religion = str(ROOT / "templates" / "sentiment_religion.yaml")
    out["religion_terms_resampled"] = lambda: bs.evaluate(_scored_suite(religion), resample_terms="yes")
    out["religion_holm"] = lambda: bs.evaluate(_scored_suite(religion), multiplicity="holm")
    out["religion_by_group"] = lambda: bs.evaluate(_scored_suite(religion)).by_group()
    return out


def _store(df: pd.DataFrame, path: Path) -> None:
    # object columns may mix types (None, str, float): store each cell as JSON
    # so that the comparison sees exactly what the evaluation returned
    records = {"columns": list(map(str, df.columns)), "dtypes": [str(t) for t in df.dtypes],
               "rows": json.loads(df.to_json(orient="values", double_precision=15, default_handler=str))}
    num = {c: df[c].to_numpy(dtype=float).tolist() for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
           and not pd.api.types.is_bool_dtype(df[c])}
    records["numeric"] = {c: [None if np.isnan(x) else x.hex() for x in v] for c, v in num.items()}
    path.write_text(json.dumps(records))


def _compare(df: pd.DataFrame, path: Path) -> list[str]:
    saved = json.loads(path.read_text())
    problems = []
    cols = list(map(str, df.columns))
    if cols != saved["columns"]:
        return [f"columns differ: {sorted(set(cols) ^ set(saved['columns']))} (or their order)"]
    if len(df) != len(saved["rows"]):
        return [f"{len(df)} rows, saved {len(saved['rows'])}"]
    now = json.loads(df.to_json(orient="values", double_precision=15, default_handler=str))
    for c, hexes in saved["numeric"].items():
        was = np.array([np.nan if h is None else float.fromhex(h) for h in hexes])
        if c not in df or not pd.api.types.is_numeric_dtype(df[c]):
            problems.append(f"{c}: no longer numeric")
            continue
        cur = df[c].to_numpy(dtype=float)
        nan_diff = np.isnan(was) != np.isnan(cur)
        both = ~np.isnan(was) & ~np.isnan(cur)
        with np.errstate(invalid="ignore"):
            far = both & ~(np.abs(was - cur) <= TOL) & ~(was == cur)
        bad = np.flatnonzero(nan_diff | far)
        if len(bad):
            i = bad[0]
            problems.append(f"{c}: {len(bad)} rows differ (row {i}: {was[i]!r} -> {cur[i]!r})")
    numeric = set(saved["numeric"])
    for j, c in enumerate(cols):
        if c in numeric:
            continue
        diff = [i for i, (a, b) in enumerate(zip(saved["rows"], now)) if a[j] != b[j]]
        if diff:
            i = diff[0]
            problems.append(f"{c}: {len(diff)} rows differ (row {i}: {saved['rows'][i][j]!r} -> {now[i][j]!r})")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", type=Path, metavar="DIR")
    mode.add_argument("--check", type=Path, metavar="DIR")
    ap.add_argument("--only", nargs="*", help="only these cases (names as printed), in this order")
    args = ap.parse_args(argv)
    print(f"CPU: {cpu_model()}")
    todo = cases()
    if args.only:
        unknown = set(args.only) - set(todo)
        if unknown:
            ap.error(f"unknown case(s) {sorted(unknown)}; known: {sorted(todo)}")
        todo = {k: todo[k] for k in dict.fromkeys(args.only)}  # in the order given
    folder = args.save or args.check
    folder.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, fn in todo.items():
        t0 = time.perf_counter()
        df = pd.DataFrame(fn()).reset_index(drop=True)
        wall = time.perf_counter() - t0
        path = folder / f"{name}.json"
        if args.save:
            _store(df, path)
            print(f"{name:32s} saved {len(df):6d} rows  ({wall:.0f} s)")
            continue
        if not path.exists():
            print(f"{name:32s} NO SNAPSHOT ({path})")
            failed += 1
            continue
        problems = _compare(df, path)
        failed += bool(problems)
        print(f"{name:32s} {'IDENTICAL' if not problems else 'DIFFERS'}  {len(df):6d} rows  ({wall:.0f} s)")
        for p in problems:
            print(f"    {p}")
    if args.check:
        print("PASS" if not failed else f"FAIL: {failed} case(s) differ")
    return int(bool(failed))


if __name__ == "__main__":
    sys.exit(main())
