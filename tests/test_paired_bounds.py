"""The exact paired bound of rate comparisons (bias_suite.stats.evidence.
paired_bounds): hand-computed small cases, invariants on random data, and
the verdicts it gives on data whose groups share every prediction."""
from __future__ import annotations

import math
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_suite.families.classification.metric_input import classification_counts
from bias_suite.metrics.catalog import MetricSpec, get_metric
from bias_suite.stats.evidence import PairedBound, paired_bounds, upper_share
from bias_suite.stats.verdicts import decide

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import paired_rates  # noqa: E402


def attribute_data(y, yhat, g, groups=("a", "b"), classes=("neg", "pos"), row_weight=None):
    """The fields of AttributeData that the bound reads."""
    k = len(groups)
    return types.SimpleNamespace(groups=list(groups), classes=tuple(classes), k=k, g=np.asarray(g),
                                 pairs=lambda: [(i, j) for i in range(k) for j in range(i + 1, k)],
                                 class_counts=classification_counts(np.asarray(y), np.asarray(yhat)),
                                 row_weight=row_weight)


def one_differing_template():
    """Two groups, one example each in 4 gold-'pos' templates; in the first, 'a' is predicted 'pos' and
    'b' 'neg'; elsewhere both 'pos'. TPR(a) = 1, TPR(b) = 3/4."""
    tpl = np.repeat(np.arange(4), 2)
    g = np.tile([0, 1], 4)
    y = np.ones(8, int)
    yhat = np.ones(8, int)
    yhat[1] = 0
    return attribute_data(y, yhat, g), tpl


# ------------------------------------------------------------------ hand-computed
def test_upper_share_is_the_one_sided_clopper_pearson_bound():
    # 0 of n: 1 - alpha^(1/n), the numbers of docs/statistics.md
    assert float(upper_share(0, 40, 0.05)) == pytest.approx(1 - 0.05 ** (1 / 40)) == pytest.approx(0.0722, abs=1e-4)
    assert float(upper_share(0, 80, 0.05)) == pytest.approx(0.0368, abs=1e-4)
    # 1 of 4: the p with (1 - p)^4 + 4 p (1 - p)^3 = 0.05
    p = float(upper_share(1, 4, 0.05))
    assert (1 - p) ** 4 + 4 * p * (1 - p) ** 3 == pytest.approx(0.05) and p == pytest.approx(0.7514, abs=1e-4)
    assert float(upper_share(4, 4, 0.05)) == 1.0


def test_one_differing_template_of_four():
    ad, tpl = one_differing_template()
    pb = paired_bounds(get_metric("TPR-Gap"), ad, tpl, 4)
    assert set(pb) == {("pos", "a|b")}   # no gold-'neg' template: no TPR of 'neg'
    b = pb[("pos", "a|b")]
    # a above b in 1 of 4 templates, never below: [-U(0, 4), U(1, 4)], every template a share of 1/4
    assert (b.scale, b.n, b.differing, b.c) == ("abs", 4, 1, pytest.approx(1.0))
    assert b.low == pytest.approx(-(1 - 0.05 ** 0.25)) and b.high == pytest.approx(0.7514, abs=1e-4)
    # the per-template contributions n * D_j are (1, 0, 0, 0): sd = 0.5
    assert b.sd == pytest.approx(0.5) and b.unit == "'pos' templates" and not b.exact


def test_a_group_against_its_background_reads_the_rows_orientation():
    ad, tpl = one_differing_template()
    # TPR(rest) - TPR(group): d(background, group) of a group's own "diff" reads the sides the other way
    own = MetricSpec("TPR-Rest-Diff", "VBCM", "group", "TPR", "diff", background="rest")
    a = paired_bounds(own, ad, tpl, 4)[("pos", "a")]
    assert a.high == pytest.approx(1 - 0.05 ** 0.25) and a.low == pytest.approx(-0.7514, abs=1e-4)
    # FNED's basis is FNR(group) - FNR(all): 'a' misses less than all in the first template
    fned = paired_bounds(get_metric("FNED"), ad, tpl, 4)
    assert fned[("pos", "a")].low == pytest.approx(-0.7514, abs=1e-4)
    assert fned[("pos", "b")].high == pytest.approx(0.7514, abs=1e-4)


