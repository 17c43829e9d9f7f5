"""Cluster bootstrap over templates (bias_suite.stats.bootstrap).

The central check: the vectorized fast path gives the same replicate values
as the generic path (resample the templates, then the engine's own metric
code) for every named classification metric (the published ones: the
identity-span metrics are the taggers'), with and without ties and with
sampled counterfactual tuples.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bias_suite.exceptions import MetricError
from bias_suite.evaluation import evaluate as evaluate_full
from bias_suite.metrics import MetricSpec, compute as evaluate
from bias_suite.metrics.catalog import NAMED_METRICS, OWN_METRICS, PUBLISHED_METRICS
from bias_suite.metrics.engine import metric_input_kind
from bias_suite.metrics.scores import AucScore, rate_score
from bias_suite.families import scored_from_arrays
from bias_suite.stats import bootstrap as bsm
from bias_suite.stats.bootstrap import (
    bootstrap, bootstrap_intervals, bootstrap_replicates, template_weights,
)
from bias_suite.suites.views import counterfactual_view

CLASSES = ("neg", "neu", "pos")


def small_table(n_templates=10, groups=("a", "b", "c"), terms=2, seed=1, round_to=None, unlabelled=0.1,
                incomplete=1, two=True, shift=0.3):
    """A scored table: attribute "attr" (3 groups, one incomplete template)
    and attribute "two" (2 groups); unlabelled rows; optional ties."""
    rng = np.random.default_rng(seed)
    rows, P = [], []

    def add(attr, grps, ntpl, tag):
        for j in range(ntpl):
            gold = CLASSES[rng.integers(3)]
            for gi, g in enumerate(grps):
                if j < incomplete and gi == len(grps) - 1:
                    continue
                for t in range(terms + (gi % 2)):
                    lab = None if rng.random() < unlabelled else (gold if rng.random() < 0.8 else CLASSES[rng.integers(3)])
                    rows.append(dict(id=f"{tag}{len(rows)}", template=f"{tag}t{j}", attribute=attr, group=g,
                                     term=f"{g}{t}", text="x", label=lab))
                    logit = rng.normal(size=3) + 0.8 * (np.array(CLASSES) == gold) + shift * gi
                    p = np.exp(logit)
                    p /= p.sum()
                    if round_to:
                        p = np.round(p, round_to)
                        p[-1] = 1 - p[:-1].sum()
                    P.append(p)

    add("attr", list(groups), n_templates, "A")
    if two:
        add("two", ["x", "y"], max(3, n_templates // 2), "B")
    return scored_from_arrays(pd.DataFrame(rows), np.array(P), list(CLASSES))


def classification_metrics(data) -> list:
    """The named metrics a classifier's data gets (the others have no rows)."""
    return [m for m in NAMED_METRICS if metric_input_kind(data, m)[0] is not None]


def _as_dict(keys, values):
    return {tuple(k): v for k, v in zip(keys.itertuples(index=False), values)}


