"""What a claim is about (bias_suite.stats.scope) and the per-group answer
(bias_suite.report.groups), on data whose truth is known."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import bias_suite as bs
from bias_suite.families import scored_from_arrays
from bias_suite.report.groups import by_group, class_valence, harm_sign

CLASSES = ("negative", "neutral", "positive")


def shifted_table(n_templates=40, shift=None, seed=0, noise=0.02):
    """Attribute "attr": group a (terms a0, a1) and groups b, c (terms b0, b1 and c0, c1), every term in every
    template; ``shift``: {term: change of P(positive)} (moved from or to 'negative'). Gold class cycles over templates."""
    shift = shift or {}
    rng = np.random.default_rng(seed)
    rows, P = [], []
    for j in range(n_templates):
        gold = CLASSES[j % 3]
        base = np.array([0.15, 0.3, 0.55]) if gold == "positive" else (
            np.array([0.45, 0.3, 0.25]) if gold == "negative" else np.array([0.2, 0.5, 0.3]))
        for g, ts in (("a", ("a0", "a1")), ("b", ("b0", "b1")), ("c", ("c0", "c1"))):
            for t in ts:
                p = base.copy()
                d = shift.get(t, 0.0)
                p[2] += d
                p[0] -= d
                p = np.clip(p + rng.normal(scale=noise, size=3), 1e-3, None)
                rows.append(dict(id=f"r{len(rows)}", template=f"t{j}", attribute="attr", group=g, term=t,
                                 text=f"{t} {j}", label=gold))
                P.append(p / p.sum())
    return scored_from_arrays(pd.DataFrame(rows), np.array(P), list(CLASSES))


def _row(res, metric, cls, group):
    r = res[(res["metric"] == metric) & (res["class"] == cls) & (res["group"] == group)]
    assert len(r) == 1
    return r.iloc[0]


@pytest.fixture(scope="module")
def one_term_shifted():
    # a0 lowers P(positive) by 0.2 in every template; a1 and every other term do not
    return bs.evaluate(shifted_table(shift={"a0": -0.2}), metrics=["CFGap", "FNED", "PosAEG"], bootstrap=200)


def test_a_claim_about_the_listed_terms_is_broken_down_by_term(one_term_shifted):
    r = _row(one_term_shifted, "CFGap", "positive", "a|b")
    # over the listed terms a is lower than b in every template: a claim, about these terms
    assert r["verdict"] == "material" and r["signed"] < 0
    parts = dict(p.rsplit(" ", 1) for p in r["term_effects"].replace("−", "-").split("; "))
    # kept to a0 alone, the signed gap is a0's own shift (-0.2, up to the noise); kept to a1, about 0; b's terms
    # each against both a terms: half the shift
    assert float(parts["a0"]) == pytest.approx(-0.2, abs=0.02)
    assert abs(float(parts["a1"])) < 0.02
    assert float(parts["b0"]) == pytest.approx(-0.1, abs=0.02) and float(parts["b1"]) == pytest.approx(-0.1, abs=0.02)
    assert r["terms_agree"].startswith("a: 1 of 2") and "b: 2 of 2" in r["terms_agree"]


def test_an_effect_of_one_term_is_not_shown_beyond_the_listed_terms(one_term_shifted):
    r = _row(one_term_shifted, "CFGap", "positive", "a|b")
    assert r["beyond"] == "not shown"
    assert r["beyond_low"] <= r["signed_low"] and r["beyond_high"] >= r["signed_high"]  # the wider reading


def test_an_effect_of_every_term_holds_beyond_the_listed_terms():
    res = bs.evaluate(shifted_table(shift={"a0": -0.2, "a1": -0.2}), metrics=["CFGap"], bootstrap=200)
    r = _row(res, "CFGap", "positive", "a|b")
    assert r["verdict"] == "material" and r["beyond"] == "holds"
    assert r["terms_agree"].startswith("a: 2 of 2")


def test_no_term_effect_copies_the_listed_reading_of_claims_only():
    # terms the model treats alike: nothing to resample, a claim's reading beyond is its listed one
    res = bs.evaluate(shifted_table(shift={"a0": -0.2, "a1": -0.2}, noise=0.0), metrics=["CFGap"], bootstrap=200)
    claims = res[res["verdict"].isin(["material", "small"]) & res["group"].notna()]
    assert len(claims) and (claims["beyond"] == "holds").all()
    assert np.allclose(claims["beyond_low"], claims["signed_low"])
    assert np.allclose(claims["beyond_high"], claims["signed_high"])
    # what is not a claim has nothing to qualify
    rest = res[~res["verdict"].isin(["material", "small"])]
    assert (rest["verdict"] == "negligible").any()
    assert rest["beyond"].isna().all() and rest["beyond_low"].isna().all()


def test_only_the_metrics_with_a_claim_are_bootstrapped_again(monkeypatch):
    """The reading beyond the listed terms runs the two-way bootstrap on the
    metrics that have a claim in an attribute, nothing else."""
    import bias_suite.stats.bootstrap as bsm

    calls = []
    real = bsm.bootstrap

    def spy(data, results=None, **kw):
        calls.append((kw.get("resample_terms"), sorted(set(results["metric"]))))
        return real(data, results, **kw)

    monkeypatch.setattr(bsm, "bootstrap", spy)
    res = bs.evaluate(shifted_table(shift={"a0": -0.2}), metrics=["CFGap", "AvgGF", "ParityGap"], bootstrap=100)
    claimed = sorted(set(res.loc[res["verdict"].isin(["material", "small"]), "metric"]))
    assert len(calls) == 2 and calls[0][0] is False
    assert calls[1][1] == claimed and 0 < len(claimed) < 3


def kept_terms_both_ways(monkeypatch, data, metrics, weighting, attribute="attr") -> set:
    """_term_values of every (group, term) of ``attribute`` for the signed
    twins of ``metrics``, by term weights where the breakdown takes them and
    by evaluating every kept term's rows again; asserts both give the same
    values and returns the (group, term) pairs the term weights computed."""
    from bias_suite.metrics.catalog import get_metric
    from bias_suite.stats import scope

    specs = {}
    for m in metrics:
        sp = scope._signed_spec(get_metric(m))
        specs[sp.name] = sp
    fr = data.frame
    wanted = {(attribute, g, t): specs for g, t in fr[["group", "term"]].drop_duplicates().itertuples(index=False)}
    arrays = [fr[c].to_numpy(dtype=object) for c in ("attribute", "group", "term")]

    def values():
        return scope._term_values(data, wanted, *arrays, max_tuples=100, seed=0, group_order_override=None,
                                  weighting=weighting)

    done = []
    real = scope._weighted_term_values

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        done.extend(out)
        return out

    monkeypatch.setattr(scope, "_weighted_term_values", spy)
    fast = values()
    monkeypatch.setattr(scope, "_weighted_term_values", lambda *a, **k: [])
    slow = values()
    assert set(fast) == set(slow) and len(fast) > 100
    bad = [k for k in fast if not (fast[k] is None and slow[k] is None
                                   or fast[k] is not None and slow[k] is not None
                                   and math.isclose(fast[k], slow[k], rel_tol=1e-9, abs_tol=1e-12))]
    assert not bad, [(k, fast[k], slow[k]) for k in bad[:5]]
    return {(g, t) for _, g, t in done}


@pytest.mark.parametrize("weighting", ["balanced", "pooled"])
@pytest.mark.parametrize("ragged", [False, True])
def test_kept_terms_by_term_weights_equal_evaluating_the_kept_rows(monkeypatch, weighting, ragged):
    """The breakdown's closed form (every kept term one row of term weights)
    gives the values of evaluating the kept rows again; where a term cannot
    weigh as its kept rows do (here a1 missing from some templates and
    doubled in others, under balanced weighting, so that neither of a's
    terms weighs the same in every template), that term is evaluated again
    instead."""
    data = shifted_table(n_templates=24, shift={"a0": -0.15, "b1": 0.1}, noise=0.05)
    if ragged:
        fr = data.frame
        t = fr["template"].to_numpy(dtype=object)
        a1 = (fr["term"] == "a1").to_numpy()
        drop = a1 & np.isin(t, ["t1", "t5", "t9"])
        double = np.flatnonzero(a1 & np.isin(t, ["t2", "t3"]))
        data = data.take(np.r_[np.flatnonzero(~drop), double])
    metrics = ["CFGap", "ParityGap", "FPR-Ratio", "TPR-Gap", "PosAEG", "NegAEG", "PertSS", "FNED"]
    kept = kept_terms_both_ways(monkeypatch, data, metrics, weighting)
    every = {(g, t) for g, t in data.frame[["group", "term"]].drop_duplicates().itertuples(index=False)}
    # balanced: a's terms weigh differently from one template to the next (a1 alone, doubled or missing)
    assert kept == (every - {("a", "a0"), ("a", "a1")} if ragged and weighting == "balanced" else every)


def test_terms_resampled_for_the_verdict_make_the_two_readings_one():
    res = bs.evaluate(shifted_table(shift={"a0": -0.2}), metrics=["CFGap"], bootstrap=200, resample_terms="auto")
    r = _row(res, "CFGap", "positive", "a|b")
    if r["verdict"] in ("material", "small", "negligible"):
        assert r["beyond_low"] == r["signed_low"] and r["beyond_high"] == r["signed_high"]


# ------------------------------------------------------------------ the direction of harm
def test_class_valence_and_harm_signs_by_hand():
    assert class_valence("negative") == -1 and class_valence("Toxic") == -1 and class_valence("positive") == 1
    assert class_valence("neutral") == 0 and class_valence("PER") == 0
    # a higher probability of 'positive' for the first group is better for it; of 'negative', worse
    assert harm_sign("CFGap", "positive", valenced=True) == -1 and harm_sign("CFGap", "negative", valenced=True) == 1
    assert harm_sign("CFGap", "neutral", valenced=True) == 0
    # FNR(group) - FNR(all) higher for 'positive': its positive texts are missed more (worse); for 'negative':
    # its negative texts are called negative less often (better)
    assert harm_sign("FNED", "positive", valenced=True) == 1 and harm_sign("FNED", "negative", valenced=True) == -1
    # BPSN lower for 'negative': the group's other texts look negative (worse); BNSP higher for it: worse too
    assert harm_sign("BPSN", "negative", valenced=True) == -1 and harm_sign("BNSP", "negative", valenced=True) == 1
    # entity types have no valence: more errors are worse, higher recall is better
    assert harm_sign("IdentitySpan-FNED", "PER") == 1 and harm_sign("IdentitySpan-Recall-Diff", "LOC") == -1
    assert harm_sign("FNED", "PER") == 1 and harm_sign("TPR-Gap", "PER") == -1
    # a distance says no direction
    assert harm_sign("AvgGF", "positive", valenced=True) == 0


def _judged(rows):
    cols = ["metric", "family", "view", "attribute", "class", "group", "value", "ci_low", "ci_high", "n", "note",
            "verdict", "threshold", "baseline", "effect", "reason", "source", "signed", "signed_low", "signed_high"]
    return pd.DataFrame([{**dict.fromkeys(cols), **r} for r in rows], columns=cols)


def test_by_group_by_hand():
    rows = [
        # x: its positive texts get a lower P(positive) than the rest (material, worse off)
        dict(metric="PosAEG", family="BCM", view="group", attribute="A", **{"class": "positive"}, group="x",
             verdict="material", threshold=0.05, effect=3.0, reason="", signed=-0.15, signed_low=-0.2,
             signed_high=-0.1),
        # y: a spill-over of x's effect (counted apart, never a claim about y)
        dict(metric="PosAEG", family="BCM", view="group", attribute="A", **{"class": "positive"}, group="y",
             verdict="material", threshold=0.05, effect=1.2, reason="", source="x", signed=0.06, signed_low=0.055,
             signed_high=0.07),
        dict(metric="FNED", family="BCM", view="group", attribute="A", **{"class": "positive"}, group="y",
             verdict="negligible", threshold=0.05, effect=0.2, reason="", signed=0.01, signed_low=-0.02,
             signed_high=0.03),
        # z: nothing claimed, an estimate of 2 tau that the data cannot yet decide
        dict(metric="FNED", family="BCM", view="group", attribute="A", **{"class": "negative"}, group="z",
             verdict="inconclusive", threshold=0.05, effect=2.0,
             reason="signed 0.1 [-0.02, 0.2]: ...; about 120 templates (now 30) would decide it", signed=0.1,
             signed_low=-0.02, signed_high=0.2),
        # w: every value negligible
        dict(metric="FNED", family="BCM", view="group", attribute="A", **{"class": "negative"}, group="w",
             verdict="negligible", threshold=0.05, effect=0.1, reason="", signed=0.005, signed_low=-0.01,
             signed_high=0.02),
        # a significance row says nothing about a group
        dict(metric="Friedman-p-holm", family="significance", view="group", attribute="A", **{"class": "positive"},
             verdict="small", reason=""),
    ]
    bg = by_group(_judged(rows)).set_index("group")
    assert list(bg.index) == ["x", "z", "w", "y"] or list(bg.index)[0] == "x"
    assert bg.loc["x", "status"] == "worse off"
    # PosAEG of 'positive' lower for x: worse, in units of tau, its interval directed the same way
    assert bg.loc["x", "effect"] == pytest.approx(3.0) and bg.loc["x", "effect_low"] == pytest.approx(2.0)
    assert bg.loc["x", "effect_high"] == pytest.approx(4.0) and bg.loc["x", "finding"] == "PosAEG · positive"
    assert bg.loc["y", "status"] == "cleared" and bg.loc["y", "spillover"] == 1 and bg.loc["y", "material"] == 0
    assert bg.loc["z", "status"] == "undecided"
    assert bg.loc["z", "settle"] == "about 120 templates (now 30) would decide it (FNED · negative)"
    # FNED of 'negative' higher: its negative texts are called negative less often: not worse for it
    assert bg.loc["z", "effect"] == pytest.approx(-2.0)
    assert bg.loc["w", "status"] == "cleared"
    assert (bg[["material", "small", "negligible", "inconclusive"]].sum(axis=1) == [1, 1, 1, 1]).all()


def test_a_pair_counts_for_the_group_that_differs_from_all_others():
    rows = []
    for other in ("b", "c", "d"):
        rows.append(dict(metric="CFGap", family="PCM", view="counterfactual", attribute="A",
                         **{"class": "positive"}, group=f"a|{other}", verdict="material", threshold=0.05, effect=4.0,
                         reason="", signed=-0.2, signed_low=-0.25, signed_high=-0.15))
    for p in ("b|c", "b|d", "c|d"):
        rows.append(dict(metric="CFGap", family="PCM", view="counterfactual", attribute="A",
                         **{"class": "positive"}, group=p, verdict="negligible", threshold=0.05, effect=0.1,
                         reason="", signed=0.0, signed_low=-0.02, signed_high=0.02))
    bg = by_group(_judged(rows)).set_index("group")
    # a is below every other group: worse off; each other group is above a alone, which is a's effect
    assert bg.loc["a", "status"] == "worse off" and bg.loc["a", "effect"] == pytest.approx(4.0)
    assert bg.loc["a", "finding"].startswith("CFGap · positive vs ")
    for g in ("b", "c", "d"):
        assert bg.loc[g, "status"] in ("cleared", "no difference shown")
        assert bg.loc[g, "material"] == 0 and bg.loc[g, "spillover"] == 1
    # with two groups, the pair is the whole comparison: one worse off, the other better off
    two = by_group(_judged(rows[:1])).set_index("group")
    assert two.loc["a", "status"] == "worse off" and two.loc["b", "status"] == "better off"
    assert two.loc["b", "value"] == pytest.approx(0.2)  # as b sees it: b − a


def test_results_by_group_is_the_same_table(one_term_shifted):
    got = bs.evaluate(shifted_table(shift={"a0": -0.2}), metrics=["CFGap", "FNED", "PosAEG"], bootstrap=50)
    bg = got.by_group()
    assert {"attribute", "group", "status", "effect"} <= set(bg.columns)
    assert bg.set_index("group").loc["a", "status"] == "worse off"
    assert math.isfinite(bg.set_index("group").loc["a", "effect"])


def test_keeping_one_term_keeps_the_attribute_group_order():
    """Group a appears first only through a1's first row: kept to a0, the
    data's first appearance would put b first and read the pair b|a. The
    breakdown keeps the attribute's order, so both of a's terms have a value
    on the row a|b (before, a0's was missing)."""
    data = shifted_table(shift={"a0": -0.2})
    fr = data.frame
    first = np.flatnonzero((fr["group"] == "a").to_numpy() & (fr["term"] == "a1").to_numpy())[:1]
    others = np.flatnonzero((fr["group"] != "a").to_numpy())
    rest = np.setdiff1d(np.arange(len(fr)), np.r_[first, others])
    data = data.take(np.r_[first, others, rest])
    res = bs.evaluate(data, metrics=["CFGap"], bootstrap=200)
    r = _row(res, "CFGap", "positive", "a|b")
    assert r["verdict"] == "material"
    parts = dict(p.rsplit(" ", 1) for p in r["term_effects"].replace("−", "-").split("; "))
    assert float(parts["a0"]) == pytest.approx(-0.2, abs=0.02) and abs(float(parts["a1"])) < 0.02
    assert r["terms_agree"].startswith("a: 1 of 2")


def test_a_finding_says_how_far_it_reaches(one_term_shifted):
    """The finding about a|b rests on a0 alone: the terminal finding and
    the HTML findings table say so; a claim every term shares, and a row
    that claims nothing, say nothing."""
    from rich.console import Console

    from bias_suite.report.findings import reach_text
    from bias_suite.report.headline import findings_table

    r = _row(one_term_shifted, "CFGap", "positive", "a|b")
    text = reach_text(r.to_dict())
    assert text == "terms a: 1 of 2; b: 2 of 2; not shown beyond the listed terms"
    con = Console(record=True, width=200)
    con.print(findings_table(one_term_shifted[one_term_shifted.index == r.name]))
    assert "not shown beyond the listed terms" in con.export_text()
    assert reach_text({**r.to_dict(), "terms_agree": "a: 2 of 2; b: 2 of 2", "beyond": "holds"}) == ""
    assert reach_text({**r.to_dict(), "verdict": "negligible"}) == ""
    from bias_suite.report.data import ReportData
    from bias_suite.report.html import render_report

    html = render_report(ReportData(results=one_term_shifted))
    assert "reach (listed terms)" in html and "terms a: 1 of 2; b: 2 of 2; not shown beyond the listed terms" in html