def test_unequal_template_shares_scale_the_bound_by_the_largest():
    # 5 gold-'pos' templates, the last with two examples per group (no template weights): the largest
    # share of the rate is 2/6, so c = 5 * 2/6, and with no template differing the bound is +-U(0, 5) * c
    tpl = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 4])
    g = np.array([0, 1] * 4 + [0, 0, 1, 1])
    y = np.ones(12, int)
    yhat = np.array([1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0])
    b = paired_bounds(get_metric("TPR-Gap"), attribute_data(y, yhat, g), tpl, 5)[("pos", "a|b")]
    assert b.differing == 0 and b.c == pytest.approx(5 / 3)
    assert b.high == pytest.approx((1 - 0.05 ** 0.2) * 5 / 3) == pytest.approx(-b.low)
    # the balanced weights of the group view (1/2 each in the last template) make every share 1/5
    w = np.array([1.0] * 8 + [0.5] * 4)
    b = paired_bounds(get_metric("TPR-Gap"), attribute_data(y, yhat, g, row_weight=w), tpl, 5)[("pos", "a|b")]
    assert b.c == pytest.approx(1.0) and b.high == pytest.approx(1 - 0.05 ** 0.2)


def test_a_ratio_is_bounded_by_the_share_of_each_sides_events_that_could_move():
    """10 gold-'pos' templates, both groups missed in the same 5: FNR 1/2 each, no template differs.
    FNR(a) / FNR(rest) falls below 1 only by the share of the rest's misses in templates where 'a' is
    missed less: 0 of the rest's 5 event templates, at most U(0, 5) = 1 - 0.05^(1/5) = 0.4507; and
    FNR(rest) / FNR(a) likewise, so the ratio is at most 1 / (1 - 0.4507). Each event template carries
    1/5 of a side's events (c = 1), and each is one of 10 / 5 = 2 templates of the class."""
    tpl = np.repeat(np.arange(10), 2)
    g = np.tile([0, 1], 10)
    y = np.ones(20, int)
    yhat = np.repeat([0, 1] * 5, 2)
    b = paired_bounds(get_metric("FNR-Ratio"), attribute_data(y, yhat, g), tpl, 10)[("pos", "a")]
    u = 1 - 0.05 ** 0.2
    assert (b.scale, b.differing, b.n) == ("log", 0, 10) and u == pytest.approx(0.4507, abs=1e-4)
    assert b.low == pytest.approx(1 - u) and b.high == pytest.approx(1 / (1 - u)) == pytest.approx(1.8205, abs=1e-4)
    assert b.c == pytest.approx(1.0) and b.per == pytest.approx(2.0)
    # the difference's bound, by contrast, counts every template of the class: +-U(0, 10)
    d = paired_bounds(get_metric("FNED"), attribute_data(y, yhat, g), tpl, 10)[("pos", "a")]
    assert d.high == pytest.approx(1 - 0.05 ** 0.1) == pytest.approx(-d.low)


def test_a_ratio_whose_events_could_all_move_has_no_upper_end():
    # 'a' is missed in the first two of 4 gold-'pos' templates, 'b' in the third: every event template of
    # either side differs, U(2, 2) = U(1, 1) = 1: the ratio lies anywhere in [0, inf), its upper end capped
    # at 1e12 as the verdicts read a ratio of 0 as 1e-12
    tpl = np.repeat(np.arange(4), 2)
    g = np.tile([0, 1], 4)
    yhat = np.array([0, 1, 0, 1, 1, 0, 1, 1])
    b = paired_bounds(get_metric("FNR-Ratio"), attribute_data(np.ones(8, int), yhat, g), tpl, 4)[("pos", "a")]
    assert (b.low, b.high, b.differing) == (0.0, 1e12, 3)


def test_a_rate_of_two_kinds_of_template_bounds_the_kind_that_rests_on_few():
    """The positive rate of 'pos' counts gold-'pos' templates (where a true positive and a false negative
    trade places) and the others (a false positive and a true negative): a difference in 5 of the 6
    gold-'neg' templates says nothing about the 4 gold-'pos' ones, in none of which the groups differ.
    The bootstrap holds that kind's share fixed; its exact bound, U(0, 4) = 1 - 0.05^(1/4) times its share
    of the rate, 4/10, is added on both sides."""
    from bias_suite.stats.bootstrap import intervals

    tpl = np.repeat(np.arange(10), 2)
    g = np.tile([0, 1], 10)
    y = np.repeat([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], 2)
    yhat = np.repeat([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], 2)
    yhat[[8, 10, 12, 14, 16]] = 1   # group 'a' predicted 'pos' in five gold-'neg' templates
    pb = paired_bounds(get_metric("ParityGap"), attribute_data(y, yhat, g), tpl, 10)
    pos, neg = pb[("pos", "a|b")], pb[("neg", "a|b")]
    m = (1 - 0.05 ** 0.25) * 0.4
    assert (pos.n, pos.differing, pos.sparse) == (10, 5, "0 of 4 'pos' templates")
    assert pos.extend == (pytest.approx(-m), pytest.approx(m)) and m == pytest.approx(0.2108, abs=1e-4)
    assert neg.sparse == "0 of 4 templates not of 'neg'" and neg.extend == (pytest.approx(-m), pytest.approx(m))
    # a rate of one kind (TNR: the gold-'neg' templates alone) has nothing to add
    tnr = paired_bounds(get_metric("TNR-Gap"), attribute_data(y, yhat, g), tpl, 10)[("pos", "a|b")]
    assert tnr.extend == (0.0, 0.0) and tnr.sparse == ""
    # the interval stage moves the bootstrap's interval out by it (an absolute value never below 0)
    assert intervals.extend_by(0.3, 0.6, pos.extend) == pytest.approx((0.3 - m, 0.6 + m))
    assert intervals.extend_by(0.1, 0.6, pos.extend, absolute=True) == pytest.approx((0.0, 0.6 + m))


