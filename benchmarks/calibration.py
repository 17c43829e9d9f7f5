"""Calibration of the verdicts (bias_suite.evaluation.evaluate) on data with
planted effects of known size.

Generator: 3 classes (negative / neutral / positive), one attribute with 6
groups of 3 terms, J templates each rendered with all 18 terms. A template
has a gold class (uniform) and logits: the gold class gets a margin drawn
N(1.8, 0.9), every class gets template noise N(0, 0.7); every example adds
its own noise N(0, 0.05) per class. An effect is a shift ``s`` of the
negative logit of every example of one group (``g0``); everything else is
the same for all groups, so every other row has no effect at all.

For each target metric (row of the planted group, class ``negative``):

- FNED: FNR(g0) − FNR(all), the signed difference the verdict decides on
  (tau 0.05; ``s`` < 0 adds false negatives);
- FPR-Ratio: log(FPR(g0) / FPR(rest)) in units of log 1.25;
- PosAEG: the signed AEG of g0 (tau 0.05);
- CFGap: the pair g0|g1, mean over variants of f(g0) − f(g1) (tau 0.05),

and each level L (in units of the metric's tau), ``s`` is found by bisection
so that the row's true value is L·tau, the true value being the package's
own value (its verdict basis where the verdict is decided on a signed
quantity) on a very large data set (``--truth-templates``, default
30,000). A second large data set of the same generator
(``--row-truth-templates``, default 10,000) gives the true value of every
other judged row, which is only compared with 0.5 tau. The bisection's
shifts are kept in ``calibration_cache.json`` beside this file, the other
rows' truths in ``calibration_truths.json`` (not in git: computed on the
first run), both keyed by the generator's parameters, so reruns start at
once.

Then for each (metric, level, J, seed) one data set is drawn and evaluated
at default settings (``evaluate(df, seed=seed)``: intervals, significance
tests and Bernstein rows, every row judged together, as a user gets it).
Recorded: the verdict of the target row; whether the interval the verdict
was decided on (the signed basis where there is one, else the row's
``ci_low``/``ci_high``) covers the true value; on null data, whether ANY row
is ``material``; the number of ``material`` rows whose true effect is below
0.5 tau. Level 0 is one data set per (J, seed) shared by all metrics. Every
other cell draws data sets of its own (:func:`cell_seed`): with one draw
per seed at every level, a seed's template draws would repeat at each
level, and the coverage pooled over a metric's levels would count about
one independent data set per seed instead of one per cell.

Printed per metric x J x level: P(material / small / negligible /
inconclusive / undefined) of the target row, coverage of its true value
(among data sets where it has an interval; the goals pool a metric's levels
per J), and the share of data sets with a ``material`` row whose true effect
is below 0.5 tau ("false mat."), and the share of data sets with a
``material`` row about the planted group (alone or in a pair) on the class
its shift targets ("found": the finding a reader acts on, whichever metric
shows it; at level 0 a false finding); per J the share of null data sets
with any ``material`` row. Then PASS/FAIL against the goals: P(material)
<= 5% at 0 and 0.5 tau; P(material) at 3 tau with 150 templates at least
90% (FNED), 100% (PosAEG, CFGap) and 64% (FPR-Ratio: the share an exact
sign-flip test reaches at p < 0.01, less 5 points; :data:`POWER_GOALS`);
the planted group found in at least 95% at 1.5 and 3 tau with 150
templates; null data sets with any ``material`` row <= 5%; coverage at
least 93% at 150 templates and 90% at 30 (pooled over a metric's levels;
``n/a`` under 40 data sets: over 100 data sets a 95% coverage still has a
binomial sd of 2.2 points); never ``negligible`` at >= 1.5 tau.

Usage:
    python benchmarks/calibration.py [--seeds 20] [--templates 30 150] [--levels 0 0.5 0.8 1.5 3]
        [--metrics FNED FPR-Ratio PosAEG CFGap] [--jobs 1] [--quick] [--truth-templates 30000]
        [--row-truth-templates 10000] [--records FILE] [--multiplicity M] [--dump FILE] [--replay FILE]
        [--resample-terms auto|yes|no]

``--quick`` runs 3 seeds of levels 0 and 3 only. ``--jobs N`` spreads the
data sets over N processes (default 1). ``--records FILE`` appends one JSON
line per data set (per error control, ``--multiplicity``, default
evaluate's) and skips those already there, so a sweep can be resumed or
extended. ``--dump FILE`` also keeps what the error control saw (every row
that could make a claim: raw verdict, p-value, unit, true effect);
``--replay FILE --records FILE --multiplicity M`` then prints the table
another error control would have given on the same data sets, without
evaluating them again (coverage does not depend on it).

Python (the tests run cheap corners this way):

    from calibration import generate, calibrate, run_cell
    df = generate(150, seed=0, planted_group="g0", shift=-1.0)   # scored DataFrame
    shift, truth = calibrate("FNED", 3.0)                         # cached
    rec = run_cell("FNED", 3.0, J=150, seed=0)                    # one evaluated data set
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CLASSES = ("negative", "neutral", "positive")
ATTRIBUTE = "identity"
GROUPS = tuple(f"g{i}" for i in range(6))
TERMS_PER_GROUP = 3
MARGIN_MEAN, MARGIN_SD = 1.8, 0.9
TEMPLATE_SD = 0.7
EXAMPLE_SD = 0.05
PLANTED = "g0"
TARGET_CLASS = "negative"
LEVELS = (0.0, 0.5, 0.8, 1.5, 3.0)
TEMPLATES = (30, 150)
TRUTH_TEMPLATES = 30_000      # bisection of the target rows
ROW_TRUTH_TEMPLATES = 10_000  # every other row (only compared with 0.5 tau)
RATIO_BAND = 1.25
CACHE = Path(__file__).resolve().with_name("calibration_cache.json")         # shifts (kept in git)
TRUTH_CACHE = Path(__file__).resolve().with_name("calibration_truths.json")  # row truths (large, not in git)

#: metric -> (row group, sign of the shift that makes the signed value positive, tau in decision units)
TARGETS = {
    "FNED": (PLANTED, -1.0, 0.05),
    "FPR-Ratio": (PLANTED, 1.0, math.log(RATIO_BAND)),
    "PosAEG": (PLANTED, 1.0, 0.05),
    "CFGap": (f"{PLANTED}|g1", 1.0, 0.05),
}
VERDICTS = ("material", "small", "negligible", "inconclusive")
#: P(material) of the target row at 3 tau with 150 templates: 90% (FNED), 100% (PosAEG, CFGap); FPR-Ratio's
#: is what the data allow: the exact sign-flip test of its templates' differences reaches p < 0.01 in 69% of
#: these data sets (benchmarks/rate_power_bound.py, 140 data sets), less 5 points
POWER_GOALS = {"FNED": 0.90, "PosAEG": 1.0, "CFGap": 1.0, "FPR-Ratio": 0.64}
#: further options of every evaluation (``--resample-terms``); records do not
#: tell them apart, so keep one ``--records`` file per setting
EVALUATE_OPTIONS: dict = {}


# --------------------------------------------------------------------------
# generator
# --------------------------------------------------------------------------
def generate_arrays(J: int, seed: int, planted_group: str | None, shift: float):
    """(frame without probs, probs n x 3) for J templates x 18 terms."""
    rng = np.random.default_rng(seed)
    terms = [(g, f"{g}_t{k}") for g in GROUPS for k in range(TERMS_PER_GROUP)]
    V = len(terms)
    gold = rng.integers(0, len(CLASSES), size=J)
    logits = rng.normal(0.0, TEMPLATE_SD, size=(J, len(CLASSES)))
    logits[np.arange(J), gold] += rng.normal(MARGIN_MEAN, MARGIN_SD, size=J)
    x = np.repeat(logits, V, axis=0) + rng.normal(0.0, EXAMPLE_SD, size=(J * V, len(CLASSES)))
    groups = np.array([g for g, _ in terms] * J, dtype=object)
    if planted_group is not None and shift:
        x[groups == planted_group, 0] += shift
    x -= x.max(axis=1, keepdims=True)
    P = np.exp(x)
    P /= P.sum(axis=1, keepdims=True)
    tid = np.repeat(np.arange(J), V)
    term = np.array([t for _, t in terms] * J, dtype=object)
    frame = pd.DataFrame({
        "id": [f"{j}-{t}" for j, t in zip(tid, term)],
        "template": [f"t{j}" for j in tid],
        "attribute": ATTRIBUTE,
        "group": groups,
        "term": term,
        "text": [f"sentence {j} about {t}" for j, t in zip(tid, term)],
        "label": np.asarray(CLASSES, dtype=object)[np.repeat(gold, V)],
    })
    return frame, P


def generate(J: int, seed: int = 0, planted_group: str | None = PLANTED, shift: float = 0.0) -> pd.DataFrame:
    """Scored examples (docs/formats.md, ``probs`` as dicts): J templates x 18 terms,
    the negative logit of ``planted_group`` shifted by ``shift``."""
    frame, P = generate_arrays(J, seed, planted_group, shift)
    frame["probs"] = [dict(zip(CLASSES, row)) for row in P.tolist()]
    return frame


def _scored(J: int, seed: int, shift: float):
    """The same data as :func:`generate`, columnar (for the large truth data sets)."""
    from bias_suite.families.classification import scored_from_arrays

    frame, P = generate_arrays(J, seed, PLANTED, shift)
    return scored_from_arrays(frame, P, CLASSES)


# --------------------------------------------------------------------------
# true values (the package's own definitions on a very large data set)
# --------------------------------------------------------------------------
def row_key(metric, attribute, cls, group) -> str:
    return "\x1f".join(str(x) for x in (metric, attribute, cls, group))


def decided_on_basis(metric: str) -> bool:
    """Whether a row's verdict is decided on the bootstrap's signed basis
    when it has one (signed and unsigned differences, AUC contrasts; not
    ratios, which are judged on their own interval; docs/verdicts.md)."""
    from bias_suite.exceptions import MetricError
    from bias_suite.stats.verdicts import no_bias_reference

    if metric.startswith("Bernstein-"):
        return False
    try:
        return no_bias_reference(metric)[0] in ("signed", "unsigned", "auc")
    except MetricError:  # a row that is not a registered metric
        return False


def _decision_values(results: pd.DataFrame, basis: pd.DataFrame | None) -> dict:
    """{row key: value of the quantity the verdict is decided on}: the signed
    basis (signed difference, AUC contrast) where the bootstrap gives one,
    else the row's value."""
    bv = {}
    if basis is not None and len(basis):
        for r in basis.to_dict("records"):
            v = r.get("basis_value")
            if v is not None and np.isfinite(v):
                bv[row_key(r["metric"], r["attribute"], r["class"], r["group"])] = float(v)
    out = {}
    for r in results.to_dict("records"):
        if not isinstance(r["group"], str) or r["family"] == "significance":
            continue
        k = row_key(r["metric"], r["attribute"], r["class"], r["group"])
        v = bv.get(k, r["value"]) if decided_on_basis(r["metric"]) else r["value"]
        if v is not None and np.isfinite(v):
            out[k] = float(v)
    return out


