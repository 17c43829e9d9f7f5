"""Verdict logic (bias_suite.stats.verdicts) on hand-made intervals."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bias_suite.stats.bernstein import sample_size
from bias_suite.stats.verdicts import (
    add_verdicts, bernstein_verdict, judge, metric_verdict, no_bias_reference, significance_verdict,
)

COLS = ["metric", "family", "view", "attribute", "class", "group", "value", "ci_low", "ci_high", "n", "note"]


def row(metric, family, group, value, lo=None, hi=None, n=500, cls="pos", view="group", note=None, attribute="gender"):
    return dict(metric=metric, family=family, view=view, attribute=attribute, **{"class": cls}, group=group,
                value=value, ci_low=lo, ci_high=hi, n=n, note=note)


# ------------------------------------------------------------------ judge
@pytest.mark.parametrize("lo,hi,expected", [
    (0.02, 0.10, "higher"), (-0.10, -0.01, "lower"), (-0.03, 0.04, "no_evidence"), (-0.08, 0.12, "wide"),
    (0.0, 0.1, "wide"),  # touching 0 is not excluding it
])
def test_judge_signed(lo, hi, expected):
    assert judge(lo, hi, kind="signed") == expected


@pytest.mark.parametrize("lo,hi,expected", [
    (1.05, 1.6, "higher"), (0.5, 0.9, "lower"), (0.85, 1.2, "no_evidence"), (0.7, 1.3, "wide"),
])
def test_judge_ratio(lo, hi, expected):
    assert judge(lo, hi, kind="ratio", ratio_tolerance=1.25) == expected


@pytest.mark.parametrize("lo,hi,expected", [
    (0.06, 0.2, "at_least"), (0.001, 0.04, "no_evidence"), (0.01, 0.09, "wide"),
])
def test_judge_unsigned_uses_the_tolerance_not_zero(lo, hi, expected):
    # an absolute value's interval never contains 0, yet (0.001, 0.04) is no evidence of bias
    assert judge(lo, hi, kind="unsigned", tolerance=0.05) == expected


def test_judge_without_interval():
    assert judge(None, 0.2) is None and judge(np.nan, 0.2) is None


def test_no_bias_reference_by_metric():
    assert no_bias_reference("FNR-Ratio") == ("ratio", 1.0)
    assert no_bias_reference("F1-Ratio") == ("ratio", 1.0)
    assert no_bias_reference("BPSN")[0] == "auc"
    assert no_bias_reference("SubgroupAUC")[0] == "auc"
    assert no_bias_reference("PosAEG") == ("signed", 0.0)
    assert no_bias_reference("AccuracyDiff") == ("signed", 0.0)
    assert no_bias_reference("FNED") == ("unsigned", 0.0)
    assert no_bias_reference("AvgGF") == ("unsigned", 0.0)
    assert no_bias_reference("PertSD") == ("unsigned", 0.0)


# ------------------------------------------------------------ metric rows
def test_signed_detected_with_direction():
    v, note = metric_verdict(0.06, 0.02, 0.10, kind="signed", n=400,
                             direction=("accuracy higher for 'female' than 'male'", "accuracy lower for 'female' than 'male'"))
    assert v == "bias detected: accuracy higher for 'female' than 'male'" and note is None
    v, _ = metric_verdict(-0.06, -0.10, -0.02, kind="signed", n=400, direction=("up", "down"))
    assert v == "bias detected: down"


def test_no_evidence_wording_is_careful():
    v, _ = metric_verdict(0.01, -0.02, 0.03, kind="signed", n=400)
    assert v.startswith("no evidence of bias at 95%") and "not proof of no bias" in v
    assert not v.startswith("no bias")


def test_too_little_data_gives_the_bernstein_sample_size():
    v, note = metric_verdict(0.03, -0.08, 0.12, kind="signed", n=400)
    assert v.startswith("too little data")
    assert f"about {sample_size(0.03).n} examples needed to detect a bias of 0.03" in v and "n = 400" in v
    assert "gamma = 0.5" in note and "sigma^2 = (C/gamma)^2 = 4" in note and "C = 1" in note
    # observed effect 0: the tolerance is the bias to detect
    v, _ = metric_verdict(0.0, -0.1, 0.1, kind="signed", n=400, tolerance=0.05)
    assert f"about {sample_size(0.05).n} examples" in v and str(sample_size(0.05).n) == "11903"


def test_unsigned_uses_the_signed_basis_when_there_is_one():
    # |FNR(group) - FNR(all)| = 0.04 with interval (0.005, 0.09): excluded 0 only because of the absolute value
    v, _ = metric_verdict(0.04, 0.005, 0.09, kind="unsigned", n=300, basis_value=-0.04, basis_low=-0.09,
                          basis_high=0.03, direction=("FNR higher for 'f' than all examples", "FNR lower for 'f' than all examples"))
    assert v.startswith("too little data") and "signed difference interval" in v
    v, _ = metric_verdict(0.07, 0.03, 0.11, kind="unsigned", n=300, basis_value=-0.07, basis_low=-0.11,
                          basis_high=-0.03, direction=("FNR higher for 'f' than all examples", "FNR lower for 'f' than all examples"))
    assert v == "bias detected: FNR lower for 'f' than all examples"


def test_unsigned_without_basis_minimum_effect_rule():
    v, _ = metric_verdict(0.2, 0.15, 0.25, kind="unsigned", what="the difference between 'a' and 'b'")
    assert v.startswith("bias detected: the difference between 'a' and 'b' is at least 0.05")
    v, _ = metric_verdict(0.02, 0.01, 0.03, kind="unsigned")
    assert v.startswith("no evidence of bias") and "at or below the tolerance 0.05" in v


def test_ratio_verdicts():
    d = ("FNR higher for 'f' than the rest", "FNR lower for 'f' than the rest")
    assert metric_verdict(1.4, 1.1, 1.8, kind="ratio", direction=d, n=300)[0] == "bias detected: " + d[0]
    v, _ = metric_verdict(1.02, 0.9, 1.1, kind="ratio", direction=d, n=300)
    assert v.startswith("no evidence") and "[0.8, 1.25]" in v
    assert metric_verdict(1.1, 0.7, 1.6, kind="ratio", direction=d, n=300)[0].startswith("too little data")


def test_auc_verdicts_use_the_contrast_to_the_overall_auc():
    d = ("AUC higher for 'f' than for all examples", "AUC lower for 'f' than for all examples")
    # AUC 0.80 [0.75, 0.85] excludes 0.5 but is not below the overall AUC: no bias verdict from 0.5
    v, _ = metric_verdict(0.80, 0.75, 0.85, kind="auc", direction=d, n=300, basis_value=-0.01, basis_low=-0.04,
                          basis_high=0.02)
    assert v.startswith("no evidence") and "AUC(group) - AUC(all)" in v
    v, _ = metric_verdict(0.70, 0.65, 0.75, kind="auc", direction=d, n=300, basis_value=-0.1, basis_low=-0.15,
                          basis_high=-0.05)
    assert v == "bias detected: " + d[1]
    assert metric_verdict(0.80, 0.75, 0.85, kind="auc", direction=d, n=300) == (None, None)  # no contrast, no verdict


def test_small_n_and_few_templates_are_too_little_data():
    v, _ = metric_verdict(0.3, 0.1, 0.5, kind="signed", n=8)
    assert v.startswith("too little data: only 8 examples")
    v, _ = metric_verdict(0.3, 0.1, 0.5, kind="signed", n=800, templates=3)
    assert v.startswith("too little data: only 3 templates")
    v, _ = metric_verdict(0.3, None, None, kind="signed", n=800, undefined=0.7)
    assert v.startswith("too little data: undefined in 70%")
    assert metric_verdict(None, 0.1, 0.2, kind="signed") == (None, None)


# ---------------------------------------------------------- significance
def test_holm_verdicts_for_significance_rows():
    rows = [
        row("Wilcoxon", "significance", None, 10.0, n=20, view="counterfactual"),
        row("Wilcoxon-p", "significance", None, 0.004, n=20, view="counterfactual"),
        row("Wilcoxon-r", "significance", None, -0.6, n=20, view="counterfactual"),
        row("Wilcoxon-p-holm", "significance", None, 0.012, n=20, view="counterfactual"),
        row("Wilcoxon", "significance", None, 30.0, n=20, cls="neg", view="counterfactual"),
        row("Wilcoxon-p", "significance", None, 0.03, n=20, cls="neg", view="counterfactual"),
        row("Wilcoxon-r", "significance", None, 0.3, n=20, cls="neg", view="counterfactual"),
        row("Wilcoxon-p-holm", "significance", None, 0.06, n=20, cls="neg", view="counterfactual"),
        row("Wilcoxon-p", "significance", None, 0.125, n=4, attribute="tiny", view="counterfactual"),
        row("Wilcoxon-p-holm", "significance", None, 0.25, n=4, attribute="tiny", view="counterfactual"),
    ]
    out = add_verdicts(pd.DataFrame(rows, columns=COLS), group_orders={"gender": ["female", "male"]})
    v = dict(zip(zip(out["attribute"], out["class"], out["metric"]), out["verdict"]))
    # only the adjusted p row is judged
    assert v[("gender", "pos", "Wilcoxon-p")] is None and v[("gender", "pos", "Wilcoxon")] is None
    # r < 0: the second group scores higher; raw p 0.004 < 0.05 and Holm-adjusted 0.012 < 0.05
    assert v[("gender", "pos", "Wilcoxon-p-holm")].startswith("bias detected: scores higher for 'male' than 'female'")
    assert "Holm-adjusted p = 0.012" in v[("gender", "pos", "Wilcoxon-p-holm")]
    # raw p 0.03 < 0.05 but Holm-adjusted 0.06 is not: the adjusted value decides
    assert v[("gender", "neg", "Wilcoxon-p-holm")].startswith("no evidence of bias at 95%")
    # 4 templates: the exact two-sided Wilcoxon p is at least 2/16 = 0.125
    assert v[("tiny", "pos", "Wilcoxon-p-holm")] == (
        "too little data: with 4 templates the Wilcoxon test cannot reach p < 0.05 (needs at least 6)")


def test_friedman_minimum_p_uses_the_number_of_groups():
    # k = 3 groups, n = 3 templates: chi2.sf(3 * 2, 2) = exp(-3) = 0.0498 < 0.05, so n = 3 can decide
    assert significance_verdict(0.3, test="Friedman", n=3, k=3).startswith("no evidence")
    assert significance_verdict(0.5, test="Friedman", n=2, k=3).startswith("too little data")
    assert significance_verdict(0.001, test="Friedman", n=30, k=4).startswith("bias detected: group scores differ")
    assert significance_verdict(None, test="Friedman", n=30, k=4) is None


# -------------------------------------------------------------- Bernstein
def test_bernstein_verdicts():
    v, _ = bernstein_verdict(0.08, 0.02, 0.14, preset="EqualOpportunity", group="female", cls="pos", n=5000)
    assert v == "bias detected: lower true-positive rate for 'female' than the rest"
    v, _ = bernstein_verdict(-0.05, -0.09, -0.01, preset="DemographicParity", group="female", cls="pos", n=5000)
    assert v == "bias detected: predicted 'pos' more often for 'female' than the rest"
    v, note = bernstein_verdict(0.03, -0.05, 0.11, preset="FalsePositiveParity", group="f", cls="pos", n=900,
                                needed=23456.7)
    assert v == "too little data: more than 23456 examples needed for |δ̄| = 0.03; n = 900" and "estimated" in note


# -------------------------------------------------------------- add_verdicts
def test_add_verdicts_on_a_results_table():
    rows = [
        row("FNED", "BCM", "female", 0.07, 0.03, 0.11),
        row("FNED", "BCM", "male", 0.02, 0.001, 0.05),
        row("FNED", "BCM", None, 0.09, 0.04, 0.14),
        row("FNR-Ratio", "VBCM", "female", 1.5, 1.1, 2.0),
        row("CFGap", "PCM", "female|male", 0.01, 0.005, 0.02, view="counterfactual"),
        row("AccuracyDiff", "PCM", "female|male", -0.08, -0.12, -0.03, cls="all"),
        row("AccuracyDiff", "PCM", None, -0.08, -0.12, -0.03, cls="all"),
        row("BPSN", "VBCM", "female", 0.7, 0.6, 0.8),
        row("Bernstein-EqualOpportunity", "bernstein", "female", 0.01, -0.1, 0.12, n=400),
        row("Bernstein-EqualOpportunity-SampleSize", "bernstein", "female", 50000.0, n=400),
        row("FPED", "BCM", "female", None, note="FPR undefined"),
        row("invariance", "invariance", None, 0.1),
    ]
    basis = pd.DataFrame([
        dict(metric="FNED", attribute="gender", **{"class": "pos"}, group="female", undefined=0.0, templates=30, B=200,
             confidence=0.95, basis="FNR(group) - FNR(all)", basis_value=0.07, basis_low=0.03, basis_high=0.11),
        dict(metric="FNED", attribute="gender", **{"class": "pos"}, group="male", undefined=0.0, templates=30, B=200,
             confidence=0.95, basis="FNR(group) - FNR(all)", basis_value=-0.02, basis_low=-0.05, basis_high=0.01),
    ])
    out = add_verdicts(pd.DataFrame(rows, columns=COLS), basis=basis)
    assert list(out.columns) == COLS + ["verdict"]
    v = out["verdict"].tolist()
    assert v[0] == "bias detected: FNR higher for 'female' than all examples"
    assert v[1].startswith("no evidence of bias at 95%")
    # accumulated FNED (N = 1, 2 groups): tolerance 0.05 * 2 / 1 = 0.1, interval (0.04, 0.14) straddles it
    assert v[2].startswith("too little data")
    assert v[3] == "bias detected: FNR higher for 'female' than the rest"
    assert v[4].startswith("no evidence")  # CFGap: 0.005..0.02 below the tolerance
    assert v[5] == "bias detected: accuracy lower for 'female' than 'male'"
    assert v[6] == "bias detected: accuracy lower for 'female' than 'male'"  # direction from the pair row
    assert v[7] is None  # AUC without its contrast: no verdict (0.5 is chance, not the no-bias value)
    assert v[8] == "too little data: more than 50000 examples needed for |δ̄| = 0.01; n = 400"
    assert v[9] is None and v[10] is None and v[11] is None
    assert out["note"].iloc[10] == "FPR undefined"
    # an existing verdict is kept; no verdict says "no bias"
    again = add_verdicts(out.assign(verdict=["kept"] + [None] * (len(out) - 1)), basis=basis)
    assert again["verdict"].iloc[0] == "kept" and list(again.columns) == COLS + ["verdict"]
    assert not any(isinstance(x, str) and x.lower().startswith("no bias") for x in v)


def test_direction_follows_the_argument_order_of_d():
    from bias_suite.metrics import MetricSpec
    from bias_suite.stats.verdicts import _direction

    # d(background, group) = background - group: a positive value means the group is lower
    bg_diff = MetricSpec("TPR-bgdiff", "VBCM", "group", "TPR", "diff", background="rest")
    assert _direction(bg_diff, "signed", "f", "pos", [])[0] == "TPR lower for 'f' than the rest"
    # AEG(first, second) > 0: the second group's scores are higher
    aeg_pairs = MetricSpec("AEG-pairs", "PCM", "group", "prob", "AEG", "pairs")
    assert _direction(aeg_pairs, "signed", "a|b", "pos", [])[0] == "prob lower for 'a' than 'b'"
    # named metrics: phi(group) / phi(rest), AEG(rest, group), first - second
    from bias_suite.metrics.catalog import get_metric
    assert _direction(get_metric("FNR-Ratio"), "ratio", "f", "pos", [])[0] == "FNR higher for 'f' than the rest"
    assert _direction(get_metric("PosAEG"), "signed", "f", "pos", [])[0] == "probability of 'pos' higher for 'f' than the rest"
    assert _direction(get_metric("TPR-Diff"), "signed", "a|b", "pos", [])[0] == "TPR higher for 'a' than 'b'"