def _same(a, b):
    na, nb = np.isnan(a), np.isnan(b)
    return np.array_equal(na, nb) and np.allclose(a[~na], b[~nb], rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------- equivalence
@pytest.mark.parametrize("kw", [dict(), dict(round_to=1), dict(terms=3, seed=5, incomplete=0)],
                         ids=["continuous", "ties", "more-terms"])
def test_fast_path_equals_generic_path_on_every_named_metric(kw):
    data = small_table(**kw)
    kf, vf = bootstrap_replicates(data, B=25, seed=3, max_tuples=5, method="fast")
    kg, vg = bootstrap_replicates(data, B=25, seed=3, max_tuples=5, method="generic")
    fast, generic = _as_dict(kf, vf), _as_dict(kg, vg)
    # the generic path also lists rows that are null in every resample (e.g. two-group metrics on 3 groups)
    assert set(fast) <= set(generic)
    assert all(np.isnan(generic[k]).all() for k in set(generic) - set(fast))
    assert {k[1] for k in fast} == {m.name for m in classification_metrics(data)} == {m.name for m in PUBLISHED_METRICS + OWN_METRICS}
    bad = [k for k in fast if not _same(fast[k], generic[k])]
    assert not bad, bad[:5]


def test_fast_path_equals_generic_path_on_user_metrics():
    custom = [
        MetricSpec("AEG-PCM", "PCM", "group", "prob_pos", "AEG", "pairs"),
        MetricSpec("AEG-all", "BCM", "group", "prob", "AEG", "groups", "all"),
        MetricSpec("W1-rest", "BCM", "group", "prob_neg", "W1", "1", "rest"),
        MetricSpec("W1-PCM", "PCM", "group", "prob", "W1", "pairs"),
        MetricSpec("AUC-rr", "VBCM", "group", AucScore("rr", "rest", "rest"), "value"),
        MetricSpec("AUC-gap", "PCM", "group", "subgroup_auc", "abs", "pairs"),
        MetricSpec("FNR-Range", "MCM", "group", "FNR", "range"),
        MetricSpec("Prec-sq", "BCM", "group", "precision", lambda x, y: (x - y) ** 2, "groups", "rest"),
        MetricSpec("CF-BCM", "BCM", "counterfactual", "prob", "abs", "groups", background="rest"),
        MetricSpec("CF-VBCM", "VBCM", "counterfactual", "prob_neg", "diff", background="all"),
        MetricSpec("CF-rate", "PCM", "counterfactual", "TPR", "abs", "pairs"),
        MetricSpec("ScoreDiff-TC", "PCM", "counterfactual", "mean_prob_pos", "diff", "pairs", per_template=True),
    ]
    for kw in (dict(), dict(round_to=1)):
        data = small_table(**kw)
        kf, vf = bootstrap_replicates(data, metrics=custom, B=15, seed=2, max_tuples=5, method="fast")
        kg, vg = bootstrap_replicates(data, metrics=custom, B=15, seed=2, max_tuples=5, method="generic")
        fast, generic = _as_dict(kf, vf), _as_dict(kg, vg)
        assert all(np.isnan(generic[k]).all() for k in set(generic) - set(fast))
        assert not [k for k in fast if not _same(fast[k], generic[k])]


def test_all_ones_weights_reproduce_evaluate():
    """The fast path on the observed data (every template once) gives
    evaluate's values."""
    data = small_table(round_to=2)
    res = evaluate(data, max_tuples=5, seed=0)
    cfs = counterfactual_view(data.frame, max_tuples=5, seed=0)
    for a in ("attr", "two"):
        prep = bsm.prepare_attribute(data, cfs[a], a, None)
        W = np.ones((2, prep.J), dtype=np.int64)
        vals, _ = bsm.fast_attribute(prep, classification_metrics(data), W)
        sub = res[(res["attribute"] == a) & res["value"].notna()]
        for r in sub.itertuples(index=False):
            g = r.group if isinstance(r.group, str) else None
            got = vals[(r.metric, r[4], g)]
            assert np.allclose(got, r.value, rtol=1e-12, atol=1e-12), (r.metric, r[4], g, got, r.value)


def test_generic_path_is_resample_then_evaluate():
    """A resample of the generic path = evaluate on the table with the drawn
    templates copied (every tuple kept: max_tuples=None)."""
    data = small_table(n_templates=6, terms=1, two=False)
    w = np.array([2, 0, 1, 3, 0, 0], dtype=np.int64)
    cfs = counterfactual_view(data.frame, max_tuples=None)
    prep = bsm.prepare_attribute(data, cfs["attr"], "attr", None)
    adb = bsm.resampled_attribute(prep, w)
    from bias_suite.metrics.engine import metric_rows
    rows = [r for spec in classification_metrics(data) for r in metric_rows(spec, adb)]
    fr = data.frame.copy()
    fr["probs"] = list(data.probs)
    tpl_index = {t: i for i, t in enumerate(pd.unique(fr["template"]))}
    copies = []
    for t, grp in fr.groupby("template", sort=False):
        for c in range(w[tpl_index[t]]):
            g = grp.copy()
            g["template"] = f"{t}#{c}"
            g["id"] = g["id"] + f"#{c}"
            copies.append(g)
    big = pd.concat(copies, ignore_index=True)
    scored = scored_from_arrays(big.drop(columns="probs"), np.vstack(big["probs"]), list(CLASSES))
    ref = evaluate(scored, max_tuples=None, group_order_override={"attr": ["a", "b", "c"]})
    for r in rows:
        m = ref[(ref["metric"] == r["metric"]) & (ref["class"] == r["class"])]
        m = m[m["group"].isna()] if r["group"] is None else m[m["group"] == r["group"]]
        v = m["value"].iloc[0]
        assert (r["value"] is None and pd.isna(v)) or np.isclose(r["value"], v, rtol=1e-9, atol=1e-12), r


# ------------------------------------------------------------ behaviour
def test_deterministic_under_a_seed_and_seed_matters():
    data = small_table()
    res = evaluate(data)
    a = bootstrap_intervals(data, res, B=200, seed=7)
    b = bootstrap_intervals(data, res, B=200, seed=7)
    c = bootstrap_intervals(data, res, B=200, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["ci_low"].fillna(-9), c["ci_low"].fillna(-9))
    # same rows, same order, same columns; only intervals (and notes) change
    assert list(a.columns) == list(res.columns)
    pd.testing.assert_frame_equal(a[["metric", "attribute", "class", "group", "value", "n"]],
                                  res[["metric", "attribute", "class", "group", "value", "n"]])


def test_weights_are_multinomial_template_counts():
    W = template_weights(7, 500, np.random.default_rng(0))
    assert W.shape == (500, 7) and (W.sum(axis=1) == 7).all() and W.min() >= 0
    assert abs(W.mean() - 1) < 0.05


def test_intervals_contain_the_observed_value_in_typical_cases():
    data = small_table(n_templates=40, terms=3, shift=0.0, seed=11)
    res = evaluate(data)
    out = bootstrap_intervals(data, res, B=400, seed=0)
    signed = out[out["metric"].isin(["AccuracyDiff", "TPR-Diff", "PosAEG", "NegAEG", "SubgroupAUC", "BPSN", "BNSP",
                                     "FNR-Ratio", "FPR-Ratio"])]
    signed = signed[signed["ci_low"].notna()]
    assert len(signed) > 30
    inside = (signed["ci_low"] <= signed["value"] + 1e-12) & (signed["value"] <= signed["ci_high"] + 1e-12)
    assert inside.mean() > 0.9
    has = out["ci_low"].notna()
    assert (out.loc[has, "ci_low"] <= out.loc[has, "ci_high"]).all()


def test_null_values_and_too_few_templates_get_no_interval():
    data = small_table()
    res = evaluate(data)
    out = bootstrap_intervals(data, res, B=50)
    null = out[out["value"].isna()]
    assert len(null) and null["ci_low"].isna().all() and null["ci_high"].isna().all()
    one = small_table(n_templates=1, incomplete=0, two=False)
    o1 = bootstrap_intervals(one, evaluate(one), B=20)
    assert o1["ci_low"].isna().all()
    assert o1.loc[o1["value"].notna(), "note"].str.contains("at least 2 templates").all()


def test_undefined_resamples_are_noted():
    # few gold positives per group: some resamples leave a group without positives
    data = small_table(n_templates=6, terms=1, unlabelled=0.5, seed=4, two=False)
    res = evaluate(data, metrics=["FNED", "TPR-Gap"])
    out = bootstrap_intervals(data, res, B=200)
    notes = out["note"].dropna()
    assert notes.str.contains("template resamples").any()


def test_user_rate_function_uses_the_generic_path():
    def balanced_error(s):
        with np.errstate(divide="ignore", invalid="ignore"):
            v = 0.5 * (s["fn"] / (s["tp"] + s["fn"]) + s["fp"] / (s["fp"] + s["tn"]))
        return v, ~np.isfinite(v), "undefined"

    spec = MetricSpec("BER-Gap", "PCM", "group", rate_score("BER", balanced_error), "abs", "pairs")
    data = small_table(n_templates=6)
    res = evaluate(data, metrics=[spec])
    with pytest.raises(MetricError, match="generic"):
        bootstrap_intervals(data, res, metrics=[spec], B=10, method="fast")
    out = bootstrap_intervals(data, res, metrics=[spec], B=10)
    assert out["ci_low"].notna().sum() > 0


def test_evaluate_with_bootstrap_adds_intervals_and_verdicts():
    data = small_table()
    res = evaluate_full(data, metrics=["FNED", "CFGap", "BPSN"], bootstrap=100)
    assert list(res.columns)[-18:] == ["note", "verdict", "threshold", "baseline", "effect", "reason", "source",
                                       "consistency", "p", "q", "signed", "signed_low", "signed_high", "terms_agree",
                                       "term_effects", "beyond", "beyond_low", "beyond_high"]
    assert res["ci_low"].notna().any() and res["verdict"].notna().any()
    plain = evaluate(data, metrics=["FNED", "CFGap", "BPSN"])
    assert "verdict" not in plain.columns and plain["ci_low"].isna().all()
    # the defaults: intervals (B = 200), verdicts, and with every metric the tests and Bernstein rows
    full = evaluate_full(data)
    assert full.attrs["intervals"]["confidence"] == 0.95 and full["verdict"].notna().any()
    assert {"significance", "bernstein"} <= set(full["family"])
    gen = full[full["metric"] == "FNED"]
    np.testing.assert_allclose(gen["value"].to_numpy(float),
                               evaluate(data, metrics=["FNED"])["value"].to_numpy(float), equal_nan=True)
    assert gen["ci_low"].notna().any()


def test_basis_carries_signed_differences_and_auc_contrasts():
    data = small_table(n_templates=20)
    res = evaluate(data, metrics=["FNED", "TPR-Gap", "BPSN", "AvgGF"])
    bs = bootstrap(data, res, B=100)
    b = bs.basis
    fned = b[(b["metric"] == "FNED") & b["group"].notna()]
    assert fned["basis"].str.startswith("FNR(group) - FNR(all)").all()
    # |signed observed| equals the unsigned observed value
    merged = fned.merge(res, on=["metric", "attribute", "class", "group"])
    ok = merged["basis_value"].notna()
    assert np.allclose(merged.loc[ok, "basis_value"].abs(), merged.loc[ok, "value"])
    assert b.loc[b["metric"] == "BPSN", "basis"].dropna().eq("AUC(group) - AUC(all examples)").all()
    assert b.loc[b["metric"] == "AvgGF", "basis"].isna().all()


def test_cluster_bootstrap_difference():
    """The benchmarks' cluster bootstrap of a difference of means (benchmarks/cluster_difference.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from cluster_difference import cluster_bootstrap_difference

    rng = np.random.default_rng(0)
    n = 2000
    ann = np.where(rng.random(n) < 0.3, 1, -1)
    costs = (rng.random(n) < np.where(ann == 1, 0.4, 0.3)).astype(float)
    clusters = np.arange(n) // 4
    lo, hi = cluster_bootstrap_difference(costs, ann, clusters, seed=1)
    assert (lo, hi) == cluster_bootstrap_difference(costs, ann, clusters, seed=1)
    d = costs[ann == 1].mean() - costs[ann == -1].mean()
    assert lo < d < hi and lo < 0.1 < hi
    assert cluster_bootstrap_difference(costs[:4], ann[:4], clusters[:4]) == (None, None)


def test_row_quantiles_are_numpys_bit_for_bit():
    """Interval ends of rows grouped by their number of defined replicates
    are exactly np.quantile's of each row's defined values."""
    from bias_suite.stats.bootstrap.intervals import row_quantiles

    rng = np.random.default_rng(1)
    for B in (1, 2, 7, 200):
        V = rng.normal(size=(40, B))
        V[rng.random(V.shape) < 0.2] = np.nan
        ok = np.isfinite(V)
        for probs in ([0.025, 0.975], [0.0, 1.0], [0.1, 0.5]):
            got = row_quantiles(V, probs, ok)
            ref = np.array([[np.quantile(V[i][ok[i]], p) if ok[i].any() else np.nan for i in range(len(V))]
                            for p in probs])
            assert np.array_equal(got, ref, equal_nan=True)


def test_every_interval_holds_its_value():
    """Resampling adds noise to a distance, so every resample's W1 can exceed the observed one: the
    percentile interval of AvgGF-TC lies wholly above its value here. Intervals (and the signed
    bases) are extended to hold their values, with a note, so a value below tau can never be called
    at least tau by an interval above it."""
    import bias_suite as bs

    rng = np.random.default_rng(0)
    rows = []
    for j in range(40):
        base, label = rng.normal(0, 1), ["neg", "pos"][j % 2]
        for g in ("a", "b"):
            for k in range(3):
                p = 1 / (1 + np.exp(-(base + rng.normal(0, 0.5))))
                rows.append({"id": f"{j}-{g}{k}", "template": f"t{j}", "attribute": "x", "group": g,
                             "term": f"{g}{k}", "text": f"s {j} {g}{k}", "label": label,
                             "probs": {"neg": 1 - p, "pos": p}})
    data = pd.DataFrame(rows)
    res = bs.evaluate(data, seed=0)
    has = res["ci_low"].notna() & res["value"].notna()
    assert ((res.loc[has, "ci_low"] <= res.loc[has, "value"]) & (res.loc[has, "value"] <= res.loc[has, "ci_high"])).all()
    moved = res[res["note"].fillna("").str.contains("interval extended to its value")]
    assert "AvgGF-TC" in set(moved["metric"])
    assert (moved["ci_low"] == moved["value"]).any()
    # the bootstrap alone: the same, and the signed basis holds its observed value
    from bias_suite.metrics import compute as metric_values
    from bias_suite.stats.bootstrap import bootstrap

    out = bootstrap(data, metric_values(data), B=200, seed=0)
    b = out.basis.dropna(subset=["basis_low"])
    assert len(b) and ((b["basis_low"] <= b["basis_value"]) & (b["basis_value"] <= b["basis_high"])).all()


def test_a_signed_basis_is_extended_to_its_value_with_a_note():
    """Replicates of the signed difference all in [0.01, 0.05] while the data give -0.02: the basis
    the verdict reads is extended to -0.02 and the row's note says so."""
    from bias_suite.stats.bootstrap.intervals import fill

    res = pd.DataFrame([dict(metric="FNED", family="BCM", view="group", attribute="x", **{"class": "pos"}, group="a",
                             value=0.02, ci_low=None, ci_high=None, n=100, note=None)])
    signed = np.random.default_rng(0).uniform(0.01, 0.05, 200)
    key = ("x", "FNED", "pos", "a")
    extra = {key: {"templates": 50, "basis": "FNR(group) - FNR(all)", "basis_reps": signed, "basis_obs": -0.02}}
    out, basis = fill(res, [key], np.abs(signed)[None, :], extra, 0.95, 200)
    assert basis["basis_low"][0] == -0.02 and basis["basis_high"][0] == pytest.approx(np.quantile(signed, 0.975), abs=1e-3)
    assert "signed interval extended to its value (the percentile interval lay above it)" in out["note"][0]


def test_template_sums_by_runs_and_by_counts():
    """Per-template column sums: tuples in template order (runs, with a
    template that has none) and in any order (bincount) give the sums by
    hand."""
    from bias_suite.stats.bootstrap.fast import template_sums

    tt = np.array([0, 0, 2, 2, 2, 3])
    one = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    two = np.column_stack([one, 10 * one])
    want = np.array([[3.0, 3.0, 30.0], [0.0, 0.0, 0.0], [12.0, 12.0, 120.0], [6.0, 6.0, 60.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(template_sums(tt, [one, two], 5), want)
    order = np.array([5, 2, 0, 4, 1, 3])
    np.testing.assert_allclose(template_sums(tt[order], [one[order], two[order]], 5), want)
    assert template_sums(tt[:0], [one[:0]], 3).shape == (3, 1)
