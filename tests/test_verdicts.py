"""Verdicts (bias_suite.stats.verdicts): five categories from a value, its
interval, the no-bias value b and the threshold tau; hand-made intervals,
then a calibration on synthetic scored data with planted effects."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_suite.stats.verdicts import VERDICTS, add_verdicts, decide, no_bias_reference, significance_verdict

COLS = ["metric", "family", "view", "attribute", "class", "group", "value", "ci_low", "ci_high", "n", "note"]


def row(metric, family, group, value, lo=None, hi=None, n=500, cls="pos", view="group", note=None, attribute="gender"):
    return dict(metric=metric, family=family, view=view, attribute=attribute, **{"class": cls}, group=group,
                value=value, ci_low=lo, ci_high=hi, n=n, note=note)


# ------------------------------------------------------------------ one decision
@pytest.mark.parametrize("v,lo,hi,expected", [
    (0.08, 0.06, 0.10, "material"),      # excludes 0, |v| >= tau = 0.05
    (0.03, 0.01, 0.05, "small"),         # excludes 0, |v| < tau
    (0.01, -0.02, 0.04, "negligible"),   # contains 0, inside [-0.05, 0.05]
    (0.02, -0.04, 0.08, "inconclusive"), # contains 0, reaches past 0.05
    (0.05, 0.0, 0.1, "inconclusive"),    # touching 0 is not excluding it
    (-0.07, -0.09, -0.055, "material"),  # below b works alike
])
def test_signed(v, lo, hi, expected):
    d = decide(v, lo, hi, kind="signed", tau=0.05)
    assert d["verdict"] == expected
    assert d["effect"] == pytest.approx(abs(v) / 0.05)


@pytest.mark.parametrize("v,lo,hi,expected", [
    (0.12, 0.06, 0.2, "material"), (0.02, 0.005, 0.04, "negligible"), (0.04, 0.01, 0.09, "inconclusive"),
])
def test_unsigned_is_one_sided_against_tau(v, lo, hi, expected):
    """A distance without a signed quantity underneath is never 'small': its
    interval excludes 0 by construction."""
    assert decide(v, lo, hi, kind="unsigned", tau=0.05)["verdict"] == expected


@pytest.mark.parametrize("v,lo,hi,expected", [
    (1.5, 1.3, 1.8, "material"), (0.7, 0.6, 0.78, "material"), (1.1, 1.02, 1.2, "small"),
    (1.0, 0.9, 1.1, "negligible"), (1.0, 0.7, 1.4, "inconclusive"),
])
def test_ratio_four_fifths(v, lo, hi, expected):
    d = decide(v, lo, hi, kind="ratio", tau=0.25)
    assert d["verdict"] == expected
    assert d["effect"] == pytest.approx(abs(np.log(v)) / np.log(1.25))


def test_ratio_interval_down_to_zero_is_still_an_interval():
    d = decide(0.107, 0.0, 0.347, kind="ratio", tau=0.25)
    assert d["verdict"] == "material" and "no interval" not in d["reason"]
    assert decide(1.0, 0.0, 3.0, kind="ratio", tau=0.25)["verdict"] == "inconclusive"


def test_ratio_band_is_symmetric_in_log():
    assert decide(0.8, 0.79, 0.81, kind="ratio", tau=0.25)["effect"] == pytest.approx(1.0)
    assert decide(1.25, 1.24, 1.26, kind="ratio", tau=0.25)["effect"] == pytest.approx(1.0)


def test_null_and_missing_intervals():
    assert decide(None, None, None, kind="signed", tau=0.05)["verdict"] == "undefined"
    d = decide(0.2, None, None, kind="signed", tau=0.05)
    assert d["verdict"] == "inconclusive" and "--bootstrap" in d["reason"]


def test_inconclusive_says_how_much_more_data():
    # half-width 0.06; to show equivalence the half-width must reach 0.05 - 0.02 = 0.03: 4x the templates
    d = decide(0.02, -0.04, 0.08, kind="signed", tau=0.05, templates=30)
    assert "about 120 templates (now 30)" in d["reason"]


def test_no_bias_reference_by_metric():
    assert no_bias_reference("FNR-Ratio") == ("ratio", 1.0)
    assert no_bias_reference("BPSN") == ("auc", 0.0)
    assert no_bias_reference("AccuracyDiff") == ("signed", 0.0)
    assert no_bias_reference("CFGap") == ("unsigned", 0.0)


def test_significance_rows():
    d = significance_verdict(0.001, test="Friedman", n=40, k=3, effect=0.2)
    assert d["verdict"] == "small" and "W = 0.20" in d["reason"] and "metric rows" in d["reason"]
    assert significance_verdict(0.4, test="Friedman", n=40, k=3)["verdict"] == "inconclusive"
    d = significance_verdict(0.5, test="Wilcoxon", n=4)
    assert d["verdict"] == "inconclusive" and "cannot reach" in d["reason"]


# ------------------------------------------------------------------ whole tables
def test_add_verdicts_on_a_results_table():
    rows = [
        row("FNED", "BCM", "female", 0.07, 0.03, 0.11),
        row("FNED", "BCM", "male", 0.02, 0.001, 0.05),
        row("FNED", "BCM", None, 0.09, 0.04, 0.14),
        row("FNR-Ratio", "VBCM", "female", 1.5, 1.3, 2.0),
        row("CFGap", "PCM", "female|male", 0.01, 0.005, 0.02, view="counterfactual"),
        row("AccuracyDiff", "PCM", "female|male", -0.08, -0.12, -0.06, cls="all"),
        row("BPSN", "VBCM", "female", 0.7, 0.6, 0.8),
        row("Bernstein-EqualOpportunity", "bernstein", "female", 0.01, -0.1, 0.12, n=400),
        row("Bernstein-EqualOpportunity-SampleSize", "bernstein", "female", 50000.0, n=400),
        row("FPED", "BCM", "female", None, note="FPR undefined"),
        row("invariance", "invariance", None, 0.1),
    ]
    basis = pd.DataFrame([
        dict(metric="FNED", attribute="gender", **{"class": "pos"}, group="female", undefined=0.0, templates=30, B=200,
             confidence=0.95, basis="FNR(group) - FNR(all)", basis_value=0.07, basis_low=0.05, basis_high=0.09),
        dict(metric="FNED", attribute="gender", **{"class": "pos"}, group="male", undefined=0.0, templates=30, B=200,
             confidence=0.95, basis="FNR(group) - FNR(all)", basis_value=-0.02, basis_low=-0.04, basis_high=0.01),
    ])
    out = add_verdicts(pd.DataFrame(rows, columns=COLS), basis=basis)
    assert list(out.columns) == COLS + ["verdict", "threshold", "baseline", "effect", "reason", "p", "q",
                                        "signed", "signed_low", "signed_high"]
    # the signed columns: what each verdict was decided on, with its sign (FNED per group: its signed basis;
    # a ratio and a signed difference as they are; nothing signed for an accumulated sum or an undefined value)
    sg = out[["signed", "signed_low", "signed_high"]].to_numpy(dtype=float)
    np.testing.assert_allclose(sg[0], [0.07, 0.05, 0.09])
    np.testing.assert_allclose(sg[1], [-0.02, -0.04, 0.01])
    np.testing.assert_allclose(sg[3], [1.5, 1.3, 2.0])
    np.testing.assert_allclose(sg[5], [-0.08, -0.12, -0.06])
    np.testing.assert_allclose(sg[7], [0.01, -0.1, 0.12])
    assert np.isnan(sg[2]).all() and np.isnan(sg[9]).all() and np.isnan(sg[10]).all()
    # p and q: the row's hypothesis and its adjusted value (claimed when q <= 5%); null without a claim to make
    assert out["p"][0] < out["q"][0] <= 0.05 and np.isnan(out["p"][2]) and np.isnan(out["q"][8])
    v = out["verdict"].tolist()
    assert v[0] == "material" and "FNR higher for 'female' than all examples" in out["reason"][0]
    assert v[1] == "negligible"
    # accumulated FNED (N = 1, 2 groups): a sum of |parts| is as bad as its worst part (female: material),
    # even though its own interval (0.04, 0.14) reaches across tau * 2 / 1 = 0.1
    assert v[2] == "material" and out["threshold"][2] == pytest.approx(0.1)
    assert "2 parts (1 material, 1 negligible)" in out["reason"][2] and "'female'" in out["reason"][2]
    assert out["effect"][2] == pytest.approx(0.07 / 0.05)
    assert v[3] == "material" and out["baseline"][3] == 1.0
    assert v[4] == "negligible"
    assert v[5] == "material" and "lower for 'female' than 'male'" in out["reason"][5]
    assert v[6] == "inconclusive"  # an AUC without its contrast to the overall AUC
    assert v[7] == "inconclusive"
    assert v[8] is None and v[10] is None
    assert v[9] == "undefined" and out["note"][9] == "FPR undefined"
    assert set(out["verdict"].dropna()) <= set(VERDICTS)
    assert out["effect"][0] == pytest.approx(0.07 / 0.05)
    # an existing verdict is kept
    again = add_verdicts(out.assign(verdict=["small"] + list(out["verdict"][1:])), basis=basis)
    assert again["verdict"].iloc[0] == "small"


def test_distances_without_a_signed_basis_are_never_material():
    # mean |f(a) - f(b)| over variants, W1 and ranges are positive on pure noise: with no signed
    # difference beneath them, a whole interval above tau is still not evidence of a bias
    rows = [row("CFGap", "PCM", "a|b", 0.30, 0.25, 0.35, view="counterfactual"),
            row("AvgIF", "PCM", "a|b", 0.02, 0.01, 0.03, view="counterfactual"),
            row("PertSR", "MCM", None, 0.20, 0.19, 0.22, view="counterfactual")]
    out = add_verdicts(pd.DataFrame(rows, columns=COLS))
    assert out["verdict"].tolist() == ["inconclusive", "negligible", "inconclusive"]
    assert "noise alone" in out["reason"][0] and out["effect"].isna().all()
    assert out.attrs["intervals"]["family"] == 0   # rows that can never make a claim take no part in the control
    # the same CFGap judged on its signed difference from the bootstrap
    basis = pd.DataFrame([dict(metric="CFGap", attribute="gender", **{"class": "pos"}, group="a|b", undefined=0.0,
                               templates=40, B=200, confidence=0.95, basis="f(first) - f(second)",
                               basis_value=0.2, basis_low=0.15, basis_high=0.25)])
    out = add_verdicts(pd.DataFrame(rows[:1], columns=COLS), basis=basis)
    assert out["verdict"][0] == "material" and out["effect"][0] == pytest.approx(0.2 / 0.05)
    assert out["reason"][0].startswith("signed 0.2 [0.15, 0.25]: ")
    basis.loc[0, ["basis_value", "basis_low", "basis_high"]] = [0.0, -0.02, 0.02]
    out = add_verdicts(pd.DataFrame(rows[:1], columns=COLS), basis=basis)
    assert out["verdict"][0] == "negligible"   # large |differences| in both directions: no group effect


def test_a_sum_of_parts_takes_its_worst_part():
    rows = [row("TPR-Gap", "PCM", "a|b", 0.03, 0.01, 0.05),     # small (within tau, excludes 0)
            row("TPR-Gap", "PCM", "a|c", 0.04, -0.02, 0.10),    # inconclusive
            row("TPR-Gap", "PCM", "b|c", 0.01, -0.01, 0.03),    # negligible
            row("TPR-Gap", "PCM", None, 0.08, 0.05, 0.11)]
    basis = pd.DataFrame([dict(metric="TPR-Gap", attribute="gender", **{"class": "pos"}, group=g, undefined=0.0,
                               templates=40, B=200, confidence=0.95, basis="TPR(first) - TPR(second)",
                               basis_value=v, basis_low=lo, basis_high=hi)
                          for g, v, lo, hi in [("a|b", 0.03, 0.01, 0.05), ("a|c", 0.04, -0.02, 0.10),
                                               ("b|c", 0.01, -0.01, 0.03)]])
    out = add_verdicts(pd.DataFrame(rows, columns=COLS), basis=basis)
    assert out["verdict"].tolist() == ["small", "inconclusive", "negligible", "inconclusive"]
    assert "worst: 'a' vs 'c'" in out["reason"][3]


def test_error_control_covers_small_claims_too():
    # one weak 'small' claim (z about 2) among 60 values: not real after the adjustment; its interval lies within tau
    rows = [row("TPR-Diff", "PCM", "a|b", 0.02, 0.001, 0.039)]
    rows += [row("TPR-Diff", "PCM", "a|b", 0.0, -0.02, 0.02, attribute=f"x{i}") for i in range(60)]
    out = add_verdicts(pd.DataFrame(rows, columns=COLS))   # hierarchical: 61 units of one value each
    assert out["verdict"][0] == "negligible" and "not real: no difference shown for 'a' vs 'b'" in out["reason"][0]
    assert "family-wise error rate of 5%" in out["reason"][0] and "61 units, 61 values" in out["reason"][0]
    assert out.attrs["intervals"]["family"] == 61 and out.attrs["intervals"]["units"] == 61
    holm = add_verdicts(pd.DataFrame(rows, columns=COLS), multiplicity="holm")
    assert holm["verdict"][0] == "negligible" and "not real at a family-wise error rate of 5%" in holm["reason"][0]
    assert "61 values" in holm["reason"][0] and holm.attrs["intervals"]["family"] == 61
    bh = add_verdicts(pd.DataFrame(rows, columns=COLS), multiplicity="bh")
    assert bh["verdict"][0] == "negligible" and "false-discovery rate" in bh["reason"][0]
    assert add_verdicts(pd.DataFrame(rows[:1], columns=COLS))["verdict"][0] == "small"


def test_user_thresholds_by_metric_and_topic():
    rows = [row("AccuracyDiff", "PCM", "female|male", -0.08, -0.12, -0.06, cls="all"),
            row("TPR-Diff", "PCM", "female|male", 0.08, 0.06, 0.10)]
    base = add_verdicts(pd.DataFrame(rows, columns=COLS))
    assert base["verdict"].tolist() == ["material", "material"]
    by_name = add_verdicts(pd.DataFrame(rows, columns=COLS), thresholds={"AccuracyDiff": 0.1})
    assert by_name["verdict"].tolist() == ["small", "material"] and by_name["threshold"][0] == 0.1
    by_topic = add_verdicts(pd.DataFrame(rows, columns=COLS), thresholds={"errors": 0.1})
    assert by_topic["verdict"].tolist() == ["small", "small"]
    both = add_verdicts(pd.DataFrame(rows, columns=COLS), thresholds={"errors": 0.1, "AccuracyDiff": 0.05})
    assert both["verdict"].tolist() == ["material", "small"]   # a metric's own value wins over its topic's


def test_error_control_downgrades_weak_material_claims():
    """Among many judged values, a material claim whose interval barely
    clears b does not survive the adjustment; a strong one does."""
    rows = [row("AccuracyDiff", "PCM", "a|b", 0.06, 0.001, 0.119, cls="all"),    # z about 2
            row("TPR-Diff", "PCM", "a|b", 0.30, 0.28, 0.32)]                     # z about 30
    rows += [row("TPR-Diff", "PCM", "a|b", 0.0, -0.02, 0.02, attribute=f"x{i}") for i in range(60)]
    out = add_verdicts(pd.DataFrame(rows, columns=COLS), multiplicity="holm")
    assert out["verdict"][0] == "inconclusive" and "family-wise error rate" in out["reason"][0]
    assert out["verdict"][1] == "material"
    assert out.attrs["intervals"]["method"] == "at most a 5% chance of any false claim (Holm over 62 values)"
    alone = add_verdicts(pd.DataFrame(rows[:1], columns=COLS))
    assert alone["verdict"][0] == "material"
    # hierarchical: 'a' vs 'b' of gender is one unit with both values; the strong one claims it (1 of 61
    # units), and the weak one is then tested within it at 5% x 1/61
    hier = add_verdicts(pd.DataFrame(rows, columns=COLS))
    assert hier["verdict"][:2].tolist() == ["inconclusive", "material"]
    assert "a difference is shown for 'a' vs 'b', but this value is not among its claims" in hier["reason"][0]
    assert "1 of 61 units claimed" in hier["reason"][0]
    assert (hier.attrs["intervals"]["units"], hier.attrs["intervals"]["selected"]) == (61, 1)


# ------------------------------------------------------------------ calibration
def _synthetic(effect_group: float, effect_cf: float, seed: int, n_templates=60, groups=("a", "b", "c", "d")):
    """Scored rows, 2 classes: each template has a base probability; group
    'a' is shifted by ``effect_group`` in the probability of 'pos' (a group
    effect seen by group and counterfactual metrics alike) and every member
    gets noise of sd ``effect_cf`` (tiny: no effect)."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_templates):
        base = rng.uniform(0.2, 0.8)
        label = "pos" if rng.random() < 0.5 else "neg"
        for g in groups:
            for k in range(2):
                p = base + (effect_group if g == "a" else 0.0) + rng.normal(0, effect_cf)
                p = float(np.clip(p, 0.01, 0.99))
                rows.append({"id": f"{t}-{g}-{k}", "template": f"t{t}", "attribute": "attr", "group": g,
                             "term": f"{g}{k}", "text": f"text {t} {g} {k}", "label": label,
                             "probs": {"neg": 1 - p, "pos": p}})
    return rows