def test_templates_needed_under_the_exact_bound():
    pb = PairedBound("abs", -0.0722, 0.0722, 40, 0, 1.0, 0.0, "'negative' templates", 0.05, exact=True)
    # no differing template: the n with U(0, n) <= 0.05 is ln 0.05 / ln 0.95 = 58.4
    assert pb.templates_needed(0.05, 0.05, 1.96) == pytest.approx(math.log(0.05) / math.log(0.95))
    d = decide(0.0, -0.0722, 0.0722, kind="signed", tau=0.05, templates=120, paired=pb)
    assert d["verdict"] == "inconclusive" and d["p"] == 1.0   # the bound holds b at every level
    assert d["reason"].endswith("about 19 more 'negative' templates (59 in all) would decide it")
    # a ratio needs U(0, m) <= 1 - 1/1.25 = 0.2 on m event templates, ln 0.05 / ln 0.8 = 13.4, each one of
    # 2 templates of the class: 26.9
    ratio = PairedBound("log", 0.55, 1.82, 10, 0, 1.0, 0.0, "'pos' templates", 0.05, exact=True, per=2.0)
    d = decide(1.0, 0.55, 1.82, kind="ratio", tau=math.log(1.25), templates=30, paired=ratio)
    assert "about 17 more 'pos' templates (27 in all)" in d["reason"]
    # differing templates: the paired design's standard error, (1.96 * 0.5 / 0.025)^2 = 1536.6 templates
    some = PairedBound("abs", -0.07, 0.18, 40, 1, 1.0, 0.5, "'pos' templates", 0.05, exact=True)
    d = decide(0.025, -0.07, 0.18, kind="signed", tau=0.05, templates=120, paired=some)
    assert "about 1497 more 'pos' templates (1537 in all)" in d["reason"]
    assert d["p"] == 1.0   # (the same interval on its own would give 0.61)
    assert decide(0.025, -0.07, 0.18, kind="signed", tau=0.05)["p"] == pytest.approx(0.61, abs=0.01)
    # the same row with a bootstrap interval keeps its p-value, and scales the interval it has
    boot = PairedBound("abs", -0.07, 0.18, 40, 9, 1.0, 0.5, "'pos' templates", 0.05)
    d = decide(0.02, -0.04, 0.08, kind="signed", tau=0.05, templates=120, paired=boot)
    assert d["p"] < 1 and "about 120 more 'pos' templates (160 in all)" in d["reason"]


# ------------------------------------------------------------------ invariants
@st.composite
def small_data(draw):
    k = draw(st.integers(2, 3))
    J = draw(st.integers(1, 7))
    tpl, g, y, yhat = [], [], [], []
    for j in range(J):
        gold = draw(st.integers(0, 1))
        same = draw(st.booleans())   # the template treats every group alike
        shared_pred = [draw(st.integers(0, 1)) for _ in range(3)]
        for t in range(k):
            for e in range(draw(st.integers(1, 3))):
                tpl.append(j)
                g.append(t)
                y.append(gold)
                yhat.append(shared_pred[e] if same else draw(st.integers(0, 1)))
    balanced = draw(st.booleans())
    return k, J, np.array(tpl), np.array(g), np.array(y), np.array(yhat), balanced


def _weights(tpl, g, balanced):
    if not balanced:
        return None
    size = pd.Series(np.ones(len(g))).groupby([tpl, g]).transform("size").to_numpy()
    return 1.0 / size


def _rate(num, den, w):
    return (num * w).sum() / (den * w).sum()