def truth_table(shift: float, *, templates: int = TRUTH_TEMPLATES, metrics=None, seed: int = 987_654) -> dict:
    """True values of every per-group / per-pair row (or of ``metrics`` only) for
    a shift of g0's negative logit: the package's values on ``templates``
    templates (same max_tuples as a default run), signed bases from the
    bootstrap's observed basis (its B matters not for the observed value)."""
    from bias_suite.metrics import compute as metric_values
    from bias_suite.stats.bernstein import bernstein_rows
    from bias_suite.stats.bootstrap import bootstrap
    from bias_suite.stats.verdicts import no_bias_reference

    data = _scored(templates, seed, shift)
    res = metric_values(data, metrics=metrics, seed=0)
    need_basis = metrics is None or any(no_bias_reference(m)[0] in ("unsigned", "auc") for m in metrics)
    basis = bootstrap(data, res, metrics=metrics, B=2, seed=0).basis if need_basis else None
    if metrics is None:
        res = pd.concat([res, bernstein_rows(data)], ignore_index=True)
    return _decision_values(res, basis)


_MEMO: dict = {}


def _load_cache(path: Path | None = None) -> dict:
    path = CACHE if path is None else path
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return {}
    memo = _MEMO.get(str(path))
    if memo is None or memo[0] != stamp:
        try:
            memo = _MEMO[str(path)] = (stamp, json.loads(path.read_text()))
        except (OSError, ValueError):
            return {}
    return memo[1]