CAL_METRICS = ["FNED", "TPR-Gap", "ParityGap", "AvgGF", "PosAEG", "FNR-Ratio", "BPSN", "CFGap", "AvgScoreDiff",
               "PertSS", "AvgIF"]


def _cal(effect_group, seed=0):
    from bias_suite.evaluation import evaluate

    return evaluate(_synthetic(effect_group, 0.005, seed), metrics=CAL_METRICS, bootstrap=100, seed=seed)


def test_calibration_null_data_has_no_material_verdicts():
    res = _cal(0.0)
    judged = res[res["verdict"].isin(VERDICTS)]
    assert len(judged) > 50
    assert (judged["verdict"] == "material").sum() == 0
    share = judged["verdict"].isin(["negligible", "small"]).mean()
    assert share > 0.6, judged["verdict"].value_counts()


def test_calibration_large_planted_effect_is_material_in_both_views():
    res = _cal(0.25)
    mat = res[res["verdict"] == "material"]
    assert {"group", "counterfactual"} <= set(mat["view"])
    assert {"CFGap", "AvgScoreDiff"} & set(mat["metric"])
    assert mat["group"].fillna("").str.contains("a").any()


def test_calibration_small_planted_effect_is_not_material():
    res = _cal(0.01)
    assert (res["verdict"] == "material").sum() == 0


