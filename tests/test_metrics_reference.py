"""Randomised cross-checks: engine (bias_suite.metrics.compute) vs the
independent reference (tests/reference_metrics.py), plus hypothesis property
tests.  Tests whose name does not contain "engine" exercise only the reference and
run without the engine:  pytest tests/test_metrics_reference.py -k "not engine"
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_metrics import reference_evaluate


def named_metrics() -> dict:
    """{name: record} of the registered metrics the reference computes: every
    named metric measured over all of an example (the identity-span metrics
    are taggers' own; the reference is a classifier's). Read from the
    registry when called, so that a metric added to it is checked too (the
    reference must then compute it, or the engine's rows of it be
    not-applicable ones: :func:`compare`)."""
    from bias_suite.metrics import REGISTRY

    return {m.name: m for m in REGISTRY.values() if getattr(m.phi, "at", "all") == "all"}


def _named(**where) -> set:
    """The names of :func:`named_metrics` whose records have these values."""
    return {n for n, m in named_metrics().items() if all(getattr(m, k) == v for k, v in where.items())}


# metrics whose n we are confident about (see reading 20 in reference_metrics.py): the counterfactual ones,
# counted in tuples or (per template) templates
def _n_checked() -> set:
    return _named(view="counterfactual")


# two-group metrics: signed (first − second) and ratios (first ÷ second)
def _signed_pair() -> set:
    return _named(two_groups=True, scale="signed")


def _ratio_pair() -> set:
    return _named(two_groups=True, scale="ratio")


def _isnull(v) -> bool:
    if v is None:
        return True
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def engine_evaluate(df, **kw):
    from bias_suite.metrics import compute as evaluate

    return evaluate(df, **{"weighting": "pooled", **kw})  # the published, pooled definitions


# --------------------------------------------------------------------------
# random scored tables
# --------------------------------------------------------------------------
CLASS_SETS = [["neg", "pos"], ["pos", "neg"], ["a", "b", "c"], ["neutral", "negative", "positive"]]


def random_scored(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    classes = CLASS_SETS[int(rng.integers(len(CLASS_SETS)))]
    n_attr = int(rng.integers(1, 3))
    with_pred = bool(rng.integers(2))
    rows = []
    for a in range(n_attr):
        attr = ["gender", "religion"][a]
        n_groups = int(rng.integers(2, 5))
        groups = [f"{attr[:3]}{g}" for g in range(n_groups)]
        n_templates = int(rng.integers(3, 7))
        for j in range(n_templates):
            tid = f"t{j}"  # template ids shared between attributes on purpose
            tlabel = classes[int(rng.integers(len(classes)))]
            present = [g for g in groups if rng.random() > 0.2]
            for g in present:
                for term in range(int(rng.integers(1, 5))):
                    r = rng.random()
                    if r < 0.1:
                        label = None
                    elif r < 0.25:
                        label = classes[int(rng.integers(len(classes)))]
                    else:
                        label = tlabel
                    if rng.random() < 0.25:  # coarse probabilities -> ties
                        w = rng.integers(0, 3, size=len(classes)).astype(float) + 1.0
                        probs = w / w.sum()
                    else:
                        probs = rng.dirichlet(np.ones(len(classes)))
                    pred = None
                    if with_pred and rng.random() < 0.3:
                        pred = classes[int(rng.integers(len(classes)))]
                    rows.append(
                        {
                            "template": tid,
                            "attribute": attr,
                            "group": g,
                            "term": f"{g}-term{term}",
                            "text": f"{tid} {g} {term}",
                            "label": label,
                            "probs": {c: float(p) for c, p in zip(classes, probs)},
                            "pred": pred,
                        }
                    )
        # make sure every group of the attribute appears at least once
        for g in groups:
            if not any(r["attribute"] == attr and r["group"] == g for r in rows):
                rows.append(
                    {
                        "template": "t0", "attribute": attr, "group": g, "term": f"{g}-x", "text": "x",
                        "label": classes[0], "probs": {c: 1.0 / len(classes) for c in classes}, "pred": None,
                    }
                )
    order = rng.permutation(len(rows))
    rows = [rows[i] for i in order]
    for i, r in enumerate(rows):
        r["id"] = f"ex{i}"
    df = pd.DataFrame(rows)
    if not with_pred:
        df = df.drop(columns=["pred"])
    return df[[c for c in ["id", "template", "attribute", "group", "term", "text", "label", "probs", "pred"] if c in df]]


# --------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------
def _key(row):
    g = None if _isnull(row["group"]) else row["group"]
    return (row["metric"], row["attribute"], row["class"], g)


def _index(res):
    idx = {}
    dups = []
    for row in res.to_dict("records"):
        k = _key(row)
        if k in idx:
            dups.append(k)
        idx[k] = row
    return idx, dups


def compare(ref: pd.DataFrame, eng: pd.DataFrame, *, check_n=True):
    problems = []
    checked_n = _n_checked()
    eidx, dups = _index(eng[eng["metric"].isin(named_metrics())])
    if dups:
        problems.append(f"engine has duplicate rows: {dups[:5]}")
    ridx, _ = _index(ref)
    for k, r in ridx.items():
        e = eidx.get(k)
        if e is None:
            problems.append(f"missing in engine: {k}")
            continue
        if (e["family"], e["view"]) != (r["family"], r["view"]):
            problems.append(f"{k}: family/view engine {(e['family'], e['view'])} != reference {(r['family'], r['view'])}")
        rv, ev = r["value"], e["value"]
        if _isnull(rv) != _isnull(ev):
            problems.append(f"{k}: null-ness differs: reference {rv!r}, engine {ev!r} (note {e.get('note')!r})")
        elif not _isnull(rv):
            if ev != pytest.approx(rv, rel=1e-9, abs=1e-12):
                problems.append(f"{k}: value engine {ev!r} != reference {rv!r}")
            if check_n and k[0] in checked_n:
                if _isnull(e["n"]) or int(e["n"]) != int(r["n"]):
                    problems.append(f"{k}: n engine {e['n']!r} != reference {r['n']!r}")
        else:
            if not (isinstance(e.get("note"), str) and e["note"].strip()):
                problems.append(f"{k}: engine null value without note")
    # engine rows of named metrics that the reference does not have must be
    # not-applicable rows (null, with a note)
    for k, e in eidx.items():
        if k not in ridx and not (_isnull(e["value"]) and isinstance(e.get("note"), str) and e["note"].strip()):
            problems.append(f"extra non-null engine row: {k} value={e['value']!r}")
    return problems


SEEDS = list(range(30))


def test_reference_random_tables_run():
    """The reference runs on every random table and emits the expected metrics."""
    for seed in SEEDS:
        df = random_scored(seed)
        ref = reference_evaluate(df, max_tuples=5, seed=seed)
        assert set(ref["metric"]) >= _named(two_groups=False)
        assert not ref.duplicated(["metric", "attribute", "class", "group"]).any()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("max_tuples", [5, 10_000])
def test_engine_matches_reference(seed, max_tuples):
    df = random_scored(seed)
    ref = reference_evaluate(df, max_tuples=max_tuples, seed=seed)
    eng = engine_evaluate(df, max_tuples=max_tuples, seed=seed)
    problems = compare(ref, eng)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:60])


# --------------------------------------------------------------------------
# hypothesis property tests
# --------------------------------------------------------------------------
PROB_WEIGHTS = st.integers(min_value=1, max_value=6)


@st.composite
def examples_block(draw, classes, n_templates):
    """List of (template, probs, label, pred) for ONE group."""
    n = draw(st.integers(min_value=1, max_value=7))
    out = []
    for _ in range(n):
        t = f"t{draw(st.integers(0, n_templates - 1))}"
        w = [draw(PROB_WEIGHTS) for _ in classes]
        probs = {c: wi / sum(w) for c, wi in zip(classes, w)}
        label = draw(st.one_of(st.none(), st.sampled_from(classes)))
        pred = draw(st.one_of(st.none(), st.none(), st.sampled_from(classes)))
        out.append((t, probs, label, pred))
    return out


@st.composite
def classes_strategy(draw):
    return draw(st.sampled_from([["neg", "pos"], ["pos", "neg"], ["a", "b", "c"]]))


def _df_from(rows):
    recs = []
    for i, (attr, t, g, probs, label, pred) in enumerate(rows):
        recs.append(
            {"id": f"ex{i}", "template": t, "attribute": attr, "group": g, "term": f"{g}{i}",
             "text": f"{t} {g}", "label": label, "probs": dict(probs), "pred": pred}
        )
    return pd.DataFrame(recs)


@st.composite
def identical_groups_table(draw):
    classes = draw(classes_strategy())
    k = draw(st.integers(2, 4))
    n_templates = draw(st.integers(1, 3))
    block = draw(examples_block(classes, n_templates))
    groups = [f"g{i}" for i in range(k)]
    rows = []
    for g in groups:  # the same block for every group
        for t, probs, label, pred in block:
            rows.append(("attr", t, g, probs, label, pred))
    perm = draw(st.permutations(range(len(rows))))
    return _df_from([rows[i] for i in perm])


@st.composite
def general_table(draw):
    classes = draw(classes_strategy())
    k = draw(st.integers(2, 4))
    n_templates = draw(st.integers(1, 4))
    rows = []
    for gi in range(k):
        for t, probs, label, pred in draw(examples_block(classes, n_templates)):
            rows.append(("attr", t, f"g{gi}", probs, label, pred))
    perm = draw(st.permutations(range(len(rows))))
    return _df_from([rows[i] for i in perm])


ZERO_WHEN_IDENTICAL = [
    "FPED", "FNED", "FPED*", "FNED*", "AvgGF", "AvgGF-TC", "PosAEG", "NegAEG", "DisparityScore",
    "DisparityScore*", "TPR-Gap", "TNR-Gap", "ParityGap", "AccuracyDiff", "TPR-Diff", "F1-Diff",
    "Recall-Diff", "AvgIF", "AvgIF-TC", "AvgScoreDiff",
]
ONE_WHEN_IDENTICAL = ["FPR-Ratio", "FNR-Ratio", "F1-Ratio"]


def _prop_identical(res):
    problems = []
    for row in res[res["metric"].isin(ZERO_WHEN_IDENTICAL + ONE_WHEN_IDENTICAL)].to_dict("records"):
        if _isnull(row["value"]):
            continue
        want = 1.0 if row["metric"] in ONE_WHEN_IDENTICAL else 0.0
        if row["value"] != pytest.approx(want, abs=1e-9):
            problems.append(f"{_key(row)} = {row['value']!r}, expected {want}")
    # AUC metrics: with identical groups BPSN = BNSP = SubgroupAUC for each group
    idx, _ = _index(res)
    for (m, a, c, g), row in idx.items():
        if m in ("BPSN", "BNSP"):
            sub = idx.get(("SubgroupAUC", a, c, g))
            if sub is None or _isnull(sub["value"]) or _isnull(row["value"]):
                continue
            if row["value"] != pytest.approx(sub["value"], abs=1e-9):
                problems.append(f"{m} {c} {g} = {row['value']} != SubgroupAUC {sub['value']}")
    return problems


HYP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@HYP
@given(identical_groups_table())
def test_reference_prop_identical_groups(df):
    assert not _prop_identical(reference_evaluate(df))


@HYP
@given(identical_groups_table())
def test_engine_prop_identical_groups(df):
    problems = _prop_identical(engine_evaluate(df))
    assert not problems, "\n".join(problems)


def _accumulated(res):
    res = res[res["metric"].isin(named_metrics()) & res["group"].map(_isnull)]
    return {(r["metric"], r["attribute"], r["class"]): r["value"] for r in res.to_dict("records")}


def _same_values(a: dict, b: dict):
    problems = []
    for k in a:
        if k not in b:
            problems.append(f"{k} missing after transformation")
            continue
        x, y = a[k], b[k]
        if _isnull(x) != _isnull(y) or (not _isnull(x) and y != pytest.approx(x, rel=1e-9, abs=1e-12)):
            problems.append(f"{k}: {x!r} vs {y!r}")
    return problems


def _relabel(df, names):
    mapping = dict(zip(sorted(df["group"].unique()), names))
    out = df.copy()
    out["group"] = out["group"].map(mapping)
    return out


RELABEL_NAMES = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ_ ", min_size=1, max_size=6), min_size=4, max_size=4, unique=True
)


@HYP
@given(general_table(), RELABEL_NAMES, st.sampled_from([2, 100]))
def test_reference_prop_relabel_groups(df, names, max_tuples):
    a = _accumulated(reference_evaluate(df, max_tuples=max_tuples))
    b = _accumulated(reference_evaluate(_relabel(df, names), max_tuples=max_tuples))
    assert not _same_values(a, b)


@HYP
@given(general_table(), RELABEL_NAMES, st.sampled_from([2, 100]))
def test_engine_prop_relabel_groups(df, names, max_tuples):
    a = _accumulated(engine_evaluate(df, max_tuples=max_tuples))
    b = _accumulated(engine_evaluate(_relabel(df, names), max_tuples=max_tuples))
    problems = _same_values(a, b)
    assert not problems, "\n".join(problems)


def _group_order(df):
    out = {}
    for a, g in zip(df["attribute"], df["group"]):
        out.setdefault(a, [])
        if g not in out[a]:
            out[a].append(g)
    return out


def _canonical(res, order):
    """Map every row to a key independent of group order.

    Pairs become frozensets; signed two-group metrics are expressed as
    (first group in sorted-name order) minus (second), ratios likewise.
    """
    out = {}
    signed, ratio = _signed_pair(), _ratio_pair()
    for r in res[res["metric"].isin(named_metrics())].to_dict("records"):
        g, v = r["group"], r["value"]
        reverse = False
        if r["metric"] in signed | ratio:
            groups = order[r["attribute"]]
            reverse = len(groups) == 2 and sorted(groups) != groups
        if not _isnull(g) and "|" in g:
            g = frozenset(g.split("|"))
        elif _isnull(g):
            g = None
        if reverse and not _isnull(v):
            v = -v if r["metric"] in signed else (1 / v if v != 0 else float("inf"))
        out[(r["metric"], r["attribute"], r["class"], g)] = v
    return out


def _shuffle_problems(evaluate_fn, df, perm):
    shuffled = df.iloc[list(perm)].reset_index(drop=True)
    a = _canonical(evaluate_fn(df, max_tuples=10**6), _group_order(df))
    b = _canonical(evaluate_fn(shuffled, max_tuples=10**6), _group_order(shuffled))
    return _same_values(a, b) + [f"{k} only after shuffle" for k in b if k not in a]


@HYP
@given(general_table(), st.data())
def test_reference_prop_shuffle_rows(df, data):
    perm = data.draw(st.permutations(range(len(df))))
    assert not _shuffle_problems(reference_evaluate, df, perm)


@HYP
@given(general_table(), st.data())
def test_engine_prop_shuffle_rows(df, data):
    perm = data.draw(st.permutations(range(len(df))))
    problems = _shuffle_problems(engine_evaluate, df, perm)
    assert not problems, "\n".join(problems)