def _save_cache(cache: dict, path: Path | None = None) -> None:
    path = CACHE if path is None else path
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache, indent=1, sort_keys=True))
    os.replace(tmp, path)


def _params(truth_templates: int) -> str:
    return (f"classes={len(CLASSES)} groups={len(GROUPS)}x{TERMS_PER_GROUP} margin=N({MARGIN_MEAN},{MARGIN_SD}) "
            f"template_sd={TEMPLATE_SD} example_sd={EXAMPLE_SD} planted={PLANTED} truth_J={truth_templates}")


def target_value(metric: str, shift: float, truth_templates: int) -> float:
    group, _, _ = TARGETS[metric]
    t = truth_table(shift, templates=truth_templates, metrics=[metric])
    v = t[row_key(metric, ATTRIBUTE, TARGET_CLASS, group)]
    return math.log(v) if metric == "FPR-Ratio" else v


def calibrate(metric: str, level: float, *, truth_templates: int = TRUTH_TEMPLATES, tol: float = 0.01,
              log=None) -> tuple[float, float]:
    """(shift, true value in decision units: log ratio for FPR-Ratio) such
    that the target row's true value is ``level`` x tau, by bisection on
    the shift (cached in ``calibration_cache.json``)."""
    if level == 0:
        return 0.0, 0.0
    group, sign, tau = TARGETS[metric]
    cache = _load_cache()
    node = cache.setdefault(_params(truth_templates), {}).setdefault("shifts", {})
    key = f"{metric}@{level:g}"
    if key in node:
        return node[key]["shift"], node[key]["truth"]
    target = level * tau
    lo, hi = 0.0, 0.5
    f_hi = target_value(metric, sign * hi, truth_templates)
    while f_hi < target:
        lo, hi = hi, hi * 2
        f_hi = target_value(metric, sign * hi, truth_templates)
    f_lo = 0.0 if lo == 0 else target_value(metric, sign * lo, truth_templates)
    for _ in range(30):  # regula falsi with bisection safeguard
        mid = lo + (target - f_lo) * (hi - lo) / (f_hi - f_lo) if f_hi > f_lo else (lo + hi) / 2
        if not (lo < mid < hi):
            mid = (lo + hi) / 2
        f_mid = target_value(metric, sign * mid, truth_templates)
        if log:
            log(f"  {metric} {level:g} tau: shift {sign * mid:+.4f} -> {f_mid / tau:.4f} tau")
        if abs(f_mid - target) <= tol * tau:
            lo = hi = mid
            f_lo = f_mid
            break
        if f_mid < target:
            lo, f_lo = mid, f_mid
        else:
            hi, f_hi = mid, f_mid
    cache = _load_cache()
    cache.setdefault(_params(truth_templates), {}).setdefault("shifts", {})[key] = {"shift": sign * lo, "truth": f_lo}
    _save_cache(cache)
    return sign * lo, f_lo