def test_direction_follows_the_argument_order_of_d():
    from bias_suite.metrics import MetricSpec
    from bias_suite.stats.verdicts import direction_of

    # d(background, group) = background - group: a positive value means the group is lower
    bg_diff = MetricSpec("TPR-bgdiff", "VBCM", "group", "TPR", "diff", background="rest")
    assert direction_of(bg_diff, "signed", "f", "pos", [])[0] == "TPR lower for 'f' than the rest"
    # AEG(first, second) > 0: the second group's scores are higher
    aeg_pairs = MetricSpec("AEG-pairs", "PCM", "group", "prob", "AEG", "pairs")
    assert direction_of(aeg_pairs, "signed", "a|b", "pos", [])[0] == "probability of 'pos' lower for 'a' than 'b'"
    # named metrics: phi(group) / phi(rest), AEG(rest, group), first - second
    from bias_suite.metrics.catalog import get_metric
    assert direction_of(get_metric("FNR-Ratio"), "ratio", "f", "pos", [])[0] == "FNR higher for 'f' than the rest"
    assert direction_of(get_metric("PosAEG"), "signed", "f", "pos", [])[0] == "probability of 'pos' higher for 'f' than the rest"
    assert direction_of(get_metric("TPR-Diff"), "signed", "a|b", "pos", [])[0] == "TPR higher for 'a' than 'b'"