@settings(max_examples=150, deadline=None)
@given(small_data(), st.sampled_from(["TPR-Gap", "FNED", "FPR-Ratio", "DisparityScore", "ParityGap"]))
def test_the_bound_holds_no_bias_and_the_observed_value(data, metric):
    k, J, tpl, g, y, yhat, balanced = data
    groups = ("a", "b", "c")[:k]
    w = _weights(tpl, g, balanced)
    ad = attribute_data(y, yhat, g, groups=groups, row_weight=w)
    spec = get_metric(metric)
    ww = np.ones(len(y)) if w is None else w
    for (cls, label), b in paired_bounds(spec, ad, tpl, J).items():
        c = ("neg", "pos").index(cls)
        cnt = ad.class_counts(c)
        num, den = {"TPR-Gap": ("tp", ("tp", "fn")), "FNED": ("fn", ("tp", "fn")), "FPR-Ratio": ("fp", ("fp", "tn")),
                    "DisparityScore": ("tp", ("tp", "fp", "fn")), "ParityGap": ("pp", ("n",))}[metric]
        nv = cnt[num] * (2 if metric == "DisparityScore" else 1)
        dv = sum(cnt[x] for x in den) + (cnt["tp"] if metric == "DisparityScore" else 0)
        if "|" in label:
            first, second = (g == groups.index(x) for x in label.split("|"))
        else:
            first = g == groups.index(label)
            second = ~first if spec.background == "rest" else np.ones(len(g), bool)
        pa, pb = _rate(nv[first], dv[first], ww[first]), _rate(nv[second], dv[second], ww[second])
        if b.scale == "log":
            assert b.low <= 1.0 <= b.high and b.low - 1e-9 <= pa / pb <= b.high + 1e-9
        else:
            assert b.low <= 0.0 <= b.high and b.low - 1e-9 <= pa - pb <= b.high + 1e-9
        assert 0 <= b.differing <= b.n <= J and b.c >= 1.0 - 1e-9
        # templates in which every group has the same predictions (in proportion) never count as differing
        treated_alike = all(len({tuple(sorted(yhat[(tpl == j) & (g == t)])) for t in range(k)}) == 1 for j in range(J))
        if treated_alike:
            assert b.differing == 0


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200), st.integers(0, 200), st.sampled_from([0.05, 0.1]))
def test_upper_share_is_at_least_the_observed_share_and_falls_with_n(n, k, alpha):
    k = min(k, n)
    u = float(upper_share(k, n, alpha))
    assert k / n <= u <= 1.0
    if k < n:
        assert float(upper_share(k, n + 1, alpha)) < u   # one more template without a difference narrows it


# ------------------------------------------------------------------ verdicts on shared predictions
def test_shared_predictions_give_the_exact_bound_and_templates_needed_per_class():
    """No template's predictions differ between the groups, 120 templates (40 per class): TPR-Gap is
    bounded by +-U(0, 40) = 0.0722 and says how many templates of its class would decide it; ParityGap,
    whose rate every template carries, by +-U(0, 120) = 0.0247: negligible. Every such row's p-value is 1:
    an interval that holds no bias at every level."""
    from bias_suite.evaluation import evaluate

    df = paired_rates.generate(120, 0, groups=2, terms=2, margin=1.0)
    res = evaluate(df, metrics=["TPR-Gap", "ParityGap", "FNR-Ratio"], seed=0)
    rows = res[res["group"].notna()]
    tpr = rows[rows["metric"] == "TPR-Gap"]
    assert len(tpr) == 3 and (tpr["verdict"] == "inconclusive").all()
    for r in tpr.to_dict("records"):
        assert "signed 0 [-0.0722, 0.0722]" in r["reason"]
        assert r["reason"].endswith(f"about 19 more '{r['class']}' templates (59 in all) would decide it")
        assert "exact paired bound (the sides differ in 0 of 40 templates)" in r["note"]
    parity = rows[rows["metric"] == "ParityGap"]
    assert (parity["verdict"] == "negligible").all() and parity["reason"].str.contains(r"\[-0.0247, 0.0247\]").all()
    assert (rows["p"] == 1).all() and (rows["q"] == 1).all()
    assert not rows["verdict"].isin(["material", "small"]).any()


def test_identical_rates_of_a_ratio_are_negligible_at_80_templates_of_the_class():
    """FNR about 0.3 in every class (margin 1.0), 240 templates (80 per class), no template differs:
    each side's misses come from about 24 templates, none of which differs, so FNR(g) / FNR(rest) lies
    within [1 - U(0, 24), 1 / (1 - U(0, 24))] = [0.88, 1.13], inside [0.8, 1.25]."""
    from bias_suite.evaluation import evaluate

    df = paired_rates.generate(240, 1, groups=2, terms=2, margin=1.0)
    res = evaluate(df, metrics=["FNR-Ratio", "FNED"], seed=0)
    ratio = res[(res["metric"] == "FNR-Ratio") & res["group"].notna()]
    assert len(ratio) == 6 and (ratio["verdict"] == "negligible").all(), ratio[["class", "ci_low", "ci_high"]]
    assert (ratio["ci_high"] <= 1.25).all() and (ratio["ci_low"] >= 0.8).all()