def truths(shift: float, *, templates: int = ROW_TRUTH_TEMPLATES) -> dict:
    """Cached :func:`truth_table` of every row for this shift (rounded to 6
    significant digits; cached in ``calibration_truths.json``)."""
    node = _load_cache(TRUTH_CACHE).get(_params(templates), {})
    key = f"{shift:.6f}"
    if key not in node:
        table = {k: float(f"{v:.6g}") for k, v in truth_table(shift, templates=templates).items()}
        cache = _load_cache(TRUTH_CACHE)
        cache.setdefault(_params(templates), {})[key] = table
        _save_cache(cache, TRUTH_CACHE)
        return table
    return node[key]


# --------------------------------------------------------------------------
# one evaluated data set
# --------------------------------------------------------------------------
@contextmanager
def tap_basis(store: list):
    """Keep the verdict basis the pipeline's bootstrap computes (evaluate
    does not return it) without computing anything twice."""
    import bias_suite.stats.bootstrap as bs_mod

    original = bs_mod.bootstrap

    def tapped(*a, **k):
        out = original(*a, **k)
        if not isinstance(k.get("resample_terms"), dict):  # (not the reading beyond the listed terms)
            store.append(out.basis)
        return out

    bs_mod.bootstrap = tapped
    try:
        yield
    finally:
        bs_mod.bootstrap = original


@contextmanager
def tap_claims(store: list):
    """Keep what the verdict stage's error control sees (every row that could
    make a claim: its raw verdict, p-value, unit and hypothesis), so that
    other error controls can be replayed on the same data sets offline."""
    import bias_suite.stats.verdicts as v_mod
    from bias_suite.stats.multiplicity import hypothesis_key, is_hypothesis, unit_of

    original = v_mod.control_claims

    def tapped(recs, decided, **kw):
        store.append([{"metric": r["metric"], "class": r["class"], "group": r.get("group"), "verdict": d["verdict"],
                       "within": bool(d.get("within")), "p": float(d["p"]), "t": d.get("t"), "df": d.get("df"),
                       "test": bool(d.get("test")), "threshold": d.get("threshold"),
                       "key": list(map(str, hypothesis_key(r, d))), "unit": list(map(str, unit_of(r, d)))}
                      for r, d in zip(recs, decided) if is_hypothesis(d)])
        return original(recs, decided, **kw)

    v_mod.control_claims = tapped
    try:
        yield
    finally:
        v_mod.control_claims = original


SIGNED_REASON = re.compile(r"^signed (\S+) \[(\S+), (\S+)\]")


def decision_intervals(res: pd.DataFrame, basis: pd.DataFrame | None) -> dict:
    """{row key: (low, high)} of the interval each verdict was decided on,
    following the rules of docs/verdicts.md: the signed basis where there is
    one (else parsed from the reason's "signed v [lo, hi]"), otherwise
    ci_low / ci_high. (If those rules change, this must follow them.)"""
    b = {}
    if basis is not None and len(basis):
        for r in basis.to_dict("records"):
            lo, hi = r.get("basis_low"), r.get("basis_high")
            if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi):
                b[row_key(r["metric"], r["attribute"], r["class"], r["group"])] = (float(lo), float(hi))
    out = {}
    for r in res.to_dict("records"):
        if not isinstance(r["group"], str):
            continue
        k = row_key(r["metric"], r["attribute"], r["class"], r["group"])
        if k in b and decided_on_basis(r["metric"]):
            out[k] = b[k]
            continue
        m = SIGNED_REASON.match(str(r.get("reason") or ""))
        if m:
            out[k] = (float(m.group(2)), float(m.group(3)))
        elif all(r[c] is not None and np.isfinite(r[c]) for c in ("ci_low", "ci_high")):
            out[k] = (float(r["ci_low"]), float(r["ci_high"]))
    return out