def test_evaluate_returns_results_with_summary_and_findings():
    import bias_suite as bs

    res = bs.evaluate(_synthetic(0.25, 0.005, 0), metrics=CAL_METRICS, bootstrap=100, seed=0)
    assert isinstance(res, bs.Results)
    ov = res.summary()
    assert {"attribute", "topic", "verdict", "effect"} <= set(ov.columns) and (ov["verdict"] == "material").any()
    top = res.findings("material", top=3)
    assert len(top) == 3 and (top["verdict"] == "material").all()
    assert list(top["effect"]) == sorted(top["effect"], reverse=True)
    assert isinstance(res[res["metric"] == "FNED"], bs.Results)  # still a Results after filtering
    assert res[res["metric"] == "FNED"].findings().shape[0] > 0


def _eight_groups(effect: float, seed: int = 0):
    """8 groups x 3 terms x 120 templates x 3 classes (2,880 rows). Every example gets its own noise
    (sd 0.05) in the probability of 'pos': swapping a term moves predictions at random, by about
    0.06, but no group is treated differently unless ``effect`` shifts group g0."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(120):
        base = rng.uniform(0.05, 0.95)
        label = ["neg", "neu", "pos"][rng.integers(3)]
        for g in range(8):
            for k in range(3):
                p = float(np.clip(base + (effect if g == 0 else 0.0) + rng.normal(0, 0.05), 0.01, 0.98))
                q = rng.uniform(0.2, 0.8) * (1 - p)
                rows.append({"id": f"{t}-{g}-{k}", "template": f"t{t}", "attribute": "attr", "group": f"g{g}",
                             "term": f"g{g}{k}", "text": f"text {t} {g} {k}", "label": label,
                             "probs": {"pos": p, "neu": float(q), "neg": float(1 - p - q)}})
    return rows


def test_calibration_random_term_sensitivity_is_not_a_group_bias():
    from bias_suite.evaluation import evaluate

    res = evaluate(_eight_groups(0.0))   # every metric, tests, Bernstein rows, B = 200: the defaults
    judged = res[res["verdict"].isin(VERDICTS[:4])]
    assert len(judged) > 1000
    counts = judged["verdict"].value_counts()
    assert counts.get("material", 0) == 0, judged[judged["verdict"] == "material"][["metric", "group", "reason"]]
    assert counts.get("small", 0) <= 0.01 * len(judged)
    # (with three terms per group resampled as well as the templates, the intervals also hold which terms a
    # group might have had: 35% negligible here, 54% with the templates alone)
    assert counts.get("negligible", 0) > 0.3 * len(judged)
    # the counterfactual distances are large (about 0.06-0.1) and still not evidence of a bias
    cf = res[(res["metric"] == "CFGap") & res["group"].notna()]
    assert (cf["value"] > 0.04).all() and not cf["verdict"].isin(["material", "small"]).any()
    iv = res.attrs["intervals"]
    assert iv["method"] == (f"at most a 5% chance that any group or pair is wrongly called different ({iv['units']} "
                            f"units); at most 5% of the values claimed within them false on average ({iv['family']} "
                            "values)")


def test_calibration_eight_groups_planted_effect():
    from bias_suite.evaluation import evaluate

    res = evaluate(_eight_groups(0.2), metrics=CAL_METRICS)
    mat = res[res["verdict"] == "material"]
    assert {"group", "counterfactual"} <= set(mat["view"])
    cf = mat[(mat["view"] == "counterfactual") & mat["group"].notna()]
    assert len(cf) and cf["group"].str.contains("g0").all()   # only pairs with the shifted group
    assert (evaluate(_eight_groups(0.01), metrics=CAL_METRICS)["verdict"] == "material").sum() == 0
    # every claim passed the error control (q <= 5%); a row whose interval excludes b but whose q does not
    # pass is demoted, and says so
    claims = res[res["verdict"].isin(["material", "small"])]
    sums = claims["group"].isna() & (claims["family"] != "significance")   # decided by their parts: no p
    assert sums.any() and claims.loc[sums, "q"].isna().all()
    claims = claims[~sums]
    assert len(claims) and (claims["q"] <= 0.05).all() and (claims["p"] <= claims["q"]).all()
    failed = res[res["q"] > 0.05]
    assert not failed["verdict"].isin(["material", "small"]).any()


def test_holm_reads_the_half_of_the_interval_that_faces_b():
    # FNR(group) / FNR(rest) = 0.038 with interval [0, 0.096]: the interval excludes 1 by far. On the log
    # scale its lower half is unbounded; the p-value comes from the upper half, which faces 1.
    rows = [row("FNR-Ratio", "VBCM", "male", 0.038, 0.0, 0.096)]
    rows += [row("TPR-Diff", "PCM", "a|b", 0.0, -0.02, 0.02, attribute=f"x{i}") for i in range(500)]
    out = add_verdicts(pd.DataFrame(rows, columns=COLS))
    assert out["verdict"][0] == "material", out["reason"][0]
    # a skewed interval that only just excludes b is still adjusted away
    rows[0] = row("FNR-Ratio", "VBCM", "male", 0.6, 0.0, 0.97)
    assert add_verdicts(pd.DataFrame(rows, columns=COLS))["verdict"][0] == "inconclusive"


# ------------------------------------------------------------------ what a verdict rests on
def test_round_off_is_no_effect():
    # group means over 3 terms and over 1 term differ by about 1e-17: that is no difference
    d = decide(7e-18, 5e-18, 1.1e-17, kind="signed", tau=0.05)
    assert d["verdict"] == "negligible" and d["effect"] == 0
    # an interval that ends at -tau up to round-off lies within +-tau
    assert decide(0.0, -0.05000000000000004, 0.02, kind="signed", tau=0.05)["verdict"] == "negligible"


def test_the_same_effect_in_every_template_is_material():
    # a deterministic model that shifts one group by 0.3 in every template: every resample repeats
    # the value, and that consistency is the strongest evidence there is (a value resting on few
    # templates is caught by the event count, not by the interval's width)
    d = decide(0.3, 0.3, 0.3, kind="signed", tau=0.05, df=9)
    assert d["verdict"] == "material" and d["p"] == 0.0


def test_p_values_read_student_t_with_the_clusters():
    # the same interval is weaker evidence with 6 templates than with many
    few = decide(0.1, 0.01, 0.19, kind="signed", tau=0.05, df=5)
    many = decide(0.1, 0.01, 0.19, kind="signed", tau=0.05)
    assert few["p"] > many["p"] and abs(many["p"] - 2 * (1 - 0.985)) < 0.01


def test_duplicated_values_count_once_in_the_family():
    # FNED and FNED* of a group are one hypothesis; so are a|b in two classes of a binary task
    rows = [row("TPR-Gap", "PCM", "a|b", 0.08, 0.05, 0.11), row("TNR-Gap", "PCM", "a|b", 0.08, 0.05, 0.11),
            row("TPR-Gap", "PCM", "a|b", 0.08, 0.05, 0.11, cls="neg")]
    out = add_verdicts(pd.DataFrame(rows, columns=COLS))
    assert out.attrs["intervals"]["family"] == 1 and (out["verdict"] == "material").all()


def _one_template_false_positives(n_templates=30):
    """Two groups, every template of gold 'neg' with both groups predicted 'neg', except one
    template where group 'a' is predicted 'pos': all false positives of 'a' come from it."""
    rows = []
    for t in range(n_templates):
        label = ["neg", "pos"][t % 2]
        for g in ("a", "b"):
            for k in range(3):
                pos = 0.9 if label == "pos" else (0.8 if (t == 0 and g == "a") else 0.1 + 0.01 * k)
                if t == 2 and g == "b" and k == 0:
                    pos = 0.7  # one false positive of 'b' too, so the ratio is defined
                rows.append({"id": f"{t}-{g}-{k}", "template": f"t{t}", "attribute": "x", "group": g,
                             "term": f"{g}{k}", "text": f"{t} {g} {k}", "label": label,
                             "probs": {"neg": 1 - pos, "pos": pos}})
    return rows


def test_a_rate_resting_on_one_template_is_inconclusive():
    from bias_suite.evaluation import evaluate

    res = evaluate(_one_template_false_positives(), metrics=["FPR-Ratio", "FPED"])
    fpr = res[(res["metric"] == "FPR-Ratio") & (res["class"] == "pos")]
    assert len(fpr) and (fpr["verdict"] == "inconclusive").all(), fpr[["group", "value", "verdict", "reason"]]
    assert fpr["reason"].str.contains("rests on events in only 1 template").all()


def test_no_events_is_no_evidence():
    # nothing is ever a false positive: FPED is 0 [0, 0], which says nothing about the groups
    from bias_suite.evaluation import evaluate

    rows = [dict(r, probs={"neg": 0.9, "pos": 0.1} if r["label"] == "neg" else r["probs"])
            for r in _one_template_false_positives()]
    res = evaluate(rows, metrics=["FPED"])
    fped = res[(res["metric"] == "FPED") & (res["class"] == "pos") & res["group"].notna()]
    assert (fped["value"] == 0).all() and (fped["verdict"] == "inconclusive").all()
    assert fped["reason"].str.contains("no evidence either way").all()


def test_an_interval_without_events_is_the_exact_paired_bound():
    # no false positive in any of the 15 gold-'neg' templates: the bootstrap gives [0, 0]; no template
    # treats the sides differently, so the interval is the exact paired bound from 0 differing templates
    # of 15: the one-sided 95% Clopper-Pearson upper bound 1 - 0.05^(1/15) on their share (each template
    # carries 1/15 of the rate)
    from bias_suite.evaluation import evaluate

    rows = [dict(r, probs={"neg": 0.9, "pos": 0.1} if r["label"] == "neg" else r["probs"])
            for r in _one_template_false_positives()]
    res = evaluate(rows, metrics=["FPED"])
    fped = res[(res["metric"] == "FPED") & (res["class"] == "pos") & res["group"].notna()]
    bound = 1 - 0.05 ** (1 / 15)
    assert bound == pytest.approx(0.1810, abs=1e-4)
    assert len(fped) == 2
    for r in fped.itertuples():
        assert r.ci_low == 0 and r.ci_high == pytest.approx(bound, rel=1e-9)
        assert r.verdict == "inconclusive" and "no evidence either way" in r.reason
        assert "exact paired bound (the sides differ in 0 of 15 templates; events in 0)" in r.note


def test_rank_tests_see_round_off_as_ties():
    from bias_suite.stats.significance import block_test

    x = np.array([[0.3, 0.3 + 1e-16], [0.5, 0.5 - 2e-17], [0.2, 0.2 + 3e-17]] * 5)
    assert block_test(x)["pvalue"] is None and "zero" in block_test(x)["note"]
    y = np.column_stack([x, x[:, :1] - 1e-17])
    assert block_test(y)["pvalue"] is None


def test_reasons_name_the_class_they_are_about():
    from bias_suite.evaluation import evaluate

    res = evaluate(_eight_groups(0.3), metrics=["CFGap-TC", "AvgScoreDiff"])
    mat = res[(res["verdict"] == "material") & res["group"].notna()]
    assert len(mat)
    for cls, reason in zip(mat["class"], mat["reason"]):
        assert f"probability of '{cls}'" in reason, (cls, reason)


# ------------------------------------------------------------------ the error control's structure
def test_simes_by_hand():
    from bias_suite.stats.multiplicity import simes

    # sorted 0.01, 0.03, 0.04, 0.5 with m = 4: 0.04, 0.06, 0.0533, 0.5 -> 0.04
    assert simes([0.01, 0.04, 0.03, 0.5]) == pytest.approx(0.04)
    assert simes([0.2]) == 0.2 and simes([]) == 1.0
    # many moderate signals together are stronger evidence than the best one alone (Bonferroni: 0.06)
    assert simes([0.02, 0.02, 0.02]) == pytest.approx(0.02)


def test_hierarchical_by_hand():
    """Units A, B, C, D. Simes: A 0.003, B 0.004, C 0.4, D 0.9; Holm over the
    4 units: 0.012, 0.012, 0.8, 0.9, so R = 2 units are claimed and rows are
    tested within them at 5% x 2/4 = 0.025: A's BH q-values 0.003, 0.03,
    0.3 give one claim, B's 0.004 one."""
    from bias_suite.stats.multiplicity import control

    p = [0.001, 0.02, 0.3, 0.004, 0.2, 0.5, 0.9]
    units = ["A", "A", "A", "B", "C", "C", "D"]
    got = control(p, units)
    assert (got.m, got.units, got.selected) == (7, 4, 2) and got.level == pytest.approx(0.025)
    np.testing.assert_allclose(got.unit_adjusted, [0.012, 0.012, 0.012, 0.012, 0.8, 0.8, 0.9])
    assert got.claimed.tolist() == [True, False, False, True, False, False, False]
    # the adjusted value is claimed iff it is at most alpha: 0.03 x 4/2 = 0.06 for A's second row
    np.testing.assert_allclose(got.adjusted[:4], [0.012, 0.06, 0.6, 0.012])
    assert (got.claimed == (got.adjusted <= 0.05)).all()
    # over all seven values: Holm claims the two smallest, BH three
    assert control(p, method="holm").claimed.sum() == 2 and control(p, method="bh").claimed.sum() == 3


