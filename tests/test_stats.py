"""Tests of bias_suite.stats (significance tests, Bernstein bounds).

Expected numbers are computed by hand (shown in the comments) and, where
scipy is the reference, compared with a direct scipy call.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from bias_suite.exceptions import MetricError
from bias_suite.stats import (
    DemographicParity, EqualizedOdds, EqualOpportunity, FalsePositiveParity,
    add_adjusted_pvalues, adjust_pvalues, bernstein_interval, bernstein_rows,
    bernstein_t, block_test, min_detectable_bias, sample_size,
    significance_from_block_scores, significance_tests, template_group_scores,
)
from bias_suite.io.results import RESULT_COLUMNS

L95 = math.log(40.0)  # -log((1 - 0.95) / 2)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def frame_from_blocks(table, groups, attribute="attr", classes=("pos", "neg"),
                      labels=None):
    """Scored examples with one example per (template, group) whose
    f(x, classes[0]) is table[template][group]."""
    rows = []
    for j, vals in enumerate(table):
        for g, v in zip(groups, vals):
            rows.append(dict(
                id=f"{attribute}-{j}-{g}", template=f"t{j}", attribute=attribute,
                group=g, term=g, text=f"text {j} {g}",
                label=None if labels is None else labels[j],
                probs={classes[0]: v, classes[1]: 1.0 - v}))
    return pd.DataFrame(rows)


def get(df, metric, **where):
    sel = df["metric"] == metric
    for k, v in where.items():
        sel &= df[k] == v
    out = df[sel]
    assert len(out) == 1, (metric, where, out)
    return out.iloc[0]


# --------------------------------------------------------------------------
# p-value adjustment
# --------------------------------------------------------------------------
def test_holm_hand_example():
    # sorted: 0.005 (x4) = .02, 0.01 (x3) = .03, 0.03 (x2) = .06, 0.04 (x1) = .04 -> max .06
    got = adjust_pvalues([0.01, 0.04, 0.03, 0.005], "holm")
    np.testing.assert_allclose(got, [0.03, 0.06, 0.06, 0.02])


def test_bh_hand_example():
    # sorted: 0.005*4/1=.02, 0.01*4/2=.02, 0.03*4/3=.04, 0.04*4/4=.04; cummin from top
    got = adjust_pvalues([0.01, 0.04, 0.03, 0.005], "bh")
    np.testing.assert_allclose(got, [0.02, 0.04, 0.04, 0.02])


def test_bh_step_up_monotonicity_and_cap():
    # 0.02*3/1=.06, 0.03*3/2=.045, 0.9*3/3=.9 -> cummin from top: .045, .045, .9
    np.testing.assert_allclose(adjust_pvalues([0.9, 0.02, 0.03], "bh"), [0.9, 0.045, 0.045])
    # Holm caps at 1: 0.4*3=1.2 -> 1; 0.5*2=1.0; 0.6*1 -> max 1
    np.testing.assert_allclose(adjust_pvalues([0.5, 0.4, 0.6], "holm"), [1.0, 1.0, 1.0])


def test_adjust_none_nan_and_errors():
    np.testing.assert_allclose(adjust_pvalues([0.2, 0.01], None), [0.2, 0.01])
    # NaN passes through and does not count in m (m = 2 here)
    got = adjust_pvalues([0.01, np.nan, 0.04], "holm")
    assert np.isnan(got[1])
    np.testing.assert_allclose(got[[0, 2]], [0.02, 0.04])
    assert adjust_pvalues([], "holm").size == 0
    with pytest.raises(MetricError):
        adjust_pvalues([0.1], "bonferroni")
    with pytest.raises(MetricError):
        adjust_pvalues([1.5], "holm")


pvals = st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
                 min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(pvals)
def test_adjustment_properties(p):
    p = np.asarray(p)
    holm = adjust_pvalues(p, "holm")
    bh = adjust_pvalues(p, "bh")
    eps = 1e-12
    for adj in (holm, bh):
        assert np.all(adj >= p - eps)
        assert np.all(adj <= 1.0)
        # order preserving
        order = np.argsort(p, kind="stable")
        assert np.all(np.diff(adj[order]) >= -eps)
    assert np.all(holm >= bh - eps)


# --------------------------------------------------------------------------
# Wilcoxon / Friedman on hand-made tables
# --------------------------------------------------------------------------
def test_wilcoxon_hand_table_no_ties():
    # d = A - B = [-1/16, 1/8, 1/4, 3/8, 1/2]; ranks of |d| 1..5; R- = 1, R+ = 14
    # statistic min(W+, W-) = 1; r = (14 - 1)/15; exact two-sided p = 2 * 2/32
    a = [0.4375, 0.625, 0.75, 0.875, 1.0]
    b = [0.5] * 5
    res = block_test(pd.DataFrame({"A": a, "B": b}))
    assert res["test"] == "Wilcoxon" and res["n"] == 5 and res["note"] is None
    assert res["statistic"] == 1.0
    assert res["effect"] == pytest.approx(13 / 15)
    assert res["pvalue"] == pytest.approx(0.125)
    ref = sps.wilcoxon(a, b)
    assert res["statistic"] == ref.statistic and res["pvalue"] == ref.pvalue


def test_wilcoxon_hand_table_ties_and_zero():
    # d = [3/8, -1/4, 0, 3/8, -1/4]: zero dropped, |d| ranks 1.5,1.5,3.5,3.5
    # R+ = 7, R- = 3 -> statistic 3, r = 4/10
    a = [0.875, 0.625, 0.5, 0.75, 0.375]
    b = [0.5, 0.875, 0.5, 0.375, 0.625]
    res = block_test(pd.DataFrame({"A": a, "B": b}))
    assert res["statistic"] == 3.0
    assert res["effect"] == pytest.approx(0.4)
    assert res["n"] == 5  # templates, zeros included
    ref = sps.wilcoxon(a, b)
    assert res["pvalue"] == ref.pvalue


def test_friedman_hand_table():
    # ranks per template: (1,2,3), (2,1,3), (1,3,2); rank sums 4, 6, 8
    # chi2 = 12/(3*3*4) * (16+36+64) - 3*3*4 = 8/3; W = chi2/(3*2) = 4/9
    # p = chi2(2).sf(8/3) = exp(-4/3)
    table = [[0.1, 0.2, 0.3], [0.2, 0.1, 0.3], [0.1, 0.3, 0.2]]
    res = block_test(pd.DataFrame(table, columns=["a", "b", "c"]))
    assert res["test"] == "Friedman" and res["n"] == 3
    assert res["statistic"] == pytest.approx(8 / 3)
    assert res["effect"] == pytest.approx(4 / 9)
    assert res["pvalue"] == pytest.approx(math.exp(-4 / 3))
    ref = sps.friedmanchisquare(*np.asarray(table).T)
    assert res["statistic"] == ref.statistic and res["pvalue"] == ref.pvalue


def test_significance_tests_two_groups_rows():
    a = [0.4375, 0.625, 0.75, 0.875, 1.0]
    df = frame_from_blocks(list(zip(a, [0.5] * 5)), ["female", "male"], "gender")
    out = significance_tests(df)
    assert list(out.columns) == RESULT_COLUMNS
    pos = out[out["class"] == "pos"]
    assert list(pos["metric"]) == ["Wilcoxon", "Wilcoxon-p", "Wilcoxon-r", "Wilcoxon-p-holm"]
    assert set(out["family"]) == {"significance"}
    assert set(out["view"]) == {"counterfactual"}
    assert out["group"].isna().all()
    assert (out["n"] == 5).all()
    assert get(out, "Wilcoxon", **{"class": "pos"})["value"] == 1.0
    assert get(out, "Wilcoxon-r", **{"class": "pos"})["value"] == pytest.approx(13 / 15)
    # neg = 1 - pos: d is negated, so r flips sign, statistic and p are equal
    assert get(out, "Wilcoxon-r", **{"class": "neg"})["value"] == pytest.approx(-13 / 15)
    # adjusted across the 2 tests (pos, neg)
    p = get(out, "Wilcoxon-p", **{"class": "pos"})["value"]
    assert get(out, "Wilcoxon-p-holm", **{"class": "pos"})["value"] == pytest.approx(min(1, 2 * p))


def test_significance_tests_three_groups_rows_and_bh():
    table = [[0.1, 0.2, 0.3], [0.2, 0.1, 0.3], [0.1, 0.3, 0.2]]
    df = frame_from_blocks(table, ["a", "b", "c"], "race")
    out = significance_tests(df, adjust="bh")
    pos = out[out["class"] == "pos"]
    assert list(pos["metric"]) == ["Friedman", "Friedman-p", "Friedman-W", "Friedman-p-bh"]
    assert get(out, "Friedman", **{"class": "pos"})["value"] == pytest.approx(8 / 3)
    assert get(out, "Friedman-W", **{"class": "pos"})["value"] == pytest.approx(4 / 9)
    assert (pos["n"] == 3).all()
    out_none = significance_tests(df, adjust=None)
    assert not out_none["metric"].str.contains("-p-").any()
    with pytest.raises(MetricError):
        significance_tests(df, adjust="bonferroni")


def test_block_means_over_terms_and_incomplete_templates():
    rows = []
    # t0: f terms 0.2 and 0.4 (mean 0.3), m 0.5; t1 lacks m (dropped); t2: f .1, m .3
    spec = [("t0", "she", "f", 0.2), ("t0", "her", "f", 0.4), ("t0", "he", "m", 0.5),
            ("t1", "she", "f", 0.9),
            ("t2", "she", "f", 0.1), ("t2", "he", "m", 0.3)]
    for i, (t, term, g, v) in enumerate(spec):
        rows.append(dict(id=str(i), template=t, attribute="gender", group=g, term=term,
                         text="", label=None, probs={"x": v, "y": 1 - v}))
    df = pd.DataFrame(rows)
    tab = template_group_scores(df, "gender", "x")
    assert list(tab.columns) == ["f", "m"] and list(tab.index) == ["t0", "t2"]
    np.testing.assert_allclose(tab.to_numpy(), [[0.3, 0.5], [0.1, 0.3]])
    full = template_group_scores(df, "gender", "x", complete_only=False)
    assert list(full.index) == ["t0", "t1", "t2"]


def test_adjustment_across_all_tests_of_a_call():
    two = frame_from_blocks(list(zip([0.4375, 0.625, 0.75, 0.875, 1.0], [0.5] * 5)),
                            ["f", "m"], "gender")
    three = frame_from_blocks([[0.1, 0.2, 0.3], [0.2, 0.1, 0.3], [0.1, 0.3, 0.2]],
                              ["a", "b", "c"], "race")
    out = significance_tests(pd.concat([two, three], ignore_index=True))
    raw = out[out["metric"].isin(["Wilcoxon-p", "Friedman-p"])]
    adj = out[out["metric"].str.endswith("-p-holm")]
    assert len(raw) == len(adj) == 4  # 2 attributes x 2 classes
    np.testing.assert_allclose(adj["value"].astype(float),
                               adjust_pvalues(raw["value"].astype(float), "holm"))
    assert list(pd.unique(out["attribute"])) == ["gender", "race"]
    only = significance_tests(pd.concat([two, three]), attributes=["race"])
    assert set(only["attribute"]) == {"race"}
    with pytest.raises(MetricError):
        significance_tests(two, attributes=["nope"])


def test_block_score_entry_point_and_manual_adjustment():
    tab = pd.DataFrame([[0.1, 0.2, 0.3], [0.2, 0.1, 0.3], [0.1, 0.3, 0.2]],
                       columns=["a", "b", "c"])
    r1 = significance_from_block_scores(tab, attribute="x", cls="PER")
    assert list(r1["metric"]) == ["Friedman", "Friedman-p", "Friedman-W"]
    r2 = significance_from_block_scores(tab.iloc[:, :2], attribute="x", cls="LOC")
    both = add_adjusted_pvalues(pd.concat([r1, r2], ignore_index=True), "holm")
    assert list(both["metric"]) == ["Friedman", "Friedman-p", "Friedman-W", "Friedman-p-holm",
                                    "Wilcoxon", "Wilcoxon-p", "Wilcoxon-r", "Wilcoxon-p-holm"]
    single = significance_from_block_scores(tab, adjust="holm")
    assert get(single, "Friedman-p-holm")["value"] == get(single, "Friedman-p")["value"]


# undefined cases ----------------------------------------------------------
def _assert_undefined(out, metrics):
    for m in metrics:
        rows = out[out["metric"] == m]
        assert len(rows) > 0, m
        assert rows["value"].isna().all(), m
        assert rows["note"].notna().all(), m


def test_undefined_single_template():
    out = significance_tests(frame_from_blocks([[0.2, 0.7]], ["f", "m"]))
    _assert_undefined(out, ["Wilcoxon", "Wilcoxon-p", "Wilcoxon-r", "Wilcoxon-p-holm"])
    assert "templates" in out["note"].iloc[0]


def test_undefined_single_group():
    out = significance_tests(frame_from_blocks([[0.2], [0.3], [0.5]], ["f"]))
    _assert_undefined(out, ["Wilcoxon", "Wilcoxon-p", "Wilcoxon-r", "Wilcoxon-p-holm"])
    assert "groups" in out["note"].iloc[0]


def test_undefined_all_differences_zero():
    out = significance_tests(frame_from_blocks([[0.2, 0.2], [0.5, 0.5]], ["f", "m"]))
    _assert_undefined(out, ["Wilcoxon", "Wilcoxon-p", "Wilcoxon-r", "Wilcoxon-p-holm"])
    assert "zero" in out["note"].iloc[0]


def test_undefined_friedman_all_tied():
    out = significance_tests(frame_from_blocks([[0.2, 0.2, 0.2], [0.5, 0.5, 0.5]],
                                               ["a", "b", "c"]))
    _assert_undefined(out, ["Friedman", "Friedman-p", "Friedman-W", "Friedman-p-holm"])


def test_undefined_test_does_not_count_in_m():
    ok = frame_from_blocks(list(zip([0.4375, 0.625, 0.75, 0.875, 1.0], [0.5] * 5)),
                           ["f", "m"], "gender", classes=("pos", "neg"))
    bad = frame_from_blocks([[0.2, 0.7]], ["a", "b"], "race", classes=("pos", "neg"))
    out = significance_tests(pd.concat([ok, bad], ignore_index=True))
    p = get(out, "Wilcoxon-p", attribute="gender", **{"class": "pos"})["value"]
    adj = get(out, "Wilcoxon-p-holm", attribute="gender", **{"class": "pos"})["value"]
    assert adj == pytest.approx(min(1.0, 2 * p))  # m = 2, not 4


def test_unlabelled_rows_used_and_empty_input():
    df = frame_from_blocks([[0.1, 0.2], [0.3, 0.5], [0.2, 0.25]], ["f", "m"])
    assert df["label"].isna().all()
    out = significance_tests(df)
    assert out["value"].notna().all()
    empty = significance_tests(df.iloc[:0])
    assert list(empty.columns) == RESULT_COLUMNS and empty.empty


def _numbers(df: pd.DataFrame, cols=("value", "ci_low", "ci_high", "n")) -> np.ndarray:
    return np.column_stack([pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float) for c in cols])


def test_significance_of_a_random_table_is_scipys_and_ignores_row_order():
    """A random 12 x 3 table: the Friedman statistic and p of both classes are
    scipy's on the table (for the second class, 1 - the table), and shuffled
    rows with another attribute beside them give the same rows."""
    rng = np.random.default_rng(1)
    table = rng.uniform(size=(12, 3))
    df = frame_from_blocks(table.tolist(), ["a", "b", "c"])
    out = significance_tests(df)
    for cls, t in (("pos", table), ("neg", 1.0 - table)):
        ref = sps.friedmanchisquare(*t.T)
        assert get(out, "Friedman", **{"class": cls})["value"] == pytest.approx(ref.statistic, rel=1e-12)
        assert get(out, "Friedman-p", **{"class": cls})["value"] == pytest.approx(ref.pvalue, rel=1e-9)
    other = frame_from_blocks(rng.uniform(size=(12, 2)).tolist(), ["x", "y"], attribute="other")
    mixed = pd.concat([other, df], ignore_index=True).sample(frac=1, random_state=3).reset_index(drop=True)
    both = significance_tests(mixed)
    mine = both[both["attribute"] == "attr"]
    key = ["metric", "class"]
    a, b = (f.sort_values(key, kind="stable").reset_index(drop=True) for f in (out, mine))
    assert a[key].equals(b[key])
    np.testing.assert_allclose(_numbers(a), _numbers(b), rtol=1e-12, equal_nan=True)


# --------------------------------------------------------------------------
# Bernstein
# --------------------------------------------------------------------------
def test_sample_size_check_value():
    # C=1, delta=0.05, rho=0.95, gamma=0.5, sigma^2=(C/gamma)^2=4:
    # (2*4 + (2/1.5)*0.05) * log(40) / 0.0025 = 11902.78
    bound, n = sample_size(0.05)
    assert bound == pytest.approx(11902.78, abs=0.01)
    assert n == 11903
    assert sample_size(-0.05) == sample_size(0.05)  # uses |bias|
    assert sample_size(0.05, variance=4.0) == sample_size(0.05)
    with pytest.raises(MetricError):
        sample_size(0.0)


def test_winobias_check():
    # Ethayarajh (2020): WinoBias (3,160 examples) can only support claims of
    # bias >= 0.0975, with C=1, gamma=0.5, rho=0.95, sigma^2=(C/gamma)^2.
    d = min_detectable_bias(3160)
    assert d == pytest.approx(0.097420, abs=1e-6)
    assert math.ceil(d * 1e4) / 1e4 == 0.0975
    assert sample_size(0.0975).bound < 3160 < sample_size(0.0974).bound
    # the root is exactly where the bound equals n
    assert sample_size(d).bound == pytest.approx(3160)


def test_min_detectable_bias_equals_half_width():
    for n in (10, 500, 3160):
        for var in (0.0, 0.3, 4.0):
            assert min_detectable_bias(n, variance=var, gamma=0.3) == pytest.approx(
                bernstein_t(n, var, gamma=0.3))


def test_bernstein_interval_by_hand():
    # annotations +1,+1,-1,-1; costs 1,0,0,0; gamma_A = gamma_B = 1/2
    # delta_hat = [2,0,0,0]; delta_bar = 0.5; sigma^2 = 1 - 0.25 = 0.75
    # B = (2/(3*0.5)) L = 4L/3; t = (B + sqrt(B^2 + 8*4*0.75*L)) / 8
    delta, low, high, info = bernstein_interval([1, 0, 0, 0], [1, 1, -1, -1])
    B = 4 * L95 / 3
    t = (B + math.sqrt(B * B + 24 * L95)) / 8
    assert t == pytest.approx(1.941963, abs=1e-6)
    assert delta == pytest.approx(0.5)
    assert info["variance"] == pytest.approx(0.75)
    assert info["gamma"] == 0.5 and info["gamma_source"] == "estimated"
    assert low == pytest.approx(0.5 - t) and high == pytest.approx(0.5 + t)
    assert info["t"] == pytest.approx(t)


def test_bernstein_interval_with_unannotated_row_and_given_gamma():
    # extra row annotated 0 counts in n=5: gamma_A = gamma_B = 2/5
    # delta_hat = [2.5,0,0,0,0]; delta_bar = 0.5 (= 1/2 - 0); sigma^2 = 6.25/5 - .25 = 1
    # gamma = 0.4: B = (2/1.2) L; t = (B + sqrt(B^2 + 8*5*1*L)) / 10
    delta, low, high, info = bernstein_interval([1, 0, 0, 0, 1], [1, 1, -1, -1, 0])
    B = (2 / 1.2) * L95
    t = (B + math.sqrt(B * B + 40 * L95)) / 10
    assert delta == pytest.approx(0.5) and info["amortized_mean"] == pytest.approx(0.5)
    assert info["variance"] == pytest.approx(1.0)
    assert info["gamma"] == pytest.approx(0.4)
    assert high - delta == pytest.approx(t)
    # a given gamma replaces the estimate in t only
    d2, lo2, hi2, info2 = bernstein_interval([1, 0, 0, 0, 1], [1, 1, -1, -1, 0],
                                             gamma=0.5, confidence=0.9)
    assert info2["gamma_source"] == "given" and d2 == pytest.approx(0.5)
    assert hi2 - d2 == pytest.approx(bernstein_t(5, 1.0, gamma=0.5, confidence=0.9))


def test_delta_bar_equals_amortized_mean_random():
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(3, 60))
        f = rng.choice([-1, 0, 1], size=n)
        f[:2] = [1, -1]
        c = rng.uniform(size=n)
        delta, _, _, info = bernstein_interval(c, f)
        assert delta == pytest.approx(c[f == 1].mean() - c[f == -1].mean())
        assert delta == pytest.approx(info["amortized_mean"])


def test_bernstein_interval_undefined_and_errors():
    d, lo, hi, info = bernstein_interval([1, 0], [1, 1])
    assert d is None and lo is None and hi is None and "unprotected" in info["note"]
    d, *_ , info = bernstein_interval([1, 0], [0, -1])
    assert d is None and "protected" in info["note"]
    with pytest.raises(MetricError):
        bernstein_interval([2.0], [1])  # cost above C
    with pytest.raises(MetricError):
        bernstein_interval([1.0], [2])
    with pytest.raises(MetricError):
        bernstein_interval([1.0, 0.0], [1, -1], confidence=1.0)
    with pytest.raises(MetricError):
        bernstein_interval([1.0, 0.0], [1, -1], gamma=0.7)


def _scored_classification():
    # gender: f (4 rows), m (4 rows); classes pos/neg; pred = argmax
    spec = [
        # group, p(pos), label
        ("f", 0.9, "pos"), ("f", 0.8, "pos"), ("f", 0.3, "neg"), ("f", 0.6, None),
        ("m", 0.2, "pos"), ("m", 0.7, "pos"), ("m", 0.1, "neg"), ("m", 0.8, "neg"),
    ]
    rows = [dict(id=str(i), template=f"t{i % 4}", attribute="gender", group=g, term=g,
                 text="", label=lab, probs={"pos": p, "neg": 1 - p})
            for i, (g, p, lab) in enumerate(spec)]
    return pd.DataFrame(rows)


def test_bernstein_rows_values_by_hand():
    df = _scored_classification()
    out = bernstein_rows(df)
    assert list(out.columns) == RESULT_COLUMNS
    assert set(out["family"]) == {"bernstein"} and set(out["view"]) == {"group"}
    w = dict(attribute="gender", group="f", **{"class": "pos"})
    # DemographicParity, class pos, group f, unlabelled row kept (n = 8):
    # yhat_f = 1,1,0,1 -> cost 1-yhat = 0,0,1,0 (mean .25); rest m: yhat 0,1,0,1 -> mean .5
    dp = get(out, "Bernstein-DemographicParity", **w)
    assert dp["n"] == 8 and dp["value"] == pytest.approx(0.25 - 0.5)
    ref = bernstein_interval([0, 0, 1, 0, 1, 0, 1, 0], [1, 1, 1, 1, -1, -1, -1, -1])
    assert dp["ci_low"] == pytest.approx(ref[1]) and dp["ci_high"] == pytest.approx(ref[2])
    size = get(out, "Bernstein-DemographicParity-SampleSize", **w)
    assert size["value"] == pytest.approx(
        sample_size(0.25, gamma=0.5, variance=ref[3]["variance"]).bound)
    # EqualOpportunity: the unlabelled row counts in n, annotated 0 (n = 8);
    # annotated rows: y = pos; f: rows 0,1 (yhat 1,1 -> cost 0,0); m: rows 4,5 (yhat 0,1 -> cost 1,0)
    eo = get(out, "Bernstein-EqualOpportunity", **w)
    assert eo["n"] == 8 and eo["value"] == pytest.approx(0.0 - 0.5)
    ref = bernstein_interval([0, 0, 1, 0, 1, 0, 0, 0], [1, 1, 0, 0, -1, -1, 0, 0])
    assert eo["ci_low"] == pytest.approx(ref[1])
    assert ref[3]["gamma"] == pytest.approx(2 / 8)
    # FalsePositiveParity: y = neg rows; f: row 2 (yhat 0, cost 0); m: rows 6,7 (0, 1)
    fpp = get(out, "Bernstein-FalsePositiveParity", **w)
    assert fpp["n"] == 8 and fpp["value"] == pytest.approx(0.0 - 0.5)
    # class neg mirrors pos for DP: yhat_neg = 1 - yhat_pos
    dpn = get(out, "Bernstein-DemographicParity", attribute="gender", group="f",
              **{"class": "neg"})
    assert dpn["value"] == pytest.approx(0.5 - 0.25)
    # rows: 2 classes x 2 groups x 3 presets x 2
    assert len(out) == 24


def test_bernstein_unlabelled_rows_count_in_n_by_hand():
    """METRICS.md: gamma_A, gamma_B are fractions of all n rows, "rows
    annotated 0 still count in n"; an unlabelled row is annotated 0 by the
    presets that need y. Class pos, group f of _scored_classification
    (argmax: yhat_pos = 1,1,0,1 | 0,1,0,1; labels pos,pos,neg,- | pos,pos,neg,neg)."""
    out = bernstein_rows(_scored_classification(), presets=["EqualizedOdds"])
    w = dict(attribute="gender", group="f", **{"class": "pos"})
    L = math.log(40.0)
    # EqualOpportunity: +1 rows 0,1 (cost 1 - yhat = 0, 0), -1 rows 4,5 (cost 1, 0), n = 8:
    # gamma_A = gamma_B = 2/8; delta_hat = (0,0,0,0,-4,0,0,0): mean -0.5, variance 16/8 - 0.25 = 1.75
    # t = (B + sqrt(B^2 + 8*8*1.75*L)) / 16 with B = (2 / (3 * 0.25)) L
    B = 8 / 3 * L
    t = (B + math.sqrt(B * B + 112 * L)) / 16
    assert t == pytest.approx(2.0261530611580643, rel=1e-12)
    eo = get(out, "Bernstein-EqualOpportunity", **w)
    assert (eo["n"], eo["value"]) == (8, pytest.approx(-0.5, abs=1e-12))
    assert eo["ci_low"] == pytest.approx(-0.5 - t, rel=1e-12) and eo["ci_high"] == pytest.approx(-0.5 + t, rel=1e-12)
    size = get(out, "Bernstein-EqualOpportunity-SampleSize", **w)  # (2*1.75 + (8/3)*0.5) L / 0.25
    assert size["n"] == 8 and size["value"] == pytest.approx((3.5 + 4 / 3) * L / 0.25, rel=1e-12)
    # FalsePositiveParity: +1 row 2 (cost yhat = 0), -1 rows 6,7 (cost 0, 1); the unlabelled row 3
    # (yhat 1) is not a y = 0 row: annotation 0. gamma = min(1/8, 2/8) = 1/8; delta_hat has one -4.
    B = 16 / 3 * L
    t = (B + math.sqrt(B * B + 112 * L)) / 16
    fpp = get(out, "Bernstein-FalsePositiveParity", **w)
    assert (fpp["n"], fpp["value"]) == (8, pytest.approx(-0.5, abs=1e-12))
    assert fpp["ci_high"] == pytest.approx(-0.5 + t, rel=1e-12) and t == pytest.approx(2.997638377498908, rel=1e-12)
    # dropping unlabelled rows everywhere is still an option: n = 7
    drop = bernstein_rows(_scored_classification(), presets=["EqualizedOdds"],
                          demographic_parity_uses_unlabelled=False)
    assert (drop["n"] == 7).all()


def test_bernstein_rows_options():
    df = _scored_classification()
    out = bernstein_rows(df, presets=["EqualizedOdds"])
    assert set(out["metric"]) == {
        "Bernstein-EqualOpportunity", "Bernstein-EqualOpportunity-SampleSize",
        "Bernstein-FalsePositiveParity", "Bernstein-FalsePositiveParity-SampleSize"}
    assert bernstein_rows(df, presets=EqualizedOdds).equals(out)
    drop = bernstein_rows(df, presets=[DemographicParity],
                          demographic_parity_uses_unlabelled=False)
    assert (drop["n"] == 7).all()
    wide = bernstein_rows(df, presets=[DemographicParity], confidence=0.99)
    narrow = bernstein_rows(df, presets=[DemographicParity], confidence=0.9)
    a = get(wide, "Bernstein-DemographicParity", group="f", **{"class": "pos"})
    b = get(narrow, "Bernstein-DemographicParity", group="f", **{"class": "pos"})
    assert a["ci_high"] - a["ci_low"] > b["ci_high"] - b["ci_low"]
    with pytest.raises(MetricError):
        bernstein_rows(df, presets=["Nope"])


def test_bernstein_rows_of_a_users_preset():
    """A user's preset runs through the checked interval: its rows equal the
    built-in preset it copies, and costs outside [0, 1] are refused."""
    from bias_suite.stats.bernstein import BernsteinPreset

    df = _scored_classification()
    same = BernsteinPreset("Copy", cost=lambda yhat, y: 1.0 - yhat, annotated=lambda y, n: np.ones(n, dtype=bool),
                           needs_labels=False)
    mine = bernstein_rows(df, presets=[same])
    ref = bernstein_rows(df, presets=[DemographicParity])
    np.testing.assert_array_equal(mine["value"].to_numpy(float), ref["value"].to_numpy(float))
    np.testing.assert_array_equal(mine["ci_low"].to_numpy(float), ref["ci_low"].to_numpy(float))
    assert set(mine["metric"]) == {"Bernstein-Copy", "Bernstein-Copy-SampleSize"}
    double = BernsteinPreset("Double", cost=lambda yhat, y: 2.0 * (1.0 - yhat),
                             annotated=lambda y, n: np.ones(n, dtype=bool), needs_labels=False)
    with pytest.raises(MetricError, match=r"costs must lie in \[0, max_cost"):
        bernstein_rows(df, presets=[double])


def test_bernstein_pred_overrides_argmax_and_tie():
    df = _scored_classification()
    df["probs"] = [{"pos": 0.5, "neg": 0.5}] * len(df)  # tie -> first class, pos
    out = bernstein_rows(df, presets=[DemographicParity])
    # every yhat_pos = 1 -> all costs 0 -> delta 0 -> sample size undefined
    r = get(out, "Bernstein-DemographicParity", group="f", **{"class": "pos"})
    assert r["value"] == 0.0
    s = get(out, "Bernstein-DemographicParity-SampleSize", group="f", **{"class": "pos"})
    assert s["value"] is None and "0" in s["note"]
    df["pred"] = ["neg", "neg", "neg", "neg", "pos", "pos", "pos", "pos"]
    out = bernstein_rows(df, presets=[DemographicParity])
    r = get(out, "Bernstein-DemographicParity", group="f", **{"class": "pos"})
    assert r["value"] == pytest.approx(1.0)


def test_bernstein_rows_undefined():
    df = _scored_classification()
    one_group = df[df["group"] == "f"]
    out = bernstein_rows(one_group)
    assert out["value"].isna().all() and out["note"].notna().all()
    # no labels at all: EO / FPP undefined, DP defined
    nolab = df.drop(columns=["label"])
    out = bernstein_rows(nolab)
    eo = out[out["metric"].str.startswith("Bernstein-EqualOpportunity")]
    assert eo["value"].isna().all() and (eo["n"] == 8).all()  # every row counts, none annotated
    assert eo["note"].str.contains("no example annotated").all()
    dp = out[out["metric"] == "Bernstein-DemographicParity"]
    assert dp["value"].notna().all()
    # group without a positive-labelled example: EO undefined for that group
    df2 = df.copy()
    df2.loc[[0, 1], "label"] = "neg"
    out = bernstein_rows(df2, presets=[EqualOpportunity, FalsePositiveParity])
    r = get(out, "Bernstein-EqualOpportunity", group="f", **{"class": "pos"})
    assert r["value"] is None and "protected" in r["note"]
    empty = bernstein_rows(df.iloc[:0])
    assert empty.empty and list(empty.columns) == RESULT_COLUMNS


def test_bernstein_rows_of_the_other_group_and_row_order():
    """Group m's demographic parity by hand (the mirror of f's), and the same
    rows from shuffled examples with another attribute beside them."""
    df = _scored_classification()
    out = bernstein_rows(df)
    # yhat_m = 0,1,0,1 -> cost 1-yhat = 1,0,1,0 (mean .5); rest f: 0,0,1,0 (mean .25)
    dp = get(out, "Bernstein-DemographicParity", attribute="gender", group="m", **{"class": "pos"})
    assert dp["n"] == 8 and dp["value"] == pytest.approx(0.5 - 0.25)
    ref = bernstein_interval([1, 0, 1, 0, 0, 0, 1, 0], [1, 1, 1, 1, -1, -1, -1, -1])
    assert dp["ci_low"] == pytest.approx(ref[1]) and dp["ci_high"] == pytest.approx(ref[2])
    other = df.assign(attribute="age", group=df["group"].map({"f": "old", "m": "young"}), id="age-" + df["id"])
    mixed = pd.concat([other, df], ignore_index=True).sample(frac=1, random_state=3).reset_index(drop=True)
    both = bernstein_rows(mixed)
    mine = both[both["attribute"] == "gender"]
    key = ["metric", "class", "group"]
    a, b = (f.sort_values(key, kind="stable").reset_index(drop=True) for f in (out, mine))
    assert a[key].equals(b[key]) and len(a) == len(out)
    np.testing.assert_allclose(_numbers(a), _numbers(b), rtol=1e-12, equal_nan=True)