def found(material_rows) -> bool:
    """Whether some ``material`` row (named "metric class group") is about
    the planted group (alone or in a pair) on the class its shift targets:
    the finding a reader acts on, whichever metric shows it."""
    for name in material_rows:
        _, cls, group = name.rsplit(" ", 2)
        if cls == TARGET_CLASS and PLANTED in group.split("|"):
            return True
    return False


def true_effect(metric: str, truth: float, tau: float) -> float:
    from bias_suite.stats.verdicts import no_bias_reference

    kind, _ = no_bias_reference(metric) if not metric.startswith("Bernstein-") else ("signed", 0.0)
    if kind == "ratio":
        return abs(math.log(truth)) / math.log(RATIO_BAND) if truth > 0 else math.inf
    return abs(truth) / tau


def judge(df: pd.DataFrame, seed: int, truth: dict | None, targets: dict, *, multiplicity: str | None = None,
          claims: list | None = None) -> dict:
    """Evaluate one data set at default settings and score it against the truth.
    ``targets``: {metric: true decision value of its target row}; ``truth``:
    {row key: true decision value} of every row (None: not scored);
    ``multiplicity``: the error control (default: evaluate's); ``claims``: a
    list that receives what the error control saw (:func:`tap_claims`),
    each row with its true effect where the truth knows it."""
    from bias_suite.evaluation import evaluate

    store: list = []
    seen: list = []
    kw = dict(EVALUATE_OPTIONS) if multiplicity is None else dict(EVALUATE_OPTIONS, multiplicity=multiplicity)
    with tap_basis(store), tap_claims(seen):
        res = evaluate(df, seed=seed, **kw)
    if claims is not None and seen:
        for r in seen[0]:
            t = None if truth is None or not isinstance(r["group"], str) else \
                truth.get(row_key(r["metric"], ATTRIBUTE, r["class"], r["group"]))
            r["true_effect"] = None if t is None or r["threshold"] is None else \
                true_effect(r["metric"], t, r["threshold"])
        claims.extend(seen[0])
    basis = store[0] if store else None
    ivs = decision_intervals(res, basis)
    judged = res[res["verdict"].isin(VERDICTS)]
    material = judged[judged["verdict"] == "material"]
    false_rows = []
    for r in material.to_dict("records"):
        if truth is None or not isinstance(r["group"], str):
            continue  # a sum takes its worst part's verdict: counted there
        t = truth.get(row_key(r["metric"], r["attribute"], r["class"], r["group"]))
        if t is not None and true_effect(r["metric"], t, r["threshold"]) < 0.5:
            false_rows.append(f"{r['metric']} {r['class']} {r['group']}")
    named = [f"{m} {c} {g}" for m, c, g in zip(material["metric"], material["class"], material["group"])]
    out = {"any_material": bool(named), "material_rows": named, "false_rows": false_rows,
           "false_material": None if truth is None else len(false_rows), "found": found(named), "targets": {}}
    for metric, tv in targets.items():
        group = TARGETS[metric][0]
        k = row_key(metric, ATTRIBUTE, TARGET_CLASS, group)
        row = res[(res["metric"] == metric) & (res["class"] == TARGET_CLASS) & (res["group"] == group)]
        verdict = row["verdict"].iat[0] if len(row) else None
        iv = ivs.get(k)
        t = math.exp(tv) if metric == "FPR-Ratio" else tv
        covered = None if iv is None else bool(iv[0] <= t <= iv[1])
        out["targets"][metric] = {"verdict": verdict, "covered": covered}
    return out


def cell_seed(metric: str | None, level: float, seed: int) -> int:
    """The generator and bootstrap seed of data set ``seed`` of a cell: the
    seed itself for the null data sets (level 0, shared by every metric),
    else one offset per (metric, level), so cells never share data sets."""
    if level == 0 or metric is None:
        return seed
    return seed + 10_000 * (1 + list(TARGETS).index(metric)) + 1_000 * (1 + LEVELS.index(float(level)))