def test_hierarchical_steps_down_over_units():
    from bias_suite.stats.multiplicity import control

    # Holm over units 0.01, 0.02, 0.03: 0.03, 0.04, 0.04 (Bonferroni would stop after the first)
    got = control([0.01, 0.02, 0.03], ["a", "b", "c"])
    np.testing.assert_allclose(got.unit_adjusted, [0.03, 0.04, 0.04])
    assert got.claimed.all() and got.selected == 3 and got.level == pytest.approx(0.05)


def test_hierarchical_tests_rows_at_the_selective_level():
    """One of four units claimed: its rows are tested at 5% x 1/4 = 0.0125."""
    from bias_suite.stats.multiplicity import control

    units = ["A", "A", "B", "C", "D"]
    got = control([0.001, 0.012, 0.6, 0.7, 0.8], units)
    assert got.selected == 1 and got.claimed.tolist() == [True, True, False, False, False]
    got = control([0.001, 0.013, 0.6, 0.7, 0.8], units)   # BH q 0.013 > 0.0125
    assert got.claimed.tolist() == [True, False, False, False, False]
    # Simes 0.012, Holm over units 0.048: claimed; BH within gives 0.012 and 0.012, Holm 0.016 and 0.016
    assert control([0.008, 0.012, 0.6, 0.7, 0.8], units).claimed.tolist() == [True, True, False, False, False]
    assert not control([0.008, 0.012, 0.6, 0.7, 0.8], units, within="holm").claimed.any()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 4)), min_size=1, max_size=25),
       st.integers(0, 24), st.floats(0, 1), st.sampled_from(["hierarchical", "holm", "bh"]),
       st.sampled_from(["bh", "holm"]))
def test_never_claims_more_when_a_p_value_grows(rows, which, grow, method, within):
    from bias_suite.stats.multiplicity import control

    p = np.array([x for x, _ in rows])
    units = [u for _, u in rows]
    i = which % len(p)
    bigger = p.copy()
    bigger[i] = p[i] + (1 - p[i]) * grow
    before = control(p, units, method=method, within=within).claimed
    after = control(bigger, units, method=method, within=within).claimed
    assert not (after & ~before).any()          # nothing newly claimed, anywhere
    assert not control(np.ones(len(p)), units, method=method, within=within).claimed.any()


def _friedman_rows(p, attribute="gender", n=40):
    rows = [row("Friedman", "significance", None, 12.0, n=n, attribute=attribute, view="counterfactual"),
            row("Friedman-p", "significance", None, p, n=n, attribute=attribute, view="counterfactual"),
            row("Friedman-W", "significance", None, 0.15, n=n, attribute=attribute, view="counterfactual"),
            row("Friedman-p-holm", "significance", None, p, n=n, attribute=attribute, view="counterfactual")]
    return rows


@pytest.mark.parametrize("multiplicity", ["hierarchical", "holm", "bh"])
def test_significance_tests_share_the_error_control_of_every_value(multiplicity):
    """A Friedman test with p = 0.004 is a claim beside 5 null values
    (0.004 x 6 < 0.05), not beside 40 (0.004 x 41): its p-value is adjusted
    with every value judged, not only among the tests."""
    orders = {"gender": ["a", "b", "c"]}
    few = _friedman_rows(0.004) + [row("TPR-Diff", "PCM", "a|b", 0.0, -0.02, 0.02, attribute=f"x{i}") for i in range(5)]
    out = add_verdicts(pd.DataFrame(few, columns=COLS), group_orders=orders, multiplicity=multiplicity)
    test = out[out["metric"] == "Friedman-p-holm"].iloc[0]
    assert test["verdict"] == "small" and out.attrs["intervals"]["family"] == 6
    many = _friedman_rows(0.004) + [row("TPR-Diff", "PCM", "a|b", 0.0, -0.02, 0.02, attribute=f"x{i}")
                                    for i in range(40)]
    out = add_verdicts(pd.DataFrame(many, columns=COLS), group_orders=orders, multiplicity=multiplicity)
    test = out[out["metric"] == "Friedman-p-holm"].iloc[0]
    assert test["verdict"] == "inconclusive" and "41 values" in test["reason"], test["reason"]
    if multiplicity == "hierarchical":
        assert "the groups of 'gender' (significance)" in test["reason"] and "41 units" in test["reason"]