def run_cell(metric: str | None, level: float, J: int, seed: int, *, truth_templates: int = TRUTH_TEMPLATES,
             row_truth_templates: int = ROW_TRUTH_TEMPLATES, metrics=tuple(TARGETS), row_truths: bool = True,
             multiplicity: str | None = None, claims: list | None = None) -> dict:
    """One data set: planted effect ``level`` tau on ``metric``'s target row
    (level 0: no effect; every metric in ``metrics`` is scored), J templates,
    data set ``seed`` of the cell (generator and bootstrap seed
    :func:`cell_seed`). ``row_truths=False`` skips the
    other rows' truths (``false_material`` is then None): the cheap corners
    need only the cached shifts. ``multiplicity``: the error control
    (default: evaluate's); ``claims``: see :func:`judge`."""
    if level == 0:  # the null truth of a signed difference is 0 (log 1 for a ratio) by construction
        shift, targets = 0.0, {m: 0.0 for m in metrics}
    else:
        shift, tv = calibrate(metric, level, truth_templates=truth_templates)
        targets = {metric: tv}
    truth = truths(shift, templates=row_truth_templates) if row_truths else None
    data_seed = cell_seed(metric, level, seed)
    rec = judge(generate(J, seed=data_seed, shift=shift), data_seed, truth, targets, multiplicity=multiplicity,
                claims=claims)
    rec.update(metric=metric, level=level, J=J, seed=seed, multiplicity=multiplicity or default_multiplicity())
    return rec


def default_multiplicity() -> str:
    from bias_suite.stats.verdicts import DEFAULT_MULTIPLICITY
    return DEFAULT_MULTIPLICITY


# --------------------------------------------------------------------------
# the sweep and its table
# --------------------------------------------------------------------------
def _cell(args):
    metric, level, J, seed, truth_templates, row_truth_templates, metrics, multiplicity, dump = args
    claims = [] if dump else None
    rec = run_cell(metric, level, J, seed, truth_templates=truth_templates, row_truth_templates=row_truth_templates,
                   metrics=metrics, multiplicity=multiplicity, claims=claims)
    return rec, claims


def replay(record: dict, rows: list, method: str, *, alpha: float = 0.05, within: str = "bh") -> dict:
    """``record`` as another error control would have made it: the rows the
    control saw (``--dump``) claimed again by ``method``; coverage and the
    verdicts of rows without a p-value are the record's own."""
    from bias_suite.stats.multiplicity import control

    keys: dict = {}
    for r in rows:
        keys.setdefault(tuple(r["key"]), (r["p"], tuple(r["unit"])))
    uniq = list(keys)
    ctl = control(np.array([keys[k][0] for k in uniq]), [keys[k][1] for k in uniq], alpha=alpha, method=method,
                  within=within)
    claimed = dict(zip(uniq, ctl.claimed.tolist()))
    final = {}
    for r in rows:
        v = r["verdict"]
        if v in ("material", "small") and not claimed[tuple(r["key"])]:
            v = "negligible" if v == "small" and r["within"] and not r["test"] else "inconclusive"
        final[(r["metric"], r["class"], r["group"])] = (v, r)
    material = [(k, r) for k, (v, r) in final.items() if v == "material"]
    false_rows = [f"{m} {c} {g}" for (m, c, g), r in material
                  if r.get("true_effect") is not None and r["true_effect"] < 0.5]
    named = [" ".join(map(str, k)) for k, _ in material]
    out = dict(record, multiplicity=method if method != "hierarchical" or within == "bh" else "hierarchical-holm",
               any_material=bool(material), material_rows=named, found=found(named),
               false_rows=false_rows, false_material=None if record.get("false_material") is None else len(false_rows),
               targets={m: dict(t) for m, t in record["targets"].items()}, family=ctl.m, units=ctl.units,
               selected=ctl.selected)
    for m, t in out["targets"].items():
        got = final.get((m, TARGET_CLASS, TARGETS[m][0]))
        if got is not None:
            t["verdict"] = got[0]
    return out