def test_one_default_error_control_everywhere():
    """Python (evaluate, run, add_verdicts) and the command line default to
    the same error control."""
    import inspect

    from bias_suite.cli import evaluate_cmd, run_cmd
    from bias_suite.evaluation import evaluate
    from bias_suite.comparison import compare
    from bias_suite.options import RunOptions
    from bias_suite.stats.verdicts import DEFAULT_MULTIPLICITY, MULTIPLICITY

    assert DEFAULT_MULTIPLICITY == "hierarchical" and set(MULTIPLICITY) == {"hierarchical", "holm", "bh"}
    assert RunOptions().multiplicity == DEFAULT_MULTIPLICITY
    for fn in (evaluate, add_verdicts):
        assert inspect.signature(fn).parameters["multiplicity"].default == DEFAULT_MULTIPLICITY
    # compare takes the runs' error control, else the same default
    from bias_suite.options import INHERIT, EvaluationOptions

    assert inspect.signature(compare).parameters["multiplicity"].default is INHERIT
    assert EvaluationOptions().multiplicity == DEFAULT_MULTIPLICITY
    for fn in (run_cmd.run, evaluate_cmd.evaluate):
        assert inspect.signature(fn).parameters["multiplicity"].default.default == DEFAULT_MULTIPLICITY


def test_a_widened_interval_is_the_hull_and_keeps_an_absolute_value_non_negative():
    from bias_suite.stats.bootstrap import intervals
    from bias_suite.stats.evidence import PairedBound

    pb = PairedBound("abs", -0.05, 0.07, 40, 1, 1.0, 0.1, "'pos' templates", 0.05)
    assert intervals.hull(0.01, 0.03, pb) == pytest.approx((-0.05, 0.07))
    assert intervals.hull(0.01, 0.03, pb, absolute=True) == pytest.approx((0.0, 0.07))
    assert intervals.hull(-0.2, 0.3, pb) == pytest.approx((-0.2, 0.3))  # already wider
    ratio = PairedBound("log", 0.8, 1.3, 80, 0, 0.5, 0.0, "'pos' templates", 0.05)
    assert intervals.hull(1.0, 1.0, ratio) == pytest.approx((0.8, 1.3))


def test_a_ratio_is_tested_by_the_difference_of_the_same_rates():
    """FPR(a) / FPR(rest) = 1 exactly when FPR(a) = FPR(all): FPR-Ratio and FPED of one group and class
    test one hypothesis, once, by the difference (which rests on both sides' events). The ratio's own
    test, on its weaker side's 6 event templates (t with 5 df), gives p = 0.03: not enough for Holm over
    41 values; the difference's p is far smaller, so the ratio, whose interval excludes 1, is material."""
    def basis_row(metric, group, cls, events, value=None, lo=None, hi=None):
        return dict(metric=metric, attribute="gender", **{"class": cls}, group=group, undefined=0.0, templates=150,
                    event_templates=events, B=200, confidence=0.95, basis_value=value, basis_low=lo, basis_high=hi)

    fillers = [row("AccuracyDiff", "PCM", f"c|d{i}", 0.01, -0.02, 0.04, cls="all") for i in range(40)]
    ratio = row("FPR-Ratio", "VBCM", "a", 2.0, 1.3, 3.8)
    other = row("FPR-Ratio", "VBCM", "a", 2.0, 1.3, 3.8, cls="neg")   # no FPED of this class: its own test
    fped = row("FPED", "BCM", "a", 0.1, 0.07, 0.13)
    basis = pd.DataFrame([basis_row("FPR-Ratio", "a", "pos", 6), basis_row("FPR-Ratio", "a", "neg", 6),
                          basis_row("FPED", "a", "pos", 40, 0.1, 0.07, 0.13)])
    out = add_verdicts(pd.DataFrame([ratio, other, fped] + fillers, columns=COLS), basis=basis, multiplicity="holm")
    assert out.attrs["intervals"]["family"] == 42   # FPED (with its ratio), the other class's ratio, 40 fillers
    assert out["verdict"][0] == "material" and out["verdict"][2] == "material"
    assert out["verdict"][1] == "inconclusive" and "Holm" in out["reason"][1]
    assert "tested by" not in out["reason"][1]
    # a weak difference: the ratio is demoted with it, and says which test it had
    weak = pd.DataFrame([basis_row("FPR-Ratio", "a", "pos", 6), basis_row("FPED", "a", "pos", 40, 0.1, 0.01, 0.19)])
    out = add_verdicts(pd.DataFrame([ratio, fped] + fillers, columns=COLS), basis=weak, multiplicity="holm")
    assert out["verdict"][0] == "inconclusive" and "(tested by FPED, the difference of the same rates)" in out["reason"][0]
    # the ratio alone keeps its own test
    alone = add_verdicts(pd.DataFrame([ratio] + fillers, columns=COLS), basis=basis, multiplicity="holm")
    assert alone.attrs["intervals"]["family"] == 41 and alone["verdict"][0] == "inconclusive"
    # FNR-Ratio and FNED test FNR; a pair's TPR-Gap and TPR-Diff, F1-Ratio and DisparityScore one rate each
    from bias_suite.metrics.catalog import get_metric
    from bias_suite.stats.multiplicity import rate_null

    assert rate_null(get_metric("FNR-Ratio"), "x", "pos", "a") == rate_null(get_metric("FNED"), "x", "pos", "a")
    assert rate_null(get_metric("FNR-Ratio"), "x", "pos", "a") != rate_null(get_metric("FPED"), "x", "pos", "a")
    assert rate_null(get_metric("TPR-Gap"), "x", "pos", "b|a") == rate_null(get_metric("TPR-Diff"), "x", "pos", "a|b")
    assert rate_null(get_metric("F1-Ratio"), "x", "pos", "a|b") == rate_null(get_metric("DisparityScore"), "x", "pos", "b|a")
    for name in ("PosAEG", "CFGap", "BPSN", "AvgGF"):
        assert rate_null(get_metric(name), "x", "pos", "a|b" if name == "CFGap" else "a") is None
    # a user's metric on a built-in rate says something else unless it compares by a difference or ratio
    from bias_suite.metrics.catalog import MetricSpec

    own = MetricSpec("FPR-Own", "VBCM", "group", "FPR", "value", background="rest")
    odds = MetricSpec("FPR-Odds", "VBCM", "group", "FPR", lambda bg, g: (g / (1 - g)) / (bg / (1 - bg)), background="rest")
    gap = MetricSpec("FPR-Gap-Rest", "VBCM", "group", "FPR", "diff", background="rest")
    assert rate_null(own, "x", "pos", "a") is None and rate_null(odds, "x", "pos", "a") is None
    assert rate_null(gap, "x", "pos", "a") == rate_null(get_metric("FPR-Ratio"), "x", "pos", "a")


def test_a_rate_that_is_not_a_proportion_gets_no_paired_bound():
    """A tagger's positive rate counts predicted spans per sentence and can pass 1: a bound on the share
    of differing templates means nothing there, so its rows get no paired bound (and no warning), while
    the same data with at most one span per sentence does: a has the span and b not in 2 of the 6
    templates (the second and third), and never the other way, so the difference lies in
    [-U(0, 6), U(2, 6)]: U(0, 6) = 1 - 0.05^(1/6) = 0.3930, and U(2, 6) = 0.7287, the p with
    (1 - p)^6 + 6 p (1 - p)^5 + 15 p^2 (1 - p)^4 = 0.05."""
    import types
    import warnings

    from bias_suite.metrics.catalog import get_metric
    from bias_suite.stats.evidence import paired_bounds, upper_share

    def attribute_data(pp):
        g = np.tile([0, 1], 6)
        counts = {"pp": np.asarray(pp, float), "n": np.ones(12)}
        return types.SimpleNamespace(groups=["a", "b"], classes=["PER"], k=2, g=g,
                                     pairs=lambda: [(0, 1)], class_counts=lambda c: counts)

    tpl = np.repeat(np.arange(6), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spans = paired_bounds(get_metric("ParityGap"), attribute_data([2, 1, 1, 0, 2, 2, 1, 1, 0, 0, 1, 2]), tpl, 6)
        once = paired_bounds(get_metric("ParityGap"), attribute_data([1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1]), tpl, 6)
    assert spans == {}
    pb = once[("PER", "a|b")]
    assert (pb.scale, pb.n, pb.differing, pb.c) == ("abs", 6, 2, pytest.approx(1.0))
    p = float(upper_share(2, 6, 0.05))
    assert p == pytest.approx(0.7287, abs=1e-4) and (1 - p) ** 6 + 6 * p * (1 - p) ** 5 + 15 * p ** 2 * (1 - p) ** 4 \
        == pytest.approx(0.05)
    assert (pb.low, pb.high) == (pytest.approx(-0.3930, abs=1e-4), pytest.approx(0.7287, abs=1e-4))