def tables(records: list, metrics, levels, templates) -> tuple[list, list]:
    """(lines of the table, [(goal, measured, met: True / False / None for too few data sets)])."""
    lines, goals = [], []
    head = (f"{'metric':<10} {'J':>4} {'level':>5} {'n':>3}  {'material':>8} {'small':>6} {'neglig.':>7} "
            f"{'inconc.':>7} {'undef.':>6}  {'cover':>5}  {'false mat.':>10}  {'found':>5}")
    lines.append(head)
    lines.append("-" * len(head))
    pct = lambda k, n: f"{100 * k / n:.0f}%" if n else "-"  # noqa: E731
    cov_pool: dict = {}
    for m in metrics:
        for J in templates:
            for L in levels:
                recs = [r for r in records if r["J"] == J and r["level"] == L and (L == 0 or r["metric"] == m)
                        and m in r["targets"]]
                n = len(recs)
                if not n:
                    continue
                v = [r["targets"][m]["verdict"] for r in recs]
                c = [r["targets"][m]["covered"] for r in recs if r["targets"][m]["covered"] is not None]
                cov_pool.setdefault((m, J), []).extend(c)
                fm = sum(1 for r in recs if r["false_material"])
                fd = [r["found"] for r in recs if r.get("found") is not None]
                lines.append(f"{m:<10} {J:>4} {L:>5g} {n:>3}  " + " ".join(
                    f"{pct(v.count(x), n):>{w}}" for x, w in zip(VERDICTS + ("undefined",), (8, 6, 7, 7, 6)))
                    + f"  {pct(sum(c), len(c)):>5}  {pct(fm, n) if L else '':>10}  {pct(sum(fd), len(fd)):>5}")
                k = v.count("material")
                if L in (0, 0.5):
                    goals.append((f"{m} J={J} {L:g} tau: P(material) <= 5%", pct(k, n), k <= 0.05 * n))
                if L == 3 and J == 150:
                    need = POWER_GOALS.get(m, 0.9)
                    goals.append((f"{m} J={J} 3 tau: P(material) >= {need:.0%}", pct(k, n), k >= need * n))
                if L in (1.5, 3) and J == 150 and fd:
                    goals.append((f"{m} J={J} {L:g} tau: planted group found >= 95%", pct(sum(fd), len(fd)),
                                  sum(fd) >= 0.95 * len(fd)))
                if L >= 1.5:
                    ng = v.count("negligible")
                    goals.append((f"{m} J={J} {L:g} tau: never negligible", f"{ng} of {n}", ng == 0))
        lines.append("")
    for J in templates:
        null = {(r["J"], r["seed"]): r for r in records if r["J"] == J and r["level"] == 0}
        if null:
            k = sum(r["any_material"] for r in null.values())
            lines.append(f"J={J}: null data sets with any material row: {k} of {len(null)} ({pct(k, len(null))})")
            goals.append((f"J={J}: null data sets with any material row <= 5%", pct(k, len(null)),
                          k <= 0.05 * len(null)))
        eff = [r for r in records if r["J"] == J and r["level"] > 0]
        if eff:
            k = sum(1 for r in eff if r["false_material"])
            lines.append(f"J={J}: data sets with an effect and a material row whose true effect is < 0.5 tau: "
                         f"{k} of {len(eff)} ({pct(k, len(eff))}); {sum(r['false_material'] for r in eff)} rows")
        for what, recs, field in (("null data sets", list(null.values()), "material_rows"),
                                  ("data sets with an effect, true effect < 0.5 tau", eff, "false_rows")):
            by = pd.Series([x.split(" ")[0] for r in recs for x in r.get(field, [])], dtype=object).value_counts()
            if len(by):
                lines.append(f"  material rows in {what}, by metric: "
                             + ", ".join(f"{m} {n}" for m, n in by.head(8).items()))
    for (m, J), c in cov_pool.items():
        lo = 0.93 if J >= 150 else 0.90
        hi = 1.0  # (an interval that covers more often than its level is on the safe side)
        # (binomial sd of a 95% coverage over n data sets: 2.2 points at n = 100; fewer than 40 cannot tell)
        ok = None if len(c) < 40 else lo <= sum(c) / len(c) <= hi
        goals.append((f"{m} J={J}: coverage (all levels) in {lo:.0%}-{hi:.0%}",
                      f"{pct(sum(c), len(c))} of {len(c)}", ok))
    return lines, goals


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--templates", type=int, nargs="+", default=list(TEMPLATES))
    ap.add_argument("--levels", type=float, nargs="+", default=list(LEVELS))
    ap.add_argument("--metrics", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="3 seeds, levels 0 and 3")
    ap.add_argument("--truth-templates", type=int, default=TRUTH_TEMPLATES, help="for the target rows' bisection")
    ap.add_argument("--row-truth-templates", type=int, default=ROW_TRUTH_TEMPLATES, help="for every other row")
    ap.add_argument("--records", type=Path, help="append one JSON line per data set here (and read earlier ones)")
    ap.add_argument("--multiplicity", default=None, help="the error control (default: evaluate's)")
    ap.add_argument("--dump", type=Path, help="append what the error control saw, one JSON line per data set "
                    "(to replay other error controls offline)")
    ap.add_argument("--replay", type=Path, help="with --records: the table of --multiplicity replayed on the "
                    "rows a --dump of the same sweep saw (no data set is evaluated again)")
    ap.add_argument("--resample-terms", default=None, choices=["auto", "yes", "no"],
                    help="the bootstrap's term resampling (default: evaluate's)")
    ap.add_argument("--within", default="bh", choices=["bh", "holm"], help="hierarchical: the test within a unit")
    args = ap.parse_args(argv)
    args.multiplicity = args.multiplicity or default_multiplicity()
    if args.resample_terms is not None:
        EVALUATE_OPTIONS["resample_terms"] = args.resample_terms
    if args.replay:
        return _replay_main(args)
    if args.quick:
        args.seeds, args.levels = 3, [0.0, 3.0]
    levels = sorted(set(args.levels))
    t0 = time.perf_counter()
    print(f"error control: {args.multiplicity}")
    print(f"calibration: {len(GROUPS)} groups x {TERMS_PER_GROUP} terms, {len(CLASSES)} classes, "
          f"templates {args.templates}, seeds {args.first_seed}..{args.first_seed + args.seeds - 1}, "
          f"truth on {args.truth_templates:,} templates (target rows) and {args.row_truth_templates:,} (other rows)")
    shifts = {}
    for m in args.metrics:  # calibration and truths first, in this process (cached)
        for L in levels:
            shifts[(m, L)] = calibrate(m, L, truth_templates=args.truth_templates, log=print)
            truths(shifts[(m, L)][0], templates=args.row_truth_templates)
            if L:
                tau = TARGETS[m][2]
                shift, tv = shifts[(m, L)]
                print(f"  {m} at {L:g} tau: shift {shift:+.4f}, true value {tv / tau:.3f} tau")
    print(f"  (calibration and truths: {time.perf_counter() - t0:.0f} s)")
    done = {}
    if args.records and args.records.exists():
        for line in args.records.read_text().splitlines():
            r = json.loads(line)
            if r.get("multiplicity", "holm") == args.multiplicity:
                done[(r["metric"], r["level"], r["J"], r["seed"])] = r
    tasks = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for J in args.templates:
            for L in levels:
                for m in ([None] if L == 0 else args.metrics):
                    if (m, L, J, seed) not in done:
                        tasks.append((m, L, J, seed, args.truth_templates, args.row_truth_templates,
                                      tuple(args.metrics), args.multiplicity, bool(args.dump)))
    t1 = time.perf_counter()
    records = list(done.values())
    sink = args.records.open("a") if args.records else None
    dump = args.dump.open("a") if args.dump else None
    if args.jobs > 1:
        import multiprocessing as mp

        pool = mp.get_context("fork").Pool(args.jobs)
        it = pool.imap_unordered(_cell, tasks)
    else:
        pool, it = None, map(_cell, tasks)
    for i, (rec, claims) in enumerate(it, 1):
        records.append(rec)
        if sink:
            sink.write(json.dumps(rec) + "\n")
            sink.flush()
        if dump:
            dump.write(json.dumps({k: rec[k] for k in ("metric", "level", "J", "seed", "multiplicity")}
                                  | {"rows": claims}) + "\n")
            dump.flush()
        if i % 20 == 0 or i == len(tasks):
            print(f"  {i} of {len(tasks)} data sets, {time.perf_counter() - t1:.0f} s", flush=True)
    if pool:
        pool.close()
    wanted = [r for r in records if r["J"] in args.templates and r["level"] in levels
              and args.first_seed <= r["seed"] < args.first_seed + args.seeds]
    _print_table(*tables(wanted, args.metrics, levels, args.templates))
    print(f"{len(tasks)} data sets evaluated in {time.perf_counter() - t1:.0f} s "
          f"({time.perf_counter() - t0:.0f} s in all)")
    return 0


def _print_table(lines: list, goals: list) -> None:
    print("\n" + "\n".join(lines) + "\n")
    for what, got, ok in goals:
        print(f"{'n/a ' if ok is None else 'PASS' if ok else 'FAIL'}  {what}: {got}")
    judged = [ok for *_, ok in goals if ok is not None]
    print(f"\n{sum(judged)} of {len(judged)} goals met")


def _replay_main(args) -> int:
    key = lambda r: (r["metric"], r["level"], r["J"], r["seed"])  # noqa: E731
    dumps = {key(d): d["rows"] for d in map(json.loads, args.replay.read_text().splitlines())}
    records = [replay(r, dumps.pop(key(r)), args.multiplicity, within=args.within)
               for r in map(json.loads, args.records.read_text().splitlines())
               if key(r) in dumps and r["J"] in args.templates and r["level"] in args.levels
               and args.first_seed <= r["seed"] < args.first_seed + args.seeds]
    print(f"replayed {len(records)} data sets with {args.multiplicity}"
          + (f" (within: {args.within})" if args.multiplicity == "hierarchical" else ""))
    _print_table(*tables(records, args.metrics, sorted(set(args.levels)), args.templates))
    return 0


if __name__ == "__main__":
    sys.exit(main())
